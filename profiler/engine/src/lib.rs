//! The mprof reduction engine: monitor, profile file and reduction.
//!
//! Two phases, as in the mprof paper. The monitor phase (`Monitor`) runs inside the
//! profiled program and builds a calling-context tree with per-category counters;
//! `Monitor::to_profile` and `Profile::write` turn it into a profile file (a recorder
//! with its own tree, libmprof, builds the profile with `ProfileBuilder` by the same
//! rules, `grow.rs`). The display phase starts here (`Profile::read`, `Profile::merge`,
//! `reduce`); printing the paper's four tables is the job of the crate `mprof-display`,
//! and other tools' formats that of `mprof-export`.
//!
//! The model is `profile` (the `Profile` and its parts) and `model` (the ids and small
//! values it is made of): a reader of profiles needs nothing of the recorders.
//!
//! Beside the memory profile a file may hold execution profiles (`exec`): a time tree
//! recorded by `timing::TimeRecorder` (ATOM's gprof), statement counts (pxp) and an I/O
//! summary; `mprof-display` prints their tables (`exec_report`) and `mprof-listing` the
//! annotated listing.
//!
//! This crate knows nothing of Lisp or C: it is given function identities and names,
//! call sites, a category scheme and sizes. `Language` only changes wording. It is what
//! libmprof links, so it depends on no display, command-line or Lisp crate.
//!
//! ```
//! use mprof_engine::*;
//! let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
//! let main = m.function(FunctionInfo::named("main"));
//! let make = m.function(FunctionInfo::named("make_widget"));
//! let top = m.child(NodeId::ROOT, main, 0);
//! let node = m.child(top, make, 0);
//! m.record_alloc(node, CategoryScheme::c_category_of_size(204), 204, Bin::Size(204));
//! let mut file = Vec::new();
//! m.to_profile().write(&mut file).unwrap();
//! let profile = Profile::read(&file).unwrap();
//! let options = ReduceOptions { merge_cycles: false, call_sites: false, path_depth: 2 };
//! let reduced = reduce(&profile, &options).unwrap();
//! assert!(profile.functions.iter().any(|f| f.name == "make_widget"));
//! assert_eq!(reduced.totals.iter().map(|c| c.allocs).sum::<u64>(), 1);
//! ```

pub mod build;
pub mod exec;
pub mod format;
mod grow;
pub mod model;
pub mod monitor;
pub mod profile;
pub mod reduce;
pub mod save;
pub mod scheme;
pub mod suppress;
pub mod timing;

pub use build::ProfileBuilder;
pub use format::{FormatError, FORMAT_VERSION};
pub use model::{FuncId, FunctionInfo, HeapErrorKind, ModuleInfo, NodeId, RawAddress, Sample, TypeId};
pub use monitor::{Bin, Monitor, MonitorOptions, Totals};
pub use profile::{BinKey, BinRow, Counters, Figure, HeapError, MergeError, Node, Profile};
pub use save::{check_writable, save_file, save_file_noting, save_streaming};
pub use reduce::{reduce, ReduceOptions, Reduction};
pub use scheme::{Category, CategoryScheme, Language, LARGEST_SIZE_BIN};
