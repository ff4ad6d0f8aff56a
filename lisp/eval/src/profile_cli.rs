//! The profiling options of the `mprof-lisp` command line and what they do
//! around a run: start recording before the program, then collect, print the
//! tables (standard error, or `--report FILE`) and write the profile file.

use mprof_profiler::monitor::MonitorOptions;
use mprof_profiler::report::{ReportOptions, Tables};

use crate::Interpreter;

#[derive(clap::Args, Debug, Clone)]
pub struct ProfileArgs {
    /// Profile the program's allocations; print the mprof tables when it ends
    /// and write the profile file.
    #[arg(long)]
    pub profile: bool,
    /// Where to write the profile file (read it with `mprof report FILE`).
    #[arg(long, value_name = "FILE", default_value = "mprof.out")]
    pub profile_out: String,
    /// Print the tables to FILE instead of standard error.
    #[arg(long, value_name = "FILE")]
    pub report: Option<String>,
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
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub path_depth: usize,
    /// Charge builtins and library functions to their Lisp caller.
    #[arg(long)]
    pub primitives_to_caller: bool,
    /// Deepest calling-context depth recorded (deeper frames count at the cap).
    #[arg(long, value_name = "N", default_value_t = 512)]
    pub context_depth: u32,
    /// Keep direct self-recursion as separate nodes instead of folding it.
    #[arg(long)]
    pub no_fold_recursion: bool,
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
        })
    }
}

/// Start recording, when `--profile` was given.
pub fn start(lisp: &mut Interpreter, args: &ProfileArgs, command_line: &str) {
    if !args.profile {
        return;
    }
    let options = MonitorOptions {
        call_sites: args.call_sites,
        max_depth: args.context_depth,
        fold_self_recursion: !args.no_fold_recursion,
    };
    lisp.profile_start(Some(options), args.primitives_to_caller);
    crate::profile::set_metadata("program", command_line);
}

/// After the run: print the tables and write the profile file.
pub fn finish(lisp: &mut Interpreter, args: &ProfileArgs) -> Result<(), String> {
    if !args.profile {
        return Ok(());
    }
    let options = args.report_options()?;
    let text = lisp.profile_report(&options);
    lisp.profile_stop();
    match &args.report {
        Some(path) => std::fs::write(path, &text).map_err(|e| format!("cannot write the report to {path}: {e}"))?,
        None => eprint!("{text}"),
    }
    lisp.profile_write(&args.profile_out).map_err(|e| format!("cannot write the profile to {}: {e}", args.profile_out))
}
