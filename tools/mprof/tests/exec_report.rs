//! The execution tables (flat time profile, call graph, call counts, I/O summary), the
//! time view the exports read, and `mprof report/flamegraph/export` on time profiles.
//! Profiles are built by hand so every number is known by construction.

mod common;

use common::mprof;
use mprof_engine::exec::{ClockInfo, CountKind, CountPoint, IoRow, SourceFile, TimeNode, TimeProfile};
use mprof_display::exec_report::{render_exec, time_view, ExecReportOptions};
use mprof_export::formats::{self, FoldedValue};
use mprof_engine::reduce::ReduceOptions;
use mprof_engine::*;

/// One time node: (parent index, function index, calls, recursion, self ns, instructions).
type T = (u32, u32, u64, u64, u64, u64);

fn clock() -> ClockInfo {
    ClockInfo {
        source: "test clock".into(),
        resolution_ps: 12_345,
        read_cost_ps: 11_950,
        compensation_ps: 11_950,
        elapsed_ns: 10_500_000,
    }
}

/// A Lisp profile with no memory data, the named functions, and a time tree whose root
/// spent `root_ns` outside any function.
fn timed(names: &[&str], root_ns: u64, nodes: &[T]) -> Profile {
    let mut p = Profile::empty(Language::Lisp, CategoryScheme::lisp());
    p.functions = names.iter().map(|n| FunctionInfo::named(*n)).collect();
    let mut t = TimeProfile { clock: clock(), ..TimeProfile::default() };
    t.nodes[0].self_ns = root_ns;
    for &(parent, func, calls, recursion, self_ns, instructions) in nodes {
        t.nodes.push(TimeNode {
            parent: Some(NodeId(parent)),
            func: FuncId(func),
            calls,
            recursion,
            self_ns,
            instructions,
        });
    }
    p.exec.time = Some(t);
    p.validate().unwrap();
    p
}

/// main -> f -> g and main -> g: 10 ms in all, 1000 instructions.
fn chain() -> Profile {
    timed(
        &["main", "f", "g"],
        0,
        &[
            (0, 0, 1, 0, 2_000_000, 200),
            (1, 1, 2, 0, 3_000_000, 300),
            (2, 2, 4, 0, 4_000_000, 400),
            (1, 2, 1, 0, 1_000_000, 100),
        ],
    )
}

/// main -> even -> odd -> even -> odd, each a node of its own (nothing to fold).
fn even_odd() -> Profile {
    timed(
        &["main", "even", "odd"],
        50,
        &[
            (0, 0, 1, 0, 1_000, 10),
            (1, 1, 1, 0, 100, 1),
            (2, 2, 1, 0, 200, 2),
            (3, 1, 1, 0, 300, 3),
            (4, 2, 1, 0, 400, 4),
        ],
    )
}

/// (fib 10) with its self-recursion folded into one node: 2^10-1 calls, 2^10-2 of them
/// recursive.
fn fib() -> Profile {
    timed(&["main", "fib"], 0, &[(0, 0, 1, 0, 500_000, 50), (1, 1, 1023, 1022, 3_500_000, 40_920)])
}

fn time_only() -> ExecReportOptions {
    ExecReportOptions { counts: false, io: false, ..ExecReportOptions::default() }
}

fn entity<'a>(r: &'a Reduction, name: &str) -> &'a mprof_engine::reduce::Entity {
    r.entities.iter().find(|e| e.name == name).unwrap()
}

#[test]
fn chain_flat_profile_and_call_graph() {
    let p = chain();
    let text = render_exec(&p, &time_only());
    insta::assert_snapshot!(text);
    // Totals are self times summed over subtrees: g 4+1, f 3+4, main everything.
    assert!(text.contains(" 50.0        5.00   5.00   5.00      5           500    50.0  g\n"), "{text}");
    assert!(text.contains(" 30.0        8.00   3.00   7.00      2           300    30.0  f\n"), "{text}");
    assert!(text.contains(" 20.0       10.00   2.00  10.00      1           200    20.0  main\n"), "{text}");
}

