//! Building a `Profile` from whole paths after the fact, for recorders that keep their
//! own tree while running (libmprof's lock-free tree of return addresses) and turn it
//! into a profile only when they dump.
//!
//! It applies the same rules as the live `Monitor`: equal `FunctionInfo`s are one
//! function, and the tree grows by the monitor's own rule (`grow.rs`): equal (parent,
//! function, call site) triples are one node, and a function calling itself directly
//! folds into its caller's node, whose `recursion` counts the folded levels (always
//! folded here, and no depth cap: the recorder capped its paths already). Invariant:
//! nodes are created parent first, so node ids grow along every path, as the file
//! format requires.

use std::collections::HashMap;

use crate::grow::{Children, Tree};
use crate::model::{FuncId, FunctionInfo, NodeId};
use crate::profile::{Counters, Node, Profile};

/// Interns functions and nodes into a profile being built.
#[derive(Default)]
pub struct ProfileBuilder {
    functions: HashMap<FunctionInfo, FuncId>,
    children: Children,
}

/// A profile's nodes as the growth rule sees them.
struct ProfileTree<'a>(&'a mut Profile);

impl Tree for ProfileTree<'_> {
    fn len(&self) -> usize {
        self.0.nodes.len()
    }

    fn func(&self, node: u32) -> FuncId {
        self.0.nodes[node as usize].func
    }

    fn fold(&mut self, node: u32) {
        self.0.nodes[node as usize].recursion += 1;
    }

    fn full_below(&self, _parent: u32) -> bool {
        false
    }

    fn add(&mut self, parent: u32, func: FuncId, call_site: u64) -> u32 {
        let counters = vec![Counters::default(); self.0.scheme.len()];
        self.0.nodes.push(Node { parent: Some(NodeId(parent)), func, call_site, recursion: 0, counters });
        self.0.nodes.len() as u32 - 1
    }
}

impl ProfileBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `info` in `profile`, adding it on first sight.
    pub fn function(&mut self, profile: &mut Profile, info: FunctionInfo) -> FuncId {
        if let Some(&id) = self.functions.get(&info) {
            return id;
        }
        profile.functions.push(info.clone());
        let id = FuncId(profile.functions.len() as u32 - 1);
        self.functions.insert(info, id);
        id
    }

    /// The node for calling `func` from `call_site` under `parent`; a direct call of
    /// the parent's own function folds into the parent (counted in its `recursion`).
    pub fn child(&mut self, profile: &mut Profile, parent: NodeId, func: FuncId, call_site: u64) -> NodeId {
        self.children.child(&mut ProfileTree(profile), parent, func, call_site, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::{CategoryScheme, Language};

    #[test]
    fn equal_paths_share_nodes_and_self_recursion_folds() {
        let mut p = Profile::empty(Language::C, CategoryScheme::c_sizes());
        let mut b = ProfileBuilder::new();
        let main = b.function(&mut p, FunctionInfo::named("main"));
        let walk = b.function(&mut p, FunctionInfo::named("walk"));
        assert_eq!(b.function(&mut p, FunctionInfo::named("walk")), walk);
        let m = b.child(&mut p, NodeId::ROOT, main, 0);
        let w = b.child(&mut p, m, walk, 0);
        assert_eq!(b.child(&mut p, w, walk, 0), w, "walk calling walk folds");
        assert_eq!(b.child(&mut p, w, walk, 0), w);
        assert_eq!(p.nodes[w.0 as usize].recursion, 2);
        assert_eq!(b.child(&mut p, m, walk, 0), w, "the same path is the same node");
        assert_ne!(b.child(&mut p, m, walk, 7), w, "another call site is another node");
        assert_eq!(p.functions.len(), 2);
        assert_eq!(p.validate(), Ok(()));
    }
}
