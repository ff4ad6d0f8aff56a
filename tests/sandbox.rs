//! The sandbox against hostile programs, as a host embedding untrusted code
//! relies on it: the heap, fuel and frame limits hold even when the program
//! catches every condition (each ends the run with its own `ErrorKind` and
//! bounded memory), the host's termination ends any run, and a sandboxed
//! interpreter cannot reach files, the environment or processes (each attempt
//! is a `MPROF-EXT:CAPABILITY-DENIED` error naming the capability). After
//! every hard end the interpreter goes on.
//!
//! No test here is timed: the programs loop until a limit ends them, and the
//! limits are counted in instructions and bytes.

use mprof_lisp::{Capabilities, ErrorKind, FileAccess, HostValue, Interpreter, LispError, Options};

fn lisp_with(options: Options) -> Interpreter {
    Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), options)
        .expect("interpreter starts")
}

/// The interpreter still evaluates after a run ended hard.
fn still_works(lisp: &mut Interpreter) {
    assert_eq!(lisp.eval("(+ 1 2)"), Ok(HostValue::Integer(3)));
}

const MB: usize = 1 << 20;

#[test]
fn a_program_that_catches_every_storage_condition_cannot_grow_the_heap_past_limit_and_reserve() {
    let limit = 32 * MB;
    let mut lisp = lisp_with(Options { max_heap: limit, ..Options::default() });
    // The program: it catches the condition and allocates again, forever.
    let r = lisp.eval(
        "(defvar *keep* nil)
         (loop (handler-case (loop (push (make-string 10000) *keep*)) (storage-condition () nil)))",
    );
    let e = r.expect_err("the run must end");
    match e.kind.clone() {
        ErrorKind::Heap { used, limit: l } => {
            assert_eq!(l, limit);
            // Ended just past the limit and its reserve (an eighth), plus what one
            // slice could allocate: never the gigabytes of a soft limit.
            assert!(used > limit + limit / 8 && used < 2 * limit, "used {used} bytes");
        }
        other => panic!("expected a heap end, got {other:?}: {e}"),
    }
    assert_eq!(e.condition_type, "STORAGE-CONDITION");
    // What the program kept is bounded by the limit too (10,000 characters a string).
    let kept = lisp.eval("(length *keep*)").unwrap();
    let HostValue::Integer(n) = kept else { panic!("{kept:?}") };
    assert!(n > 0 && (n as usize) * 10_000 < 2 * limit, "{n} strings kept");
    // Each run starts with its soft signal: the next one that allocates gets a
    // condition it can handle first, even with the heap still over the limit.
    let next = lisp.eval("(handler-case (loop (push (make-string 10000) *keep*)) (storage-condition () :caught))");
    assert_eq!(next, Ok(HostValue::Symbol(":CAUGHT".into())));
    lisp.eval("(setq *keep* nil)").unwrap();
    still_works(&mut lisp);
}

#[test]
fn a_handler_of_every_condition_cannot_outlive_the_fuel_limit() {
    let mut lisp = lisp_with(Options { max_fuel: Some(1_000_000), ..Options::default() });
    let e = lisp.eval("(loop (handler-case (loop) (condition () nil)))").expect_err("the run must end");
    assert_eq!(e.kind, ErrorKind::Fuel { limit: 1_000_000 }, "{e}");
    // A run that stays within its fuel is untouched, and the budget is per run.
    assert_eq!(lisp.eval("(let ((s 0)) (dotimes (i 1000 s) (incf s i)))"), Ok(HostValue::Integer(499_500)));
}

#[test]
fn recursing_in_the_handler_of_stack_exhaustion_ends_the_run_with_a_frames_error() {
    let mut lisp = lisp_with(Options { max_frames: 2_000, ..Options::default() });
    lisp.eval("(defun dig () (handler-case (dig) (condition () (dig))))").unwrap();
    let e = lisp.eval("(dig)").expect_err("the run must end");
    assert!(matches!(e.kind, ErrorKind::Frames { .. }), "{e:?}");
    still_works(&mut lisp);
}

#[test]
fn the_frame_limit_can_be_changed_after_creation() {
    let mut lisp = lisp_with(Options::default());
    lisp.eval("(defun depth (n) (if (= n 0) 0 (1+ (depth (1- n)))))").unwrap();
    assert_eq!(lisp.eval("(depth 5000)"), Ok(HostValue::Integer(5000)));
    lisp.set_max_frames(1_000);
    let e = lisp.eval("(depth 5000)").expect_err("past the new limit");
    assert_eq!(e.kind, ErrorKind::Frames { limit: 1_000 }, "{e}");
    assert_eq!(lisp.eval("(depth 500)"), Ok(HostValue::Integer(500)));
    assert_eq!(lisp.options().max_frames, 1_000);
}

/// An interpreter with a native `host-terminate` that asks for termination,
/// as a host's watchdog thread would (without a clock in the test).
fn terminating_lisp() -> Interpreter {
    let mut lisp = lisp_with(Options::default());
    let terminator = lisp.terminator();
    lisp.register_native("host-terminate", move |_| {
        terminator.terminate();
        Ok(HostValue::Nil)
    })
    .unwrap();
    lisp
}

