//! End-to-end tests of libmprof: C programs from tests/c are compiled with gcc
//! (frame pointers on, sibling calls off, as the README advises), run under the
//! library (preloaded, or statically linked), and the profiles they write are
//! checked against the numbers each program's own deterministic generator
//! implies. This test belongs to the package `mprof-ffi` (ffi-c/Cargo.toml), so cargo
//! has built libmprof.so and libmprof.a into the test's own target directory first.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use mprof_engine::reduce::{ReduceOptions, Reduction, reduce};
use mprof_display::{ReportOptions, render_report};
use mprof_engine::{HeapErrorKind, Profile};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const CFLAGS: &[&str] = &[
    "-O2",
    "-g",
    "-fno-omit-frame-pointer",
    "-fno-optimize-sibling-calls",
    "-pthread",
];
/// How distributions build their binaries: optimized, no frame pointers.
const NO_FRAME_POINTER_CFLAGS: &[&str] = &["-O2", "-g", "-fomit-frame-pointer", "-fno-optimize-sibling-calls"];
/// What a Rust static library needs from the system when linked into C.
const STATIC_LIBS: &[&str] = &[
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

struct Lib {
    dir: PathBuf,
}

/// The libmprof that cargo built for this test: the package's library, in the
/// target directory's profile folder beside the folder of this test's executable.
fn lib() -> &'static Lib {
    static LIB: OnceLock<Lib> = OnceLock::new();
    LIB.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // <target>/<profile>/deps/ffi_c-<hash>
        let deps = exe.parent().expect("target/<profile>/deps").to_path_buf();
        let profile_dir = deps.parent().expect("target/<profile>").to_path_buf();
        // deps/ holds the copy this test run built; the profile folder may hold one
        // left by an earlier `cargo build -p mprof-ffi`.
        let dir = [deps, profile_dir]
            .into_iter()
            .find(|d| d.join("libmprof.so").is_file() && d.join("libmprof.a").is_file())
            .expect("cargo builds libmprof.so and libmprof.a for this test (package mprof-ffi)");
        Lib { dir }
    })
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Compile tests/c/<name>.c (or ffi-c/examples/<name>.c) into `dir`, with
/// extra arguments (objects, libraries) and compiler flags.
fn compile(dir: &Path, name: &str, extra: &[&str], flags: &[&str]) -> PathBuf {
    let mut src = workspace().join("tests/c").join(format!("{name}.c"));
    if !src.exists() {
        src = workspace().join("ffi-c/examples").join(format!("{name}.c"));
    }
    let exe = dir.join(name);
    let out = Command::new("gcc")
        .args(flags)
        .args([
            "-Wno-free-nonheap-object",
            "-Wno-alloc-size-larger-than",
            "-I",
        ])
        .arg(workspace().join("ffi-c/include"))
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .args(extra)
        .output()
        .expect("run gcc");
    assert!(
        out.status.success(),
        "gcc {name}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn compile_static(dir: &Path, name: &str) -> PathBuf {
    let archive = lib().dir.join("libmprof.a");
    let mut extra = vec![archive.to_str().expect("utf-8 path")];
    extra.extend_from_slice(STATIC_LIBS);
    compile(dir, name, &extra, CFLAGS)
}

/// Run `exe` with libmprof preloaded (unless `preload` is false) and the given environment.
fn run(dir: &Path, exe: &Path, args: &[&str], env: &[(&str, &str)], preload: bool) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .current_dir(dir)
        .env_remove("MPROF_OUT")
        .env_remove("MPROF_DEPTH")
        .env_remove("MPROF_UNWIND");
    if preload {
        cmd.env("LD_PRELOAD", lib().dir.join("libmprof.so"));
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the C program")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A profile as `mprof` reads it: libmprof writes raw return addresses, symbolized here.
fn read_profile(path: &Path) -> Profile {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let raw = Profile::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(raw.is_raw() || raw.nodes.len() == 1, "libmprof writes raw profiles");
    mprof_symbolize::symbolize(raw, &mprof_symbolize::Options::default())
}

fn reduced(p: &Profile) -> Reduction {
    reduce(
        p,
        &ReduceOptions {
            merge_cycles: false,
            call_sites: false,
            path_depth: 5,
        },
    )
    .expect("reduce")
}

/// (allocs, bytes) never freed on leak-table paths equal to `steps`.
fn kept(r: &Reduction, steps: &[&str]) -> (u64, u64) {
    r.kept_paths
        .iter()
        .filter(|p| {
            p.steps
                .iter()
                .map(|s| s.name.as_str())
                .eq(steps.iter().copied())
        })
        .fold((0, 0), |(a, b), p| (a + p.kept_allocs, b + p.kept_bytes))
}

/// (count, bytes) of the figure `name` on partial paths equal to `steps`.
fn figure(r: &Reduction, name: &str, steps: &[&str]) -> (u64, u64) {
    let paths = figure_paths(r, name);
    paths
        .iter()
        .filter(|p| p.steps.iter().map(|s| s.name.as_str()).eq(steps.iter().copied()))
        .fold((0, 0), |(a, b), p| (a + p.kept_allocs, b + p.kept_bytes))
}

/// The partial paths of the figure `name` (it must be in the profile).
fn figure_paths<'a>(r: &'a Reduction, name: &str) -> &'a [mprof_engine::reduce::PartialPath] {
    r.figures
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, paths)| paths.as_slice())
        .unwrap_or_else(|| panic!("no figure {name:?} in {:?}", r.figures.iter().map(|f| &f.0).collect::<Vec<_>>()))
}

/// (count, bytes) of the figure `name` over every path.
fn figure_total(r: &Reduction, name: &str) -> (u64, u64) {
    figure_paths(r, name).iter().fold((0, 0), |(a, b), p| (a + p.kept_allocs, b + p.kept_bytes))
}

/// (allocs, bytes) allocated under a function, callees included (each counted once).
fn total(r: &Reduction, name: &str) -> (u64, u64) {
    r.entities
        .iter()
        .filter(|e| e.name == name && !e.is_cycle)
        .fold((0, 0), |(a, b), e| {
            (a + e.total_allocs(), b + e.total_bytes())
        })
}

/// What was allocated under printf: glibc's DWARF (libc6-dbg) names it
/// `__printf`, its dynamic symbol table `printf`.
fn printf_total(r: &Reduction) -> (u64, u64) {
    let a = total(r, "printf");
    let b = total(r, "__printf");
    (a.0 + b.0, a.1 + b.1)
}

