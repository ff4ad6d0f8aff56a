//! Distinct stacks: the calling-context tree with every node whose path reads the same
//! (the same function names from the top down) merged into one, which is what folded
//! stacks and flame graphs draw.
//!
//! Built in one pass over the nodes (parents come before children), it holds one entry
//! per distinct stack and never a path's text: a stack's name path is spelled only while
//! it is written. Writing is a depth-first walk on an explicit stack, children in name
//! order, so memory stays linear in the tree however deep it is, and the output is
//! stable and diff-able. Folded stack text itself is as long as the sum of its stacks'
//! depths, so it is written to a stream, not built in memory.

use std::io::{self, Write};

use rustc_hash::FxHashMap;

use mprof_engine::profile::{Counters, Profile};


/// Which number a folded-stack or flame-graph export counts. The first three read a
/// memory profile; `TimeNs`, `Calls` and `Instructions` read the time view of a profile
/// (`mprof_display::exec_report::time_view`: category 0 holds calls and self nanoseconds, category 1
/// instructions).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum FoldedValue {
    #[default]
    Bytes,
    Allocs,
    KeptBytes,
    TimeNs,
    Calls,
    Instructions,
}

impl FoldedValue {
    /// The value of one node, from its per-category counters.
    pub(crate) fn of(self, cs: &[Counters]) -> u64 {
        let sum = |f: fn(&Counters) -> u64| cs.iter().map(f).fold(0u64, u64::saturating_add);
        match self {
            FoldedValue::Bytes => sum(|c| c.bytes),
            FoldedValue::Allocs => sum(|c| c.allocs),
            FoldedValue::KeptBytes => sum(Counters::kept_bytes),
            FoldedValue::TimeNs => cs.first().map_or(0, |c| c.bytes),
            FoldedValue::Calls => cs.first().map_or(0, |c| c.allocs),
            FoldedValue::Instructions => cs.get(1).map_or(0, |c| c.bytes),
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            FoldedValue::Bytes => "bytes",
            FoldedValue::Allocs => "allocations",
            FoldedValue::KeptBytes => "bytes kept",
            FoldedValue::TimeNs => "ns",
            FoldedValue::Calls => "calls",
            FoldedValue::Instructions => "instructions",
        }
    }

    /// True for the values of a time view.
    pub fn is_time(self) -> bool {
        matches!(self, FoldedValue::TimeNs | FoldedValue::Calls | FoldedValue::Instructions)
    }
}

/// The frame name of allocations made outside any function.
pub const OUTSIDE: &str = "<outside any function>";

/// Frame names as folded stacks print them: `;` separates frames there.
pub fn folded_name(name: &str) -> String {
    name.replace(';', ":").replace(['\n', '\r'], " ")
}

/// Distinct stacks of one profile and one value. Entry 0 is the root (the value of
/// allocations outside any function); every other entry is a frame under its parent.
pub struct Stacks {
    /// Distinct frame names (folded spelling).
    pub names: Vec<String>,
    /// Per stack: its parent stack (0 for top-level frames; unused for the root).
    pub parent: Vec<u32>,
    /// Per stack: index into `names`.
    pub name: Vec<u32>,
    /// Per stack: its own value (the sum over the merged nodes).
    pub value: Vec<u64>,
    /// Per stack: its children, in name order.
    pub children: Vec<Vec<u32>>,
    /// Per node of the profile: the stack it was merged into (0 for the root).
    pub of_node: Vec<u32>,
}

