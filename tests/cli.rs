//! End-to-end tests of the `mprof-lisp` command line: what it prints, where
//! (program output on standard output, diagnostics on standard error), its
//! exit status, the piped REPL, and that no input makes it panic.
//!
//! Every message a user reads is pinned by an insta snapshot. The test is declared
//! by the package that owns the binary (lisp/cli/Cargo.toml), so cargo builds the
//! current binary for it.

mod support;

use support::{Run, run_in};

fn run(args: &[&str], stdin: &str) -> Run {
    run_in(&std::env::temp_dir(), args, stdin)
}

/// Write `files` into a fresh directory and run there (so paths in
/// messages are the short relative names).
fn run_with_files(files: &[(&str, &str)], args: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("temporary directory");
    support::run_with_files(dir.path(), files, args, "")
}

#[test]
fn eval_options_run_in_order_and_print_to_stdout() {
    let r = run(&["-e", "(defvar *x* 20)", "-e", "(print (+ *x* 1))", "-e", "(format t \"~a~%\" \"done\")"], "");
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "\n21 done\n", ""));
}

#[test]
fn eval_option_does_not_start_the_repl() {
    // With -e and no FILE, standard input is never read as forms.
    let r = run(&["-e", "(princ 1)"], "(princ 2)\n");
    assert_eq!((r.code, r.stdout.as_str()), (0, "1"));
}

#[test]
fn a_file_runs_with_its_output_on_stdout() {
    let prog = "(defun fact (n) (if (< n 2) 1 (* n (fact (1- n)))))\n\
                (format t \"~a~%\" (fact 20))\n\
                (format *error-output* \"to stderr~%\")\n";
    let r = run_with_files(&[("fact.lisp", prog)], &["fact.lisp", "extra", "--flag"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "2432902008176640000\n");
    assert_eq!(r.stderr, "to stderr\n");
}

#[test]
fn a_program_can_come_from_standard_input_as_dash() {
    let r = run(&["-"], "(print (list 1 2))");
    assert_eq!((r.code, r.stdout.as_str()), (0, "\n(1 2) "));
}

#[test]
fn eval_runs_before_the_file() {
    let r = run_with_files(&[("p.lisp", "(print *x*)")], &["-e", "(defvar *x* 'from-e)", "p.lisp"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "\nFROM-E "));
}

#[test]
fn help_and_version_succeed_on_stdout() {
    let r = run(&["--version"], "");
    assert_eq!((r.code, r.stdout.trim()), (0, concat!("mprof-lisp ", env!("CARGO_PKG_VERSION"))));
    let r = run(&["--help"], "");
    assert_eq!(r.code, 0);
    for option in ["--eval", "--max-depth", "--profile", "[FILE]"] {
        assert!(r.stdout.contains(option), "--help does not mention {option}:\n{}", r.stdout);
    }
}

/// Files to write before a run: (name, contents).
type Files = &'static [(&'static str, &'static str)];

/// Each case: a name, the files to write, the arguments. All are errors a
/// user reads; the snapshots pin the exact wording and exit status.
const ERROR_CASES: &[(&str, Files, &[&str])] = &[
    ("unbound_variable", &[], &["-e", "(defun f () foo) (defun g () (f)) (g)"]),
    ("undefined_function", &[], &["-e", "(defun g (x) (no-such-function x)) (g 1)"]),
    ("type_error", &[], &["-e", "(defun add (x) (+ x \"a\")) (add 1)"]),
    ("wrong_argument_count", &[], &["-e", "(defun two (a b) (list a b)) (two 1)"]),
    ("too_many_arguments_to_builtin", &[], &["-e", "(car '(1) '(2))"]),
    ("user_error", &[], &["-e", "(error \"disk ~a is full\" 3)"]),
    ("division_by_zero", &[], &["-e", "(/ 1 0)"]),
    ("stack_exhausted", &[], &["--max-depth", "1000", "-e", "(defun r (n) (+ 1 (r n))) (r 0)"]),
    ("reader_error_in_file", &[("bad.lisp", "(print 1)\n(defun f (x)\n  (+ x 1)\n\n(f 2\n")], &["bad.lisp"]),
    ("unmatched_close_paren", &[("close.lisp", "(print 1)\n  )\n")], &["close.lisp"]),
    ("unterminated_string", &[("str.lisp", "(print \"abc\n")], &["str.lisp"]),
    ("bad_dot", &[], &["-e", "(1 . )"]),
    ("unknown_character_name", &[], &["-e", "(print #\\nosuchname)"]),
    ("error_in_second_file_form", &[("two.lisp", "(print 'first)\n(car 5)\n(print 'never)\n")], &["two.lisp"]),
    ("missing_file", &[], &["no-such-file.lisp"]),
    ("unknown_option", &[], &["--frobnicate"]),
    ("bad_max_depth", &[], &["--max-depth", "lots", "-e", "1"]),
    ("zero_max_depth", &[], &["--max-depth", "0", "-e", "1"]),
];

#[test]
fn error_messages() {
    for (name, files, args) in ERROR_CASES {
        let r = run_with_files(files, args);
        assert!(!r.stderr.contains("panicked"), "{name} panicked:\n{}", r.stderr);
        insta::assert_snapshot!(*name, r.transcript());
    }
}

#[test]
fn lisp_errors_exit_1_and_usage_errors_exit_2() {
    assert_eq!(run(&["-e", "(error \"x\")"], "").code, 1);
    assert_eq!(run(&["-e", "(", "-e", "(print 1)"], "").code, 1);
    assert_eq!(run(&["--frobnicate"], "").code, 2);
    // The expressions before the failing one ran; the ones after did not.
    let r = run(&["-e", "(princ 'a)", "-e", "(car 1)", "-e", "(princ 'b)"], "");
    assert_eq!((r.code, r.stdout.as_str()), (1, "A"));
}

#[test]
fn exit_sets_the_status_after_flushing_output() {
    let r = run(&["-e", "(princ \"bye\")", "-e", "(exit :code 3)", "-e", "(princ \"never\")"], "");
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (3, "bye", ""));
    let r = run_with_files(&[("quit.lisp", "(print 1)\n(exit)\n(print 2)\n")], &["quit.lisp"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "\n1 "));
    let r = run(&[], "(+ 1 1)\n(exit 4)\n(+ 2 2)\n");
    assert_eq!((r.code, r.stdout.as_str()), (4, "2\n"));
}

