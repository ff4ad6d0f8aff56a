//! Execution profiles kept beside the memory profile: measured time per calling context,
//! execution counts of source forms, and an input/output summary.
//!
//! These are the data of the two execution profilers the product grew from: pxp's
//! statement counts (printed as an annotated listing by the crate `mprof-listing`) and
//! ATOM's gprof and io tools (printed by `exec_report` in the crate `mprof-display`).
//! They share the profile's function table and file.
//!
//! Invariants (checked by `Exec::validate`, enforced by the file reader):
//! - `time.nodes[0]` is the root (no parent, `FuncId::NONE`); every other time node has a
//!   parent with a smaller index and a function inside the profile's function table; the
//!   same (parent, function) pair appears once;
//! - a time node's `self_ns` is time measured while its function was on top of the stack
//!   in that context, so self times partition the profiled time: the total time of a
//!   function or call arc is a sum of self times over subtrees, taken once per path (the
//!   outermost activation, ATOM's rule for recursion);
//! - every count point names a source inside `sources`; (source, start, kind) is unique
//!   except for entries, where (source, start, function) is: one form may define several
//!   functions (a DEFSTRUCT's constructor and accessors).

use rustc_hash::FxHashMap;

use crate::model::{FuncId, NodeId};

/// How time was measured, printed in the report header so readers can judge the numbers.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ClockInfo {
    /// The clock used, e.g. "tsc (quanta, calibrated against CLOCK_MONOTONIC)".
    pub source: String,
    /// The smallest non-zero difference seen between two reads, in picoseconds.
    pub resolution_ps: u64,
    /// The measured cost of one clock read, in picoseconds.
    pub read_cost_ps: u64,
    /// Picoseconds subtracted per call event (enter or leave) from the self time of the
    /// function on top, to remove the profiler's own cost; 0 when not compensated.
    pub compensation_ps: u64,
    /// Wall time between the start and the end of recording, in nanoseconds.
    pub elapsed_ns: u64,
}

/// One calling context of the time profile.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TimeNode {
    pub parent: Option<NodeId>,
    pub func: FuncId,
    /// Calls that entered this context (folded self-recursive calls included).
    pub calls: u64,
    /// Direct self-recursive calls folded into this node.
    pub recursion: u64,
    /// Time with this context on top of the stack, nanoseconds.
    pub self_ns: u64,
    /// Interpreter instructions executed with this context on top (0 where unknown).
    pub instructions: u64,
}

/// The time profile: a calling-context tree of measured times.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TimeProfile {
    pub clock: ClockInfo,
    pub nodes: Vec<TimeNode>,
}

impl Default for TimeProfile {
    fn default() -> Self {
        TimeProfile {
            clock: ClockInfo::default(),
            nodes: vec![TimeNode { parent: None, func: FuncId::NONE, calls: 0, recursion: 0, self_ns: 0, instructions: 0 }],
        }
    }
}

/// What a count point counts.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum CountKind {
    /// Entries into a function (its call count).
    Entry,
    /// Executions of one branch of a conditional (if, cond, case, when, and, or...).
    Branch,
    /// Executions of a form in a body (progn, let, function and loop bodies).
    Statement,
    /// Executions of a top-level form of a file.
    Toplevel,
}

impl CountKind {
    pub fn code(self) -> u64 {
        match self {
            CountKind::Entry => 0,
            CountKind::Branch => 1,
            CountKind::Statement => 2,
            CountKind::Toplevel => 3,
        }
    }
    pub fn from_code(code: u64) -> Option<CountKind> {
        Some(match code {
            0 => CountKind::Entry,
            1 => CountKind::Branch,
            2 => CountKind::Statement,
            3 => CountKind::Toplevel,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            CountKind::Entry => "entry",
            CountKind::Branch => "branch",
            CountKind::Statement => "statement",
            CountKind::Toplevel => "toplevel",
        }
    }
}

/// A source file whose forms were counted. `hash` (FNV-1a, 64 bits, of the bytes) lets a
/// listing refuse a source that changed since the run, as pxp diagnosed a counter mismatch.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SourceFile {
    pub path: String,
    pub bytes: u64,
    pub hash: u64,
}