/// The numbers a program printed as "word value word value ...".
fn printed(o: &Output, key: &str) -> u64 {
    let text = stdout(o);
    let mut words = text.split_whitespace();
    while let Some(w) = words.next() {
        if w == key {
            return words
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{key} in {text}"));
        }
    }
    panic!("{key} not printed: {text}")
}

#[test]
fn widget_leak_table_shows_exactly_the_red_widgets_when_preloaded() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["10000"], &[], true);
    assert_ok(&o);
    let red = printed(&o, "red");
    let p = read_profile(&dir.path().join("mprof.out"));
    let r = reduced(&p);
    assert_eq!(
        kept(&r, &["main", "make_red_widget", "make_widget"]),
        (red, red * 204)
    );
    assert_eq!(
        kept(&r, &["main", "make_blue_widget", "make_widget"]),
        (0, 0),
        "blue widgets are all freed"
    );
    assert_eq!(total(&r, "make_widget"), (10_000, 10_000 * 204));
    let bin = p
        .bins
        .iter()
        .find(|b| b.key == mprof_engine::BinKey::Size(204))
        .expect("204-byte bin");
    assert_eq!(
        (bin.counters.allocs, bin.counters.frees),
        (10_000, 10_000 - red)
    );

    let report = render_report(&p, &ReportOptions::default());
    let leak_rows: Vec<&str> = report
        .lines()
        .filter(|l| l.contains("make_"))
        .take(1)
        .collect();
    insta::assert_snapshot!("widgets_leak_row", leak_rows.join("\n"));
}

#[test]
fn widget_counts_are_the_same_when_statically_linked() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_static(dir.path(), "widgets");
    let o = run(
        dir.path(),
        &exe,
        &["3000"],
        &[("MPROF_OUT", "static-%p.out")],
        false,
    );
    assert_ok(&o);
    let red = printed(&o, "red");
    let pid_file = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("static-"))
        })
        .expect("static-<pid>.out written");
    let r = reduced(&read_profile(&pid_file));
    assert_eq!(
        kept(&r, &["main", "make_red_widget", "make_widget"]),
        (red, red * 204)
    );
}

#[test]
fn four_threads_are_counted_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "threads", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["5000"], &[], true);
    assert_ok(&o);
    let r = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(total(&r, "keep_block"), (20_000, 20_000 * 48));
    let leaked = printed(&o, "leaked");
    assert_eq!(kept(&r, &["worker", "keep_block"]), (leaked, leaked * 48));
    assert_eq!(kept(&r, &["main", "big_block"]), (10, 30_000));
}

#[test]
fn mutual_recursion_is_credited_once() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "recursion", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["100"], &[], true);
    assert_ok(&o);
    let r = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(
        kept(&r, &["main", "F", "G", "F", "G"]),
        (100, 1000),
        "the exact path is kept"
    );
    // The paper's Figure 7: pairs would credit F -> G with 20 bytes per call.
    assert_eq!(total(&r, "F"), (100, 1000));
    assert_eq!(total(&r, "G"), (100, 1000));
    // main also holds stdout's buffer, allocated under printf (glibc's frames
    // are unwound by their CFI).
    let printf = printf_total(&r);
    assert_eq!(printf.0, 1);
    assert_eq!(total(&r, "main"), (100 + printf.0, 1000 + printf.1));
}

#[test]
fn depth_limit_keeps_the_innermost_frames() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "recursion", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["50"], &[("MPROF_DEPTH", "2")], true);
    assert_ok(&o);
    let r = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(kept(&r, &["F", "G"]), (50, 500));
}

#[test]
fn a_forked_child_writes_its_own_file_and_nothing_is_counted_twice() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "forker", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_ok(&o);
    let child = printed(&o, "child");
    let parent = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(kept(&parent, &["main", "parent_work"]), (5, 500));
    assert_eq!(total(&parent, "child_work"), (0, 0));
    let child = reduced(&read_profile(
        &dir.path().join(format!("mprof.out.{child}")),
    ));
    assert_eq!(kept(&child, &["main", "child_work"]), (5, 3500));
    assert_eq!(
        total(&child, "parent_work"),
        (0, 0),
        "the parent's blocks belong to the parent's file"
    );
}

fn error_counts(r: &Reduction) -> Vec<(HeapErrorKind, Vec<String>, u64)> {
    let mut v: Vec<_> = r
        .errors
        .iter()
        .map(|e| {
            (
                e.kind,
                e.path
                    .steps
                    .iter()
                    .map(|s| s.name.clone())
                    .collect::<Vec<_>>(),
                e.count,
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn heap_errors_are_reported_with_their_paths_and_the_program_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "errors", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_ok(&o);
    assert_eq!(stdout(&o), "survived\n");
    let r = reduced(&read_profile(&dir.path().join("mprof.out")));
    let path = |f: &str| vec!["main".to_string(), f.to_string()];
    assert_eq!(
        error_counts(&r),
        vec![
            (HeapErrorKind::DoubleFree, path("double_free"), 2),
            (HeapErrorKind::InvalidFree, path("bogus_free"), 1),
            (HeapErrorKind::InvalidFree, path("bogus_free"), 1),
            (HeapErrorKind::ReallocOfFreed, path("realloc_freed"), 1),
        ]
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("mprof: double free of 0x"));
}

#[test]
fn on_error_abort_writes_the_file_then_aborts() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "errors", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[("MPROF_ON_ERROR", "abort")], true);
    assert_eq!(o.status.signal(), Some(libc_sigabrt()), "{:?}", o.status);
    assert_eq!(stdout(&o), "");
    let r = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(
        error_counts(&r),
        vec![(
            HeapErrorKind::DoubleFree,
            vec!["main".into(), "double_free".into()],
            1
        )]
    );
}

fn libc_sigabrt() -> i32 {
    6
}

#[test]
fn every_entry_point_keeps_its_promises_and_is_attributed() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "entry_points", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_ok(&o);
    assert_eq!(stdout(&o), "ok\n");
    let r = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(kept(&r, &["main", "leak_calloc"]), (1, 100));
    assert_eq!(kept(&r, &["main", "leak_aligned"]), (2, 512));
    assert_eq!(kept(&r, &["main", "leak_memalign"]), (1, 5000));
    assert_eq!(kept(&r, &["main", "leak_posix"]), (1, 40));
    assert_eq!(kept(&r, &["main", "leak_realloc"]), (1, 700));
    assert_eq!(
        total(&r, "leak_realloc"),
        (2, 707),
        "realloc counts as a free and a new allocation"
    );
    assert!(r.errors.is_empty(), "{:?}", r.errors);
}

