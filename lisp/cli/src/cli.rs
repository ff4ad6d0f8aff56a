//! The command line of `mprof-lisp`: run a file, evaluate `-e` expressions,
//! or start the REPL.
//!
//! Contract with the user (the end-to-end tests in `tests/cli.rs` pin it):
//! - exit status 0 on success, 1 on an unhandled Lisp error, 2 on a usage
//!   error, or the code a program passed to `exit`;
//! - the program's output goes to standard output; diagnostics go to
//!   standard error, as one summary line `mprof-lisp: error: REPORT [TYPE]`
//!   (reader errors carry `file:line:column` in REPORT) followed by an
//!   indented backtrace line naming the Lisp functions, innermost first;
//! - nothing a user types or writes in a file makes the process panic.

use std::cell::Cell;
use std::rc::Rc;

use clap::Parser;

use mprof_lisp::{Interpreter, LispError, Options};
use crate::output::{TrackedStdout, report_error, write_stderr};

#[derive(Parser, Debug)]
#[command(
    name = "mprof-lisp",
    version,
    about = "A Common Lisp subset interpreter with a memory allocation profiler",
    long_about = "A Common Lisp subset interpreter with a memory allocation profiler.\n\n\
        With no FILE and no --eval, starts the REPL (reading forms from standard input \
        without line editing when it is not a terminal). FILE may be '-' for standard input."
)]
pub struct Args {
    /// Evaluate an expression (may be repeated; evaluated in order, before FILE).
    #[arg(short = 'e', long = "eval", value_name = "EXPR")]
    pub eval: Vec<String>,
    /// Allocation profiling (`--profile` and its settings).
    #[command(flatten)]
    pub profiling: crate::profile_cli::ProfileArgs,
    /// The deepest Lisp call nesting before a stack-exhausted error.
    #[arg(long, value_name = "N", default_value_t = 1_000_000, value_parser = parse_depth)]
    pub max_depth: usize,
    /// The most heap the program's live objects may hold before a storage-condition
    /// (bytes, or with a suffix K, M, G; default three quarters of physical memory).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_heap: Option<usize>,
    /// The program to run ('-' reads it from standard input).
    pub file: Option<String>,
    /// Arguments passed to the program (everything after FILE).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// `--max-depth`: a whole number of frames, at least one.
fn parse_depth(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("the depth must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a positive whole number of frames".to_string()),
    }
}

/// `--max-heap`: a number of bytes, optionally followed by K, M or G (powers of 1024).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (digits, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let expected = || "expected a size in bytes, optionally with a suffix K, M or G (e.g. 512M)".to_string();
    let n = digits.trim().parse::<usize>().map_err(|_| expected())?;
    if n == 0 {
        return Err("the heap limit must be more than zero".to_string());
    }
    n.checked_mul(1usize << shift).ok_or_else(|| format!("{t} is more bytes than this machine can address"))
}


/// Parse the command line and run; returns the process exit status.
pub fn main() -> i32 {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return usage_error(e),
    };
    let at_line_start = Rc::new(Cell::new(true));
    let mut options = Options { max_frames: args.max_depth, ..Options::default() };
    if let Some(bytes) = args.max_heap {
        options.max_heap = bytes;
    }
    let mut lisp = match Interpreter::with_io(
        Box::new(TrackedStdout { at_line_start: at_line_start.clone() }),
        Box::new(std::io::stderr()),
        Box::new(std::io::BufReader::new(std::io::stdin())),
        options,
    ) {
        Ok(l) => l,
        Err(e) => {
            report_error(&e);
            return 1;
        }
    };
    if let Err(e) = crate::exports::install(&mut lisp) {
        report_error(&e);
        return 1;
    }
    for warning in crate::profile_cli::ineffective(&args.profiling) {
        write_stderr(&format!("mprof-lisp: warning: {warning}\n"));
    }
    if let Err(message) = crate::profile_cli::check(&args.profiling) {
        write_stderr(&format!("mprof-lisp: error: {message}\n"));
        return 2;
    }
    lisp.set_argv(args.args.clone());
    let command_line: Vec<String> = std::env::args().collect();
    crate::profile_cli::start(&mut lisp, &args.profiling, &command_line.join(" "));
    if args.profiling.any() && args.file.is_some() {
        // Ctrl-C and SIGTERM (kill, timeout) end a profiled program with an interrupt
        // error rather than killing it, so its profile is still printed and written.
        // The REPL sets its own Ctrl-C handler and keeps SIGTERM's default.
        let flag = lisp.interrupt_flag();
        let on_interrupt = flag.clone();
        if let Err(e) = ctrlc::set_handler(move || on_interrupt.store(true, std::sync::atomic::Ordering::SeqCst)) {
            write_stderr(&format!("mprof-lisp: Ctrl-C will not keep the profile: {e}\n"));
        }
        #[cfg(unix)]
        if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGTERM, flag) {
            write_stderr(&format!("mprof-lisp: SIGTERM will not keep the profile: {e}\n"));
        }
    }
    let status = run(&mut lisp, &args, at_line_start);
    // The profile covers the run whether it ended well or not.
    if let Err(message) = crate::profile_cli::finish(&mut lisp, &args.profiling) {
        write_stderr(&format!("mprof-lisp: error: {message}\n"));
        return if status == 0 { 1 } else { status };
    }
    status
}

/// Evaluate the `-e` expressions, then the file or the REPL.
fn run(lisp: &mut Interpreter, args: &Args, at_line_start: Rc<Cell<bool>>) -> i32 {
    for expr in &args.eval {
        if let Err(e) = lisp.eval_source(expr, Some("-e")) {
            return finish_error(&e);
        }
    }
    if let Some(file) = &args.file {
        let result = if file == "-" {
            let mut src = String::new();
            match std::io::Read::read_to_string(&mut std::io::stdin(), &mut src) {
                Ok(_) => lisp.eval_source(&src, Some("<stdin>")).map(|_| ()),
                Err(e) => Err(LispError::new(
                    mprof_lisp::ErrorKind::Condition,
                    "FILE-ERROR",
                    format!("cannot read standard input: {e}"),
                )),
            }
        } else {
            lisp.load_file(file)
        };
        return match result {
            Ok(()) => 0,
            Err(e) => finish_error(&e),
        };
    }
    if args.eval.is_empty() {
        return crate::repl::run(lisp, at_line_start);
    }
    0
}

/// `--help` and `--version` print to standard output and succeed; any other
/// parse failure is one line on standard error and status 2.
fn usage_error(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            0
        }
        _ => {
            // The message, and the list that follows one ending in a colon.
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("invalid arguments");
            let mut message = first.strip_prefix("error: ").unwrap_or(first).to_string();
            if message.ends_with(':') {
                for l in lines.take_while(|l| !l.starts_with("Usage:")) {
                    message.push(' ');
                    message.push_str(l);
                }
            }
            write_stderr(&format!("mprof-lisp: usage error: {message} (try 'mprof-lisp --help')\n"));
            2
        }
    }
}

fn finish_error(e: &LispError) -> i32 {
    if let Some(code) = e.exit_code() {
        return code;
    }
    report_error(e);
    1
}
