//! Random well-formed programs that call the library's functions with wrong
//! types and wrong numbers of arguments (issue 12): each must end, with exit
//! status 0 or 1, and every error must reach the user as a Lisp condition with
//! a message, never a panic, an abort or a hang.
//!
//! The functions are every fbound external symbol of COMMON-LISP that is not a
//! macro or special operator, listed by the interpreter itself, minus the few
//! whose right use is to stop or pause the process. Programs come from a fixed
//! seed (xorshift), so a failure is reproducible: the failing program is printed.

mod support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Functions whose correct behaviour would end or pause the run, whose
/// condition's report is the caller's own text (which may be empty), or which
/// change the syntax the rest of the program is read with (LOAD reads each form
/// with the readtable the previous one left, as in CL).
const SKIP: &[&str] = &[
    "ERROR", "CERROR", "WARN", "SIGNAL", "SLEEP", "EXIT", "QUIT", "READ", "READ-LINE", "READ-CHAR", "PEEK-CHAR",
    "READ-PRESERVING-WHITESPACE", "READ-CHAR-NO-HANG", "INVOKE-DEBUGGER", "BREAK", "ED", "INSPECT", "DRIBBLE",
    "MAKE-DISPATCH-MACRO-CHARACTER", "SET-MACRO-CHARACTER", "SET-DISPATCH-MACRO-CHARACTER", "SET-SYNTAX-FROM-CHAR",
    "Y-OR-N-P", "YES-OR-NO-P",
];

/// Arguments of every type, small enough that no correct call runs long. No
/// circular list: spine walks (length, every...) loop on one, as SBCL's do.
const ARGS: &[&str] = &[
    "0", "-1", "7", "1000", "123456789012345678901234567890", "1/3", "2.5d0", "-0.0", "#\\a", "\"str\"", "\"\"",
    "'sym", ":key", "nil", "t", "'(1 2 3)", "'(a . b)", "'((a . 1) (b . 2))", "#(1 2)", "(make-array '(2 2))",
    "(make-hash-table)", "#'car", "#'+", "(lambda (&rest r) r)", "*standard-output*", "(make-string-output-stream)",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Run the interpreter on `file` in `dir`, killing it after `limit`.
fn run_bounded(dir: &Path, file: &str, limit: Duration) -> (Option<i32>, String, String) {
    let mut child = Command::new(support::binary())
        .args(["--max-heap", "256M", file])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mprof-lisp");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let ereader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break Some(st);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&ereader.join().unwrap_or_default()).into_owned();
    (status.and_then(|s| s.code()), stdout, stderr)
}

fn function_names(dir: &Path) -> Vec<String> {
    let list = "(do-external-symbols (s \"COMMON-LISP\")\n\
                  (when (and (fboundp s) (not (macro-function s)) (not (special-operator-p s)))\n\
                    (format t \"~a~%\" (symbol-name s))))\n";
    std::fs::write(dir.join("list.lisp"), list).expect("write");
    let (code, stdout, stderr) = run_bounded(dir, "list.lisp", Duration::from_secs(60));
    assert_eq!(code, Some(0), "{stderr}");
    stdout.lines().filter(|n| !SKIP.contains(n)).map(String::from).collect()
}

#[test]
fn random_wrong_calls_end_in_conditions_with_messages() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let names = function_names(dir.path());
    assert!(names.len() > 300, "only {} functions listed", names.len());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    const PROGRAMS: usize = 40;
    const CALLS: usize = 150;
    for p in 0..PROGRAMS {
        // Each call is handled, printing its condition's report; the program's
        // last call is left unhandled, so the run ends in status 1 or 0.
        let mut prog = String::from("(defun try (thunk) (handler-case (progn (funcall thunk) (format t \"~%returned~%\")) (serious-condition (c) (let ((m (princ-to-string c))) (format t \"~%~:[EMPTY~;signalled~]~%\" (plusp (length m)))))))\n");
        let mut last = String::new();
        for c in 0..CALLS {
            let f = &names[rng.below(names.len())];
            let nargs = rng.below(5);
            let args: Vec<&str> = (0..nargs).map(|_| ARGS[rng.below(ARGS.len())]).collect();
            let call = format!("({f} {})", args.join(" "));
            if c + 1 == CALLS {
                last = call;
            } else {
                prog.push_str(&format!("(try (lambda () {call}))\n"));
            }
        }
        prog.push_str(&format!("{last}\n(format t \"end~%\")\n"));
        let file = format!("p{p}.lisp");
        std::fs::write(dir.path().join(&file), &prog).expect("write");
        let (code, stdout, stderr) = run_bounded(dir.path(), &file, Duration::from_secs(120));
        let context = format!("program {file}:\n{prog}\nstdout:\n{stdout}\nstderr:\n{stderr}");
        assert!(matches!(code, Some(0) | Some(1)), "status {code:?}; {context}");
        assert!(!stdout.contains("EMPTY"), "a condition with an empty report; {context}");
        // Every handled call ran (none stopped the program early).
        let done = stdout.lines().filter(|l| *l == "returned" || *l == "signalled").count();
        assert!(done >= CALLS - 1, "only {done} calls finished; {context}");
        assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "{context}");
        match code {
            Some(1) => assert!(stderr.contains("mprof-lisp: error: "), "no error message; {context}"),
            _ => assert!(stdout.ends_with("end\n"), "{context}"),
        }
    }
}
