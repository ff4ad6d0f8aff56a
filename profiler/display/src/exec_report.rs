//! Display of the execution profiles: a flat time profile (ATOM's iprof and gprof flat
//! profile), a call graph in gprof's layout with ATOM's measured arc times, pxp's table of
//! function call counts, and ATOM's input/output summary.
//!
//! Times are not reduced here: `time_view` turns the time tree into a memory-shaped
//! `Profile` (category `t` = time, `i` = instructions) so `reduce` computes self and total
//! times exactly as it computes bytes — a function's or an arc's total is summed over its
//! outermost activation on each path, which is ATOM's rule for recursion. Call counts are
//! not in the reduction (it counts allocations under an edge), so they are taken from the
//! time nodes directly: a node entered `calls - recursion` times from its parent, plus
//! `recursion` folded self-calls.
//!
//! Invariants: every number printed is computed from the profile (no constant rows);
//! the Total rows are sums of the same values the rows print; percentages are of the
//! program's total time (the root's own time included) or total instructions; column
//! widths grow with the data. Tests: tools/mprof/tests/exec_report.rs (insta snapshots).

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use mprof_engine::exec::{ClockInfo, CountKind, CountPoint, IoRow};
use mprof_engine::model::FuncId;
use mprof_engine::profile::{Counters, Node, Profile};
use mprof_engine::reduce::{reduce, Entity, ReduceOptions, Reduction};
use mprof_engine::scheme::{Category, CategoryScheme};

/// Which execution tables `render_exec` prints, and how.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ExecReportOptions {
    /// Flat time profile and call graph.
    pub time: bool,
    /// Function call counts of the count points.
    pub counts: bool,
    /// Input/output summary.
    pub io: bool,
    /// Show each recursion cycle as one call-graph entry instead of its members.
    pub merge_cycles: bool,
    /// Times in whole nanoseconds and percentages with two decimals.
    pub exact: bool,
}

impl Default for ExecReportOptions {
    fn default() -> Self {
        ExecReportOptions { time: true, counts: true, io: true, merge_cycles: false, exact: false }
    }
}

/// The category scheme of `time_view` profiles.
pub fn time_scheme() -> CategoryScheme {
    CategoryScheme {
        categories: vec![
            Category { letter: 't', name: "time (ns)".into() },
            Category { letter: 'i', name: "instructions".into() },
        ],
    }
}

/// The time profile as a memory-shaped Profile so `reduce` and the exports work on it:
/// one node per time node with counters[0] = {allocs: calls, bytes: self ns} and
/// counters[1] = {bytes: instructions}, recursion copied, call site 0, the same function
/// table and metadata. `None` when the profile holds no time profile.
pub fn time_view(p: &Profile) -> Option<Profile> {
    let t = p.exec.time.as_ref()?;
    let mut v = Profile::empty(p.language, time_scheme());
    v.functions = p.functions.clone();
    v.metadata = p.metadata.clone();
    v.nodes = t
        .nodes
        .iter()
        .map(|n| Node {
            parent: n.parent,
            func: n.func,
            call_site: 0,
            recursion: n.recursion,
            counters: vec![
                Counters { allocs: n.calls, bytes: n.self_ns, ..Counters::default() },
                Counters { bytes: n.instructions, ..Counters::default() },
            ],
        })
        .collect();
    Some(v)
}

/// The execution tables a profile holds (those asked for): time (flat profile, then call
/// graph), count summary, I/O summary, separated by blank lines. Empty string when there
/// is nothing to print. A time profile that breaks the file's invariants (possible only
/// when built by hand) prints one line saying why instead of the time tables.
pub fn render_exec(p: &Profile, o: &ExecReportOptions) -> String {
    let mut parts: Vec<String> = Vec::new();
    if o.time
        && let Some(view) = time_view(p)
    {
        parts.push(render_time(p, &view, o));
    }
    if o.counts && !p.exec.counts.is_empty() {
        parts.push(count_summary(p));
    }
    if o.io && !p.exec.io.is_empty() {
        parts.push(io_summary(&p.exec.io, o.exact));
    }
    parts.join("\n")
}

// ---------------------------------------------------------------- formatting helpers

/// The time unit of a table: chosen once per table from its total, so every time in the
/// table is comparable at a glance.
#[derive(Clone, Copy)]
struct Unit {
    name: &'static str,
    ns: u64,
}

