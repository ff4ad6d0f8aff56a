//! The profiling options of the `mprof-lisp` command line and what they do
//! around a run: start recording before the program, then collect, print the
//! tables (standard error, or `--report FILE`; composed by `mprof_display::render_text`,
//! as every text report is), write the profile file and, with `--html FILE`, the HTML
//! report (`mprof_export::html::save_html`, as `mprof html` writes it).
//!
//! Three kinds of profile can be asked for together: memory (`--profile`), time
//! (`--time`, with the I/O summary) and execution counts (`--count`, printed as
//! a pxp-style annotated listing). Whatever was asked for is reported and written
//! even when the program ends in an error, an `exit` or an interrupt.

use mprof_display::{Memory, ReportOptions, Tables, TextReport, render_text};
use mprof_engine::MonitorOptions;
use mprof_lisp::Interpreter;
use mprof_listing::ListingOptions;

/// Defaults of the options below, which `ineffective` compares against.
const DEFAULT_PROFILE_OUT: &str = "mprof.out";
const DEFAULT_PATH_DEPTH: usize = 5;
const DEFAULT_CONTEXT_DEPTH: u32 = 512;

#[derive(clap::Args, Debug, Clone)]
pub struct ProfileArgs {
    /// Profile the program's allocations; print the mprof tables when it ends
    /// and write the profile file.
    #[arg(long)]
    pub profile: bool,
    /// Where to write the profile file (read it with `mprof report FILE`).
    #[arg(long, value_name = "FILE", default_value = DEFAULT_PROFILE_OUT)]
    pub profile_out: String,
    /// Print the tables to FILE instead of standard error.
    #[arg(long, value_name = "FILE")]
    pub report: Option<String>,
    /// Also write the report as one self-contained HTML page to FILE (summary, memory
    /// over time, flame graphs, the tables, the annotated listing of --count).
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// Tables to print: kept,bins,direct,graph (default: all).
    #[arg(long, value_name = "LIST")]
    pub tables: Option<String>,
    /// Exact percentages (one decimal, no 99 cap).
    #[arg(long)]
    pub exact: bool,
    /// Merge recursion cycles into single entries, as the paper did.
    #[arg(long)]
    pub merge_cycles: bool,
    /// Distinguish the call sites of a function (one node per calling place).
    #[arg(long)]
    pub call_sites: bool,
    /// Callers shown in the memory kept table.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PATH_DEPTH)]
    pub path_depth: usize,
    /// Charge builtins and library functions to their Lisp caller.
    #[arg(long)]
    pub primitives_to_caller: bool,
    /// Show the interpreter's own helpers (SYS::%... functions, the expansion of
    /// DEFSTRUCT, LOOP and the other built-in macros) instead of charging them to
    /// the form that uses them.
    #[arg(long)]
    pub show_internals: bool,
    /// Deepest calling context recorded: deeper ones keep their innermost N-1 frames
    /// under an `<outer frames>` node (the report says how many allocations were cut).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONTEXT_DEPTH)]
    pub context_depth: u32,
    /// Keep direct self-recursion as separate nodes instead of folding it.
    #[arg(long)]
    pub no_fold_recursion: bool,
    /// Measure time per call arc (gprof-style flat profile and call graph) and
    /// summarize input/output.
    #[arg(long)]
    pub time: bool,
    /// Do not subtract the measured cost of the clock reads from self times.
    #[arg(long)]
    pub no_compensation: bool,
    /// Summarize input/output per stream (implied by --time).
    #[arg(long)]
    pub io: bool,
    /// Count executions of each function, branch and body form, and print the
    /// program's listing annotated with the counts.
    #[arg(long)]
    pub count: bool,
    /// With --count: list only these functions (comma-separated names).
    #[arg(long, value_name = "F,G", value_delimiter = ',')]
    pub only: Vec<String>,
    /// With --count: print the call count table only, no listing.
    #[arg(long)]
    pub summary_only: bool,
}

impl ProfileArgs {
    pub fn report_options(&self) -> Result<ReportOptions, String> {
        let tables = match &self.tables {
            None => Tables::ALL,
            Some(list) => Tables::parse(&list.replace("kept", "leak"))?,
        };
        Ok(ReportOptions {
            tables,
            exact_percentages: self.exact,
            merge_cycles: self.merge_cycles,
            call_sites: self.call_sites,
            path_depth: self.path_depth,
            ..ReportOptions::default()
        })
    }
}

impl ProfileArgs {
    /// Whether any kind of profile was asked for.
    pub fn any(&self) -> bool {
        self.profile || self.time || self.count || self.io
    }

    fn io_wanted(&self) -> bool {
        self.io || self.time
    }
}

/// Options given that change nothing with the others given, one warning each.
pub fn ineffective(args: &ProfileArgs) -> Vec<String> {
    let mut out = Vec::new();
    let kinds = "--profile, --time, --count or --io";
    if !args.any() {
        let given = [
            (args.profile_out != DEFAULT_PROFILE_OUT, "--profile-out"),
            (args.report.is_some(), "--report"),
            (args.html.is_some(), "--html"),
            (args.primitives_to_caller, "--primitives-to-caller"),
            (args.show_internals, "--show-internals"),
            (args.context_depth != DEFAULT_CONTEXT_DEPTH, "--context-depth"),
            (args.no_fold_recursion, "--no-fold-recursion"),
        ];
        for (on, name) in given {
            if on {
                out.push(format!("{name} has no effect without {kinds}"));
            }
        }
    }
    if !args.profile {
        let given = [
            (args.tables.is_some(), "--tables"),
            (args.exact, "--exact"),
            (args.call_sites, "--call-sites"),
            (args.path_depth != DEFAULT_PATH_DEPTH, "--path-depth"),
        ];
        for (on, name) in given {
            if on {
                out.push(format!("{name} has no effect without --profile (it shapes the memory tables)"));
            }
        }
    }
    if !args.count && (!args.only.is_empty() || args.summary_only) {
        let name = if args.only.is_empty() { "--summary-only" } else { "--only" };
        out.push(format!("{name} has no effect without --count"));
    }
    if !args.time && args.no_compensation {
        out.push("--no-compensation has no effect without --time".into());
    }
    out
}

