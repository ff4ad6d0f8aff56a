//! Snapshot tests of the report: the paper's figures reproduced from monitor events.

mod common;

use mprof_display::*;
use mprof_engine::*;

fn report(p: &Profile, tables: &str) -> String {
    let options = ReportOptions { tables: Tables::parse(tables).unwrap(), ..ReportOptions::default() };
    render_report(p, &options)
}

#[test]
fn paper_example_full_report() {
    let p = common::widgets();
    let text = render_report(&p, &ReportOptions::default());
    // The numbers of Figures 2-5.
    assert!(text.contains("5019 1023876 (99) || > main > make_red_widget > make_widget"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn paper_example_exact_percentages() {
    let p = common::widgets();
    let options = ReportOptions { exact_percentages: true, ..ReportOptions::default() };
    insta::assert_snapshot!(render_report(&p, &options));
}

#[test]
fn figure7_attributes_each_edge_once_per_path() {
    let p = common::figure7();
    let merged = ReportOptions { tables: Tables::GRAPH, merge_cycles: true, ..ReportOptions::default() };
    let text = format!("{}\n--merge-cycles:\n{}", report(&p, "graph,direct"), render_report(&p, &merged));
    insta::assert_snapshot!(text);
}

#[test]
fn three_function_cycle_is_shown_as_a_cycle() {
    let p = common::three_cycle();
    let text = render_report(&p, &ReportOptions::default());
    assert!(text.contains("<cycle 1>"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn three_function_cycle_merged() {
    let p = common::three_cycle();
    let options = ReportOptions { merge_cycles: true, tables: Tables::GRAPH, ..ReportOptions::default() };
    insta::assert_snapshot!(render_report(&p, &options));
}

#[test]
fn heap_errors_are_listed_with_their_paths() {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    let [main, parse, cleanup] = ["main", "parse", "cleanup"].map(|n| m.function(FunctionInfo::named(n)));
    let p = m.path(&[main, parse]);
    m.record_alloc(p, 0, 16, Bin::Size(16));
    m.record_free(p, 0, 16, Bin::Size(16));
    let c = m.path(&[main, cleanup]);
    m.record_error(HeapErrorKind::DoubleFree, c, 0x5000);
    m.record_error(HeapErrorKind::DoubleFree, c, 0x5010);
    m.record_error(HeapErrorKind::InvalidFree, p, 0xdead);
    let text = report(&m.to_profile(), "leak,errors");
    assert!(text.contains("double free"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn call_sites_and_path_depth_shape_the_leak_table() {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions { call_sites: true, ..MonitorOptions::default() });
    let names = ["main", "a", "b", "c", "d", "e", "alloc"];
    let f: Vec<FuncId> = names.iter().map(|n| m.function(FunctionInfo::named(*n))).collect();
    // The same deep path reached from two call sites of `e`.
    for site in [0x10, 0x20] {
        let mut node = NodeId::ROOT;
        for (i, &func) in f.iter().enumerate() {
            node = m.child(node, func, if i == 6 { site } else { 0 });
        }
        m.record_alloc(node, 3, 4096, Bin::Size(4096));
    }
    let p = m.to_profile();
    let plain = render_report(&p, &ReportOptions { tables: Tables::LEAK, ..ReportOptions::default() });
    let sites = render_report(&p, &ReportOptions { tables: Tables::LEAK, call_sites: true, ..ReportOptions::default() });
    let deep = render_report(&p, &ReportOptions { tables: Tables::LEAK, path_depth: 8, ..ReportOptions::default() });
    insta::assert_snapshot!(format!("{plain}\n{sites}\n{deep}"));
}

#[test]
fn per_thread_monitors_merge_into_one_profile() {
    fn assert_send<T: Send>() {}
    assert_send::<Monitor>();
    assert_send::<Profile>();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
                for i in 0..1000u64 {
                    let frames = [0x100, 0x200 + (i % 2) * 0x100, 0x400 + t];
                    let node = frames.iter().fold(NodeId::ROOT, |node, &addr| {
                        let func = m.function(FunctionInfo::named(format!("f{:x}", addr)));
                        m.child(node, func, addr)
                    });
                    m.record_alloc(node, 0, 8, Bin::Size(8));
                }
                m.to_profile()
            })
        })
        .collect();
    let mut profiles = handles.into_iter().map(|h| h.join().unwrap());
    let mut all = profiles.next().unwrap();
    for p in profiles {
        all.merge(&p).unwrap();
    }
    let total: u64 = all.nodes.iter().map(|n| n.counters[0].allocs).sum();
    assert_eq!(total, 4000);
    // f100 > {f200, f300} > {f400..f403}: 1 + 2 + 8 nodes below the root.
    assert_eq!(all.nodes.len(), 12);
}

#[test]
fn an_empty_profile_prints_empty_tables() {
    let c = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default()).to_profile();
    let lisp = Profile::empty(Language::Lisp, CategoryScheme::lisp());
    let text = format!("{}\n{}", render_report(&c, &ReportOptions::default()), render_report(&lisp, &ReportOptions::default()));
    insta::assert_snapshot!(text);
}

#[test]
fn a_hand_built_invalid_profile_is_reported_not_panicked_on() {
    let mut p = Profile::empty(Language::C, CategoryScheme::c_sizes());
    p.nodes.push(Node { parent: Some(NodeId(5)), func: FuncId(0), call_site: 0, recursion: 0, counters: vec![] });
    assert_eq!(render_report(&p, &ReportOptions::default()), "invalid profile: node 1 has 0 counters, the scheme has 4\n");
}

#[test]
fn the_header_summarizes_the_time_series() {
    let mut p = common::widgets();
    for (t, live) in [(0u64, 0u64), (1_000_000, 204_000), (2_500_000, 1_023_876), (3_000_000, 1_023_876)] {
        p.samples.push(Sample { time_ns: t, live_bytes: live, allocated_bytes: live, ..Sample::default() });
    }
    let text = report(&p, "leak");
    assert!(text.contains("memory over time: 4 samples, peak 1023876 live bytes at 0.003 s"), "{text}");
}

#[test]
fn pow2_bins_sum_each_size_range_of_a_c_profile() {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    m.label_size(200, "widget");
    m.label_size(130, "gadget");
    let main = m.function(FunctionInfo::named("main"));
    let node = m.child(NodeId::ROOT, main, 0);
    for (size, times) in [(1u64, 1u64), (3, 2), (4, 1), (130, 1), (200, 3), (256, 1), (257, 1), (2000, 1)] {
        for _ in 0..times {
            m.record_alloc(node, CategoryScheme::c_category_of_size(size), size, Bin::Size(size));
        }
    }
    let p = m.to_profile();
    let options = ReportOptions { tables: Tables::BINS, size_bins: SizeBins::Pow2, ..ReportOptions::default() };
    let text = render_report(&p, &options);
    let rows: Vec<(&str, u64, u64)> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let label = w.next().filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))?;
            let allocs = w.next()?.parse().ok()?;
            let bytes = w.next()?.parse().ok()?;
            Some((label, allocs, bytes))
        })
        .collect();
    assert_eq!(rows, [("1", 1, 1), ("3-4", 3, 10), ("129-256", 5, 986), ("257-512", 1, 257)], "{text}");
    let larger = text.lines().find(|l| l.trim_start().starts_with("> 1024")).expect("the > 1024 row");
    assert!(larger.contains(" 2000 "), "{larger}");
    let range = text.lines().find(|l| l.trim_start().starts_with("129-256")).unwrap();
    assert!(range.ends_with("gadget widget") || range.ends_with("widget gadget"), "types of the range once each: {range}");
    // Exact bins (the default) keep one row per size.
    let exact = render_report(&p, &ReportOptions { tables: Tables::BINS, ..ReportOptions::default() });
    assert!(exact.lines().any(|l| l.trim_start().starts_with("130 ")), "{exact}");
}
