//! The `mprof` binary: glue between the command line and the library. It reads profile
//! files, prints reports, merges runs and exports to other tools' formats. Every failure
//! is one line on stderr (`mprof: ...`) and a non-zero exit; no input makes it panic.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mprof_profiler::export::{self, FoldedValue};
use mprof_profiler::{Profile, ReportOptions, Tables, render_report};

#[derive(Parser)]
#[command(name = "mprof", version, about = "Memory allocation profiler: reports, merges and exports mprof profiles")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the tables of a profile (memory leak/kept, bins, direct allocation, call graph, errors).
    Report {
        file: PathBuf,
        /// Comma-separated tables: leak (or kept), bins, direct, graph, errors, all.
        #[arg(long, default_value = "all")]
        tables: String,
        /// Print percentages with one decimal instead of two-character fields.
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
    /// Draw a flame graph (SVG) of the bytes allocated.
    Flamegraph {
        file: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        /// What the widths count.
        #[arg(long, value_enum, default_value = "bytes")]
        value: ValueArg,
    },
    /// Convert a profile for other tools.
    Export {
        file: PathBuf,
        #[arg(long, value_enum)]
        format: FormatArg,
        /// Output file (standard output when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// What folded stacks count.
        #[arg(long, value_enum, default_value = "bytes")]
        value: ValueArg,
    },
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
}

impl From<ValueArg> for FoldedValue {
    fn from(v: ValueArg) -> Self {
        match v {
            ValueArg::Bytes => FoldedValue::Bytes,
            ValueArg::Allocs => FoldedValue::Allocs,
            ValueArg::Kept => FoldedValue::KeptBytes,
        }
    }
}

fn load(path: &Path) -> Result<Profile, String> {
    let bytes = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Profile::read(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn save(path: &Path, bytes: &[u8]) -> Result<(), String> {
    fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn emit(output: Option<&Path>, bytes: &[u8]) -> Result<(), String> {
    match output {
        Some(path) => save(path, bytes),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(bytes).and_then(|_| stdout.flush()).map_err(|e| format!("cannot write output: {e}"))
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Report { file, tables, exact, merge_cycles, call_sites, path_depth } => {
            if path_depth == 0 {
                return Err("--path-depth must be at least 1".into());
            }
            let options = ReportOptions {
                tables: Tables::parse(&tables)?,
                exact_percentages: exact,
                merge_cycles,
                call_sites,
                path_depth,
            };
            let profile = load(&file)?;
            emit(None, render_report(&profile, &options).as_bytes())
        }
        Command::Merge { files, output } => {
            let mut merged: Option<Profile> = None;
            for file in &files {
                let p = load(file)?;
                match &mut merged {
                    None => merged = Some(p),
                    Some(m) => m.merge(&p).map_err(|e| format!("{}: {e}", file.display()))?,
                }
            }
            let merged = merged.ok_or("no input file")?;
            let mut bytes = Vec::new();
            merged.write(&mut bytes).map_err(|e| format!("cannot encode: {e}"))?;
            save(&output, &bytes)
        }
        Command::Flamegraph { file, output, value } => {
            let p = load(&file)?;
            let title = format!("mprof: {} by call path", FoldedValue::from(value).unit());
            let svg = export::flamegraph(&p, value.into(), &title).map_err(|e| format!("{}: {e}", file.display()))?;
            save(&output, &svg)
        }
        Command::Export { file, format, output, value } => {
            let p = load(&file)?;
            let bytes = match format {
                FormatArg::Folded => export::folded(&p, value.into()).map(String::into_bytes),
                FormatArg::Json => export::json(&p).map(|mut s| {
                    s.push('\n');
                    s.into_bytes()
                }),
                FormatArg::Pprof => export::pprof_gz(&p),
            }
            .map_err(|e| format!("{}: {e}", file.display()))?;
            emit(output.as_deref(), &bytes)
        }
    }
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
            let text = e.to_string();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("invalid arguments");
            eprintln!("mprof: {}", first.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mprof: {message}");
            ExitCode::FAILURE
        }
    }
}