#[test]
fn runaway_recursion_is_a_clean_error_at_the_frame_limit() {
    let r = run(&["--max-depth", "1000", "-e", "(defun down (n) (1+ (down (1+ n)))) (down 0)"], "");
    assert_eq!(r.code, 1);
    assert!(r.stderr.starts_with("mprof-lisp: error: Control stack exhausted"), "{}", r.stderr);
    // Handled inside the program (as in SBCL, it is a storage-condition,
    // not an error), the exhaustion lets the program go on.
    let prog = "(defun down (n) (1+ (down (1+ n))))\n\
                (print (handler-case (down 0) (storage-condition () :caught)))";
    let r = run(&["--max-depth", "1000", "-e", prog], "");
    assert_eq!((r.code, r.stdout.as_str()), (0, "\n:CAUGHT "), "{}", r.stderr);
}

#[test]
fn piped_forms_are_evaluated_one_by_one_with_all_values_printed() {
    let input = "(+ 1 2)\n(defun sq (x)\n  \"a ) in a string\" ; and ( in a comment\n  (* x x))\n\
                 (sq 5) (values 1 2)\n(values)\n(princ \"no newline\")\n(list * ** ***)\n";
    let r = run(&[], input);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "3\nSQ\n25\n1\n2\nno newline\n\"no newline\"\n(\"no newline\" NIL 1)\n");
    assert_eq!(r.stderr, "");
}

#[test]
fn the_piped_repl_keeps_definitions_after_an_error() {
    let input = "(defvar *n* 41)\n(car *n*)\n(1+ *n*)\n(";
    let r = run(&[], input);
    insta::assert_snapshot!("piped_repl_errors", r.transcript());
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("42\n"));
}

