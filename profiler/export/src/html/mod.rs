//! The HTML report (`mprof html`, `mprof-lisp --html`): one self-contained page for a
//! profile, readable offline.
//!
//! The page is a template (`page.html`) with its stylesheet (`page.css`) and script
//! (`page.js`) inlined, and the profile's numbers embedded as one JSON document in a
//! `<script type="application/json">` element; the script draws everything from it
//! (summary, memory over time, flame graphs, the paper's tables, the listing). No
//! network access, no external script or font, no text of the profile written into
//! HTML: names reach the page only as JSON strings (escaped so they cannot close the
//! element, `json.rs`) and are set with `textContent`.
//!
//! Building the page is linear in the calling-context tree and never recurses on the
//! Rust stack: the data comes from `Stacks` (one pass), an explicit-stack walk
//! (`data.rs`) and the engine's `reduce` (`tables.rs`). The page's script is written
//! under the same rule (loops over parent links, no recursion over depth).
//! Tests: `tools/mprof/tests/html_report.rs` (content, size, escaping) and
//! `tools/mprof/tests/html_browser.rs` (the page in headless Chromium).

mod data;
mod json;
mod tables;

pub use data::MAX_SAMPLES;

use std::io::Write;
use std::path::Path;

use mprof_engine::profile::Profile;
use mprof_engine::reduce::{ReduceOptions, reduce};

use mprof_display::exec_report::{ExecReportOptions, render_exec, time_view};
use crate::stacks::FoldedValue;

const TEMPLATE: &str = include_str!("page.html");
const CSS: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");
/// Where the template takes the stylesheet, the script and the data.
const CSS_MARK: &str = "/*{{CSS}}*/";
const SCRIPT_MARK: &str = "/*{{SCRIPT}}*/";
const DATA_MARK: &str = "{{DATA}}";

/// What the page shows beyond the profile itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtmlOptions {
    /// Show each recursion cycle as one call-graph entry, as the paper did.
    pub merge_cycles: bool,
    /// Callers shown in the leak/kept, figure and error tables' paths.
    pub path_depth: usize,
    /// pxp's annotated listing of a `--count` profile, as `mprof listing` prints it
    /// (the display does not read Lisp sources: its caller renders the listing).
    pub listing: Option<String>,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        HtmlOptions { merge_cycles: false, path_depth: 5, listing: None }
    }
}

/// The JSON document the page's script reads.
fn data(p: &Profile, o: &HtmlOptions) -> Result<String, String> {
    p.validate()?;
    let memory = p.has_memory();
    let reduction = if memory {
        let options = ReduceOptions { merge_cycles: o.merge_cycles, call_sites: false, path_depth: o.path_depth.max(1) };
        Some(reduce(p, &options)?)
    } else {
        None
    };
    let mut out = String::new();
    out.push('{');
    json::key(&mut out, "summary", true);
    data::summary(&mut out, p, reduction.as_ref());
    json::key(&mut out, "samples", false);
    data::samples(&mut out, p);
    json::key(&mut out, "memory", false);
    if memory {
        let quantities =
            [("bytes", FoldedValue::Bytes), ("kept", FoldedValue::KeptBytes), ("allocs", FoldedValue::Allocs)];
        data::tree(&mut out, p, &quantities);
    } else {
        out.push_str("null");
    }
    json::key(&mut out, "time", false);
    match time_view(p) {
        Some(view) => {
            let quantities = [
                ("ns", FoldedValue::TimeNs),
                ("calls", FoldedValue::Calls),
                ("instructions", FoldedValue::Instructions),
            ];
            data::tree(&mut out, &view, &quantities);
        }
        None => out.push_str("null"),
    }
    json::key(&mut out, "tables", false);
    match &reduction {
        Some(r) => tables::tables(&mut out, p, r),
        None => out.push_str("null"),
    }
    json::key(&mut out, "pathDepth", false);
    out.push_str(&o.path_depth.max(1).to_string());
    json::key(&mut out, "exec", false);
    let exec_options = ExecReportOptions { merge_cycles: o.merge_cycles, ..ExecReportOptions::default() };
    let exec = render_exec(p, &exec_options);
    json::opt_string(&mut out, (!exec.is_empty()).then_some(exec.as_str()));
    json::key(&mut out, "listing", false);
    json::opt_string(&mut out, o.listing.as_deref().filter(|l| !l.trim().is_empty()));
    out.push('}');
    Ok(out)
}

/// Writes the page for `p` to `out`.
pub fn write_html(p: &Profile, o: &HtmlOptions, out: &mut dyn Write) -> Result<(), String> {
    let data = data(p, o)?;
    let fail = |e: std::io::Error| format!("cannot write the page: {e}");
    // Template order: the stylesheet, then the data's element, then the script that reads it.
    let (head, rest) = TEMPLATE.split_once(CSS_MARK).ok_or("the page template has no stylesheet mark")?;
    let (middle, rest) = rest.split_once(DATA_MARK).ok_or("the page template has no data mark")?;
    let (before_script, tail) = rest.split_once(SCRIPT_MARK).ok_or("the page template has no script mark")?;
    for part in [head, CSS, middle, data.as_str(), before_script, SCRIPT, tail] {
        out.write_all(part.as_bytes()).map_err(fail)?;
    }
    Ok(())
}

/// Writes the page for `p` where a command line asks for it: to `path` whole (a
/// temporary file renamed when complete: a page is whole or absent), or, with no path,
/// streamed to standard output. The one way the `mprof` command and `mprof-lisp --html`
/// write it; the annotated listing comes in `o` rendered by the caller.
pub fn save_html(p: &Profile, o: &HtmlOptions, path: Option<&Path>) -> std::io::Result<()> {
    match path {
        Some(path) => mprof_engine::save_streaming(path, |w| write_html(p, o, w).map_err(std::io::Error::other)),
        None => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            write_html(p, o, &mut stdout).map_err(std::io::Error::other)?;
            stdout.flush().map_err(|e| std::io::Error::new(e.kind(), format!("cannot write output: {e}")))
        }
    }
}

/// The page for `p`, in memory.
pub fn html(p: &Profile, o: &HtmlOptions) -> Result<String, String> {
    let mut out = Vec::new();
    write_html(p, o, &mut out)?;
    String::from_utf8(out).map_err(|e| format!("the page is not UTF-8: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_has_each_mark_once_in_order_and_the_assets_none() {
        let at = |m: &str| {
            assert_eq!(TEMPLATE.matches(m).count(), 1, "{m}");
            TEMPLATE.find(m).unwrap_or(0)
        };
        assert!(at(CSS_MARK) < at(DATA_MARK) && at(DATA_MARK) < at(SCRIPT_MARK));
        for asset in [CSS, SCRIPT] {
            for m in [CSS_MARK, SCRIPT_MARK, DATA_MARK] {
                assert!(!asset.contains(m), "an asset holds {m}");
            }
            // Either would end the element the asset is inlined in.
            assert!(!asset.to_ascii_lowercase().contains("</script"));
            assert!(!asset.to_ascii_lowercase().contains("</style"));
        }
    }

    #[test]
    fn nothing_is_fetched_from_elsewhere() {
        for text in [TEMPLATE, CSS, SCRIPT] {
            // The one URL is SVG's namespace name, an identifier that is never fetched.
            let text = text.replace("\"http://www.w3.org/2000/svg\"", "");
            for needle in ["http://", "https://", "src=", "@import", "url(", "fetch(", "XMLHttpRequest"] {
                assert!(!text.contains(needle), "{needle} in a page asset");
            }
        }
    }
}
