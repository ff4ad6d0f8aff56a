//! `mprof diff BASE NEW` on two runs whose differences are known by construction: per
//! function (self, total, kept, allocations) and per calling context, as tables, JSON,
//! two-column folded stacks and a differential flame graph.

use mprof_export::diff::diff;
use mprof_engine::*;

mod common;

/// main -> f allocates `f` bytes in one block (kept), main -> g `g` bytes (freed),
/// main -> h `h` bytes (kept); a zero makes no allocation.
fn run(f: u64, g: u64, h: u64) -> Profile {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    let [main, fs, gs, hs] = ["main", "f", "g", "h"].map(|n| m.function(FunctionInfo::named(n)));
    for (func, bytes, freed) in [(fs, f, false), (gs, g, true), (hs, h, false)] {
        if bytes > 0 {
            let node = m.path(&[main, func]);
            m.record_alloc(node, 0, bytes, Bin::Size(bytes));
            if freed {
                m.record_free(node, 0, bytes, Bin::Size(bytes));
            }
        }
    }
    m.to_profile()
}

#[test]
fn changes_per_function_and_context_are_known_by_construction() {
    let d = diff(&run(100, 50, 0), &run(300, 0, 20)).unwrap();
    assert_eq!(d.totals, [(150, 320), (2, 2), (100, 320)]);
    let f = |name: &str| d.functions.iter().find(|x| x.name == name).cloned().unwrap_or_default();
    assert_eq!((f("f").self_bytes, f("f").total_bytes, f("f").kept_bytes, f("f").allocs), ((100, 300), (100, 300), (100, 300), (1, 1)));
    assert_eq!((f("g").total_bytes, f("g").kept_bytes, f("g").allocs), ((50, 0), (0, 0), (1, 0)));
    assert_eq!((f("h").total_bytes, f("h").kept_bytes), ((0, 20), (0, 20)));
    assert_eq!((f("main").self_bytes, f("main").total_bytes), ((0, 0), (150, 320)));
    let order: Vec<&str> = d.functions.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(order, ["f", "main", "g", "h"], "ranked by the size of the change in total bytes");
    let contexts: Vec<(String, (u64, u64))> = d.contexts.iter().map(|c| (c.path.join(">"), c.bytes)).collect();
    assert_eq!(contexts, [("main>f".to_string(), (100, 300)), ("main>g".into(), (50, 0)), ("main>h".into(), (0, 20))]);
    // Identical runs: nothing changed.
    let same = diff(&run(100, 50, 0), &run(100, 50, 0)).unwrap();
    assert!(same.functions.is_empty() && same.contexts.iter().all(|c| !c.changed()));
}

#[test]
fn the_command_prints_tables_json_folded_stacks_and_a_flame_graph() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    for (name, p) in [("base.mprof", run(100, 50, 0)), ("new.mprof", run(300, 0, 20))] {
        let mut bytes = Vec::new();
        p.write(&mut bytes).unwrap();
        std::fs::write(path(name), bytes).unwrap();
    }
    let (code, text, err) = common::mprof(&["diff", &path("base.mprof"), &path("new.mprof"), "--flamegraph", &path("d.svg")]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("bytes allocated: 150 -> 320 (+170, +113.3%)"), "{text}");
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
    assert!(rows.contains(&vec!["+200", "+200.0%", "+200", "+200", "0", "f"]), "{text}");
    assert!(rows.contains(&vec!["-50", "-100.0%", "50", "0", "0", "main", ">", "g"]), "{text}");
    assert!(rows.contains(&vec!["+20", "new", "0", "20", "+20", "main", ">", "h"]), "{text}");
    assert!(std::fs::read_to_string(path("d.svg")).unwrap().contains("<svg"));
    let (code, folded, _) = common::mprof(&["diff", &path("base.mprof"), &path("new.mprof"), "--format", "folded"]);
    assert_eq!(code, 0);
    assert_eq!(folded, "main;f 100 300\nmain;g 50 0\nmain;h 0 20\n");
    let (code, json, _) = common::mprof(&["diff", &path("base.mprof"), &path("new.mprof"), "--format", "json"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["totals"]["bytes"]["change"], 170);
    assert_eq!(doc["functions"][0]["name"], "f");
    let (code, _, err) = common::mprof(&["diff", &path("base.mprof"), &path("new.mprof"), "--format", "xml"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown diff format `xml`"), "{err}");
}
