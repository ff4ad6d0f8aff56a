//! cargo-fuzz target: the printer over random, shared and circular data
//! (the harness is `../print_harness.rs`, also replayed by `cargo test`).
#![no_main]

#[path = "../print_harness.rs"]
mod print_harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| print_harness::run(data));
