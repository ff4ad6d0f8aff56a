//! Tidy checks on the profiler's own sources (engine, display, exports, fuzz targets) and
//! the tools over them (the `mprof` command, the launcher): every file opens with a `//!`
//! comment saying its job, and library code outside tests has no `todo!`/`unimplemented!`.

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
    // tools/mprof: the whole profiler/ folder (engine, display, exports, fuzz targets)
    // and the tools/ folder (this command, the launcher).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for crate_dir in [
        "profiler/engine",
        "profiler/display",
        "profiler/export",
        "profiler/symbolize",
        "tools/mprof",
        "tools/launch",
    ] {
        for dir in ["src", "tests", "benches", "examples"] {
            let d = root.join(crate_dir).join(dir);
            if d.is_dir() {
                rust_files(&d, &mut files);
            }
        }
    }
    rust_files(&root.join("profiler/fuzz/fuzz_targets"), &mut files);
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
