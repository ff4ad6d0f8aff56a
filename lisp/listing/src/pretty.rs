//! A source-preserving pretty printer: re-lays out a program's text in classic Lisp style
//! for listings (the profiler prints execution counts beside these lines).
//!
//! It re-indents and re-breaks lists but never re-spells anything: every atom is printed
//! as the slice of the source it was read from (case, number syntax, string escapes,
//! package prefixes all stay as written), reader-macro forms keep their prefix (`'x`, `#'f`,
//! `` `(a ,b ,@c) ``), and comments and forms skipped by `#+`/`#-` are kept verbatim as
//! [`LineKind::Text`] lines.
//!
//! Invariants:
//! - meaning is preserved: reading the printed lines (see [`render_blocks`]) gives the same
//!   datums as reading the source. Text is only ever moved at whitespace that lies outside
//!   tokens, and a line that ends in a `;` comment is never followed by code on that line;
//! - a multi-line atom (a string with newlines) is printed exactly: its continuation lines
//!   have indent 0 and no `first_offset`, because indenting them would change the string;
//! - no input panics: read errors are returned, and lists nested deeper than
//!   [`MAX_LAYOUT_DEPTH`] are printed as their verbatim source text, which bounds the
//!   printer's recursion whatever `ReadOptions::max_depth` allows;
//! - the cost is linear: each list's one-line width is computed once, bottom-up, and each
//!   node is laid out once (a list that does not fit is broken, never retried).
//!
//! Tests: `tests/pretty.rs` (layout snapshots, `first_offset` checks, and the round trip
//! over every example program in the repository).


use mprof_reader::{Datum, DatumKind, ReadError, ReadOptions, Reader, Span, syntax_noise};

/// Lists nested deeper than this are printed as their source text, unchanged. Far beyond
/// hand-written code; keeps the recursive layout within a small thread stack (a few
/// hundred bytes per level).
pub const MAX_LAYOUT_DEPTH: usize = 256;

/// Layout parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrettyOptions {
    /// Text columns available (the listing's margin is not included).
    pub width: usize,
    /// Indentation of body forms relative to their list's open parenthesis.
    pub indent: usize,
}

impl Default for PrettyOptions {
    /// 72 columns, body indent 2.
    fn default() -> PrettyOptions {
        PrettyOptions {
            width: 72,
            indent: 2,
        }
    }
}

/// What a printed line holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// Program text laid out by the printer (possibly ending in a `;` comment).
    Code,
    /// Verbatim text from the source: comments, `#+`/`#-` skipped forms and their feature
    /// expressions. Trimmed of surrounding whitespace.
    Text,
    /// An empty line between top-level forms.
    Blank,
}

/// One output line: `indent` spaces, then `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrettyLine {
    /// Leading spaces (not included in `text`).
    pub indent: usize,
    pub text: String,
    pub kind: LineKind,
    /// `span.start` of the first datum that begins on this line; for a dotted tail placed
    /// at the start of a line (`. tail`) that is the tail. `None` for Text and Blank lines,
    /// for continuation lines of a multi-line string, and for a line holding only closing
    /// parentheses (printed only when the line before ends in a comment).
    pub first_offset: Option<usize>,
}

/// A piece of the printed program.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A top-level form. `definition` is `(head, name)` for a form whose head symbol starts
    /// with `DEF` and whose second item is a symbol, e.g. `("DEFUN", "FIB")`: the names
    /// as read (upcased unless escaped), without package prefix.
    Form {
        span: Span,
        definition: Option<(String, String)>,
        lines: Vec<PrettyLine>,
    },
    /// Comments, blank lines and other text between top-level forms, verbatim (trailing
    /// whitespace trimmed, leading spaces moved to `indent`, runs of blank lines collapsed
    /// to one). A `;` comment on the line where a form ends is appended to that form's last
    /// line instead.
    Text { lines: Vec<PrettyLine> },
}

/// Where the layout must break lines whatever the width: the listing uses it to give
/// forms run a different number of times lines of their own. A closure
/// `Fn(start, end) -> bool` is a `Breaks` answering `must_break` only.
pub trait Breaks {
    /// True forbids printing the parenthesized list at (start, end) on one line.
    fn must_break(&self, start: usize, end: usize) -> bool;
    /// True puts the first argument of the list starting at `list_start` (spanning
    /// `first_start..first_end`) on a line of its own rather than after the operator.
    fn first_apart(&self, list_start: usize, first_start: usize, first_end: usize) -> bool {
        let _ = (list_start, first_start, first_end);
        false
    }
}

impl<F: Fn(usize, usize) -> bool + ?Sized> Breaks for F {
    fn must_break(&self, start: usize, end: usize) -> bool {
        self(start, end)
    }
}

