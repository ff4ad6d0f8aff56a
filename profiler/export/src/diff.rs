//! `mprof diff BASE NEW`: what changed between two profiles, for finding regressions.
//!
//! Per function, the change in bytes allocated directly (self) and in total (with what
//! it called, each path counted once, as the call graph counts it), in bytes kept, and
//! in allocations; per calling context (the distinct stacks, matched by their function
//! names from the top down, so the two runs need not share function ids), the change in
//! bytes allocated and kept. Rows are ranked by the size of the change. The same rows
//! export as JSON, and the contexts as two-column folded stacks (`stack base new`),
//! which inferno draws as a differential flame graph (red grew, blue shrank).
//!
//! Functions and contexts are matched by name only: a function renamed between the
//! runs shows as one that vanished and one that appeared.

use std::fmt::Write as _;
use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde_json::json;

use mprof_engine::profile::{Counters, Profile};
use mprof_engine::reduce::{ReduceOptions, reduce};

use crate::stacks::FoldedValue;
use crate::stacks::Stacks;

/// One function's numbers in both runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionDiff {
    pub name: String,
    /// (base, new) bytes allocated by the function itself.
    pub self_bytes: (u64, u64),
    /// (base, new) bytes allocated by it and what it called.
    pub total_bytes: (u64, u64),
    /// (base, new) bytes it allocated itself that were still kept at the end.
    pub kept_bytes: (u64, u64),
    /// (base, new) allocations it made itself.
    pub allocs: (u64, u64),
}

/// One calling context's numbers in both runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextDiff {
    /// Function names, outermost first.
    pub path: Vec<String>,
    /// (base, new) bytes allocated in exactly this context.
    pub bytes: (u64, u64),
    /// (base, new) bytes allocated there and still kept at the end.
    pub kept_bytes: (u64, u64),
}

impl ContextDiff {
    /// Whether the two runs differ in this context.
    pub fn changed(&self) -> bool {
        self.bytes.0 != self.bytes.1 || self.kept_bytes.0 != self.kept_bytes.1
    }
}

/// Everything `mprof diff` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    /// (base, new) totals: bytes, allocations, bytes kept.
    pub totals: [(u64, u64); 3],
    /// Functions whose numbers changed, largest change in total bytes first.
    pub functions: Vec<FunctionDiff>,
    /// Every context that allocated in either run, largest change in bytes first (the
    /// tables and JSON show those that changed; the flame graph draws them all).
    pub contexts: Vec<ContextDiff>,
}

fn change(pair: (u64, u64)) -> i128 {
    pair.1 as i128 - pair.0 as i128
}

fn sum(cs: &[Counters], f: impl Fn(&Counters) -> u64) -> u64 {
    cs.iter().map(f).fold(0u64, u64::saturating_add)
}

/// Compares two profiles (both must be valid; the scheme may differ).
pub fn diff(base: &Profile, new: &Profile) -> Result<Diff, String> {
    let options = ReduceOptions { merge_cycles: false, call_sites: false, path_depth: 1 };
    let rb = reduce(base, &options).map_err(|e| format!("base profile: {e}"))?;
    let rn = reduce(new, &options).map_err(|e| format!("new profile: {e}"))?;
    let mut functions: FxHashMap<String, FunctionDiff> = FxHashMap::default();
    for (side, r) in [(0, &rb), (1, &rn)] {
        for e in r.entities.iter().filter(|e| !e.is_cycle) {
            let f = functions.entry(e.name.clone()).or_insert_with(|| FunctionDiff { name: e.name.clone(), ..FunctionDiff::default() });
            let set = |pair: &mut (u64, u64), v: u64| if side == 0 { pair.0 += v } else { pair.1 += v };
            set(&mut f.self_bytes, e.self_bytes());
            set(&mut f.total_bytes, e.total_bytes());
            set(&mut f.kept_bytes, sum(&e.self_counters, Counters::kept_bytes));
            set(&mut f.allocs, sum(&e.self_counters, |c| c.allocs));
        }
    }
    let mut functions: Vec<FunctionDiff> = functions
        .into_values()
        .filter(|f| f.self_bytes.0 != f.self_bytes.1 || f.total_bytes.0 != f.total_bytes.1 || f.kept_bytes.0 != f.kept_bytes.1 || f.allocs.0 != f.allocs.1)
        .collect();
    functions.sort_by(|a, b| {
        change(b.total_bytes).abs().cmp(&change(a.total_bytes).abs()).then_with(|| a.name.cmp(&b.name))
    });
    let contexts = context_diffs(base, new);
    let totals = [
        (sum(&rb.totals, |c| c.bytes), sum(&rn.totals, |c| c.bytes)),
        (sum(&rb.totals, |c| c.allocs), sum(&rn.totals, |c| c.allocs)),
        (sum(&rb.totals, Counters::kept_bytes), sum(&rn.totals, Counters::kept_bytes)),
    ];
    Ok(Diff { totals, functions, contexts })
}