#[test]
fn dwarf_unwinding_sees_through_code_without_frame_pointers() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], NO_FRAME_POINTER_CFLAGS);
    let o = run(
        dir.path(),
        &exe,
        &["2000"],
        &[("MPROF_UNWIND", "dwarf")],
        true,
    );
    assert_ok(&o);
    let red = printed(&o, "red");
    let r = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(
        kept(&r, &["main", "make_red_widget", "make_widget"]),
        (red, red * 204)
    );
    // glibc has no frame pointers: only DWARF sees printf above stdout's buffer.
    assert_eq!(printf_total(&r).0, 1);

    // The frame-pointer walk on the same binary loses callers but never faults,
    // and every allocation is still counted.
    let o = run(
        dir.path(),
        &exe,
        &["2000"],
        &[("MPROF_OUT", "fp.out"), ("MPROF_UNWIND", "fp")],
        true,
    );
    assert_ok(&o);
    let r = reduced(&read_profile(&dir.path().join("fp.out")));
    assert_eq!(total(&r, "make_widget"), (2000, 2000 * 204));
}

#[test]
fn by_default_code_without_frame_pointers_gets_its_full_path() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], NO_FRAME_POINTER_CFLAGS);
    let o = run(dir.path(), &exe, &["2000"], &[], true);
    assert_ok(&o);
    let red = printed(&o, "red");
    let p = read_profile(&dir.path().join("mprof.out"));
    let r = reduced(&p);
    assert_eq!(
        kept(&r, &["main", "make_red_widget", "make_widget"]),
        (red, red * 204)
    );
    assert_eq!(total(&r, "make_blue_widget").0, 2000 - red);
    // Through glibc too (no frame pointers there either): printf above stdout's buffer.
    assert_eq!(printf_total(&r).0, 1);
    // No frame is a stray stack word: every function has a name.
    let unnamed: Vec<&str> = p
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .filter(|n| n.starts_with("0x"))
        .collect();
    assert!(unnamed.is_empty(), "{unnamed:?}");
}

#[test]
fn the_api_stops_resets_and_dumps() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_static(dir.path(), "api");
    let o = run(dir.path(), &exe, &["api.out"], &[], false);
    assert_ok(&o);
    assert_eq!(stdout(&o), "done\n");
    let r = reduced(&read_profile(&dir.path().join("api.out")));
    assert_eq!(kept(&r, &["main", "counted"]), (6, 198));
    assert_eq!(total(&r, "while_stopped"), (0, 0));
    assert_eq!(total(&r, "before_reset"), (0, 0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write /nonexistent-dir/x.out"));
}

#[test]
fn the_dump_signal_writes_the_file_while_the_program_runs() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "dump_signal", &[], CFLAGS);
    let env = [("MPROF_DUMP_SIGNAL", "USR1"), ("MPROF_OUT", "signal.out")];
    let o = run(dir.path(), &exe, &["signal.out"], &env, true);
    assert_ok(&o);
    assert_eq!(stdout(&o), "dumped\n");
    let r = reduced(&read_profile(&dir.path().join("signal.out.signal")));
    assert_eq!(
        total(&r, "work"),
        (1, 123),
        "written while the program waited, after its first allocation"
    );
    let r = reduced(&read_profile(&dir.path().join("signal.out")));
    assert_eq!(total(&r, "work"), (2, 246), "_exit wrote the final file");
}

/// The status `exe how` ends with, without the library.
fn plain_status(dir: &Path, exe: &Path, how: &str) -> std::process::ExitStatus {
    run(dir, exe, &[how], &[], false).status
}

/// No temporary file is ever left beside the profiles.
fn assert_no_temporary_files(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn every_abnormal_end_writes_the_profile_and_keeps_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "endings", &[], CFLAGS);
    let ends = [
        "term", "int", "hup", "quit", "pipe", "alrm", "usr2", "_exit", "_Exit", "abort", "segv",
        "bus", "fpe", "ill", "overflow",
    ];
    for how in ends {
        let out = format!("{how}.out");
        let o = run(dir.path(), &exe, &[how], &[("MPROF_OUT", &out)], true);
        let plain = plain_status(dir.path(), &exe, how);
        assert!(!plain.success(), "{how} ends abnormally: {plain:?}");
        assert_eq!(
            (o.status.code(), o.status.signal()),
            (plain.code(), plain.signal()),
            "{how}: same end as without the library\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r = reduced(&read_profile(&dir.path().join(&out)));
        assert_eq!(kept(&r, &["main", "before_end"]), (5, 500), "{how}");
    }
    assert_no_temporary_files(dir.path());
}

#[test]
fn a_statically_linked_program_writes_its_profile_on_exit_and_on_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_static(dir.path(), "endings");
    for how in ["_exit", "term", "segv"] {
        let out = format!("{how}.out");
        let o = run(dir.path(), &exe, &[how], &[("MPROF_OUT", &out)], false);
        assert!(!o.status.success(), "{how}");
        let r = reduced(&read_profile(&dir.path().join(&out)));
        assert_eq!(kept(&r, &["main", "before_end"]), (5, 500), "{how}");
    }
}

/// Start `exe how` preloaded, wait for its "ready" line; returns the child.
fn start_ready(dir: &Path, exe: &Path, how: &str, env: &[(&str, &str)]) -> std::process::Child {
    use std::io::BufRead;
    let mut cmd = Command::new(exe);
    cmd.arg(how)
        .current_dir(dir)
        .env("LD_PRELOAD", lib().dir.join("libmprof.so"))
        .stdout(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start the C program");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    child
}

fn send_signal(pid: u32, name: &str) {
    let o = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .output()
        .expect("run kill");
    assert_ok(&o);
}

/// Wait up to `limit` for `path` to exist; returns how long it took.
fn wait_for_file(path: &Path, limit: std::time::Duration) -> Option<std::time::Duration> {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if path.exists() {
            return Some(start.elapsed());
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    None
}

#[test]
fn the_dump_signal_takes_effect_while_every_thread_is_blocked() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "endings", &[], CFLAGS);
    for how in ["sleep", "threads"] {
        let out = dir.path().join(format!("{how}.out"));
        let env = [
            ("MPROF_DUMP_SIGNAL", "USR1"),
            ("MPROF_OUT", &format!("{how}.out")),
        ];
        let mut child = start_ready(dir.path(), &exe, how, &env);
        send_signal(child.id(), "USR1");
        // Milliseconds in practice; the bound only absorbs a loaded test machine.
        let took = wait_for_file(&out, std::time::Duration::from_secs(5));
        assert!(took.is_some(), "{how}: no file 5 s after the dump signal");
        let r = reduced(&read_profile(&out));
        assert_eq!(kept(&r, &["main", "before_end"]), (5, 500), "{how}");
        std::fs::remove_file(&out).unwrap();
        // Still running: a termination request writes the final file, and the
        // process dies of SIGTERM.
        send_signal(child.id(), "TERM");
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(15), "{how}");
        let r = reduced(&read_profile(&out));
        assert_eq!(kept(&r, &["main", "before_end"]), (5, 500), "{how}");
    }
    assert_no_temporary_files(dir.path());
}