/// Names given to `--only` that no counted function has (after the run).
fn unknown_only(args: &ProfileArgs, profile: &mprof_engine::Profile) -> Vec<String> {
    if !args.count {
        return Vec::new();
    }
    args.only
        .iter()
        .filter(|name| !profile.exec.counts.iter().any(|c| c.function.eq_ignore_ascii_case(name)))
        .map(|name| format!("--only: no function named {name} was counted"))
        .collect()
}

/// Refuse, before the program runs, what would only fail after it: a bad table list,
/// an output file that cannot be written.
pub fn check(args: &ProfileArgs) -> Result<(), String> {
    if !args.any() {
        return Ok(());
    }
    args.report_options()?;
    if let Some(path) = &args.report {
        mprof_engine::check_writable(std::path::Path::new(path)).map_err(|e| format!("--report: {e}"))?;
    }
    if let Some(path) = &args.html {
        mprof_engine::check_writable(std::path::Path::new(path)).map_err(|e| format!("--html: {e}"))?;
    }
    mprof_engine::check_writable(std::path::Path::new(&args.profile_out)).map_err(|e| format!("--profile-out: {e}"))
}

/// Start recording what was asked for.
pub fn start(lisp: &mut Interpreter, args: &ProfileArgs, command_line: &str) {
    if !args.any() {
        return;
    }
    let options = MonitorOptions {
        call_sites: args.call_sites,
        max_depth: args.context_depth,
        fold_self_recursion: !args.no_fold_recursion,
    };
    lisp.profiler().configure(options, args.primitives_to_caller);
    lisp.profiler().show_internals(args.show_internals);
    lisp.profiler().set_metadata("program", command_line);
    // Exports give source files as full paths, relative ones taken from here.
    if let Ok(dir) = std::env::current_dir() {
        lisp.profiler().set_metadata("directory", &dir.to_string_lossy());
    }
    if args.io_wanted() {
        lisp.profiler().io_start();
    }
    if args.count {
        lisp.profiler().count_start();
    }
    if args.profile {
        lisp.profiler().start(None, args.primitives_to_caller);
    }
    if args.time {
        lisp.profiler().time_start(!args.no_compensation);
    }
}

/// After the run (however it ended): print the tables and listings and write the
/// profile file.
pub fn finish(lisp: &mut Interpreter, args: &ProfileArgs) -> Result<(), String> {
    if !args.any() {
        return Ok(());
    }
    let options = args.report_options()?;
    // The interpreter renders the memory tables right after a full collection, while it
    // still records, so that "kept" means reachable at the end.
    let memory = args.profile.then(|| lisp.profiler().report(&options));
    lisp.profiler().stop();
    let profile = lisp.profiler().full_profile();
    for warning in unknown_only(args, &profile) {
        eprintln!("mprof-lisp: warning: {warning}");
    }
    let listing = (args.count && !args.summary_only).then(|| {
        mprof_listing::render_listings(&profile, &ListingOptions { only: args.only.clone(), ..ListingOptions::default() })
    });
    let report = TextReport {
        memory: memory.as_deref().map_or(Memory::Omit, Memory::Rendered),
        time: args.time,
        counts: args.count,
        io: args.io_wanted(),
        listing: listing.as_deref(),
    };
    let text = render_text(&profile, &options, &report);
    // The profile is written even when the report cannot be: one lost output is enough.
    let reported = match &args.report {
        Some(path) => mprof_engine::save_file(std::path::Path::new(path), text.as_bytes())
            .map_err(|e| format!("cannot write the report to {path}: {e}")),
        None => {
            eprint!("{text}");
            Ok(())
        }
    };
    let mut bytes = Vec::new();
    profile.write(&mut bytes).map_err(|e| format!("cannot encode the profile: {e}"))?;
    mprof_engine::save_file(std::path::Path::new(&args.profile_out), &bytes)
        .map_err(|e| format!("cannot write the profile to {}: {e}", args.profile_out))?;
    let paged = match &args.html {
        Some(path) => write_html(&profile, args, &options, path),
        None => Ok(()),
    };
    reported.and(paged)
}

/// The HTML page of the run: the same profile as the file, with the listing of every
/// counted source when counting (as `mprof html` shows it from the file).
fn write_html(
    profile: &mprof_engine::Profile,
    args: &ProfileArgs,
    options: &ReportOptions,
    path: &str,
) -> Result<(), String> {
    let listing = (args.count && !profile.exec.counts.is_empty())
        .then(|| mprof_listing::render_listings(profile, &ListingOptions::default()));
    let html_options = mprof_export::html::HtmlOptions {
        merge_cycles: options.merge_cycles,
        path_depth: options.path_depth,
        listing,
    };
    mprof_export::html::save_html(profile, &html_options, Some(std::path::Path::new(path)))
        .map_err(|e| format!("cannot write the HTML report to {path}: {e}"))
}