/// Pretty-prints every top-level form of `src`. `breaks` is asked for each
/// parenthesized list (its span's byte offsets) whether it must break (see [`Breaks`]).
///
/// ```
/// use mprof_reader::ReadOptions;
/// use mprof_listing::pretty::{PrettyOptions, pretty_source, render_blocks};
/// let src = "(defun fact (n) ; factorial\n (if (< n 2) 1 (* n (fact (1- n)))))";
/// let if_start = src.find("(if").unwrap();
/// let must_break = |start: usize, _end: usize| start == if_start;
/// let blocks =
///     pretty_source(src, &PrettyOptions::default(), &ReadOptions::default(), &must_break).unwrap();
/// assert_eq!(
///     render_blocks(&blocks),
///     "(defun fact (n)  ; factorial\n  (if (< n 2)\n      1\n      (* n (fact (1- n)))))\n"
/// );
/// ```
pub fn pretty_source<B: Breaks + ?Sized>(
    src: &str,
    options: &PrettyOptions,
    read: &ReadOptions,
    breaks: &B,
) -> Result<Vec<Block>, ReadError> {
    let builder = Builder { src, breaks };
    let mut reader = Reader::new(src, read);
    let mut blocks = Vec::new();
    let mut previous_end: Option<usize> = None;
    while let Some(datum) = reader.read()? {
        top_level_gap(src, previous_end, datum.span.start, false, &mut blocks);
        let node = builder.build(&datum, 0, false);
        let definition = definition_of(&datum);
        let span = datum.span;
        let mut printer = Printer::new(options);
        printer.start_line(0, Some(node.start));
        printer.render(&node, 0, Role::Code);
        blocks.push(Block::Form {
            span,
            definition,
            lines: printer.lines,
        });
        previous_end = Some(span.end);
    }
    top_level_gap(src, previous_end, src.len(), true, &mut blocks);
    Ok(blocks)
}

/// The printed text of `blocks`: each line's indent as spaces, then its text, each line
/// ending in a newline. Reading it gives the same datums as the source.
pub fn render_blocks(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        let lines = match block {
            Block::Form { lines, .. } | Block::Text { lines } => lines,
        };
        for line in lines {
            if !line.text.is_empty() {
                out.extend(std::iter::repeat_n(' ', line.indent));
                out.push_str(&line.text);
            }
            out.push('\n');
        }
    }
    out
}

/// `(head, name)` of a definition form, see [`Block::Form`].
fn definition_of(datum: &Datum) -> Option<(String, String)> {
    let DatumKind::List(items, _) = &datum.kind else {
        return None;
    };
    let head = items.first()?.as_symbol()?;
    let name = items.get(1)?.as_symbol()?;
    head.name
        .starts_with("DEF")
        .then(|| (head.name.clone(), name.name.clone()))
}

/// CL whitespace[2]: what may separate tokens.
fn is_lisp_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')
}

fn trim_lisp(text: &str) -> &str {
    text.trim_matches(is_lisp_space)
}

/// Appends the lines of the text between top-level forms to `blocks`: a `;` comment on the
/// previous form's last line is appended to it, the rest becomes a `Block::Text`.
fn top_level_gap(
    src: &str,
    previous_end: Option<usize>,
    to: usize,
    at_end: bool,
    blocks: &mut Vec<Block>,
) {
    let from = previous_end.unwrap_or(0);
    let Some(text) = src.get(from..to) else {
        return;
    };
    let mut segments: Vec<&str> = text.split('\n').collect();
    let mut lines: Vec<PrettyLine> = Vec::new();
    if previous_end.is_some() && !segments.is_empty() {
        // The rest of the line the previous form ends on.
        let rest = trim_lisp(segments.remove(0));
        if rest.starts_with(';') {
            if let Some(Block::Form { lines: form, .. }) = blocks.last_mut()
                && let Some(last) = form.last_mut()
            {
                last.text.push_str("  ");
                last.text.push_str(rest);
            }
        } else if !rest.is_empty() {
            lines.push(text_line(0, rest));
        }
    }
    if !at_end && !segments.is_empty() {
        // The start of the line the next form begins on.
        let before = segments.pop().unwrap_or_default();
        if !trim_lisp(before).is_empty() {
            segments.push(before);
        }
    }
    let mut middle = Vec::new();
    for segment in segments {
        let trimmed = segment.trim_end_matches(is_lisp_space);
        let content = trimmed.trim_start_matches(' ');
        if content.is_empty() {
            if middle
                .last()
                .is_some_and(|l: &PrettyLine| l.kind != LineKind::Blank)
                || (middle.is_empty() && (!lines.is_empty() || previous_end.is_some()))
            {
                middle.push(PrettyLine {
                    indent: 0,
                    text: String::new(),
                    kind: LineKind::Blank,
                    first_offset: None,
                });
            }
        } else {
            middle.push(text_line(trimmed.len() - content.len(), content));
        }
    }
    lines.extend(middle);
    if at_end {
        while lines.last().is_some_and(|l| l.kind == LineKind::Blank) {
            lines.pop();
        }
    }
    if !lines.is_empty() {
        blocks.push(Block::Text { lines });
    }
}

