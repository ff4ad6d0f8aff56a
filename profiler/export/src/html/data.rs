//! The HTML report's embedded data apart from the tables: the summary, the memory
//! samples and the flame-graph trees, as JSON (see `json.rs` for why by hand).
//!
//! A flame-graph tree is the profile's distinct stacks (`stacks.rs`) sent as columns:
//! per stack its distance to its parent (`up`: its index minus its parent's), its
//! name's index and its own value of each quantity, so
//! every stack prefix is sent once, however many stacks share it. Stacks are renumbered
//! in depth-first order with children in name order (the page draws children in index
//! order), and stacks whose subtree counts nothing in every quantity are left out.
//! Everything is one pass or one explicit-stack walk over the stacks: linear in the tree
//! and never recursive, whatever its depth. Tests: `tools/mprof/tests/html_report.rs`.

use rustc_hash::FxHashMap;

use mprof_engine::profile::Profile;
use mprof_engine::reduce::Reduction;

use super::json;
use crate::stacks::FoldedValue;
use crate::stacks::{Stacks, folded_name};

/// `"summary":{...},"categories":[...],"metadata":[...]`.
pub fn summary(out: &mut String, p: &Profile, r: Option<&Reduction>) {
    let total = |f: fn(&mprof_engine::profile::Counters) -> u64| r.map_or(0, |r| r.total_of(f));
    let program = p.metadata.iter().find(|(k, _)| k == "program").map(|(_, v)| v.as_str());
    let peak = p.samples.iter().max_by_key(|s| (s.live_bytes, std::cmp::Reverse(s.time_ns)));
    let duration = p
        .samples
        .iter()
        .map(|s| s.time_ns)
        .max()
        .or_else(|| p.exec.time.as_ref().map(|t| t.clock.elapsed_ns));
    out.push('{');
    json::key(out, "language", true);
    json::string(out, p.language.name());
    json::key(out, "program", false);
    json::opt_string(out, program);
    for (name, value) in [
        ("allocs", total(|c| c.allocs)),
        ("bytes", total(|c| c.bytes)),
        ("frees", total(|c| c.frees)),
        ("freed", total(|c| c.freed_bytes)),
        ("unattributed", r.map_or(0, |r| r.unattributed.iter().map(|c| c.bytes).sum())),
        ("cycles", r.map_or(0, |r| r.cycles as u64)),
        ("samples", p.samples.len() as u64),
        ("functions", p.functions.len() as u64),
        ("nodes", p.nodes.len() as u64),
    ] {
        json::key(out, name, false);
        out.push_str(&value.to_string());
    }
    json::key(out, "peak", false);
    match peak {
        Some(s) => json::numbers(out, [s.live_bytes, s.time_ns]),
        None => out.push_str("null"),
    }
    json::key(out, "duration_ns", false);
    match duration {
        Some(d) => out.push_str(&d.to_string()),
        None => out.push_str("null"),
    }
    json::key(out, "categories", false);
    out.push('[');
    for (i, c) in p.scheme.categories.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json::strings(out, [c.letter.to_string().as_str(), c.name.as_str()]);
    }
    out.push(']');
    json::key(out, "metadata", false);
    out.push('[');
    for (i, (k, v)) in p.metadata.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json::strings(out, [k.as_str(), v.as_str()]);
    }
    out.push_str("]}");
}

/// Samples the page receives at most: the chart is at most a few thousand pixels
/// wide, and libmprof samples every 10 ms however long the run (ten hours: 3.6 million).
pub const MAX_SAMPLES: usize = 10_000;

