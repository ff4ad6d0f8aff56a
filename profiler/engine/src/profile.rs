//! The in-memory profile: exactly what a profile file holds, and the only input of
//! reduction, display and export.
//!
//! Fields are public so a host with its own recorder (ffi-c's per-thread trees) can build
//! a `Profile` by hand; `Profile::validate` states the invariants that the file reader
//! enforces and that reduction relies on:
//! - `nodes[0]` is the root (parent `None`, function `FuncId::NONE`); every other node has
//!   a parent with a smaller index and a function inside `functions`;
//! - every node has exactly `scheme.len()` counters;
//! - bins name types inside `types`; errors name nodes inside `nodes`;
//! - figures have distinct, non-empty names, and each names a node inside `nodes` at most
//!   once per row list.
//!
//! Merging and re-mapping keep these invariants. The file is read and written
//! (`Profile::read`, `Profile::write`) in format.rs, which stands above this model.
//! Tests: below and tools/mprof/tests/.

use std::fmt;

use rustc_hash::FxHashMap;

use crate::exec::Exec;
use crate::model::{FuncId, FunctionInfo, HeapErrorKind, ModuleInfo, NodeId, RawAddress, Sample, TypeId};
use crate::scheme::{CategoryScheme, Language, LARGEST_SIZE_BIN, size_bin};

/// Allocation and free counts of one node (or bin) in one category.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Counters {
    pub allocs: u64,
    pub bytes: u64,
    pub frees: u64,
    pub freed_bytes: u64,
}

impl Counters {
    pub fn add(&mut self, other: &Counters) {
        self.allocs = self.allocs.saturating_add(other.allocs);
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.frees = self.frees.saturating_add(other.frees);
        self.freed_bytes = self.freed_bytes.saturating_add(other.freed_bytes);
    }

    pub fn is_zero(&self) -> bool {
        *self == Counters::default()
    }

    /// Objects allocated and never freed (C: leaked; Lisp: still reachable).
    pub fn kept_allocs(&self) -> u64 {
        self.allocs.saturating_sub(self.frees)
    }

    /// Bytes allocated and never freed.
    pub fn kept_bytes(&self) -> u64 {
        self.bytes.saturating_sub(self.freed_bytes)
    }
}

/// One calling-context-tree node: a distinct call path.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Node {
    pub parent: Option<NodeId>,
    pub func: FuncId,
    /// An opaque location that tells apart otherwise equal paths (0 when call sites are
    /// not distinguished). Reports print it as `name@site`. A recorder stores here a
    /// location inside `func` where it called onward (libmprof: the source line of the
    /// frame's return address).
    pub call_site: u64,
    /// Direct self-recursive calls folded into this node.
    pub recursion: u64,
    /// One entry per category of the scheme.
    pub counters: Vec<Counters>,
}

/// The key of a bin-table row.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum BinKey {
    /// Objects of exactly this many bytes (0..=1024).
    Size(u64),
    /// Objects larger than 1024 bytes.
    Larger,
    /// Objects of this type (Lisp).
    Type(TypeId),
}

impl BinKey {
    /// The row of an object of `size` bytes: its exact size up to `LARGEST_SIZE_BIN`,
    /// one shared row above (the row of its size bin, `scheme::size_bin`).
    pub fn of_size(size: u64) -> BinKey {
        BinKey::of_bin(size_bin(size))
    }

    /// The row of size bin `bin`: the bin's own size up to `LARGEST_SIZE_BIN`, the
    /// shared `Larger` row for the bins above.
    pub fn of_bin(bin: usize) -> BinKey {
        if bin as u64 > LARGEST_SIZE_BIN { BinKey::Larger } else { BinKey::Size(bin as u64) }
    }
}

/// One row of the bin table.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BinRow {
    pub key: BinKey,
    pub counters: Counters,
    /// User types whose size is the bin size (C, where the symbolizer knows them).
    pub labels: Vec<String>,
}

/// A heap error seen by the hooks, with the path where it happened.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HeapError {
    pub kind: HeapErrorKind,
    pub node: NodeId,
    /// The first address seen with this kind on this path.
    pub address: u64,
    pub count: u64,
}

/// A named per-node figure: a count and a byte total per calling context, for what the
/// allocation counters cannot say (libmprof: the blocks live at the peak, temporary
/// allocations, each leak class at exit). Reports print one table per figure, ranked by
/// bytes along partial paths as the leak table is.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Figure {
    /// What is counted ("memory at peak", "definitely lost"...); unique in a profile.
    pub name: String,
    /// (node, count, bytes), each node at most once; nodes with nothing are left out.
    pub rows: Vec<(NodeId, u64, u64)>,
}