fn text_line(indent: usize, text: &str) -> PrettyLine {
    PrettyLine {
        indent,
        text: text.to_string(),
        kind: LineKind::Text,
        first_offset: None,
    }
}

/// Non-datum text between two neighbours inside a form: comments and `#+`/`#-` text,
/// without the syntax noise of dotted-pair notation (see [`syntax_noise`]).
#[derive(Debug, Default)]
struct Gap {
    /// A `;` comment on the line where the previous item ends.
    end_of_line: Option<String>,
    /// Other non-blank lines, trimmed.
    lines: Vec<String>,
}

impl Gap {
    /// Parses `src[from..to]`; `after_item` says whether its first line continues the line
    /// of a previous item (and so may hold an end-of-line comment).
    fn parse(src: &str, from: usize, to: usize, after_item: bool) -> Gap {
        let mut gap = Gap::default();
        let Some(text) = src.get(from..to) else {
            return gap;
        };
        if trim_lisp(text).is_empty() {
            return gap;
        }
        // Blank out the noise; every removed token is ASCII, so offsets and lines stay.
        let mut cleaned = text.as_bytes().to_vec();
        for range in syntax_noise(text) {
            cleaned[range].fill(b' ');
        }
        let cleaned = String::from_utf8(cleaned).unwrap_or_else(|_| text.to_string());
        let mut segments = cleaned.split('\n');
        if after_item && let Some(first) = segments.next() {
            let first = trim_lisp(first);
            if first.starts_with(';') {
                gap.end_of_line = Some(first.to_string());
            } else if !first.is_empty() {
                gap.lines.push(first.to_string());
            }
        }
        gap.lines.extend(
            segments
                .map(trim_lisp)
                .filter(|segment| !segment.is_empty())
                .map(str::to_string),
        );
        gap
    }

    fn is_empty(&self) -> bool {
        self.end_of_line.is_none() && self.lines.is_empty()
    }
}

/// The layout tree: the source slices of a datum's atoms and prefixes, its gaps, and its
/// one-line width.
struct Node<'s> {
    start: usize,
    /// Width in characters when printed on one line; `None` when it may not be (a comment
    /// inside, `must_break`, a multi-line atom).
    flat: Option<usize>,
    kind: NodeKind<'s>,
}

enum NodeKind<'s> {
    /// An atom, or a form printed verbatim. `symbol` is the symbol's name (no package).
    Atom {
        text: &'s str,
        symbol: Option<String>,
    },
    /// `'x`, `#'f`, `` `x ``, `,x`, `,@x`, `,.x`.
    Prefixed {
        prefix: &'s str,
        gap: Gap,
        inner: Box<Node<'s>>,
    },
    /// `( ... )` or `#( ... )`.
    List {
        open: &'static str,
        items: Vec<Item<'s>>,
        trailing: Gap,
        /// The first argument goes on a line of its own (see [`Breaks::first_apart`]).
        first_apart: bool,
    },
}

struct Item<'s> {
    /// Text between the previous item (or the open parenthesis) and this one.
    before: Gap,
    /// The tail of a dotted list, printed after `. `.
    dotted: bool,
    node: Node<'s>,
}

impl Node<'_> {
    fn symbol(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Atom { symbol, .. } => symbol.as_deref(),
            _ => None,
        }
    }

    /// An atom on one line, possibly behind prefixes (`'x`, `#'f`): small enough to share
    /// a line with its neighbours in a broken call.
    fn is_simple(&self) -> bool {
        match &self.kind {
            NodeKind::Atom { .. } => self.flat.is_some(),
            NodeKind::Prefixed { inner, .. } => self.flat.is_some() && inner.is_simple(),
            NodeKind::List { .. } => false,
        }
    }

    /// A keyword symbol as written (`:key`).
    fn is_keyword(&self) -> bool {
        match &self.kind {
            NodeKind::Atom { text, symbol } => symbol.is_some() && text.starts_with(':'),
            _ => false,
        }
    }

    fn is_parenthesized_list(&self) -> bool {
        matches!(&self.kind, NodeKind::List { open: "(", .. })
    }
}

struct Builder<'s, 'f, B: Breaks + ?Sized> {
    src: &'s str,
    breaks: &'f B,
}

