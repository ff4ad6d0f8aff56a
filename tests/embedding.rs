//! The embedding API of `mprof_lisp::Interpreter` as a host program uses it:
//! evaluating strings, calling Lisp functions with host values, loading
//! files, the frame limit and slice size from `Options`, interrupting a run,
//! and the two properties a host relies on: garbage is collected while a
//! program runs (memory stays bounded in a long allocating loop), and deep
//! non-tail recursion works without touching the Rust stack.
//!

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use mprof_lisp::{HostValue, Interpreter, Options};

/// Standard output captured into a shared buffer.
#[derive(Clone, Default)]
struct Capture(Rc<RefCell<Vec<u8>>>);

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn lisp_with(options: Options) -> (Interpreter, Capture) {
    let out = Capture::default();
    let lisp = Interpreter::with_io(Box::new(out.clone()), Box::new(std::io::sink()), Box::new(std::io::empty()), options)
        .expect("interpreter starts");
    (lisp, out)
}

fn lisp() -> (Interpreter, Capture) {
    lisp_with(Options::default())
}

/// Conses allocated by the bounded-memory test: 50 million, which takes
/// about 18 s of CPU in the workspace's test profile (opt-level 1).
const CONSES: u64 = 50_000_000;

#[test]
fn memory_stays_bounded_while_a_loop_allocates_tens_of_millions_of_conses() {
    let (mut lisp, _) = lisp();
    let before = lisp.peak_live_objects();
    let result = lisp.eval(&format!("(let ((last nil)) (dotimes (i {CONSES}) (setq last (cons i i))) (car last))"));
    assert_eq!(result, Ok(HostValue::Integer(CONSES as i64 - 1)));
    let peak = lisp.peak_live_objects();
    // Collection keeps the heap to the live data plus garbage allocated
    // since the last cycle: far below one object per iteration.
    assert!(peak < 1_000_000, "peak live objects {peak} after {CONSES} conses (before the loop: {before})");
    assert!(peak as u64 * 10 < CONSES, "peak {peak} is not far below {CONSES}");
}

#[test]
fn live_objects_fall_back_after_garbage_is_dropped() {
    let (mut lisp, _) = lisp();
    lisp.eval("(defvar *big* nil) (dotimes (i 200000) (setq *big* (cons i *big*)))").expect("make a big list");
    lisp.full_collection();
    let with_list = lisp.live_objects();
    lisp.eval("(setq *big* nil)").expect("drop it");
    lisp.full_collection();
    let without = lisp.live_objects();
    assert!(with_list >= without + 200_000, "live objects {with_list} with the list, {without} without");
}

#[test]
fn a_hundred_thousand_deep_non_tail_recursion_returns_its_result() {
    let (mut lisp, _) = lisp();
    lisp.eval("(defun depth (n) (if (= n 0) 0 (+ 1 (depth (- n 1)))))").expect("define");
    assert_eq!(lisp.call("depth", &[HostValue::Integer(100_000)]), Ok(HostValue::Integer(100_000)));
    // The list built on the way back up is as long as the recursion was deep.
    lisp.eval("(defun build (n) (if (= n 0) nil (cons n (build (- n 1)))))").expect("define");
    assert_eq!(lisp.eval("(length (build 100000))"), Ok(HostValue::Integer(100_000)));
}

#[test]
fn eval_converts_results_to_host_values() {
    let (mut lisp, _) = lisp();
    let cases: &[(&str, HostValue)] = &[
        ("nil", HostValue::Nil),
        ("t", HostValue::T),
        ("(* 6 7)", HostValue::Integer(42)),
        ("(* 1099511627776 1073741824)", HostValue::BigInteger("1180591620717411303424".into())),
        ("(/ 1.0 4)", HostValue::Float(0.25)),
        ("#\\x", HostValue::Char('x')),
        ("(format nil \"~a-~a\" \"ab\" 1)", HostValue::String("ab-1".into())),
        ("'foo", HostValue::Symbol("FOO".into())),
        ("'(1 (2 \"b\") :k)", HostValue::List(vec![
            HostValue::Integer(1),
            HostValue::List(vec![HostValue::Integer(2), HostValue::String("b".into())]),
            HostValue::Symbol(":K".into()),
        ])),
        ("#(1 2)", HostValue::Other("#(1 2)".into())),
    ];
    for (src, expected) in cases {
        assert_eq!(lisp.eval(src).as_ref(), Ok(expected), "evaluating {src}");
    }
}

