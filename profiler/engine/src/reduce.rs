//! Reduction: from the calling-context tree to the numbers the tables print.
//!
//! Everything is derived from the tree at reduction time, in time linear in the number of
//! nodes (plus the leak table's bounded walk of `path_depth` callers per node):
//! - subtree sums ("inclusive" counters) by one reverse sweep, since parents precede
//!   children;
//! - a function's self+desc bytes, and a caller->callee edge's bytes, are summed over the
//!   *topmost* occurrence on each path (a depth-first walk keeps, per function and per
//!   edge, how often it is on the current path). So every path credits a function or an
//!   edge once: the paper's Figure 7 credits F->G with 10 bytes, not 20;
//! - recursion cycles are the strongly connected components of the function graph
//!   (Tarjan). They are shown the gprof way, as `<cycle N>` entries with exact numbers
//!   computed by the same walk with members mapped to the cycle, or, on request, merged
//!   into one entry as the paper did.
//!
//! The reduction knows nothing of the display: report.rs formats it.

use rustc_hash::FxHashMap;

use crate::model::{FuncId, HeapErrorKind, NodeId};
use crate::profile::{Counters, Profile};
use crate::scheme::Language;

/// What shapes the reduction (a subset of `ReportOptions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceOptions {
    pub merge_cycles: bool,
    pub call_sites: bool,
    pub path_depth: usize,
}

/// A row of the call graph: a function, or a recursion cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entity {
    pub name: String,
    /// The function, for function entities.
    pub func: Option<FuncId>,
    /// For a cycle: its number. For a member of a cycle shown unmerged: its cycle's number.
    pub cycle: Option<usize>,
    /// True for a `<cycle N>` entity.
    pub is_cycle: bool,
    /// Counters of allocations made directly in this entity, per category.
    pub self_counters: Vec<Counters>,
    /// Counters of allocations made in this entity and its descendants, each path once.
    pub total: Vec<Counters>,
    /// Allocating calls from other entities.
    pub called: u64,
    /// Recursive calls: folded self-recursion plus calls along self edges.
    pub recursion: u64,
    /// Entities (indices into `Reduction::entities`) that are members of this cycle.
    pub members: Vec<usize>,
}

impl Entity {
    pub fn self_bytes(&self) -> u64 {
        self.self_counters.iter().map(|c| c.bytes).sum()
    }
    pub fn total_bytes(&self) -> u64 {
        self.total.iter().map(|c| c.bytes).sum()
    }
    pub fn total_allocs(&self) -> u64 {
        self.total.iter().map(|c| c.allocs).sum()
    }
}

/// A caller->callee edge with the bytes allocated under it, each path once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub caller: usize,
    pub callee: usize,
    pub counters: Vec<Counters>,
    /// Allocations under the edge (the paper's "calls during an allocation").
    pub calls: u64,
}

impl Edge {
    pub fn bytes(&self) -> u64 {
        self.counters.iter().map(|c| c.bytes).sum()
    }
}

/// One element of a printed path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathStep {
    pub name: String,
    /// Present when call sites are distinguished and the site is known (in a C
    /// profile always for the path's last step when debug information gives its
    /// file: the line that called the allocator).
    pub call_site: Option<u64>,
    /// C profiles: the function's source file, whose lines the call sites are.
    pub file: Option<String>,
}

impl PathStep {
    /// `file.c:123` (the file's name without its directories, the line in decimal):
    /// where a C function made the call of this step, when debug information says.
    pub fn location(&self) -> Option<String> {
        let file = self.file.as_deref()?;
        let line = self.call_site?;
        Some(format!("{}:{line}", file.rsplit('/').next().unwrap_or(file)))
    }
}

/// A partial path (the last `path_depth` callers) with what was counted under it: the
/// memory kept (leak table), or a figure's count and bytes (`Reduction::figures`). In a
/// C profile paths end at an allocation site: one row per line that called the
/// allocator (`PartialPath::site`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialPath {
    /// Outermost first.
    pub steps: Vec<PathStep>,
    /// True when the path reaches the bottom of the stack (nothing was cut off).
    pub complete: bool,
    pub kept_allocs: u64,
    pub kept_bytes: u64,
}

impl PartialPath {
    /// The allocation site (`file.c:123`) of a C profile's path, when known.
    pub fn site(&self) -> Option<String> {
        self.steps.last()?.location()
    }
}