impl Stacks {
    /// The distinct stacks of `p` (which must be valid) counting `value`.
    pub fn new(p: &Profile, value: FoldedValue) -> Stacks {
        let mut names: Vec<String> = vec![OUTSIDE.to_string()];
        let mut name_ids: FxHashMap<String, u32> = FxHashMap::default();
        let func_name: Vec<u32> = p
            .functions
            .iter()
            .map(|f| {
                let folded = folded_name(&f.name);
                *name_ids.entry(folded.clone()).or_insert_with(|| {
                    names.push(folded);
                    names.len() as u32 - 1
                })
            })
            .collect();
        let mut s = Stacks {
            names,
            parent: vec![0],
            name: vec![0],
            value: vec![0],
            children: vec![Vec::new()],
            of_node: vec![0; p.nodes.len()],
        };
        let mut by_key: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        for (i, node) in p.nodes.iter().enumerate() {
            let v = value.of(&node.counters);
            let Some(parent) = node.parent else {
                s.value[0] = s.value[0].saturating_add(v);
                continue;
            };
            let parent_stack = s.of_node[parent.0 as usize];
            let name = func_name.get(node.func.0 as usize).copied().unwrap_or(0);
            let id = *by_key.entry((parent_stack, name)).or_insert_with(|| {
                s.parent.push(parent_stack);
                s.name.push(name);
                s.value.push(0);
                s.children.push(Vec::new());
                let id = s.parent.len() as u32 - 1;
                s.children[parent_stack as usize].push(id);
                id
            });
            s.of_node[i] = id;
            s.value[id as usize] = s.value[id as usize].saturating_add(v);
        }
        let names = &s.names;
        let name_of = &s.name;
        for kids in &mut s.children {
            kids.sort_by(|&a, &b| names[name_of[a as usize] as usize].cmp(&names[name_of[b as usize] as usize]));
        }
        s
    }

    /// Each stack's value plus its descendants' (the width of its flame-graph frame).
    pub fn inclusive(&self) -> Vec<u64> {
        let mut incl = self.value.clone();
        // Children are always created after their parent.
        for i in (1..incl.len()).rev() {
            let parent = self.parent[i] as usize;
            incl[parent] = incl[parent].saturating_add(incl[i]);
        }
        incl
    }

    /// Each stack's own value of another quantity of the same profile (the stacks'
    /// shape does not depend on the value they were built with).
    pub fn values_of(&self, p: &Profile, value: FoldedValue) -> Vec<u64> {
        let mut out = vec![0u64; self.parent.len()];
        for (node, &stack) in p.nodes.iter().zip(&self.of_node) {
            let slot = &mut out[stack as usize];
            *slot = slot.saturating_add(value.of(&node.counters));
        }
        out
    }

    /// The bytes `write_folded` would write.
    pub fn folded_len(&self) -> u64 {
        let mut path_len = vec![0u64; self.parent.len()];
        let mut total = 0u64;
        for i in 0..self.parent.len() {
            let own = self.names[self.name[i] as usize].len() as u64;
            path_len[i] = match i {
                0 => own,
                _ if self.parent[i] == 0 => own,
                _ => path_len[self.parent[i] as usize] + 1 + own,
            };
            if self.value[i] > 0 {
                total += path_len[i] + 2 + self.value[i].ilog10() as u64 + 1;
            }
        }
        total
    }

    /// One line per stack with a nonzero value, `outer;...;inner value`, depth first
    /// with siblings in name order (the root's line first).
    pub fn write_folded(&self, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        if self.value[0] > 0 {
            writeln!(out, "{} {}", OUTSIDE, self.value[0])?;
        }
        let mut path = String::new();
        // (stack, length of `path` before it) on the way down.
        let mut work: Vec<(u32, usize)> = self.children[0].iter().rev().map(|&c| (c, 0)).collect();
        while let Some((id, at)) = work.pop() {
            path.truncate(at);
            if at > 0 {
                path.push(';');
            }
            path.push_str(&self.names[self.name[id as usize] as usize]);
            if self.value[id as usize] > 0 {
                writeln!(out, "{path} {}", self.value[id as usize])?;
            }
            let len = path.len();
            work.extend(self.children[id as usize].iter().rev().map(|&c| (c, len)));
        }
        Ok(())
    }
}