#[test]
fn call_passes_host_values_to_lisp_functions() {
    let (mut lisp, _) = lisp();
    lisp.eval("(defun total (xs) (let ((sum 0)) (dolist (x xs sum) (setq sum (+ sum x)))))").expect("define");
    assert_eq!(
        lisp.call("total", &[HostValue::List(vec![HostValue::Integer(1), HostValue::Float(2.5), HostValue::Integer(3)])]),
        Ok(HostValue::Float(6.5))
    );
    lisp.eval("(defun shout (s) (format nil \"~a!\" s))").expect("define");
    assert_eq!(lisp.call("shout", &[HostValue::String("hi".into())]), Ok(HostValue::String("hi!".into())));
    lisp.eval("(defun kind (x) (cond ((null x) :none) ((eq x t) :true) ((symbolp x) :symbol) ((typep x (quote character)) :char) (t :other)))")
        .expect("define");
    assert_eq!(lisp.call("kind", &[HostValue::Nil]), Ok(HostValue::Symbol(":NONE".into())));
    assert_eq!(lisp.call("kind", &[HostValue::T]), Ok(HostValue::Symbol(":TRUE".into())));
    assert_eq!(lisp.call("kind", &[HostValue::Symbol("some-symbol".into())]), Ok(HostValue::Symbol(":SYMBOL".into())));
    assert_eq!(lisp.call("kind", &[HostValue::Char('z')]), Ok(HostValue::Symbol(":CHAR".into())));
    lisp.eval("(defun inc (x) (1+ x))").expect("define");
    assert_eq!(
        lisp.call("inc", &[HostValue::BigInteger("99999999999999999999".into())]),
        Ok(HostValue::BigInteger("100000000000000000000".into()))
    );
}

#[test]
fn calling_an_undefined_function_is_an_error_value() {
    let (mut lisp, _) = lisp();
    let e = lisp.call("no-such-function", &[]).expect_err("undefined");
    assert_eq!(e.condition_type, "UNDEFINED-FUNCTION");
    let e = lisp.call("(unreadable", &[]).expect_err("not a name");
    assert_eq!(e.condition_type, "UNDEFINED-FUNCTION");
}

#[test]
fn errors_carry_type_report_and_backtrace_and_the_interpreter_goes_on() {
    let (mut lisp, _) = lisp();
    lisp.eval("(defun inner (x) (car x)) (defun outer (x) (list (inner x)))").expect("define");
    let e = lisp.call("outer", &[HostValue::Integer(5)]).expect_err("car of 5");
    assert_eq!(e.condition_type, "TYPE-ERROR");
    assert!(e.message.contains('5') && e.message.contains("LIST"), "{}", e.message);
    // Innermost first; builtins such as CAR do not get a frame.
    let names: Vec<&str> = e.backtrace.iter().map(String::as_str).filter(|f| *f != "CAR").collect();
    assert_eq!(names, ["INNER", "OUTER"]);
    assert_eq!(lisp.call("outer", &[HostValue::List(vec![HostValue::Integer(7)])]), Ok(HostValue::List(vec![HostValue::Integer(7)])));
}

#[test]
fn output_goes_to_the_host_writer_and_eval_source_prints_every_value() {
    let (mut lisp, out) = lisp();
    let values = lisp.eval_source("(format t \"hello ~a~%\" 1) (values 1 \"two\" 'three)", Some("inline")).expect("eval");
    assert_eq!(values, vec!["1", "\"two\"", "THREE"]);
    assert_eq!(out.text(), "hello 1\n");
}

