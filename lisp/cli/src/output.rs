//! How the binary writes: an unhandled Lisp error rendered for a person (one
//! summary line, the backtrace folded), and the standard streams written so
//! that a closed pipe never panics; standard output remembers whether it is at
//! the start of a line, for the REPL.

use std::cell::Cell;
use std::io::Write;
use std::rc::Rc;

use mprof_lisp::LispError;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn err(message: &str, backtrace: &[&str]) -> LispError {
        LispError {
            condition_type: "TYPE-ERROR".into(),
            message: message.into(),
            backtrace: backtrace.iter().map(|s| s.to_string()).collect(),
            kind: mprof_lisp::ErrorKind::Condition,
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
