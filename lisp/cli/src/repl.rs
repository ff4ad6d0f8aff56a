//! The read-eval-print loop.
//!
//! On a terminal it uses rustyline: the prompt is `* ` (as in SBCL), input
//! continues over several lines until the forms are complete (decided by
//! the reader's string- and comment-aware `completeness`), Tab completes
//! symbol names (`car`, `mprof:rep`, `:key`), history is kept in
//! `$MPROF_LISP_HISTORY` or `~/.mprof_lisp_history`, Ctrl-C at the prompt
//! discards the line, Ctrl-C during an evaluation interrupts it (the
//! `ctrlc` handler sets the host's interrupt flag, which the driver turns
//! into an `interactive-interrupt` condition between slices), and Ctrl-D
//! exits. When standard input is not a terminal, forms are read from it
//! without prompts or line editing, through the interpreter's own standard
//! input channel so that a program calling `read-line` sees the lines that
//! follow its form; there SIGINT interrupts the form being evaluated and
//! ends the session between forms.
//!
//! Every top-level form is evaluated on its own and all its values are
//! printed, one per line, as `prin1` prints them (by Lisp code, so the output
//! streams and Ctrl-C stops printing circular data); `*`, `**`, `***` are
//! updated after each successful form. An unhandled error prints its report
//! and backtrace on standard error (lines starting `;; `) and the loop goes
//! on with every definition made so far kept.

use std::cell::{Cell, RefCell};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mprof_reader::{Completeness, Position, ReadOptions};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Config, Context, Editor, Helper, Highlighter, Hinter};

use crate::output::{write_stderr, write_stdout};
use mprof_lisp::{Interpreter, LispError};

/// The prompt, as in SBCL.
pub const PROMPT: &str = "* ";

/// Run the REPL until end of input; returns the process exit status: the
/// code a program passed to `exit`, else 0 on a terminal, and when reading a
/// pipe 1 if any form ended in an unhandled error (so scripts notice).
pub fn run(lisp: &mut Interpreter, at_line_start: Rc<Cell<bool>>) -> i32 {
    let mut session = Session { at_line_start, failed: false };
    if std::io::stdin().is_terminal() {
        interactive(lisp, &mut session)
    } else {
        batch(lisp, &mut session)
    }
}

/// What the loop remembers between inputs.
struct Session {
    /// Whether the program's standard output ended with a newline.
    at_line_start: Rc<Cell<bool>>,
    /// Whether any form ended in an unhandled error.
    failed: bool,
}

/// The outcome of evaluating one input.
enum Outcome {
    Continue,
    Exit(i32),
}

/// Evaluate every form of `text` in turn, printing values or the error.
/// A reader error stops at the form that has it; the forms before it have run.
fn eval_text(lisp: &mut Interpreter, text: &str, session: &mut Session) -> Outcome {
    let options = ReadOptions::default();
    let mut at = Position::START;
    loop {
        let start = at.offset;
        let (end, failed) = match mprof_reader::read_one_at(text, at, &options) {
            Ok(Some((_, next))) => {
                at = next;
                (next.offset, false)
            }
            Ok(None) => return Outcome::Continue,
            // Let the interpreter read the rest: it reports the error as a
            // reader-error condition, the same as a file's would be.
            Err(_) => (text.len(), true),
        };
        let padded;
        let form = if failed && start > 0 {
            // The reader failed here: pad so its line and column count
            // from the start of the input, not of this form.
            padded = format!("{}{}{}", "\n".repeat((at.line as usize).saturating_sub(1)),
                " ".repeat((at.column as usize).saturating_sub(1)),
                &text[start..]);
            padded.as_str()
        } else {
            &text[start..end]
        };
        lisp.interrupt_flag().store(false, Ordering::SeqCst);
        let printed = lisp.run_source(form, None).and_then(|()| {
            lisp.record_repl_values();
            lisp.print_results(!session.at_line_start.get())
        });
        match printed {
            Ok(()) => {}
            Err(e) => {
                if let Some(code) = e.exit_code() {
                    return Outcome::Exit(code);
                }
                if e.condition_type == mprof_lisp::DEBUGGER_ABORT {
                    // Reported by the debugger already.
                    return Outcome::Continue;
                }
                print_error(&e, session);
                return Outcome::Continue;
            }
        }
        if end >= text.len() {
            return Outcome::Continue;
        }
    }
}