#[test]
fn bad_settings_are_reported_and_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], CFLAGS);
    let env = [
        ("MPROF_DEPTH", "lots"),
        ("MPROF_UNWIND", "libunwind"),
        ("MPROF_DUMP_SIGNAL", "SIGFOO"),
        ("MPROF_ON_ERROR", "explode"),
    ];
    let o = run(dir.path(), &exe, &["100"], &env, true);
    assert_ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr);
    insta::assert_snapshot!("bad_settings_stderr", stderr);
    let red = printed(&o, "red");
    let r = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(
        kept(&r, &["main", "make_red_widget", "make_widget"]),
        (red, red * 204)
    );
}

#[test]
fn an_execd_child_writes_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "exec_child", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_ok(&o);
    assert!(stdout(&o).ends_with("status 0\n"), "{}", stdout(&o));
    let child = printed(&o, "child");
    let parent = reduced(&read_profile(&dir.path().join("mprof.out")));
    assert_eq!(kept(&parent, &["main", "parent_side"]), (2, 128));
    assert_eq!(total(&parent, "exec_child_work"), (0, 0));
    let child = reduced(&read_profile(
        &dir.path().join(format!("mprof.out.{child}")),
    ));
    assert_eq!(kept(&child, &["main", "exec_child_work"]), (7, 672));
    assert_eq!(total(&child, "parent_side"), (0, 0));
}

/// The profiles in `dir`: file name and reduction, for every file named `mprof.out*`.
fn profiles_in(dir: &Path) -> Vec<(String, Reduction)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mprof.out"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let r = reduced(&read_profile(&dir.join(&n)));
            (n, r)
        })
        .collect()
}

#[test]
fn children_started_without_fork_write_their_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "spawner", &[], CFLAGS);
    for how in ["vfork", "spawn", "system"] {
        let sub = dir.path().join(how);
        std::fs::create_dir(&sub).unwrap();
        let o = run(&sub, &exe, &[how], &[], true);
        assert_ok(&o);
        assert_eq!(stdout(&o), "status 0\n", "{how}");
        let profiles = profiles_in(&sub);
        let parent = &profiles
            .iter()
            .find(|(n, _)| n == "mprof.out")
            .expect("root file")
            .1;
        assert_eq!(kept(parent, &["main", "parent_side"]), (2, 128), "{how}");
        assert_eq!(total(parent, "child_work"), (0, 0), "{how}");
        // The child's file (and, for system, the shell's): each its own, named by pid.
        let with_child: Vec<&String> = profiles
            .iter()
            .filter(|(_, r)| kept(r, &["main", "child_work"]) == (7, 672))
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            with_child.len(),
            1,
            "{how}: {profiles:?}",
            profiles = profiles.iter().map(|p| &p.0).collect::<Vec<_>>()
        );
        let pid = with_child[0]
            .strip_prefix("mprof.out.")
            .expect("<path>.<pid>");
        assert!(pid.parse::<u32>().is_ok(), "{how}: {pid}");
    }
}

#[test]
fn a_wrapper_process_and_the_program_it_runs_write_separate_files() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], CFLAGS);
    let o = Command::new("timeout")
        .arg("60")
        .arg(&exe)
        .arg("1000")
        .current_dir(dir.path())
        .env_remove("MPROF_OUT")
        .env("LD_PRELOAD", lib().dir.join("libmprof.so"))
        .output()
        .expect("run timeout");
    assert_ok(&o);
    let red = printed(&o, "red");
    let profiles = profiles_in(dir.path());
    assert_eq!(profiles.len(), 2, "timeout's and the program's");
    let (wrapper, program) = (&profiles[0], &profiles[1]);
    assert_eq!(wrapper.0, "mprof.out", "the wrapper started first");
    assert_eq!(total(&wrapper.1, "make_widget"), (0, 0));
    assert_eq!(
        kept(&program.1, &["main", "make_red_widget", "make_widget"]),
        (red, red * 204)
    );
}

#[test]
fn with_children_ignored_the_program_sees_no_trace_of_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "spawner", &[], CFLAGS);
    let env = [("MPROF_CHILDREN", "ignore"), ("MPROF_DEPTH", "64")];
    let o = run(dir.path(), &exe, &["spawn"], &env, true);
    assert_ok(&o);
    let profiles = profiles_in(dir.path());
    assert_eq!(
        profiles.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
        ["mprof.out"]
    );
    assert_eq!(kept(&profiles[0].1, &["main", "parent_side"]), (2, 128));
    // A shell started the same way shows the environment its programs see
    // ("; true" makes it fork for env rather than exec it).
    let env_seen = Command::new("sh")
        .args(["-c", "env; true"])
        .env(
            "LD_PRELOAD",
            format!("{}:", lib().dir.join("libmprof.so").display()),
        )
        .env("MPROF_CHILDREN", "ignore")
        .env("MPROF_OUT", dir.path().join("sh.out"))
        .output()
        .expect("run sh");
    assert_ok(&env_seen);
    let text = stdout(&env_seen);
    // Variable names only: cargo's own variables (the package description) mention them.
    let names: Vec<&str> = text.lines().filter_map(|l| l.split('=').next()).collect();
    assert!(!names.iter().any(|n| n.starts_with("MPROF_")), "{text}");
    assert!(!names.contains(&"LD_PRELOAD"), "{text}");
    assert!(
        dir.path().join("sh.out").exists(),
        "the shell itself is profiled"
    );
}

/// 1-based line of the first line of `source` that starts with `prefix`.
fn line_of(source: &str, prefix: &str) -> u32 {
    source
        .lines()
        .position(|l| l.starts_with(prefix))
        .map(|i| i as u32 + 1)
        .unwrap_or_else(|| panic!("{prefix} not in the source"))
}

