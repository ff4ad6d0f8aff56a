//! The mprof display: the paper's four tables and the execution tables, as text.
//!
//! Everything here reads a `Profile` (from the engine, `mprof-engine`) and its
//! `Reduction` and writes text for a person: `report` prints the memory tables (kept,
//! bins, direct allocation, call graph, heap errors), `exec_report` the flat profile,
//! gprof call graph, call counts and I/O summary of the execution profiles, and `text`
//! composes them into one report, the only composer every report goes through (the
//! `mprof` command, the `mprof-lisp` command line, the MPROF package). `pad` pads
//! columns for all of them.
//!
//! Text only: other tools' formats (folded stacks, flame graphs, JSON, pprof, the HTML
//! report) are the crate `mprof-export`, so the interpreter, which links this crate,
//! links no exporter. It knows nothing of Lisp or C (Lisp listings live in
//! `mprof-listing` and come in rendered), and libmprof does not link it: a C program
//! being profiled never carries the display code.
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

pub mod exec_report;
pub mod pad;
pub mod report;
pub mod text;

pub use report::{ReportOptions, SizeBins, Tables, render_report};
pub use text::{Memory, TextReport, render_text};
