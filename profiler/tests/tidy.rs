//! Tidy checks on the profiler's own sources: every file opens with a `//!` comment
//! saying its job, and library code outside tests has no `todo!`/`unimplemented!`.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_source_file_opens_with_a_module_comment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches", "examples", "fuzz/fuzz_targets"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() >= 10, "found {} files", files.len());
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if !text.starts_with("//!") {
            bad.push(f.display().to_string());
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for forbidden in ["todo!(", "unimplemented!(", "#[ignore]", "#[should_panic]"] {
            if code.contains(forbidden) && !f.ends_with("tidy.rs") {
                bad.push(format!("{}: {forbidden}", f.display()));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
