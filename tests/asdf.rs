//! End-to-end tests of `(require :asdf)`: the `mprof-lisp` binary finds and
//! loads systems of a temporary source tree through `CL_SOURCE_REGISTRY`
//! (trees, directories and the s-expression form), in ASDF's order, runs
//! their `.asd` code (`:perform` methods, `:in-order-to` test-op, secondary
//! systems), reports a failing file by its component, keeps the
//! implementation's own systems (`uiop`) off the disk, and runs programs
//! through UIOP and MPROF-EXT. `lisp-tests/asdf/` holds the programs whose
//! output is checked against SBCL's ASDF.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Write `files` (relative name, text) under `root`, creating directories.
fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().expect("a file has a directory")).expect("create directories");
        std::fs::write(&path, text).expect("write a test file");
    }
}

/// Run the binary with `-e` forms, HOME and the XDG directories inside `home`
/// (so no user configuration is read) and CL_SOURCE_REGISTRY as given.
fn run(home: &Path, registry: Option<&str>, forms: &[&str], args: &[&str]) -> Outcome {
    let mut command = Command::new(support::binary());
    for f in forms {
        command.arg("-e").arg(f);
    }
    command
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("MPROF_LISP_HISTORY", "")
        .stdin(Stdio::null());
    match registry {
        Some(r) => command.env("CL_SOURCE_REGISTRY", r),
        None => command.env_remove("CL_SOURCE_REGISTRY"),
    };
    let out = command.output().expect("run mprof-lisp");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const APP_ASD: &str = r#"
(defsystem "app"
  :version "1.2.3"
  :depends-on ("lib" (:feature :no-such-feature "absent"))
  :serial t
  :components ((:file "package")
               (:module "src"
                :components ((:file "b" :depends-on ("a"))
                             (:file "a")))
               (:file "main"))
  :perform (load-op :after (o c) (format t "~&app is loaded~%"))
  :in-order-to ((test-op (test-op "app/test"))))

(defsystem "app/test"
  :depends-on ("app")
  :components ((:file "tests"))
  :perform (test-op (o c) (format t "~&tests say ~A~%" (uiop:symbol-call :app :answer))))
"#;

fn app_tree(root: &Path) {
    let note = |name: &str| format!("(format t \"~&loading {name}~%\")\n");
    write_tree(
        root,
        &[
            ("src/app/app.asd", APP_ASD),
            ("src/app/package.lisp", &format!("(defpackage :app (:use :cl :lib) (:export #:answer))\n{}", note("package"))),
            ("src/app/src/a.lisp", &format!("(in-package :app)\n{}", note("src/a"))),
            ("src/app/src/b.lisp", &format!("(in-package :app)\n{}", note("src/b"))),
            ("src/app/main.lisp", &format!("(in-package :app)\n{}(defun answer () (lib:double 21))\n", note("main"))),
            ("src/app/tests.lisp", &note("tests")),
            ("src/deps/lib/lib.asd", "(defsystem :lib :components ((:file \"lib\")))\n"),
            (
                "src/deps/lib/lib.lisp",
                &format!("(defpackage :lib (:use :cl) (:export #:double))\n(in-package :lib)\n{}(defun double (x) (* 2 x))\n", note("lib")),
            ),
        ],
    );
}

#[test]
fn systems_load_and_test_in_asdf_order_from_a_tree_in_cl_source_registry() {
    let home = tempfile::tempdir().expect("temporary directory");
    app_tree(home.path());
    let registry = format!("{}/src//", home.path().display());
    let out = run(
        home.path(),
        Some(&registry),
        &["(require :asdf)", "(asdf:load-system :app)", "(format t \"~&--- again~%\")", "(asdf:load-system \"app\")",
          "(format t \"~&--- test~%\")", "(asdf:test-system :app)",
          "(print (list (asdf:component-version (asdf:find-system :app)) (asdf:asdf-version)))"],
        &[],
    );
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    assert_eq!(
        out.stdout,
        "loading lib\nloading package\nloading src/a\nloading src/b\nloading main\napp is loaded\n--- again\n\
         --- test\nloading tests\ntests say 42\n\n(\"1.2.3\" \"3.3.6\") "
    );
}

#[test]
fn directories_and_the_form_syntax_of_cl_source_registry() {
    let home = tempfile::tempdir().expect("temporary directory");
    app_tree(home.path());
    let root = home.path().display().to_string();
    // Two plain directories (no tree): each holds its .asd.
    let plain = format!("{root}/src/app/:{root}/src/deps/lib/");
    let out = run(home.path(), Some(&plain), &["(require :asdf)", "(asdf:load-system :app)"], &[]);
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    assert!(out.stdout.starts_with("loading lib\nloading package\n"), "{}", out.stdout);
    // Only the app's directory: lib is missing, and the error says where ASDF looked.
    let only_app = format!("{root}/src/app/");
    let out = run(home.path(), Some(&only_app), &["(require :asdf)", "(asdf:load-system :app)"], &[]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("\"lib\" not found, required by"), "{}", out.stderr);
    assert!(out.stderr.contains(&format!("{root}/src/app/")), "{}", out.stderr);
    // The s-expression syntax.
    let form = format!("(:source-registry (:tree \"{root}/src/\") :ignore-inherited-configuration)");
    let out = run(home.path(), Some(&form), &["(require :asdf)", "(asdf:load-system :lib)", "(print (lib:double 4))"], &[]);
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "loading lib\n\n8 ");
}

