//! Replays the printer fuzz corpus (`fuzz/corpus/print`, the seeds and every
//! input the fuzzer kept or crashed on) through the fuzz harness, so that
//! `cargo test` checks them all without libFuzzer.

#[path = "../fuzz/print_harness.rs"]
mod print_harness;

#[test]
fn every_printer_fuzz_corpus_input_passes_the_harness() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/print");
    let mut inputs: Vec<_> = std::fs::read_dir(&dir).expect("the corpus folder").flatten().map(|e| e.path()).collect();
    inputs.sort();
    assert!(inputs.len() >= 8, "the corpus holds the seeds at least: {}", inputs.len());
    for path in inputs {
        let data = std::fs::read(&path).expect("read a corpus input");
        // A failing input names itself just before the harness's assertion message.
        eprintln!("{}", path.display());
        print_harness::run(&data);
    }
}