/// Both profiles' distinct stacks merged by name path, with each side's values.
fn context_diffs(base: &Profile, new: &Profile) -> Vec<ContextDiff> {
    // Merged tree: (parent, name) -> id; values per side.
    let mut names: Vec<String> = Vec::new();
    let mut parent: Vec<u32> = vec![0];
    let mut name_of: Vec<u32> = vec![0];
    let mut values: Vec<[(u64, u64); 2]> = vec![[(0, 0); 2]];
    let mut ids: FxHashMap<(u32, String), u32> = FxHashMap::default();
    for (side, p) in [(0usize, base), (1, new)] {
        let bytes = Stacks::new(p, FoldedValue::Bytes);
        let kept = bytes.values_of(p, FoldedValue::KeptBytes);
        let mut merged = vec![0u32; bytes.parent.len()];
        for i in 1..bytes.parent.len() {
            let name = bytes.names[bytes.name[i] as usize].clone();
            let up = merged[bytes.parent[i] as usize];
            let id = *ids.entry((up, name.clone())).or_insert_with(|| {
                names.push(name);
                parent.push(up);
                name_of.push(names.len() as u32 - 1);
                values.push([(0, 0); 2]);
                parent.len() as u32 - 1
            });
            merged[i] = id;
            let slot = &mut values[id as usize];
            if side == 0 {
                slot[0].0 += bytes.value[i];
                slot[1].0 += kept[i];
            } else {
                slot[0].1 += bytes.value[i];
                slot[1].1 += kept[i];
            }
        }
    }
    let mut out = Vec::new();
    for (id, &[bytes, kept]) in values.iter().enumerate().skip(1) {
        if bytes == (0, 0) && kept == (0, 0) {
            continue;
        }
        let mut path = Vec::new();
        let mut at = id as u32;
        while at != 0 {
            path.push(names[name_of[at as usize] as usize].clone());
            at = parent[at as usize];
        }
        path.reverse();
        out.push(ContextDiff { path, bytes, kept_bytes: kept });
    }
    out.sort_by(|a, b| change(b.bytes).abs().cmp(&change(a.bytes).abs()).then_with(|| a.path.cmp(&b.path)));
    out
}

fn signed(v: i128) -> String {
    if v > 0 { format!("+{v}") } else { v.to_string() }
}

fn percent(pair: (u64, u64)) -> String {
    match pair {
        (0, 0) => "0%".into(),
        (0, _) => "new".into(),
        (b, n) => format!("{:+.1}%", (n as f64 - b as f64) * 100.0 / b as f64),
    }
}