#[test]
fn load_file_evaluates_definitions_for_later_calls() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("lib.lisp");
    std::fs::write(&path, "(defun area (w h) (* w h))\n(defparameter *unit* \"m2\")\n").expect("write");
    let (mut lisp, _) = lisp();
    lisp.load_file(path.to_str().expect("utf-8 path")).expect("load");
    assert_eq!(lisp.call("area", &[HostValue::Integer(3), HostValue::Integer(4)]), Ok(HostValue::Integer(12)));
    assert_eq!(lisp.eval("*unit*"), Ok(HostValue::String("m2".into())));
    let e = lisp.load_file(dir.path().join("missing.lisp").to_str().expect("utf-8")).expect_err("missing file");
    assert_eq!(e.condition_type, "FILE-ERROR");
}

#[test]
fn the_frame_limit_from_options_bounds_recursion() {
    let (mut lisp, _) = lisp_with(Options { max_frames: 500, ..Options::default() });
    lisp.eval("(defun depth (n) (if (= n 0) 0 (+ 1 (depth (- n 1)))))").expect("define");
    assert_eq!(lisp.call("depth", &[HostValue::Integer(100)]), Ok(HostValue::Integer(100)));
    let e = lisp.call("depth", &[HostValue::Integer(10_000)]).expect_err("too deep");
    assert!(e.condition_type.ends_with("STACK-EXHAUSTED"), "{e}");
    // The limit is a recoverable error: the same interpreter keeps working.
    assert_eq!(lisp.call("depth", &[HostValue::Integer(10)]), Ok(HostValue::Integer(10)));
}

#[test]
fn tiny_slices_give_the_same_results() {
    // (A slice of one instruction never finishes a call in this VM; two is the
    // smallest working size, reported to the VM owner.)
    let (mut lisp, _) = lisp_with(Options { slice_fuel: 2, ..Options::default() });
    lisp.eval("(defun fib (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))").expect("define");
    assert_eq!(lisp.call("fib", &[HostValue::Integer(15)]), Ok(HostValue::Integer(610)));
}

#[test]
fn the_interrupt_flag_stops_a_run_and_keeps_definitions() {
    let (mut lisp, _) = lisp();
    lisp.eval("(defun spin () (tagbody top (go top))) (defvar *kept* 'yes)").expect("define");
    // Set before the run, the flag is seen after the first slice: the
    // endless loop ends with an interactive-interrupt condition.
    lisp.interrupt_flag().store(true, Ordering::SeqCst);
    let e = lisp.call("spin", &[]).expect_err("interrupted");
    assert!(e.condition_type.ends_with("INTERACTIVE-INTERRUPT"), "{e}");
    assert_eq!(lisp.eval("*kept*"), Ok(HostValue::Symbol("YES".into())));
}

#[test]
fn repl_history_variables_and_symbol_names() {
    let (mut lisp, _) = lisp();
    lisp.eval_source("(defun my-unique-function () 1)", None).expect("define");
    for src in ["10", "20", "30"] {
        lisp.eval_source(src, None).expect("eval");
        lisp.record_repl_values();
    }
    assert_eq!(
        lisp.eval("(list * ** ***)"),
        Ok(HostValue::List(vec![HostValue::Integer(30), HostValue::Integer(20), HostValue::Integer(10)]))
    );
    let names = lisp.symbol_names();
    assert!(names.iter().any(|n| n == "my-unique-function"));
    assert!(names.iter().any(|n| n == "car"));
    assert!(names.iter().any(|n| n.starts_with("mprof:")), "no mprof: names");
}

