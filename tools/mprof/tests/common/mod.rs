//! Shared fixtures for the profiler's integration tests: profiles built by feeding the
//! monitor the events of the paper's examples.
#![allow(dead_code)]

use std::process::Command;

use mprof_engine::*;

/// Runs the `mprof` binary: (exit status, standard output, standard error).
pub fn mprof(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mprof")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `mprof` with each argument list, which must fail with nothing on standard output
/// and a one-line message on standard error; returns the messages with `dir` shown as
/// `<dir>`, for a snapshot.
pub fn one_line_errors(dir: &std::path::Path, runs: &[Vec<String>]) -> String {
    let mut errors = String::new();
    for args in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = mprof(&args);
        assert_ne!(code, 0, "{args:?}");
        assert_eq!(out, "");
        assert_eq!(err.lines().count(), 1, "one-line message: {err}");
        errors.push_str(&err.replace(&dir.to_string_lossy().into_owned(), "<dir>"));
    }
    errors
}

/// The paper's producer/consumer example (Figure 1): 10,000 widgets of 204 bytes, 5,019
/// made red (never freed) and 4,981 made blue (freed), in the paper's interleaving-free
/// order (the tables do not depend on the order).
pub fn widgets() -> Profile {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    m.set_metadata("program", "widgets");
    m.label_size(204, "widget");
    let main = m.function(FunctionInfo::named("main"));
    let red = m.function(FunctionInfo::named("make_red_widget"));
    let blue = m.function(FunctionInfo::named("make_blue_widget"));
    let make = m.function(FunctionInfo::named("make_widget"));
    let top = m.child(NodeId::ROOT, main, 0);
    let red_node = m.child(top, red, 0);
    let red_make = m.child(red_node, make, 0);
    let blue_node = m.child(top, blue, 0);
    let blue_make = m.child(blue_node, make, 0);
    let cat = CategoryScheme::c_category_of_size(204);
    // A deterministic "random_flip" sequence giving 5,019 red and 4,981 blue.
    let mut red_left = 5019;
    let mut blue_left = 4981;
    let mut blue_nodes = Vec::new();
    for i in 0..10_000u32 {
        let choose_red = red_left > 0 && (blue_left == 0 || (i.wrapping_mul(2_654_435_761) >> 16) & 1 == 0);
        if choose_red {
            red_left -= 1;
            m.record_alloc(red_make, cat, 204, Bin::Size(204));
        } else {
            blue_left -= 1;
            m.record_alloc(blue_make, cat, 204, Bin::Size(204));
            blue_nodes.push(blue_make);
        }
    }
    for node in blue_nodes {
        m.record_free(node, cat, 204, Bin::Size(204));
    }
    m.to_profile()
}

/// The paper's Figure 7: main calls F, F calls G, G calls F, F calls G, G allocates 10
/// bytes. Recorded without folding (F and G alternate, so there is nothing to fold).
pub fn figure7() -> Profile {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    let main = m.function(FunctionInfo::named("main"));
    let f = m.function(FunctionInfo::named("F"));
    let g = m.function(FunctionInfo::named("G"));
    let node = m.path(&[main, f, g, f, g]);
    m.record_alloc(node, 0, 10, Bin::Size(10));
    m.to_profile()
}

/// A three-function cycle A -> B -> C -> A under main, allocating at several depths,
/// plus a function outside the cycle.
pub fn three_cycle() -> Profile {
    let mut m = Monitor::new(Language::Lisp, CategoryScheme::lisp(), MonitorOptions::default());
    let cons = m.type_name("cons");
    let vector = m.type_name("simple-vector");
    let [main, a, b, c, leaf] =
        ["main", "a", "b", "c", "leaf"].map(|n| m.function(FunctionInfo::named(n)));
    let n1 = m.path(&[main, a, b, c]);
    m.record_alloc(n1, 0, 16, Bin::Type(cons));
    let n2 = m.path(&[main, a, b, c, a, b]);
    m.record_alloc(n2, 0, 16, Bin::Type(cons));
    m.record_alloc(n2, 0, 16, Bin::Type(cons));
    let n3 = m.path(&[main, a, b, c, a, b, c, leaf]);
    m.record_alloc(n3, 2, 64, Bin::Type(vector));
    m.record_free(n3, 2, 64, Bin::Type(vector));
    let n4 = m.path(&[main, leaf]);
    m.record_alloc(n4, 2, 100, Bin::Type(vector));
    m.to_profile()
}

