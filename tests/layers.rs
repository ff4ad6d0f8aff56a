//! The interpreter crate's layers hold, read from its own source: a module
//! names (through `crate::...` paths) only modules of its own layer or below.
//!
//! From the bottom: `runtime/` and `profile/` (what everything computes with;
//! `profile/` names nothing of the crate), `compiler/`, `vm/`, `builtins/`,
//! `interp/` (the driver and the embedding API), and the crate root
//! (`lib.rs`, `fuzzing.rs`). Inline test modules (`#[cfg(test)]` to the end of
//! a file) may reach up: they drive the whole interpreter. Also: no source file
//! of the workspace passes 1,500 lines, so no file is a room of many jobs, and
//! an object's profile category is decided by its kind in one place.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') && name != "fuzz" {
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

/// The layer of a top-level module of `mprof-lisp` (lisp/eval/src), by its name.
fn layer(module: &str) -> Option<u32> {
    Some(match module {
        "runtime" | "profile" => 0,
        "compiler" => 1,
        "vm" => 2,
        "builtins" => 3,
        "interp" => 4,
        "lib" | "fuzzing" => 5,
        _ => return None,
    })
}

/// The code of a file without its inline test module.
fn non_test_code(text: &str) -> &str {
    match text.find("\n#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The top-level modules a text names as `crate::name`.
fn crate_modules(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            found.push(name);
        }
    }
    found
}

#[test]
fn the_interpreter_imports_only_downward() {
    let src = workspace().join("lisp/eval/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 60, "expected lisp/eval's sources, found {}", files.len());
    let mut violations = Vec::new();
    let mut checked = 0;
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let top = rel.components().next().and_then(|c| c.as_os_str().to_str()).unwrap_or("");
        let top = top.strip_suffix(".rs").unwrap_or(top);
        let Some(own) = layer(top) else {
            violations.push(format!("{}: a top-level module of no layer (add it to layer())", rel.display()));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for name in crate_modules(non_test_code(&text)) {
            checked += 1;
            // Items re-exported at the crate root (the embedding API) sit on the top layer.
            let theirs = layer(&name).unwrap_or(5);
            let upward = theirs > own;
            let profile_reaches_out = top == "profile" && name != "profile";
            if upward || profile_reaches_out {
                violations.push(format!("{} (layer {own}) names crate::{name} (layer {theirs})", rel.display()));
            }
        }
    }
    assert!(checked > 300, "the scan found only {checked} crate paths: is it reading the right files?");
    assert!(violations.is_empty(), "imports that run up a layer:\n{}", violations.join("\n"));
}

#[test]
fn the_layer_scan_sees_an_upward_import() {
    // The check above would pass on a scan that found nothing: show it finds one.
    let code = "use crate::runtime::ctx::Ctx;\nfn f() { crate::interp::boot(); }\n#[cfg(test)]\nmod tests { use crate::vm::Vm; }";
    assert_eq!(crate_modules(non_test_code(code)), ["runtime", "interp"]);
}

#[test]
fn no_source_file_passes_1500_lines() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["lisp", "profiler", "ffi-c", "tools", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "expected the workspace's sources, found {}", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap_or_default().lines().count();
            (lines > 1500).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files to split by job: {long:?}");
}

#[test]
fn categories_are_decided_in_one_place() {
    // An object's profile category follows from its kind, in lisp/heap/src/kind.rs only.
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["lisp/heap/src", "lisp/eval/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    let decider = root.join("lisp/heap/src/kind.rs");
    let variants = ["Category::Cons", "Category::Float", "Category::StructureVector", "Category::Other"];
    let decider_text = std::fs::read_to_string(&decider).unwrap_or_default();
    assert!(variants.iter().all(|v| decider_text.contains(v)), "kind.rs must name every category");
    let elsewhere: Vec<String> = files
        .iter()
        .filter(|f| **f != decider)
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            variants.iter().any(|v| text.contains(v)).then(|| f.display().to_string())
        })
        .collect();
    assert!(elsewhere.is_empty(), "categories decided outside kind.rs: {elsewhere:?}");
}