impl<'s, B: Breaks + ?Sized> Builder<'s, '_, B> {
    fn verbatim(&self, span: Span) -> Node<'s> {
        let text = self.src.get(span.start..span.end).unwrap_or_default();
        Node {
            start: span.start,
            flat: one_line_width(text),
            kind: NodeKind::Atom { text, symbol: None },
        }
    }

    /// `quoted`: the datum is data (inside `'` or `#(`), never laid out as code.
    fn build(&self, datum: &Datum, depth: usize, quoted: bool) -> Node<'s> {
        let span = datum.span;
        let items = match &datum.kind {
            DatumKind::List(items, tail) => {
                if depth >= MAX_LAYOUT_DEPTH {
                    return self.verbatim(span);
                }
                let text = self.src.get(span.start..).unwrap_or_default();
                if text.starts_with('(') {
                    return self.list(span, "(", items, tail.as_deref(), depth, quoted);
                }
                match items.as_slice() {
                    [head, inner]
                        if tail.is_none()
                            && head.span.start == span.start
                            && head.span.end <= inner.span.start =>
                    {
                        return self.prefixed(head.span, inner, depth, quoted);
                    }
                    _ => return self.verbatim(span),
                }
            }
            DatumKind::Vector(items) => items,
            _ => {
                let text = self.src.get(span.start..span.end).unwrap_or_default();
                return Node {
                    start: span.start,
                    flat: one_line_width(text),
                    kind: NodeKind::Atom {
                        text,
                        symbol: datum.as_symbol().map(|s| s.name.clone()),
                    },
                };
            }
        };
        if depth >= MAX_LAYOUT_DEPTH {
            return self.verbatim(span);
        }
        self.list(span, "#(", items, None, depth, true)
    }

    fn prefixed(&self, head: Span, inner: &Datum, depth: usize, quoted: bool) -> Node<'s> {
        let prefix = self.src.get(head.start..head.end).unwrap_or_default();
        let gap = Gap::parse(self.src, head.end, inner.span.start, false);
        let inner = self.build(inner, depth + 1, quoted || prefix == "'");
        let flat = match (gap.is_empty(), inner.flat) {
            (true, Some(w)) => Some(prefix.chars().count() + w),
            _ => None,
        };
        Node {
            start: head.start,
            flat,
            kind: NodeKind::Prefixed {
                prefix,
                gap,
                inner: Box::new(inner),
            },
        }
    }

    fn list(
        &self,
        span: Span,
        open: &'static str,
        items: &[Datum],
        tail: Option<&Datum>,
        depth: usize,
        quoted: bool,
    ) -> Node<'s> {
        // `(a . 'b)` reads as `(a quote b)`: the prefix is then an item of its own, whose
        // text cannot be printed apart from what follows it. Such a list prints as written.
        let spliced_prefix = items.iter().chain(tail).any(|item| {
            item.as_symbol().is_some()
                && self.src.get(item.span.start..).is_some_and(|text| {
                    text.starts_with(['\'', '`', ',']) || text.starts_with("#'")
                })
        });
        if spliced_prefix {
            return self.verbatim(span);
        }
        let mut built = Vec::with_capacity(items.len() + usize::from(tail.is_some()));
        let mut previous = span.start + open.len();
        for (i, item) in items.iter().enumerate() {
            built.push(Item {
                before: Gap::parse(self.src, previous, item.span.start, i > 0),
                dotted: false,
                node: self.build(item, depth + 1, quoted),
            });
            previous = item.span.end;
        }
        if let Some(tail) = tail {
            // The dot is noise to `Gap::parse`: the printer writes its own.
            built.push(Item {
                before: Gap::parse(self.src, previous, tail.span.start, true),
                dotted: true,
                node: self.build(tail, depth + 1, quoted),
            });
            previous = tail.span.end;
        }
        let trailing = Gap::parse(
            self.src,
            previous,
            span.end.saturating_sub(1),
            !built.is_empty(),
        );
        let mut flat = trailing.is_empty()
            && !(open == "(" && self.breaks.must_break(span.start, span.end))
            && !(open == "(" && !quoted && is_sequential(items));
        let mut width = open.len() + 1 + built.len().saturating_sub(1);
        for item in &built {
            match item.node.flat {
                Some(w) if flat && item.before.is_empty() => {
                    width += w + if item.dotted { 2 } else { 0 };
                }
                _ => flat = false,
            }
        }
        // Only a COND's first clause: elsewhere a first argument runs as often as its
        // operator, or (a LOOP) shows its counts on lines of its own.
        let first_apart = open == "("
            && items.len() >= 2
            && built[0].node.symbol() == Some("COND")
            && self.breaks.first_apart(span.start, items[1].span.start, items[1].span.end);
        Node {
            start: span.start,
            flat: (flat && !first_apart).then_some(width),
            kind: NodeKind::List {
                open,
                items: built,
                trailing,
                first_apart,
            },
        }
    }
}

/// Whether a form runs forms in sequence (a body of two or more compound forms, or a COND
/// with two or more clauses): Lisp programmers give each its own line even when the whole
/// would fit on one.
fn is_sequential(items: &[Datum]) -> bool {
    let Some(head) = items.first().and_then(Datum::as_symbol) else {
        return false;
    };
    let first_body = match head.name.as_str() {
        "COND" => 1,
        name => match body_arguments(name) {
            Some(args) => args + 1,
            None => return false,
        },
    };
    items
        .iter()
        .skip(first_body)
        .filter(|item| matches!(item.kind, DatumKind::List(..)))
        .count()
        >= 2
}