fn print_error(e: &LispError, session: &mut Session) {
    session.failed = true;
    if !session.at_line_start.get() {
        session.at_line_start.set(true);
        write_stdout("\n");
    }
    write_stderr(&crate::output::format_error(e, ";; ", ";; "));
}

/// Forms from a pipe or file on standard input: no prompts, no echo.
fn batch(lisp: &mut Interpreter, session: &mut Session) -> i32 {
    // SIGINT interrupts the form being evaluated, as Ctrl-C does on a
    // terminal, and the loop goes on; between forms it ends the session with
    // status 130, as it would any filter reading a pipe.
    let busy = Arc::new(AtomicBool::new(false));
    let flag = lisp.interrupt_flag();
    let evaluating = busy.clone();
    if let Err(e) = ctrlc::set_handler(move || {
        if evaluating.load(Ordering::SeqCst) {
            flag.store(true, Ordering::SeqCst);
        } else {
            std::process::exit(130);
        }
    }) {
        write_stderr(&format!(";; SIGINT will not interrupt evaluations: {e}\n"));
    }
    let eval_text = |lisp: &mut Interpreter, text: &str, session: &mut Session| {
        busy.store(true, Ordering::SeqCst);
        let outcome = eval_text(lisp, text, session);
        busy.store(false, Ordering::SeqCst);
        outcome
    };
    let mut buf = String::new();
    loop {
        let line = match lisp.read_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(message) => {
                write_stderr(&format!(";; error: cannot read standard input: {message}\n"));
                return 1;
            }
        };
        buf.push_str(&line);
        buf.push('\n');
        if mprof_reader::completeness(&buf) == Completeness::Incomplete {
            continue;
        }
        let text = std::mem::take(&mut buf);
        if let Outcome::Exit(code) = eval_text(lisp, &text, session) {
            return code;
        }
    }
    // Input ended inside a form: evaluating it reports the reader's error.
    if !buf.trim().is_empty()
        && let Outcome::Exit(code) = eval_text(lisp, &buf, session)
    {
        return code;
    }
    i32::from(session.failed)
}

/// The rustyline helper: completion over the interpreter's symbol names
/// (copied out after each evaluation, since the completer cannot reach the
/// heap) and a validator that asks for more lines while a form is open.
#[derive(Helper, Hinter, Highlighter)]
struct LispHelper {
    names: Rc<RefCell<Vec<String>>>,
}

impl Completer for LispHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        Ok(complete_symbol(&self.names.borrow(), line, pos))
    }
}

impl Validator for LispHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        // A malformed input is accepted so that evaluating it reports the
        // error; refusing it would trap the user in the line editor.
        Ok(match mprof_reader::completeness(ctx.input()) {
            Completeness::Incomplete => ValidationResult::Incomplete,
            _ => ValidationResult::Valid(None),
        })
    }
}

/// Characters that end a symbol when scanning back from the cursor.
fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, '(' | ')' | '\'' | '"' | ';' | '`' | ',' | '|')
}

/// Complete the symbol before `pos` from `names` (lower case, external
/// symbols of other packages as `pkg:name`, keywords as `keyword:name`).
/// Returns the start of the word and the candidates; the candidates keep
/// the case the user typed in (all upper case stays upper case).
pub fn complete_symbol(names: &[String], line: &str, pos: usize) -> (usize, Vec<Pair>) {
    let pos = pos.min(line.len());
    let Some(before) = line.get(..pos) else { return (pos, Vec::new()) };
    let start = before.char_indices().rev().find(|&(_, c)| is_delimiter(c)).map(|(i, c)| i + c.len_utf8()).unwrap_or(0);
    let word = &before[start..];
    if word.is_empty() {
        return (pos, Vec::new());
    }
    let upper = word.chars().any(|c| c.is_uppercase()) && !word.chars().any(|c| c.is_lowercase());
    let lower = word.to_lowercase();
    let (search, shown_prefix) = match lower.strip_prefix(':') {
        Some(rest) => (format!("keyword:{rest}"), ":"),
        None => (lower, ""),
    };
    let skip = if shown_prefix.is_empty() { 0 } else { "keyword:".len() };
    let candidates = names
        .iter()
        .filter(|n| n.starts_with(&search))
        .map(|n| {
            let mut text = format!("{shown_prefix}{}", &n[skip..]);
            if upper {
                text = text.to_uppercase();
            }
            Pair { display: text.clone(), replacement: text }
        })
        .collect();
    (start, candidates)
}

