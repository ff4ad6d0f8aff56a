//! The profile file: round trips, merging, and the errors for corrupt or newer files.

mod common;

use mprof_display::*;
use mprof_export::formats;
use mprof_engine::*;

fn bytes_of(p: &Profile) -> Vec<u8> {
    let mut out = Vec::new();
    p.write(&mut out).unwrap();
    out
}

#[test]
fn write_read_round_trip_keeps_everything() {
    let mut p = common::widgets();
    p.samples.push(Sample { time_ns: 5, live_bytes: 204, allocated_bytes: 204, ..Sample::default() });
    p.samples.push(Sample { time_ns: 9, live_bytes: 300, allocated_bytes: 500, live_by_category: [100, 0, 200, 0] });
    p.functions[0].file = Some("widgets.c".into());
    p.functions[0].line = Some(61);
    p.functions[0].module = Some("a.out".into());
    let back = Profile::read(&bytes_of(&p)).unwrap();
    assert_eq!(back, p);
    let lisp = common::three_cycle();
    assert_eq!(Profile::read(&bytes_of(&lisp)).unwrap(), lisp);
    let options = ReportOptions::default();
    assert_eq!(render_report(&back, &options), render_report(&p, &options));
}

#[test]
fn files_are_small() {
    // The paper's files were under 30 KB; this one is a few hundred bytes.
    let size = bytes_of(&common::widgets()).len();
    assert!(size < 300, "{size} bytes");
}

/// The widget example recorded by two "processes": one makes the red widgets, the
/// other the blue ones (and frees them). Merged, they are the whole example.
fn half(red: bool) -> Profile {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    m.set_metadata("program", "widgets");
    m.label_size(204, "widget");
    let main = m.function(FunctionInfo::named("main"));
    let (name, count) = if red { ("make_red_widget", 5019) } else { ("make_blue_widget", 4981) };
    let maker = m.function(FunctionInfo::named(name));
    let make = m.function(FunctionInfo::named("make_widget"));
    let node = m.path(&[main, maker, make]);
    for _ in 0..count {
        m.record_alloc(node, 1, 204, Bin::Size(204));
        if !red {
            m.record_free(node, 1, 204, Bin::Size(204));
        }
    }
    m.to_profile()
}

#[test]
fn merging_two_processes_gives_the_whole_run() {
    let mut merged = Profile::read(&bytes_of(&half(false))).unwrap();
    merged.merge(&Profile::read(&bytes_of(&half(true))).unwrap()).unwrap();
    let whole = common::widgets();
    let options = ReportOptions::default();
    assert_eq!(render_report(&merged, &options), render_report(&whole, &options));
    let again = Profile::read(&bytes_of(&merged)).unwrap();
    assert_eq!(render_report(&again, &options), render_report(&whole, &options));
}

#[test]
fn merging_a_run_with_itself_doubles_the_counts() {
    let one = common::widgets();
    let mut two = one.clone();
    two.merge(&one).unwrap();
    let text = render_report(&two, &ReportOptions { tables: Tables::LEAK, ..ReportOptions::default() });
    assert!(text.contains("10038 2047752 (99) || > main > make_red_widget > make_widget"), "{text}");
}

#[test]
fn merge_refuses_other_languages_and_schemes() {
    let mut c = common::widgets();
    let lisp = common::three_cycle();
    let err = c.merge(&lisp).unwrap_err();
    assert_eq!(err.to_string(), "cannot merge a c profile with a lisp profile");
    let mut other = lisp.clone();
    other.language = Language::C;
    assert_eq!(c.merge(&other).unwrap_err().to_string(), "cannot merge profiles with category schemes smlx and cfso");
}

#[test]
fn remap_unifies_functions_and_paths() {
    // ffi-c style: two raw addresses of one function become one symbol.
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    let a1 = m.function(FunctionInfo::named("0x1000"));
    let a2 = m.function(FunctionInfo::named("0x1008"));
    let n1 = m.path(&[a1]);
    let n2 = m.path(&[a2]);
    m.record_alloc(n1, 0, 8, Bin::Size(8));
    m.record_alloc(n2, 0, 8, Bin::Size(8));
    let mut p = m.to_profile();
    p.remap_functions(|_| FunctionInfo::named("parse"));
    assert_eq!(p.functions.len(), 1);
    assert_eq!(p.nodes.len(), 2);
    assert_eq!(p.nodes[1].counters[0].allocs, 2);
}

