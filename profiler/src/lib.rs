//! The mprof reduction engine: monitor, profile file, reduction, display and exports.
//!
//! Two phases, as in the mprof paper. The monitor phase (`Monitor`, `StackCache`) runs
//! inside the profiled program and builds a calling-context tree with per-category
//! counters; `Monitor::to_profile` and `Profile::write` turn it into a profile file. The
//! display phase (`Profile::read`, `reduce`, `render_report`, `export`) reads files, sums
//! them (`Profile::merge`) and prints the paper's four tables or other tools' formats.
//!
//! Beside the memory profile a file may hold execution profiles (`exec`): a time tree
//! recorded by `timing::TimeRecorder` (ATOM's gprof), statement counts (pxp) and an I/O
//! summary; `exec_report` prints their tables and `listing` the annotated listing.
//!
//! This crate knows nothing of Lisp or C: it is given function identities and names,
//! call sites, a category scheme and sizes. `Language` only changes wording. The one
//! exception is `listing`, which re-prints Lisp source with the reader's pretty printer.
//!
//! ```
//! use mprof_profiler::*;
//! let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
//! let main = m.function(FunctionInfo::named("main"));
//! let make = m.function(FunctionInfo::named("make_widget"));
//! let top = m.child(NodeId::ROOT, main, 0);
//! let node = m.child(top, make, 0);
//! m.record_alloc(node, CategoryScheme::c_category_of_size(204), 204, Bin::Size(204));
//! let mut file = Vec::new();
//! m.to_profile().write(&mut file).unwrap();
//! let report = render_report(&Profile::read(&file).unwrap(), &ReportOptions::default());
//! assert!(report.contains("make_widget"));
//! ```

pub mod exec;
pub mod exec_report;
pub mod export;
pub mod format;
pub mod listing;
pub mod monitor;
pub mod profile;
pub mod reduce;
pub mod report;
pub mod scheme;
pub mod stack;
pub mod timing;

pub use format::{FormatError, FORMAT_VERSION};
pub use monitor::{
    Bin, FuncId, FunctionInfo, HeapErrorKind, Monitor, MonitorOptions, NodeId, Sample, Totals, TypeId,
};
pub use profile::{BinKey, BinRow, Counters, HeapError, MergeError, Node, Profile};
pub use reduce::{reduce, Reduction};
pub use report::{render_report, ReportOptions, Tables};
pub use scheme::{Category, CategoryScheme, Language, LARGEST_SIZE_BIN};
pub use stack::StackCache;
