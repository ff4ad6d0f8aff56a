//! The mprof display: the paper's four tables, the execution tables, and exports.
//!
//! Everything here reads a `Profile` (from the engine, `mprof-engine`) and its
//! `Reduction` and writes text or bytes for a person or another tool: `report` prints the
//! memory tables (kept, bins, direct allocation, call graph, heap errors), `exec_report`
//! the flat profile, gprof call graph, call counts and I/O summary of the execution
//! profiles, `export` flame graphs, folded stacks, JSON and pprof, `html` the
//! self-contained HTML report (summary, memory over time, flame graphs, the tables).
//!
//! It knows nothing of Lisp or C (Lisp listings live in `mprof-listing`), and libmprof
//! does not link it: a C program being profiled never carries the display code.
//!
//! ```
//! use mprof_engine::*;
//! use mprof_display::*;
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

pub mod diff;
pub mod exec_report;
pub mod export;
mod flame;
pub mod html;
mod pad;
pub mod report;
pub mod report_json;
pub mod stacks;

pub use report::{ReportOptions, SizeBins, Tables, render_report};