/// A heap error with its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorRow {
    pub kind: HeapErrorKind,
    pub count: u64,
    pub address: u64,
    pub path: PartialPath,
}

/// Everything the tables print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduction {
    pub ncat: usize,
    /// Sums over all nodes, per category.
    pub totals: Vec<Counters>,
    /// Call-graph entities; functions first (index = function id), then cycles.
    pub entities: Vec<Entity>,
    /// Edges between entities (`caller != callee`).
    pub edges: Vec<Edge>,
    /// Allocations made on the root node itself (no frame known), per category.
    pub unattributed: Vec<Counters>,
    /// Partial paths with kept memory, largest first.
    pub kept_paths: Vec<PartialPath>,
    /// Per figure of the profile (same order): its name and its partial paths, largest
    /// first, computed as `kept_paths` is (`kept_allocs` holds the figure's count).
    pub figures: Vec<(String, Vec<PartialPath>)>,
    pub errors: Vec<ErrorRow>,
    /// Number of recursion cycles found.
    pub cycles: usize,
    /// True when cycle members were merged into their cycle (the paper's way).
    pub cycles_merged: bool,
}

impl Reduction {
    pub fn total_of<F: Fn(&Counters) -> u64>(&self, f: F) -> u64 {
        self.totals.iter().map(f).sum()
    }
}

/// The per-entity numbers of one depth-first walk.
struct Walk {
    self_counters: Vec<Counters>,
    total: Vec<Counters>,
    recursion: Vec<u64>,
    edges: Vec<Edge>,
}

/// Walks the tree once, mapping each function through `entity_of`, and credits each
/// entity and each edge at its topmost occurrence on every path.
fn walk(p: &Profile, children: &Children, own: &[Counters], incl: &[Counters], entity_of: &[u32], nent: usize) -> Walk {
    let ncat = p.scheme.len();
    let mut w = Walk {
        self_counters: vec![Counters::default(); nent * ncat],
        total: vec![Counters::default(); nent * ncat],
        recursion: vec![0; nent],
        edges: Vec::new(),
    };
    let mut on_path = vec![0u32; nent];
    let mut edge_on_path: Vec<u32> = Vec::new();
    let mut edge_ids: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut edge_of_node = vec![u32::MAX; p.nodes.len()];
    // Entity per node in one dense array: the walk then never touches the nodes again.
    let node_ent: Vec<u32> = p.nodes.iter().map(|n| entity_of.get(n.func.0 as usize).copied().unwrap_or(0)).collect();
    let node_rec: Vec<u64> = p.nodes.iter().map(|n| n.recursion).collect();
    let ent = |node: usize| node_ent[node];
    // (node, next child position); entering pushes, finishing pops.
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    while let Some(top) = stack.last_mut() {
        let (node, pos) = *top;
        if pos < children.of(node).len() {
            top.1 += 1;
            let c = children.of(node)[pos] as usize;
            let e = ent(c) as usize;
            let cinc = &incl[c * ncat..(c + 1) * ncat];
            for (t, cnt) in w.self_counters[e * ncat..(e + 1) * ncat].iter_mut().zip(&own[c * ncat..(c + 1) * ncat]) {
                t.add(cnt);
            }
            if on_path[e] == 0 {
                for (t, c) in w.total[e * ncat..(e + 1) * ncat].iter_mut().zip(cinc) {
                    t.add(c);
                }
            }
            on_path[e] += 1;
            w.recursion[e] += node_rec[c];
            if node != 0 {
                let pe = ent(node);
                let key = (pe, e as u32);
                let next = w.edges.len() as u32;
                let id = *edge_ids.entry(key).or_insert_with(|| {
                    w.edges.push(Edge {
                        caller: pe as usize,
                        callee: e,
                        counters: vec![Counters::default(); ncat],
                        calls: 0,
                    });
                    edge_on_path.push(0);
                    next
                });
                if edge_on_path[id as usize] == 0 {
                    let edge = &mut w.edges[id as usize];
                    for (t, c) in edge.counters.iter_mut().zip(cinc) {
                        t.add(c);
                        edge.calls += c.allocs;
                    }
                }
                edge_on_path[id as usize] += 1;
                edge_of_node[c] = id;
            }
            stack.push((c, 0));
        } else {
            stack.pop();
            if node != 0 {
                on_path[ent(node) as usize] -= 1;
                if let Some(slot) = edge_on_path.get_mut(edge_of_node[node] as usize) {
                    *slot -= 1;
                }
            }
        }
    }
    w
}