#[test]
fn native_functions_are_callable_from_lisp() {
    let (mut lisp, _) = lisp();
    let calls = Rc::new(RefCell::new(0));
    let counter = calls.clone();
    lisp.register_native("host-add", move |args| {
        *counter.borrow_mut() += 1;
        match args {
            [HostValue::Integer(a), HostValue::Integer(b)] => Ok(HostValue::Integer(a + b)),
            _ => Err("host-add wants two integers".to_string()),
        }
    })
    .expect("register");
    assert_eq!(lisp.eval("(host-add 40 2)"), Ok(HostValue::Integer(42)));
    assert_eq!(lisp.eval("(let ((s 0)) (dotimes (i 10 s) (setq s (host-add s i))))"), Ok(HostValue::Integer(45)));
    assert_eq!(*calls.borrow(), 11);
    // A native error is a Lisp error the program can handle.
    assert_eq!(lisp.eval("(handler-case (host-add 1 \"x\") (error () :refused))"), Ok(HostValue::Symbol(":REFUSED".into())));
}

#[test]
fn a_host_records_counts_and_time_through_the_api() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("prog.lisp");
    std::fs::write(&path, "(defun sq (x) (* x x))\n(defun sum-sq (n) (let ((s 0)) (dotimes (i n) (incf s (sq i))) s))\n(sum-sq 100)\n")
        .expect("write program");
    let (mut lisp, _out) = lisp_with(Options::default());
    lisp.profiler().count_start();
    lisp.profiler().time_start(true);
    lisp.load_file(&path.to_string_lossy()).expect("program runs");
    lisp.profiler().stop();
    let p = lisp.profiler().full_profile();
    let entry = |name: &str| {
        p.exec.counts.iter().find(|c| c.kind == mprof_engine::exec::CountKind::Entry && c.function == name).map(|c| c.count)
    };
    assert_eq!((entry("SQ"), entry("SUM-SQ")), (Some(100), Some(1)));
    let t = p.exec.time.as_ref().expect("a time profile");
    let sq = p.functions.iter().position(|f| f.name == "SQ").expect("SQ interned") as u32;
    let calls: u64 = t.nodes.iter().filter(|n| n.func.0 == sq).map(|n| n.calls).sum();
    assert_eq!(calls, 100);
    // Stopped: further runs add nothing.
    lisp.eval("(sum-sq 10)").expect("runs");
    let again = lisp.profiler().full_profile();
    assert_eq!(again.exec.time, p.exec.time);
    assert_eq!(again.exec.counts.iter().map(|c| c.count).sum::<u64>(), p.exec.counts.iter().map(|c| c.count).sum::<u64>());
}

#[test]
fn an_error_in_a_file_names_its_top_level_form() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("bad.lisp");
    std::fs::write(&path, "(defun f (x) (car x))\n\n(f 5)\n").expect("write program");
    let (mut lisp, _out) = lisp();
    let file = path.to_string_lossy().into_owned();
    let e = lisp.load_file(&file).expect_err("(car 5) fails");
    assert_eq!(e.location, Some(format!("{file}:3")));
    let e = lisp.eval("(f 6)").expect_err("(car 6) fails");
    assert_eq!(e.location, None, "a form from the host has no file");
}

#[test]
fn reset_forgets_counts_times_and_io_but_keeps_recording() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("prog.lisp");
    std::fs::write(&path, "(defun sq (x) (* x x))\n(dotimes (i 7) (sq i))\n(write-string \"hi\")\n").expect("write program");
    let (mut lisp, _out) = lisp_with(Options::default());
    lisp.profiler().count_start();
    lisp.profiler().time_start(true);
    lisp.profiler().io_start();
    lisp.load_file(&path.to_string_lossy()).expect("program runs");
    lisp.eval("(mprof:reset)").expect("reset");
    let p = lisp.profiler().full_profile();
    assert!(p.exec.counts.iter().all(|c| c.count == 0), "{:?}", p.exec.counts);
    assert!(p.exec.io.is_empty(), "{:?}", p.exec.io);
    let calls: u64 = p.exec.time.as_ref().map_or(0, |t| t.nodes.iter().map(|n| n.calls).sum());
    assert!(calls <= 2, "only the reset's own calls are left: {calls}");
    // Recording goes on: the code compiled with counters counts again.
    lisp.eval("(sq 3)").expect("runs");
    let p = lisp.profiler().full_profile();
    let sq = p.exec.counts.iter().find(|c| c.function == "SQ" && c.kind == mprof_engine::exec::CountKind::Entry);
    assert_eq!(sq.map(|c| c.count), Some(1));
}

