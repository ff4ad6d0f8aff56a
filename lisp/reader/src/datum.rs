//! The syntax tree the reader produces: `Datum`s with source spans, and their CL-like
//! printed form.
//!
//! A `Datum` is plain data: no interning, no heap, no evaluation. Symbol names are already
//! case-converted (readtable-case :upcase), numbers already normalized (ratios in lowest
//! terms with a denominator > 1, integers that fit in i64 are never `BigInteger`).
//! The `Display` impl prints the way the CL printer would with `*print-escape*` true, except
//! that `()` stays `()` (the reader does not know that it is NIL) and reader-macro forms are
//! printed expanded, e.g. `(COMMON-LISP:QUOTE X)`. It is iterative, so printing a deeply
//! nested datum cannot overflow the Rust stack.
//!
//! Tests: the `tests` module below and the round-trip checks in `src/parser.rs`.

use std::fmt::{self, Write};

use num_bigint::BigInt;

pub(crate) use crate::items::Items;

/// Byte offsets into the source plus the 1-based line and column of `start`.
/// Columns count characters (Unicode scalar values), not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub column: u32,
}

/// One datum with its span. Dropping, comparing (`==`, which also compares spans) and
/// `Debug`-printing it never recurse on its depth (see `items.rs` and below); there is no
/// `Clone`, whose derived form would.
pub struct Datum {
    pub kind: DatumKind,
    pub span: Span,
}

