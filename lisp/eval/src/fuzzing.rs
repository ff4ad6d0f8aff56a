//! The entry points of the fuzz targets (lisp/fuzz) and of the corpus replay
//! test that runs their kept inputs in `cargo test`: one function per target,
//! so a replayed input goes through exactly what the fuzzer ran.
//!
//! Invariant: for any bytes, these return; a panic, abort, hang or stack
//! overflow in them is a bug. Evaluation runs with small frame, fuel and heap
//! limits, so every input ends within a bounded time and memory.

use std::cell::RefCell;

use crate::{Interpreter, Options};

/// Read every form of `data` (as UTF-8, lossily) with the reader's default options.
pub fn read_forms(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = mprof_reader::read_all(&text, &mprof_reader::ReadOptions::default());
}

/// The limits evaluation runs under: deep enough for real programs, small
/// enough that a fuzzer's input ends within a second or so.
pub fn fuzz_options() -> Options {
    Options { max_frames: 10_000, max_fuel: Some(5_000_000), max_heap: 256 << 20, ..Options::default() }
}

thread_local! {
    /// One interpreter per thread, reused: starting one compiles the prelude.
    static LISP: RefCell<Option<Interpreter>> = const { RefCell::new(None) };
}

/// Compile and run the forms of `data` (as UTF-8, lossily) in an interpreter
/// with [`fuzz_options`] whose streams are empty and discarded. Inputs naming
/// `sleep` are skipped (sleeping spends no fuel), as are those that touch files
/// (a fuzzer must not delete or fill the directory it runs in).
pub fn eval_forms(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let lower = text.to_ascii_lowercase();
    if ["sleep", "file", "open", "load", "directory", "dribble"].iter().any(|w| lower.contains(w)) {
        return;
    }
    LISP.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Interpreter::with_io(
                Box::new(std::io::sink()),
                Box::new(std::io::sink()),
                Box::new(std::io::empty()),
                fuzz_options(),
            )
            .ok();
        }
        if let Some(lisp) = slot.as_mut() {
            let _ = lisp.eval_source(&text, None);
        }
    });
}
