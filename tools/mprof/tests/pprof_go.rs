//! `mprof export --format pprof` read by the real `go tool pprof` (Debian's golang-go):
//! for a C program compiled with `-g` and run under libmprof, `-top` ranks the
//! allocating functions by the bytes they allocated or still hold, `-list` puts the
//! bytes on the source lines that called malloc (and on the lines of `main` that called
//! them), and `-traces` prints whole stacks. Without Go the test says so and passes,
//! except in CI (`CI` set), where a missing `go` fails it: `.ci/run` installs golang-go.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn go() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path).map(|d| d.join("go")).find(|p| p.is_file());
    let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    match found {
        Some(go) => Some(go),
        None if in_ci => panic!("go is not installed (CI is set, so this fails rather than skips; .ci/run installs golang-go)"),
        None => {
            // Straight to the stream: the test harness would hide an eprintln! of a passing test.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "note: go not found on PATH: the go tool pprof test is skipped (apt-get install golang-go)");
            None
        }
    }
}

/// `go tool pprof ARGS FILE`'s standard output (it must succeed). HOME and the
/// temporary directory point into `dir`, so pprof writes nothing elsewhere.
fn pprof(go: &Path, dir: &Path, args: &[&str], file: &Path) -> String {
    let out = Command::new(go)
        .args(["tool", "pprof", "-symbolize=none"])
        .args(args)
        .arg(file)
        .env("HOME", dir)
        .env("PPROF_TMPDIR", dir)
        .env("GOCACHE", dir.join("gocache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "go tool pprof {args:?}: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// The 1-based line of `source` holding `text`.
fn line_of(source: &str, text: &str) -> usize {
    source.lines().position(|l| l.contains(text)).unwrap_or_else(|| panic!("{text} not in the source")) + 1
}

/// The output line of `pprof -list` for source line `n` (`   200kB    200kB   24:  ...`).
fn listed_line(listing: &str, n: usize) -> &str {
    let label = format!(" {n}:");
    listing.lines().find(|l| l.contains(&label)).unwrap_or_else(|| panic!("line {n} not listed:\n{listing}"))
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn go_tool_pprof_reads_the_export_of_a_c_profile_with_functions_lines_and_stacks() {
    let Some(go) = go() else { return };
    let dir = tempfile::tempdir().unwrap();
    let profile = common::c_profile(dir.path(), "report_mix");
    let gz = dir.path().join("mix.pb.gz");
    let (code, _, err) = common::mprof(&["export", &profile.to_string_lossy(), "--format", "pprof", "-o", &gz.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");

    // -top: make_buffer allocated the most (50 x 4096 bytes), make_node holds the most.
    let top = pprof(&go, dir.path(), &["-top", "-sample_index=alloc_space"], &gz);
    let rank = |text: &str, name: &str| text.lines().position(|l| l.trim_end().ends_with(name)).unwrap_or_else(|| panic!("{name} missing:\n{text}"));
    assert!(rank(&top, "make_buffer") < rank(&top, "make_node"), "{top}");
    assert!(top.lines().any(|l| l.contains("200kB") && l.ends_with("make_buffer")), "{top}");
    assert!(top.lines().any(|l| l.contains("46.88kB") && l.ends_with("make_node")), "{top}");
    let inuse = pprof(&go, dir.path(), &["-top", "-sample_index=inuse_space"], &gz);
    assert!(inuse.lines().any(|l| l.contains("23.44kB") && l.ends_with("make_node")), "500 nodes kept:\n{inuse}");
    let objects = pprof(&go, dir.path(), &["-top", "-sample_index=alloc_objects"], &gz);
    assert!(objects.lines().any(|l| l.trim_start().starts_with("1000 ") && l.ends_with("make_node")), "{objects}");

    // -list: the bytes sit on the malloc line of each function, and on the lines of
    // main that called them; the source is found by the path gcc recorded.
    let source = std::fs::read_to_string(dir.path().join("report_mix.c")).unwrap();
    let listing = pprof(&go, dir.path(), &["-list", "^make_buffer$", "-sample_index=alloc_space"], &gz);
    assert!(listing.contains(&format!("ROUTINE ======================== make_buffer in {}", dir.path().join("report_mix.c").display())), "{listing}");
    let malloc = listed_line(&listing, line_of(&source, "malloc(4096)"));
    assert!(malloc.contains("200kB") && malloc.contains("malloc(4096)"), "{malloc}");
    let main = pprof(&go, dir.path(), &["-list", "^main$", "-sample_index=alloc_space"], &gz);
    let call = listed_line(&main, line_of(&source, "list = make_node(list)"));
    assert!(call.contains("46.88kB"), "{call}");
    let call = listed_line(&main, line_of(&source, "free(make_buffer())"));
    assert!(call.contains("200kB"), "{call}");

    // -traces: whole stacks, leaf first, with the size-class label.
    let traces = pprof(&go, dir.path(), &["-traces", "-sample_index=alloc_space"], &gz);
    let stacks: Vec<Vec<&str>> = traces
        .split("-----------+-------------------------------------------------------")
        .map(|block| block.lines().map(|l| l.rsplit(' ').next().unwrap_or("")).filter(|w| !w.is_empty()).collect())
        .collect();
    for leaf in ["make_buffer", "make_node", "make_label", "free_twice"] {
        assert!(stacks.iter().any(|s| s.ends_with(&[leaf, "main"])), "no {leaf} < main stack:\n{traces}");
    }
    assert!(traces.contains("category:  >2048 bytes"), "{traces}");
}
