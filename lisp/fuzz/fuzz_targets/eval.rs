//! Compiling and running arbitrary forms under frame, fuel and heap limits:
//! every input must end in a value or a Lisp condition.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mprof_lisp::fuzzing::eval_forms(data));
