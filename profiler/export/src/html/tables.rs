//! The rows of the HTML report's tables, as JSON: the paper's four tables (memory
//! leak/kept with the figure tables in its layout, allocation bins, direct allocation,
//! allocation call graph) and the heap errors, all from one `Reduction`, so the page
//! shows the numbers `mprof report` prints.
//!
//! Functions are sent once (`entities`: names and labels) and rows name them by index,
//! which is also the anchor of their call-graph entry; a path step that names no
//! entity is sent as its text. The call graph's edges are columns (caller, callee,
//! bytes, calls) from which the page builds each entry's callers and callees. Every
//! part is linear in the reduction's size. Tests: `tools/mprof/tests/html_report.rs`.

use rustc_hash::FxHashMap;

use mprof_engine::profile::{BinKey, Counters, Profile};
use mprof_engine::reduce::{PartialPath, Reduction};
use mprof_engine::scheme::LARGEST_SIZE_BIN;

use super::json;

/// `{"entities":...,"kept":...,"figures":...,"bins":...,"direct":...,"graph":...,"errors":...}`.
pub fn tables(out: &mut String, p: &Profile, r: &Reduction) {
    let mut by_name: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, e) in r.entities.iter().enumerate() {
        if !e.is_cycle {
            by_name.entry(e.name.as_str()).or_insert(i);
        }
    }
    out.push('{');
    json::key(out, "entities", true);
    entities(out, r);
    json::key(out, "kept", false);
    paths(out, &r.kept_paths, &by_name);
    json::key(out, "figures", false);
    out.push('[');
    for (i, (name, rows)) in r.figures.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        json::key(out, "name", true);
        json::string(out, name);
        json::key(out, "rows", false);
        paths(out, rows, &by_name);
        out.push('}');
    }
    out.push(']');
    json::key(out, "bins", false);
    bins(out, p);
    json::key(out, "direct", false);
    direct(out, r);
    json::key(out, "graph", false);
    graph(out, r);
    json::key(out, "errors", false);
    out.push('[');
    for (i, e) in r.errors.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        json::string(out, e.kind.describe());
        out.push_str(&format!(",{},", e.count));
        json::string(out, &format!("{:#x}", e.address));
        out.push(',');
        path(out, &e.path, &by_name);
        out.push(']');
    }
    out.push_str("]}");
}

/// Names and labels (`f <cycle 1>` for a member of a cycle) of the call-graph entities.
fn entities(out: &mut String, r: &Reduction) {
    out.push('{');
    json::key(out, "name", true);
    json::strings(out, r.entities.iter().map(|e| e.name.as_str()));
    json::key(out, "label", false);
    let labels: Vec<String> = r
        .entities
        .iter()
        .map(|e| match (e.is_cycle, e.cycle) {
            (false, Some(c)) => format!("{} <cycle {c}>", e.name),
            _ => e.name.clone(),
        })
        .collect();
    json::strings(out, labels.iter().map(String::as_str));
    out.push('}');
}

/// `[complete, [step...]]`, or `[complete, [step...], "file.c:123"]` when the path
/// ends at a known allocation site (C): each step an entity index, or its text.
fn path(out: &mut String, pp: &PartialPath, by_name: &FxHashMap<&str, usize>) {
    out.push_str(if pp.complete { "[1,[" } else { "[0,[" });
    for (i, step) in pp.steps.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match by_name.get(step.name.as_str()) {
            Some(e) => out.push_str(&e.to_string()),
            None => json::string(out, &step.name),
        }
    }
    out.push(']');
    if let Some(site) = pp.site() {
        out.push(',');
        json::string(out, &site);
    }
    out.push(']');
}

/// Rows `[count, bytes, path]`, largest first as the reduction gives them.
fn paths(out: &mut String, rows: &[PartialPath], by_name: &FxHashMap<&str, usize>) {
    out.push('[');
    for (i, pp) in rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("[{},{},", pp.kept_allocs, pp.kept_bytes));
        path(out, pp, by_name);
        out.push(']');
    }
    out.push(']');
}

/// Rows `[label, size or null, allocs, bytes, frees, kept bytes, types]`: the size
/// orders C bins as the text table does (the shared bin of larger objects last).
fn bins(out: &mut String, p: &Profile) {
    out.push('[');
    for (i, b) in p.bins.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let (label, size) = match b.key {
            BinKey::Size(s) => (s.to_string(), Some(s)),
            BinKey::Larger => (format!("> {LARGEST_SIZE_BIN}"), Some(LARGEST_SIZE_BIN + 1)),
            BinKey::Type(t) => (p.types.get(t.0 as usize).cloned().unwrap_or_else(|| "?".into()), None),
        };
        out.push('[');
        json::string(out, &label);
        out.push_str(&match size {
            Some(s) => format!(",{s}"),
            None => ",null".into(),
        });
        let c = &b.counters;
        out.push_str(&format!(",{},{},{},{},", c.allocs, c.bytes, c.frees, c.kept_bytes()));
        json::string(out, &b.labels.join(" "));
        out.push(']');
    }
    out.push(']');
}

