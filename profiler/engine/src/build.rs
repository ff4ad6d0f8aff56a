//! Building a `Profile` from whole paths after the fact, for recorders that keep their
//! own tree while running (libmprof's lock-free tree of return addresses) and turn it
//! into a profile only when they dump.
//!
//! It applies the same rules as the live `Monitor`: equal `FunctionInfo`s are one
//! function, equal (parent, function, call site) triples are one node, and a function
//! calling itself directly folds into its caller's node, whose `recursion` counts the
//! folded levels. Invariant: nodes are created parent first, so node ids grow along
//! every path, as the file format requires.

use std::collections::HashMap;

use crate::monitor::{FuncId, FunctionInfo, NodeId};
use crate::profile::{Counters, Node, Profile};

/// Interns functions and nodes into a profile being built.
#[derive(Default)]
pub struct ProfileBuilder {
    functions: HashMap<FunctionInfo, FuncId>,
    children: HashMap<(u32, u32, u64), u32>,
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
        let parent = if (parent.0 as usize) < profile.nodes.len() { parent.0 } else { 0 };
        if parent != 0 && profile.nodes[parent as usize].func == func {
            profile.nodes[parent as usize].recursion += 1;
            return NodeId(parent);
        }
        let ncat = profile.scheme.len();
        let id = *self.children.entry((parent, func.0, call_site)).or_insert_with(|| {
            profile.nodes.push(Node {
                parent: Some(NodeId(parent)),
                func,
                call_site,
                recursion: 0,
                counters: vec![Counters::default(); ncat],
            });
            profile.nodes.len() as u32 - 1
        });
        NodeId(id)
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
