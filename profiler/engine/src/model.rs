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

/// A module (the executable or a shared library) of a profiled native process, as a raw
/// profile records it: enough for a symbolizer to find the same file and its debug
/// information later, and to tell when the file changed since the run.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct ModuleInfo {
    /// The path the process loaded it from.
    pub path: String,
    /// The GNU build id (`NT_GNU_BUILD_ID`), empty when the module has none.
    pub build_id: Vec<u8>,
    /// The load bias: run-time address minus the module's ELF virtual address.
    pub bias: u64,
    /// The `.gnu_debuglink` name of its separate debug file, if it names one.
    pub debug_link: Option<String>,
    /// True for the main program (its DWARF names the bin table's types).
    pub executable: bool,
}

/// Where the return address of a raw profile's function lies (raw profiles have one
/// function per distinct return address, named `module+0xoffset` until symbolized).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RawAddress {
    pub func: FuncId,
    /// The module holding it (index into `Profile::modules`), None outside every module.
    pub module: Option<u32>,
    /// Its ELF virtual address inside the module (run-time address minus the bias), or
    /// the run-time address itself outside every module.
    pub address: u64,
}
