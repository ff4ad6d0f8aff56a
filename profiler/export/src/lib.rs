//! The mprof exports: a profile in the formats other tools read, and as one page.
//!
//! Everything here reads a `Profile` (from `mprof-engine`) and writes bytes for another
//! tool or a browser: `formats` folded stacks, flame-graph SVG (inferno, or `flame` for
//! trees too large for it), JSON and pprof, all from the distinct stacks of `stacks`;
//! `report_json` the numbers of the paper's tables for scripts; `diff` what changed
//! between two profiles (tables, JSON, folded, a differential flame graph); `html` the
//! self-contained HTML report. Time profiles are exported through the memory-shaped
//! view of `mprof_display::exec_report::time_view`.
//!
//! Apart from the text display (`mprof-display`) so that a program that only prints
//! tables, the interpreter library first, links none of inferno, prost, flate2 or
//! serde_json. It knows nothing of Lisp or C: the annotated listing of the HTML report
//! comes in rendered by its caller, and libmprof does not link it.
//!
//! ```
//! use mprof_engine::*;
//! use mprof_export::formats::{self, FoldedValue};
//! let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
//! let main = m.function(FunctionInfo::named("main"));
//! let node = m.child(NodeId::ROOT, main, 0);
//! m.record_alloc(node, CategoryScheme::c_category_of_size(204), 204, Bin::Size(204));
//! let folded = formats::folded(&m.to_profile(), FoldedValue::Bytes).unwrap();
//! assert_eq!(folded, "main 204\n");
//! ```

pub mod diff;
mod flame;
pub mod formats;
pub mod html;
pub mod report_json;
pub mod stacks;
