//! Tidy checks over the source tree: the one-allocation-funnel rule (nothing
//! but `alloc_object` calls `Gc::new`), and every Rust source file opening
//! with a `//!` comment that says its job.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn only_alloc_object_calls_gc_new() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["lisp", "profiler", "ffi-c/src", "tools", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "expected the workspace's sources, found {}", files.len());
    let funnel = root.join("lisp/heap/src/object.rs");
    let mut offenders = Vec::new();
    for f in &files {
        if f.ends_with("tests/tidy.rs") || *f == funnel {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if line.contains("Gc::new(") || line.contains("Gc::new_static(") {
                offenders.push(format!("{}:{}", f.display(), i + 1));
            }
        }
    }
    assert!(offenders.is_empty(), "Gc::new outside alloc_object: {offenders:?}");
    let text = std::fs::read_to_string(&funnel).unwrap_or_default();
    assert!(text.contains("Gc::new(mc"), "the funnel itself must allocate with Gc::new");
}

#[test]
fn every_source_file_says_its_job() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["lisp", "profiler", "ffi-c/src", "tools"] {
        rust_files(&root.join(dir), &mut files);
    }
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!") && !first.starts_with("#![")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a //! comment: {missing:?}");
}