/// The diff as tables: totals, then the `limit` largest function and context changes.
pub fn render(d: &Diff, limit: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mprof diff: NEW minus BASE");
    for (label, pair) in ["bytes allocated", "allocations", "bytes kept"].iter().zip(d.totals) {
        let _ = writeln!(out, "{label:>16}: {} -> {} ({}, {})", pair.0, pair.1, signed(change(pair)), percent(pair));
    }
    out.push_str("\nFunctions (self: allocated by the function itself; total: with what it called)\n\n");
    let mut rows = vec![["Δ total".to_string(), "Δ%".into(), "Δ self".into(), "Δ kept".into(), "Δ allocs".into(), "function".into()]];
    for f in d.functions.iter().take(limit) {
        rows.push([
            signed(change(f.total_bytes)),
            percent(f.total_bytes),
            signed(change(f.self_bytes)),
            signed(change(f.kept_bytes)),
            signed(change(f.allocs)),
            f.name.clone(),
        ]);
    }
    table(&mut out, &rows);
    out.push_str("\nCalling contexts (bytes allocated in exactly that context)\n\n");
    let mut rows = vec![["Δ bytes".to_string(), "Δ%".into(), "base".into(), "new".into(), "Δ kept".into(), "context".into()]];
    for c in d.contexts.iter().filter(|c| c.changed()).take(limit) {
        rows.push([
            signed(change(c.bytes)),
            percent(c.bytes),
            c.bytes.0.to_string(),
            c.bytes.1.to_string(),
            signed(change(c.kept_bytes)),
            c.path.join(" > "),
        ]);
    }
    table(&mut out, &rows);
    let changed = d.contexts.iter().filter(|c| c.changed()).count();
    if d.functions.len() > limit || changed > limit {
        let _ = writeln!(out, "\n({} functions and {changed} contexts changed; --limit N shows more)", d.functions.len());
    }
    out
}

fn table(out: &mut String, rows: &[[String; 6]]) {
    let mut widths = [0usize; 5];
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for r in rows {
        let mut line = String::new();
        for (k, w) in widths.iter().enumerate() {
            mprof_display::pad::right(&mut line, &r[k], *w);
            line.push_str("  ");
        }
        line.push_str(&r[5]);
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The diff as JSON (every changed function and context).
pub fn json(d: &Diff) -> String {
    let pair = |p: (u64, u64)| json!({ "base": p.0, "new": p.1, "change": change(p) as i64 });
    let doc = json!({
        "format": "mprof-diff",
        "version": 1,
        "totals": { "bytes": pair(d.totals[0]), "allocs": pair(d.totals[1]), "kept_bytes": pair(d.totals[2]) },
        "functions": d.functions.iter().map(|f| json!({
            "name": f.name, "self_bytes": pair(f.self_bytes), "total_bytes": pair(f.total_bytes),
            "kept_bytes": pair(f.kept_bytes), "allocs": pair(f.allocs),
        })).collect::<Vec<_>>(),
        "contexts": d.contexts.iter().filter(|c| c.changed()).map(|c| json!({
            "path": c.path, "bytes": pair(c.bytes), "kept_bytes": pair(c.kept_bytes),
        })).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// Two-column folded stacks, `outer;...;inner base new`, for differential flame graphs
/// (inferno's format): every context that allocated in either run.
pub fn write_folded(d: &Diff, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    let mut lines: Vec<String> = d
        .contexts
        .iter()
        .map(|c| format!("{} {} {}", c.path.join(";"), c.bytes.0, c.bytes.1))
        .collect();
    lines.sort();
    for l in lines {
        writeln!(out, "{l}")?;
    }
    Ok(())
}

/// A differential flame graph: the new run's stacks, coloured by how they changed.
pub fn flamegraph(d: &Diff, title: &str) -> Result<Vec<u8>, String> {
    let mut text = Vec::new();
    write_folded(d, &mut text).map_err(|e| e.to_string())?;
    let text = String::from_utf8(text).map_err(|e| e.to_string())?;
    if text.is_empty() {
        return Err("the two profiles allocate the same in every context: nothing to draw".into());
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = "bytes".to_string();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, text.lines(), &mut svg).map_err(|e| format!("flame graph: {e}"))?;
    Ok(svg)
}