/// FNV-1a over `bytes`: the source fingerprint stored in `SourceFile::hash`.
pub fn source_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The execution count of one source form.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CountPoint {
    /// Index into `Exec::sources`.
    pub source: u32,
    /// Byte offsets of the form in the source.
    pub start: u64,
    pub end: u64,
    /// 1-based line and column of `start`.
    pub line: u32,
    pub column: u32,
    pub kind: CountKind,
    /// For entries: the function's name. Otherwise the enclosing function's name ("" at
    /// top level).
    pub function: String,
    /// For entries: how deeply the function is nested in other functions (0 for a
    /// top-level definition), so the summary can indent nested definitions.
    pub depth: u32,
    pub count: u64,
}

/// Input/output of one stream, as ATOM's io tool summarizes per file.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct IoRow {
    /// The file name, or a description such as "*standard-output*" or "string".
    pub stream: String,
    /// Openings of the file (0 for streams that were never opened by the program).
    pub opens: u64,
    /// Calls that read (characters, lines, forms) and calls that wrote.
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Time spent inside those calls, nanoseconds.
    pub time_ns: u64,
}

/// Everything of the execution profile; empty parts are not written to the file.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Exec {
    pub time: Option<TimeProfile>,
    pub sources: Vec<SourceFile>,
    pub counts: Vec<CountPoint>,
    pub io: Vec<IoRow>,
}

impl Exec {
    /// True when the profile holds no execution data at all.
    pub fn is_empty(&self) -> bool {
        self.time.is_none() && self.counts.is_empty() && self.io.is_empty()
    }

    /// Checks the module's invariants against a function table of `nfunc` entries.
    pub fn validate(&self, nfunc: usize) -> Result<(), String> {
        if let Some(t) = &self.time {
            let Some(root) = t.nodes.first() else {
                return Err("the time profile has no root node".into());
            };
            if root.parent.is_some() || root.func != FuncId::NONE {
                return Err("time node 0 is not a root".into());
            }
            for (i, n) in t.nodes.iter().enumerate().skip(1) {
                match n.parent {
                    Some(p) if (p.0 as usize) < i => {}
                    _ => return Err(format!("time node {i} has no parent before it")),
                }
                if n.func.0 as usize >= nfunc {
                    return Err(format!("time node {i} names function {} of {nfunc}", n.func.0));
                }
            }
        }
        for (i, c) in self.counts.iter().enumerate() {
            if c.source as usize >= self.sources.len() {
                return Err(format!("count point {i} names source {} of {}", c.source, self.sources.len()));
            }
        }
        Ok(())
    }

