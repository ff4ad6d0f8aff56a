//! Turning a stack of return addresses into a tree node, looking up only what changed.
//!
//! The paper (section 3.2) measured that 60-75% of the call chain is unchanged between two
//! allocations. `StackCache` keeps the previous stack and the node reached after each of
//! its frames, so a new stack costs one slice comparison plus one `Monitor::child` lookup
//! per frame past the common prefix. Invariant: `nodes[i]` is the node for
//! `frames[..=i]` in the monitor the cache was last used with; use one cache per monitor
//! (per thread). The cache knows nothing of how addresses map to functions: the caller's
//! `func_of` does that.

use crate::monitor::{FuncId, Monitor, NodeId};

/// The previous stack and its node path.
#[derive(Default, Debug, Clone)]
pub struct StackCache {
    frames: Vec<u64>,
    nodes: Vec<NodeId>,
}

impl StackCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// `frames`: return addresses, outermost first. Each frame's address is also its call
    /// site. Compares with the previous stack and looks up only the changed suffix.
    pub fn node_for(
        &mut self,
        monitor: &mut Monitor,
        frames: &[u64],
        mut func_of: impl FnMut(&mut Monitor, u64) -> FuncId,
    ) -> NodeId {
        let common = self.frames.iter().zip(frames).take_while(|(a, b)| a == b).count();
        self.frames.truncate(common);
        self.nodes.truncate(common);
        let mut node = self.nodes.last().copied().unwrap_or(NodeId::ROOT);
        for &addr in &frames[common..] {
            let func = func_of(monitor, addr);
            node = monitor.child(node, func, addr);
            self.frames.push(addr);
            self.nodes.push(node);
        }
        node
    }

    /// Forgets the previous stack (e.g. after switching monitors).
    pub fn clear(&mut self) {
        self.frames.clear();
        self.nodes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{FunctionInfo, MonitorOptions};
    use crate::scheme::{CategoryScheme, Language};

    #[test]
    fn only_the_changed_suffix_is_looked_up() {
        let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
        let mut cache = StackCache::new();
        let mut lookups = 0;
        let mut func_of = |m: &mut Monitor, addr: u64| {
            lookups += 1;
            m.function(FunctionInfo::named(format!("f{}", addr / 100)))
        };
        let a = cache.node_for(&mut m, &[100, 200, 300], &mut func_of);
        let b = cache.node_for(&mut m, &[100, 200, 301], &mut func_of);
        let c = cache.node_for(&mut m, &[100, 250], &mut func_of);
        let d = cache.node_for(&mut m, &[100, 200, 300], &mut func_of);
        assert_eq!(lookups, 3 + 1 + 1 + 2);
        assert_eq!(a, b, "same functions, call sites not distinguished");
        assert_eq!(a, d);
        assert_ne!(a, c);
        assert_eq!(m.parent(m.parent(a).unwrap_or(NodeId::ROOT)), m.parent(c));
    }
}