/// Where history is kept: `$MPROF_LISP_HISTORY` (empty turns history
/// files off), else `~/.mprof_lisp_history`.
fn history_path() -> Option<PathBuf> {
    match std::env::var_os("MPROF_LISP_HISTORY") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".mprof_lisp_history")),
    }
}

fn interactive(lisp: &mut Interpreter, session: &mut Session) -> i32 {
    // Tab lists every candidate when there are several (as a shell does), rather than
    // cycling through them.
    let config = Config::builder().auto_add_history(true).completion_type(rustyline::CompletionType::List).build();
    let mut editor: Editor<LispHelper, DefaultHistory> = match Editor::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            // No usable terminal after all: fall back to plain reading.
            write_stderr(&format!(";; line editing unavailable ({e}); reading plain lines\n"));
            return batch(lisp, session);
        }
    };
    if let Err(e) = lisp.set_interactive_debugger(true) {
        write_stderr(&format!(";; the debugger is unavailable: {e}\n"));
    }
    let names = Rc::new(RefCell::new(lisp.symbol_names()));
    editor.set_helper(Some(LispHelper { names: names.clone() }));
    let history = history_path();
    if let Some(path) = &history {
        // A missing history file is normal on the first run.
        let _ = editor.load_history(path);
    }
    // Ctrl-C outside rustyline (i.e. while evaluating) sets the flag the
    // driver polls; rustyline takes SIGINT over only while reading a line.
    let flag = lisp.interrupt_flag();
    if let Err(e) = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst)) {
        write_stderr(&format!(";; Ctrl-C will not interrupt evaluations: {e}\n"));
    }
    let code = loop {
        let prompt = if session.at_line_start.get() { PROMPT.to_string() } else { format!("\n{PROMPT}") };
        session.at_line_start.set(true);
        match editor.readline(&prompt) {
            Ok(text) => {
                if let Outcome::Exit(code) = eval_text(lisp, &text, session) {
                    break code;
                }
                *names.borrow_mut() = lisp.symbol_names();
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => {
                write_stdout("\n");
                break 0;
            }
            Err(e) => {
                write_stderr(&format!(";; error reading input: {e}\n"));
                break 1;
            }
        }
    };
    if let Some(path) = &history
        && let Err(e) = editor.save_history(path)
    {
        write_stderr(&format!(";; could not save history to {}: {e}\n", path.display()));
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        ["car", "cdr", "cons", "keyword:key", "keyword:test", "mprof:report", "mprof:reset"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn replacements(line: &str) -> (usize, Vec<String>) {
        let (start, c) = complete_symbol(&names(), line, line.len());
        (start, c.into_iter().map(|p| p.replacement).collect())
    }

    #[test]
    fn completes_plain_qualified_and_keyword_symbols() {
        assert_eq!(replacements("(c"), (1, vec!["car".into(), "cdr".into(), "cons".into()]));
        assert_eq!(replacements("(mapcar #'co"), (10, vec!["cons".into()]));
        assert_eq!(replacements("(mprof:r"), (1, vec!["mprof:report".into(), "mprof:reset".into()]));
        assert_eq!(replacements("(f :te"), (3, vec![":test".into()]));
        assert_eq!(replacements("(CA"), (1, vec!["CAR".into()]));
        assert_eq!(replacements("(car "), (5, vec![]));
    }

    #[test]
    fn a_cursor_inside_a_multibyte_character_completes_nothing() {
        let (start, c) = complete_symbol(&names(), "(é", 2);
        assert_eq!((start, c.len()), (2, 0));
    }
}