/// A loop that keeps every list it makes: it never ends on its own.
const HOG: &str = "(defun hog () (let ((keep nil)) (loop (push (make-list 1000) keep))))";

#[test]
fn the_heap_limit_signals_a_storage_condition_a_handler_catches() {
    let (mut lisp, _) = lisp_with(Options { max_heap: 64 << 20, ..Options::default() });
    lisp.eval(HOG).expect("define");
    let caught = lisp.eval("(handler-case (hog) (storage-condition () :caught))").expect("handled");
    assert_eq!(caught, HostValue::Symbol(":CAUGHT".into()));
    // Unhandled, it is an error value; the kept lists are garbage afterwards and
    // the same interpreter goes on allocating.
    let e = lisp.eval("(hog)").expect_err("no handler");
    assert!(e.condition_type.ends_with("STORAGE-CONDITION"), "{e}");
    assert!(e.message.contains("Heap exhausted"), "{e}");
    assert_eq!(lisp.eval("(length (make-list 100000))"), Ok(HostValue::Integer(100_000)));
    // One builtin asking for more than the limit is refused before it allocates.
    let big = lisp.eval("(handler-case (make-array 100000000) (storage-condition () :refused))");
    assert_eq!(big, Ok(HostValue::Symbol(":REFUSED".into())));
}

#[test]
fn the_fuel_limit_signals_a_storage_condition_and_then_ends_the_run() {
    let (mut lisp, _) = lisp_with(Options { max_fuel: Some(2_000_000), ..Options::default() });
    lisp.eval("(defun spin () (loop))").expect("define");
    let caught = lisp.eval("(handler-case (spin) (storage-condition () :out-of-fuel))");
    assert_eq!(caught, Ok(HostValue::Symbol(":OUT-OF-FUEL".into())));
    // A handler that goes on spinning gets an eighth more, then the run ends.
    let e = lisp
        .eval("(handler-bind ((storage-condition (lambda (c) (declare (ignore c)) (spin)))) (spin))")
        .expect_err("the run is stopped");
    assert!(e.message.contains("Fuel exhausted"), "{e}");
    // Each run has its own budget.
    assert_eq!(lisp.eval("(+ 1 2)"), Ok(HostValue::Integer(3)));
    let caught = lisp.eval("(handler-case (spin) (serious-condition () :again))");
    assert_eq!(caught, Ok(HostValue::Symbol(":AGAIN".into())));
}

#[test]
fn the_frame_limit_is_a_storage_condition_a_handler_catches() {
    let (mut lisp, _) = lisp_with(Options { max_frames: 1000, ..Options::default() });
    lisp.eval("(defun down (n) (1+ (down n)))").expect("define");
    let caught = lisp.eval("(handler-case (down 1) (storage-condition () :caught))");
    assert_eq!(caught, Ok(HostValue::Symbol(":CAUGHT".into())));
}

#[test]
fn builtins_walking_a_circular_list_signal_a_type_error_instead_of_hanging() {
    let (mut lisp, _out) = lisp_with(Options::default());
    lisp.eval("(defvar *c* (list 1 2 3)) (setf (cdr (cddr *c*)) *c*) (defvar *one* (list 1)) (setf (cdr *one*) *one*)")
        .expect("circular lists");
    for form in [
        "(length *c*)", "(length *one*)", "(append *c* nil)", "(reverse *c*)", "(last *c*)", "(last *c* 2)",
        "(copy-list *c*)", "(copy-alist *one*)", "(revappend *c* nil)", "(butlast *c*)", "(nreconc *c* nil)",
    ] {
        let v = lisp.eval(&format!("(handler-case {form} (type-error () 'caught))")).expect(form);
        assert_eq!(v, HostValue::Symbol("CAUGHT".into()), "{form}");
    }
    // LIST-LENGTH's own answer for circular lists is NIL, and proper lists still work.
    assert_eq!(lisp.eval("(list-length *c*)").unwrap(), HostValue::Nil);
    assert_eq!(lisp.eval("(length (append '(1 2) '(3)))").unwrap(), HostValue::Integer(3));
    assert_eq!(lisp.eval("(last (list 1 2 3 4 5 6 7 8 9 10) 3)").unwrap(), HostValue::List(vec![HostValue::Integer(8), HostValue::Integer(9), HostValue::Integer(10)]));
}

