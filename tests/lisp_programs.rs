//! Runs every Lisp program under `lisp-tests/` and compares what it prints
//! with the `.out` file beside it, which holds what SBCL prints for the same
//! program (`lisp-tests/sbcl-expected.sh` regenerates them). A difference
//! from SBCL is a failing test.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use mprof_lisp::{Interpreter, Options};

#[derive(Clone, Default)]
struct Capture(Rc<RefCell<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn programs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            programs(&p, out);
        } else if p.extension().is_some_and(|x| x == "lisp") {
            out.push(p);
        }
    }
}

/// Run one program; its standard output, then any unhandled error on a last line.
fn run(path: &Path) -> String {
    let out = Capture::default();
    let src = std::fs::read_to_string(path).unwrap_or_default();
    let mut lisp = match Interpreter::with_io(
        Box::new(out.clone()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
        Options::default(),
    ) {
        Ok(l) => l,
        Err(e) => return format!("interpreter failed to start: {e}"),
    };
    let result = lisp.eval_source(&src, path.to_str());
    let mut text = String::from_utf8_lossy(&out.0.borrow()).into_owned();
    if let Err(e) = result {
        text.push_str(&format!("\n;; unhandled {}", e));
    }
    text
}

#[test]
fn lisp_programs_print_what_sbcl_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lisp-tests");
    let mut files = Vec::new();
    programs(&root, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no programs under {}", root.display());
    let mut failures = Vec::new();
    let mut missing = Vec::new();
    for f in &files {
        let expected_path = f.with_extension("out");
        let Ok(expected) = std::fs::read_to_string(&expected_path) else {
            missing.push(expected_path.display().to_string());
            continue;
        };
        let got = run(f);
        if got != expected {
            let (gl, el): (Vec<&str>, Vec<&str>) = (got.lines().collect(), expected.lines().collect());
            let at = gl.iter().zip(&el).position(|(a, b)| a != b).unwrap_or(gl.len().min(el.len()));
            failures.push(format!(
                "{}: first difference at line {}:\n  expected: {:?}\n  got:      {:?}",
                f.display(),
                at + 1,
                el.get(at).copied().unwrap_or("<end>"),
                gl.get(at).copied().unwrap_or("<end>")
            ));
        }
    }
    assert!(missing.is_empty(), "programs without expected output: {missing:?}");
    assert!(failures.is_empty(), "{} of {} programs differ from SBCL:\n{}", failures.len(), files.len(), failures.join("\n"));
}