#[test]
fn a_failing_file_is_named_by_its_component() {
    let home = tempfile::tempdir().expect("temporary directory");
    write_tree(
        home.path(),
        &[
            ("src/bad/bad.asd", "(defsystem \"bad\" :components ((:module \"m\" :components ((:file \"oops\")))))\n"),
            ("src/bad/m/oops.lisp", "(error \"this file is broken\")\n"),
        ],
    );
    let registry = format!("{}/src//", home.path().display());
    let out = run(home.path(), Some(&registry), &["(require :asdf)", "(asdf:load-system :bad)"], &[]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("this file is broken"), "{}", out.stderr);
    assert!(out.stderr.contains("#<ASDF:CL-SOURCE-FILE \"bad\" \"m\" \"oops\">"), "{}", out.stderr);
    // The original condition is kept, and handlers of ERROR see the failure.
    let out = run(
        home.path(),
        Some(&registry),
        &["(require :asdf)",
          "(print (handler-case (asdf:load-system :bad) (asdf:action-failed (e) (princ-to-string (asdf:action-failed-condition e)))))"],
        &[],
    );
    assert_eq!(out.stdout, "\n\"this file is broken\" ");
}

#[test]
fn the_implementations_own_systems_are_not_loaded_from_disk() {
    let home = tempfile::tempdir().expect("temporary directory");
    write_tree(home.path(), &[("src/uiop/uiop.asd", "(error \"the uiop.asd on disk was loaded\")\n")]);
    let registry = format!("{}/src//", home.path().display());
    let out = run(
        home.path(),
        Some(&registry),
        &["(require :asdf)", "(asdf:load-system :uiop)", "(asdf:load-system \"asdf\")",
          "(print (list (asdf:component-loaded-p :uiop) (typep (asdf:find-system :uiop) 'asdf:system)))"],
        &[],
    );
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "\n(T T) ");
}

#[test]
fn uiop_and_mprof_ext_run_programs_and_read_the_command_line() {
    let home = tempfile::tempdir().expect("temporary directory");
    write_tree(
        home.path(),
        &[(
            "prog.lisp",
            r#"(require :uiop)
(print (uiop:run-program '("echo" "hello" "world") :output :string))
(print (uiop:run-program "printf 'a\\nb\\n'" :output :lines))
(print (nth-value 2 (uiop:run-program '("sh" "-c" "exit 3") :ignore-error-status t)))
(print (handler-case (uiop:run-program '("false")) (uiop:subprocess-error (e) (uiop:subprocess-error-code e))))
(print (uiop:run-program '("cat") :input (make-string-input-stream "piped") :output :string))
(print (multiple-value-list (run-program "sh" '("-c" "echo out; echo err >&2; exit 2") :output :string :error-output :string)))
(print (list (cdr *posix-argv*) (uiop:command-line-arguments) (stringp (getenv "HOME")) (uiop:getenv "NO_SUCH_VARIABLE_HERE")))
(print (list (uiop:os-unix-p) (uiop:implementation-type) (and (member :unix *features*) (member :64-bit *features*) t)))
"#,
        )],
    );
    let out = run(home.path(), None, &[], &["prog.lisp", "one", "two"]);
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    assert_eq!(
        out.stdout,
        "\n\"hello world\n\" \n(\"a\" \"b\") \n3 \n1 \n\"piped\" \n(2 \"out\n\" \"err\n\") \n\
         ((\"one\" \"two\") (\"one\" \"two\") T NIL) \n(T :MPROF-LISP T) "
    );
}

#[test]
fn builtin_systems_come_first_and_the_central_registry_before_the_source_registry() {
    let home = tempfile::tempdir().expect("temporary directory");
    app_tree(home.path());
    // A decoy lib.asd in the source registry, which must lose to *central-registry*.
    write_tree(home.path(), &[("src/decoy/lib.asd", "(error \"the source registry's lib.asd was loaded\")\n")]);
    let registry = format!("{}/src/decoy/", home.path().display());
    let lib_dir = format!("{}/src/deps/lib/", home.path().display());
    let push = format!("(push #p\"{lib_dir}\" asdf:*central-registry*)");
    let out = run(
        home.path(),
        Some(&registry),
        &["(require :asdf)",
          // The hook an embedded module uses to provide a system: (system-name . module-name).
          "(push '(\"uiop-alias\" . \"UIOP\") sys::*builtin-systems*)",
          "(print (list (asdf:load-system \"uiop-alias\") (asdf:component-loaded-p \"uiop-alias\")))",
          &push,
          "(asdf:load-system :lib)",
          "(print (lib:double 5))"],
        &[],
    );
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "\n(T T) \nloading lib\n\n10 ");
}
