//! The command line of `mprof-lisp`: run files, evaluate expressions, or
//! start the REPL. Exit status 0 on success, 1 on a Lisp error (with a
//! one-line message and backtrace on standard error), 2 on a usage error.

use clap::Parser;

use crate::{Interpreter, LispError, Options};

#[derive(Parser, Debug)]
#[command(name = "mprof-lisp", version, about = "A Common Lisp subset interpreter with a memory allocation profiler")]
pub struct Args {
    /// Evaluate an expression (may be repeated; evaluated in order, before FILE).
    #[arg(short = 'e', long = "eval", value_name = "EXPR")]
    pub eval: Vec<String>,
    /// Profile the program's allocations and print the mprof tables at the end.
    #[arg(long)]
    pub profile: bool,
    /// The deepest Lisp call nesting before a stack-exhausted error.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub max_depth: usize,
    /// The program to run, and its arguments.
    pub file: Option<String>,
    pub args: Vec<String>,
}

/// Report an unhandled Lisp error on standard error.
pub fn report_error(e: &LispError) {
    eprintln!("mprof-lisp: unhandled {}: {}", e.condition_type, e.message.replace('\n', " "));
    if !e.backtrace.is_empty() {
        eprintln!("backtrace: {}", e.backtrace.join(" < "));
    }
}

pub fn main() -> i32 {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let options = Options { max_frames: args.max_depth, ..Options::default() };
    let mut lisp = match Interpreter::new(options) {
        Ok(l) => l,
        Err(e) => {
            report_error(&e);
            return 1;
        }
    };
    lisp.host().argv = args.args.clone();
    for expr in &args.eval {
        if let Err(e) = lisp.eval_source(expr, Some("-e")) {
            return finish_error(&e);
        }
    }
    if let Some(file) = &args.file {
        if let Err(e) = lisp.load_file(file) {
            return finish_error(&e);
        }
        return 0;
    }
    if args.eval.is_empty() {
        return crate::repl::run(&mut lisp);
    }
    0
}

fn finish_error(e: &LispError) -> i32 {
    if let Some(code) = e.exit_code {
        return code;
    }
    report_error(e);
    1
}
