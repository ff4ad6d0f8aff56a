//! The monitor: a single-threaded recorder that builds the calling-context tree (CCT).
//!
//! A node is one distinct call path (function, plus call site when asked for); each node
//! carries one `Counters` per category. Recording an allocation when the caller holds its
//! node is two indexed additions (node counters and bin counters): O(1). `child` looks a
//! node up in one hash map keyed by (parent, function, call site), so resolving a path
//! costs one lookup per frame; a host that memoizes the nodes of its frames (the Lisp
//! interpreter does) pays one per *changed* frame. The tree grows by the rule of
//! `grow.rs`, which `ProfileBuilder` shares.
//!
//! Invariants: node 0 is the root and has no function (`FuncId::NONE`); every other node's
//! parent has a smaller index, so one reverse sweep sums subtrees. Node ids handed out are
//! never invalidated (`reset` zeroes counters but keeps the tree), so callers may memoize
//! them; an out-of-range node id is counted on the root rather than trusted.
//! The monitor knows nothing of Lisp or C: it is given ids, sizes and category indices.
//! Tests: the unit tests below and tools/mprof/tests/.

use rustc_hash::FxHashMap;

use crate::exec::Exec;
use crate::grow::{Children, Tree};
use crate::profile::{BinKey, BinRow, Counters, HeapError, Node, Profile};
use crate::scheme::{CategoryScheme, Language, SIZE_BINS, size_bin};

// The model's ids and values that the recorder's methods take and return, re-exported
// for its users (a reader of profiles imports them from `model`).
use crate::model::{FuncId, FunctionInfo, HeapErrorKind, NodeId, Sample, TypeId};

/// How the monitor shapes the tree.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MonitorOptions {
    /// Distinguish call sites: the same function called from two places gets two nodes.
    pub call_sites: bool,
    /// Deepest node depth (the root is depth 0); frames beyond it are counted on the
    /// node at the cap, so pathological recursion cannot grow the tree without bound.
    pub max_depth: u32,
    /// A function calling itself directly stays on one node whose `recursion` counts
    /// the folded calls.
    pub fold_self_recursion: bool,
}

impl Default for MonitorOptions {
    fn default() -> Self {
        MonitorOptions { call_sites: false, max_depth: 512, fold_self_recursion: true }
    }
}

/// The bin an allocation is counted in: C by size (0..=1024, larger sizes share a bin),
/// Lisp by type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Bin {
    Size(u64),
    Type(TypeId),
}

/// Sums over the whole profile.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Totals {
    pub per_category: Vec<Counters>,
    pub overall: Counters,
}

#[derive(Clone, Copy)]
struct NodeData {
    parent: u32,
    func: FuncId,
    call_site: u64,
    depth: u32,
    recursion: u64,
}

/// The monitor's tree as the growth rule sees it.
struct MonitorTree<'a> {
    nodes: &'a mut Vec<NodeData>,
    counters: &'a mut Vec<Counters>,
    categories: usize,
    max_depth: u32,
}

impl Tree for MonitorTree<'_> {
    fn len(&self) -> usize {
        self.nodes.len()
    }

    fn func(&self, node: u32) -> FuncId {
        self.nodes[node as usize].func
    }

    fn fold(&mut self, node: u32) {
        self.nodes[node as usize].recursion += 1;
    }

    fn full_below(&self, parent: u32) -> bool {
        self.nodes[parent as usize].depth >= self.max_depth
    }

    fn add(&mut self, parent: u32, func: FuncId, call_site: u64) -> u32 {
        let id = self.nodes.len() as u32;
        let depth = self.nodes[parent as usize].depth + 1;
        self.nodes.push(NodeData { parent, func, call_site, depth, recursion: 0 });
        self.counters.extend(std::iter::repeat_n(Counters::default(), self.categories));
        id
    }
}

/// The most points a monitor keeps of the memory-over-time series.
pub const MAX_SAMPLES: usize = 4096;