fn one_line_width(text: &str) -> Option<usize> {
    (!text.contains('\n')).then(|| text.chars().count())
}

/// How a list is used, which decides its layout when it does not fit on one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A form: laid out by its head symbol.
    Code,
    /// Data (quoted lists, vectors, lambda lists): filled.
    Data,
    /// LET-style bindings, DEFCLASS slots: one item per line.
    Bindings,
    /// FLET/LABELS/MACROLET definitions: one per line, each laid out as `Definition`.
    Definitions,
    /// `(name lambda-list body...)`: a DEFUN without its head; also HANDLER-CASE clauses.
    Definition,
    /// A COND clause (or DO's end test): test, then the forms one column in.
    Clause,
    /// A CASE clause: like `Clause`, but the keys are data.
    CaseClause,
}

/// Where the next item goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Right after the open parenthesis.
    Adjacent,
    /// On the current line after a space.
    SameLine,
    /// At the start of a new line.
    NewLine,
}

/// The layout of a list that does not fit on one line.
#[derive(Clone, Copy, Debug)]
enum Layout<'h> {
    /// `(head arg...` with `args` distinguished arguments on the first line, then the body
    /// indented; `head` names the operator for the roles of the arguments.
    Body { head: &'h str, args: usize },
    /// `(if test` then the branches 4 columns in.
    If,
    /// A function call: arguments aligned under the first or, `miser`, one column in;
    /// each compound argument on a line of its own, runs of simple ones (atoms such as
    /// `:key #'f`) sharing lines as they fit.
    Call {
        align: usize,
        miser: bool,
        arg_role: Role,
    },
    /// A clause: first item after the parenthesis, the rest one column in.
    Clause { key_role: Role },
    /// SETQ and friends: `(setq var value` and each further pair on its own line,
    /// aligned under the first (a value that does not fit goes under its variable).
    Pairs { align: usize },
    /// As many items per line as fit, one column in.
    Fill { role: Role },
    /// Every item on its own line, one column in.
    OnePerLine { role: Role },
    /// LOOP: a clause per line, aligned after `(loop `.
    Loop { align: usize },
}

/// How many distinguished arguments a body-style operator has, or `None` for a call.
fn body_arguments(name: &str) -> Option<usize> {
    Some(match name {
        "DEFUN"
        | "DEFMACRO"
        | "DEFTYPE"
        | "DEFINE-COMPILER-MACRO"
        | "DEFGENERIC"
        | "DEFCLASS"
        | "DEFINE-CONDITION"
        | "DESTRUCTURING-BIND"
        | "MULTIPLE-VALUE-BIND"
        | "DO"
        | "DO*"
        | "PROGV" => 2,
        "PROGN" | "TAGBODY" | "LOCALLY" | "IGNORE-ERRORS" | "LOOP" => 0,
        "LAMBDA"
        | "LET"
        | "LET*"
        | "FLET"
        | "LABELS"
        | "MACROLET"
        | "SYMBOL-MACROLET"
        | "WHEN"
        | "UNLESS"
        | "DOLIST"
        | "DOTIMES"
        | "BLOCK"
        | "CASE"
        | "ECASE"
        | "CCASE"
        | "TYPECASE"
        | "ETYPECASE"
        | "CTYPECASE"
        | "HANDLER-CASE"
        | "RESTART-CASE"
        | "HANDLER-BIND"
        | "RESTART-BIND"
        | "UNWIND-PROTECT"
        | "CATCH"
        | "RETURN-FROM"
        | "EVAL-WHEN"
        | "PROG"
        | "PROG*"
        | "MULTIPLE-VALUE-PROG1"
        | "PRINT-UNREADABLE-OBJECT"
        | "DO-SYMBOLS"
        | "DO-EXTERNAL-SYMBOLS"
        | "DO-ALL-SYMBOLS" => 1,
        _ if name.starts_with("WITH-") || name.starts_with("DO-") || name.starts_with("DOLIST") => {
            1
        }
        _ if name.starts_with("DEF") && !name.starts_with("DEFAULT") => 1,
        _ => return None,
    })
}

/// The role of item `k` of a body-style form headed by `head` with `args` distinguished
/// arguments.
fn body_role(head: &str, args: usize, k: usize) -> Role {
    match (head, k) {
        ("DEFUN" | "DEFMACRO" | "DEFTYPE" | "DEFINE-COMPILER-MACRO" | "DEFGENERIC", 2) => {
            Role::Data
        }
        ("DEFCLASS" | "DEFINE-CONDITION", 2) => Role::Data,
        ("DEFCLASS" | "DEFINE-CONDITION", 3) => Role::Bindings,
        ("DEFMETHOD", _) if k == args => Role::Data,
        ("LAMBDA" | "DESTRUCTURING-BIND" | "MULTIPLE-VALUE-BIND" | "EVAL-WHEN", 1) => Role::Data,
        (
            "LET" | "LET*" | "PROG" | "PROG*" | "SYMBOL-MACROLET" | "HANDLER-BIND" | "RESTART-BIND"
            | "DO" | "DO*",
            1,
        ) => Role::Bindings,
        ("DO" | "DO*", 2) => Role::Clause,
        ("FLET" | "LABELS" | "MACROLET", 1) => Role::Definitions,
        ("CASE" | "ECASE" | "CCASE" | "TYPECASE" | "ETYPECASE" | "CTYPECASE", 2..) => {
            Role::CaseClause
        }
        ("HANDLER-CASE" | "RESTART-CASE", 2..) => Role::Definition,
        ("", 1) => Role::Data,
        _ => Role::Code,
    }
}

