//! Exports at the REPL and in programs run by `mprof-lisp`: `(mprof:write-html PATH)`
//! and `(mprof:write-export PATH :format F :kind K)`.
//!
//! The interpreter library exports nothing (it links the text display only), so the
//! binary adds these to the MPROF package through the public embedding API: two
//! natives (`register_native`) and the Lisp functions over them (`eval`). A native sees
//! only its arguments, not the interpreter, so a Lisp wrapper first writes the profile
//! recorded so far with `mprof:write-profile` (which collects first: "kept" means
//! reachable) to a scratch file the native names, and the native reads that file,
//! exports it with `mprof-export` (the same writers as the `mprof` command), and
//! removes it. Invariant: the scratch file is removed however the export ends.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use mprof_display::exec_report::time_view;
use mprof_engine::Profile;
use mprof_export::formats::{self, FoldedValue};
use mprof_export::html::{HtmlOptions, save_html};
use mprof_lisp::{HostValue, Interpreter, LispError};
use mprof_listing::ListingOptions;

/// The MPROF package's export functions, over the natives below (read in CL-USER).
const LISP: &str = r#"
(defun mprof::write-html (path &key merge-cycles (path-depth 5))
  "Write the HTML report of everything recorded so far to PATH, collecting first
(so kept means reachable): summary, memory over time, flame graphs, the tables, and
the annotated listing of counted files. :MERGE-CYCLES and :PATH-DEPTH shape the
tables as in MPROF:REPORT. Returns PATH."
  (mprof::%export path :html :memory merge-cycles path-depth))

(defun mprof::write-export (path &key (format :pprof) (kind :memory))
  "Write what was recorded so far to PATH in another tool's format, collecting first:
:PPROF (gzipped profile.proto, for go tool pprof), :FOLDED (folded stacks), :JSON or
:FLAMEGRAPH (an SVG). :KIND :TIME exports the time profile instead of memory (bytes
allocated). Returns PATH."
  (mprof::%export path format kind nil 5))

(defun mprof::%export (path format kind merge-cycles path-depth)
  (let ((scratch (mprof::%export-scratch-file)))
    (mprof:write-profile scratch)
    (mprof::%export-profile-file scratch path format kind merge-cycles path-depth)))

(export '(mprof::write-html mprof::write-export) "MPROF")
"#;

/// Adds `mprof:write-html` and `mprof:write-export` to `lisp`.
pub fn install(lisp: &mut Interpreter) -> Result<(), LispError> {
    let scratch_files = Rc::new(Cell::new(0u32));
    lisp.register_native("mprof::%export-scratch-file", move |_| {
        let n = scratch_files.get();
        scratch_files.set(n + 1);
        let name = format!("mprof-lisp-export.{}.{n}.out", std::process::id());
        Ok(HostValue::String(std::env::temp_dir().join(name).to_string_lossy().into_owned()))
    })?;
    lisp.register_native("mprof::%export-profile-file", |args| {
        let [HostValue::String(scratch), path, format, kind, merge_cycles, path_depth] = args else {
            return Err("mprof::%export-profile-file: expected (scratch path format kind merge-cycles path-depth)".into());
        };
        let scratch = PathBuf::from(scratch);
        let result = export_file(&scratch, path, format, kind, merge_cycles, path_depth);
        let _ = std::fs::remove_file(&scratch);
        result
    })?;
    lisp.eval_source(LISP, Some("mprof-lisp exports")).map(|_| ())
}

/// Exports the profile file `scratch` to `path`; the result is `path` as given.
fn export_file(
    scratch: &Path,
    path: &HostValue,
    format: &HostValue,
    kind: &HostValue,
    merge_cycles: &HostValue,
    path_depth: &HostValue,
) -> Result<HostValue, String> {
    let HostValue::String(out) = path else {
        return Err(format!("the output path must be a string, not {path:?}"));
    };
    let bytes = std::fs::read(scratch).map_err(|e| format!("cannot read the profile just written: {e}"))?;
    let profile = Profile::read(&bytes).map_err(|e| e.to_string())?;
    let time = match kind {
        HostValue::Symbol(k) if k == ":MEMORY" => false,
        HostValue::Symbol(k) if k == ":TIME" => true,
        other => return Err(format!("unknown :kind {other:?} (expected :memory or :time)")),
    };
    let cannot_write = |e: &dyn std::fmt::Display| format!("cannot write {out}: {e}");
    let target = Path::new(out);
    let format = match format {
        HostValue::Symbol(f) => f.as_str(),
        other => return Err(format!("unknown :format {other:?}")),
    };
    if format == ":HTML" {
        let path_depth = match path_depth {
            HostValue::Integer(n) if *n > 0 => *n as usize,
            other => return Err(format!(":path-depth must be a positive integer, not {other:?}")),
        };
        // The listing reads the counted sources from disk, as `mprof html` does.
        let listing =
            (!profile.exec.counts.is_empty()).then(|| mprof_listing::render_listings(&profile, &ListingOptions::default()));
        let options = HtmlOptions { merge_cycles: *merge_cycles != HostValue::Nil, path_depth, listing };
        save_html(&profile, &options, Some(target)).map_err(|e| cannot_write(&e))?;
        return Ok(path.clone());
    }
    let (view, value) = if time {
        let view = time_view(&profile).ok_or("no time profile was recorded (start one with (mprof:start :time t))")?;
        (view, FoldedValue::TimeNs)
    } else {
        (profile, FoldedValue::Bytes)
    };
    match format {
        ":PPROF" => {
            let gz = if time { formats::pprof_time_gz(&view)? } else { formats::pprof_gz(&view)? };
            mprof_engine::save_file(target, &gz).map_err(|e| cannot_write(&e))?;
        }
        ":FLAMEGRAPH" => {
            let title = if time { "mprof: time (ns) by call path" } else { "mprof: bytes by call path" };
            let svg = formats::flamegraph(&view, value, title)?;
            mprof_engine::save_file(target, &svg).map_err(|e| cannot_write(&e))?;
        }
        ":FOLDED" => {
            mprof_engine::save_streaming(target, |w| formats::folded_to(&view, value, w).map_err(std::io::Error::other))
                .map_err(|e| cannot_write(&e))?;
        }
        ":JSON" => {
            mprof_engine::save_streaming(target, |w| {
                formats::json_to(&view, w).map_err(std::io::Error::other)?;
                std::io::Write::write_all(w, b"\n")
            })
            .map_err(|e| cannot_write(&e))?;
        }
        other => return Err(format!("unknown :format {other} (expected :pprof, :folded, :json, :flamegraph or :html)")),
    }
    Ok(path.clone())
}
