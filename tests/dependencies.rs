//! The crate boundaries hold: libmprof links no Lisp code, display or command-line
//! crate; the interpreter library pulls in none of its binary's dependencies; the
//! engine and display know nothing of Lisp. Checked on the real dependency graph as
//! `cargo tree` resolves it from Cargo.lock (normal and build dependencies only: what
//! ends up linked), not on a list kept by hand.

use std::collections::BTreeSet;
use std::process::Command;

/// The packages `package` depends on, itself included.
fn dependency_tree(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "--locked", "-e", "normal,build", "--prefix", "none", "--format", "{p}", "-p", package])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree -p {package} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let names: BTreeSet<String> =
        text.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect();
    assert!(names.contains(package), "{package} is in its own tree: {names:?}");
    names
}

fn assert_none_of(package: &str, forbidden: &[&str]) {
    let tree = dependency_tree(package);
    let found: Vec<&&str> = forbidden.iter().filter(|f| tree.contains(**f)).collect();
    assert!(found.is_empty(), "{package} must not depend on {found:?}; its tree: {tree:?}");
}

const LISP: &[&str] = &["mprof-reader", "mprof-heap", "mprof-lisp", "mprof-listing", "mprof-lisp-cli", "logos", "gc-arena"];
const BINARY_ONLY: &[&str] = &["clap", "rustyline", "mimalloc", "libmimalloc-sys", "ctrlc", "signal-hook"];

#[test]
fn libmprof_links_only_the_engine() {
    assert_none_of("mprof-ffi", LISP);
    assert_none_of("mprof-ffi", BINARY_ONLY);
    assert_none_of("mprof-ffi", &["mprof-display", "mprof-cli", "inferno", "prost", "serde_json"]);
    assert!(dependency_tree("mprof-ffi").contains("mprof-engine"));
}

#[test]
fn the_interpreter_library_pulls_in_nothing_of_its_binary() {
    assert_none_of("mprof-lisp", BINARY_ONLY);
    assert_none_of("mprof-lisp", &["mprof-lisp-cli", "mprof-cli"]);
    // The binary does have them: the check above looks at the right names.
    let cli = dependency_tree("mprof-lisp-cli");
    assert!(BINARY_ONLY.iter().all(|d| cli.contains(*d)), "{cli:?}");
}

#[test]
fn the_engine_and_display_know_nothing_of_lisp_or_command_lines() {
    assert_none_of("mprof-engine", LISP);
    assert_none_of("mprof-engine", BINARY_ONLY);
    assert_none_of("mprof-engine", &["mprof-display"]);
    assert_none_of("mprof-display", LISP);
    assert_none_of("mprof-display", BINARY_ONLY);
}