/// `{"t":[...],"live":[...],"alloc":[...],"cats":[[...],...]}`: the memory samples in
/// time order (`cats`, live bytes per category, only when the recorder split them). Past
/// `MAX_SAMPLES`, time is cut into `MAX_SAMPLES / 2` equal spans and each keeps its
/// lowest and highest live sample, so the chart's shape and its peak stay exact.
pub fn samples(out: &mut String, p: &Profile) {
    let mut order: Vec<usize> = (0..p.samples.len()).collect();
    order.sort_by_key(|&i| p.samples[i].time_ns);
    if order.len() > MAX_SAMPLES {
        let spans = (MAX_SAMPLES / 2) as u128;
        let (first, last) = (p.samples[order[0]].time_ns, p.samples[order[order.len() - 1]].time_ns);
        let width = u128::from(last - first) + 1;
        let span_of = |i: usize| (u128::from(p.samples[i].time_ns - first) * spans / width) as usize;
        let mut kept: Vec<usize> = Vec::with_capacity(MAX_SAMPLES);
        let mut at = 0;
        while at < order.len() {
            let span = span_of(order[at]);
            let (mut low, mut high) = (order[at], order[at]);
            while at < order.len() && span_of(order[at]) == span {
                let i = order[at];
                if p.samples[i].live_bytes < p.samples[low].live_bytes {
                    low = i;
                }
                if p.samples[i].live_bytes > p.samples[high].live_bytes {
                    high = i;
                }
                at += 1;
            }
            let (a, b) = if p.samples[low].time_ns <= p.samples[high].time_ns { (low, high) } else { (high, low) };
            kept.push(a);
            if b != a {
                kept.push(b);
            }
        }
        order = kept;
    }
    out.push('{');
    json::key(out, "t", true);
    json::numbers(out, order.iter().map(|&i| p.samples[i].time_ns));
    json::key(out, "live", false);
    json::numbers(out, order.iter().map(|&i| p.samples[i].live_bytes));
    json::key(out, "alloc", false);
    json::numbers(out, order.iter().map(|&i| p.samples[i].allocated_bytes));
    // Live bytes per category, one array per category of the scheme, when split.
    if p.samples.iter().any(|s| s.live_by_category.iter().any(|&b| b != 0)) {
        json::key(out, "cats", false);
        out.push('[');
        for c in 0..mprof_engine::model::SAMPLE_CATEGORIES {
            if c > 0 {
                out.push(',');
            }
            json::numbers(out, order.iter().map(|&i| p.samples[i].live_by_category[c]));
        }
        out.push(']');
    }
    out.push('}');
}

/// One flame-graph tree of `p` (a memory profile or a time view), with one column of
/// own values per `(key, quantity)`; `null` when nothing is counted at all.
pub fn tree(out: &mut String, p: &Profile, quantities: &[(&str, FoldedValue)]) {
    let Some(&(_, first)) = quantities.first() else {
        out.push_str("null");
        return;
    };
    let stacks = Stacks::new(p, first);
    let values: Vec<Vec<u64>> =
        quantities.iter().map(|&(_, q)| if q == first { stacks.value.clone() } else { stacks.values_of(p, q) }).collect();
    let n = stacks.parent.len();
    // A stack is kept when its subtree counts something in some quantity (parents come
    // before their children, so one reverse sweep sums subtrees).
    let mut keep = vec![false; n];
    for i in (0..n).rev() {
        keep[i] |= values.iter().any(|v| v[i] > 0);
        if i > 0 && keep[i] {
            keep[stacks.parent[i] as usize] = true;
        }
    }
    if !keep[0] {
        out.push_str("null");
        return;
    }
    // Depth-first order, children in name order, on an explicit stack.
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut new_index = vec![u32::MAX; n];
    let mut work: Vec<u32> = vec![0];
    while let Some(id) = work.pop() {
        new_index[id as usize] = order.len() as u32;
        order.push(id);
        work.extend(stacks.children[id as usize].iter().rev().filter(|&&c| keep[c as usize]));
    }
    // Names used, renumbered in order of first use; each with the file:line of the
    // first function of that name that has one.
    let mut location: FxHashMap<String, String> = FxHashMap::default();
    for f in &p.functions {
        if let Some(file) = &f.file {
            let at = match f.line {
                Some(line) => format!("{file}:{line}"),
                None => file.clone(),
            };
            location.entry(folded_name(&f.name)).or_insert(at);
        }
    }
    let mut name_index: FxHashMap<u32, u32> = FxHashMap::default();
    let mut names: Vec<u32> = Vec::new();
    let name_of: Vec<u32> = order
        .iter()
        .map(|&id| {
            let name = stacks.name[id as usize];
            *name_index.entry(name).or_insert_with(|| {
                names.push(name);
                names.len() as u32 - 1
            })
        })
        .collect();
    out.push('{');
    json::key(out, "names", true);
    json::strings(out, names.iter().map(|&k| stacks.names[k as usize].as_str()));
    json::key(out, "locs", false);
    json::strings(
        out,
        names.iter().map(|&k| location.get(&stacks.names[k as usize]).map_or("", String::as_str)),
    );
    // Each stack's distance to its parent rather than the parent's index: in
    // depth-first order a first child is 1 from its parent, so most distances are a
    // digit or two where indices of a large tree take six or seven.
    json::key(out, "up", false);
    json::numbers(
        out,
        order.iter().enumerate().map(|(i, &id)| {
            if id == 0 { 0 } else { (i as u32 - new_index[stacks.parent[id as usize] as usize]) as u64 }
        }),
    );
    json::key(out, "name", false);
    json::numbers(out, name_of.iter().map(|&k| k as u64));
    for ((key, _), v) in quantities.iter().zip(&values) {
        json::key(out, key, false);
        json::numbers(out, order.iter().map(|&id| v[id as usize]));
    }
    out.push('}');
}