#[test]
fn a_program_in_the_piped_repl_reads_the_lines_after_its_form() {
    // READ-LINE sees the next line, not the REPL; its second value says the
    // line ended with a newline.
    let r = run(&[], "(read-line)\nhello there\n(+ 1 1)\n");
    assert_eq!((r.code, r.stdout.as_str()), (0, "\"hello there\"\nNIL\n2\n"), "{}", r.stderr);
}

/// A tiny linear congruential generator: deterministic garbage.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() as usize) % items.len()]
    }
}

/// Tokens for garbage programs: syntax, numbers of every kind, and
/// operators that terminate quickly whatever their arguments (no loops,
/// no allocation sized by an argument).
const TOKENS: &[&str] = &[
    "(", "(", "(", ")", ")", ")", "'", "`", ",", ",@", "#'", "\"", "#(", "#\\a", "#\\", "#|", "|#", ";", "\n",
    " ", ".", "1", "-2.5", "1/0", "3/4", "1e308", "99999999999999999999999", "#x1F", "#b102", "x", "y", "nil",
    "t", ":k", "&rest", "&optional", "&key", "car", "cdr", "cons", "list", "+", "-", "*", "/", "mod", "floor",
    "defun", "f", "let", "let*", "lambda", "setq", "progn", "funcall", "apply", "if", "quote", "function",
    "block", "return-from", "catch", "throw", "unwind-protect", "handler-case", "error", "format", "print",
    "string", "char", "aref", "vector", "length", "reverse", "append", "nth", "assoc", "eq", "equal", "#+",
    "#-", "#.", "|a b|", "pkg::", "cl:car", "keyword:", "#:g", "#1=", "#1#", "sort", "mapcar", "gethash",
    "make-hash-table", "char-code", "code-char", "intern", "symbol-name", "values", "multiple-value-list",
];

fn garbage(rng: &mut Lcg) -> String {
    let len = 1 + (rng.next() % 40) as usize;
    let mut s = String::new();
    for _ in 0..len {
        s.push_str(rng.pick(TOKENS));
        if !rng.next().is_multiple_of(3) {
            s.push(' ');
        }
    }
    s
}