/// The recorder. Single-threaded (it is `Send`): a multi-threaded host records per
/// thread and merges the resulting `Profile`s, or guards one monitor with a lock.
pub struct Monitor {
    language: Language,
    scheme: CategoryScheme,
    options: MonitorOptions,
    functions: Vec<FunctionInfo>,
    function_ids: FxHashMap<FunctionInfo, FuncId>,
    types: Vec<String>,
    type_ids: FxHashMap<String, TypeId>,
    nodes: Vec<NodeData>,
    children: Children,
    /// `nodes.len() * ncat` counters, node-major.
    counters: Vec<Counters>,
    /// One per size bin (`scheme::size_bin`).
    size_bins: Vec<Counters>,
    size_labels: FxHashMap<BinKey, Vec<String>>,
    type_bins: Vec<Counters>,
    errors: Vec<HeapError>,
    error_index: FxHashMap<(HeapErrorKind, u32), usize>,
    samples: Vec<Sample>,
    metadata: Vec<(String, String)>,
}

impl Monitor {
    /// A monitor with an empty tree. An empty scheme is replaced by a single "all"
    /// category so that indexing stays total.
    pub fn new(language: Language, scheme: CategoryScheme, options: MonitorOptions) -> Self {
        let scheme = if scheme.is_empty() {
            CategoryScheme { categories: vec![crate::scheme::Category { letter: 'a', name: "all".into() }] }
        } else {
            scheme
        };
        let ncat = scheme.len();
        Monitor {
            language,
            scheme,
            options,
            functions: Vec::new(),
            function_ids: FxHashMap::default(),
            types: Vec::new(),
            type_ids: FxHashMap::default(),
            nodes: vec![NodeData { parent: 0, func: FuncId::NONE, call_site: 0, depth: 0, recursion: 0 }],
            children: Children::default(),
            counters: vec![Counters::default(); ncat],
            size_bins: vec![Counters::default(); SIZE_BINS],
            size_labels: FxHashMap::default(),
            type_bins: Vec::new(),
            errors: Vec::new(),
            error_index: FxHashMap::default(),
            samples: Vec::new(),
            metadata: Vec::new(),
        }
    }

    pub fn language(&self) -> Language {
        self.language
    }

    pub fn scheme(&self) -> &CategoryScheme {
        &self.scheme
    }

    pub fn options(&self) -> MonitorOptions {
        self.options
    }

    /// Number of nodes in the tree, the root included.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Interns a function: the same info always gives the same id.
    pub fn function(&mut self, info: FunctionInfo) -> FuncId {
        if let Some(&id) = self.function_ids.get(&info) {
            return id;
        }
        let id = FuncId(self.functions.len() as u32);
        self.functions.push(info.clone());
        self.function_ids.insert(info, id);
        id
    }

    /// The info of an interned function.
    pub fn function_info(&self, id: FuncId) -> Option<&FunctionInfo> {
        self.functions.get(id.0 as usize)
    }

    /// Interns a type name used as a Lisp bin key. Past 65,535 distinct names every
    /// further name shares the last id (the bin table stays bounded).
    pub fn type_name(&mut self, name: &str) -> TypeId {
        if let Some(&id) = self.type_ids.get(name) {
            return id;
        }
        if self.types.len() > u16::MAX as usize {
            return TypeId(u16::MAX);
        }
        let id = TypeId(self.types.len() as u16);
        self.types.push(name.to_string());
        self.type_ids.insert(name.to_string(), id);
        self.type_bins.push(Counters::default());
        id
    }

    /// Names a C size bin with a user type of that size (the bin table's "types" column).
    pub fn label_size(&mut self, size: u64, type_name: &str) {
        let labels = self.size_labels.entry(BinKey::of_size(size)).or_default();
        if !labels.iter().any(|l| l == type_name) {
            labels.push(type_name.to_string());
        }
    }

    /// Adds a key/value pair (program, command line, date...) to the profile's metadata.
    pub fn set_metadata(&mut self, key: &str, value: &str) {
        if let Some(entry) = self.metadata.iter_mut().find(|(k, _)| k == key) {
            entry.1 = value.to_string();
        } else {
            self.metadata.push((key.to_string(), value.to_string()));
        }
    }