fn error_of(bytes: &[u8]) -> String {
    match Profile::read(bytes) {
        Ok(_) => "unexpectedly read".to_string(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn corrupt_files_get_errors_naming_offset_and_expectation() {
    let good = bytes_of(&common::widgets());
    let mut cases = Vec::new();
    cases.push(("empty file", error_of(&[])));
    cases.push(("text file", error_of(b"hello, world\n")));
    let mut newer = good[..8].to_vec();
    newer.push(mprof_engine::FORMAT_VERSION as u8 + 1);
    newer.extend_from_slice(&good[9..]);
    cases.push(("newer version", error_of(&newer)));
    cases.push(("cut after the magic", error_of(&good[..8])));
    cases.push(("cut in the middle", error_of(&good[..good.len() / 2])));
    cases.push(("cut before the end marker", error_of(&good[..good.len() - 2])));
    let mut trailing = good.clone();
    trailing.push(7);
    cases.push(("garbage after the end", error_of(&trailing)));
    // Bad language code: the HEADER payload is the byte after tag 1 and length 1.
    let mut bad_language = good.clone();
    bad_language[11] = 9;
    cases.push(("bad language", error_of(&bad_language)));
    // A node whose function number is out of range: find the NODES section and
    // corrupt the first non-root node's function field.
    let p = Profile::read(&good).unwrap();
    let mut bad_func = p.clone();
    bad_func.nodes[1].func = FuncId(40);
    cases.push(("unknown function", error_of(&bytes_of(&bad_func))));
    let mut bad_parent = p.clone();
    bad_parent.nodes[1].parent = Some(NodeId(3));
    cases.push(("parent after child", error_of(&bytes_of(&bad_parent))));
    let text: String = cases.iter().map(|(what, err)| format!("{what}:\n  {err}\n")).collect();
    insta::assert_snapshot!(text);
}

#[test]
fn unknown_sections_are_skipped() {
    let good = bytes_of(&common::widgets());
    // Insert a section with tag 77 right after the version byte.
    let mut with_extra = good[..9].to_vec();
    with_extra.extend_from_slice(&[77, 3, 1, 2, 3]);
    with_extra.extend_from_slice(&good[9..]);
    assert_eq!(Profile::read(&with_extra).unwrap(), common::widgets());
}

/// Every truncation of `good` must be an error, and every byte flip an error or a profile
/// that satisfies the invariants and survives `use_it` (printing it) without a panic.
fn corruptions_are_errors_or_valid(good: &[u8], use_it: impl Fn(&Profile)) {
    for cut in 0..good.len() {
        assert!(Profile::read(&good[..cut]).is_err(), "cut at {cut}");
    }
    for i in 0..good.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = good.to_vec();
            bad[i] ^= flip;
            if let Ok(p) = Profile::read(&bad) {
                assert_eq!(p.validate(), Ok(()));
                use_it(&p);
            }
        }
    }
}

#[test]
fn every_truncation_and_byte_flip_is_an_error_or_a_profile_never_a_panic() {
    corruptions_are_errors_or_valid(&bytes_of(&common::three_cycle()), |p| {
        let _ = render_report(p, &ReportOptions::default());
    });
}

/// A profile holding every kind of execution data, for the corruption tests.
fn with_exec() -> Profile {
    use mprof_engine::exec::*;
    let mut p = common::three_cycle();
    let text = "(defun f (x) (if x (g) (h)))\n";
    let mut time = TimeProfile {
        clock: ClockInfo { source: "test".into(), resolution_ps: 10_000, read_cost_ps: 12_000, compensation_ps: 0, elapsed_ns: 900 },
        ..TimeProfile::default()
    };
    for (parent, func, self_ns) in [(0u32, 0u32, 100u64), (1, 1, 300), (2, 2, 500)] {
        time.nodes.push(TimeNode {
            parent: Some(NodeId(parent)),
            func: FuncId(func),
            calls: 2,
            recursion: 1,
            self_ns,
            instructions: 40,
        });
    }
    p.exec.time = Some(time);
    p.exec.sources.push(SourceFile { path: "f.lisp".into(), bytes: text.len() as u64, hash: source_hash(text.as_bytes()) });
    for (start, end, kind, count) in [(0u64, 28u64, CountKind::Entry, 7u64), (19, 22, CountKind::Branch, 3), (23, 26, CountKind::Branch, 4)] {
        p.exec.counts.push(CountPoint { source: 0, start, end, line: 1, column: start as u32 + 1, kind, function: "F".into(), depth: 0, count });
    }
    p.exec.io.push(exec::IoRow { stream: "out.txt".into(), opens: 1, reads: 0, writes: 3, bytes_read: 0, bytes_written: 30, time_ns: 77 });
    p
}

#[test]
fn execution_data_round_trips_and_merges() {
    let p = with_exec();
    let back = Profile::read(&bytes_of(&p)).unwrap();
    assert_eq!(back, p);
    let mut twice = p.clone();
    twice.merge(&p).unwrap();
    let t = twice.exec.time.as_ref().map(|t| t.nodes.clone()).unwrap_or_default();
    assert_eq!(t.len(), 4, "same paths are unified");
    assert_eq!((t[3].self_ns, t[3].calls, t[3].instructions), (1000, 4, 80));
    assert_eq!(twice.exec.counts.iter().map(|c| c.count).collect::<Vec<_>>(), vec![14, 6, 8]);
    assert_eq!(twice.exec.io[0].bytes_written, 60);
}

#[test]
fn corrupt_execution_sections_are_errors_never_panics() {
    use mprof_display::exec_report::{ExecReportOptions, render_exec};
    // The listing of corrupt counts is tested beside it, in lisp/listing.
    corruptions_are_errors_or_valid(&bytes_of(&with_exec()), |p| {
        let _ = render_exec(p, &ExecReportOptions::default());
    });
}

/// A chain of `n` nodes without counts under `ncat` categories.
fn chain_of_empty_nodes(ncat: usize, n: usize) -> Profile {
    let letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!?";
    let scheme = CategoryScheme {
        categories: letters.chars().take(ncat).map(|letter| Category { letter, name: letter.to_string() }).collect(),
    };
    let mut p = Profile::empty(Language::C, scheme);
    p.functions.push(FunctionInfo::named("f"));
    for i in 1..n {
        p.nodes.push(Node {
            parent: Some(NodeId(i as u32 - 1)),
            func: FuncId(0),
            call_site: 0,
            recursion: 0,
            counters: vec![Counters::default(); ncat],
        });
    }
    p
}

#[test]
fn a_file_claiming_more_counters_than_bytes_is_refused_before_anything_is_reserved() {
    // 200,000 nodes of 64 categories: ~1 MB in the file, 400 MB of counters in memory.
    let crafted = bytes_of(&chain_of_empty_nodes(64, 200_000));
    assert!(crafted.len() < 1_200_000, "{}", crafted.len());
    let err = Profile::read(&crafted).unwrap_err().to_string();
    assert!(err.contains("nodes of 64 categories"), "{err}");
    // The same tree under a real scheme (four categories) reads back whole.
    let real = chain_of_empty_nodes(4, 200_000);
    assert_eq!(Profile::read(&bytes_of(&real)).as_ref(), Ok(&real));
    // And a small tree of many categories is still fine.
    let small = chain_of_empty_nodes(64, 50);
    assert_eq!(Profile::read(&bytes_of(&small)).as_ref(), Ok(&small));
}

/// The node of `path` (function names, outermost first).
fn node_of(p: &Profile, path: &[&str]) -> NodeId {
    let found = (0..p.nodes.len()).find(|&i| {
        let mut names = Vec::new();
        let mut at = i;
        while at != 0 {
            names.push(p.functions[p.nodes[at].func.0 as usize].name.as_str());
            at = p.nodes[at].parent.map_or(0, |x| x.0 as usize);
        }
        names.reverse();
        names == path
    });
    NodeId(found.unwrap_or_else(|| panic!("no node {path:?}")) as u32)
}

const RED: &[&str] = &["main", "make_red_widget", "make_widget"];
const BLUE: &[&str] = &["main", "make_blue_widget", "make_widget"];

/// The widget example with libmprof's figures: the red widgets live at the peak beside
/// 100 blue ones, the blue ones all temporary, 3 red ones definitely lost.
fn with_figures() -> Profile {
    let mut p = common::widgets();
    let (red, blue) = (node_of(&p, RED), node_of(&p, BLUE));
    p.figures = vec![
        Figure { name: "memory at peak".into(), rows: vec![(red, 5019, 5019 * 204), (blue, 100, 100 * 204)] },
        Figure { name: "temporary allocations".into(), rows: vec![(blue, 4981, 4981 * 204)] },
        Figure { name: "definitely lost".into(), rows: vec![(red, 3, 612)] },
    ];
    p
}

#[test]
fn figures_round_trip_print_as_tables_and_export() {
    let p = with_figures();
    assert_eq!(p.validate(), Ok(()));
    let back = Profile::read(&bytes_of(&p)).unwrap();
    assert_eq!(back, p);
    let text = render_report(&back, &ReportOptions { tables: Tables::LEAK, ..ReportOptions::default() });
    for (title, row) in [
        ("Memory at peak table: by path (last 5 callers)", "5019 1023876 (98) || > main > make_red_widget > make_widget"),
        ("Memory at peak table", "100   20400  (1) || > main > make_blue_widget > make_widget"),
        ("Temporary allocations table", "4981 1016124 (99) || > main > make_blue_widget > make_widget"),
        ("Definitely lost table", "3   612 (99) || > main > make_red_widget > make_widget"),
    ] {
        let table = text.split(title).nth(1).unwrap_or_else(|| panic!("no {title} in {text}"));
        let table = table.split("table:").next().unwrap_or_default();
        assert!(table.contains(row), "{row:?} not in {title}:\n{text}");
    }
    // The peak table ranks by bytes: red before blue.
    let peak = text.split("Memory at peak table").nth(1).unwrap();
    assert!(peak.find("make_red_widget").unwrap() < peak.find("make_blue_widget").unwrap(), "{text}");
    // Without figures, no such table (existing reports are unchanged).
    let plain = render_report(&common::widgets(), &ReportOptions::default());
    assert!(!plain.contains("Memory at peak") && !plain.contains("lost table"), "{plain}");
    let json = formats::json(&p).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let figures = doc["figures"].as_array().expect("figures in the JSON");
    assert_eq!(figures[0]["name"], "memory at peak");
    assert_eq!(figures[0]["rows"][0]["count"], 5019);
    assert_eq!(figures[2]["rows"][0]["bytes"], 612);
    let plain_json = formats::json(&common::widgets()).unwrap();
    assert!(!plain_json.contains("\"figures\""));
}

#[test]
fn figures_merge_by_name_and_path() {
    // Each half has figures on its own paths; the second half's nodes come in another
    // order, so the merge must map them by path.
    let mut red = half(true);
    let red_node = node_of(&red, RED);
    red.figures = vec![
        Figure { name: "memory at peak".into(), rows: vec![(red_node, 7, 700)] },
        Figure { name: "definitely lost".into(), rows: vec![(red_node, 1, 204)] },
    ];
    let mut blue = half(false);
    let blue_node = node_of(&blue, BLUE);
    blue.figures = vec![Figure { name: "memory at peak".into(), rows: vec![(blue_node, 2, 408)] }];
    let mut merged = Profile::read(&bytes_of(&blue)).unwrap();
    merged.merge(&Profile::read(&bytes_of(&red)).unwrap()).unwrap();
    assert_eq!(merged.validate(), Ok(()));
    let figure = |p: &Profile, name: &str, path: &[&str]| {
        let node = node_of(p, path);
        let f = p.figures.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name}"));
        f.rows.iter().find(|r| r.0 == node).map(|r| (r.1, r.2))
    };
    assert_eq!(figure(&merged, "memory at peak", RED), Some((7, 700)));
    assert_eq!(figure(&merged, "memory at peak", BLUE), Some((2, 408)));
    assert_eq!(figure(&merged, "definitely lost", RED), Some((1, 204)));
    assert_eq!(merged.figures.len(), 2, "figures are unified by name");
    // Merged with itself, every figure doubles on the same rows.
    let mut twice = merged.clone();
    twice.merge(&merged).unwrap();
    assert_eq!(figure(&twice, "memory at peak", RED), Some((14, 1400)));
    assert_eq!(figure(&twice, "definitely lost", RED), Some((2, 408)));
    assert_eq!(twice.figures[0].rows.len(), 2);
}