#[test]
fn functions_carry_their_file_and_line_and_libc_is_named_from_its_debug_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["100"], &[], true);
    assert_ok(&o);
    let p = read_profile(&dir.path().join("mprof.out"));
    let source = std::fs::read_to_string(workspace().join("ffi-c/examples/widgets.c")).unwrap();
    for (name, definition) in [
        ("make_widget", "widget *make_widget(void)"),
        ("make_red_widget", "widget *make_red_widget(void)"),
        ("main", "int main("),
    ] {
        let f = p
            .functions
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        // The whole path gcc was given (the exports show it; nothing is cut).
        let path = workspace().join("ffi-c/examples/widgets.c");
        assert_eq!(f.file.as_deref(), path.to_str(), "{name}");
        // The entry's line: the definition's, or its opening brace's.
        let line = f.line.unwrap_or_else(|| panic!("{name} has no line"));
        let def = line_of(&source, definition);
        assert!(
            (def..=def + 1).contains(&line),
            "{name}: line {line}, defined at {def}"
        );
    }
    // glibc's internal functions are not in its dynamic symbol table: only a
    // separate debug file (Debian's libc6-dbg) names them, with file and line.
    let has_libc_debug = Command::new("sh")
        .args(["-c", "id=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 | awk '/Build ID/{print $3}'); test -f /usr/lib/debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_libc_debug {
        eprintln!("libc6-dbg not installed: the debug-file half is skipped");
        return;
    }
    let internal = p
        .functions
        .iter()
        .find(|f| f.name == "__vfprintf_internal")
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                p.functions.iter().map(|f| &f.name).collect::<Vec<_>>()
            )
        });
    assert!(
        internal.file.as_deref().is_some_and(|f| f.ends_with(".c")),
        "{internal:?}"
    );
    assert!(internal.line.is_some(), "{internal:?}");
    assert!(
        !p.functions.iter().any(|f| f.name.starts_with("libc.so.6+")),
        "every libc frame is named"
    );
}

/// `mprof run` on `sh -c "<widgets> 300; exit 3"` in `dir`, following children or not.
fn launch_wrapped_widgets(dir: &Path, follow: bool) -> (mprof_launch::Outcome, String, u64) {
    let exe = compile(dir, "widgets", &[], CFLAGS);
    let script = format!(
        "'{}' 300 > '{}/widgets.txt'; exit 3",
        exe.display(),
        dir.display()
    );
    let options = mprof_launch::Options {
        library: Some(lib().dir.join("libmprof.so")),
        out: Some(dir.join("run.out").to_string_lossy().into_owned()),
        follow_children: follow,
        settings: vec![("MPROF_DEPTH".into(), "200".into())],
    };
    let mut messages = Vec::new();
    let outcome = mprof_launch::run(
        &options,
        std::ffi::OsStr::new("sh"),
        &["-c".into(), script.into()],
        &mut messages,
    )
    .expect("mprof run");
    let text = std::fs::read_to_string(dir.join("widgets.txt")).unwrap();
    let red = text
        .split_whitespace()
        .skip_while(|w| *w != "red")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("red count");
    (outcome, String::from_utf8(messages).unwrap(), red)
}

#[test]
fn mprof_run_profiles_the_wrapper_shell_alone_unless_children_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (outcome, messages, _) = launch_wrapped_widgets(dir.path(), false);
    assert_eq!(outcome.status.code(), Some(3), "the program's own status");
    assert_eq!(outcome.profiles.len(), 1, "{:?}", outcome.profiles);
    let shell = reduced(&read_profile(&outcome.profiles[0]));
    assert_eq!(
        total(&shell, "make_widget"),
        (0, 0),
        "widgets ran unprofiled"
    );
    let name = outcome.profiles[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("run.") && name.ends_with(".out"), "{name}");
    let shown = outcome.profiles[0].display().to_string();
    assert!(
        messages.contains(&format!("profile written to {shown}")),
        "{messages}"
    );
    assert!(
        messages.contains(&format!("mprof report {shown}")),
        "{messages}"
    );

    let dir = tempfile::tempdir().unwrap();
    let (outcome, messages, red) = launch_wrapped_widgets(dir.path(), true);
    assert_eq!(outcome.status.code(), Some(3));
    assert_eq!(outcome.profiles.len(), 2, "{:?}", outcome.profiles);
    let shell = reduced(&read_profile(&outcome.profiles[0]));
    assert_eq!(total(&shell, "make_widget"), (0, 0));
    let program = reduced(&read_profile(&outcome.profiles[1]));
    assert_eq!(
        kept(&program, &["main", "make_red_widget", "make_widget"]),
        (red, red * 204)
    );
    assert!(
        messages.contains("1 more from the processes it started"),
        "{messages}"
    );
}

fn metadata<'a>(p: &'a Profile, key: &str) -> &'a str {
    p.metadata
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {:?}", p.metadata))
}

#[test]
fn peak_temporary_allocations_and_rate_are_known_by_construction() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "peak", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_ok(&o);
    let p = read_profile(&dir.path().join("mprof.out"));
    // Sampled every 10 ms over more than 250 ms.
    assert!(p.samples.len() >= 10, "{} samples", p.samples.len());
    let peak = p.samples.iter().map(|s| s.live_bytes).max().unwrap();
    assert_eq!(
        peak, 10_000_128,
        "the 100 big blocks and the markers, held 150 ms"
    );
    let last = p.samples.last().unwrap();
    assert_eq!(last.live_bytes, 128, "only the markers are left at exit");
    let allocs = 1000 + 500 + 2 + 100;
    assert_eq!(last.allocated_bytes, 1000 * 50 + 502 * 64 + 100 * 100_000);
    let report = render_report(&p, &ReportOptions::default());
    assert!(
        report.contains(&format!("peak {peak} live bytes at")),
        "{report}"
    );
    assert!(
        metadata(&p, "temporary allocations").starts_with("1000 ("),
        "{:?}",
        metadata(&p, "temporary allocations")
    );
    assert!(metadata(&p, "temporary allocations").contains(", 50000 bytes"));
    // Per calling context: the blocks live at the peak are exactly the big blocks of
    // hold_big and the two markers; the temporary allocations all churn's.
    let r = reduced(&p);
    assert_eq!(figure(&r, "memory at peak", &["main", "hold_big"]), (100, 10_000_000));
    assert_eq!(figure(&r, "memory at peak", &["main", "hold_big", "mark"]), (1, 64));
    assert_eq!(figure(&r, "memory at peak", &["main"]), (1, 64));
    assert_eq!(figure_total(&r, "memory at peak"), (102, peak), "nothing else was live at the peak");
    assert_eq!(figure(&r, "temporary allocations", &["main", "churn"]), (1000, 50_000));
    assert_eq!(figure_total(&r, "temporary allocations"), (1000, 50_000));
    assert!(report.contains("Memory at peak table"), "{report}");
    assert!(report.contains("Temporary allocations table"), "{report}");
    let rss: u64 = metadata(&p, "peak RSS")
        .strip_suffix(" bytes")
        .and_then(|v| v.parse().ok())
        .expect("peak RSS in bytes");
    assert!(rss >= 10_000_000, "the big blocks were resident: {rss}");
    let rate = metadata(&p, "allocations per second");
    let (per_second, seconds) = rate.split_once(" over ").expect(rate);
    let per_second: f64 = per_second.parse().unwrap();
    let seconds: f64 = seconds.strip_suffix(" s").unwrap().parse().unwrap();
    assert!(seconds >= 0.25, "{rate}");
    let counted = per_second * seconds;
    assert!(
        (counted - allocs as f64).abs() <= allocs as f64 * 0.01,
        "{rate}"
    );
}