    /// The node for calling `func` (from `call_site`) under `parent`. O(1) on average.
    /// Honours the depth cap and folds direct self-recursion when asked to (the rule
    /// of `grow.rs`, which `ProfileBuilder` shares).
    pub fn child(&mut self, parent: NodeId, func: FuncId, call_site: u64) -> NodeId {
        let call_site = if self.options.call_sites { call_site } else { 0 };
        let mut tree = MonitorTree {
            nodes: &mut self.nodes,
            counters: &mut self.counters,
            categories: self.scheme.len(),
            max_depth: self.options.max_depth,
        };
        self.children.child(&mut tree, parent, func, call_site, self.options.fold_self_recursion)
    }

    /// The node for a whole path of functions, outermost first (for tests and for hosts
    /// that rebuild paths; hot paths should memoize nodes and use `child`).
    pub fn path(&mut self, funcs: &[FuncId]) -> NodeId {
        funcs.iter().fold(NodeId::ROOT, |node, &f| self.child(node, f, 0))
    }

    /// Parent of a node (None for the root or an unknown id).
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        match node.0 {
            0 => None,
            i => self.nodes.get(i as usize).map(|n| NodeId(n.parent)),
        }
    }

    fn slot(&self, node: NodeId, category: u8) -> usize {
        let ncat = self.scheme.len();
        let node = if (node.0 as usize) < self.nodes.len() { node.0 as usize } else { 0 };
        node * ncat + (category as usize).min(ncat - 1)
    }

    fn bin_slot(&mut self, bin: Bin) -> Option<&mut Counters> {
        match bin {
            Bin::Size(size) => self.size_bins.get_mut(size_bin(size)),
            Bin::Type(t) => self.type_bins.get_mut(t.0 as usize),
        }
    }

    /// Counts one allocation of `size` bytes on `node`. O(1).
    pub fn record_alloc(&mut self, node: NodeId, category: u8, size: u64, bin: Bin) {
        let i = self.slot(node, category);
        let c = &mut self.counters[i];
        c.allocs += 1;
        c.bytes += size;
        if let Some(b) = self.bin_slot(bin) {
            b.allocs += 1;
            b.bytes += size;
        }
    }

    /// Adds counts gathered elsewhere (a recorder that batches per allocation site
    /// between reports) to `node` and its bin, as that many `record_alloc` and
    /// `record_free` calls would. O(1).
    pub fn record_counts(&mut self, node: NodeId, category: u8, bin: Bin, counts: &Counters) {
        let i = self.slot(node, category);
        self.counters[i].add(counts);
        if let Some(b) = self.bin_slot(bin) {
            b.add(counts);
        }
    }

    /// Counts one free of an object of `size` bytes that was allocated on `node`. O(1).
    pub fn record_free(&mut self, node: NodeId, category: u8, size: u64, bin: Bin) {
        let i = self.slot(node, category);
        let c = &mut self.counters[i];
        c.frees += 1;
        c.freed_bytes += size;
        if let Some(b) = self.bin_slot(bin) {
            b.frees += 1;
            b.freed_bytes += size;
        }
    }

    /// Records a heap error seen at `node`; repeated errors of one kind on one path are
    /// counted together, keeping the first address.
    pub fn record_error(&mut self, kind: HeapErrorKind, node: NodeId, address: u64) {
        let node = if (node.0 as usize) < self.nodes.len() { node } else { NodeId::ROOT };
        if let Some(&i) = self.error_index.get(&(kind, node.0)) {
            self.errors[i].count += 1;
            return;
        }
        self.error_index.insert((kind, node.0), self.errors.len());
        self.errors.push(HeapError { kind, node, address, count: 1 });
    }

    /// Appends a point of the memory-over-time series. The series stays under
    /// [`MAX_SAMPLES`] points: when full, each pair of neighbours becomes the one
    /// of them with more live bytes, so the shape of a long run and its peak survive.
    pub fn record_sample(&mut self, sample: Sample) {
        self.samples.push(sample);
        if self.samples.len() >= MAX_SAMPLES {
            let old = std::mem::take(&mut self.samples);
            self.samples = old
                .chunks(2)
                .map(|pair| match pair {
                    [a, b] if b.live_bytes > a.live_bytes => *b,
                    [a, ..] => *a,
                    [] => sample,
                })
                .collect();
        }
    }

    /// How many points the memory-over-time series holds.
    pub fn sample_count(&self) -> usize {
        self.samples.len()
    }

    /// Zeroes every counter and forgets errors and samples. The tree itself is kept, so
    /// node ids memoized by the host stay valid; nodes left empty are dropped on export.
    pub fn reset(&mut self) {
        self.counters.iter_mut().for_each(|c| *c = Counters::default());
        self.size_bins.iter_mut().for_each(|c| *c = Counters::default());
        self.type_bins.iter_mut().for_each(|c| *c = Counters::default());
        self.nodes.iter_mut().for_each(|n| n.recursion = 0);
        self.errors.clear();
        self.error_index.clear();
        self.samples.clear();
    }

    /// Sums of all counters, per category and overall.
    pub fn totals(&self) -> Totals {
        let ncat = self.scheme.len();
        let mut per_category = vec![Counters::default(); ncat];
        for (i, c) in self.counters.iter().enumerate() {
            per_category[i % ncat].add(c);
        }
        let mut overall = Counters::default();
        per_category.iter().for_each(|c| overall.add(c));
        Totals { per_category, overall }
    }

    /// A snapshot of everything recorded, in the file's data model. Nodes whose subtree
    /// holds no count, no recursion and no error are left out.
    pub fn to_profile(&self) -> Profile {
        let ncat = self.scheme.len();
        let n = self.nodes.len();
        let mut keep = vec![false; n];
        for e in &self.errors {
            keep[e.node.0 as usize] = true;
        }
        for i in (0..n).rev() {
            let own = self.nodes[i].recursion != 0
                || self.counters[i * ncat..(i + 1) * ncat].iter().any(|c| !c.is_zero());
            if own {
                keep[i] = true;
            }
            if keep[i] && i != 0 {
                keep[self.nodes[i].parent as usize] = true;
            }
        }
        keep[0] = true;
        let mut new_index = vec![u32::MAX; n];
        let mut nodes = Vec::new();
        for i in 0..n {
            if !keep[i] {
                continue;
            }
            new_index[i] = nodes.len() as u32;
            let d = &self.nodes[i];
            nodes.push(Node {
                parent: if i == 0 { None } else { Some(NodeId(new_index[d.parent as usize])) },
                func: d.func,
                call_site: d.call_site,
                recursion: d.recursion,
                counters: self.counters[i * ncat..(i + 1) * ncat].to_vec(),
            });
        }
        // One row per bin up to LARGEST_SIZE_BIN, then the bins above it summed in one.
        let mut size_rows: Vec<(BinKey, Counters)> = Vec::new();
        for (bin, c) in self.size_bins.iter().enumerate() {
            let key = BinKey::of_bin(bin);
            match size_rows.last_mut() {
                Some((k, sum)) if *k == key => sum.add(c),
                _ => size_rows.push((key, *c)),
            }
        }
        let mut bins = Vec::new();
        for (key, c) in size_rows {
            let labels = self.size_labels.get(&key).cloned().unwrap_or_default();
            let larger = key == BinKey::Larger;
            // The "> 1024" bin is always present, as the paper prints it even when empty.
            if !c.is_zero() || larger || !labels.is_empty() {
                if self.language == Language::Lisp && larger && c.is_zero() {
                    continue;
                }
                bins.push(BinRow { key, counters: c, labels });
            }
        }
        for (t, c) in self.type_bins.iter().enumerate() {
            if !c.is_zero() {
                bins.push(BinRow { key: BinKey::Type(TypeId(t as u16)), counters: *c, labels: Vec::new() });
            }
        }
        let errors = self
            .errors
            .iter()
            .map(|e| HeapError { node: NodeId(new_index[e.node.0 as usize]), ..*e })
            .collect();
        Profile {
            language: self.language,
            scheme: self.scheme.clone(),
            functions: self.functions.clone(),
            types: self.types.clone(),
            nodes,
            bins,
            errors,
            samples: self.samples.clone(),
            figures: Vec::new(),
            metadata: self.metadata.clone(),
            exec: Exec::default(),
            modules: Vec::new(),
            addresses: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor(options: MonitorOptions) -> Monitor {
        Monitor::new(Language::C, CategoryScheme::c_sizes(), options)
    }

    #[test]
    fn interning_gives_stable_ids() {
        let mut m = monitor(MonitorOptions::default());
        let a = m.function(FunctionInfo::named("a"));
        let b = m.function(FunctionInfo::named("b"));
        assert_ne!(a, b);
        assert_eq!(m.function(FunctionInfo::named("a")), a);
        let n1 = m.child(NodeId::ROOT, a, 7);
        let n2 = m.child(n1, b, 9);
        assert_eq!(m.child(NodeId::ROOT, a, 8), n1, "call sites ignored unless asked");
        assert_eq!(m.child(n1, b, 9), n2);
        assert_eq!(m.parent(n2), Some(n1));
        assert_eq!(m.type_name("cons"), m.type_name("cons"));
    }

    #[test]
    fn call_sites_split_nodes_when_asked() {
        let mut m = monitor(MonitorOptions { call_sites: true, ..MonitorOptions::default() });
        let a = m.function(FunctionInfo::named("a"));
        assert_ne!(m.child(NodeId::ROOT, a, 1), m.child(NodeId::ROOT, a, 2));
    }

    #[test]
    fn self_recursion_folds_and_depth_caps() {
        let mut m = monitor(MonitorOptions { max_depth: 2, ..MonitorOptions::default() });
        let f = m.function(FunctionInfo::named("f"));
        let g = m.function(FunctionInfo::named("g"));
        let n1 = m.child(NodeId::ROOT, f, 0);
        assert_eq!(m.child(n1, f, 0), n1);
        assert_eq!(m.child(n1, f, 0), n1);
        let n2 = m.child(n1, g, 0);
        assert_eq!(m.child(n2, f, 0), n2, "depth cap keeps the node at the cap");
        let p = m.to_profile();
        m.record_alloc(n2, 0, 1, Bin::Size(1));
        assert_eq!(p.nodes.len(), 2, "unused nodes are pruned");
        assert_eq!(m.to_profile().nodes[1].recursion, 2);
    }

    #[test]
    fn counters_bins_totals_and_reset() {
        let mut m = monitor(MonitorOptions::default());
        let f = m.function(FunctionInfo::named("f"));
        let n = m.child(NodeId::ROOT, f, 0);
        m.record_alloc(n, 1, 204, Bin::Size(204));
        m.record_alloc(n, 3, 5000, Bin::Size(5000));
        m.record_free(n, 1, 204, Bin::Size(204));
        m.record_alloc(NodeId(999), 9, 1, Bin::Size(1)); // bad ids land on the root
        let t = m.totals();
        assert_eq!(t.overall, Counters { allocs: 3, bytes: 5205, frees: 1, freed_bytes: 204 });
        assert_eq!(t.per_category[3].bytes, 5001);
        let p = m.to_profile();
        let b204 = p.bins.iter().find(|b| b.key == BinKey::Size(204)).map(|b| b.counters);
        assert_eq!(b204, Some(Counters { allocs: 1, bytes: 204, frees: 1, freed_bytes: 204 }));
        assert!(p.bins.iter().any(|b| b.key == BinKey::Larger && b.counters.bytes == 5000));
        m.reset();
        assert_eq!(m.totals().overall, Counters::default());
        assert_eq!(m.child(NodeId::ROOT, f, 0), n, "ids survive reset");
    }

    #[test]
    fn a_long_series_is_thinned_keeping_its_peak() {
        let mut m = monitor(MonitorOptions::default());
        let n = 3 * MAX_SAMPLES as u64;
        for t in 0..n {
            // One spike in the middle of a flat series.
            let live = if t == n / 2 + 1 { 1_000_000 } else { t % 7 };
            m.record_sample(Sample { time_ns: t, live_bytes: live, allocated_bytes: t, ..Sample::default() });
        }
        assert!(m.sample_count() < MAX_SAMPLES && m.sample_count() >= MAX_SAMPLES / 4, "{}", m.sample_count());
        let p = m.to_profile();
        assert_eq!(p.samples.iter().map(|s| s.live_bytes).max(), Some(1_000_000), "the peak survives thinning");
        assert!(p.samples.windows(2).all(|w| w[0].time_ns < w[1].time_ns), "still in time order");
    }
}
