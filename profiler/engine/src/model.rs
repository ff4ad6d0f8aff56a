//! The model's vocabulary: the ids and small values a profile is made of, shared by the
//! profile itself (`profile.rs`), its file (`format.rs`), the readers (reduction, display,
//! exports) and the recorders (`monitor.rs`, `timing.rs`, `build.rs`, libmprof).
//!
//! A reader of a profile imports these from here, never from the recorder. Invariants:
//! ids are indices into the profile's tables (`FuncId` into `Profile::functions`,
//! `NodeId` into `Profile::nodes`, `TypeId` into `Profile::types`), and the only id that
//! names no entry is `FuncId::NONE`, the function of the root node.

/// An interned function (index into `Profile::functions`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct FuncId(pub u32);

impl FuncId {
    /// The "function" of the root node, which stands for no frame at all.
    pub const NONE: FuncId = FuncId(u32::MAX);
}

/// A node of the calling-context tree (index into `Profile::nodes`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    pub const ROOT: NodeId = NodeId(0);
}

/// An interned type name, the bin key of Lisp profiles (index into `Profile::types`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct TypeId(pub u16);

/// What is known of a function. Two equal infos are the same function.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct FunctionInfo {
    pub name: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub module: Option<String>,
}

impl FunctionInfo {
    /// A function known by name only.
    pub fn named(name: impl Into<String>) -> Self {
        FunctionInfo { name: name.into(), ..FunctionInfo::default() }
    }
}

/// Heap errors the C hooks can see.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum HeapErrorKind {
    DoubleFree,
    InvalidFree,
    ReallocOfFreed,
}

impl HeapErrorKind {
    pub fn describe(self) -> &'static str {
        match self {
            HeapErrorKind::DoubleFree => "double free",
            HeapErrorKind::InvalidFree => "invalid free",
            HeapErrorKind::ReallocOfFreed => "realloc of freed",
        }
    }
}

/// One point of the memory-over-time series.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Sample {
    pub time_ns: u64,
    pub live_bytes: u64,
    pub allocated_bytes: u64,
    /// Live bytes per category of the profile's scheme (Lisp types, C size classes);
    /// all zero when the recorder did not split them.
    pub live_by_category: [u64; SAMPLE_CATEGORIES],
}

/// How many categories a sample splits its live bytes into: both schemes have four.
pub const SAMPLE_CATEGORIES: usize = 4;