#[test]
fn no_garbage_program_makes_the_process_panic() {
    const PROGRAMS: usize = 300;
    let mut rng = Lcg(0x5eed_1234);
    let programs: Vec<String> = (0..PROGRAMS).map(|_| garbage(&mut rng)).collect();
    // Two workers: the machine is shared.
    let failures: Vec<String> = std::thread::scope(|s| {
        let halves: Vec<_> = programs
            .chunks(PROGRAMS / 2)
            .map(|chunk| {
                s.spawn(move || {
                    let mut bad = Vec::new();
                    for (i, prog) in chunk.iter().enumerate() {
                        // Alternate between -e and the piped REPL: two readers of the input.
                        let r = if i % 2 == 0 {
                            run(&["--max-depth", "2000", "-e", prog], "")
                        } else {
                            run(&["--max-depth", "2000"], prog)
                        };
                        if !(r.code == 0 || r.code == 1) || r.stderr.contains("panicked") {
                            bad.push(format!("status {} for {prog:?}:\n{}", r.code, r.stderr));
                        }
                    }
                    bad
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap_or_else(|_| vec!["worker died".into()])).collect()
    });
    assert!(failures.is_empty(), "{} of {PROGRAMS} programs failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn profile_outputs_are_checked_before_the_program_runs() {
    // The program would print and take a while; a bad output path stops it first.
    let prog = "(print 'ran) (dotimes (i 100000) (cons i i))";
    for (args, says) in [
        (&["--profile", "--report", "/no/such/dir/t.txt", "p.lisp"][..], "--report: cannot write /no/such/dir/t.txt"),
        (&["--profile", "--profile-out", "/no/such/dir/p.mprof", "p.lisp"][..], "--profile-out: cannot write /no/such/dir/p.mprof"),
        (&["--profile", "--tables", "kept,foo", "p.lisp"][..], "foo"),
        (&["--profile", "--html", "/no/such/dir/r.html", "p.lisp"][..], "--html: cannot write /no/such/dir/r.html"),
    ] {
        let r = run_with_files(&[("p.lisp", prog)], args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.transcript());
        assert_eq!(r.stdout, "", "the program did not run");
        assert!(r.stderr.starts_with("mprof-lisp: error: ") && r.stderr.contains(says), "{}", r.stderr);
    }
}

#[test]
fn a_profile_and_report_are_written_whole_through_a_temporary_file() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let r = support::run_with_files(
        dir.path(),
        &[("p.lisp", "(defvar *l* (make-list 1000))")],
        &["--profile", "--report", "r.txt", "--profile-out", "p.mprof", "p.lisp"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.transcript());
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).expect("list").map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["p.lisp", "p.mprof", "r.txt"], "no temporary file is left behind");
    let bytes = std::fs::read(dir.path().join("p.mprof")).expect("profile");
    let profile = mprof_engine::Profile::read(&bytes).expect("a whole profile");
    assert!(profile.functions.iter().any(|f| f.name == "MAKE-LIST"));
}

#[test]
fn html_writes_the_report_page_of_the_run_with_its_listing() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let prog = "(defun classify (i) (if (< i 3) 'small (list i i)))\n(defvar *all* (loop for i below 10 collect (classify i)))\n";
    let r = support::run_with_files(
        dir.path(),
        &[("p.lisp", prog)],
        &["--profile", "--count", "--report", "r.txt", "--profile-out", "p.mprof", "--html", "r.html", "p.lisp"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.transcript());
    let page = std::fs::read_to_string(dir.path().join("r.html")).expect("the page");
    assert!(page.starts_with("<!DOCTYPE html>"));
    let start = page.find(r#"type="application/json">"#).expect("data element") + r#"type="application/json">"#.len();
    let end = start + page[start..].find("</script>").expect("end of the data");
    let data: serde_json::Value = serde_json::from_str(&page[start..end]).expect("JSON data");
    let names = data["memory"]["names"].as_array().expect("the memory tree");
    assert!(names.iter().any(|n| n == "CLASSIFY"), "{names:?}");
    let listing = data["listing"].as_str().expect("the listing of the counted run");
    assert!(listing.contains("(defun classify (i)") && listing.contains("10."), "{listing}");
    // Without a kind of profile, --html has no effect and says so.
    let r = run_with_files(&[("p.lisp", "(print 1)")], &["--html", "x.html", "p.lisp"]);
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("--html has no effect without --profile"), "{}", r.stderr);
}

#[test]
fn the_mprof_package_writes_the_html_report_and_the_exports() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let work = "(defun classify (i) (if (< i 3) 'small (list i i)))\n(defvar *all* (loop for i below 10 collect (classify i)))\n";
    let prog = r#"(mprof:start :time t :counts t)
(load "work.lisp")
(mprof:stop)
(print (mprof:write-html "r.html" :path-depth 3))
(print (mprof:write-export "p.pb.gz"))
(mprof:write-export "t.pb.gz" :format :pprof :kind :time)
(mprof:write-export "m.folded" :format :folded)
(mprof:write-export "m.json" :format :json)
(mprof:write-export "f.svg" :format :flamegraph)
(print (handler-case (mprof:write-export "x" :format :svg) (error () :refused)))
"#;
    let r = support::run_with_files(dir.path(), &[("work.lisp", work), ("p.lisp", prog)], &["p.lisp"], "");
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(r.stdout, "\n\"r.html\" \n\"p.pb.gz\" \n:REFUSED ", "{}", r.transcript());
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let page = String::from_utf8(read("r.html")).expect("UTF-8 page");
    let start = page.find(r#"type="application/json">"#).expect("data element") + r#"type="application/json">"#.len();
    let end = start + page[start..].find("</script>").expect("end of the data");
    let data: serde_json::Value = serde_json::from_str(&page[start..end]).expect("JSON data");
    assert!(data["memory"]["names"].as_array().expect("the memory tree").iter().any(|n| n == "CLASSIFY"));
    assert_eq!(data["pathDepth"], 3);
    assert!(data["listing"].as_str().expect("the listing of the counted file").contains("(defun classify (i)"));
    for gz in ["p.pb.gz", "t.pb.gz"] {
        assert_eq!(read(gz)[..2], [0x1f, 0x8b], "{gz} is gzipped");
    }
    let folded = String::from_utf8(read("m.folded")).expect("folded text");
    assert!(folded.lines().any(|l| l.contains("CLASSIFY") && l.contains("LIST ")), "{folded}");
    let json: serde_json::Value = serde_json::from_slice(&read("m.json")).expect("JSON export");
    assert_eq!(json["language"], "lisp", "{json}");
    assert!(String::from_utf8(read("f.svg")).expect("SVG").contains("<svg"));
    assert!(!dir.path().join("x").exists());
}

#[test]
fn options_without_effect_are_warned_about_and_the_program_still_runs() {
    let r = run_with_files(&[("p.lisp", "(defun f (x) x) (print (f 7))")], &["--profile-out", "x.mprof", "--only", "f", "--exact", "p.lisp"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "\n7 "), "{}", r.transcript());
    for warning in [
        "mprof-lisp: warning: --profile-out has no effect without --profile, --time, --count or --io",
        "mprof-lisp: warning: --only has no effect without --count",
        "mprof-lisp: warning: --exact has no effect without --profile (it shapes the memory tables)",
    ] {
        assert!(r.stderr.contains(warning), "{warning}\n{}", r.stderr);
    }
    // --only naming a function the run never counted.
    let r = run_with_files(
        &[("p.lisp", "(defun f (x) x) (print (f 7))")],
        &["--count", "--summary-only", "--report", "r.txt", "--profile-out", "c.mprof", "--only", "f,nosuch", "p.lisp"],
    );
    assert_eq!(r.code, 0, "{}", r.transcript());
    assert_eq!(r.stderr, "mprof-lisp: warning: --only: no function named nosuch was counted\n");
}

#[test]
fn a_missing_value_is_named_in_the_usage_error() {
    let r = run(&["--max-depth"], "");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("a value is required for '--max-depth <N>'"), "{}", r.stderr);
}

#[test]
fn the_heap_limit_is_a_condition_handler_case_catches() {
    let prog = "(defun hog () (let ((keep nil)) (loop (push (make-list 1000) keep))))\n\
                (format t \"~a~%\" (handler-case (hog) (storage-condition () 'caught)))\n\
                (format t \"~a~%\" (length (make-list 10)))\n";
    let r = run_with_files(&[("hog.lisp", prog)], &["--max-heap", "48M", "hog.lisp"]);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "CAUGHT\n10\n", ""));
}