/// The whole profile; see the module comment for its invariants.
#[derive(Clone, PartialEq, Debug)]
pub struct Profile {
    pub language: Language,
    pub scheme: CategoryScheme,
    pub functions: Vec<FunctionInfo>,
    pub types: Vec<String>,
    pub nodes: Vec<Node>,
    pub bins: Vec<BinRow>,
    pub errors: Vec<HeapError>,
    pub samples: Vec<Sample>,
    /// Named per-node figures (FIGURES section); empty for most profiles.
    pub figures: Vec<Figure>,
    /// Program, command line, date, process id...: shown in the report header.
    pub metadata: Vec<(String, String)>,
    /// Execution profiles recorded beside the memory profile (time, counts, I/O).
    pub exec: Exec,
    /// A raw profile's modules (MODULES section); empty once symbolized.
    pub modules: Vec<ModuleInfo>,
    /// A raw profile's return addresses, one per function that stands for one
    /// (ADDRESSES section). Non-empty means the profile awaits symbolization
    /// (`mprof-symbolize`): its functions are then `module+0xoffset` names.
    pub addresses: Vec<RawAddress>,
}

/// Why two profiles cannot be summed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum MergeError {
    LanguageDiffers { left: Language, right: Language },
    SchemeDiffers { left: String, right: String },
    Invalid(String),
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::LanguageDiffers { left, right } => write!(
                f,
                "cannot merge a {} profile with a {} profile",
                left.name(),
                right.name()
            ),
            MergeError::SchemeDiffers { left, right } => {
                write!(f, "cannot merge profiles with category schemes {left} and {right}")
            }
            MergeError::Invalid(why) => write!(f, "cannot merge an invalid profile: {why}"),
        }
    }
}

impl std::error::Error for MergeError {}

fn scheme_letters(s: &CategoryScheme) -> String {
    s.categories.iter().map(|c| c.letter).collect()
}

impl Profile {
    /// A profile with only the root node, ready to be filled by hand.
    pub fn empty(language: Language, scheme: CategoryScheme) -> Self {
        let ncat = scheme.len();
        Profile {
            language,
            scheme,
            functions: Vec::new(),
            types: Vec::new(),
            nodes: vec![Node {
                parent: None,
                func: FuncId::NONE,
                call_site: 0,
                recursion: 0,
                counters: vec![Counters::default(); ncat],
            }],
            bins: Vec::new(),
            errors: Vec::new(),
            samples: Vec::new(),
            figures: Vec::new(),
            metadata: Vec::new(),
            exec: Exec::default(),
            modules: Vec::new(),
            addresses: Vec::new(),
        }
    }

    /// True when the profile holds raw return addresses still to be symbolized.
    pub fn is_raw(&self) -> bool {
        !self.addresses.is_empty()
    }

    /// True when the profile holds memory data (allocations, bins, errors or samples),
    /// as opposed to a file written by an execution-only run.
    pub fn has_memory(&self) -> bool {
        self.nodes.iter().any(|n| n.counters.iter().any(|c| !c.is_zero()))
            || !self.bins.is_empty()
            || !self.errors.is_empty()
            || !self.samples.is_empty()
    }

    /// Checks the invariants of the module comment, naming the first one broken.
    pub fn validate(&self) -> Result<(), String> {
        let ncat = self.scheme.len();
        if ncat == 0 {
            return Err("the category scheme is empty".into());
        }
        if ncat > 64 {
            return Err(format!("the category scheme has {ncat} categories (64 at most)"));
        }
        let Some(root) = self.nodes.first() else {
            return Err("the profile has no root node".into());
        };
        if root.parent.is_some() {
            return Err("node 0 (the root) has a parent".into());
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.counters.len() != ncat {
                return Err(format!("node {i} has {} counters, the scheme has {ncat}", n.counters.len()));
            }
            if i == 0 {
                continue;
            }
            match n.parent {
                Some(p) if (p.0 as usize) < i => {}
                Some(p) => return Err(format!("node {i} has parent {} (parents must come first)", p.0)),
                None => return Err(format!("node {i} has no parent (only node 0 may)")),
            }
            if n.func.0 as usize >= self.functions.len() {
                return Err(format!("node {i} names function {} of {}", n.func.0, self.functions.len()));
            }
        }
        for b in &self.bins {
            if let BinKey::Type(t) = b.key
                && t.0 as usize >= self.types.len()
            {
                return Err(format!("a bin names type {} of {}", t.0, self.types.len()));
            }
        }
        for e in &self.errors {
            if e.node.0 as usize >= self.nodes.len() {
                return Err(format!("an error names node {} of {}", e.node.0, self.nodes.len()));
            }
        }
        let mut names = std::collections::HashSet::new();
        for f in &self.figures {
            if f.name.is_empty() {
                return Err("a figure has an empty name".into());
            }
            if !names.insert(f.name.as_str()) {
                return Err(format!("two figures are named {:?}", f.name));
            }
            let mut seen = std::collections::HashSet::new();
            for &(node, _, _) in &f.rows {
                if node.0 as usize >= self.nodes.len() {
                    return Err(format!("figure {:?} names node {} of {}", f.name, node.0, self.nodes.len()));
                }
                if !seen.insert(node.0) {
                    return Err(format!("figure {:?} names node {} twice", f.name, node.0));
                }
            }
        }
        let mut raw = std::collections::HashSet::new();
        for a in &self.addresses {
            if a.func.0 as usize >= self.functions.len() || !raw.insert(a.func) {
                return Err(format!("an address names function {} of {} (or twice)", a.func.0, self.functions.len()));
            }
            if a.module.is_some_and(|m| m as usize >= self.modules.len()) {
                return Err(format!("an address names module {:?} of {}", a.module, self.modules.len()));
            }
        }
        self.exec.validate(self.functions.len())
    }