/// Children lists in one flat array (counting sort by parent).
struct Children {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Children {
    fn new(p: &Profile) -> Self {
        let n = p.nodes.len();
        let mut start = vec![0u32; n + 1];
        for node in p.nodes.iter().skip(1) {
            if let Some(parent) = node.parent {
                start[parent.0 as usize + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; n.saturating_sub(1)];
        for (i, node) in p.nodes.iter().enumerate().skip(1) {
            if let Some(parent) = node.parent {
                let slot = &mut fill[parent.0 as usize];
                list[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
        Children { start, list }
    }

    fn of(&self, node: usize) -> &[u32] {
        &self.list[self.start[node] as usize..self.start[node + 1] as usize]
    }
}

/// Strongly connected components with more than one member, by Tarjan's algorithm
/// (iterative, so deep graphs cannot overflow the stack). Returns, per function, the
/// index of its cycle or `u32::MAX`, and the number of cycles.
fn find_cycles(nfunc: usize, edges: &[(u32, u32)]) -> (Vec<u32>, usize) {
    let mut adj_start = vec![0usize; nfunc + 1];
    for &(a, _) in edges {
        adj_start[a as usize + 1] += 1;
    }
    for i in 0..nfunc {
        adj_start[i + 1] += adj_start[i];
    }
    let mut fill = adj_start.clone();
    let mut adj = vec![0u32; edges.len()];
    for &(a, b) in edges {
        adj[fill[a as usize]] = b;
        fill[a as usize] += 1;
    }
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; nfunc];
    let mut low = vec![0u32; nfunc];
    let mut on_stack = vec![false; nfunc];
    let mut scc_stack: Vec<u32> = Vec::new();
    let mut cycle_of = vec![u32::MAX; nfunc];
    let mut ncycles = 0usize;
    let mut next_index = 0u32;
    for root in 0..nfunc {
        if index[root] != UNSEEN {
            continue;
        }
        let mut call: Vec<(u32, usize)> = vec![(root as u32, adj_start[root])];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        scc_stack.push(root as u32);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut pos)) = call.last_mut() {
            let v = v as usize;
            if *pos < adj_start[v + 1] {
                let w = adj[*pos] as usize;
                *pos += 1;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    scc_stack.push(w as u32);
                    on_stack[w] = true;
                    call.push((w as u32, adj_start[w]));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u as usize] = low[u as usize].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut members = Vec::new();
                    while let Some(w) = scc_stack.pop() {
                        on_stack[w as usize] = false;
                        members.push(w);
                        if w as usize == v {
                            break;
                        }
                    }
                    if members.len() > 1 {
                        for m in members {
                            cycle_of[m as usize] = ncycles as u32;
                        }
                        ncycles += 1;
                    }
                }
            }
        }
    }
    (cycle_of, ncycles)
}

/// Reduces a profile. Fails only on a profile that breaks `Profile::validate`.
pub fn reduce(p: &Profile, options: &ReduceOptions) -> Result<Reduction, String> {
    p.validate()?;
    let ncat = p.scheme.len();
    let n = p.nodes.len();
    let nfunc = p.functions.len();

    // Flat copies: one pass over the nodes' own vectors, then only contiguous reads.
    let mut own: Vec<Counters> = Vec::with_capacity(n * ncat);
    for node in &p.nodes {
        own.extend_from_slice(&node.counters);
    }
    let mut incl = own.clone();
    for i in (1..n).rev() {
        if let Some(parent) = p.nodes[i].parent {
            let parent = parent.0 as usize;
            for k in 0..ncat {
                let c = incl[i * ncat + k];
                incl[parent * ncat + k].add(&c);
            }
        }
    }
    let totals = incl[..ncat].to_vec();
    let children = Children::new(p);

    // The function graph, for cycle detection.
    let mut fedges: Vec<(u32, u32)> = p
        .nodes
        .iter()
        .skip(1)
        .filter_map(|node| {
            let parent = node.parent?.0 as usize;
            (parent != 0).then(|| (p.nodes[parent].func.0, node.func.0)).filter(|(a, b)| a != b)
        })
        .collect();
    fedges.sort_unstable();
    fedges.dedup();
    let (cycle_of, ncycles) = find_cycles(nfunc, &fedges);

    // Cycle numbers follow the order of the cycles' total bytes, computed below; start
    // with Tarjan's order and renumber at the end.
    let identity: Vec<u32> = (0..nfunc as u32).collect();
    let merged: Vec<u32> = (0..nfunc)
        .map(|f| if cycle_of[f] == u32::MAX { f as u32 } else { nfunc as u32 + cycle_of[f] })
        .collect();
    let nent = nfunc + ncycles;

    let fwalk = walk(p, &children, &own, &incl, if options.merge_cycles { &merged } else { &identity }, nent);
    let cwalk = if ncycles > 0 && !options.merge_cycles {
        Some(walk(p, &children, &own, &incl, &merged, nent))
    } else {
        None
    };

    let mut entities: Vec<Entity> = (0..nent)
        .map(|e| {
            let is_cycle = e >= nfunc;
            Entity {
                name: if is_cycle { String::new() } else { p.functions[e].name.clone() },
                func: (!is_cycle).then_some(FuncId(e as u32)),
                cycle: match (is_cycle, options.merge_cycles) {
                    (true, _) => Some(e - nfunc),
                    (false, false) => (cycle_of[e] != u32::MAX).then_some(cycle_of[e] as usize),
                    (false, true) => None,
                },
                is_cycle,
                self_counters: vec![Counters::default(); ncat],
                total: vec![Counters::default(); ncat],
                called: 0,
                recursion: 0,
                members: Vec::new(),
            }
        })
        .collect();
    for f in 0..nfunc {
        if cycle_of[f] != u32::MAX {
            entities[nfunc + cycle_of[f] as usize].members.push(f);
        }
    }
    let mut edges: Vec<Edge> = Vec::new();
    // Each entity takes its numbers from one walk: functions from the walk that maps
    // them to themselves, cycles from the walk that maps members to their cycle.
    let mut apply = |w: &Walk, select: &dyn Fn(usize) -> bool, entities: &mut Vec<Entity>| {
        for (e, ent) in entities.iter_mut().enumerate() {
            if select(e) {
                ent.self_counters = w.self_counters[e * ncat..(e + 1) * ncat].to_vec();
                ent.total = w.total[e * ncat..(e + 1) * ncat].to_vec();
                ent.recursion = w.recursion[e];
            }
        }
        for edge in &w.edges {
            if !select(edge.callee) {
                continue;
            }
            if edge.caller == edge.callee {
                entities[edge.callee].recursion += edge.calls;
            } else {
                entities[edge.callee].called += edge.calls;
                edges.push(edge.clone());
            }
        }
    };
    match &cwalk {
        Some(cw) => {
            apply(&fwalk, &|e| e < nfunc, &mut entities);
            apply(cw, &|e| e >= nfunc, &mut entities);
        }
        None => apply(&fwalk, &|_| true, &mut entities),
    }

    // Number the cycles by decreasing total bytes, then by their first member's name.
    let mut order: Vec<usize> = (0..ncycles).collect();
    let first_name = |c: usize| {
        entities[nfunc + c].members.iter().map(|&m| entities[m].name.clone()).min().unwrap_or_default()
    };
    order.sort_by(|&a, &b| {
        entities[nfunc + b]
            .total_bytes()
            .cmp(&entities[nfunc + a].total_bytes())
            .then_with(|| first_name(a).cmp(&first_name(b)))
    });
    let mut number = vec![0usize; ncycles];
    for (rank, &c) in order.iter().enumerate() {
        number[c] = rank + 1;
    }
    for e in entities.iter_mut() {
        if let Some(c) = e.cycle {
            e.cycle = Some(number[c]);
        }
        if e.is_cycle {
            e.name = format!("<cycle {}>", e.cycle.unwrap_or(0));
        }
    }
    if options.merge_cycles {
        // Members live on only inside their cycle; their names say which.
        for c in nfunc..nent {
            let members: Vec<String> = entities[c].members.iter().map(|&m| entities[m].name.clone()).collect();
            entities[c].name = format!("{} ({})", entities[c].name, members.join(" "));
        }
    }

    let kept_paths = partial_paths(
        p,
        p.nodes.iter().enumerate().map(|(i, node)| {
            let (allocs, bytes) = node
                .counters
                .iter()
                .fold((0u64, 0u64), |(a, b), c| (a.saturating_add(c.kept_allocs()), b.saturating_add(c.kept_bytes())));
            (i, allocs, bytes)
        }),
        options,
    );
    let figures = p
        .figures
        .iter()
        .map(|f| {
            let rows = f.rows.iter().map(|&(node, count, bytes)| (node.0 as usize, count, bytes));
            (f.name.clone(), partial_paths(p, rows, options))
        })
        .collect();

    let errors = p
        .errors
        .iter()
        .map(|e| {
            let (key, complete) = partial_key(p, e.node.0 as usize, options);
            ErrorRow {
                kind: e.kind,
                count: e.count,
                address: e.address,
                path: PartialPath { steps: steps_of(p, &key), complete, kept_allocs: 0, kept_bytes: 0 },
            }
        })
        .collect();

    let unattributed = p.nodes[0].counters.clone();
    Ok(Reduction {
        ncat,
        totals,
        entities,
        edges,
        unattributed,
        kept_paths,
        figures,
        errors,
        cycles: ncycles,
        cycles_merged: options.merge_cycles,
    })
}

/// Sums per-node (count, bytes) values along partial paths (the last `path_depth` callers,
/// as the leak table shows them), largest bytes first, then by the paths' names; nodes
/// with nothing are skipped. Linear in the nodes times `path_depth`.
fn partial_paths(
    p: &Profile,
    values: impl Iterator<Item = (usize, u64, u64)>,
    options: &ReduceOptions,
) -> Vec<PartialPath> {
    let mut sums: FxHashMap<PathKey, (u64, u64)> = FxHashMap::default();
    for (node, count, bytes) in values {
        if (count == 0 && bytes == 0) || node >= p.nodes.len() {
            continue;
        }
        let slot = sums.entry(partial_key(p, node, options)).or_default();
        slot.0 = slot.0.saturating_add(count);
        slot.1 = slot.1.saturating_add(bytes);
    }
    let mut paths: Vec<PartialPath> = sums
        .into_iter()
        .map(|((key, complete), (kept_allocs, kept_bytes))| PartialPath {
            steps: steps_of(p, &key),
            complete,
            kept_allocs,
            kept_bytes,
        })
        .collect();
    paths.sort_by(|a, b| b.kept_bytes.cmp(&a.kept_bytes).then_with(|| a.steps.cmp_names(&b.steps)));
    paths
}

/// A partial path: (function, call site) pairs outermost first, and whether it is complete.
type PathKey = (Vec<(u32, u64)>, bool);

/// The last `path_depth` (function, call site) pairs above and including `node`,
/// outermost first, and whether that reaches the root.
fn partial_key(p: &Profile, node: usize, options: &ReduceOptions) -> PathKey {
    let mut key = Vec::with_capacity(options.path_depth);
    let mut at = node;
    // A C profile's call sites are source lines: its paths end at the line that
    // called the allocator, where the function's file is known.
    let mut site = options.call_sites || p.language == Language::C;
    while at != 0 && key.len() < options.path_depth {
        let n = &p.nodes[at];
        let lines = options.call_sites || p.function_of(NodeId(at as u32)).is_some_and(|f| f.file.is_some());
        key.push((n.func.0, if site && lines { n.call_site } else { 0 }));
        site = options.call_sites;
        at = n.parent.map_or(0, |x| x.0 as usize);
    }
    key.reverse();
    (key, at == 0)
}

fn steps_of(p: &Profile, key: &[(u32, u64)]) -> Vec<PathStep> {
    key.iter()
        .map(|&(f, site)| {
            let info = p.functions.get(f as usize);
            PathStep {
                name: info.map_or_else(|| "?".to_string(), |i| i.name.clone()),
                call_site: (site != 0).then_some(site),
                // A C call site is a line of the function's file.
                file: if p.language == Language::C { info.and_then(|i| i.file.clone()) } else { None },
            }
        })
        .collect()
}

trait CmpNames {
    fn cmp_names(&self, other: &Self) -> std::cmp::Ordering;
}

impl CmpNames for Vec<PathStep> {
    fn cmp_names(&self, other: &Self) -> std::cmp::Ordering {
        let a = self.iter().map(|s| (&s.name, s.call_site));
        let b = other.iter().map(|s| (&s.name, s.call_site));
        a.cmp(b)
    }
}