fn is_loop_keyword(name: &str) -> bool {
    matches!(
        name,
        "FOR"
            | "AS"
            | "WITH"
            | "DO"
            | "DOING"
            | "COLLECT"
            | "COLLECTING"
            | "APPEND"
            | "APPENDING"
            | "NCONC"
            | "NCONCING"
            | "SUM"
            | "SUMMING"
            | "COUNT"
            | "COUNTING"
            | "MAXIMIZE"
            | "MAXIMIZING"
            | "MINIMIZE"
            | "MINIMIZING"
            | "WHEN"
            | "IF"
            | "UNLESS"
            | "ELSE"
            | "END"
            | "AND"
            | "WHILE"
            | "UNTIL"
            | "REPEAT"
            | "ALWAYS"
            | "NEVER"
            | "THEREIS"
            | "INITIALLY"
            | "FINALLY"
            | "RETURN"
            | "NAMED"
    )
}

/// Builds the lines of one top-level form.
struct Printer {
    lines: Vec<PrettyLine>,
    /// Column of the end of the last line.
    column: usize,
    /// Whether another datum may follow on the last line: false after a comment, on a
    /// Text line, on a string's continuation line and on a line of closing parentheses
    /// (so that every datum that starts a line is its `first_offset`).
    datum_ok: bool,
    /// Whether a closing parenthesis may follow on the last line (false after a comment).
    paren_ok: bool,
    width: usize,
    indent: usize,
}

impl Printer {
    fn new(options: &PrettyOptions) -> Printer {
        Printer {
            lines: Vec::new(),
            column: 0,
            datum_ok: false,
            paren_ok: false,
            width: options.width,
            indent: options.indent,
        }
    }

    fn start_line(&mut self, column: usize, first_offset: Option<usize>) {
        self.lines.push(PrettyLine {
            indent: column,
            text: String::new(),
            kind: LineKind::Code,
            first_offset,
        });
        self.column = column;
        self.datum_ok = first_offset.is_some();
        self.paren_ok = true;
    }

    fn push(&mut self, text: &str) {
        if let Some(line) = self.lines.last_mut() {
            line.text.push_str(text);
        }
        self.column += text.chars().count();
    }

    fn text_line(&mut self, column: usize, text: &str) {
        self.lines.push(text_line(column, text));
        self.column = column + text.chars().count();
        self.datum_ok = false;
        self.paren_ok = false;
    }

    fn gap(&mut self, gap: &Gap, column: usize) {
        if let Some(comment) = &gap.end_of_line {
            self.push("  ");
            self.push(comment);
            self.datum_ok = false;
            self.paren_ok = false;
        }
        for line in &gap.lines {
            self.text_line(column, line);
        }
    }

    fn close(&mut self, column: usize) {
        if !self.paren_ok {
            self.start_line(column, None);
        }
        self.push(")");
    }

    fn fits(&self, width: Option<usize>, extra: usize) -> bool {
        width.is_some_and(|w| self.column + w + extra <= self.width)
    }

    /// An atom's text; a multi-line one continues on lines of its own, unindented.
    fn atom(&mut self, text: &str) {
        let mut parts = text.split('\n');
        self.push(parts.next().unwrap_or_default());
        for part in parts {
            self.lines.push(PrettyLine {
                indent: 0,
                text: part.to_string(),
                kind: LineKind::Code,
                first_offset: None,
            });
            self.column = part.chars().count();
            self.datum_ok = false;
            self.paren_ok = true;
        }
    }

    fn flat(&mut self, node: &Node) {
        let mut text = String::new();
        flat_text(node, &mut text);
        self.push(&text);
    }

    /// Prints `node` at the current position; `trail` closing parentheses will follow it.
    fn render(&mut self, node: &Node, trail: usize, role: Role) {
        match &node.kind {
            NodeKind::Atom { text, .. } => self.atom(text),
            _ if self.fits(node.flat, trail) => self.flat(node),
            NodeKind::Prefixed { prefix, gap, inner } => {
                let column = self.column;
                self.push(prefix);
                if !gap.is_empty() {
                    self.gap(gap, column);
                    self.start_line(column, Some(inner.start));
                }
                let inner_role = match (*prefix, role) {
                    ("'", _) | (_, Role::Data) => Role::Data,
                    _ => Role::Code,
                };
                self.render(inner, trail, inner_role);
            }
            NodeKind::List {
                open,
                items,
                trailing,
                first_apart,
            } => self.broken(open, items, trailing, trail, role, *first_apart),
        }
    }

