//! Text to syntax for mprof-lisp: the Common Lisp reader.
//!
//! This crate turns source text into [`Datum`]s with [`Span`]s, the way CL's standard
//! readtable does (`readtable-case :upcase`, `*read-base*` 10, doubles for every float
//! syntax). It knows nothing of the heap, packages or evaluation: symbols are names with
//! a package prefix, `'x` is the list `(COMMON-LISP:QUOTE X)`, `` `x `` is
//! `(MPROF-SYSTEM:BACKQUOTE X)`, and the evaluator gives them meaning.
//!
//! Pipeline: `lexer` (logos tokens) -> `token` (numbers, symbols, character names) ->
//! `parser` (explicit-stack assembly, reader macros, `#+`/`#-`) -> `Datum`. `syntax_noise`
//! tells a re-layout tool (the listing's pretty printer, crate `mprof-listing`) which
//! bytes of a list's text are structure.
//!
//! Invariants:
//! - no input panics, hangs or overflows the Rust stack: the parser never recurses and
//!   results nest at most `ReadOptions::max_depth` deep; dropping, comparing, printing
//!   and `Debug`-printing a `Datum` never recurse either (`items` takes trees apart), so
//!   the default depth can be millions of levels;
//! - every error carries file, line, column, offset and a message saying what was
//!   expected; input that merely ends too early is `ReadErrorKind::Incomplete`;
//! - reading is linear in the input and allocates per datum, not per character.
//!
//! ```
//! use mprof_reader::{read_all, ReadOptions};
//! let forms = read_all("(defun f (x) (* x 1/2)) #+mprof-lisp :yes", &ReadOptions::default()).unwrap();
//! assert_eq!(forms[0].to_string(), "(DEFUN F (X) (* X 1/2))");
//! assert_eq!(forms[1].to_string(), ":YES");
//! ```
//!
//! Tests: unit tests in each module; `tests/` holds the error-message snapshots, the
//! robustness test on generated garbage, and the large-input tests.

mod datum;
mod error;
mod items;
mod lexer;
mod parser;
mod syntax_noise;
mod token;
pub use token::{ReadCase, downcase_char, upcase_char};

pub use datum::{
    COMMON_LISP_PACKAGE, Datum, DatumKind, PackagePrefix, SYSTEM_PACKAGE, Span, SymbolName,
};
pub use items::Items;
pub use error::{Position, ReadError, ReadErrorKind};
pub use parser::{
    DEFAULT_MAX_DEPTH, LABEL_REF_SYMBOL, LABEL_SYMBOL, PATHNAME_LITERAL_SYMBOL, READ_EVAL_SYMBOL, ReadOptions,
    Reader,
};
pub use syntax_noise::syntax_noise;

/// Reads one datum starting at byte offset `start`. `Ok(None)` when only whitespace,
/// comments (and forms skipped by `#+`/`#-`) remain. Returns the datum and the offset just
/// after it, so a caller can continue from there.
pub fn read_one(
    src: &str,
    start: usize,
    options: &ReadOptions,
) -> Result<Option<(Datum, usize)>, ReadError> {
    let mut reader = Reader::starting_at(src, start, options)?;
    Ok(reader.read()?.map(|datum| {
        let end = datum.span.end;
        (datum, end)
    }))
}

/// [`read_one`] for callers that step through a long text: `at` carries the line and
/// column of `at.offset` (start with [`Position::START`]), and the returned position of the
/// end of the datum is the `at` for the next call. Each call then costs only the text it
/// reads, where `read_one` rescans the text before `start` to number lines.
pub fn read_one_at(
    src: &str,
    at: Position,
    options: &ReadOptions,
) -> Result<Option<(Datum, Position)>, ReadError> {
    let mut reader = Reader::resume(src, at, options)?;
    match reader.read()? {
        Some(datum) => Ok(Some((datum, reader.position()))),
        None => Ok(None),
    }
}

/// Reads every datum of a source (a file or a `-e` expression).
pub fn read_all(src: &str, options: &ReadOptions) -> Result<Vec<Datum>, ReadError> {
    Reader::new(src, options).collect()
}

/// Whether a REPL has read enough text, see [`completeness`].
#[derive(Clone, Debug, PartialEq)]
pub enum Completeness {
    /// One or more complete forms (or only whitespace and comments).
    Complete,
    /// The text ends inside a form: open list, string, `#|` comment, or after a quote-like
    /// prefix or `#+feature`; the REPL should read another line.
    Incomplete,
    /// A syntax error that more text cannot repair.
    Malformed(ReadError),
}

/// For the REPL validator: are these complete forms, the beginning of one, or an error?
/// Uses `ReadOptions::default()` (features `:mprof-lisp` and `:common-lisp`).
pub fn completeness(src: &str) -> Completeness {
    completeness_with(src, &ReadOptions::default())
}

/// [`completeness`] with explicit options.
pub fn completeness_with(src: &str, options: &ReadOptions) -> Completeness {
    for result in Reader::new(src, options) {
        match result {
            Ok(_) => {}
            Err(error) if error.kind == ReadErrorKind::Incomplete => {
                return Completeness::Incomplete;
            }
            Err(error) => return Completeness::Malformed(error),
        }
    }
    Completeness::Complete
}
