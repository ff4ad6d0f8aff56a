//! The printer end to end: a REPL printing a circular list with
//! `*print-circle*` NIL streams its output in bounded memory and is stopped by
//! SIGINT, after which it keeps working; data 1,000,000 deep and circular data
//! print under the control variables, with answers known by construction;
//! messages about circular data terminate.

use std::io::{Read, Write};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mprof_lisp::{HostValue, Interpreter, Options};

mod support;

/// The resident set size of a process in KiB (Linux /proc).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
#[test]
fn a_piped_repl_printing_a_circular_list_stops_on_sigint_in_bounded_memory_and_goes_on() {
    let mut child = support::spawn(&std::env::temp_dir(), &[]);
    let pid = child.id();
    let mut input = child.stdin.take().expect("stdin pipe");
    let mut stdout = child.stdout.take().expect("stdout pipe");
    let stderr = child.stderr.take().expect("stderr pipe");
    // Count the output and keep its end; the REPL prints the list for ever.
    let printed = Arc::new(AtomicUsize::new(0));
    let counter = printed.clone();
    let reader = std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    counter.fetch_add(n, Ordering::SeqCst);
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > 1 << 20 {
                        tail.drain(..tail.len() - 4096);
                    }
                }
            }
        }
        String::from_utf8_lossy(&tail).into_owned()
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let mut e = stderr;
        let _ = e.read_to_string(&mut s);
        s
    });
    input
        .write_all(b"(defvar *c* (list 1 2 3))\n(setf (cdr (last *c*)) *c*)\n")
        .expect("write the circular list");
    input.flush().expect("flush");
    // Let it print at least 64 MB, sampling its memory meanwhile.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut peak_kib = 0;
    while printed.load(Ordering::SeqCst) < 64 << 20 {
        assert!(Instant::now() < deadline, "printing did not start or is too slow");
        if let Some(k) = rss_kib(pid) {
            peak_kib = peak_kib.max(k);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Command::new("kill").args(["-INT", &pid.to_string()]).status();
    assert!(sent.is_ok_and(|s| s.success()), "kill -INT failed");
    // The REPL is still there: it evaluates and prints what follows.
    input
        .write_all(b"(+ 1 2)\n(let ((*print-circle* t)) (prin1-to-string *c*))\n(+ *c* 1)\n")
        .expect("write more forms after the interrupt");
    drop(input);
    let status = child.wait().expect("wait for mprof-lisp");
    let tail = reader.join().expect("stdout reader");
    let errors = err_reader.join().expect("stderr reader");
    let after = &tail[tail.len().saturating_sub(100)..];
    // The interrupted line is ended once, then the next values follow.
    assert!(after.ends_with("\n3\n\"#1=(1 2 3 . #1#)\"\n") && !after.contains("\n\n"), "after the interrupt: {after:?}");
    assert!(errors.contains("nterrupt"), "the interrupt is reported: {errors}");
    // Adding a list is an error, reported with the list printed finitely.
    assert!(errors.contains("#1=(1 2 3 . #1#)"), "{errors}");
    assert_eq!(status.code(), Some(1), "errors in a piped session exit 1");
    let megabytes = printed.load(Ordering::SeqCst) >> 20;
    assert!(peak_kib < 100 * 1024, "printed {megabytes} MB with a peak RSS of {peak_kib} KiB");
}

fn lisp() -> Interpreter {
    Interpreter::with_io(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
        Options::default(),
    )
    .expect("interpreter starts")
}

fn eval(lisp: &mut Interpreter, src: &str) -> HostValue {
    match lisp.eval(src) {
        Ok(v) => v,
        Err(e) => panic!("{src}: {e}"),
    }
}

const NEST: &str = "(defun nest (n) (let ((x nil)) (dotimes (i n x) (setq x (list x)))))";

#[test]
fn a_million_deep_list_prints_with_every_control_variable() {
    let mut lisp = lisp();
    let n: i64 = 1_000_000;
    eval(&mut lisp, NEST);
    eval(&mut lisp, &format!("(defvar *d* (nest {n}))"));
    // (((...NIL...))): n parentheses each side.
    let len = HostValue::Integer(2 * n + 3);
    assert_eq!(eval(&mut lisp, "(length (prin1-to-string *d*))"), len);
    assert_eq!(eval(&mut lisp, "(length (let ((*print-circle* t)) (prin1-to-string *d*)))"), len);
    assert_eq!(eval(&mut lisp, "(length (format nil \"~a\" *d*))"), len);
    assert_eq!(eval(&mut lisp, "(length (write-to-string *d* :case :downcase :base 16 :radix t))"), len);
    assert_eq!(eval(&mut lisp, "(write-to-string *d* :level 4)"), HostValue::String("((((#))))".into()));
    assert_eq!(eval(&mut lisp, "(write-to-string *d* :length 0)"), HostValue::String("(...)".into()));
    // The same depth through the car of a vector at every level.
    eval(&mut lisp, &format!("(defvar *v* (let ((x 0)) (dotimes (i {n} x) (setq x (vector x)))))"));
    assert_eq!(eval(&mut lisp, "(length (prin1-to-string *v*))"), HostValue::Integer(3 * n + 1));
}

#[test]
fn deep_circular_data_prints_with_labels_and_reads_back() {
    let mut lisp = lisp();
    let n: i64 = 1_000_000;
    eval(&mut lisp, NEST);
    // The innermost cons's car points back to the top: #1=((((...#1#...)))).
    eval(
        &mut lisp,
        &format!("(defvar *d* (let* ((top (nest {n})) (x top)) (dotimes (i (1- {n}) top) (setq x (car x))) (setf (car x) top) top))"),
    );
    let text = format!("#1={}#1#{}", "(".repeat(n as usize), ")".repeat(n as usize));
    eval(&mut lisp, "(defvar *text* (write-to-string *d* :circle t))");
    assert_eq!(eval(&mut lisp, "(length *text*)"), HostValue::Integer(text.len() as i64));
    assert_eq!(eval(&mut lisp, "(subseq *text* 0 6)"), HostValue::String("#1=(((".into()));
    assert_eq!(eval(&mut lisp, "(subseq *text* 1000000 1000008)"), HostValue::String("(((#1#))".into()));
    // Read back (within the reader's depth limit): the same shape, circular at the same depth.
    let m = 1000;
    let back = format!(
        "(let* ((top (nest {m})) (x top))
           (dotimes (i (1- {m})) (setq x (car x)))
           (setf (car x) top)
           (let ((y (read-from-string (write-to-string top :circle t))) (top2 nil))
             (setq top2 y)
             (dotimes (i (1- {m})) (setq y (car y)))
             (eq (car y) top2)))"
    );
    assert_eq!(eval(&mut lisp, &back), HostValue::T);
    // Without *print-circle*, the limits keep it finite.
    assert_eq!(eval(&mut lisp, "(write-to-string *d* :level 2 :circle nil)"), HostValue::String("((#))".into()));
}

