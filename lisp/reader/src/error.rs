//! Reader errors and the line/column bookkeeping that places them.
//!
//! Every error names the file (when known), the 1-based line and column and the byte
//! offset where reading stopped, and a message that says what was expected. The kind
//! separates "the input ended inside a form" (`Incomplete`: a REPL should read another
//! line) from every other syntax error (`Malformed`).
//!
//! Tests: `src/parser.rs` (positions, kinds) and the insta snapshots of messages in
//! `tests/errors.rs`.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct ReadError {
    pub kind: ReadErrorKind,
    pub message: String,
    pub file: Option<String>,
    pub line: u32,
    pub column: u32,
    pub offset: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// The input ended inside a form: more text could complete it.
    Incomplete,
    /// A syntax error that no additional text can repair.
    Malformed,
}

/// `file:line:column: message`, or `line:column: message` when the file is unknown.
impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
        }
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ReadError {}

/// Turns byte offsets into 1-based lines and columns (columns count characters).
///
/// Queries normally move forward through the source, so the tracker remembers its last
/// position and only scans the bytes in between: the whole source is scanned once per
/// read, however long its lines are. A backward query restarts from the beginning (only
/// error paths need that).
#[derive(Clone, Debug)]
pub(crate) struct Positions {
    offset: usize,
    line: u32,
    column: u32,
}

impl Positions {
    pub(crate) fn new() -> Positions {
        Positions { offset: 0, line: 1, column: 1 }
    }

    /// Line and column of byte `offset` of `src` (clamped to the source length).
    pub(crate) fn locate(&mut self, src: &str, offset: usize) -> (u32, u32) {
        let offset = offset.min(src.len());
        if offset < self.offset {
            *self = Positions::new();
        }
        for &b in &src.as_bytes()[self.offset..offset] {
            if b == b'\n' {
                self.line = self.line.saturating_add(1);
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                // Count lead bytes only, so a multi-byte character is one column.
                self.column = self.column.saturating_add(1);
            }
        }
        self.offset = offset;
        (self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let src = "ab\nλcd\n\nx";
        let mut p = Positions::new();
        assert_eq!(p.locate(src, 0), (1, 1));
        assert_eq!(p.locate(src, 2), (1, 3));
        assert_eq!(p.locate(src, 3), (2, 1));
        assert_eq!(p.locate(src, 5), (2, 2)); // after the two-byte λ
        assert_eq!(p.locate(src, 9), (4, 1));
        assert_eq!(p.locate(src, 1), (1, 2)); // backwards restarts
        assert_eq!(p.locate(src, 100), (4, 2)); // clamped to the end
    }

    #[test]
    fn display_with_and_without_file() {
        let mut e = ReadError {
            kind: ReadErrorKind::Malformed,
            message: "unexpected ')'".into(),
            file: Some("a.lisp".into()),
            line: 3,
            column: 5,
            offset: 20,
        };
        assert_eq!(e.to_string(), "a.lisp:3:5: unexpected ')'");
        e.file = None;
        assert_eq!(e.to_string(), "3:5: unexpected ')'");
    }
}