impl Unit {
    /// Microseconds below 10 ms in all (small test programs stay readable), else ms;
    /// exact reports use whole nanoseconds.
    fn for_total(total_ns: u64, exact: bool) -> Unit {
        if exact {
            Unit { name: "ns", ns: 1 }
        } else if total_ns < 10_000_000 {
            Unit { name: "us", ns: 1_000 }
        } else {
            Unit { name: "ms", ns: 1_000_000 }
        }
    }

    fn show(self, ns: u64) -> String {
        if self.ns == 1 { ns.to_string() } else { format!("{:.2}", ns as f64 / self.ns as f64) }
    }
}

fn percent(part: u64, whole: u64, exact: bool) -> String {
    let v = if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 };
    if exact { format!("{v:.2}") } else { format!("{v:.1}") }
}

fn ns_text(ps: u64) -> String {
    format!("{:.1} ns", ps as f64 / 1000.0)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

/// Writes `rows` (the first is the heading) in columns two spaces apart, each as wide as
/// its widest cell, with a rule under the heading; trailing blanks are trimmed.
fn table(out: &mut String, aligns: &[Align], rows: &[Vec<String>]) {
    let mut widths = vec![0usize; aligns.len()];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
    for (i, row) in rows.iter().enumerate() {
        let mut line = String::new();
        for (k, ((cell, w), a)) in row.iter().zip(&widths).zip(aligns).enumerate() {
            if k > 0 {
                line.push_str("  ");
            }
            match a {
                Align::Left => crate::pad::left(&mut line, cell, *w),
                Align::Right => crate::pad::right(&mut line, cell, *w),
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
    }
}

// ---------------------------------------------------------------- time

fn render_time(p: &Profile, view: &Profile, o: &ExecReportOptions) -> String {
    let flat_options = ReduceOptions { merge_cycles: false, call_sites: false, path_depth: 5 };
    let flat = match reduce(view, &flat_options) {
        Ok(r) => r,
        Err(why) => return format!("invalid time profile: {why}\n"),
    };
    let graph = if o.merge_cycles {
        match reduce(view, &ReduceOptions { merge_cycles: true, ..flat_options }) {
            Ok(r) => r,
            Err(why) => return format!("invalid time profile: {why}\n"),
        }
    } else {
        flat.clone()
    };
    let total_ns = flat.totals[0].bytes;
    let unit = Unit::for_total(total_ns, o.exact);
    let clock = p.exec.time.as_ref().map(|t| t.clock.clone()).unwrap_or_default();
    let mut out = String::new();
    flat_profile(&mut out, &flat, &clock, unit, o.exact);
    out.push('\n');
    let calls = CallCounts::new(view, &graph);
    call_graph(&mut out, &graph, &calls, unit, o.exact);
    out
}

/// "name" or "name <cycle N>" for members of a cycle shown unmerged.
fn label(e: &Entity) -> String {
    match (e.is_cycle, e.cycle) {
        (false, Some(c)) => format!("{} <cycle {c}>", e.name),
        _ => e.name.clone(),
    }
}

fn time_of(cs: &[Counters]) -> u64 {
    cs.first().map_or(0, |c| c.bytes)
}

fn calls_of(cs: &[Counters]) -> u64 {
    cs.first().map_or(0, |c| c.allocs)
}

fn instructions_of(cs: &[Counters]) -> u64 {
    cs.get(1).map_or(0, |c| c.bytes)
}

fn flat_profile(out: &mut String, r: &Reduction, clock: &ClockInfo, unit: Unit, exact: bool) {
    let total_ns = time_of(&r.totals);
    let total_instr = instructions_of(&r.totals);
    let total_calls = calls_of(&r.totals);
    let functions: Vec<&Entity> = r
        .entities
        .iter()
        .filter(|e| !e.is_cycle && e.total.iter().chain(&e.self_counters).any(|c| !c.is_zero()))
        .collect();
    let _ = writeln!(out, "Flat profile (times in {})", unit.name);
    out.push('\n');
    let source = if clock.source.is_empty() { "not recorded" } else { clock.source.as_str() };
    let _ = writeln!(
        out,
        "clock: {source}; smallest step seen {}, one read costs {}",
        ns_text(clock.resolution_ps),
        ns_text(clock.read_cost_ps)
    );
    if clock.compensation_ps > 0 {
        let _ = writeln!(
            out,
            "compensation: {} (one read) subtracted from the self time on top at each call and return that reads the clock; the rest of the profiler's own work is not",
            ns_text(clock.compensation_ps)
        );
    } else {
        let _ = writeln!(out, "compensation: none (self times include the profiler's own clock reads)");
    }
    let _ = writeln!(
        out,
        "elapsed: {} {} wall time; profiled: {} {} in {} functions, {} calls, {} instructions",
        unit.show(clock.elapsed_ns),
        unit.name,
        unit.show(total_ns),
        unit.name,
        functions.len(),
        total_calls,
        total_instr
    );
    out.push('\n');
    // (name, self ns, total ns if a function, calls, instructions)
    let mut rows: Vec<(String, u64, Option<u64>, u64, u64)> = functions
        .iter()
        .map(|e| {
            (
                label(e),
                time_of(&e.self_counters),
                Some(time_of(&e.total)),
                calls_of(&e.self_counters),
                instructions_of(&e.self_counters),
            )
        })
        .collect();
    let outside_ns = time_of(&r.unattributed);
    let outside_instr = instructions_of(&r.unattributed);
    if outside_ns > 0 || outside_instr > 0 {
        rows.push(("<outside any function>".into(), outside_ns, None, 0, outside_instr));
    }
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut table_rows = vec![
        ["%time", "cumulative", "self", "total", "calls", "instructions", "%instr", "name"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
    ];
    let mut cumulative = 0u64;
    for (name, self_ns, total, calls, instr) in &rows {
        cumulative += self_ns;
        table_rows.push(vec![
            percent(*self_ns, total_ns, exact),
            unit.show(cumulative),
            unit.show(*self_ns),
            total.map_or_else(String::new, |t| unit.show(t)),
            if total.is_some() { calls.to_string() } else { String::new() },
            instr.to_string(),
            percent(*instr, total_instr, exact),
            name.clone(),
        ]);
    }
    table_rows.push(vec![
        percent(total_ns, total_ns, exact),
        String::new(),
        unit.show(total_ns),
        String::new(),
        total_calls.to_string(),
        total_instr.to_string(),
        percent(total_instr, total_instr, exact),
        "<TOTAL>".into(),
    ]);
    use Align::*;
    table(out, &[Right, Right, Right, Right, Right, Right, Right, Left], &table_rows);
}

/// Call counts per call-graph entity and arc, from the time nodes (see the module comment).
struct CallCounts {
    /// (caller entity, callee entity) -> calls, caller != callee.
    arcs: FxHashMap<(usize, usize), u64>,
    /// Per entity: calls from other entities and from the top level.
    called: Vec<u64>,
    /// Per entity: calls from itself (folded recursion and self arcs; for a cycle, calls
    /// between its members).
    recursive: Vec<u64>,
    /// Per entity: calls from the top level and the time under them.
    spontaneous: Vec<(u64, u64)>,
    /// (caller entity or `SPONTANEOUS`, callee entity) -> the callee's own time on behalf
    /// of the caller: gprof's "self" of a parent or child line (its "descendants" is the
    /// arc's total minus this).
    arc_self: FxHashMap<(usize, usize), u64>,
}

/// The caller key of calls from the top level in `CallCounts::arc_self`.
const SPONTANEOUS: usize = usize::MAX;

impl CallCounts {
    /// `view` must have passed `reduce` (so parents precede children and functions exist).
    fn new(view: &Profile, r: &Reduction) -> CallCounts {
        let nent = r.entities.len();
        let nfunc = view.functions.len();
        let mut cycle_of: Vec<Option<usize>> = vec![None; nfunc];
        for (e, ent) in r.entities.iter().enumerate() {
            if ent.is_cycle {
                for &m in &ent.members {
                    if let Some(slot) = cycle_of.get_mut(m) {
                        *slot = Some(e);
                    }
                }
            }
        }
        let merged = r.cycles_merged;
        let ent_of = |f: FuncId| {
            let f = f.0 as usize;
            if merged { cycle_of.get(f).copied().flatten().unwrap_or(f) } else { f }
        };
        let nodes = &view.nodes;
        let mut incl: Vec<u64> = nodes.iter().map(|n| time_of(&n.counters)).collect();
        for i in (1..nodes.len()).rev() {
            if let Some(parent) = nodes[i].parent {
                incl[parent.0 as usize] = incl[parent.0 as usize].saturating_add(incl[i]);
            }
        }
        let mut c = CallCounts {
            arcs: FxHashMap::default(),
            called: vec![0; nent],
            recursive: vec![0; nent],
            spontaneous: vec![(0, 0); nent],
            arc_self: FxHashMap::default(),
        };
        // The entities a node stands for: its function's (or merged cycle's), and its
        // cycle's when members are shown apart.
        let keys = |i: usize| -> [Option<usize>; 2] {
            let f = nodes[i].func;
            let cycle = if merged { None } else { cycle_of.get(f.0 as usize).copied().flatten() };
            [Some(ent_of(f)), cycle]
        };
        // A node's own time is the callee's self time on behalf of every distinct caller of
        // an arc into one of its entities above it on the path (each arc's outermost
        // occurrence, ATOM's rule): credit each such arc once. A depth-first walk keeps,
        // per callee entity, how many times each caller's arc into it is on the current
        // path, so a node costs the number of distinct arcs into its own entities rather
        // than its depth (walking up from every node made deep recursions quadratic).
        let member_of = |x: usize, cy: usize| cycle_of.get(x).copied().flatten() == Some(cy);
        let arcs_into = |m: usize| -> Vec<(usize, usize)> {
            let parent = nodes[m].parent.map_or(0, |x| x.0 as usize);
            let callers = if parent == 0 { [Some(SPONTANEOUS), None] } else { keys(parent) };
            let mut out = Vec::new();
            for b in keys(m).into_iter().flatten() {
                for a in callers.into_iter().flatten() {
                    // Calls within an entity, and a member's calls into its own cycle,
                    // are not arcs.
                    let inside = a == b || (a != SPONTANEOUS && (member_of(a, b) || member_of(b, a)));
                    if !inside {
                        out.push((a, b));
                    }
                }
            }
            out
        };
        let mut first_child = vec![usize::MAX; nodes.len()];
        let mut next_sibling = vec![usize::MAX; nodes.len()];
        for i in (1..nodes.len()).rev() {
            let parent = nodes[i].parent.map_or(0, |x| x.0 as usize);
            next_sibling[i] = first_child[parent];
            first_child[parent] = i;
        }
        // callee entity -> caller entity -> arcs (a, b) on the path.
        let mut on_path: FxHashMap<usize, FxHashMap<usize, u32>> = FxHashMap::default();
        // (node, entered): a node is visited on the way down, then left on the way up.
        let mut work: Vec<(usize, bool)> = Vec::new();
        let mut child = first_child[0];
        while child != usize::MAX {
            work.push((child, false));
            child = next_sibling[child];
        }
        while let Some((m, entered)) = work.pop() {
            if entered {
                for (a, b) in arcs_into(m) {
                    if let Some(callers) = on_path.get_mut(&b)
                        && let Some(n) = callers.get_mut(&a)
                    {
                        *n -= 1;
                        if *n == 0 {
                            callers.remove(&a);
                        }
                    }
                }
                continue;
            }
            for (a, b) in arcs_into(m) {
                *on_path.entry(b).or_default().entry(a).or_default() += 1;
            }
            let own = time_of(&nodes[m].counters);
            if own > 0 {
                for b in keys(m).into_iter().flatten() {
                    if let Some(callers) = on_path.get(&b) {
                        for &a in callers.keys() {
                            *c.arc_self.entry((a, b)).or_default() += own;
                        }
                    }
                }
            }
            work.push((m, true));
            let mut child = first_child[m];
            while child != usize::MAX {
                work.push((child, false));
                child = next_sibling[child];
            }
        }
        for (i, n) in nodes.iter().enumerate().skip(1) {
            let b = ent_of(n.func);
            // With members unmerged, the cycle entry counts the same calls as a whole.
            let cycle = if merged { None } else { cycle_of.get(n.func.0 as usize).copied().flatten() };
            let entering = calls_of(&n.counters).saturating_sub(n.recursion);
            for e in std::iter::once(b).chain(cycle) {
                c.recursive[e] += n.recursion;
            }
            let parent = n.parent.map_or(0, |x| x.0 as usize);
            if parent == 0 {
                for e in std::iter::once(b).chain(cycle) {
                    c.called[e] += entering;
                    c.spontaneous[e].0 += entering;
                    c.spontaneous[e].1 += incl[i];
                }
                continue;
            }
            let a = ent_of(nodes[parent].func);
            if a == b {
                c.recursive[b] += entering;
            } else {
                *c.arcs.entry((a, b)).or_default() += entering;
                c.called[b] += entering;
            }
            if let Some(cy) = cycle {
                if cycle_of.get(nodes[parent].func.0 as usize).copied().flatten() == Some(cy) {
                    c.recursive[cy] += entering;
                } else {
                    *c.arcs.entry((a, cy)).or_default() += entering;
                    c.called[cy] += entering;
                }
            }
        }
        c
    }

    fn arc(&self, caller: usize, callee: usize) -> u64 {
        self.arcs.get(&(caller, callee)).copied().unwrap_or(0)
    }

    /// The callee's own time on behalf of the caller (at most the arc's total `t`).
    fn arc_self(&self, caller: usize, callee: usize, t: u64) -> u64 {
        self.arc_self.get(&(caller, callee)).copied().unwrap_or(0).min(t)
    }

    fn called_text(&self, e: usize) -> String {
        match self.recursive[e] {
            0 => self.called[e].to_string(),
            r => format!("{}+{r}", self.called[e]),
        }
    }
}

/// One line of the call graph before widths are known.
struct GraphLine {
    index: String,
    pct: String,
    self_t: String,
    desc: String,
    called: String,
    name: String,
}

fn call_graph(out: &mut String, r: &Reduction, calls: &CallCounts, unit: Unit, exact: bool) {
    let total_ns = time_of(&r.totals);
    let _ = writeln!(out, "Call graph (times in {})", unit.name);
    out.push('\n');
    let mut shown: Vec<usize> =
        (0..r.entities.len()).filter(|&e| r.entities[e].total.iter().any(|c| !c.is_zero())).collect();
    shown.sort_by(|&a, &b| {
        let (ea, eb) = (&r.entities[a], &r.entities[b]);
        time_of(&eb.total).cmp(&time_of(&ea.total)).then_with(|| ea.name.cmp(&eb.name)).then(a.cmp(&b))
    });
    let mut index = vec![usize::MAX; r.entities.len()];
    for (i, &e) in shown.iter().enumerate() {
        index[e] = i + 1;
    }
    let name_of = |e: usize| format!("{} [{}]", label(&r.entities[e]), index[e]);
    // Unmerged cycles: an outside caller lists the member it calls, not the cycle; the
    // cycle entry lists its members and, as children, its members' calls out of it.
    let hidden = |callee: usize| !r.cycles_merged && r.entities[callee].is_cycle;
    let mut callers: Vec<Vec<(usize, u64)>> = vec![Vec::new(); r.entities.len()];
    let mut callees: Vec<Vec<(usize, u64)>> = vec![Vec::new(); r.entities.len()];
    let cycle_of = |e: usize| if r.cycles_merged { None } else { r.entities[e].cycle };
    let mut cycle_out: FxHashMap<(usize, usize), u64> = FxHashMap::default();
    for edge in &r.edges {
        if index[edge.caller] == usize::MAX || index[edge.callee] == usize::MAX {
            continue;
        }
        let t = time_of(&edge.counters);
        callers[edge.callee].push((edge.caller, t));
        if !hidden(edge.callee) {
            callees[edge.caller].push((edge.callee, t));
        }
        // A member's call out of its cycle is also the cycle's call. The callee is
        // outside the cycle, so its subtrees never nest under another member: the
        // per-member sums add without counting a path twice.
        if let Some(cy) = cycle_of(edge.caller)
            && !r.entities[edge.callee].is_cycle
            && cycle_of(edge.callee) != Some(cy)
        {
            *cycle_out.entry((cy, edge.callee)).or_default() += t;
        }
    }
    let cycle_entity: FxHashMap<usize, usize> = r
        .entities
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_cycle)
        .filter_map(|(i, e)| e.cycle.map(|n| (n, i)))
        .collect();
    let mut cycle_children: Vec<Vec<(usize, u64, u64)>> = vec![Vec::new(); r.entities.len()];
    for (&(cy, callee), &t) in &cycle_out {
        if let Some(&ce) = cycle_entity.get(&cy) {
            let members = &r.entities[ce].members;
            let n: u64 = members.iter().map(|&m| calls.arc(m, callee)).sum();
            cycle_children[ce].push((callee, t, n));
        }
    }

    let mut lines: Vec<Option<GraphLine>> = Vec::new(); // None = rule
    // A parent or child line: the callee's self time and its descendants' time on
    // behalf of the caller (together, the time of the arc), as gprof prints them.
    let arc_line = |e: usize, t: u64, own: u64, n: u64, total: u64| GraphLine {
        index: String::new(),
        pct: String::new(),
        self_t: unit.show(own),
        desc: unit.show(t.saturating_sub(own)),
        called: format!("{n}/{total}"),
        name: format!("    {}", name_of(e)),
    };
    for &e in &shown {
        let ent = &r.entities[e];
        let (sp_calls, sp_time) = calls.spontaneous[e];
        if sp_calls > 0 || sp_time > 0 {
            let own = calls.arc_self(SPONTANEOUS, e, sp_time);
            lines.push(Some(GraphLine {
                index: String::new(),
                pct: String::new(),
                self_t: unit.show(own),
                desc: unit.show(sp_time.saturating_sub(own)),
                called: format!("{sp_calls}/{}", calls.called[e]),
                name: "    <spontaneous>".into(),
            }));
        }
        let mut ups = callers[e].clone();
        ups.sort_by(|a, b| b.1.cmp(&a.1).then(index[a.0].cmp(&index[b.0])));
        for (caller, t) in ups {
            let own = calls.arc_self(caller, e, t);
            lines.push(Some(arc_line(caller, t, own, calls.arc(caller, e), calls.called[e])));
        }
        let self_ns = time_of(&ent.self_counters);
        let total = time_of(&ent.total);
        lines.push(Some(GraphLine {
            index: format!("[{}]", index[e]),
            pct: percent(total, total_ns, exact),
            self_t: unit.show(self_ns),
            desc: unit.show(total.saturating_sub(self_ns)),
            called: calls.called_text(e),
            name: name_of(e),
        }));
        if ent.is_cycle && !r.cycles_merged {
            let mut members: Vec<usize> = ent.members.iter().copied().filter(|&m| index[m] != usize::MAX).collect();
            members.sort_by_key(|&m| index[m]);
            for m in members {
                lines.push(Some(GraphLine {
                    index: String::new(),
                    pct: String::new(),
                    self_t: unit.show(time_of(&r.entities[m].self_counters)),
                    desc: String::new(),
                    called: calls.called_text(m),
                    name: format!("    {}", name_of(m)),
                }));
            }
            let mut downs = cycle_children[e].clone();
            downs.sort_by(|a, b| b.1.cmp(&a.1).then(index[a.0].cmp(&index[b.0])));
            for (callee, t, n) in downs {
                let own = calls.arc_self(e, callee, t);
                lines.push(Some(arc_line(callee, t, own, n, calls.called[callee])));
            }
        } else {
            let mut downs = callees[e].clone();
            downs.sort_by(|a, b| b.1.cmp(&a.1).then(index[a.0].cmp(&index[b.0])));
            for (callee, t) in downs {
                let own = calls.arc_self(e, callee, t);
                lines.push(Some(arc_line(callee, t, own, calls.arc(e, callee), calls.called[callee])));
            }
        }
        lines.push(None);
    }

    let headings = [
        ["", "", "self", "descendants", "called/total", "    parents"],
        ["index", "%time", "self", "descendants", "called+self", "name [index]"],
        ["", "", "self", "descendants", "called/total", "    children"],
    ];
    let present = lines.iter().flatten();
    let width = |pick: &dyn Fn(&GraphLine) -> &str, col: usize| {
        present.clone().map(|l| pick(l).chars().count()).chain(headings.iter().map(|h| h[col].len())).max().unwrap_or(0)
    };
    let w = [
        width(&|l| &l.index, 0),
        width(&|l| &l.pct, 1),
        width(&|l| &l.self_t, 2),
        width(&|l| &l.desc, 3),
        width(&|l| &l.called, 4),
    ];
    let format_line = |cells: [&str; 6]| {
        let mut line = String::new();
        crate::pad::left(&mut line, cells[0], w[0]);
        for k in 1..5 {
            line.push_str("  ");
            crate::pad::right(&mut line, cells[k], w[k]);
        }
        line.push_str("  ");
        line.push_str(cells[5]);
        line.trim_end().to_string()
    };
    let mut text: Vec<Option<String>> = headings.iter().map(|h| Some(format_line(*h))).collect();
    text.push(None);
    for l in &lines {
        text.push(l.as_ref().map(|l| format_line([&l.index, &l.pct, &l.self_t, &l.desc, &l.called, &l.name])));
    }
    let rule = "-".repeat(text.iter().flatten().map(|l| l.chars().count()).max().unwrap_or(0));
    for l in &text {
        out.push_str(l.as_deref().unwrap_or(&rule));
        out.push('\n');
    }
    out.push('\n');
    for text in [
        "self: time with the function on top of the stack. descendants: time in the functions it",
        "called, each activation timed at its outermost one (ATOM's rule for recursion).",
        "On parent and child lines: the callee's self and descendants time on behalf of that",
        "caller, measured per calling context (never apportioned by call counts).",
        "called+self: calls from other functions (and the top level) + calls from itself;",
        "for a cycle, + calls between its members. %time: share of all profiled time.",
    ] {
        let _ = writeln!(out, "{text}");
    }
}

// ---------------------------------------------------------------- counts

fn count_summary(p: &Profile) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Function call counts (from --count)");
    out.push('\n');
    let source_of = |c: &CountPoint| p.exec.sources.get(c.source as usize).map_or("?", |s| s.path.as_str());
    let mut entries: Vec<&CountPoint> = p.exec.counts.iter().filter(|c| c.kind == CountKind::Entry).collect();
    entries.sort_by(|a, b| {
        source_of(a)
            .cmp(source_of(b))
            .then(a.line.cmp(&b.line))
            .then(a.column.cmp(&b.column))
            .then_with(|| a.function.cmp(&b.function))
    });
    if entries.is_empty() {
        let _ = writeln!(out, "(no function entries counted)");
    } else {
        let mut rows = vec![vec!["function".to_string(), "defined at".to_string(), "calls".to_string()]];
        for c in &entries {
            rows.push(vec![
                format!("{}{}", "  ".repeat(c.depth as usize), c.function),
                format!("{}:{}", source_of(c), c.line),
                c.count.to_string(),
            ]);
        }
        let total: u64 = entries.iter().map(|c| c.count).sum();
        rows.push(vec!["<TOTAL>".into(), String::new(), total.to_string()]);
        table(&mut out, &[Align::Left, Align::Left, Align::Right], &rows);
    }
    let of_kind = |k: CountKind| p.exec.counts.iter().filter(move |c| c.kind == k);
    let points = |k: CountKind| of_kind(k).count();
    let executions = |k: CountKind| of_kind(k).map(|c| c.count).sum::<u64>();
    out.push('\n');
    let _ = writeln!(
        out,
        "count points: {} (function entries {}, branches {}, body forms {}, top-level forms {})",
        p.exec.counts.len(),
        points(CountKind::Entry),
        points(CountKind::Branch),
        points(CountKind::Statement),
        points(CountKind::Toplevel)
    );
    let _ = writeln!(
        out,
        "executions: body forms {}, branches taken {}, top-level forms {}",
        executions(CountKind::Statement),
        executions(CountKind::Branch),
        executions(CountKind::Toplevel)
    );
    out
}

// ---------------------------------------------------------------- I/O

fn io_summary(rows: &[IoRow], exact: bool) -> String {
    let mut total = IoRow { stream: "<TOTAL>".into(), ..IoRow::default() };
    for r in rows {
        total.opens = total.opens.saturating_add(r.opens);
        total.reads = total.reads.saturating_add(r.reads);
        total.writes = total.writes.saturating_add(r.writes);
        total.bytes_read = total.bytes_read.saturating_add(r.bytes_read);
        total.bytes_written = total.bytes_written.saturating_add(r.bytes_written);
        total.time_ns = total.time_ns.saturating_add(r.time_ns);
    }
    let unit = Unit::for_total(total.time_ns, exact);
    let mut out = String::new();
    let _ = writeln!(out, "Input/output summary (times in {})", unit.name);
    out.push('\n');
    let mut cells = vec![
        ["stream", "opens", "reads", "writes", "bytes read", "bytes written", "time"].map(String::from).to_vec(),
    ];
    for r in rows.iter().chain([&total]) {
        cells.push(vec![
            r.stream.clone(),
            r.opens.to_string(),
            r.reads.to_string(),
            r.writes.to_string(),
            r.bytes_read.to_string(),
            r.bytes_written.to_string(),
            unit.show(r.time_ns),
        ]);
    }
    use Align::*;
    table(&mut out, &[Left, Right, Right, Right, Right, Right, Right], &cells);
    out
}
