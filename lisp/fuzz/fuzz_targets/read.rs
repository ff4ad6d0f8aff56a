//! The reader on arbitrary bytes: it must return, never panic or overflow.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mprof_lisp::fuzzing::read_forms(data));
