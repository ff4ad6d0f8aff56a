//! How a calling-context tree grows: the one rule of node interning and self-recursion
//! folding, shared by the live recorder (`Monitor::child`) and by the builder of
//! profiles from whole paths (`ProfileBuilder::child`), so that a tree recorded live and
//! one rebuilt after the fact have the same shape.
//!
//! The rule, for a call of `func` from `call_site` under `parent`:
//! - a parent id the tree does not hold stands for the root;
//! - when folding, a direct call of the parent's own function (the root excepted) is the
//!   parent itself, whose `recursion` counts the folded call;
//! - a tree that refuses to grow below `parent` (the monitor's depth cap) answers `parent`;
//! - otherwise equal (parent, function, call site) triples are one node, made on first
//!   sight after every node made before it, so ids grow along every path.

use rustc_hash::FxHashMap;

use crate::model::{FuncId, NodeId};

/// A tree's nodes, as the rule needs to see them.
pub(crate) trait Tree {
    /// How many nodes the tree holds, the root (node 0) included.
    fn len(&self) -> usize;
    /// The function of node `node` (an index below `len`).
    fn func(&self, node: u32) -> FuncId;
    /// Counts one folded self-recursive call on `node`.
    fn fold(&mut self, node: u32);
    /// Whether no node may be made below `parent` (the depth cap).
    fn full_below(&self, parent: u32) -> bool;
    /// Makes the node for (parent, func, call site) and returns its id, `len()` before the call.
    fn add(&mut self, parent: u32, func: FuncId, call_site: u64) -> u32;
}

/// The children of every node of one tree, by (parent, function, call site).
#[derive(Default, Clone, Debug)]
pub(crate) struct Children(FxHashMap<(u32, u32, u64), u32>);

impl Children {
    /// The node for calling `func` from `call_site` under `parent` in `tree` (see the
    /// module's rule); `fold` folds direct self-recursion.
    #[inline]
    pub(crate) fn child(
        &mut self,
        tree: &mut impl Tree,
        parent: NodeId,
        func: FuncId,
        call_site: u64,
        fold: bool,
    ) -> NodeId {
        let parent = if (parent.0 as usize) < tree.len() { parent.0 } else { 0 };
        if parent != 0 && fold && tree.func(parent) == func {
            tree.fold(parent);
            return NodeId(parent);
        }
        if tree.full_below(parent) {
            return NodeId(parent);
        }
        let key = (parent, func.0, call_site);
        if let Some(&id) = self.0.get(&key) {
            return NodeId(id);
        }
        let id = tree.add(parent, func, call_site);
        self.0.insert(key, id);
        NodeId(id)
    }
}