/// What a datum is. Equality is structural (spans of nested datums included) and
/// iterative, like that of [`Datum`].
#[derive(Debug)]
pub enum DatumKind {
    /// An integer that fits in i64.
    Integer(i64),
    /// An integer that does not fit in i64 (never one that does).
    BigInteger(BigInt),
    /// Numerator and denominator in lowest terms, denominator > 1.
    Ratio(BigInt, BigInt),
    /// Every float syntax (`1.5`, `1e10`, `1.5d0`, `1.5f0`, `1.5s0`, `1.5l0`) reads as a double.
    Float(f64),
    Char(char),
    String(String),
    Symbol(SymbolName),
    /// A list: items and an optional dotted tail. `()` is `List(vec![], None)`.
    /// The tail is never itself a proper list written after a dot: `(a . (b))` reads as
    /// `(a b)`, as in CL, so a tail is always an atom or a vector.
    List(Items, Option<Box<Datum>>),
    /// `#( ... )`
    Vector(Items),
    /// `#*0101`: the bits, first element first.
    BitVector(Vec<bool>),
    /// `#C(re im)`: two real numbers (integers, ratios or floats), never lists.
    Complex(Box<Datum>, Box<Datum>),
    /// `#nA(...)`: an array's dimensions and its elements in row-major order
    /// (`#0A x` has no dimensions and one element).
    Array(Vec<usize>, Items),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SymbolName {
    pub package: PackagePrefix,
    /// Already case-converted: upcased unless escaped with `|...|` or `\`.
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PackagePrefix {
    /// `foo`
    None,
    /// `:foo`
    Keyword,
    /// `pkg:foo` (package name case-converted like a symbol name)
    External(String),
    /// `pkg::foo`
    Internal(String),
    /// `#:foo`
    Uninterned,
}

/// The package of the symbols that `'` and `#'` expand to.
pub const COMMON_LISP_PACKAGE: &str = "COMMON-LISP";
/// The package of the symbols that `` ` `` `,` `,@` expand to; the evaluator expands them.
pub const SYSTEM_PACKAGE: &str = "MPROF-SYSTEM";

impl SymbolName {
    pub fn new(package: PackagePrefix, name: impl Into<String>) -> SymbolName {
        SymbolName {
            package,
            name: name.into(),
        }
    }

    /// A symbol without package prefix, e.g. `SymbolName::plain("CAR")`.
    pub fn plain(name: impl Into<String>) -> SymbolName {
        SymbolName::new(PackagePrefix::None, name)
    }

    /// An external symbol of `package`, e.g. `COMMON-LISP:QUOTE`.
    pub fn external(package: &str, name: impl Into<String>) -> SymbolName {
        SymbolName::new(PackagePrefix::External(package.to_string()), name)
    }
}

impl Datum {
    pub fn new(kind: DatumKind, span: Span) -> Datum {
        Datum { kind, span }
    }

    /// The symbol name if this datum is a symbol.
    pub fn as_symbol(&self) -> Option<&SymbolName> {
        match &self.kind {
            DatumKind::Symbol(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An explicit work list instead of recursion: data can be nested arbitrarily deep.
        enum Work<'a> {
            Datum(&'a Datum),
            Text(&'static str),
        }
        let mut work = vec![Work::Datum(self)];
        while let Some(item) = work.pop() {
            let datum = match item {
                Work::Text(text) => {
                    f.write_str(text)?;
                    continue;
                }
                Work::Datum(d) => d,
            };
            match &datum.kind {
                DatumKind::List(items, tail) => {
                    f.write_str("(")?;
                    work.push(Work::Text(")"));
                    if let Some(tail) = tail {
                        work.push(Work::Datum(tail));
                        work.push(Work::Text(" . "));
                    }
                    push_items(&mut work, items, Work::Datum, || Work::Text(" "));
                }
                DatumKind::Vector(items) => {
                    f.write_str("#(")?;
                    work.push(Work::Text(")"));
                    push_items(&mut work, items, Work::Datum, || Work::Text(" "));
                }
                DatumKind::Array(dims, items) => {
                    write!(f, "#{}A", dims.len())?;
                    // Row-major elements with a parenthesis opened (closed) for
                    // every axis whose run starts (ends) there.
                    let runs: Vec<usize> = (0..dims.len()).map(|k| dims[k..].iter().product()).collect();
                    let mut pieces: Vec<Work<'_>> = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        let opens = runs.iter().filter(|&&r| r > 0 && i % r == 0).count();
                        if i > 0 {
                            pieces.push(Work::Text(" "));
                        }
                        pieces.extend((0..opens).map(|_| Work::Text("(")));
                        pieces.push(Work::Datum(item));
                        let closes = runs.iter().filter(|&&r| r > 0 && (i + 1) % r == 0).count();
                        pieces.extend((0..closes).map(|_| Work::Text(")")));
                    }
                    if items.is_empty() && !dims.is_empty() {
                        pieces.push(Work::Text("()"));
                    }
                    work.extend(pieces.into_iter().rev());
                }
                atom => write_atom(f, atom)?,
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Datum {
    /// The printed text and where it starts: `Datum(text @ line:column)`. The text comes
    /// from the iterative `Display`, so a deep datum cannot overflow the stack here.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Datum({self} @ {}:{})", self.span.line, self.span.column)
    }
}

impl PartialEq for Datum {
    fn eq(&self, other: &Datum) -> bool {
        self.span == other.span && self.kind == other.kind
    }
}

impl PartialEq for DatumKind {
    /// Structural equality with an explicit work list of pairs still to compare.
    fn eq(&self, other: &DatumKind) -> bool {
        let mut pending: Vec<(&Datum, &Datum)> = Vec::new();
        let mut pair = (self, other);
        loop {
            let same = match pair {
                (DatumKind::List(a, a_tail), DatumKind::List(b, b_tail)) => {
                    let tails_match = match (a_tail, b_tail) {
                        (Some(x), Some(y)) => {
                            pending.push((x, y));
                            true
                        }
                        (None, None) => true,
                        _ => false,
                    };
                    tails_match && push_pairs(&mut pending, a, b)
                }
                (DatumKind::Vector(a), DatumKind::Vector(b)) => push_pairs(&mut pending, a, b),
                (DatumKind::Array(a_dims, a), DatumKind::Array(b_dims, b)) => {
                    a_dims == b_dims && push_pairs(&mut pending, a, b)
                }
                (DatumKind::Complex(a_re, a_im), DatumKind::Complex(b_re, b_im)) => {
                    pending.push((a_re, b_re));
                    pending.push((a_im, b_im));
                    true
                }
                (a, b) => atoms_equal(a, b),
            };
            if !same {
                return false;
            }
            match pending.pop() {
                Some((a, b)) if a.span == b.span => pair = (&a.kind, &b.kind),
                Some(_) => return false,
                None => return true,
            }
        }
    }
}

/// Queues the elements of two containers pairwise; false when their lengths differ.
fn push_pairs<'a>(pending: &mut Vec<(&'a Datum, &'a Datum)>, a: &'a Items, b: &'a Items) -> bool {
    if a.len() != b.len() {
        return false;
    }
    pending.extend(a.iter().zip(b.iter()));
    true
}

/// Equality of two datum kinds that are not both containers of the same sort.
fn atoms_equal(a: &DatumKind, b: &DatumKind) -> bool {
    match (a, b) {
        (DatumKind::Integer(x), DatumKind::Integer(y)) => x == y,
        (DatumKind::BigInteger(x), DatumKind::BigInteger(y)) => x == y,
        (DatumKind::Ratio(xn, xd), DatumKind::Ratio(yn, yd)) => xn == yn && xd == yd,
        (DatumKind::Float(x), DatumKind::Float(y)) => x == y,
        (DatumKind::Char(x), DatumKind::Char(y)) => x == y,
        (DatumKind::String(x), DatumKind::String(y)) => x == y,
        (DatumKind::Symbol(x), DatumKind::Symbol(y)) => x == y,
        (DatumKind::BitVector(x), DatumKind::BitVector(y)) => x == y,
        _ => false,
    }
}

/// Pushes `items` in reverse with separators so that popping yields them in order.
fn push_items<'a, W>(
    work: &mut Vec<W>,
    items: &'a [Datum],
    item: impl Fn(&'a Datum) -> W,
    separator: impl Fn() -> W,
) {
    for (i, d) in items.iter().enumerate().rev() {
        work.push(item(d));
        if i > 0 {
            work.push(separator());
        }
    }
}

fn write_atom(f: &mut fmt::Formatter<'_>, kind: &DatumKind) -> fmt::Result {
    match kind {
        DatumKind::Integer(n) => write!(f, "{n}"),
        DatumKind::BigInteger(n) => write!(f, "{n}"),
        DatumKind::Ratio(n, d) => write!(f, "{n}/{d}"),
        DatumKind::Float(x) => write_float(f, *x),
        DatumKind::Char(c) => write_char(f, *c),
        DatumKind::String(s) => {
            f.write_char('"')?;
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    f.write_char('\\')?;
                }
                f.write_char(c)?;
            }
            f.write_char('"')
        }
        DatumKind::Symbol(sym) => write_symbol(f, sym),
        DatumKind::BitVector(bits) => {
            f.write_str("#*")?;
            bits.iter().try_for_each(|&b| f.write_char(if b { '1' } else { '0' }))
        }
        DatumKind::Complex(re, im) => {
            f.write_str("#C(")?;
            write_atom(f, &re.kind)?;
            f.write_char(' ')?;
            write_atom(f, &im.kind)?;
            f.write_char(')')
        }
        DatumKind::List(..) | DatumKind::Vector(..) | DatumKind::Array(..) => Ok(()),
    }
}

/// CL-like: fixed notation for 1e-3 <= |x| < 1e7, exponent notation otherwise, and
/// always a `.` in the mantissa so the text reads back as a float.
fn write_float(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    if !x.is_finite() {
        // Cannot come from the reader; printed in SBCL's style for debugging only.
        let text = if x.is_nan() {
            "#<DOUBLE-FLOAT quiet NaN>"
        } else if x > 0.0 {
            "#.SB-EXT:DOUBLE-FLOAT-POSITIVE-INFINITY"
        } else {
            "#.SB-EXT:DOUBLE-FLOAT-NEGATIVE-INFINITY"
        };
        return f.write_str(text);
    }
    let magnitude = x.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        let text = format!("{x}");
        f.write_str(&text)?;
        if !text.contains('.') {
            f.write_str(".0")?;
        }
        Ok(())
    } else {
        let text = format!("{x:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        f.write_str(mantissa)?;
        if !mantissa.contains('.') {
            f.write_str(".0")?;
        }
        write!(f, "e{exponent}")
    }
}

/// Names the printer uses for characters that would be invisible or ambiguous.
/// (`char_from_name` accepts more spellings.)
pub(crate) fn char_name(c: char) -> Option<&'static str> {
    Some(match c {
        ' ' => "Space",
        '\n' => "Newline",
        '\t' => "Tab",
        '\r' => "Return",
        '\x08' => "Backspace",
        '\x7f' => "Rubout",
        '\0' => "Nul",
        '\x0c' => "Page",
        '\x1b' => "Escape",
        '\x07' => "Bell",
        _ => return None,
    })
}

fn write_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    f.write_str("#\\")?;
    match char_name(c) {
        Some(name) => f.write_str(name),
        None if c.is_control() => write!(f, "U+{:04X}", c as u32),
        None => f.write_char(c),
    }
}

fn write_symbol(f: &mut fmt::Formatter<'_>, sym: &SymbolName) -> fmt::Result {
    match &sym.package {
        PackagePrefix::None => {}
        PackagePrefix::Keyword => f.write_char(':')?,
        PackagePrefix::External(p) => {
            write_symbol_name(f, p)?;
            f.write_char(':')?;
        }
        PackagePrefix::Internal(p) => {
            write_symbol_name(f, p)?;
            f.write_str("::")?;
        }
        PackagePrefix::Uninterned => f.write_str("#:")?,
    }
    write_symbol_name(f, &sym.name)
}

/// Writes a symbol or package name, inside `|...|` when reading it back plainly would
/// give something else (a lower-case letter, a delimiter, a package marker, a number).
fn write_symbol_name(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    let needs_bars = name.is_empty()
        || name == "."
        || name.starts_with('#')
        || crate::token::looks_like_number(name)
        || name.chars().any(|c| {
            c.is_control()
                || matches!(
                    c,
                    ' ' | '(' | ')' | '\'' | '"' | '`' | ',' | ';' | '|' | '\\' | ':'
                )
                || crate::token::upcase_char(c) != c
        });
    if !needs_bars {
        return f.write_str(name);
    }
    f.write_char('|')?;
    for c in name.chars() {
        if c == '|' || c == '\\' {
            f.write_char('\\')?;
        }
        f.write_char(c)?;
    }
    f.write_char('|')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(kind: DatumKind) -> Datum {
        Datum::new(kind, Span::default())
    }

    #[test]
    fn floats_print_like_cl() {
        for (x, expected) in [
            (1.5, "1.5"),
            (100.0, "100.0"),
            (0.0, "0.0"),
            (-0.5, "-0.5"),
            (1e10, "1.0e10"),
            (1.5e-5, "1.5e-5"),
            (1e7, "1.0e7"),
            (1234567.0, "1234567.0"),
        ] {
            assert_eq!(d(DatumKind::Float(x)).to_string(), expected);
        }
    }

    #[test]
    fn symbols_get_bars_when_needed() {
        let sym = |p, n: &str| d(DatumKind::Symbol(SymbolName::new(p, n))).to_string();
        assert_eq!(sym(PackagePrefix::None, "FOO"), "FOO");
        assert_eq!(sym(PackagePrefix::None, "Foo"), "|Foo|");
        assert_eq!(sym(PackagePrefix::None, "1+"), "1+");
        assert_eq!(sym(PackagePrefix::None, "12"), "|12|");
        assert_eq!(sym(PackagePrefix::None, ""), "||");
        assert_eq!(sym(PackagePrefix::None, "a|b"), "|a\\|b|");
        assert_eq!(sym(PackagePrefix::Keyword, "KEY"), ":KEY");
        assert_eq!(sym(PackagePrefix::External("CL".into()), "CAR"), "CL:CAR");
        assert_eq!(sym(PackagePrefix::Internal("P".into()), "X Y"), "P::|X Y|");
        assert_eq!(sym(PackagePrefix::Uninterned, "G1"), "#:G1");
    }

    #[test]
    fn chars_and_strings() {
        assert_eq!(d(DatumKind::Char(' ')).to_string(), "#\\Space");
        assert_eq!(d(DatumKind::Char('a')).to_string(), "#\\a");
        assert_eq!(d(DatumKind::Char('\u{1}')).to_string(), "#\\U+0001");
        assert_eq!(
            d(DatumKind::String("a\"b\\c".into())).to_string(),
            "\"a\\\"b\\\\c\""
        );
    }

    #[test]
    fn deep_nesting_prints_without_recursion() {
        let mut datum = d(DatumKind::Integer(1));
        for _ in 0..200_000usize {
            datum = d(DatumKind::List(vec![datum].into(), None));
        }
        let text = datum.to_string();
        assert_eq!(text.len(), 400_001);
        assert_eq!(&text[199_998..200_003], "((1))");
    }

    /// A list of `levels` nested lists around `leaf`, with a vector every tenth level.
    fn nested(levels: usize, leaf: i64) -> Datum {
        let mut datum = d(DatumKind::Integer(leaf));
        for level in 0..levels {
            let items = Items::from(vec![datum, d(DatumKind::Integer(level as i64))]);
            datum = d(if level % 10 == 0 { DatumKind::Vector(items) } else { DatumKind::List(items, None) });
        }
        datum
    }

    #[test]
    fn deep_equality_and_debug_do_not_recurse() {
        let worker = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let (a, b, c) = (nested(1_000_000, 1), nested(1_000_000, 1), nested(1_000_000, 2));
                let debug_len = format!("{a:?}").len();
                (a == b, a == c, a.kind == b.kind, debug_len)
            })
            .expect("spawn a test thread");
        let (same, differs, same_kinds, debug_len) = worker.join().expect("no stack overflow");
        assert!(same && same_kinds);
        assert!(!differs, "the innermost leaf differs");
        assert!(debug_len > 2_000_000);
    }

