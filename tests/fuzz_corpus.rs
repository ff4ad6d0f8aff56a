//! Corpus replay: every input kept from fuzzing the Lisp side (lisp/fuzz:
//! crashes found and fixed, and hand-made inputs at the edges the fuzzers
//! probe) goes through the same entry point as its fuzz target, in `cargo
//! test`. A panic or abort here is a regression; a stack overflow kills the
//! test binary.

use std::path::PathBuf;

fn kept_inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../lisp/fuzz/regressions").join(target);
    let mut inputs: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("directory entry").path();
            let bytes = std::fs::read(&path).expect("read input");
            (path, bytes)
        })
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn kept_reader_inputs_replay() {
    let inputs = kept_inputs("read");
    assert!(inputs.len() >= 2, "the reader's kept inputs are missing");
    for (path, bytes) in inputs {
        eprintln!("read {}", path.display());
        mprof_lisp::fuzzing::read_forms(&bytes);
    }
}

#[test]
fn kept_eval_inputs_replay() {
    let inputs = kept_inputs("eval");
    assert!(inputs.len() >= 5, "the evaluator's kept inputs are missing");
    for (path, bytes) in inputs {
        eprintln!("eval {}", path.display());
        // Twice: the fuzzer reuses its interpreter, and some inputs (a DEFVAR kept from
        // the run before) only misbehave on a second run.
        mprof_lisp::fuzzing::eval_forms(&bytes);
        mprof_lisp::fuzzing::eval_forms(&bytes);
    }
}

#[test]
fn the_fuzzers_limits_turn_runaway_programs_into_conditions() {
    // What the eval target relies on to end every input: a loop and a hog each
    // end in a storage-condition under fuzz_options, in the fuzzer's interpreter setup.
    let mut lisp = mprof_lisp::Interpreter::with_io(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
        mprof_lisp::fuzzing::fuzz_options(),
    )
    .expect("interpreter");
    for form in ["(loop)", "(let ((k nil)) (loop (push (make-list 1000) k)))", "(labels ((f () (1+ (f)))) (f))"] {
        let e = lisp.eval(form).expect_err(form);
        assert!(e.condition_type.contains("STORAGE-CONDITION") || e.condition_type.contains("STACK-EXHAUSTED"), "{form}: {e}");
    }
}