#[test]
fn termination_ends_a_run_that_catches_every_condition() {
    let mut lisp = terminating_lisp();
    let e = lisp
        .eval("(loop (handler-case (progn (host-terminate) (loop)) (condition () nil)))")
        .expect_err("terminated");
    assert_eq!(e.kind, ErrorKind::Terminated, "{e}");
    assert!(lisp.eval("(handler-case (progn (host-terminate) (loop)) (condition () :caught))").is_err_and(|e| e.kind == ErrorKind::Terminated));
    // unwind-protect cleanups do not run either: the host said stop.
    lisp.eval("(defvar *cleaned* nil)").unwrap();
    let _ = lisp.eval("(unwind-protect (progn (host-terminate) (loop)) (setq *cleaned* t))");
    assert_eq!(lisp.eval("*cleaned*"), Ok(HostValue::Nil));
    still_works(&mut lisp);
}

#[test]
fn termination_cuts_a_long_sleep_short() {
    let mut lisp = terminating_lisp();
    // Without the check inside SLEEP this would block for a day.
    let e = lisp.eval("(progn (host-terminate) (sleep 86400) (loop))").expect_err("terminated");
    assert_eq!(e.kind, ErrorKind::Terminated);
}

#[test]
fn a_run_past_its_wall_clock_budget_is_terminated() {
    let mut lisp = lisp_with(Options { max_run_time: Some(std::time::Duration::ZERO), ..Options::default() });
    let e = lisp.eval("(loop (handler-case (loop) (condition () nil)))").expect_err("terminated");
    assert_eq!(e.kind, ErrorKind::Terminated);
    assert!(e.message.contains("max_run_time"), "{}", e.message);
}

#[test]
fn the_interrupt_stays_catchable_and_distinct_from_termination() {
    let mut lisp = lisp_with(Options::default());
    let flag = lisp.interrupt_flag();
    lisp.register_native("host-interrupt", move |_| {
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(HostValue::Nil)
    })
    .unwrap();
    let r = lisp.eval("(handler-case (progn (host-interrupt) (loop)) (condition () :caught))");
    assert_eq!(r, Ok(HostValue::Symbol(":CAUGHT".into())));
}

fn denied(e: &LispError, capability: &str) {
    assert_eq!(e.kind, ErrorKind::Condition, "{e:?}");
    assert!(e.condition_type.ends_with("CAPABILITY-DENIED"), "{e:?}");
    assert!(e.message.contains(capability), "{capability} not named in {:?}", e.message);
}

#[test]
fn a_sandboxed_program_cannot_touch_files_the_environment_or_processes() {
    let mut lisp = lisp_with(Options::sandboxed());
    let scratch = std::env::temp_dir().join(format!("mprof-sandbox-{}.txt", std::process::id()));
    let scratch = scratch.to_str().unwrap();
    for (program, capability) in [
        ("(open \"/etc/passwd\")", ":file-read"),
        ("(with-open-file (s \"/etc/hostname\") (read-line s))", ":file-read"),
        ("(load \"/etc/passwd\")", ":file-read"),
        ("(probe-file \"/etc/passwd\")", ":file-read"),
        ("(directory \"/etc/*\")", ":file-read"),
        (&format!("(with-open-file (s {scratch:?} :direction :output) (write-line \"x\" s))"), ":file-write"),
        (&format!("(delete-file {scratch:?})"), ":file-write"),
        ("(ensure-directories-exist \"/tmp/mprof-sandbox-dir/x\")", ":file-write"),
        ("(mprof-ext:getenv \"HOME\")", ":environment"),
        ("(mprof-ext:run-program \"/bin/echo\" '(\"hi\") :output :string)", ":processes"),
    ] {
        let e = lisp.eval(program).expect_err(program);
        denied(&e, capability);
    }
    assert!(!std::path::Path::new(scratch).exists(), "the sandbox wrote {scratch}");
    assert!(!std::path::Path::new("/tmp/mprof-sandbox-dir").exists());
    // A program can handle the denial as any error.
    let r = lisp.eval("(handler-case (open \"/etc/passwd\") (mprof-ext:capability-denied () :denied))");
    assert_eq!(r, Ok(HostValue::Symbol(":DENIED".into())));
}

#[test]
fn read_only_roots_admit_reads_under_them_and_nothing_else() {
    let root = std::env::temp_dir().join(format!("mprof-sandbox-root-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("data.txt"), "hello\n").unwrap();
    let options = Options {
        capabilities: Capabilities { files: FileAccess::ReadOnly(vec![root.clone()]), ..Capabilities::none() },
        ..Options::default()
    };
    let mut lisp = lisp_with(options);
    let inside = root.join("data.txt");
    let read = lisp.eval(&format!("(with-open-file (s {:?}) (read-line s))", inside.to_str().unwrap()));
    assert_eq!(read, Ok(HostValue::String("hello".into())));
    let listed = lisp.eval(&format!("(length (directory {:?}))", format!("{}/*.txt", root.display()))).unwrap();
    assert_eq!(listed, HostValue::Integer(1));
    let escape = format!("{}/../../etc/passwd", root.display());
    denied(&lisp.eval(&format!("(open {escape:?})")).unwrap_err(), ":file-read");
    denied(&lisp.eval("(open \"/etc/passwd\")").unwrap_err(), ":file-read");
    let new = root.join("new.txt");
    let write = format!("(with-open-file (s {:?} :direction :output) (write-line \"x\" s))", new.to_str().unwrap());
    denied(&lisp.eval(&write).unwrap_err(), ":file-write");
    assert!(!new.exists());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn the_default_interpreter_keeps_full_access() {
    let mut lisp = lisp_with(Options::default());
    assert_eq!(lisp.eval("(not (null (probe-file \"/\")))"), Ok(HostValue::T));
    assert_eq!(Options::default().capabilities, Capabilities::default());
}