    fn layout<'n>(&self, items: &'n [Item], role: Role, column: usize) -> Layout<'n> {
        let head = items.first().and_then(|item| item.node.symbol());
        match role {
            Role::Data => return Layout::Fill { role: Role::Data },
            Role::Bindings => return Layout::OnePerLine { role: Role::Code },
            Role::Definitions => {
                return Layout::OnePerLine {
                    role: Role::Definition,
                };
            }
            Role::Definition => return Layout::Body { head: "", args: 1 },
            Role::Clause => {
                return Layout::Clause {
                    key_role: Role::Code,
                };
            }
            Role::CaseClause => {
                return Layout::Clause {
                    key_role: Role::Data,
                };
            }
            Role::Code => {}
        }
        let Some(head) = head else {
            return Layout::Fill { role: Role::Code };
        };
        let align = column + 2 + head.chars().count();
        match head {
            "IF" => return Layout::If,
            "SETQ" | "SETF" | "PSETQ" | "PSETF" | "SETF*" => return Layout::Pairs { align },
            "LOOP" if items.get(1).is_some_and(|i| i.node.symbol().is_some()) => {
                return Layout::Loop { align };
            }
            "DEFMETHOD" => {
                let args = items
                    .iter()
                    .skip(2)
                    .position(|item| item.node.is_parenthesized_list())
                    .map_or(2, |p| p + 2);
                return Layout::Body { head, args };
            }
            _ => {}
        }
        if let Some(args) = body_arguments(head) {
            return Layout::Body { head, args };
        }
        let args = &items[1..];
        // The head's printed width (its source text may differ from its name).
        let head_width = items[0].node.flat.unwrap_or(head.len());
        let align = column + 2 + head_width;
        let widest = args
            .iter()
            .filter_map(|a| a.node.flat.map(|w| w + if a.dotted { 2 } else { 0 }))
            .max()
            .unwrap_or(0);
        // Arguments go under the head only for a deep call, where aligning them after it
        // would leave too little room (the CL pretty printer's "miser" style).
        let miser = align + widest + 1 > self.width
            && column + 1 + widest < self.width
            && align * 2 > self.width;
        let arg_role = if head == "COND" {
            Role::Clause
        } else {
            Role::Code
        };
        Layout::Call {
            align,
            miser,
            arg_role,
        }
    }

    /// Prints a list that does not fit on one line (or may not).
    fn broken(&mut self, open: &str, items: &[Item], trailing: &Gap, trail: usize, role: Role, first_apart: bool) {
        let column = self.column;
        self.push(open);
        let inner = column + open.len();
        let layout = self.layout(items, role, column);
        let mut body_column = inner;
        let mut one_line = true;
        let mut previous_simple = false;
        let mut previous_keyword = false;
        // Computed once: asking per keyword argument would be quadratic.
        let last_compound = items.iter().rposition(|item| !item.node.is_simple());
        let mut clause_column: Option<usize> = None;
        for (k, item) in items.iter().enumerate() {
            let last_trail = if k + 1 == items.len() { trail + 1 } else { 0 };
            let width = item.node.flat.map(|w| w + if item.dotted { 2 } else { 0 });
            let fits_after = one_line && self.fits(width, 1 + last_trail);
            let fill = |new_column: usize| {
                if fits_after {
                    (Place::SameLine, new_column)
                } else {
                    (Place::NewLine, new_column)
                }
            };
            let ((place, new_column), item_role) = match layout {
                _ if k == 0 => {
                    let role = match layout {
                        Layout::Fill { role } | Layout::OnePerLine { role } => role,
                        Layout::Clause { key_role } => key_role,
                        _ => Role::Code,
                    };
                    ((Place::Adjacent, inner), role)
                }
                Layout::Body { head, args } => {
                    let role = body_role(head, args, k);
                    // A later distinguished argument that does not fit after the first
                    // goes on a line of its own, further in than the body; lambda lists
                    // stay on the first line (and break inside) as in hand-written code.
                    if k <= args && (k == 1 || role == Role::Data || fits_after) {
                        ((Place::SameLine, column + 2 * self.indent), role)
                    } else if k <= args {
                        ((Place::NewLine, column + 2 * self.indent), role)
                    } else {
                        ((Place::NewLine, column + self.indent), role)
                    }
                }
                Layout::If if k == 1 => ((Place::SameLine, column + 4), Role::Code),
                Layout::If => ((Place::NewLine, column + 4), Role::Code),
                Layout::Call {
                    miser: false,
                    align,
                    arg_role,
                } if k == 1 => ((if first_apart { Place::NewLine } else { Place::SameLine }, align), arg_role),
                Layout::Call {
                    miser,
                    align,
                    arg_role,
                } => {
                    let new_column = if miser { inner } else { align };
                    // Keyword arguments read as pairs: `:key value` share a line, and
                    // a keyword starts one when compound arguments follow it.
                    let keyword = item.node.is_keyword();
                    if k > 1 && previous_keyword && !keyword {
                        (fill(new_column), arg_role)
                    } else if keyword && last_compound.is_some_and(|last| last > k) {
                        ((Place::NewLine, new_column), arg_role)
                    } else if k > 1 && previous_simple && item.node.is_simple() {
                        (fill(new_column), arg_role)
                    } else {
                        ((Place::NewLine, new_column), arg_role)
                    }
                }
                Layout::Clause { .. } => ((Place::NewLine, inner), Role::Code),
                Layout::Pairs { align } if k % 2 == 0 => (fill(align), Role::Code),
                Layout::Pairs { align } if k == 1 => ((Place::SameLine, align), Role::Code),
                Layout::Pairs { align } => ((Place::NewLine, align), Role::Code),
                Layout::Fill { role } => (fill(inner), role),
                Layout::OnePerLine { role } => ((Place::NewLine, inner), role),
                Layout::Loop { align } => {
                    let keyword = item.node.symbol().is_some_and(is_loop_keyword);
                    let previous = items[k - 1].node.symbol();
                    let previous_keyword = previous.is_some_and(is_loop_keyword);
                    if k == 1 {
                        ((Place::SameLine, align), Role::Code)
                    } else if keyword && matches!(previous, Some("AND" | "ELSE")) {
                        // `and collect x`, `else do (f)`: the joined clause follows.
                        ((Place::SameLine, align), Role::Code)
                    } else if keyword {
                        clause_column = None;
                        ((Place::NewLine, align), Role::Code)
                    } else if previous_keyword {
                        // A clause's first form follows its keyword, breaking inside if
                        // need be.
                        ((Place::SameLine, align + self.indent), Role::Code)
                    } else {
                        let continuation = clause_column.unwrap_or(align + self.indent);
                        (fill(continuation), Role::Code)
                    }
                }
            };
            self.gap(&item.before, new_column);
            if place != Place::NewLine && self.datum_ok {
                if place == Place::SameLine {
                    self.push(" ");
                }
            } else {
                self.start_line(new_column, Some(item.node.start));
            }
            if let Layout::Loop { .. } = layout
                && k > 0
                && clause_column.is_none()
                && !item.node.symbol().is_some_and(is_loop_keyword)
            {
                clause_column = Some(self.column);
            }
            if item.dotted {
                self.push(". ");
            }
            let lines_before = self.lines.len();
            self.render(&item.node, last_trail, item_role);
            one_line = self.lines.len() == lines_before && self.datum_ok;
            previous_simple = item.node.is_simple();
            previous_keyword = item.node.is_keyword();
            body_column = new_column;
        }
        self.gap(trailing, body_column);
        self.close(body_column);
    }
}