#[test]
fn messages_about_circular_data_terminate() {
    let mut lisp = lisp();
    eval(&mut lisp, "(defvar *c* (list 1 2))");
    eval(&mut lisp, "(setf (cdr (last *c*)) *c*)");
    let e = lisp.eval("(+ *c* 1)").expect_err("adding a list is an error");
    assert!(e.message.contains("#1=(1 2 . #1#)"), "{}", e.message);
    // A circular value handed to the host is printed finitely too.
    assert_eq!(eval(&mut lisp, "(vector *c*)"), HostValue::Other("#(#1=(1 2 . #1#))".into()));
}

#[test]
fn the_interrupt_flag_stops_printing_a_circular_list_in_every_printing_function() {
    let mut lisp = lisp();
    eval(&mut lisp, "(defvar *c* (list 1 2))");
    eval(&mut lisp, "(setf (cdr (last *c*)) *c*)");
    eval(&mut lisp, "(defvar *kept* 'yes)");
    for form in [
        "(prin1-to-string *c*)",
        "(format nil \"~a\" *c*)",
        "(with-output-to-string (s) (print *c* s))",
        "(write *c*)",
    ] {
        // Set before the run: the printer sees it within a few thousand steps.
        lisp.interrupt_flag().store(true, std::sync::atomic::Ordering::SeqCst);
        let e = lisp.eval(form).expect_err("interrupted");
        assert!(e.condition_type.ends_with("INTERACTIVE-INTERRUPT"), "{form}: {e}");
        assert!(!lisp.interrupt_flag().load(std::sync::atomic::Ordering::SeqCst), "{form}: the flag is consumed");
    }
    assert_eq!(eval(&mut lisp, "*kept*"), HostValue::Symbol("YES".into()));
    assert_eq!(eval(&mut lisp, "(write-to-string *c* :circle t)"), HostValue::String("#1=(1 2 . #1#)".into()));
}

#[test]
fn a_print_method_printing_its_own_object_ends_in_a_catchable_storage_condition() {
    let mut lisp = Interpreter::with_io(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
        Options { max_frames: 20_000, ..Options::default() },
    )
    .expect("interpreter starts");
    eval(&mut lisp, "(defstruct (r (:print-function (lambda (o s d) (declare (ignore d)) (prin1 o s)))))");
    for form in ["(prin1-to-string (make-r))", "(format nil \"~a\" (list (make-r)))"] {
        let caught = format!("(handler-case {form} (storage-condition () :caught))");
        assert_eq!(eval(&mut lisp, &caught), HostValue::Symbol(":CAUGHT".into()), "{form}");
    }
    // The print variables bound for the methods were all unwound.
    assert_eq!(eval(&mut lisp, "(list *print-escape* *print-readably*)"), HostValue::List(vec![HostValue::T, HostValue::Nil]));
}

#[test]
fn printing_a_circular_list_into_a_string_ends_at_the_heap_limit_in_a_catchable_condition() {
    let mut lisp = Interpreter::with_io(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
        Options { max_heap: 32 << 20, ..Options::default() },
    )
    .expect("interpreter starts");
    eval(&mut lisp, "(defvar *c* (list 1 2 3))");
    eval(&mut lisp, "(setf (cdr (last *c*)) *c*)");
    // No interrupt: only the heap limit can end these prints.
    for form in [
        "(prin1-to-string *c*)",
        "(princ-to-string *c*)",
        "(write-to-string *c*)",
        "(format nil \"~a\" *c*)",
        "(format nil \"~s and ~w\" 1 *c*)",
        "(with-output-to-string (s) (prin1 *c* s))",
        "(let ((s (make-string-output-stream))) (print *c* s) (get-output-stream-string s))",
    ] {
        let caught = format!("(handler-case (progn {form} :printed) (storage-condition () :caught))");
        assert_eq!(eval(&mut lisp, &caught), HostValue::Symbol(":CAUGHT".into()), "{form}");
    }
    // The interpreter goes on, and the list prints with *print-circle*.
    assert_eq!(eval(&mut lisp, "(write-to-string *c* :circle t)"), HostValue::String("#1=(1 2 3 . #1#)".into()));
}