#[test]
fn a_peak_of_a_millisecond_is_exact_with_its_paths() {
    // spike.c holds 100 MiB for 1 ms, a tenth of the sampling period: the peak comes
    // from the live bytes kept exactly, its contexts from the snapshot taken at the
    // first free after it.
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "spike", &[], CFLAGS);
    for unwind in ["auto", "fp"] {
        let o = run(dir.path(), &exe, &[], &[("MPROF_UNWIND", unwind)], true);
        assert_ok(&o);
        let p = read_profile(&dir.path().join("mprof.out"));
        let peak = p.samples.iter().map(|s| s.live_bytes).max().unwrap();
        assert_eq!(peak, 64 + 100 * (1 << 20), "{unwind}");
        let report = render_report(&p, &ReportOptions::default());
        assert!(report.contains(&format!("peak {peak} live bytes at")), "{report}");
        assert!(p.metadata.iter().all(|(k, _)| k != "memory at peak"), "the snapshot is of the peak itself: {:?}", p.metadata);
        let r = reduced(&p);
        assert_eq!(figure(&r, "memory at peak", &["main", "spike"]), (100, 100 << 20), "{unwind}");
        assert_eq!(figure(&r, "memory at peak", &["main"]), (1, 64));
        assert_eq!(figure_total(&r, "memory at peak"), (101, peak));
    }
}

/// (blocks, bytes) of a leak class: from our metadata ("N blocks, B bytes").
fn leak_class(p: &Profile, key: &str) -> (u64, u64) {
    let v = metadata(p, key);
    let mut words = v.split_whitespace();
    let blocks = words.next().and_then(|w| w.parse().ok());
    let bytes = words.nth(1).and_then(|w| w.parse().ok());
    (blocks.expect(v), bytes.expect(v))
}

/// (blocks, bytes) of a leak class from valgrind's LEAK SUMMARY ("X bytes in N blocks").
fn valgrind_class(summary: &str, key: &str) -> (u64, u64) {
    let line = summary
        .lines()
        .find(|l| l.contains(&format!("{key}:")))
        .unwrap_or_else(|| panic!("{key} in {summary}"));
    let nums: Vec<u64> = line
        .split(':')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect();
    (nums[1], nums[0])
}

#[test]
fn leaks_are_classified_as_memcheck_classifies_them() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "leaks", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_ok(&o);
    let p = read_profile(&dir.path().join("mprof.out"));
    let ours = [
        leak_class(&p, "definitely lost"),
        leak_class(&p, "indirectly lost"),
        leak_class(&p, "still reachable"),
    ];
    assert_eq!(ours, [(3, 144), (3, 144), (3, 196)], "{:?}", p.metadata);
    assert_eq!(leak_class(&p, "suppressed"), (0, 0));
    let r = reduced(&p);
    assert_eq!(
        kept(&r, &["main", "lose", "make_pair"]),
        (6, 288),
        "the leak table still shows every block"
    );
    // Per calling context: each class where the program made it.
    let lose = ["main", "lose", "make_pair"];
    let per_context = [
        ("definitely lost", &lose[..], (3, 144)),
        ("indirectly lost", &lose[..], (3, 144)),
        ("still reachable", &["main", "keep"][..], (3, 196)),
    ];
    for (class, path, want) in per_context {
        assert_eq!(figure(&r, class, path), want, "{class} under {path:?}");
        assert_eq!(figure_total(&r, class), want, "{class}: nowhere else");
    }
    // The program holds everything at its end, so that is its peak.
    assert_eq!(figure(&r, "memory at peak", &["main", "keep"]), (3, 196));
    assert_eq!(figure(&r, "memory at peak", &lose), (6, 288));
    let report = render_report(&p, &ReportOptions { tables: mprof_display::Tables::LEAK, ..ReportOptions::default() });
    let tables = &report[report.find("Memory leak table").expect("leak table")..];
    insta::assert_snapshot!("leaks_tables", tables);

    // A suppression moves the lost blocks under `lose` apart.
    let o = run(
        dir.path(),
        &exe,
        &[],
        &[("MPROF_SUPPRESS", "lo*e"), ("MPROF_OUT", "s.out")],
        true,
    );
    assert_ok(&o);
    let p = read_profile(&dir.path().join("s.out"));
    assert_eq!(leak_class(&p, "definitely lost"), (0, 0));
    assert_eq!(leak_class(&p, "suppressed"), (6, 288));
    assert_eq!(leak_class(&p, "still reachable"), (3, 196));

    // memcheck, on the same binary without the library, is the reference.
    let Some(summary) = memcheck(dir.path(), &exe) else { return };
    let theirs = [
        valgrind_class(&summary, "definitely lost"),
        valgrind_class(&summary, "indirectly lost"),
        valgrind_class(&summary, "still reachable"),
    ];
    assert_eq!(ours, theirs, "{summary}");
    // And per calling context: memcheck's loss records, summed by class and stack.
    let records = valgrind_records(&summary);
    for (class, path, want) in per_context {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        assert_eq!(records.get(&(class.to_string(), path)).copied(), Some(want), "{class}: {records:?}");
    }
    assert_eq!(records.len(), per_context.len(), "{records:?}");
    // Every row's allocation site is the line memcheck's stack names for it: the
    // rows of each class, split by site, are memcheck's loss records.
    let sites = valgrind_sites(&summary);
    for (class, path, _) in per_context {
        let names: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        let theirs: std::collections::BTreeMap<String, (u64, u64)> =
            sites.iter().filter(|(k, _)| k.0 == class && k.1 == names).map(|(k, v)| (k.2.clone(), *v)).collect();
        let ours: std::collections::BTreeMap<String, (u64, u64)> = figure_paths(&r, class)
            .iter()
            .filter(|p| p.steps.iter().map(|s| s.name.as_str()).eq(path.iter().copied()))
            .map(|p| (p.site().expect("a site"), (p.kept_allocs, p.kept_bytes)))
            .collect();
        assert!(!ours.is_empty());
        assert_eq!(ours, theirs, "{class} {names:?}");
    }
    let report = render_report(&p, &ReportOptions::default());
    assert!(report.contains("> keep (leaks.c:"), "{report}");
}

