//! The crate boundaries hold: libmprof links no Lisp code, display, export or
//! command-line crate; the interpreter library pulls in none of its binary's
//! dependencies and no exporter; the text display links no exporter; nothing under
//! profiler/ knows Lisp, libmprof or the launcher. Checked on the real dependency graph
//! as `cargo tree` resolves it from Cargo.lock (normal and build dependencies only:
//! what ends up linked; the tests' dev-dependencies are not), not on a list kept by hand.

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

/// The workspace's packages whose folder is under `folder` (e.g. "profiler").
fn packages_under(folder: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "--locked", "--workspace", "-e", "normal", "--depth", "0", "--prefix", "none", "--format", "{p}"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree --workspace failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("workspace root");
    let under = root.join(folder);
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(' ')?;
            let path = rest.split_once('(')?.1.strip_suffix(')')?;
            std::path::Path::new(path).starts_with(&under).then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

const LISP: &[&str] = &["mprof-reader", "mprof-heap", "mprof-lisp", "mprof-listing", "mprof-lisp-cli", "logos", "gc-arena"];
const BINARY_ONLY: &[&str] = &["clap", "rustyline", "mimalloc", "libmimalloc-sys", "ctrlc", "signal-hook"];
/// The crates of other tools' formats (flame graphs, pprof, JSON), and the crate of
/// the exports that uses them.
const EXPORTERS: &[&str] = &["inferno", "prost", "quick-xml", "serde_json", "flate2", "mprof-export"];

#[test]
fn libmprof_links_only_the_engine() {
    assert_none_of("mprof-ffi", LISP);
    assert_none_of("mprof-ffi", BINARY_ONLY);
    // (flate2 is not among them: object reads compressed debug sections with it.)
    assert_none_of("mprof-ffi", &["mprof-display", "mprof-export", "mprof-cli", "mprof-launch"]);
    assert_none_of("mprof-ffi", &["inferno", "prost", "quick-xml", "serde_json"]);
    // Symbolization and debug information are the reader's (mprof-symbolize), never the profiled process's.
    assert_none_of("mprof-ffi", &["mprof-symbolize", "addr2line"]);
    assert!(dependency_tree("mprof-ffi").contains("mprof-engine"));
}

#[test]
fn the_interpreter_library_pulls_in_nothing_of_its_binary() {
    assert_none_of("mprof-lisp", BINARY_ONLY);
    assert_none_of("mprof-lisp", &["mprof-lisp-cli", "mprof-cli"]);
    assert_none_of("mprof-lisp", EXPORTERS);
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

#[test]
fn the_text_display_links_no_exporter() {
    assert_none_of("mprof-display", EXPORTERS);
    // The exports do have them: the checks look at the right names.
    let export = dependency_tree("mprof-export");
    assert!(EXPORTERS.iter().all(|d| export.contains(*d)), "{export:?}");
    assert!(dependency_tree("mprof-lisp").contains("mprof-display"));
}

#[test]
fn nothing_under_profiler_knows_lisp_libmprof_or_the_launcher() {
    let profiler = packages_under("profiler");
    assert!(
        ["mprof-display", "mprof-engine", "mprof-export"].iter().all(|p| profiler.contains(&p.to_string())),
        "{profiler:?}"
    );
    for package in &profiler {
        assert_none_of(package, LISP);
        assert_none_of(package, BINARY_ONLY);
        assert_none_of(package, &["mprof-ffi", "mprof-launch", "mprof-cli"]);
    }
}
