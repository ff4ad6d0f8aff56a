//! Reduction numbers checked directly (not through printed text), and merge checked
//! against recording both event streams into one monitor.

mod common;

use mprof_engine::reduce::ReduceOptions;
use mprof_display::*;
use mprof_engine::*;

fn options(merge_cycles: bool) -> ReduceOptions {
    ReduceOptions { merge_cycles, call_sites: false, path_depth: 5 }
}

fn entity<'a>(r: &'a Reduction, name: &str) -> &'a reduce::Entity {
    r.entities.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("no entity {name}"))
}

fn edge_bytes(r: &Reduction, from: &str, to: &str) -> u64 {
    r.edges
        .iter()
        .filter(|e| r.entities[e.caller].name == from && r.entities[e.callee].name == to)
        .map(|e| e.bytes())
        .sum()
}

#[test]
fn figure7_credits_each_edge_and_function_once_per_path() {
    let r = reduce(&common::figure7(), &options(false)).unwrap();
    assert_eq!(edge_bytes(&r, "F", "G"), 10, "not 20 as caller/callee pairs would say");
    assert_eq!(edge_bytes(&r, "G", "F"), 10);
    assert_eq!(edge_bytes(&r, "main", "F"), 10);
    for name in ["main", "F", "G"] {
        assert_eq!(entity(&r, name).total_bytes(), 10, "{name}");
    }
    assert_eq!(entity(&r, "G").self_bytes(), 10);
    assert_eq!(r.cycles, 1);
    assert_eq!(entity(&r, "<cycle 1>").total_bytes(), 10);
}

#[test]
fn paper_example_numbers() {
    let r = reduce(&common::widgets(), &options(false)).unwrap();
    assert_eq!(edge_bytes(&r, "make_red_widget", "make_widget"), 1_023_876);
    assert_eq!(edge_bytes(&r, "make_blue_widget", "make_widget"), 1_016_124);
    let make = entity(&r, "make_widget");
    assert_eq!((make.self_bytes(), make.called), (2_040_000, 10_000));
    assert_eq!(r.kept_paths.len(), 1);
    assert_eq!((r.kept_paths[0].kept_allocs, r.kept_paths[0].kept_bytes), (5019, 1_023_876));
    assert_eq!(r.cycles, 0);
}

#[test]
fn merged_cycles_hide_members_and_keep_totals() {
    let p = common::three_cycle();
    let r = reduce(&p, &options(true)).unwrap();
    let cycle = r.entities.iter().find(|e| e.is_cycle).unwrap();
    assert_eq!(cycle.name, "<cycle 1> (a b c)");
    assert_eq!(cycle.total_bytes(), 112);
    assert_eq!(cycle.self_bytes(), 48);
    assert_eq!(entity(&r, "a").total_bytes(), 0, "members are folded into the cycle");
    assert_eq!(entity(&r, "leaf").total_bytes(), 164);
}

/// A deterministic generator of monitor events.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Random paths over 12 functions (with recursion and cycles), random sizes, some frees.
fn events(seed: u64, count: usize) -> Vec<(Vec<u64>, u64, bool)> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let depth = 1 + rng.next(7) as usize;
            let path = (0..depth).map(|_| rng.next(12)).collect();
            (path, rng.next(3000), rng.next(3) == 0)
        })
        .collect()
}

fn record(m: &mut Monitor, evs: &[(Vec<u64>, u64, bool)]) {
    for (path, size, freed) in evs {
        let node = path.iter().fold(NodeId::ROOT, |node, &f| {
            let func = m.function(FunctionInfo::named(format!("f{f}")));
            m.child(node, func, f)
        });
        let cat = CategoryScheme::c_category_of_size(*size);
        m.record_alloc(node, cat, *size, Bin::Size(*size));
        if *freed {
            m.record_free(node, cat, *size, Bin::Size(*size));
        }
    }
}

#[test]
fn merging_files_equals_recording_everything_in_one_monitor() {
    for seed in 1..6u64 {
        let (a, b) = (events(seed, 400), events(seed * 7919, 300));
        let new = || Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
        let (mut ma, mut mb, mut both) = (new(), new(), new());
        record(&mut ma, &a);
        record(&mut mb, &b);
        record(&mut both, &a);
        record(&mut both, &b);
        let read = |m: &Monitor| {
            let mut bytes = Vec::new();
            m.to_profile().write(&mut bytes).unwrap();
            Profile::read(&bytes).unwrap()
        };
        let mut merged = read(&ma);
        merged.merge(&read(&mb)).unwrap();
        for merge_cycles in [false, true] {
            let o = ReportOptions { merge_cycles, ..ReportOptions::default() };
            assert_eq!(render_report(&merged, &o), render_report(&read(&both), &o), "seed {seed}");
        }
        // Every allocation's bytes are in exactly one node and one bin.
        let r = reduce(&merged, &options(false)).unwrap();
        let expected: u64 = a.iter().chain(&b).map(|e| e.1).sum();
        assert_eq!(r.total_of(|c| c.bytes), expected);
        assert_eq!(merged.bins.iter().map(|b| b.counters.bytes).sum::<u64>(), expected);
    }
}