fn per_category(out: &mut String, cs: &[Counters], f: fn(&Counters) -> u64) {
    json::numbers(out, cs.iter().map(f));
}

/// `{"rows":[[entity, bytes per category, kept per category, allocs]...], "outside": ...}`:
/// the functions that allocate directly, and what was allocated outside any function.
fn direct(out: &mut String, r: &Reduction) {
    let row = |out: &mut String, cs: &[Counters]| {
        per_category(out, cs, |c| c.bytes);
        out.push(',');
        per_category(out, cs, Counters::kept_bytes);
        out.push_str(&format!(",{}", cs.iter().map(|c| c.allocs).sum::<u64>()));
    };
    out.push('{');
    json::key(out, "rows", true);
    out.push('[');
    let mut first = true;
    for (i, e) in r.entities.iter().enumerate() {
        if e.is_cycle || !e.self_counters.iter().any(|c| c.allocs > 0 || c.bytes > 0) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&format!("[{i},"));
        row(out, &e.self_counters);
        out.push(']');
    }
    out.push(']');
    json::key(out, "outside", false);
    if r.unattributed.iter().any(|c| c.allocs > 0) {
        out.push('[');
        row(out, &r.unattributed);
        out.push(']');
    } else {
        out.push_str("null");
    }
    json::key(out, "totals", false);
    out.push('[');
    row(out, &r.totals);
    out.push_str("]}");
}

/// The call graph: the entities that allocate (self or below) with their numbers,
/// and the edges between them. `down` marks the edges listed among their caller's
/// descendants (gprof hides a cycle from its members' lists of descendants when
/// cycles are not merged), and `outCalls` is each entity's calls to others, the
/// denominator of its callers' lines.
fn graph(out: &mut String, r: &Reduction) {
    // The text report's order, so an entry's index is the `[index]` it prints.
    let mut shown: Vec<usize> = (0..r.entities.len())
        .filter(|&e| r.entities[e].total.iter().any(|c| c.allocs > 0 || c.bytes > 0))
        .collect();
    shown.sort_by(|&a, &b| {
        let (ea, eb) = (&r.entities[a], &r.entities[b]);
        eb.total_bytes().cmp(&ea.total_bytes()).then_with(|| ea.name.cmp(&eb.name)).then(a.cmp(&b))
    });
    let mut is_shown = vec![false; r.entities.len()];
    for &e in &shown {
        is_shown[e] = true;
    }
    let edges: Vec<_> = r.edges.iter().filter(|e| is_shown[e.caller] && is_shown[e.callee]).collect();
    let hidden = |callee: usize| !r.cycles_merged && r.entities[callee].is_cycle;
    let mut out_calls = vec![0u64; r.entities.len()];
    for e in &r.edges {
        if !hidden(e.callee) {
            out_calls[e.caller] = out_calls[e.caller].saturating_add(e.calls);
        }
    }
    let ents = |f: &dyn Fn(usize) -> u64| shown.iter().map(|&e| f(e)).collect::<Vec<u64>>();
    out.push('{');
    json::key(out, "shown", true);
    json::numbers(out, shown.iter().map(|&e| e as u64));
    json::key(out, "self", false);
    json::numbers(out, ents(&|e| r.entities[e].self_bytes()));
    json::key(out, "total", false);
    json::numbers(out, ents(&|e| r.entities[e].total_bytes()));
    json::key(out, "called", false);
    json::numbers(out, ents(&|e| r.entities[e].called));
    json::key(out, "recursion", false);
    json::numbers(out, ents(&|e| r.entities[e].recursion));
    json::key(out, "cycle", false);
    json::numbers(out, ents(&|e| r.entities[e].cycle.map_or(0, |c| c as u64)));
    json::key(out, "outCalls", false);
    json::numbers(out, ents(&|e| out_calls[e]));
    json::key(out, "caller", false);
    json::numbers(out, edges.iter().map(|e| e.caller as u64));
    json::key(out, "callee", false);
    json::numbers(out, edges.iter().map(|e| e.callee as u64));
    json::key(out, "bytes", false);
    json::numbers(out, edges.iter().map(|e| e.bytes()));
    json::key(out, "calls", false);
    json::numbers(out, edges.iter().map(|e| e.calls));
    json::key(out, "down", false);
    json::numbers(out, edges.iter().map(|e| u64::from(!hidden(e.callee))));
    out.push('}');
}