    /// The function of a node, `None` for the root.
    pub fn function_of(&self, node: NodeId) -> Option<&FunctionInfo> {
        let n = self.nodes.get(node.0 as usize)?;
        self.functions.get(n.func.0 as usize)
    }

    /// Sums `other` into `self`: functions and types are unified by equality, nodes by
    /// their path, bins by key, errors by (kind, path), figures by name and then by path;
    /// samples and new metadata appended.
    pub fn merge(&mut self, other: &Profile) -> Result<(), MergeError> {
        if self.language != other.language {
            return Err(MergeError::LanguageDiffers { left: self.language, right: other.language });
        }
        if scheme_letters(&self.scheme) != scheme_letters(&other.scheme) {
            return Err(MergeError::SchemeDiffers {
                left: scheme_letters(&self.scheme),
                right: scheme_letters(&other.scheme),
            });
        }
        self.validate().map_err(MergeError::Invalid)?;
        other.validate().map_err(MergeError::Invalid)?;
        if self.is_raw() || other.is_raw() {
            return Err(MergeError::Invalid("a raw profile (return addresses) must be symbolized first".into()));
        }
        let mut builder = Builder::from(std::mem::replace(self, Profile::empty(other.language, other.scheme.clone())));
        builder.absorb(other, |f| f.clone());
        *self = builder.finish();
        Ok(())
    }

    /// Re-maps function identities (ffi-c: raw addresses to symbolized functions);
    /// functions that become equal are unified, and so are the paths that become equal.
    pub fn remap_functions(&mut self, mut f: impl FnMut(&FunctionInfo) -> FunctionInfo) {
        if self.validate().is_err() {
            // Without the invariants paths cannot be rebuilt; rename in place instead.
            self.functions = self.functions.iter().map(&mut f).collect();
            return;
        }
        let source = std::mem::replace(self, Profile::empty(self.language, self.scheme.clone()));
        let mut builder = Builder::from(Profile::empty(source.language, source.scheme.clone()));
        builder.absorb(&source, f);
        *self = builder.finish();
    }
}

/// Accumulates profiles into one, keeping the invariants.
struct Builder {
    profile: Profile,
    function_ids: FxHashMap<FunctionInfo, u32>,
    type_ids: FxHashMap<String, u16>,
    node_ids: FxHashMap<(u32, u32, u64), u32>,
    bin_ids: FxHashMap<BinKey, usize>,
    error_ids: FxHashMap<(HeapErrorKind, u32), usize>,
    /// Figure name -> index, and (figure index, node) -> row index: figures are summed
    /// by name and node, in time linear in their rows.
    figure_ids: FxHashMap<String, usize>,
    figure_rows: FxHashMap<(usize, u32), usize>,
}

impl Builder {
    fn from(profile: Profile) -> Self {
        let mut b = Builder {
            function_ids: FxHashMap::default(),
            type_ids: FxHashMap::default(),
            node_ids: FxHashMap::default(),
            bin_ids: FxHashMap::default(),
            error_ids: FxHashMap::default(),
            figure_ids: FxHashMap::default(),
            figure_rows: FxHashMap::default(),
            profile,
        };
        for (i, f) in b.profile.functions.iter().enumerate() {
            b.function_ids.entry(f.clone()).or_insert(i as u32);
        }
        for (i, t) in b.profile.types.iter().enumerate() {
            b.type_ids.entry(t.clone()).or_insert(i as u16);
        }
        for (i, n) in b.profile.nodes.iter().enumerate().skip(1) {
            let p = n.parent.map_or(0, |p| p.0);
            b.node_ids.insert((p, n.func.0, n.call_site), i as u32);
        }
        for (i, r) in b.profile.bins.iter().enumerate() {
            b.bin_ids.insert(r.key, i);
        }
        for (i, e) in b.profile.errors.iter().enumerate() {
            b.error_ids.insert((e.kind, e.node.0), i);
        }
        for (fi, f) in b.profile.figures.iter().enumerate() {
            b.figure_ids.insert(f.name.clone(), fi);
            for (ri, r) in f.rows.iter().enumerate() {
                b.figure_rows.insert((fi, r.0.0), ri);
            }
        }
        b
    }