/// memcheck's loss records by class, stack (functions outermost first) and allocation
/// site (`file.c:123`, the first caller of the allocator): (blocks, bytes), a definitely
/// lost record's own bytes being its "direct" ones.
fn valgrind_sites(text: &str) -> std::collections::HashMap<(String, Vec<String>, String), (u64, u64)> {
    let mut out = std::collections::HashMap::new();
    let lines: Vec<&str> = text.lines().map(|l| l.split_once("== ").map_or(l, |(_, r)| r).trim()).collect();
    for (i, line) in lines.iter().enumerate() {
        let Some((head, class)) = line.split_once(" blocks are ") else { continue };
        let Some(class) = class.split(" in loss record").next() else { continue };
        let num = |w: &str| w.replace(',', "").parse::<u64>().ok();
        let words: Vec<&str> = head.split_whitespace().collect();
        let blocks = words.last().and_then(|w| num(w)).expect(line);
        let bytes = match head.split_once(" direct,") {
            Some((before, _)) => before.rsplit(['(', ' ']).next().and_then(num),
            None => words.first().and_then(|w| num(w)),
        }
        .expect(line);
        let frames: Vec<(String, String)> = lines[i + 1..]
            .iter()
            .take_while(|l| l.starts_with("at ") || l.starts_with("by "))
            .skip(1)
            .filter_map(|l| {
                let (_, f) = l.split_once(": ")?;
                let (name, at) = f.split_once(" (")?;
                Some((name.to_string(), at.trim_end_matches(')').to_string()))
            })
            .collect();
        let Some(site) = frames.first().map(|f| f.1.clone()) else { continue };
        let path: Vec<String> = frames.iter().rev().map(|f| f.0.clone()).collect();
        let slot = out.entry((class.to_string(), path, site)).or_insert((0, 0));
        slot.0 += blocks;
        slot.1 += bytes;
    }
    out
}

/// memcheck's LEAK SUMMARY for `exe` (run in `dir` without the library), or None
/// when valgrind is not installed (outside CI: with `CI` set that fails the test).
fn memcheck(dir: &Path, exe: &Path) -> Option<String> {
    match Command::new("valgrind").args(["--leak-check=full", "--show-leak-kinds=all"]).arg(exe).current_dir(dir).output() {
        Ok(vg) => Some(String::from_utf8_lossy(&vg.stderr).into_owned()),
        Err(_) => {
            assert!(std::env::var_os("CI").is_none(), "valgrind is not installed (CI installs it)");
            eprintln!("valgrind not installed: the comparison is skipped");
            None
        }
    }
}

#[test]
fn blocks_never_written_are_definitely_lost_as_memcheck_says() {
    // Three malloc(1000) blocks the program never writes: glibc's free-chunk links,
    // left in reused memory, must not read as pointers from one to another.
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "uninit", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_ok(&o);
    let p = read_profile(&dir.path().join("mprof.out"));
    let ours = [
        leak_class(&p, "definitely lost"),
        leak_class(&p, "indirectly lost"),
        leak_class(&p, "still reachable"),
    ];
    assert_eq!(ours, [(3, 3000), (0, 0), (0, 0)], "{:?}", p.metadata);
    let Some(summary) = memcheck(dir.path(), &exe) else { return };
    let theirs = [
        valgrind_class(&summary, "definitely lost"),
        valgrind_class(&summary, "indirectly lost"),
        valgrind_class(&summary, "still reachable"),
    ];
    assert_eq!(ours, theirs, "{summary}");
}

#[test]
fn a_binary_that_changed_or_vanished_since_the_run_is_named_and_shown_by_address() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["100"], &[], true);
    assert_ok(&o);
    let raw = std::fs::read(dir.path().join("mprof.out")).unwrap();
    let symbolize = || {
        let p = Profile::read(&raw).unwrap();
        mprof_symbolize::symbolize(p, &mprof_symbolize::Options::default())
    };
    let named = symbolize();
    assert!(named.functions.iter().any(|f| f.name == "make_red_widget"));
    assert!(named.metadata.iter().all(|(k, _)| k != "symbols"));
    // Rebuilt from another source: another build id, so never read for this profile.
    let other = dir.path().join("other.c");
    std::fs::write(&other, "int main(void) { return 0; }\n").unwrap();
    assert!(Command::new("gcc").args(["-g", "-o"]).arg(&exe).arg(&other).status().unwrap().success());
    for why in ["changed since the run (build id differs)", "vanished since the run"] {
        let p = symbolize();
        let symbols = p.metadata.iter().find(|(k, _)| k == "symbols").map(|(_, v)| v.as_str()).unwrap_or("");
        assert!(symbols.contains(why) && symbols.contains(&exe.display().to_string()), "{symbols}");
        assert!(p.functions.iter().all(|f| !f.name.starts_with("make_")), "{:?}", p.functions);
        let r = reduced(&p);
        let leak = r.kept_paths.iter().find(|k| k.kept_bytes == printed(&o, "red") * 204).expect("the red widgets' row");
        assert!(leak.complete && leak.steps.iter().all(|s| s.name.starts_with("widgets+0x")), "{:?}", leak.steps);
        std::fs::remove_file(&exe).ok();
    }
}