#[test]
fn the_repl_goes_on_after_the_heap_limit() {
    let input = "(defvar *keep* nil)\n(loop (push (make-list 1000) *keep*))\n(setq *keep* nil)\n(+ 1 2)\n";
    let r = run(&["--max-heap", "48M"], input);
    // A piped session that met an error exits with 1, after reading everything.
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, "*KEEP*\nNIL\n3\n");
    assert!(r.stderr.contains("Heap exhausted") && r.stderr.contains("STORAGE-CONDITION"), "{}", r.stderr);
}

#[test]
fn a_bad_heap_limit_is_a_usage_error() {
    let r = run(&["--max-heap", "lots", "-e", "1"], "");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("expected a size in bytes"), "{}", r.stderr);
}

#[test]
fn an_error_names_the_innermost_file_and_line_even_before_the_form_runs() {
    // A form of a loaded file that cannot be compiled has no frame of its own: the
    // location is the load's current form, not the outer file's LOAD form.
    let r = run_with_files(
        &[("outer.lisp", "(print 1)\n(load \"inner.lisp\")\n"), ("inner.lisp", "(print 2)\n\n(defun f () (1 2))\n")],
        &["outer.lisp"],
    );
    assert_eq!(r.code, 1, "{}", r.transcript());
    assert!(r.stderr.contains("inner.lisp:3"), "{}", r.stderr);
    // A runtime error inside the inner file names the inner form too.
    let r = run_with_files(
        &[("outer.lisp", "(load \"inner.lisp\")\n"), ("inner.lisp", "(defun g () (car 5))\n\n(g)\n")],
        &["outer.lisp"],
    );
    assert!(r.stderr.contains("inner.lisp:3"), "{}", r.stderr);
}