    #[test]
    fn equality_compares_shape_atoms_and_spans() {
        let list = |items: Vec<Datum>, tail: Option<Datum>| d(DatumKind::List(items.into(), tail.map(Box::new)));
        let int = |n| d(DatumKind::Integer(n));
        assert_eq!(list(vec![int(1)], Some(int(2))), list(vec![int(1)], Some(int(2))));
        assert_ne!(list(vec![int(1)], Some(int(2))), list(vec![int(1)], None));
        assert_ne!(list(vec![int(1)], None), list(vec![int(1), int(1)], None));
        assert_ne!(list(vec![int(1)], None), d(DatumKind::Vector(vec![int(1)].into())));
        let moved = Datum::new(DatumKind::Integer(1), Span { start: 3, ..Span::default() });
        assert_ne!(list(vec![int(1)], None), list(vec![moved], None));
        assert_eq!(format!("{:?}", list(vec![int(1)], None)), "Datum((1) @ 0:0)");
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod size_tests {
    /// Every list item is a `Datum`, so its size drives the reader's memory traffic; the
    /// contract's `Ratio(BigInt, BigInt)` is the largest variant. A change here should be
    /// deliberate.
    #[test]
    fn datum_size_is_pinned() {
        assert_eq!(std::mem::size_of::<super::DatumKind>(), 64);
        assert_eq!(std::mem::size_of::<super::Datum>(), 88);
    }
}