#[test]
fn the_leak_gate_sets_the_exit_status_after_suppressions() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "uninit", &[], CFLAGS);
    let gate = [("MPROF_LEAK_EXITCODE", "23")];
    let o = run(dir.path(), &exe, &[], &gate, true);
    assert_eq!(o.status.code(), Some(23), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("3000 bytes definitely lost"));
    assert_eq!(leak_class(&read_profile(&dir.path().join("mprof.out")), "definitely lost"), (3, 3000), "the file is written first");
    // Suppressed, the same leaks pass the gate (and the report counts them apart).
    let o = run(dir.path(), &exe, &[], &[gate[0], ("MPROF_SUPPRESS", "lose_*"), ("MPROF_OUT", "s.out")], true);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(leak_class(&read_profile(&dir.path().join("s.out")), "suppressed"), (3, 3000));
    // A program whose blocks are all freed passes.
    let clean = compile(dir.path(), "spike", &[], CFLAGS);
    let o = run(dir.path(), &clean, &[], &gate, true);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // Without the variable the status is the program's own.
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_eq!(o.status.code(), Some(0));
}

/// memcheck's loss records ("B bytes in N blocks are <class> in loss record", then the
/// stack: `at` the allocator, `by` its callers), as (class, functions outermost first)
/// -> (blocks, bytes); a definitely lost record's own bytes are its "direct" ones.
fn valgrind_records(text: &str) -> std::collections::HashMap<(String, Vec<String>), (u64, u64)> {
    let mut out = std::collections::HashMap::new();
    let lines: Vec<&str> = text.lines().map(|l| l.split_once("== ").map_or(l, |(_, r)| r).trim()).collect();
    for (i, line) in lines.iter().enumerate() {
        let Some((head, class)) = line.split_once(" blocks are ") else { continue };
        let Some(class) = class.split(" in loss record").next() else { continue };
        let num = |w: &str| w.replace(',', "").parse::<u64>().ok();
        let words: Vec<&str> = head.split_whitespace().collect();
        let blocks = words.last().and_then(|w| num(w)).expect(line);
        let bytes = match head.split_once(" direct,") {
            Some((before, _)) => before.rsplit(['(', ' ']).next().and_then(num),
            None => words.first().and_then(|w| num(w)),
        }
        .expect(line);
        let mut path: Vec<String> = lines[i + 1..]
            .iter()
            .take_while(|l| l.starts_with("at ") || l.starts_with("by "))
            .skip(1)
            .filter_map(|l| l.split_once(": ").and_then(|(_, f)| f.split(" (").next()).map(String::from))
            .collect();
        path.reverse();
        let slot = out.entry((class.to_string(), path)).or_insert((0, 0));
        slot.0 += blocks;
        slot.1 += bytes;
    }
    out
}

#[test]
fn a_program_closing_every_descriptor_keeps_its_files_and_its_dump_signal() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "closefds", &[], CFLAGS);
    let env = [("MPROF_DUMP_SIGNAL", "USR1"), ("MPROF_OUT", "c.out")];
    let o = run(dir.path(), &exe, &[], &env, true);
    assert_ok(&o);
    assert_eq!(std::fs::read(dir.path().join("data.txt")).unwrap(), b"");
    assert_eq!(std::fs::read(dir.path().join("data2.txt")).unwrap(), b"");
    assert!(read_profile(&dir.path().join("c.out")).nodes.len() > 1);
}

#[test]
fn the_c_librarys_own_blocks_of_ended_threads_are_not_leaks() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "joined", &[], CFLAGS);
    let o = run(dir.path(), &exe, &[], &[], true);
    assert_ok(&o);
    let p = read_profile(&dir.path().join("mprof.out"));
    assert_eq!(
        leak_class(&p, "definitely lost"),
        (0, 0),
        "{:?}",
        p.metadata
    );
    assert_eq!(leak_class(&p, "indirectly lost"), (0, 0));
    // With the defaults replaced by a pattern matching nothing, the cached
    // thread storage shows up: the default list is what hides it.
    let env = [
        ("MPROF_SUPPRESS", "-no_such_function"),
        ("MPROF_OUT", "bare.out"),
    ];
    let o = run(dir.path(), &exe, &[], &env, true);
    assert_ok(&o);
    let p = read_profile(&dir.path().join("bare.out"));
    assert!(leak_class(&p, "definitely lost").0 >= 1, "{:?}", p.metadata);
}

#[test]
fn the_bin_table_names_the_program_types_of_each_size() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["100"], &[], true);
    assert_ok(&o);
    let p = read_profile(&dir.path().join("mprof.out"));
    let bin = p
        .bins
        .iter()
        .find(|b| b.key == mprof_engine::BinKey::Size(204))
        .expect("204-byte bin");
    assert_eq!(
        bin.labels,
        vec!["widget".to_string()],
        "the paper's Figure 3 names the widget type"
    );
}

#[test]
fn the_shared_library_exports_exactly_the_allocator_and_the_api() {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib().dir.join("libmprof.so"))
        .output()
        .expect("run nm");
    assert_ok(&out);
    let mut names: Vec<String> = stdout(&out)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(String::from)
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "_Exit",
            "_exit",
            "aligned_alloc",
            "calloc",
            "free",
            "malloc",
            "malloc_usable_size",
            "memalign",
            "mprof_dump",
            "mprof_reset",
            "mprof_start",
            "mprof_stop",
            "posix_memalign",
            "pvalloc",
            "realloc",
            "reallocarray",
            "valloc",
        ]
    );
}

#[test]
fn direct_self_recursion_folds_into_one_node() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "selfrec", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["50"], &[], true);
    assert_ok(&o);
    let p = read_profile(&dir.path().join("mprof.out"));
    let r = reduced(&p);
    assert_eq!(kept(&r, &["main", "down"]), (50, 400));
    let down = p
        .functions
        .iter()
        .position(|f| f.name == "down")
        .expect("down in the profile");
    let nodes: Vec<_> = p
        .nodes
        .iter()
        .filter(|n| n.func.0 as usize == down)
        .collect();
    assert_eq!(nodes.len(), 1, "one node for all 21 levels");
    assert_eq!(nodes[0].recursion, 20);
}

#[test]
fn a_device_as_output_is_written_in_place_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "widgets", &[], CFLAGS);
    let o = run(dir.path(), &exe, &["100"], &[("MPROF_OUT", "/dev/null")], true);
    assert_ok(&o);
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device(), "/dev/null is still the device");
    let temporary = |name: &str| name.contains("null") && name.contains(".tmp");
    assert!(!std::fs::read_dir("/dev").unwrap().flatten().any(|e| temporary(&e.file_name().to_string_lossy())));
}
