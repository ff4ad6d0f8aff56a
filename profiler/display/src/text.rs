//! The one composer of text reports: the memory tables, then the execution tables
//! (time, call counts, I/O), then the annotated listing, as the `mprof` command prints a
//! profile file and as the interpreter prints a run (at the end of `mprof-lisp`, and
//! from the MPROF package).
//!
//! The display reads no Lisp source, so the annotated listing comes in already rendered
//! (by `mprof-listing`, which is Lisp-side). A running interpreter renders its memory
//! tables itself, right after a full collection (so that "kept" means reachable at the
//! report), and hands them in the same way.
//!
//! Layout: each part that prints something is separated from the one before by a blank
//! line; the listing follows the execution tables directly. The report of a file always
//! opens with the profile's header (program, metadata), and one holding only execution
//! data prints no empty memory tables. Every part is printed by the table functions of
//! `report` and `exec_report`: nothing is formatted here.

use mprof_engine::profile::Profile;

use crate::exec_report::{ExecReportOptions, render_exec};
use crate::report::{ReportOptions, render_report, render_title};

/// The memory part of a text report.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Memory<'a> {
    /// None: the report is the execution tables alone.
    Omit,
    /// The memory tables, rendered from the profile.
    Tables,
    /// The memory tables as the recorder rendered them (a live interpreter renders
    /// them right after a full collection).
    Rendered(&'a str),
    /// The report of a profile file (`mprof report`): the memory tables when `tables`
    /// is true and the file holds memory data (or nothing else would be printed);
    /// otherwise the profile's header alone, so a file with only execution data prints
    /// no empty memory tables.
    OfFile { tables: bool },
}

/// What a text report prints of a profile.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TextReport<'a> {
    pub memory: Memory<'a>,
    /// The flat profile and call graph of the time profile.
    pub time: bool,
    /// The call-count table.
    pub counts: bool,
    /// The input/output summary.
    pub io: bool,
    /// The annotated listing of the counted sources, rendered by the caller, printed
    /// right after the execution tables.
    pub listing: Option<&'a str>,
}

/// The text report of `profile`: `options` shape the memory tables, and their cycle and
/// precision choices (`merge_cycles`, `exact_percentages`) the execution tables too.
/// Empty when nothing asked for has anything to print.
pub fn render_text(profile: &Profile, options: &ReportOptions, report: &TextReport<'_>) -> String {
    let exec_options = ExecReportOptions {
        time: report.time,
        counts: report.counts,
        io: report.io,
        merge_cycles: options.merge_cycles,
        exact: options.exact_percentages,
    };
    let mut exec = render_exec(profile, &exec_options);
    if let Some(listing) = report.listing {
        exec.push_str(listing);
    }
    let mut text = match report.memory {
        Memory::Omit => String::new(),
        Memory::Tables => render_report(profile, options),
        Memory::Rendered(tables) => tables.to_string(),
        Memory::OfFile { tables } if tables && (profile.has_memory() || exec.is_empty()) => {
            render_report(profile, options)
        }
        Memory::OfFile { .. } => render_title(profile),
    };
    if !exec.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&exec);
    }
    text
}