    fn absorb(&mut self, other: &Profile, mut remap: impl FnMut(&FunctionInfo) -> FunctionInfo) {
        let func_map: Vec<u32> = other
            .functions
            .iter()
            .map(|f| {
                let info = remap(f);
                let next = self.profile.functions.len() as u32;
                *self.function_ids.entry(info.clone()).or_insert_with(|| {
                    self.profile.functions.push(info);
                    next
                })
            })
            .collect();
        let type_map: Vec<u16> = other
            .types
            .iter()
            .map(|t| {
                let next = self.profile.types.len().min(u16::MAX as usize) as u16;
                *self.type_ids.entry(t.clone()).or_insert_with(|| {
                    self.profile.types.push(t.clone());
                    next
                })
            })
            .collect();
        let mut node_map = vec![0u32; other.nodes.len()];
        for (i, n) in other.nodes.iter().enumerate() {
            let target = if i == 0 {
                0
            } else {
                let parent = n.parent.map_or(0, |p| node_map[p.0 as usize]);
                let func = func_map[n.func.0 as usize];
                let key = (parent, func, n.call_site);
                match self.node_ids.get(&key) {
                    Some(&t) => t,
                    None => {
                        let t = self.profile.nodes.len() as u32;
                        self.profile.nodes.push(Node {
                            parent: Some(NodeId(parent)),
                            func: FuncId(func),
                            call_site: n.call_site,
                            recursion: 0,
                            counters: vec![Counters::default(); n.counters.len()],
                        });
                        self.node_ids.insert(key, t);
                        t
                    }
                }
            };
            node_map[i] = target;
            let dst = &mut self.profile.nodes[target as usize];
            dst.recursion = dst.recursion.saturating_add(n.recursion);
            for (d, s) in dst.counters.iter_mut().zip(&n.counters) {
                d.add(s);
            }
        }
        for row in &other.bins {
            let key = match row.key {
                BinKey::Type(t) => BinKey::Type(TypeId(type_map[t.0 as usize])),
                k => k,
            };
            match self.bin_ids.get(&key) {
                Some(&i) => {
                    let dst = &mut self.profile.bins[i];
                    dst.counters.add(&row.counters);
                    for l in &row.labels {
                        if !dst.labels.contains(l) {
                            dst.labels.push(l.clone());
                        }
                    }
                }
                None => {
                    self.bin_ids.insert(key, self.profile.bins.len());
                    self.profile.bins.push(BinRow { key, ..row.clone() });
                }
            }
        }
        for e in &other.errors {
            let node = node_map[e.node.0 as usize];
            match self.error_ids.get(&(e.kind, node)) {
                Some(&i) => self.profile.errors[i].count += e.count,
                None => {
                    self.error_ids.insert((e.kind, node), self.profile.errors.len());
                    self.profile.errors.push(HeapError { node: NodeId(node), ..*e });
                }
            }
        }
        for f in &other.figures {
            let fi = match self.figure_ids.get(&f.name) {
                Some(&fi) => fi,
                None => {
                    self.figure_ids.insert(f.name.clone(), self.profile.figures.len());
                    self.profile.figures.push(Figure { name: f.name.clone(), rows: Vec::new() });
                    self.profile.figures.len() - 1
                }
            };
            for &(node, count, bytes) in &f.rows {
                let node = node_map[node.0 as usize];
                let rows = &mut self.profile.figures[fi].rows;
                match self.figure_rows.get(&(fi, node)) {
                    Some(&ri) => {
                        rows[ri].1 = rows[ri].1.saturating_add(count);
                        rows[ri].2 = rows[ri].2.saturating_add(bytes);
                    }
                    None => {
                        self.figure_rows.insert((fi, node), rows.len());
                        rows.push((NodeId(node), count, bytes));
                    }
                }
            }
        }
        self.profile.exec.absorb(&other.exec, &func_map);
        self.profile.samples.extend_from_slice(&other.samples);
        for kv in &other.metadata {
            if !self.profile.metadata.contains(kv) {
                self.profile.metadata.push(kv.clone());
            }
        }
    }

    fn finish(mut self) -> Profile {
        self.profile.samples.sort_by_key(|s| s.time_ns);
        self.profile
    }
}