#[test]
fn mutual_recursion_is_a_cycle_timed_at_the_outermost_activation() {
    let p = even_odd();
    let view = time_view(&p).unwrap();
    let r = reduce(&view, &ReduceOptions { merge_cycles: false, call_sites: false, path_depth: 5 }).unwrap();
    // The first even's subtree: 100 + 200 + 300 + 400; the first odd's: 200 + 300 + 400.
    assert_eq!(entity(&r, "even").total[0].bytes, 1_000);
    assert_eq!(entity(&r, "odd").total[0].bytes, 900);
    assert_eq!(entity(&r, "<cycle 1>").total[0].bytes, 1_000);
    assert_eq!(entity(&r, "<cycle 1>").self_counters[0].bytes, 1_000);
    assert_eq!(entity(&r, "main").total[0].bytes, 2_000);
    assert_eq!(r.totals[0].bytes, 2_050, "the root's own 50 ns count in the total");
    let text = render_exec(&p, &time_only());
    // even: 1 call from main, 1 from odd; the cycle: 1 call in, 3 between members.
    assert!(text.contains("  2  even <cycle 1> [3]\n"), "{text}");
    assert!(text.contains("1+3  <cycle 1> [2]\n"), "{text}");
    insta::assert_snapshot!("even_odd", text);
    let merged = render_exec(&p, &ExecReportOptions { merge_cycles: true, ..time_only() });
    assert!(merged.contains("<cycle 1> (even odd)"), "{merged}");
    assert!(!merged.contains("even <cycle 1> ["), "members live only inside the merged cycle: {merged}");
    insta::assert_snapshot!("even_odd_merged", merged);
    let exact = render_exec(&p, &ExecReportOptions { exact: true, ..time_only() });
    assert!(exact.contains("Flat profile (times in ns)"));
    insta::assert_snapshot!("even_odd_exact", exact);
}

#[test]
fn folded_self_recursion_shows_calls_plus_self() {
    let p = fib();
    let text = render_exec(&p, &time_only());
    insta::assert_snapshot!(text);
    assert!(text.contains("1+1022  fib [2]\n"), "{text}");
    assert!(text.contains("1/1      fib [2]\n"), "{text}");
    // The flat profile counts every call of the node, folded ones included.
    assert!(text.contains("3500.00   1023         40920    99.9  fib\n"), "{text}");
}

fn with_counts_and_io(mut p: Profile) -> Profile {
    p.exec.sources = vec![
        SourceFile { path: "prog.lisp".into(), bytes: 400, hash: 7 },
        SourceFile { path: "lib.lisp".into(), bytes: 100, hash: 9 },
    ];
    let point = |source, line, kind, function: &str, depth, count| CountPoint {
        source,
        start: line as u64 * 10,
        end: line as u64 * 10 + 5,
        line,
        column: 1,
        kind,
        function: function.into(),
        depth,
        count,
    };
    p.exec.counts = vec![
        point(0, 8, CountKind::Entry, "fib", 0, 1023),
        point(0, 1, CountKind::Entry, "main", 0, 1),
        point(0, 3, CountKind::Entry, "helper", 1, 1000),
        point(0, 4, CountKind::Branch, "helper", 0, 300),
        point(0, 4, CountKind::Branch, "helper", 0, 700),
        point(0, 5, CountKind::Statement, "helper", 0, 1000),
        point(0, 12, CountKind::Toplevel, "", 0, 1),
        point(1, 2, CountKind::Entry, "util", 0, 4),
    ];
    p.exec.io = vec![
        IoRow {
            stream: "*standard-output*".into(),
            opens: 0,
            reads: 0,
            writes: 12,
            bytes_read: 0,
            bytes_written: 345,
            time_ns: 120_000,
        },
        IoRow {
            stream: "data.txt".into(),
            opens: 1,
            reads: 5,
            writes: 0,
            bytes_read: 4_096,
            bytes_written: 0,
            time_ns: 2_500_000,
        },
    ];
    p
}