    /// Sums `other` into `self`. `func_map` maps `other`'s function ids to `self`'s.
    /// Time nodes are unified by path, count points by (source path, start, kind) — a
    /// point of a source whose contents differ is kept apart — and I/O rows by stream.
    pub fn absorb(&mut self, other: &Exec, func_map: &[u32]) {
        if let Some(ot) = &other.time {
            let t = self.time.get_or_insert_with(TimeProfile::default);
            if t.clock.source.is_empty() {
                t.clock = ot.clock.clone();
            } else {
                t.clock.elapsed_ns = t.clock.elapsed_ns.saturating_add(ot.clock.elapsed_ns);
            }
            let mut ids: FxHashMap<(u32, u32), u32> = FxHashMap::default();
            for (i, n) in t.nodes.iter().enumerate().skip(1) {
                ids.insert((n.parent.map_or(0, |p| p.0), n.func.0), i as u32);
            }
            let mut map = vec![0u32; ot.nodes.len()];
            for (i, n) in ot.nodes.iter().enumerate() {
                let target = if i == 0 {
                    0
                } else {
                    let parent = n.parent.map_or(0, |p| map[p.0 as usize]);
                    let func = func_map.get(n.func.0 as usize).copied().unwrap_or(n.func.0);
                    *ids.entry((parent, func)).or_insert_with(|| {
                        t.nodes.push(TimeNode {
                            parent: Some(NodeId(parent)),
                            func: FuncId(func),
                            calls: 0,
                            recursion: 0,
                            self_ns: 0,
                            instructions: 0,
                        });
                        t.nodes.len() as u32 - 1
                    })
                };
                map[i] = target;
                let d = &mut t.nodes[target as usize];
                d.calls = d.calls.saturating_add(n.calls);
                d.recursion = d.recursion.saturating_add(n.recursion);
                d.self_ns = d.self_ns.saturating_add(n.self_ns);
                d.instructions = d.instructions.saturating_add(n.instructions);
            }
        }
        let mut source_map = Vec::with_capacity(other.sources.len());
        for s in &other.sources {
            let idx = match self.sources.iter().position(|x| x == s) {
                Some(i) => i,
                None => {
                    self.sources.push(s.clone());
                    self.sources.len() - 1
                }
            };
            source_map.push(idx as u32);
        }
        let key = |c: &CountPoint, source: u32| {
            let name = if c.kind == CountKind::Entry { c.function.clone() } else { String::new() };
            (source, c.start, c.kind, name)
        };
        let mut point_ids: FxHashMap<(u32, u64, CountKind, String), usize> = FxHashMap::default();
        for (i, c) in self.counts.iter().enumerate() {
            point_ids.insert(key(c, c.source), i);
        }
        for c in &other.counts {
            let source = source_map.get(c.source as usize).copied().unwrap_or(c.source);
            match point_ids.get(&key(c, source)) {
                Some(&i) => self.counts[i].count = self.counts[i].count.saturating_add(c.count),
                None => {
                    point_ids.insert(key(c, source), self.counts.len());
                    self.counts.push(CountPoint { source, ..c.clone() });
                }
            }
        }
        for row in &other.io {
            match self.io.iter_mut().find(|r| r.stream == row.stream) {
                Some(r) => {
                    r.opens += row.opens;
                    r.reads += row.reads;
                    r.writes += row.writes;
                    r.bytes_read += row.bytes_read;
                    r.bytes_written += row.bytes_written;
                    r.time_ns += row.time_ns;
                }
                None => self.io.push(row.clone()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(nodes: &[(u32, u32, u64)]) -> Exec {
        let mut t = TimeProfile::default();
        for &(parent, func, self_ns) in nodes {
            t.nodes.push(TimeNode {
                parent: Some(NodeId(parent)),
                func: FuncId(func),
                calls: 1,
                recursion: 0,
                self_ns,
                instructions: 0,
            });
        }
        Exec { time: Some(t), ..Exec::default() }
    }

    #[test]
    fn absorb_unifies_paths_and_maps_functions() {
        let mut a = time(&[(0, 0, 10), (1, 1, 5)]);
        // In b, function 0 is a's function 1 and function 1 is a's function 0.
        let b = time(&[(0, 1, 7), (1, 0, 3)]);
        a.absorb(&b, &[1, 0]);
        let t = a.time.as_ref().map(|t| t.nodes.clone()).unwrap_or_default();
        assert_eq!(t.len(), 3, "b's path 0->1 is a's path 0->1 after mapping");
        assert_eq!((t[1].self_ns, t[1].calls), (17, 2));
        assert_eq!((t[2].self_ns, t[2].calls), (8, 2));
        assert!(a.validate(2).is_ok());
    }

    #[test]
    fn absorb_sums_counts_of_the_same_source_only() {
        let src = SourceFile { path: "a.lisp".into(), bytes: 3, hash: source_hash(b"abc") };
        let changed = SourceFile { hash: source_hash(b"abd"), ..src.clone() };
        let point = |source| CountPoint {
            source,
            start: 0,
            end: 3,
            line: 1,
            column: 1,
            kind: CountKind::Statement,
            function: String::new(),
            depth: 0,
            count: 4,
        };
        let mut a = Exec { sources: vec![src.clone()], counts: vec![point(0)], ..Exec::default() };
        a.absorb(&Exec { sources: vec![src], counts: vec![point(0)], ..Exec::default() }, &[]);
        assert_eq!(a.counts.len(), 1);
        assert_eq!(a.counts[0].count, 8);
        a.absorb(&Exec { sources: vec![changed], counts: vec![point(0)], ..Exec::default() }, &[]);
        assert_eq!(a.counts.len(), 2, "a changed source is a different source");
        assert_eq!(a.sources.len(), 2);
    }

    #[test]
    fn validate_rejects_bad_parents_and_sources() {
        let bad = time(&[(1, 0, 1)]);
        assert!(bad.validate(1).is_err());
        let e = Exec { counts: vec![CountPoint {
            source: 3,
            start: 0,
            end: 1,
            line: 1,
            column: 1,
            kind: CountKind::Entry,
            function: "f".into(),
            depth: 0,
            count: 1,
        }], ..Exec::default() };
        assert!(e.validate(0).unwrap_err().contains("source 3"));
    }
}
