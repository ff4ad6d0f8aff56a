//! A function name of 65,536 characters (and one of 100,000) goes through every table,
//! listing-free report and export without a panic, in the library and in the `mprof`
//! binary: widths are computed from the data, and no width may overflow a formatter.

use mprof_display::exec_report::{ExecReportOptions, render_exec, time_view};
use mprof_export::formats::{self, FoldedValue};
use mprof_display::{ReportOptions, render_report};
use mprof_engine::exec::{ClockInfo, CountKind, CountPoint, IoRow, SourceFile, TimeNode, TimeProfile};
use mprof_engine::*;

mod common;

fn long_named(len: usize) -> (Profile, String) {
    let name: String = "F".repeat(len);
    let mut m = Monitor::new(Language::Lisp, CategoryScheme::lisp(), MonitorOptions::default());
    let cons = m.type_name(&name);
    let main = m.function(FunctionInfo::named("main"));
    let long = m.function(FunctionInfo::named(name.clone()));
    let node = m.path(&[main, long]);
    m.record_alloc(node, 0, 16, Bin::Type(cons));
    m.record_alloc(node, 2, 100_000, Bin::Type(cons));
    let mut p = m.to_profile();
    let mut t = TimeProfile {
        clock: ClockInfo { source: "test".into(), resolution_ps: 1, read_cost_ps: 1, compensation_ps: 0, elapsed_ns: 100 },
        ..TimeProfile::default()
    };
    t.nodes.push(TimeNode { parent: Some(NodeId(0)), func: main, calls: 1, recursion: 0, self_ns: 10, instructions: 5 });
    t.nodes.push(TimeNode { parent: Some(NodeId(1)), func: long, calls: 3, recursion: 0, self_ns: 90, instructions: 50 });
    p.exec.time = Some(t);
    p.exec.sources.push(SourceFile { path: format!("{name}.lisp"), bytes: 10, hash: 1 });
    p.exec.counts.push(CountPoint { source: 0, start: 0, end: 5, line: 1, column: 1, kind: CountKind::Entry, function: name.clone(), depth: 0, count: 3 });
    p.exec.io.push(IoRow { stream: name.clone(), opens: 1, reads: 2, writes: 3, bytes_read: 4, bytes_written: 5, time_ns: 6 });
    p.validate().unwrap();
    (p, name)
}

#[test]
fn every_report_and_export_takes_a_name_of_any_length() {
    for len in [65_535, 65_536, 100_000] {
        let (p, name) = long_named(len);
        for options in [
            ReportOptions::default(),
            ReportOptions { exact_percentages: true, merge_cycles: true, ..ReportOptions::default() },
        ] {
            let report = render_report(&p, &options);
            assert!(report.contains(&name), "the memory tables name the function");
        }
        let all = ExecReportOptions { time: true, counts: true, io: true, merge_cycles: false, exact: true };
        let exec = render_exec(&p, &all);
        assert!(exec.matches(name.as_str()).count() >= 3, "time, counts and I/O tables name it");
        for value in [FoldedValue::Bytes, FoldedValue::Allocs, FoldedValue::KeptBytes] {
            assert!(formats::folded(&p, value).unwrap().contains(&name));
        }
        let view = time_view(&p).unwrap();
        assert!(formats::folded(&view, FoldedValue::TimeNs).unwrap().contains(&name));
        assert!(formats::json(&p).unwrap().contains(&name));
        assert!(!formats::pprof_gz(&p).unwrap().is_empty());
        assert!(!formats::pprof_time_gz(&view).unwrap().is_empty());
        assert!(!formats::flamegraph(&p, FoldedValue::Bytes, "t").unwrap().is_empty());
    }
}

#[test]
fn the_mprof_binary_reports_a_valid_file_holding_such_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.mprof");
    let (p, name) = long_named(65_536);
    let mut bytes = Vec::new();
    p.write(&mut bytes).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let file = path.to_string_lossy();
    let (code, out, err) = common::mprof(&["report", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&name));
    let (code, out, err) = common::mprof(&["export", &file, "--format", "folded", "--kind", "time"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&name));
}
