//! The parser: assembles tokens into `Datum`s with spans, expands the reader macros
//! (`'` `` ` `` `,` `,@` `#'`), and applies `#+`/`#-` feature conditionals.
//!
//! It never recurses. Open lists, vectors, prefixes and conditionals live on an explicit
//! stack of `Frame`s, and a finished datum is handed down that stack by `deliver`, so no
//! input can overflow the Rust stack. `ReadOptions::max_depth` bounds how deep the
//! *result* may nest; its consumers do not recurse either (see `items.rs`).
//!
//! A form skipped by `#+`/`#-` is still read, like CL's `*read-suppress*`: brackets,
//! strings and comments must balance, but tokens are not interpreted (so `#-sbcl sb-ext:foo`
//! or `#+nope #\NoSuchName` are fine) and nothing of it is kept.
//!
//! Tests: `parser/tests.rs` (data-driven `check` on the printed result, and error
//! kinds/positions) plus `tests/` at the crate root.

mod literals;

use logos::{Lexer, Logos};

use crate::datum::{
    COMMON_LISP_PACKAGE, Datum, DatumKind, Items, PackagePrefix, SYSTEM_PACKAGE, Span, SymbolName,
};
use crate::error::{Position, Positions, ReadError, ReadErrorKind};
use crate::lexer::{LexError, Token};
use crate::token::{
    Classified, char_from_name, classify_atom, classify_radix, classify_uninterned, shorten,
};
use crate::parser::literals::{MAX_ARRAY_RANK, array_datum, complex_datum, parse_bit_vector};
use crate::token::ReadCase;

/// The head of the list `#n=x` reads as: `(MPROF-SYSTEM:%LABEL n x)`; the
/// evaluator turns labels into shared structure.
pub const LABEL_SYMBOL: &str = "%LABEL";
/// The head of the list `#n#` reads as: `(MPROF-SYSTEM:%LABEL-REF n)`.
pub const LABEL_REF_SYMBOL: &str = "%LABEL-REF";
/// `#.x` reads as `(MPROF-SYSTEM:%READ-EVAL x)`: the evaluator evaluates it
/// (the reader cannot), obeying `*read-eval*`.
pub const READ_EVAL_SYMBOL: &str = "%READ-EVAL";
/// `#P"x"` reads as `(MPROF-SYSTEM:%READ-EVAL (MPROF-SYSTEM:%PATHNAME-LITERAL "x"))`.
pub const PATHNAME_LITERAL_SYMBOL: &str = "%PATHNAME-LITERAL";

/// How deep a datum may nest by default (lists, vectors and quote-like prefixes all count).
/// Nothing that handles a `Datum` recurses on its depth (the parser, `Drop`, `==`,
/// `Display`, `Debug`), so this only keeps a runaway input from being read as one datum:
/// ten times the 1,000,000 levels of data the interpreter is tested with. Memory is linear
/// in the input either way. Set `ReadOptions::max_depth` to `usize::MAX` to lift the limit.
pub const DEFAULT_MAX_DEPTH: usize = 10_000_000;

/// Options for one read.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadOptions {
    /// Named in error messages.
    pub file: Option<String>,
    /// Feature names for `#+`/`#-`, compared case-insensitively (conventionally upcased,
    /// without the colon): e.g. `["MPROF-LISP", "COMMON-LISP"]`.
    pub features: Vec<String>,
    /// Reading a datum nested deeper than this is a `Malformed` error.
    pub max_depth: usize,
    /// The radix of integers and ratios (CL's `*read-base*`), 2 to 36; 10 by default.
    pub read_base: u32,
    /// How unescaped letters of symbol names are converted (CL's `readtable-case`).
    pub case: ReadCase,
    /// CL's `*read-suppress*`: each datum is read as a `#-`-skipped form is (brackets,
    /// strings and comments balance; tokens and unknown dispatch macros are not
    /// interpreted) and reads as NIL.
    pub suppress: bool,
}

impl Default for ReadOptions {
    /// No file, the features `:mprof-lisp` and `:common-lisp`, `DEFAULT_MAX_DEPTH`, base 10.
    fn default() -> ReadOptions {
        ReadOptions {
            file: None,
            features: vec!["MPROF-LISP".to_string(), "COMMON-LISP".to_string()],
            max_depth: DEFAULT_MAX_DEPTH,
            read_base: 10,
            case: ReadCase::Upcase,
            suppress: false,
        }
    }
}

/// The reader-macro prefixes that wrap the next datum in a two-element list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prefix {
    Quote,
    Function,
    Backquote,
    Comma,
    CommaAt,
    CommaDot,
    /// `#n=`: the next datum, labelled n (read as `(MPROF-SYSTEM:%LABEL n datum)`).
    Label(u64),
    /// `#C`: the next datum is `(re im)`, read as a `DatumKind::Complex`.
    Complex,
    /// `#nA`: the next datum is an array's contents, read as a `DatumKind::Array`.
    Array(u32),
    /// `#.`: read-time evaluation of the next datum.
    ReadEval,
    /// `#P`: a pathname, read as `(MPROF-SYSTEM:%READ-EVAL
    /// (MPROF-SYSTEM:%PATHNAME-LITERAL "x"))`, which the evaluator resolves
    /// at read time into a pathname (the reader knows nothing of the heap).
    Pathname,
}