#[test]
fn call_counts_and_io_summaries() {
    let p = with_counts_and_io(timed(&["main"], 0, &[]));
    let text = render_exec(&p, &ExecReportOptions { time: false, ..ExecReportOptions::default() });
    insta::assert_snapshot!(text);
    assert!(text.contains("  helper  prog.lisp:3   1000\n"), "nested definitions are indented: {text}");
    assert!(text.contains("<TOTAL>                 2028\n"), "{text}");
    assert!(text.contains("executions: body forms 1000, branches taken 1000, top-level forms 1"), "{text}");
    assert!(text.contains("<TOTAL>                1      5      12        4096            345  2620.00\n"), "{text}");
    // lib.lisp sorts before prog.lisp; within a file, by line.
    let order: Vec<usize> = ["util", "main", "helper", "fib"].iter().map(|n| text.find(n).unwrap()).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn nothing_to_print_is_an_empty_string() {
    let p = Profile::empty(Language::Lisp, CategoryScheme::lisp());
    assert_eq!(render_exec(&p, &ExecReportOptions::default()), "");
    assert!(time_view(&p).is_none());
    let p = with_counts_and_io(chain());
    let none = ExecReportOptions { time: false, counts: false, io: false, ..ExecReportOptions::default() };
    assert_eq!(render_exec(&p, &none), "");
}

#[test]
fn time_view_carries_calls_self_time_and_instructions() {
    let view = time_view(&fib()).unwrap();
    assert_eq!(view.scheme.len(), 2);
    let node = &view.nodes[2];
    assert_eq!((node.counters[0].allocs, node.counters[0].bytes, node.counters[1].bytes), (1023, 3_500_000, 40_920));
    assert_eq!(node.recursion, 1022);
    assert_eq!(view.functions, fib().functions);
    assert_eq!(
        formats::folded(&view, FoldedValue::TimeNs).unwrap(),
        "main 500000\nmain;fib 3500000\n"
    );
    assert_eq!(formats::folded(&view, FoldedValue::Calls).unwrap(), "main 1\nmain;fib 1023\n");
    assert_eq!(formats::folded(&view, FoldedValue::Instructions).unwrap(), "main 50\nmain;fib 40920\n");
    let pprof = formats::pprof_time_message(&view).unwrap();
    let sums: Vec<i64> = (0..3).map(|k| pprof.sample.iter().map(|s| s.value[k]).sum()).collect();
    assert_eq!(sums, [1024, 4_000_000, 40_970]);
}

#[test]
fn a_profile_file_round_trip_prints_the_same_tables() {
    let p = with_counts_and_io(even_odd());
    let mut bytes = Vec::new();
    p.write(&mut bytes).unwrap();
    let back = Profile::read(&bytes).unwrap();
    assert_eq!(back, p);
    let all = ExecReportOptions::default();
    let text = render_exec(&back, &all);
    assert_eq!(text, render_exec(&p, &all));
    for title in ["Flat profile", "Call graph", "Function call counts", "Input/output summary"] {
        assert!(text.contains(title), "{title} missing");
    }
}

#[test]
fn command_line_on_time_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let mut p = with_counts_and_io(chain());
    p.metadata.push(("program".into(), "chain".into()));
    let mut bytes = Vec::new();
    p.write(&mut bytes).unwrap();
    std::fs::write(path("t.mprof"), &bytes).unwrap();

    let (code, report, err) = mprof(&["report", &path("t.mprof")]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(!report.contains("Memory kept table"), "no memory tables for a time-only file: {report}");
    assert!(!report.contains("Allocation call graph"));
    assert!(report.starts_with("mprof report (lisp profile)\nprogram: chain\n\nFlat profile"), "{report}");
    assert!(report.ends_with(&render_exec(&p, &ExecReportOptions::default())));

    let (code, report, _) = mprof(&["report", &path("t.mprof"), "--show", "io"]);
    assert_eq!(code, 0);
    assert!(report.contains("Input/output summary") && !report.contains("Flat profile"), "{report}");

    // Two files are summed: every time doubles.
    let (code, report, _) = mprof(&["report", &path("t.mprof"), &path("t.mprof"), "--show", "time"]);
    assert_eq!(code, 0);
    assert!(report.contains(" 20.0       20.00   4.00  20.00      2           400    20.0  main\n"), "{report}");

    let (code, folded, _) = mprof(&["export", &path("t.mprof"), "--format", "folded", "--kind", "time"]);
    assert_eq!(code, 0);
    assert_eq!(folded, "main 2000000\nmain;f 3000000\nmain;f;g 4000000\nmain;g 1000000\n");
    let (code, calls, _) =
        mprof(&["export", &path("t.mprof"), "--format", "folded", "--kind", "time", "--value", "calls"]);
    assert_eq!(code, 0);
    assert_eq!(calls, "main 1\nmain;f 2\nmain;f;g 4\nmain;g 1\n");
    let (code, json, _) = mprof(&["export", &path("t.mprof"), "--format", "json"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["exec"]["time"]["nodes"][3]["self_ns"], 4_000_000);
    assert_eq!(doc["exec"]["io"][1]["bytes_read"], 4_096);
    let (code, json, _) = mprof(&["export", &path("t.mprof"), "--format", "json", "--kind", "time"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["categories"][0]["name"], "time (ns)");
    assert_eq!(doc["nodes"][3]["counters"][0]["bytes"], 4_000_000, "g's self time under main;f");
    assert_eq!(doc["nodes"][3]["counters"][0]["allocs"], 4, "g's calls under main;f");
    assert_eq!(doc["nodes"][3]["counters"][1]["bytes"], 400, "g's instructions under main;f");
    let (code, _, _) = mprof(&["export", &path("t.mprof"), "--format", "pprof", "--kind", "time", "-o", &path("t.pb.gz")]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(path("t.pb.gz")).unwrap()[..2], [0x1f, 0x8b]);

    let (code, _, err) = mprof(&["flamegraph", &path("t.mprof"), "--kind", "time", "-o", &path("t.svg")]);
    assert_eq!((code, err.as_str()), (0, ""));
    let svg = std::fs::read_to_string(path("t.svg")).unwrap();
    assert!(svg.contains("mprof: time (ns) by call path"));
    for frame in ["<title>main (", "<title>f (", "<title>g ("] {
        assert!(svg.contains(frame), "{frame} missing from the flame graph");
    }
    assert!(svg.contains(" ns, "), "widths are nanoseconds");

    // Errors: one line each, naming what to do.
    let mut memory_only = Vec::new();
    Profile::empty(Language::Lisp, CategoryScheme::lisp()).write(&mut memory_only).unwrap();
    std::fs::write(path("m.mprof"), &memory_only).unwrap();
    let runs = [
        vec!["flamegraph".to_string(), path("m.mprof"), "--kind".into(), "time".into(), "-o".into(), path("x.svg")],
        vec!["export".to_string(), path("t.mprof"), "--format".into(), "folded".into(), "--value".into(), "calls".into()],
        vec![
            "export".to_string(),
            path("t.mprof"),
            "--format".into(),
            "folded".into(),
            "--kind".into(),
            "time".into(),
            "--value".into(),
            "bytes".into(),
        ],
        vec!["report".to_string(), path("t.mprof"), "--show".into(), "speed".into()],
    ];
    insta::assert_snapshot!(common::one_line_errors(dir.path(), &runs));
}

#[test]
fn memory_and_time_in_one_file_print_both_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("both.mprof").to_string_lossy().into_owned();
    let mut p = Profile::empty(Language::Lisp, CategoryScheme::lisp());
    p.functions = vec![FunctionInfo::named("main"), FunctionInfo::named("make")];
    p.nodes.push(Node {
        parent: Some(NodeId(0)),
        func: FuncId(0),
        call_site: 0,
        recursion: 0,
        counters: vec![Counters { allocs: 2, bytes: 32, ..Counters::default() }, Counters::default(), Counters::default(), Counters::default()],
    });
    p.exec.time = timed(&["main", "make"], 0, &[(0, 0, 1, 0, 700, 7), (1, 1, 3, 0, 300, 3)]).exec.time;
    let mut bytes = Vec::new();
    p.write(&mut bytes).unwrap();
    std::fs::write(&file, &bytes).unwrap();
    let (code, both, _) = mprof(&["report", &file]);
    assert_eq!(code, 0);
    assert!(both.contains("Memory kept table") && both.contains("allocated: 2 objects, 32 bytes"), "{both}");
    assert!(both.contains("Flat profile (times in us)") && both.contains("Call graph (times in us)"), "{both}");
    let (_, memory, _) = mprof(&["report", &file, "--show", "memory"]);
    assert!(memory.contains("Memory kept table") && !memory.contains("Flat profile"), "{memory}");
    let (_, time, _) = mprof(&["report", &file, "--show", "time"]);
    assert!(!time.contains("Memory kept table") && time.contains(" 70.0        0.70  0.70   1.00      1             7    70.0  main\n"), "{time}");
}

#[test]
fn a_cycle_lists_its_members_calls_out_of_it_as_its_children() {
    // main -> even -> odd -> leaf, main -> even -> leaf, ... -> odd -> even -> leaf.
    let p = timed(
        &["main", "even", "odd", "leaf"],
        0,
        &[
            (0, 0, 1, 0, 1_000, 0),
            (1, 1, 1, 0, 100, 0),
            (2, 2, 2, 0, 200, 0),
            (3, 3, 5, 0, 50, 0),
            (2, 3, 1, 0, 30, 0),
            (3, 1, 1, 0, 10, 0),
            (6, 3, 2, 0, 20, 0),
        ],
    );
    let text = render_exec(&p, &ExecReportOptions { exact: true, ..time_only() });
    insta::assert_snapshot!(text);
    let block = |index: &str| {
        let start = text.find(&format!("\n{index} ")).unwrap();
        let end = start + text[start..].find("\n---").unwrap();
        text[start..end].to_string()
    };
    // The cycle as a whole: all of even's and odd's self time, leaf below it.
    let cycle = block("[2]");
    assert!(cycle.contains("[2]     29.08   310          100           1+3  <cycle 1> [2]"), "{cycle}");
    // Every call of leaf comes from the cycle: even 1 + 2, odd 5.
    assert!(cycle.contains("100            0           8/8      leaf [5]"), "{cycle}");
    let even = block("[3]");
    assert!(even.contains("50            0           3/8      leaf [5]"), "even->leaf is timed twice, once per path: {even}");
    // main -> even: even's own time under that arc includes its nested activation
    // (100 + 10); the rest (odd 200, leaf 100) is descendants.
    // (Parent lines come before the entry's own line, outside `block`.)
    assert!(text.contains("                110          300           1/2      main [1]\n                 10           20           1/2      odd <cycle 1> [4]\n[3] "), "{text}");
}
