//! The error a run returns to its host: [`LispError`], whose [`ErrorKind`]
//! tells a host *why* the run ended (a limit, a termination, an exit, a
//! reader error with its position, a Lisp condition, a conversion) without
//! reading the message, and whose text fields say it for a person.
//!
//! Invariant: the kind decides; `condition_type` is the Lisp type name shown
//! to people (a limit's kind is the same whether the program saw the
//! condition first or not).

/// Why a run ended in an error.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The program signalled a condition no handler took; `condition_type`
    /// names its type.
    Condition,
    /// The run executed its instruction budget (`Options::max_fuel`) and then
    /// the reserve given to its handlers.
    Fuel {
        /// The budget, in VM instructions.
        limit: u64,
    },
    /// The heap passed `Options::max_heap` and then the reserve given to the
    /// handlers of the first storage-condition.
    Heap {
        /// Live bytes after a full collection.
        used: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// Calls nested past `Options::max_frames` and then the margin given to the
    /// handlers of the first stack-exhausted condition.
    Frames {
        /// The frame limit.
        limit: usize,
    },
    /// The host asked the run to end ([`Terminator`](super::limits::Terminator)) or its time
    /// (`Options::max_run_time`) ran out. No Lisp handler sees it.
    Terminated,
    /// The program called `exit` (or `quit`) with this code.
    Exit {
        /// The process exit code the program asked for.
        code: i32,
    },
    /// The source text could not be read (the message names the file, when
    /// the text came from one).
    Reader {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
    },
    /// A value could not be converted between Rust and Lisp (see
    /// [`FromLisp`](crate::runtime::convert::FromLisp)), or a handle belongs to another interpreter.
    Conversion,
}

/// An error a Lisp program signalled and did not handle, a limit it reached, or
/// a failure of the driver.
#[derive(Clone, Debug, PartialEq)]
pub struct LispError {
    /// Why the run ended.
    pub kind: ErrorKind,
    /// The condition's type name, e.g. `UNBOUND-VARIABLE` (for a limit, the
    /// type the program would have seen: `STORAGE-CONDITION`).
    pub condition_type: String,
    /// The condition's report.
    pub message: String,
    /// Lisp function names, innermost first.
    pub backtrace: Vec<String>,
    /// `file:line` of the top-level form that was running, when it came from a file.
    pub location: Option<String>,
}

impl LispError {
    /// An error of `kind` with a type name and a message and nothing else.
    pub fn new(kind: ErrorKind, condition_type: impl Into<String>, message: impl Into<String>) -> LispError {
        LispError {
            kind,
            condition_type: condition_type.into(),
            message: message.into(),
            backtrace: Vec::new(),
            location: None,
        }
    }

    /// The exit code, when the program asked to exit.
    pub fn exit_code(&self) -> Option<i32> {
        match self.kind {
            ErrorKind::Exit { code } => Some(code),
            _ => None,
        }
    }

    /// Whether the run ended because of a limit or a termination (the program
    /// could not have handled it).
    pub fn is_limit(&self) -> bool {
        matches!(self.kind, ErrorKind::Fuel { .. } | ErrorKind::Heap { .. } | ErrorKind::Frames { .. } | ErrorKind::Terminated)
    }
}

impl std::fmt::Display for LispError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.condition_type, self.message)
    }
}

impl std::error::Error for LispError {}

/// The position a reader error's report starts with (`[file:]line:column: `, as
/// `mprof_reader::ReadError` prints), if it does.
pub(crate) fn reader_position(message: &str) -> Option<(Option<Box<str>>, u32, u32)> {
    // Find the first "N:M: " whose prefix is empty or a file name ending in ':'.
    let bytes = message.as_bytes();
    let mut start = 0;
    loop {
        let rest = &message[start..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let after = &rest[digits..];
            if let Some(col_part) = after.strip_prefix(':') {
                let col_digits = col_part.bytes().take_while(u8::is_ascii_digit).count();
                if col_digits > 0 && col_part[col_digits..].starts_with(": ") {
                    let line = rest[..digits].parse().ok()?;
                    let column = col_part[..col_digits].parse().ok()?;
                    let file = (start > 0).then(|| Box::from(&message[..start - 1]));
                    return Some((file, line, column));
                }
            }
        }
        // Next candidate: just after the next ':' (a file name may hold colons).
        let next = bytes[start..].iter().position(|&b| b == b':')?;
        start += next + 1;
        if start >= message.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_positions_are_found_with_and_without_a_file() {
        assert_eq!(reader_position("3:7: unbalanced )"), Some((None, 3, 7)));
        assert_eq!(reader_position("dir/a:b.lisp:12:1: end of file"), Some((Some(Box::from("dir/a:b.lisp")), 12, 1)));
        assert_eq!(reader_position("no position here"), None);
    }

    #[test]
    fn exit_codes_come_from_the_kind() {
        assert_eq!(LispError::new(ErrorKind::Exit { code: 3 }, "EXIT", "exit").exit_code(), Some(3));
        assert!(LispError::new(ErrorKind::Terminated, "TERMINATED", "").is_limit());
        assert!(!LispError::new(ErrorKind::Condition, "ERROR", "").is_limit());
    }
}