/// An interpreter whose standard input holds `commands` (what a user types at the debugger).
fn lisp_reading(commands: &str) -> (Interpreter, Capture) {
    let out = Capture::default();
    let input = std::io::Cursor::new(commands.as_bytes().to_vec());
    let mut lisp = Interpreter::with_io(Box::new(out.clone()), Box::new(std::io::sink()), Box::new(input), Options::default())
        .expect("interpreter starts");
    lisp.set_interactive_debugger(true).expect("the debugger can be turned on");
    (lisp, out)
}

const DEBUGGEE: &str = "(defun pick (x) (restart-case (error \"no pick for ~a\" x)
                           (use-value (v) :report \"Use another value.\" v)
                           (twice () (* 2 x))))
                        (defun outer (n) (+ 1 (pick n)))";

#[test]
fn the_debugger_lists_restarts_and_frames_and_invokes_the_chosen_restart() {
    // Restart 0 (USE-VALUE) asks for a value: 41. Then restart 1 (TWICE).
    let (mut lisp, out) = lisp_reading("0\n41\nbt\n1\n");
    lisp.eval_source(DEBUGGEE, None).expect("definitions");
    assert_eq!(lisp.eval("(outer 5)").expect("restarted"), HostValue::Integer(42));
    let text = out.text();
    assert!(text.contains("debugger invoked on a SIMPLE-ERROR:\n  no pick for 5"), "{text}");
    assert!(text.contains("  0: [USE-VALUE] Use another value.\n  1: [TWICE] TWICE\n  2: [ABORT]"), "{text}");
    // Frames show their arguments, innermost first, without the debugger's own.
    let pick = text.find("0: (PICK 5)").expect("PICK's frame with its argument");
    let outer = text.find("1: (OUTER 5)").expect("OUTER's frame with its argument");
    assert!(pick < outer, "{text}");
    assert_eq!(lisp.eval("(outer 7)").expect("restarted"), HostValue::Integer(15));
}

#[test]
fn the_debuggers_abort_returns_to_the_top_level_and_the_interpreter_goes_on() {
    let (mut lisp, out) = lisp_reading("(* 6 7)\n2\n");
    lisp.eval_source(DEBUGGEE, None).expect("definitions");
    let e = lisp.eval("(outer 5)").expect_err("aborted");
    assert_eq!(e.condition_type, mprof_lisp::DEBUGGER_ABORT);
    assert!(out.text().contains("0] 42\n"), "a form typed at the debugger is evaluated there: {}", out.text());
    // Input ends: the debugger returns to the top level too.
    let e = lisp.eval("(outer 1)").expect_err("aborted at end of input");
    assert_eq!(e.condition_type, mprof_lisp::DEBUGGER_ABORT);
    assert_eq!(lisp.eval("(+ 1 2)").expect("goes on"), HostValue::Integer(3));
}

#[test]
fn completion_names_offer_exported_symbols_before_internal_ones() {
    let (mut lisp, _) = lisp();
    lisp.eval("(defun cab-of-mine () 1)").expect("defined");
    let names = lisp.symbol_names();
    let at = |n: &str| names.iter().position(|x| x == n).unwrap_or_else(|| panic!("{n} missing"));
    // CAR is COMMON-LISP's, exported; CAB-OF-MINE is CL-USER's own: alphabetically first, offered after.
    assert!(at("car") < at("cab-of-mine"));
    assert!(at("cab-of-mine") < at("mprof:report"), "qualified names come last");
    assert_eq!(names.iter().filter(|n| *n == "car").count(), 1, "each name once");
}