fn flat_text(node: &Node, out: &mut String) {
    match &node.kind {
        NodeKind::Atom { text, .. } => out.push_str(text),
        NodeKind::Prefixed { prefix, inner, .. } => {
            out.push_str(prefix);
            flat_text(inner, out);
        }
        NodeKind::List { open, items, .. } => {
            out.push_str(open);
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                if item.dotted {
                    out.push_str(". ");
                }
                flat_text(&item.node, out);
            }
            out.push(')');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_pair_syntax_is_found_past_comments_and_skipped_forms() {
        assert_eq!(syntax_noise(" . "), vec![1..2]);
        assert_eq!(syntax_noise(" ; a . b\n . "), vec![10..11]);
        assert_eq!(syntax_noise(" #| . |# . "), vec![9..10]);
        assert_eq!(syntax_noise(" #+sbcl (a . b) . "), vec![16..17]);
        assert_eq!(syntax_noise(" #+sbcl x . "), vec![10..11]);
        assert_eq!(
            syntax_noise(" #+(or a b) #-c (x) . ( "),
            vec![20..21, 22..23]
        );
        assert_eq!(syntax_noise(" ) ) "), vec![1..2, 3..4]);
        assert_eq!(syntax_noise(" x "), Vec::<std::ops::Range<usize>>::new());
    }

    #[test]
    fn gaps_separate_end_of_line_comments() {
        let src = "a ; eol\n  ; own line\n #| block |# b";
        let gap = Gap::parse(src, 1, src.len() - 1, true);
        assert_eq!(gap.end_of_line.as_deref(), Some("; eol"));
        assert_eq!(gap.lines, vec!["; own line", "#| block |#"]);
        let gap = Gap::parse(src, 1, src.len() - 1, false);
        assert_eq!(gap.end_of_line, None);
        assert_eq!(gap.lines.len(), 3);
    }
}
