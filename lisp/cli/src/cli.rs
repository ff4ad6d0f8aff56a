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
use std::io::Write;
use std::rc::Rc;

use clap::Parser;

use mprof_lisp::{Interpreter, LispError, Options};

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

/// The deepest backtrace the VM records; a backtrace this long was cut.
const BACKTRACE_LIMIT: usize = 50;

/// Render an unhandled error for a person: a summary line
/// `{lead}error: REPORT [TYPE]`, then, when there is one, a line
/// `{margin}  backtrace: F < G < (top level)` (innermost first, runs of the
/// same function folded as `F x12`). The report is joined onto one line
/// because multi-line reports (type errors) read badly in a terminal log.
pub fn format_error(e: &LispError, lead: &str, margin: &str) -> String {
    let message = one_line(&e.message);
    let mut out = format!("{lead}error: {message} [{}]\n", e.condition_type);
    if let Some(bt) = format_backtrace(&e.backtrace) {
        out.push_str(&format!("{margin}  backtrace: {bt}\n"));
    }
    if let Some(at) = &e.location {
        out.push_str(&format!("{margin}  in the top-level form at {at}\n"));
    }
    out
}

/// Lines of a report, trimmed and joined with single spaces; a line that
/// starts a new sentence ("Operation was ...") after one that did not end
/// one gets a period first, so the sentences stay apart.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.is_empty() {
            let mut chars = line.chars();
            let sentence = matches!((chars.next(), chars.next()), (Some(a), Some(b)) if a.is_uppercase() && b.is_lowercase());
            if sentence && !out.ends_with(['.', '!', '?', ':', ';', ',']) {
                out.push('.');
            }
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// `F < G < (top level)`, or None when there is nothing to show beyond the
/// top-level form itself. The VM names the compiled top-level form
/// `(LAMBDA)`; it is the outermost entry unless the backtrace was cut at
/// the VM's limit.
pub fn format_backtrace(frames: &[String]) -> Option<String> {
    if frames.is_empty() || frames == ["(LAMBDA)"] || frames == ["(top level)"] {
        return None;
    }
    let cut = frames.len() >= BACKTRACE_LIMIT;
    let mut names: Vec<&str> = frames.iter().map(String::as_str).collect();
    if !cut && names.last() == Some(&"(LAMBDA)") {
        names.pop();
        names.push("(top level)");
    }
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < names.len() {
        let mut j = i + 1;
        while j < names.len() && names[j] == names[i] {
            j += 1;
        }
        let run = j - i;
        parts.push(if run > 2 { format!("{} x{run}", names[i]) } else { names[i..j].join(" < ") });
        i = j;
    }
    if cut {
        parts.push("...".to_string());
    }
    Some(parts.join(" < "))
}

/// Write to standard error. A closed or full stream is ignored: the print
/// macros would panic, and there is nowhere left to report the failure.
pub fn write_stderr(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Write to standard output and flush, ignoring a closed pipe (see `write_stderr`).
pub fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Report an unhandled Lisp error on standard error.
pub fn report_error(e: &LispError) {
    write_stderr(&format_error(e, "mprof-lisp: ", ""));
}

/// Standard output, remembering whether the last byte written was a newline
/// so the REPL can start its value lines on a fresh line.
pub struct TrackedStdout {
    pub at_line_start: Rc<Cell<bool>>,
}

impl Write for TrackedStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = std::io::stdout().write(buf)?;
        if n > 0 {
            self.at_line_start.set(buf[n - 1] == b'\n');
        }
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush()
    }
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
    lisp.set_args(args.args.clone());
    let command_line: Vec<String> = std::env::args().collect();
    crate::profile_cli::start(&mut lisp, &args.profiling, &command_line.join(" "));
    if args.profiling.any() && args.file.is_some() {
        // Ctrl-C and SIGTERM (kill, timeout) end a profiled program with an interrupt
        // error rather than killing it, so its profile is still printed and written.
        // The REPL sets its own Ctrl-C handler and keeps SIGTERM's default.
        let flag = lisp.host().interrupt.clone();
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
                Err(e) => Err(LispError {
                    condition_type: "FILE-ERROR".into(),
                    message: format!("cannot read standard input: {e}"),
                    backtrace: vec![],
                    exit_code: None,
                    location: None,
                }),
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
    if let Some(code) = e.exit_code {
        return code;
    }
    report_error(e);
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(message: &str, backtrace: &[&str]) -> LispError {
        LispError {
            condition_type: "TYPE-ERROR".into(),
            message: message.into(),
            backtrace: backtrace.iter().map(|s| s.to_string()).collect(),
            exit_code: None,
            location: None,
        }
    }

    #[test]
    fn multi_line_reports_are_joined_and_top_level_named() {
        let e = err("The value\n  \"a\"\nis not of type\n  NUMBER", &["F", "G", "(LAMBDA)"]);
        assert_eq!(
            format_error(&e, "mprof-lisp: ", ""),
            "mprof-lisp: error: The value \"a\" is not of type NUMBER [TYPE-ERROR]\n  \
             backtrace: F < G < (top level)\n"
        );
    }

    #[test]
    fn repeated_frames_fold_and_cut_backtraces_say_so() {
        let mut frames = vec!["R".to_string(); BACKTRACE_LIMIT];
        frames[0] = "CAR".into();
        assert_eq!(format_backtrace(&frames).as_deref(), Some("CAR < R x49 < ..."));
        let two = vec!["A".to_string(), "A".to_string(), "(LAMBDA)".to_string()];
        assert_eq!(format_backtrace(&two).as_deref(), Some("A < A < (top level)"));
        assert_eq!(format_backtrace(&[]), None);
        assert_eq!(format_backtrace(&["(LAMBDA)".to_string()]), None);
    }

    #[test]
    fn joined_lines_keep_sentences_apart() {
        assert_eq!(
            one_line("arithmetic error DIVISION-BY-ZERO signalled\nOperation was (/ 1 0)."),
            "arithmetic error DIVISION-BY-ZERO signalled. Operation was (/ 1 0)."
        );
        assert_eq!(one_line("The value\n  5\nis not of type\n  LIST"), "The value 5 is not of type LIST");
    }
}