impl Prefix {
    fn text(self) -> &'static str {
        match self {
            Prefix::Quote => "'",
            Prefix::Function => "#'",
            Prefix::Backquote => "`",
            Prefix::Comma => ",",
            Prefix::CommaAt => ",@",
            Prefix::CommaDot => ",.",
            Prefix::Label(_) => "#n=",
            Prefix::Complex => "#C",
            Prefix::Array(_) => "#nA",
            Prefix::ReadEval => "#.",
            Prefix::Pathname => "#P",
        }
    }

    fn symbol(self) -> SymbolName {
        match self {
            Prefix::Quote => SymbolName::external(COMMON_LISP_PACKAGE, "QUOTE"),
            Prefix::Function => SymbolName::external(COMMON_LISP_PACKAGE, "FUNCTION"),
            Prefix::Backquote => SymbolName::external(SYSTEM_PACKAGE, "BACKQUOTE"),
            Prefix::Comma => SymbolName::external(SYSTEM_PACKAGE, "UNQUOTE"),
            // `,.` may destroy the spliced list in CL; splicing a copy is a valid
            // implementation of it.
            Prefix::CommaAt | Prefix::CommaDot => {
                SymbolName::external(SYSTEM_PACKAGE, "UNQUOTE-SPLICING")
            }
            Prefix::Label(_) => SymbolName::external(SYSTEM_PACKAGE, LABEL_SYMBOL),
            // Never a list head: `deliver` builds the complex datum itself.
            Prefix::Complex => SymbolName::external(COMMON_LISP_PACKAGE, "COMPLEX"),
            Prefix::Array(_) => SymbolName::external(COMMON_LISP_PACKAGE, "ARRAY"),
            Prefix::ReadEval => SymbolName::external(SYSTEM_PACKAGE, READ_EVAL_SYMBOL),
            Prefix::Pathname => SymbolName::external(SYSTEM_PACKAGE, PATHNAME_LITERAL_SYMBOL),
        }
    }

    fn is_comma(self) -> bool {
        matches!(self, Prefix::Comma | Prefix::CommaAt | Prefix::CommaDot)
    }
}

/// The state of the dotted tail of an open list.
enum Tail {
    None,
    /// A dot has been read; the next datum is the tail.
    AfterDot(Span),
    /// The tail has been read; only `)` may follow.
    Done(Box<Datum>),
}

/// One open construct waiting for datums.
enum Frame {
    /// The items read so far are `Reader::values[first..]`.
    List {
        open: Span,
        first: usize,
        tail: Tail,
    },
    Vector {
        open: Span,
        first: usize,
    },
    /// `changed_backquote_depth` records whether pushing this frame changed the backquote
    /// depth, so popping it restores the depth exactly.
    Prefix {
        prefix: Prefix,
        open: Span,
        changed_backquote_depth: bool,
    },
    /// `#+` or `#-` waiting for its feature expression.
    FeatureExpr {
        plus: bool,
        open: Span,
    },
    /// `#+expr` or `#-expr` waiting for the form it guards; `skip` means suppress it.
    FeatureForm {
        skip: bool,
        open: Span,
        expr_end: usize,
    },
}