/// A Lisp profile with something in every part the HTML report draws: five functions
/// allocating different amounts of four types (so each table has a known largest and
/// smallest row), memory samples with one peak, a timed tree and metadata.
/// `run` allocates the most (3,000 conses: 48,000 bytes), `tiny` the least (one
/// 40-byte closure); the peak is 30,000 live bytes at 2 ms.
pub fn lisp_rich() -> Profile {
    use mprof_engine::exec::{ClockInfo, TimeNode, TimeProfile};
    let mut m = Monitor::new(Language::Lisp, CategoryScheme::lisp(), MonitorOptions::default());
    m.set_metadata("program", "mprof-lisp --profile rich.lisp");
    let [cons, float, vector, closure] =
        ["cons", "double-float", "simple-vector", "closure"].map(|t| m.type_name(t));
    let [main, run, build, table, tiny] =
        ["main", "run", "build-tree", "make-table", "tiny"].map(|n| m.function(FunctionInfo::named(n)));
    let run_node = m.path(&[main, run]);
    for _ in 0..3000 {
        m.record_alloc(run_node, 0, 16, Bin::Type(cons));
    }
    let build_node = m.path(&[main, run, build]);
    for _ in 0..500 {
        m.record_alloc(build_node, 1, 24, Bin::Type(float));
    }
    for _ in 0..200 {
        m.record_free(build_node, 1, 24, Bin::Type(float));
    }
    let table_node = m.path(&[main, table]);
    for _ in 0..10 {
        m.record_alloc(table_node, 2, 800, Bin::Type(vector));
    }
    let tiny_node = m.path(&[main, tiny]);
    m.record_alloc(tiny_node, 3, 40, Bin::Type(closure));
    for (i, live) in [(1u64, 10_000u64), (2, 30_000), (3, 20_000), (4, 25_000)] {
        m.record_sample(Sample { time_ns: i * 1_000_000, live_bytes: live, allocated_bytes: live * 2, ..Sample::default() });
    }
    let mut p = m.to_profile();
    let clock = ClockInfo { source: "test".into(), resolution_ps: 1000, read_cost_ps: 0, compensation_ps: 0, elapsed_ns: 5_000_000 };
    let node = |parent: u32, func: FuncId, self_ns: u64| TimeNode {
        parent: Some(NodeId(parent)),
        func,
        calls: 1,
        recursion: 0,
        self_ns,
        instructions: self_ns / 10,
    };
    let mut time = TimeProfile { clock, ..TimeProfile::default() };
    time.nodes = vec![node(0, main, 100_000), node(1, run, 3_000_000), node(2, build, 900_000), node(1, table, 50_000)];
    time.nodes.insert(0, TimeNode { parent: None, func: FuncId::NONE, calls: 0, recursion: 0, self_ns: 0, instructions: 0 });
    p.exec.time = Some(time);
    assert_eq!(p.validate(), Ok(()));
    p
}

/// The libmprof.so cargo built for the tests (mprof-ffi is a dev-dependency).
pub fn libmprof() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let profile_dir = deps.parent().unwrap().to_path_buf();
    // The copy in deps/ is the one this test run built; one in the profile folder
    // may be left from an earlier `cargo build -p mprof-ffi`.
    [deps, profile_dir]
        .into_iter()
        .map(|d| d.join("libmprof.so"))
        .find(|p| p.is_file())
        .expect("cargo builds libmprof.so for the tests")
}

/// Compiles `tests/c/<name>.c` with `-g` into `dir` (from a copy there, so the source
/// path in the debug information is `dir/<name>.c`) and runs it under libmprof;
/// returns the profile's path.
pub fn c_profile(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c").join(format!("{name}.c"));
    let copy = dir.join(format!("{name}.c"));
    std::fs::copy(&source, &copy).unwrap();
    let exe = dir.join(name);
    let out = Command::new("gcc")
        .args(["-O0", "-g", "-fno-omit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(&copy)
        .output()
        .expect("run gcc");
    assert!(out.status.success(), "gcc {name}.c: {}", String::from_utf8_lossy(&out.stderr));
    let profile = dir.join(format!("{name}.mprof"));
    let out = Command::new(&exe)
        .env("LD_PRELOAD", libmprof())
        .env("MPROF_OUT", &profile)
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(profile.is_file(), "{name} wrote no profile: {}", String::from_utf8_lossy(&out.stderr));
    profile
}

/// How deep [`deep_profile`]'s tree is.
pub const DEEP_PROFILE_DEPTH: usize = 100_000;

/// main -> (a -> b ->)* 100,000 deep: every 1,000th frame allocates 16 bytes and the
/// deepest one 100 bytes; the same tree is timed, every 1,000th frame with 1 ns of self
/// time (every frame is called once and runs 3 instructions).
pub fn deep_profile() -> Profile {
    let mut m = Monitor::new(
        Language::Lisp,
        CategoryScheme::lisp(),
        MonitorOptions { call_sites: false, max_depth: DEEP_PROFILE_DEPTH as u32 + 10, fold_self_recursion: false },
    );
    let cons = m.type_name("cons");
    let funcs = [m.function(FunctionInfo::named("a")), m.function(FunctionInfo::named("b"))];
    let main = m.function(FunctionInfo::named("main"));
    let mut node = m.child(NodeId::ROOT, main, 0);
    let mut path = vec![node];
    for depth in 1..DEEP_PROFILE_DEPTH {
        node = m.child(node, funcs[depth % 2], 0);
        path.push(node);
        if depth % 1000 == 0 {
            m.record_alloc(node, 0, 16, Bin::Type(cons));
        }
    }
    m.record_alloc(node, 2, 100, Bin::Type(cons));
    let mut p = m.to_profile();
    let mut t = mprof_engine::exec::TimeProfile {
        clock: mprof_engine::exec::ClockInfo { source: "test".into(), resolution_ps: 1, read_cost_ps: 1, compensation_ps: 0, elapsed_ns: DEEP_PROFILE_DEPTH as u64 },
        ..mprof_engine::exec::TimeProfile::default()
    };
    for depth in 0..DEEP_PROFILE_DEPTH {
        let func = if depth == 0 { main } else { funcs[depth % 2] };
        t.nodes.push(mprof_engine::exec::TimeNode { parent: Some(NodeId(depth as u32)), func, calls: 1, recursion: 0, self_ns: (depth % 1000 == 0) as u64, instructions: 3 });
    }
    p.exec.time = Some(t);
    assert_eq!(p.validate(), Ok(()));
    assert!(p.nodes.len() > DEEP_PROFILE_DEPTH);
    p
}
