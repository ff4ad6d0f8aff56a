//! A calling-context tree 100,000 deep (an unfolded recursion, as `--no-fold-recursion
//! --context-depth 100000` records) goes through every report, export and the HTML page of the `mprof`
//! binary in memory bounded by a small multiple of the file: no display materializes
//! one string per node of every path, and the time report no longer walks up from every
//! node (which made deep profiles quadratic).

use std::process::Command;

use mprof_engine::{Bin, CategoryScheme, FunctionInfo, Language, Monitor, MonitorOptions, NodeId};

mod common;

use common::{DEEP_PROFILE_DEPTH as DEPTH, deep_profile};

/// The largest resident set of any child this process has waited for, in bytes.
fn children_max_rss() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn every_report_and_export_of_a_100000_deep_tree_stays_within_a_memory_bound() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deep.mprof");
    let mut bytes = Vec::new();
    deep_profile().write(&mut bytes).unwrap();
    std::fs::write(&file, &bytes).unwrap();
    let file = file.to_string_lossy().into_owned();
    let out = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let runs: Vec<Vec<String>> = vec![
        vec!["report".into(), file.clone()],
        vec!["report".into(), file.clone(), "--merge-cycles".into()],
        vec!["flamegraph".into(), file.clone(), "-o".into(), out("m.svg")],
        vec!["flamegraph".into(), file.clone(), "--kind".into(), "time".into(), "-o".into(), out("t.svg")],
        vec!["export".into(), file.clone(), "--format".into(), "folded".into(), "-o".into(), out("m.folded")],
        vec!["export".into(), file.clone(), "--format".into(), "folded".into(), "--kind".into(), "time".into(), "-o".into(), out("t.folded")],
        vec!["export".into(), file.clone(), "--format".into(), "json".into(), "-o".into(), out("p.json")],
        vec!["export".into(), file.clone(), "--format".into(), "pprof".into(), "-o".into(), out("p.pb.gz")],
        vec!["html".into(), file.clone(), "-o".into(), out("p.html")],
    ];
    for args in &runs {
        let o = Command::new(env!("CARGO_BIN_EXE_mprof")).args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    // The memory folded stacks: 100 stacks that allocate, ending 1,000 frames apart.
    let folded = std::fs::read_to_string(out("m.folded")).unwrap();
    assert_eq!(folded.lines().count(), 100);
    let deepest = folded.lines().map(|l| l.split(';').count()).max().unwrap();
    assert_eq!(deepest, DEPTH, "the deepest stack is written whole");
    assert!(std::fs::metadata(out("t.svg")).unwrap().len() > 0);
    let timed = std::fs::read_to_string(out("t.folded")).unwrap();
    assert_eq!(timed.lines().count(), 100, "the 100 stacks with self time");
    // The page sends each of the 100,000 stacks once (parent link, name index, three
    // values), twice (memory and time): a few megabytes, not a path per stack.
    let page = std::fs::read_to_string(out("p.html")).unwrap();
    assert!(page.contains("\"up\":[0,1,1,1,1,1,"), "the tree as parent links");
    assert!(page.len() < 8 << 20, "the page is {} bytes", page.len());
    // The file is ~1 MB; every run stayed far below what one string per path needs
    // (5 GB here: 100,000 paths of 50,000 frames on average).
    let rss = children_max_rss();
    assert!(rss < 200 << 20, "a child used {} MB", rss >> 20);
}

/// The largest resident set of one child process, in bytes (its own rusage, whatever
/// other tests of this binary run meanwhile).
fn max_rss_of(cmd: &mut Command) -> (std::process::ExitStatus, u64) {
    use std::os::unix::process::ExitStatusExt;
    let child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let mut status = 0;
    // SAFETY: wait4 writes the status and the rusage it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    (std::process::ExitStatus::from_raw(status), usage.ru_maxrss as u64 * 1024)
}

#[test]
fn the_pprof_export_of_a_20000_deep_unfolded_profile_is_streamed() {
    // Every one of the 20,000 nested contexts allocates: each is a pprof sample with
    // its whole stack, 200 million location ids in all (1.7 GB as one message).
    const DEPTH: usize = 20_000;
    let mut m = Monitor::new(
        Language::C,
        CategoryScheme::c_sizes(),
        MonitorOptions { call_sites: false, max_depth: DEPTH as u32 + 10, fold_self_recursion: false },
    );
    let walk = m.function(FunctionInfo::named("walk"));
    let mut node = NodeId::ROOT;
    for _ in 0..DEPTH {
        node = m.child(node, walk, 0);
        m.record_alloc(node, 0, 16, Bin::Size(16));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("unfolded.mprof");
    let mut bytes = Vec::new();
    m.to_profile().write(&mut bytes).unwrap();
    std::fs::write(&file, &bytes).unwrap();
    let out = dir.path().join("p.pb.gz");
    let (status, rss) = max_rss_of(
        Command::new(env!("CARGO_BIN_EXE_mprof")).arg("export").arg(&file).args(["--format", "pprof", "-o"]).arg(&out),
    );
    assert!(status.success());
    assert!(rss < 200 << 20, "the export used {} MB", rss >> 20);
    // The samples are all there: the decompressed message holds every stack.
    let mut raw = 0u64;
    let mut gz = flate2::read::GzDecoder::new(std::fs::File::open(&out).unwrap());
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match std::io::Read::read(&mut gz, &mut buf).unwrap() {
            0 => break,
            n => raw += n as u64,
        }
    }
    let ids = (DEPTH * (DEPTH + 1) / 2) as u64;
    assert!(raw > ids, "{raw} bytes for {ids} location ids");
}