/// Reads datums one after another from a source text.
///
/// ```
/// use mprof_reader::{ReadOptions, Reader};
/// let options = ReadOptions::default();
/// let mut reader = Reader::new("(+ 1 2) 'x", &options);
/// assert_eq!(reader.read().unwrap().unwrap().to_string(), "(+ 1 2)");
/// assert_eq!(reader.read().unwrap().unwrap().to_string(), "(COMMON-LISP:QUOTE X)");
/// assert_eq!(reader.read().unwrap(), None);
/// ```
pub struct Reader<'a> {
    src: &'a str,
    lexer: Lexer<'a, Token>,
    options: &'a ReadOptions,
    positions: Positions,
    /// Nesting of backquotes minus commas around the current position.
    backquote_depth: u32,
    /// Number of enclosing forms skipped by `#+`/`#-` (0: interpret tokens).
    suppress: u32,
    /// Frames that nest their datum (lists, vectors, prefixes) on the stack.
    depth: usize,
    /// Items of the open lists and vectors, innermost last. Sharing one stack means each
    /// finished list gets exactly one allocation of exactly its size.
    values: Vec<Datum>,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `src`.
    pub fn new(src: &'a str, options: &'a ReadOptions) -> Reader<'a> {
        Reader {
            src,
            lexer: Token::lexer(src),
            options,
            positions: Positions::new(),
            backquote_depth: 0,
            suppress: 0,
            depth: 0,
            values: Vec::new(),
        }
    }

    /// A reader positioned at byte `start` of `src`; spans stay relative to the whole of
    /// `src`. Fails (Malformed) when `start` is past the end or not on a character boundary.
    pub fn starting_at(
        src: &'a str,
        start: usize,
        options: &'a ReadOptions,
    ) -> Result<Reader<'a>, ReadError> {
        let mut reader = Reader::new(src, options);
        if !src.is_char_boundary(start) {
            let at = start.min(src.len());
            return Err(reader.error(
                ReadErrorKind::Malformed,
                at,
                format!("cannot start reading at byte {start}: it is not the start of a character in the {}-byte source", src.len()),
            ));
        }
        reader.lexer.bump(start);
        Ok(reader)
    }

    /// A reader positioned at `at.offset` of `src`, trusting `at.line`/`at.column` to be
    /// that offset's position (for instance a `Position` returned by [`Reader::position`]
    /// or `read_one_at`). Unlike `starting_at` it does not rescan the text before the
    /// offset, so reading a long text form by form stays linear.
    pub fn resume(
        src: &'a str,
        at: Position,
        options: &'a ReadOptions,
    ) -> Result<Reader<'a>, ReadError> {
        let mut reader = Reader::starting_at(src, at.offset, options)?;
        reader.positions = Positions::at(at);
        Ok(reader)
    }

    /// Where the reader stands: just after the last token consumed.
    pub fn position(&mut self) -> Position {
        let offset = self.offset();
        let (line, column) = self.positions.locate(self.src, offset);
        Position {
            offset,
            line,
            column,
        }
    }

    /// Byte offset just after the last token consumed.
    pub fn offset(&self) -> usize {
        self.lexer.span().end
    }

    /// Reads the next datum; `Ok(None)` when only whitespace, comments and forms skipped
    /// by `#+`/`#-` remain. After an error the reader stands just after the offending
    /// token, in the middle of a broken form: callers normally stop there (the `Iterator`
    /// impl does).
    pub fn read(&mut self) -> Result<Option<Datum>, ReadError> {
        let mut stack: Vec<Frame> = Vec::new();
        self.backquote_depth = 0;
        self.suppress = u32::from(self.options.suppress);
        self.depth = 0;
        let result = self.read_with(&mut stack);
        // Under *read-suppress* a whole datum reads as NIL.
        let result = match result {
            Ok(Some(d)) if self.options.suppress => Ok(Some(Datum::new(nil(), d.span))),
            other => other,
        };
        // After an error the stacks hold partial data (which drops without recursion).
        stack.clear();
        self.values.clear();
        result
    }

    fn read_with(&mut self, stack: &mut Vec<Frame>) -> Result<Option<Datum>, ReadError> {
        loop {
            let token = match self.lexer.next() {
                None => {
                    return match stack.last() {
                        None => Ok(None),
                        Some(frame) => Err(self.end_of_input_error(frame)),
                    };
                }
                Some(Err(error)) => {
                    if self.suppress > 0 && self.ignorable_under_suppression(error) {
                        let range = self.lexer.span();
                        if !self.src[range.clone()].ends_with('#') {
                            // A dispatch macro that takes an argument (`#S(...)`, `#.x`):
                            // the argument is read next, as the skipped form.
                            continue;
                        }
                        // `#n#` is a whole object by itself.
                        let span = self.span(range.start, range.end);
                        match self.deliver(stack, Datum::new(nil(), span))? {
                            Some(datum) => return Ok(Some(datum)),
                            None => continue,
                        }
                    }
                    if let Some((n, reference)) = self.label_syntax(error) {
                        let range = self.lexer.span();
                        if reference {
                            let span = self.span(range.start, range.end);
                            let head = Datum::new(
                                DatumKind::Symbol(SymbolName::external(SYSTEM_PACKAGE, LABEL_REF_SYMBOL)),
                                span,
                            );
                            let label = Datum::new(DatumKind::Integer(n as i64), span);
                            let datum = Datum::new(DatumKind::List(vec![head, label].into(), None), span);
                            match self.deliver(stack, datum)? {
                                Some(datum) => return Ok(Some(datum)),
                                None => continue,
                            }
                        }
                        self.enter_prefix(stack, Prefix::Label(n), range.start, range.end)?;
                        continue;
                    }
                    if let Some(prefix) = self.dispatch_prefix(error) {
                        let range = self.lexer.span();
                        self.enter_prefix(stack, prefix, range.start, range.end)?;
                        continue;
                    }
                    return Err(self.lex_error(error));
                }
                Some(Ok(token)) => token,
            };
            let range = self.lexer.span();
            let value = match token {
                Token::Open => {
                    let open = self.span(range.start, range.end);
                    let first = self.values.len();
                    self.enter(
                        stack,
                        Frame::List {
                            open,
                            first,
                            tail: Tail::None,
                        },
                    )?;
                    continue;
                }
                Token::HashParen => {
                    let open = self.span(range.start, range.end);
                    let first = self.values.len();
                    self.enter(stack, Frame::Vector { open, first })?;
                    continue;
                }
                Token::Close => match self.close(stack, range.start, range.end)? {
                    Some(datum) => datum,
                    None => continue,
                },
                Token::Quote => {
                    self.enter_prefix(stack, Prefix::Quote, range.start, range.end)?;
                    continue;
                }
                Token::HashQuote => {
                    self.enter_prefix(stack, Prefix::Function, range.start, range.end)?;
                    continue;
                }
                Token::Backquote => {
                    self.enter_prefix(stack, Prefix::Backquote, range.start, range.end)?;
                    continue;
                }
                Token::Comma => {
                    self.enter_prefix(stack, Prefix::Comma, range.start, range.end)?;
                    continue;
                }
                Token::CommaAt => {
                    self.enter_prefix(stack, Prefix::CommaAt, range.start, range.end)?;
                    continue;
                }
                Token::CommaDot => {
                    self.enter_prefix(stack, Prefix::CommaDot, range.start, range.end)?;
                    continue;
                }
                Token::HashPlus | Token::HashMinus => {
                    let open = self.span(range.start, range.end);
                    stack.push(Frame::FeatureExpr {
                        plus: token == Token::HashPlus,
                        open,
                    });
                    continue;
                }
                Token::HashArray => {
                    let text = &self.src[range.start + 1..range.end - 1];
                    match text.parse::<u32>() {
                        Ok(rank) if rank <= MAX_ARRAY_RANK => {
                            self.enter_prefix(stack, Prefix::Array(rank), range.start, range.end)?;
                        }
                        _ if self.suppress > 0 => {
                            self.enter_prefix(stack, Prefix::Array(0), range.start, range.end)?;
                        }
                        _ => {
                            return Err(self.error(
                                ReadErrorKind::Malformed,
                                range.start,
                                format!("#{text}A: an array's rank may be at most {MAX_ARRAY_RANK}"),
                            ));
                        }
                    }
                    continue;
                }
                Token::HashC => {
                    self.enter_prefix(stack, Prefix::Complex, range.start, range.end)?;
                    continue;
                }
                Token::BitVector => {
                    let span = self.span(range.start, range.end);
                    if self.suppress > 0 {
                        Datum::new(nil(), span)
                    } else {
                        match parse_bit_vector(&self.src[range.clone()]) {
                            Ok(bits) => Datum::new(DatumKind::BitVector(bits), span),
                            Err(message) => {
                                return Err(self.error(ReadErrorKind::Malformed, range.start, message));
                            }
                        }
                    }
                }
                // The callback skips block comments; logos never emits this variant.
                Token::BlockComment | Token::HashUnknown => continue,
                Token::Atom(text) => {
                    let span = self.span(range.start, range.end);
                    let slice = &self.src[range.clone()];
                    if self.suppress > 0 {
                        Datum::new(nil(), span)
                    } else {
                        match classify_atom(slice, text.escaped, self.options.read_base, self.options.case) {
                            Ok(Classified::Datum(kind)) => Datum::new(kind, span),
                            Ok(Classified::Dot) => {
                                self.dot(stack, span)?;
                                continue;
                            }
                            Err(message) => {
                                return Err(self.error(
                                    ReadErrorKind::Malformed,
                                    range.start,
                                    message,
                                ));
                            }
                        }
                    }
                }
                Token::Str(escaped) => {
                    let span = self.span(range.start, range.end);
                    let body = &self.src[range.start + 1..range.end - 1];
                    Datum::new(DatumKind::String(unescape(body, escaped)), span)
                }
                Token::Char => {
                    let span = self.span(range.start, range.end);
                    let name = &self.src[range.start + 2..range.end];
                    match char_from_name(name) {
                        Ok(c) => Datum::new(DatumKind::Char(c), span),
                        Err(_) if self.suppress > 0 => Datum::new(nil(), span),
                        Err(message) => {
                            return Err(self.error(ReadErrorKind::Malformed, range.start, message));
                        }
                    }
                }
                Token::Uninterned(text) => {
                    let span = self.span(range.start, range.end);
                    let body = &self.src[range.start + text.body_start as usize..range.end];
                    match classify_uninterned(body, self.options.case) {
                        Ok(kind) => Datum::new(kind, span),
                        Err(_) if self.suppress > 0 => Datum::new(nil(), span),
                        Err(message) => {
                            return Err(self.error(ReadErrorKind::Malformed, range.start, message));
                        }
                    }
                }
                Token::Radix(radix) => {
                    let span = self.span(range.start, range.end);
                    let split = range.start + radix.text.body_start as usize;
                    let (prefix, body) =
                        (&self.src[range.start..split], &self.src[split..range.end]);
                    match classify_radix(prefix, radix.radix, body, radix.text.escaped) {
                        Ok(kind) => Datum::new(kind, span),
                        Err(_) if self.suppress > 0 => Datum::new(nil(), span),
                        Err(_) if body.is_empty() && range.end == self.src.len() => {
                            return Err(self.error(
                                ReadErrorKind::Incomplete,
                                range.end,
                                format!(
                                    "end of input after {prefix}: expected a number in radix {}",
                                    radix.radix
                                ),
                            ));
                        }
                        Err(message) => {
                            return Err(self.error(ReadErrorKind::Malformed, range.start, message));
                        }
                    }
                }
            };
            if let Some(datum) = self.deliver(stack, value)? {
                return Ok(Some(datum));
            }
        }
    }

    /// Hands a finished datum to the innermost open frame, closing prefixes and
    /// conditionals it completes. Returns the datum when no frame is left to take it.
    fn deliver(
        &mut self,
        stack: &mut Vec<Frame>,
        mut value: Datum,
    ) -> Result<Option<Datum>, ReadError> {
        loop {
            let suppressed = self.suppress > 0;
            match stack.last_mut() {
                None => return Ok(Some(value)),
                Some(Frame::List { tail, open, .. }) => {
                    if suppressed {
                        return Ok(None);
                    }
                    match tail {
                        Tail::None => self.values.push(value),
                        Tail::AfterDot(_) => *tail = Tail::Done(Box::new(value)),
                        Tail::Done(_) => {
                            let open = *open;
                            return Err(self.error(
                                ReadErrorKind::Malformed,
                                value.span.start,
                                format!(
                                    "expected a closing ')' after the element that follows the dot in the list opened at {}:{}: \
                                     a dot may only appear before the last element of a list",
                                    open.line, open.column
                                ),
                            ));
                        }
                    }
                    return Ok(None);
                }
                Some(Frame::Vector { .. }) => {
                    if !suppressed {
                        self.values.push(value);
                    }
                    return Ok(None);
                }
                Some(Frame::Prefix {
                    prefix,
                    open,
                    changed_backquote_depth,
                }) => {
                    let (prefix, open, changed) = (*prefix, *open, *changed_backquote_depth);
                    stack.pop();
                    self.depth -= 1;
                    if changed {
                        if prefix == Prefix::Backquote {
                            self.backquote_depth -= 1;
                        } else {
                            self.backquote_depth += 1;
                        }
                    }
                    if !suppressed && prefix == Prefix::Complex {
                        value = complex_datum(value, open).map_err(|message| {
                            self.error(ReadErrorKind::Malformed, open.start, message)
                        })?;
                    } else if let (false, Prefix::Array(rank)) = (suppressed, prefix) {
                        value = array_datum(rank as usize, value, open).map_err(|message| {
                            self.error(ReadErrorKind::Malformed, open.start, message)
                        })?;
                    } else if !suppressed && prefix == Prefix::Pathname {
                        if !matches!(value.kind, DatumKind::String(_)) {
                            return Err(self.error(
                                ReadErrorKind::Malformed,
                                value.span.start,
                                "#P must be followed by a string (a namestring such as #P\"/tmp/x.lisp\")".to_string(),
                            ));
                        }
                        // (%read-eval (%pathname-literal "x")): the evaluator makes
                        // the pathname at read time, whatever *read-eval* says.
                        let span = Span { end: value.span.end, ..open };
                        let head_span = Span { end: open.start + 2, ..open };
                        let literal = Datum::new(
                            DatumKind::List(
                                vec![Datum::new(DatumKind::Symbol(prefix.symbol()), head_span), value].into(),
                                None,
                            ),
                            span,
                        );
                        let eval = Datum::new(DatumKind::Symbol(Prefix::ReadEval.symbol()), head_span);
                        value = Datum::new(DatumKind::List(vec![eval, literal].into(), None), span);
                    } else if !suppressed {
                        let head_span = match prefix {
                            Prefix::Label(_) => open,
                            _ => Span {
                                end: open.start + prefix.text().len(),
                                ..open
                            },
                        };
                        let span = Span {
                            end: value.span.end,
                            ..open
                        };
                        let head = Datum::new(DatumKind::Symbol(prefix.symbol()), head_span);
                        let items = match prefix {
                            Prefix::Label(n) => {
                                let label = Datum::new(DatumKind::Integer(n as i64), head_span);
                                vec![head, label, value]
                            }
                            _ => vec![head, value],
                        };
                        value = Datum::new(DatumKind::List(items.into(), None), span);
                    }
                }
                Some(Frame::FeatureExpr { plus, open }) => {
                    let (plus, open) = (*plus, *open);
                    stack.pop();
                    let skip = if suppressed {
                        true
                    } else {
                        let present = self.feature_present(&value)?;
                        present != plus
                    };
                    if skip {
                        self.suppress += 1;
                    }
                    stack.push(Frame::FeatureForm {
                        skip,
                        open,
                        expr_end: value.span.end,
                    });
                    return Ok(None);
                }
                Some(Frame::FeatureForm { skip, .. }) => {
                    let skip = *skip;
                    stack.pop();
                    if skip {
                        self.suppress -= 1;
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Pushes a frame that nests its datum, enforcing `max_depth`.
    fn enter(&mut self, stack: &mut Vec<Frame>, frame: Frame) -> Result<(), ReadError> {
        self.depth += 1;
        if self.depth > self.options.max_depth && self.suppress == 0 {
            let start = match &frame {
                Frame::List { open, .. }
                | Frame::Vector { open, .. }
                | Frame::Prefix { open, .. } => open.start,
                Frame::FeatureExpr { open, .. } | Frame::FeatureForm { open, .. } => open.start,
            };
            return Err(self.error(
                ReadErrorKind::Malformed,
                start,
                format!(
                    "forms nested more than {} levels deep (the reader's limit, ReadOptions::max_depth)",
                    self.options.max_depth
                ),
            ));
        }
        stack.push(frame);
        Ok(())
    }

    fn enter_prefix(
        &mut self,
        stack: &mut Vec<Frame>,
        prefix: Prefix,
        start: usize,
        end: usize,
    ) -> Result<(), ReadError> {
        let mut changed_backquote_depth = false;
        if self.suppress == 0 {
            if prefix == Prefix::Backquote {
                self.backquote_depth += 1;
                changed_backquote_depth = true;
            } else if prefix.is_comma() {
                if self.backquote_depth == 0 {
                    return Err(self.error(
                        ReadErrorKind::Malformed,
                        start,
                        format!(
                            "{} outside a backquote: commas may only appear inside a backquoted form such as `(a ,b)",
                            prefix.text()
                        ),
                    ));
                }
                if prefix != Prefix::Comma {
                    match stack.last() {
                        Some(Frame::Prefix {
                            prefix: Prefix::Backquote,
                            ..
                        }) => {
                            return Err(self.error(
                                ReadErrorKind::Malformed,
                                start,
                                format!(
                                    "`{} is not allowed: {} splices into an enclosing list, so it must appear inside a list within the backquote",
                                    prefix.text(),
                                    prefix.text()
                                ),
                            ));
                        }
                        Some(Frame::List {
                            tail: Tail::AfterDot(_),
                            ..
                        }) => {
                            return Err(self.error(
                                ReadErrorKind::Malformed,
                                start,
                                format!(
                                    "{} is not allowed right after a dot: write (a . ,b) or (a {}b)",
                                    prefix.text(),
                                    prefix.text()
                                ),
                            ));
                        }
                        _ => {}
                    }
                }
                self.backquote_depth -= 1;
                changed_backquote_depth = true;
            }
        }
        let open = self.span(start, end);
        self.enter(
            stack,
            Frame::Prefix {
                prefix,
                open,
                changed_backquote_depth,
            },
        )
    }

    /// Handles `)`: closes the innermost list or vector, or explains what was expected.
    fn close(
        &mut self,
        stack: &mut Vec<Frame>,
        start: usize,
        end: usize,
    ) -> Result<Option<Datum>, ReadError> {
        let suppressed = self.suppress > 0;
        let message = match stack.last() {
            None => "unexpected ')': there is no open list to close".to_string(),
            Some(Frame::List {
                tail: Tail::AfterDot(dot),
                ..
            }) if !suppressed => format!(
                "expected a form after the dot at {}:{}, found ')'",
                dot.line, dot.column
            ),
            Some(Frame::List { .. } | Frame::Vector { .. }) => {
                self.depth -= 1;
                let span = match stack.pop() {
                    Some(Frame::List { open, first, tail }) => {
                        let span = Span { end, ..open };
                        let items = self.values.split_off(first);
                        let tail = match tail {
                            Tail::Done(t) => Some(t),
                            _ => None,
                        };
                        Datum::new(list_with_tail(items, tail), span)
                    }
                    Some(Frame::Vector { open, first }) => {
                        let items = self.values.split_off(first);
                        Datum::new(DatumKind::Vector(items.into()), Span { end, ..open })
                    }
                    // Unreachable: the match arm guarantees a list or vector on top.
                    _ => return Ok(None),
                };
                return Ok(Some(span));
            }
            Some(Frame::Prefix { prefix, open, .. }) => format!(
                "expected a form after {} at {}:{}, found ')'",
                prefix.text(),
                open.line,
                open.column
            ),
            Some(Frame::FeatureExpr { plus, open }) => format!(
                "expected a feature expression after {} at {}:{}, found ')'",
                if *plus { "#+" } else { "#-" },
                open.line,
                open.column
            ),
            Some(Frame::FeatureForm { open, expr_end, .. }) => format!(
                "expected a form after {} at {}:{}, found ')'",
                shorten(&self.src[open.start..*expr_end]),
                open.line,
                open.column
            ),
        };
        Err(self.error(ReadErrorKind::Malformed, start, message))
    }

    /// Handles the lone `.` token of dotted-pair notation.
    fn dot(&mut self, stack: &mut [Frame], span: Span) -> Result<(), ReadError> {
        let message = match stack.last_mut() {
            Some(Frame::List { first, tail, open }) => match tail {
                Tail::None if self.values.len() > *first => {
                    *tail = Tail::AfterDot(span);
                    return Ok(());
                }
                Tail::None => format!(
                    "misplaced dot: nothing precedes it in the list opened at {}:{} \
                     (a dot may only appear before the last element of a list, as in (a . b))",
                    open.line, open.column
                ),
                _ => "misplaced dot: a dot may only appear before the last element of a list"
                    .to_string(),
            },
            _ => "a dot is only allowed inside a list, before its last element, as in (a . b)"
                .to_string(),
        };
        Err(self.error(ReadErrorKind::Malformed, span.start, message))
    }

    /// Evaluates a feature expression: a symbol (present in `features`?), or
    /// `(:and ...)`, `(:or ...)`, `(:not x)`. Symbols are compared by name, as CL reads
    /// them in the keyword package.
    fn feature_present(&self, expr: &Datum) -> Result<bool, ReadError> {
        self.feature_present_at(expr, 0)
    }

    fn feature_present_at(&self, expr: &Datum, level: usize) -> Result<bool, ReadError> {
        // Feature expressions are tiny in practice; bounding their nesting keeps this
        // (the reader's only) recursion shallow.
        const MAX_FEATURE_NESTING: usize = 64;
        let malformed = |message: String| {
            let (line, column) = (expr.span.line, expr.span.column);
            ReadError {
                kind: ReadErrorKind::Malformed,
                message,
                file: self.options.file.clone(),
                line,
                column,
                offset: expr.span.start,
            }
        };
        if level > MAX_FEATURE_NESTING {
            return Err(malformed(format!(
                "feature expression nested more than {MAX_FEATURE_NESTING} levels deep"
            )));
        }
        match &expr.kind {
            DatumKind::Symbol(sym) => Ok(match sym.package {
                PackagePrefix::None | PackagePrefix::Keyword => self
                    .options
                    .features
                    .iter()
                    .any(|f| f.eq_ignore_ascii_case(&sym.name)),
                _ => false,
            }),
            // `()` is NIL, which is never a feature.
            DatumKind::List(items, None) if items.is_empty() => Ok(false),
            DatumKind::List(items, None) => {
                let operator = match items[0].as_symbol() {
                    Some(s)
                        if matches!(s.package, PackagePrefix::None | PackagePrefix::Keyword) =>
                    {
                        s.name.as_str()
                    }
                    _ => "",
                };
                let operands = &items[1..];
                match operator {
                    "AND" => {
                        for operand in operands {
                            if !self.feature_present_at(operand, level + 1)? {
                                return Ok(false);
                            }
                        }
                        Ok(true)
                    }
                    "OR" => {
                        for operand in operands {
                            if self.feature_present_at(operand, level + 1)? {
                                return Ok(true);
                            }
                        }
                        Ok(false)
                    }
                    "NOT" => match operands {
                        [operand] => Ok(!self.feature_present_at(operand, level + 1)?),
                        _ => Err(malformed(format!(
                            "(:not ...) in a feature expression takes exactly one feature, found {}",
                            operands.len()
                        ))),
                    },
                    _ => Err(malformed(format!(
                        "unknown feature operator {}: expected :and, :or or :not",
                        shorten(&items[0].to_string())
                    ))),
                }
            }
            _ => Err(malformed(format!(
                "expected a feature expression (a symbol, or a list starting with :and, :or or :not), found {}",
                shorten(&self.src[expr.span.start..expr.span.end])
            ))),
        }
    }

    /// `#n=` (false) or `#n#` (true) with its label, when the lexer's unknown
    /// dispatch is one of those.
    fn label_syntax(&self, error: LexError) -> Option<(u64, bool)> {
        if error != LexError::UnknownDispatch {
            return None;
        }
        let text = &self.src[self.lexer.span()];
        let body = text.strip_prefix('#')?;
        let (digits, reference) = match body.strip_suffix('=') {
            Some(d) => (d, false),
            None => (body.strip_suffix('#')?, true),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok().map(|n| (n, reference))
    }

    /// The dispatch macros read as a prefix of the next datum: `#.`, `#nA`, `#P`
    /// (the lexer reports them as unknown dispatches, as it does `#n=`).
    fn dispatch_prefix(&self, error: LexError) -> Option<Prefix> {
        if error != LexError::UnknownDispatch {
            return None;
        }
        let body = self.src[self.lexer.span()].strip_prefix('#')?;
        // The dispatch character may be any character (several bytes long).
        let letter = body.chars().next_back()?;
        let digits = &body[..body.len() - letter.len_utf8()];
        match letter {
            '.' if digits.is_empty() => Some(Prefix::ReadEval),
            'P' | 'p' if digits.is_empty() => Some(Prefix::Pathname),
            _ => None,
        }
    }

    /// Lexer errors that `*read-suppress*` tolerates: dispatch macros this reader does not
    /// implement (their argument is then read and skipped as an ordinary form).
    /// (`#<` stays an error, as in CL; so do `#` before whitespace or `)`.)
    fn ignorable_under_suppression(&self, error: LexError) -> bool {
        let range = self.lexer.span();
        error == LexError::UnknownDispatch && range.len() > 1 && !self.src[range].ends_with('<')
    }

    fn lex_error(&mut self, error: LexError) -> ReadError {
        let range = self.lexer.span();
        let (line, column) = self.positions.locate(self.src, range.start);
        let end = self.src.len();
        let incomplete = |reader: &mut Reader, message: String| {
            reader.error(ReadErrorKind::Incomplete, end, message)
        };
        match error {
            LexError::UnterminatedString => incomplete(
                self,
                format!(
                    "end of input inside a string opened at {line}:{column}: expected a closing '\"'"
                ),
            ),
            LexError::UnterminatedComment => incomplete(
                self,
                format!(
                    "end of input inside a #| comment opened at {line}:{column}: expected a closing '|#'"
                ),
            ),
            LexError::UnterminatedMultipleEscape => incomplete(
                self,
                format!(
                    "end of input inside |...| in the symbol starting at {line}:{column}: expected a closing '|'"
                ),
            ),
            LexError::EscapeAtEnd => incomplete(
                self,
                "end of input after '\\': expected the character it escapes".to_string(),
            ),
            LexError::HashAtEnd => incomplete(
                self,
                "end of input after '#': expected a dispatch character such as ( ' \\ : + - x b o"
                    .to_string(),
            ),
            LexError::CharAtEnd => incomplete(
                self,
                "end of input after #\\: expected a character or character name".to_string(),
            ),
            LexError::UnknownDispatch => {
                let text = &self.src[range.clone()];
                let message = match text.as_bytes().get(1..) {
                    Some([]) | None => {
                        let next = self.src[range.end..].chars().next().unwrap_or(' ');
                        format!("'#' followed by {} is not valid syntax: expected a dispatch character such as ( ' \\ : + - x b o", describe_char(next))
                    }
                    Some(rest) => match rest.last().map(|b| b.to_ascii_uppercase()) {
                        Some(b'S') => "structure literals #S(...) are not supported".to_string(),
                        Some(b'A') => "#A needs the array's rank, as in #2A((1 2) (3 4))".to_string(),
                        Some(b'=' | b'#') => format!("{text}: the labels #n= and #n# are not supported"),
                        Some(b'<') => "#< starts an unreadable object (printed as #<...>): it cannot be read back".to_string(),
                        _ => format!("unknown dispatch macro {text}"),
                    },
                };
                self.error(ReadErrorKind::Malformed, range.start, message)
            }
            LexError::Unexpected => {
                let c = self.src[range.start..].chars().next().unwrap_or(' ');
                self.error(
                    ReadErrorKind::Malformed,
                    range.start,
                    format!("unexpected {}", describe_char(c)),
                )
            }
        }
    }

    /// The error for input that ends while `frame` is still open.
    fn end_of_input_error(&mut self, frame: &Frame) -> ReadError {
        let message = match frame {
            Frame::List {
                open,
                tail: Tail::AfterDot(dot),
                ..
            } => format!(
                "end of input: expected a form after the dot at {}:{} and a closing ')' for the list opened at {}:{}",
                dot.line, dot.column, open.line, open.column
            ),
            Frame::List { open, .. } => format!(
                "end of input: expected a closing ')' for the list opened at {}:{}",
                open.line, open.column
            ),
            Frame::Vector { open, .. } => format!(
                "end of input: expected a closing ')' for the vector opened at {}:{}",
                open.line, open.column
            ),
            Frame::Prefix { prefix, open, .. } => format!(
                "end of input: expected a form after {} at {}:{}",
                prefix.text(),
                open.line,
                open.column
            ),
            Frame::FeatureExpr { plus, open } => format!(
                "end of input: expected a feature expression after {} at {}:{}",
                if *plus { "#+" } else { "#-" },
                open.line,
                open.column
            ),
            Frame::FeatureForm { open, expr_end, .. } => format!(
                "end of input: expected a form after {} at {}:{}",
                shorten(&self.src[open.start..*expr_end]),
                open.line,
                open.column
            ),
        };
        self.error(ReadErrorKind::Incomplete, self.src.len(), message)
    }

    fn span(&mut self, start: usize, end: usize) -> Span {
        let (line, column) = self.positions.locate(self.src, start);
        Span {
            start,
            end,
            line,
            column,
        }
    }

    fn error(&mut self, kind: ReadErrorKind, offset: usize, message: String) -> ReadError {
        let (line, column) = self.positions.locate(self.src, offset);
        ReadError {
            kind,
            message,
            file: self.options.file.clone(),
            line,
            column,
            offset,
        }
    }
}

impl Iterator for Reader<'_> {
    type Item = Result<Datum, ReadError>;

    /// Yields datums until the end of the input or the first error (after which it
    /// yields nothing: the reader's position inside a broken form is meaningless).
    fn next(&mut self) -> Option<Self::Item> {
        match self.read() {
            Ok(Some(datum)) => Some(Ok(datum)),
            Ok(None) => None,
            Err(error) => {
                // Park the lexer at the end so iteration stops.
                let rest = self.src.len() - self.lexer.span().end;
                self.lexer.bump(rest);
                Some(Err(error))
            }
        }
    }
}

/// Builds a list, splicing a proper-list tail as CL does: `(a . (b c))` is `(a b c)`.
fn list_with_tail(mut items: Vec<Datum>, tail: Option<Box<Datum>>) -> DatumKind {
    match tail.map(|t| *t) {
        None => DatumKind::List(items.into(), None),
        Some(Datum {
            kind: DatumKind::List(more, more_tail),
            ..
        }) => {
            items.extend(more);
            DatumKind::List(items.into(), more_tail)
        }
        Some(tail) => DatumKind::List(items.into(), Some(Box::new(tail))),
    }
}

/// The datum a suppressed token reads as (CL returns NIL under `*read-suppress*`).
fn nil() -> DatumKind {
    DatumKind::List(Items::new(), None)
}

/// The contents of a string literal with `\x` replaced by `x`.
fn unescape(body: &str, escaped: bool) -> String {
    if !escaped {
        return body.to_string();
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

fn describe_char(c: char) -> String {
    match crate::datum::char_name(c) {
        Some(name) => format!("#\\{name}"),
        None if c.is_control() => format!("the character U+{:04X}", c as u32),
        None => format!("'{c}'"),
    }
}

#[cfg(test)]
mod tests;
