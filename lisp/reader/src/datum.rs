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

/// Byte offsets into the source plus the 1-based line and column of `start`.
/// Columns count characters (Unicode scalar values), not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Datum {
    pub kind: DatumKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
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
    List(Vec<Datum>, Option<Box<Datum>>),
    /// `#( ... )`
    Vector(Vec<Datum>),
    /// `#*0101`: the bits, first element first.
    BitVector(Vec<bool>),
    /// `#C(re im)`: two real numbers (integers, ratios or floats), never lists.
    Complex(Box<Datum>, Box<Datum>),
    /// `#nA(...)`: an array's dimensions and its elements in row-major order
    /// (`#0A x` has no dimensions and one element).
    Array(Vec<usize>, Vec<Datum>),
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
            datum = d(DatumKind::List(vec![datum], None));
        }
        let text = datum.to_string();
        // Dismantle iteratively: the derived drop glue recurses.
        crate::dismantle(datum);
        assert_eq!(text.len(), 400_001);
        assert_eq!(&text[199_998..200_003], "((1))");
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
