//! The `mprof` binary: glue between the command line and the engine, symbolizer,
//! display, export, listing and launcher crates. It reads profile
//! files (symbolizing libmprof's raw ones), prints reports (memory tables, then whichever execution tables the file holds),
//! merges runs, prints annotated listings of execution counts, writes the HTML report
//! and exports memory or time to other tools' formats. Every failure is one
//! line on stderr (`mprof: ...`) and a non-zero exit; no input makes it panic.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mprof_display::exec_report::time_view;
use mprof_display::{Memory, ReportOptions, SizeBins, Tables, TextReport, render_text};
use mprof_engine::Profile;
use mprof_export::formats::{self, FoldedValue};
use mprof_export::html::{HtmlOptions, save_html};
use mprof_listing::{ListingOptions, find_source, render_listing, render_listings};

#[derive(Parser)]
#[command(
    name = "mprof",
    version,
    about = "Memory and execution profiler: reports, merges and exports mprof profiles"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the tables of a profile: memory (leak/kept, bins, direct allocation, call
    /// graph, errors), then time (flat profile, call graph), call counts and I/O, as held.
    /// Several files are summed first.
    Report {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Comma-separated kinds of data to print: memory, time, counts, io, all.
        #[arg(long, default_value = "all")]
        show: String,
        /// Comma-separated tables: leak (or kept), bins, direct, graph, errors, all.
        #[arg(long, default_value = "all")]
        tables: String,
        /// text (the tables) or json (the memory tables' numbers, for scripts).
        #[arg(long, value_name = "FORMAT", default_value = "text")]
        format: String,
        /// Rows of a C profile's bin table: exact (one per size) or pow2 (129-256...).
        #[arg(long, value_name = "HOW", default_value = "exact")]
        bins: String,
        /// Print percentages with one decimal instead of two-character fields (time tables:
        /// whole nanoseconds and two decimals).
        #[arg(long)]
        exact: bool,
        /// Merge recursion cycles into one entry each, as the original mprof did.
        #[arg(long)]
        merge_cycles: bool,
        /// Distinguish call sites within a function in printed paths.
        #[arg(long)]
        call_sites: bool,
        /// Number of callers shown in the leak/kept and errors tables.
        #[arg(long, default_value_t = 5)]
        path_depth: usize,
    },
    /// Sum the profiles of several runs or processes into one file.
    Merge {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Draw a flame graph (SVG) of the bytes allocated or of the time measured.
    Flamegraph {
        file: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        /// Which profile to draw.
        #[arg(long, value_enum, default_value = "memory")]
        kind: KindArg,
        /// What the widths count (memory: bytes, allocs, kept; time: time, calls,
        /// instructions). Defaults to bytes or time.
        #[arg(long, value_enum)]
        value: Option<ValueArg>,
    },
    /// Print a program's listing annotated with the execution counts of a `--count`
    /// run (pxp style): line number, the count where it changes, a bar, the code.
    Listing {
        file: PathBuf,
        /// The source as it was run (found by its recorded path or its file name);
        /// every counted source when absent.
        source: Option<PathBuf>,
        /// Only the top-level definitions of these names.
        #[arg(long, value_name = "F,G", value_delimiter = ',')]
        only: Vec<String>,
        /// Columns for the program text.
        #[arg(long, default_value_t = 72)]
        width: usize,
    },
    /// Write one self-contained HTML page (no network access needed to read it): summary,
    /// memory over time, interactive flame graphs, the tables, the annotated listing.
    Html {
        file: PathBuf,
        /// Output file (`-` for standard output).
        #[arg(short, long)]
        output: PathBuf,
        /// Merge recursion cycles into one entry each, as the original mprof did.
        #[arg(long)]
        merge_cycles: bool,
        /// Number of callers shown in the leak/kept and errors tables' paths.
        #[arg(long, default_value_t = 5)]
        path_depth: usize,
    },
    /// Convert a profile for other tools.
    Export {
        file: PathBuf,
        #[arg(long, value_enum)]
        format: FormatArg,
        /// Output file (standard output when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Which profile to export.
        #[arg(long, value_enum, default_value = "memory")]
        kind: KindArg,
        /// What folded stacks count (memory: bytes, allocs, kept; time: time, calls,
        /// instructions). Defaults to bytes or time.
        #[arg(long, value_enum)]
        value: Option<ValueArg>,
    },
    /// What changed from BASE to NEW: per function and per calling context, the change
    /// in bytes allocated, kept and allocations (for finding regressions).
    Diff {
        base: PathBuf,
        new: PathBuf,
        /// text (tables), json, or folded (two-column `stack base new`, for flame graphs).
        #[arg(long, value_name = "FORMAT", default_value = "text")]
        format: String,
        /// Rows per table in the text format.
        #[arg(long, value_name = "N", default_value_t = 20)]
        limit: usize,
        /// Output file (standard output when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Also draw a differential flame graph (red grew, blue shrank) to this SVG file.
        #[arg(long, value_name = "SVG")]
        flamegraph: Option<PathBuf>,
    },
    /// Run a C program with libmprof preloaded (as heaptrack's launcher), then say where
    /// its profile went: `mprof run [OPTIONS] -- PROGRAM ARGS...`.
    Run {
        /// libmprof.so to preload (default: MPROF_LIBRARY, then beside this executable).
        #[arg(long, value_name = "FILE")]
        library: Option<PathBuf>,
        /// Output path; the process id is added when `%p` is missing
        /// (default mprof.PROGRAM.PID.out).
        #[arg(short, long, value_name = "PATH")]
        output: Option<String>,
        /// Profile the processes the program starts too, each to its own file (by
        /// default they run unprofiled and see no trace of the library).
        #[arg(long)]
        follow_children: bool,
        /// Frames kept per allocation (MPROF_DEPTH).
        #[arg(long, value_name = "N")]
        depth: Option<u32>,
        /// Stack capture: auto (frame pointers or CFI per module), fp or dwarf (MPROF_UNWIND).
        #[arg(long, value_name = "HOW")]
        unwind: Option<String>,
        /// A signal that writes the profile on demand, e.g. USR1 (MPROF_DUMP_SIGNAL).
        #[arg(long, value_name = "SIGNAL")]
        dump_signal: Option<String>,
        /// Function-name patterns whose leaks are not reported (MPROF_SUPPRESS).
        #[arg(long, value_name = "PATTERNS")]
        suppress: Option<String>,
        /// Exit with status N when definitely lost bytes remain after suppressions, as
        /// valgrind's --error-exitcode (MPROF_LEAK_EXITCODE; 1 to 255).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..))]
        leak_exitcode: Option<u8>,
        /// The program and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "PROGRAM")]
        command: Vec<std::ffi::OsString>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum KindArg {
    Memory,
    Time,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Folded,
    Json,
    Pprof,
}

#[derive(Clone, Copy, ValueEnum)]
enum ValueArg {
    Bytes,
    Allocs,
    Kept,
    /// Self time in nanoseconds.
    Time,
    Calls,
    Instructions,
}

impl From<ValueArg> for FoldedValue {
    fn from(v: ValueArg) -> Self {
        match v {
            ValueArg::Bytes => FoldedValue::Bytes,
            ValueArg::Allocs => FoldedValue::Allocs,
            ValueArg::Kept => FoldedValue::KeptBytes,
            ValueArg::Time => FoldedValue::TimeNs,
            ValueArg::Calls => FoldedValue::Calls,
            ValueArg::Instructions => FoldedValue::Instructions,
        }
    }
}

/// What `mprof report --show` prints.
#[derive(Clone, Copy, Default)]
struct Show {
    memory: bool,
    time: bool,
    counts: bool,
    io: bool,
}

impl Show {
    fn parse(list: &str) -> Result<Show, String> {
        let mut s = Show::default();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "memory" => s.memory = true,
                "time" => s.time = true,
                "counts" => s.counts = true,
                "io" => s.io = true,
                "all" => s = Show { memory: true, time: true, counts: true, io: true },
                other => return Err(format!("unknown kind `{other}` for --show (expected memory, time, counts, io or all)")),
            }
        }
        if !(s.memory || s.time || s.counts || s.io) {
            return Err("--show names nothing (expected memory, time, counts, io or all)".into());
        }
        Ok(s)
    }
}

/// True when a `--show` list names kinds rather than asking for `all` of them.
fn show_list_names_kinds(list: &str) -> bool {
    !list.split(',').map(str::trim).any(|n| n == "all")
}

/// The profile an export or flame graph reads, and the value it counts: the memory
/// profile itself, or the time view of its time profile.
fn select(p: Profile, file: &Path, kind: KindArg, value: Option<ValueArg>) -> Result<(Profile, FoldedValue), String> {
    let value: FoldedValue = match (kind, value) {
        (KindArg::Memory, None) => FoldedValue::Bytes,
        (KindArg::Time, None) => FoldedValue::TimeNs,
        (_, Some(v)) => v.into(),
    };
    match kind {
        KindArg::Memory if value.is_time() => {
            Err(format!("--value {} counts time: add --kind time", value.unit()))
        }
        KindArg::Time if !value.is_time() => {
            Err(format!("--value {} counts memory: use time, calls or instructions with --kind time", value.unit()))
        }
        KindArg::Memory => Ok((p, value)),
        KindArg::Time => match time_view(&p) {
            Some(view) => Ok((view, value)),
            None => Err(format!(
                "{} holds no time profile (record one with mprof-lisp --time)",
                file.display()
            )),
        },
    }
}

/// Reads a profile, symbolizing a raw one (libmprof's return addresses).
fn load(path: &Path) -> Result<Profile, String> {
    let bytes = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let profile = Profile::read(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(mprof_symbolize::symbolize(profile, &mprof_symbolize::Options::default()))
}

/// Reads and sums several profiles (one is returned as read).
fn load_all(files: &[PathBuf]) -> Result<Profile, String> {
    let mut merged: Option<Profile> = None;
    for file in files {
        let p = load(file)?;
        match &mut merged {
            None => merged = Some(p),
            Some(m) => m.merge(&p).map_err(|e| format!("{}: {e}", file.display()))?,
        }
    }
    merged.ok_or_else(|| "no input file".to_string())
}

fn save(path: &Path, bytes: &[u8]) -> Result<(), String> {
    mprof_engine::save_file(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `-o -` names standard output, as in most command-line tools.
fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

fn emit(output: Option<&Path>, bytes: &[u8]) -> Result<(), String> {
    match output.filter(|p| !is_stdout(p)) {
        Some(path) => save(path, bytes),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(bytes).and_then(|_| stdout.flush()).map_err(|e| format!("cannot write output: {e}"))
        }
    }
}

/// Writes `output` (or standard output) with `write`, as the bytes are produced; a file
/// is complete or absent (temporary file and rename).
fn stream(output: Option<&Path>, write: impl FnOnce(&mut dyn Write) -> Result<(), String>) -> Result<(), String> {
    match output.filter(|p| !is_stdout(p)) {
        Some(path) => mprof_engine::save_streaming(path, |w| write(w).map_err(std::io::Error::other))
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            write(&mut stdout)?;
            stdout.flush().map_err(|e| format!("cannot write output: {e}"))
        }
    }
}

/// `mprof run`: the program's exit status becomes ours (128 + the signal when it died
/// of one), so scripts see the program's outcome.
fn launch(options: mprof_launch::Options, command: &[std::ffi::OsString]) -> Result<ExitCode, String> {
    use std::os::unix::process::ExitStatusExt;
    let (program, args) = command.split_first().ok_or("mprof run: no program given (mprof run -- PROGRAM ARGS)")?;
    let mut messages = std::io::stderr();
    let outcome = mprof_launch::run(&options, program, args, &mut messages).map_err(|e| e.to_string())?;
    let code = match (outcome.status.code(), outcome.status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => 1,
    };
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Run { .. } => Err("mprof run is handled before the other commands".into()),
        Command::Diff { base, new, format, limit, output, flamegraph } => {
            if !["text", "json", "folded"].contains(&format.as_str()) {
                return Err(format!("unknown diff format `{format}` (expected text, json or folded)"));
            }
            let (b, n) = (load(&base)?, load(&new)?);
            let d = mprof_export::diff::diff(&b, &n)?;
            if let Some(svg_path) = &flamegraph {
                let svg = mprof_export::diff::flamegraph(&d, "mprof diff: bytes allocated, NEW against BASE")?;
                save(svg_path, &svg)?;
            }
            match format.as_str() {
                "text" => emit(output.as_deref(), mprof_export::diff::render(&d, limit.max(1)).as_bytes()),
                "json" => emit(output.as_deref(), format!("{}\n", mprof_export::diff::json(&d)).as_bytes()),
                _ => stream(output.as_deref(), |w| mprof_export::diff::write_folded(&d, w).map_err(|e| e.to_string())),
            }
        }
        Command::Report { files, show, tables, format, bins, exact, merge_cycles, call_sites, path_depth } => {
            if path_depth == 0 {
                return Err("--path-depth must be at least 1".into());
            }
            let show_text = show;
            let show = Show::parse(&show_text)?;
            let options = ReportOptions {
                tables: Tables::parse(&tables)?,
                exact_percentages: exact,
                merge_cycles,
                call_sites,
                path_depth,
                size_bins: SizeBins::parse(&bins)?,
            };
            if format != "text" && format != "json" {
                return Err(format!("unknown report format `{format}` (expected text or json)"));
            }
            let profile = load_all(&files)?;
            if format == "json" {
                let text = mprof_export::report_json::report_json(&profile, &options)?;
                return emit(None, format!("{text}\n").as_bytes());
            }
            // A kind asked for by name that the file lacks is an error, not a blank report.
            let named = show_list_names_kinds(&show_text);
            let missing: Vec<&str> = [
                (named && show.memory && !profile.has_memory(), "memory (record it with mprof-lisp --profile or libmprof)"),
                (named && show.time && profile.exec.time.is_none(), "time (record it with mprof-lisp --time)"),
                (named && show.counts && profile.exec.counts.is_empty(), "counts (record them with mprof-lisp --count)"),
                (named && show.io && profile.exec.io.is_empty(), "I/O (record it with mprof-lisp --io or --time)"),
            ]
            .into_iter()
            .filter_map(|(absent, what)| absent.then_some(what))
            .collect();
            if !missing.is_empty() {
                let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
                return Err(format!("{} holds no {}", names.join(", "), missing.join(", no ")));
            }
            let report = TextReport {
                memory: Memory::OfFile { tables: show.memory },
                time: show.time,
                counts: show.counts,
                io: show.io,
                listing: None,
            };
            emit(None, render_text(&profile, &options, &report).as_bytes())
        }
        Command::Listing { file, source, only, width } => {
            let p = load(&file)?;
            let options = ListingOptions { only, width: width.max(20) };
            let text = match source {
                None if p.exec.counts.is_empty() => {
                    return Err(format!("{}: the profile holds no execution counts (run with --count)", file.display()));
                }
                None => render_listings(&p, &options),
                Some(source) => {
                    let path = source.to_string_lossy();
                    let index = find_source(&p, &path).map_err(|e| format!("{}: {e}", file.display()))?;
                    let text = fs::read_to_string(&source).map_err(|e| format!("cannot read {path}: {e}"))?;
                    render_listing(&p, index, &text, &options)?
                }
            };
            emit(None, text.as_bytes())
        }
        Command::Merge { files, output } => {
            let merged = load_all(&files)?;
            let mut bytes = Vec::new();
            merged.write(&mut bytes).map_err(|e| format!("cannot encode: {e}"))?;
            emit(Some(&output), &bytes)
        }
        Command::Flamegraph { file, output, kind, value } => {
            let (p, value) = select(load(&file)?, &file, kind, value)?;
            let what = match value {
                FoldedValue::TimeNs => "time (ns)",
                v => v.unit(),
            };
            let title = format!("mprof: {what} by call path");
            let svg = formats::flamegraph(&p, value, &title).map_err(|e| format!("{}: {e}", file.display()))?;
            emit(Some(&output), &svg)
        }
        Command::Html { file, output, merge_cycles, path_depth } => {
            if path_depth == 0 {
                return Err("--path-depth must be at least 1".into());
            }
            let output = (output.as_os_str() != "-").then_some(output.as_path());
            if let Some(path) = output {
                mprof_engine::check_writable(path).map_err(|e| format!("-o: {e}"))?;
            }
            let p = load(&file)?;
            p.validate().map_err(|e| format!("{}: {e}", file.display()))?;
            // The listing reads the counted sources from disk; a missing or changed
            // source is said inside the listing, as `mprof listing` says it.
            let listing = (!p.exec.counts.is_empty()).then(|| render_listings(&p, &ListingOptions::default()));
            let options = HtmlOptions { merge_cycles, path_depth, listing };
            save_html(&p, &options, output).map_err(|e| match output {
                Some(path) => format!("cannot write {}: {e}", path.display()),
                None => e.to_string(),
            })
        }
        Command::Export { file, format, output, kind, value } => {
            let (p, value) = select(load(&file)?, &file, kind, value)?;
            match format {
                // Streamed: folded text grows with the sum of the stacks' depths.
                FormatArg::Folded => {
                    p.validate().map_err(|e| format!("{}: {e}", file.display()))?;
                    let stacks = mprof_export::stacks::Stacks::new(&p, value);
                    return stream(output.as_deref(), |w| stacks.write_folded(w).map_err(|e| e.to_string()));
                }
                // Streamed too: one JSON value per node would cost kilobytes each.
                FormatArg::Json => {
                    return stream(output.as_deref(), |w| {
                        formats::json_to(&p, w)?;
                        w.write_all(b"\n").map_err(|e| e.to_string())
                    })
                    .map_err(|e| format!("{}: {e}", file.display()));
                }
                // Streamed: a sample carries its whole stack, so the message is as long
                // as the sum of the stacks' depths.
                FormatArg::Pprof => {
                    return stream(output.as_deref(), |w| match kind {
                        KindArg::Time => formats::pprof_time_gz_to(&p, w),
                        KindArg::Memory => formats::pprof_gz_to(&p, w),
                    })
                    .map_err(|e| format!("{}: {e}", file.display()));
                }
            };
        }
    }
}

/// clap's error as one line: its message, with the list that follows a message ending
/// in a colon (the missing arguments), and the usage line.
fn one_line_usage_error(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    let mut message = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let rest: Vec<&str> = lines.collect();
    if message.ends_with(':') {
        for l in rest.iter().take_while(|l| !l.starts_with("Usage:")) {
            message.push(' ');
            message.push_str(l);
        }
    }
    if let Some(usage) = rest.iter().find_map(|l| l.strip_prefix("Usage:")) {
        message.push_str(&format!(" (usage: {})", usage.trim()));
    }
    message
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version are not errors.
            print!("{e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("mprof: {}", one_line_usage_error(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    if let Command::Run { library, output, follow_children, depth, unwind, dump_signal, suppress, leak_exitcode, command } =
        cli.command
    {
        let settings = [
            ("MPROF_DEPTH", depth.map(|d| d.to_string())),
            ("MPROF_UNWIND", unwind),
            ("MPROF_DUMP_SIGNAL", dump_signal),
            ("MPROF_SUPPRESS", suppress),
            ("MPROF_LEAK_EXITCODE", leak_exitcode.map(|n| n.to_string())),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
        .collect();
        let options = mprof_launch::Options { library, out: output, follow_children, settings };
        return match launch(options, &command) {
            Ok(code) => code,
            Err(message) => {
                eprintln!("mprof: {message}");
                ExitCode::FAILURE
            }
        };
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mprof: {message}");
            ExitCode::FAILURE
        }
    }
}