#[test]
fn inconsistent_figures_are_refused_on_read_and_by_validate() {
    let nodes = with_figures().nodes.len() as u32;
    let mut cases = Vec::new();
    let mut out_of_range = with_figures();
    out_of_range.figures[0].rows[0].0 = NodeId(nodes);
    cases.push(out_of_range);
    let mut twice = with_figures();
    let row = twice.figures[0].rows[0];
    twice.figures[0].rows.push(row);
    cases.push(twice);
    let mut same_name = with_figures();
    same_name.figures[1].name = "memory at peak".into();
    cases.push(same_name);
    let mut unnamed = with_figures();
    unnamed.figures[2].name.clear();
    cases.push(unnamed);
    for p in cases {
        assert!(p.validate().is_err(), "{:?}", p.figures);
        let err = error_of(&bytes_of(&p));
        assert!(err.starts_with("corrupt profile: at offset"), "{err}");
        assert!(err.contains("figure"), "{err}");
    }
    // A FIGURES section claiming more rows than bytes left is refused before reserving:
    // the widgets file without figures, then a hand-made section (one figure "x" with
    // 2^28 - 1 rows) before the end marker.
    let mut bytes = bytes_of(&common::widgets());
    bytes.truncate(bytes.len() - 2);
    bytes.extend_from_slice(&[14, 8, 1, 1, b'x', 0xff, 0xff, 0xff, 0x7f, 0]);
    bytes.extend_from_slice(&[0, 0]);
    let err = error_of(&bytes);
    assert!(err.contains("the number of rows of figure 0"), "{err}");
}

#[test]
fn corrupt_figures_are_errors_or_valid_profiles_never_panics() {
    corruptions_are_errors_or_valid(&bytes_of(&with_figures()), |p| {
        let _ = render_report(p, &ReportOptions::default());
        let mut twice = p.clone();
        let _ = twice.merge(p);
    });
}
