//! Interpretation of token text, as CL's reader does after it has collected a token:
//! numbers (integers, ratios, floats, `#x`/`#NNr` rationals), symbols with package
//! markers and case conversion, and character names.
//!
//! Knows nothing of positions: errors are plain messages, which the parser places.
//! Invariants: a token with any escape is never a number; escaped characters keep their
//! case; results are normalized (ratios in lowest terms, `i64` whenever the value fits).
//!
//! Tests: the `tests` module below (data-driven `check`) and `src/parser.rs`.

use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::datum::{DatumKind, PackagePrefix, SymbolName};

/// CL's readtable case: what the reader does to the unescaped letters of a symbol
/// token (CLHS 23.1.2). Escaped letters (`|...|`, `\`) are never converted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadCase {
    /// To upper case (the standard readtable).
    #[default]
    Upcase,
    /// To lower case.
    Downcase,
    /// Left as written.
    Preserve,
    /// Inverted when all unescaped letters of the token have one case, else left alone.
    Invert,
}

/// What a token read without prefix turned out to be.
#[derive(Debug, PartialEq)]
pub(crate) enum Classified {
    /// The lone unescaped `.` of dotted-pair notation.
    Dot,
    Datum(DatumKind),
}

/// Interprets a token: a number if it has number syntax (and no escapes), else a symbol.
/// Integers and ratios are read in radix `read_base` (CL's `*read-base*`, 2 to 36);
/// floats, and integers written with a trailing decimal point, are always decimal.
pub(crate) fn classify_atom(text: &str, escaped: bool, read_base: u32, case: ReadCase) -> Result<Classified, String> {
    if !escaped {
        if text == "." {
            return Ok(Classified::Dot);
        }
        if read_base != 10 && (2..=36).contains(&read_base) && !text.ends_with('.') {
            // In another base an integer or ratio comes first (in base 16, 1E5 is
            // an integer); a decimal token is a number only as a float.
            if let Ok(number) = classify_radix("", read_base, text, false) {
                return Ok(Classified::Datum(number));
            }
            if let Some(Ok(float @ DatumKind::Float(_))) = parse_decimal_number(text) {
                return Ok(Classified::Datum(float));
            }
        } else if let Some(number) = parse_decimal_number(text) {
            return number.map(Classified::Datum);
        }
    }
    let (prefix, name) = split_symbol(text, case)?;
    Ok(Classified::Datum(DatumKind::Symbol(SymbolName {
        package: prefix,
        name,
    })))
}

/// Interprets the token after `#:`.
pub(crate) fn classify_uninterned(body: &str, case: ReadCase) -> Result<DatumKind, String> {
    match split_symbol(body, case)? {
        (PackagePrefix::None, name) => Ok(DatumKind::Symbol(SymbolName {
            package: PackagePrefix::Uninterned,
            name,
        })),
        _ => Err(format!(
            "the symbol after #: cannot have a package prefix, found #:{}",
            shorten(body)
        )),
    }
}

/// Interprets the token after `#x`, `#b`, `#o` or `#NNr`: a rational in that radix.
pub(crate) fn classify_radix(
    prefix: &str,
    radix: u32,
    body: &str,
    escaped: bool,
) -> Result<DatumKind, String> {
    if radix == 0 {
        return Err(format!(
            "the radix in {prefix} must be a decimal number from 2 to 36"
        ));
    }
    let expected = || {
        let shown = if body.is_empty() {
            "nothing".to_string()
        } else {
            format!("'{}'", shorten(body))
        };
        format!("expected a rational number in radix {radix} after {prefix}, found {shown}")
    };
    if escaped {
        return Err(expected());
    }
    let (negative, unsigned) = split_sign(body);
    let (numerator, denominator) = match unsigned.split_once('/') {
        Some((n, d)) => (n, Some(d)),
        None => (unsigned, None),
    };
    let valid = |digits: &str| !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
    if !valid(numerator) || !denominator.is_none_or(valid) {
        return Err(expected());
    }
    let numerator = parse_unsigned(numerator, radix);
    let numerator = if negative { -numerator } else { numerator };
    match denominator {
        None => Ok(integer(numerator)),
        Some(d) => ratio(numerator, parse_unsigned(d, radix)).ok_or_else(|| {
            format!(
                "division by zero in {prefix}{}: the denominator is 0",
                shorten(body)
            )
        }),
    }
}

/// True when `name` would read as a number if written without escapes. Used by the
/// printer to decide when a symbol name needs `|...|`.
pub(crate) fn looks_like_number(name: &str) -> bool {
    name != "." && parse_decimal_number(name).is_some()
}

/// CL's `char-upcase`: only characters with a one-to-one upper-case mapping change
/// (so `ß` stays `ß`, as in SBCL).
pub fn upcase_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_uppercase();
    }
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// Character names accepted after `#\`, compared case-insensitively.
const CHAR_NAMES: &[(&str, char)] = &[
    ("Space", ' '),
    ("Newline", '\n'),
    ("Linefeed", '\n'),
    ("Tab", '\t'),
    ("Return", '\r'),
    ("Page", '\x0c'),
    ("Backspace", '\x08'),
    ("Rubout", '\x7f'),
    ("Delete", '\x7f'),
    ("Del", '\x7f'),
    ("Nul", '\0'),
    ("Null", '\0'),
    ("Escape", '\x1b'),
    ("Esc", '\x1b'),
    ("Altmode", '\x1b'),
    ("Bell", '\x07'),
    ("Bel", '\x07'),
    // The other ASCII control characters, by the names SBCL (and the printer) give them.
    ("Soh", '\x01'),
    ("Stx", '\x02'),
    ("Etx", '\x03'),
    ("Eot", '\x04'),
    ("Enq", '\x05'),
    ("Ack", '\x06'),
    ("Vt", '\x0b'),
    ("So", '\x0e'),
    ("Si", '\x0f'),
    ("Dle", '\x10'),
    ("Dc1", '\x11'),
    ("Dc2", '\x12'),
    ("Dc3", '\x13'),
    ("Dc4", '\x14'),
    ("Nak", '\x15'),
    ("Syn", '\x16'),
    ("Etb", '\x17'),
    ("Can", '\x18'),
    ("Em", '\x19'),
    ("Sub", '\x1a'),
    ("Fs", '\x1c'),
    ("Gs", '\x1d'),
    ("Rs", '\x1e'),
    ("Us", '\x1f'),
];

/// The character named by the text after `#\`: a single character stands for itself,
/// a longer text must be a known name or `U+XXXX` (hexadecimal code point).
pub(crate) fn char_from_name(name: &str) -> Result<char, String> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok(c);
    }
    if let Some((_, c)) = CHAR_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        return Ok(*c);
    }
    let hex = name.strip_prefix("U+").or_else(|| name.strip_prefix("u+"));
    if let Some(hex) = hex
        && !hex.is_empty()
        && hex.len() <= 6
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return u32::from_str_radix(hex, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| format!("#\\{name} is not a valid Unicode code point"));
    }
    Err(format!(
        "unknown character name #\\{}: expected a single character or one of \
         Space, Newline, Tab, Return, Linefeed, Page, Backspace, Rubout, Nul, Escape, Bell, U+XXXX",
        shorten(name)
    ))
}

/// Token text for a message, cut to a readable length (a token can be megabytes long).
pub(crate) fn shorten(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    match text.char_indices().nth(MAX_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}...", &text[..cut]),
    }
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// `digits` are already validated for `radix`.
fn parse_unsigned(digits: &str, radix: u32) -> BigInt {
    // Validated digits always parse; the fallback keeps this total without a panic path.
    BigInt::parse_bytes(digits.as_bytes(), radix).unwrap_or_default()
}

/// Normalizes to `Integer` whenever the value fits in i64.
fn integer(n: BigInt) -> DatumKind {
    match n.to_i64() {
        Some(small) => DatumKind::Integer(small),
        None => DatumKind::BigInteger(n),
    }
}

/// `n/d` in lowest terms with a positive denominator; `None` when `d` is zero.
fn ratio(n: BigInt, d: BigInt) -> Option<DatumKind> {
    if d.is_zero() {
        return None;
    }
    let g = gcd(n.abs(), d.abs());
    let (mut n, mut d) = (n / &g, d / &g);
    if d.is_negative() {
        n = -n;
        d = -d;
    }
    Some(if d.is_one() {
        integer(n)
    } else {
        DatumKind::Ratio(n, d)
    })
}

fn gcd(mut a: BigInt, mut b: BigInt) -> BigInt {
    while !b.is_zero() {
        let r = &a % &b;
        a = b;
        b = r;
    }
    a
}

fn is_exponent_marker(b: u8) -> bool {
    matches!(
        b,
        b'e' | b'E' | b's' | b'S' | b'f' | b'F' | b'd' | b'D' | b'l' | b'L'
    )
}

/// Number syntax in radix 10 (CLHS 2.3.1):
///   integer = [sign] digit+ [.]
///   ratio   = [sign] digit+ / digit+
///   float   = [sign] digit* . digit+ [exponent] | [sign] digit+ [. digit*] exponent
///   exponent = marker [sign] digit+
/// Returns `None` when the token is not a number (so it is a symbol, e.g. `1+`, `+`,
/// `...`), and `Some(Err)` when it is a number that cannot be represented.
fn parse_decimal_number(text: &str) -> Option<Result<DatumKind, String>> {
    let bytes = text.as_bytes();
    let first = *bytes.first()?;
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return None;
    }
    let digits_from = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let (negative, int_start) = match first {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let int_end = digits_from(int_start);
    let int_digits = &text[int_start..int_end];
    let mut i = int_end;
    match bytes.get(i) {
        None => {
            return (!int_digits.is_empty()).then(|| Ok(decimal_integer(negative, int_digits)));
        }
        Some(b'/') => {
            let den_end = digits_from(i + 1);
            if int_digits.is_empty() || den_end == i + 1 || den_end != bytes.len() {
                return None;
            }
            let numerator = parse_unsigned(int_digits, 10);
            let numerator = if negative { -numerator } else { numerator };
            let denominator = parse_unsigned(&text[i + 1..], 10);
            return Some(ratio(numerator, denominator).ok_or_else(|| {
                format!(
                    "division by zero in the ratio {}: the denominator is 0",
                    shorten(text)
                )
            }));
        }
        _ => {}
    }
    let mut frac_digits = "";
    if bytes[i] == b'.' {
        let frac_end = digits_from(i + 1);
        frac_digits = &text[i + 1..frac_end];
        i = frac_end;
        if i == bytes.len() {
            return match (int_digits.is_empty(), frac_digits.is_empty()) {
                (true, true) => None,
                // `1.` is the integer 1 in CL.
                (false, true) => Some(Ok(decimal_integer(negative, int_digits))),
                _ => Some(make_float(
                    text,
                    negative,
                    int_digits,
                    frac_digits,
                    false,
                    "0",
                )),
            };
        }
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    // Only an exponent may follow now.
    if !is_exponent_marker(bytes[i]) {
        return None;
    }
    let (exp_negative, exp_start) = match bytes.get(i + 1) {
        Some(b'-') => (true, i + 2),
        Some(b'+') => (false, i + 2),
        _ => (false, i + 1),
    };
    let exp_end = digits_from(exp_start);
    if exp_end == exp_start || exp_end != bytes.len() {
        return None;
    }
    Some(make_float(
        text,
        negative,
        int_digits,
        frac_digits,
        exp_negative,
        &text[exp_start..],
    ))
}

fn decimal_integer(negative: bool, digits: &str) -> DatumKind {
    // 18 decimal digits always fit in i64: the common case avoids BigInt.
    if digits.len() <= 18 {
        let mut n: i64 = 0;
        for b in digits.bytes() {
            n = n * 10 + i64::from(b - b'0');
        }
        return DatumKind::Integer(if negative { -n } else { n });
    }
    let n = parse_unsigned(digits, 10);
    integer(if negative { -n } else { n })
}

fn make_float(
    text: &str,
    negative: bool,
    int_digits: &str,
    frac_digits: &str,
    exp_negative: bool,
    exp_digits: &str,
) -> Result<DatumKind, String> {
    // Rebuild in the syntax Rust's correctly rounded parser accepts: the CL exponent
    // markers (s f d l) all mean "double" here.
    let mut normalized = String::with_capacity(text.len() + 4);
    if negative {
        normalized.push('-');
    }
    normalized.push_str(if int_digits.is_empty() {
        "0"
    } else {
        int_digits
    });
    normalized.push('.');
    normalized.push_str(if frac_digits.is_empty() {
        "0"
    } else {
        frac_digits
    });
    normalized.push('e');
    if exp_negative {
        normalized.push('-');
    }
    normalized.push_str(exp_digits);
    match normalized.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(DatumKind::Float(x)),
        _ => Err(format!(
            "the float {} is too large for a double-float",
            shorten(text)
        )),
    }
}

/// CL's `char-downcase`, the inverse of [`upcase_char`].
pub fn downcase_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) if upcase_char(l) == c => l,
        _ => c,
    }
}

/// The unescaped letters of a token (outside `|...|`, not after `\\`): whether any is
/// upper case and whether any is lower case.
fn unescaped_cases(text: &str) -> (bool, bool) {
    let (mut upper, mut lower) = (false, false);
    let mut in_bars = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '|' => in_bars = !in_bars,
            '\\' => {
                chars.next();
            }
            c if !in_bars => {
                upper |= downcase_char(c) != c;
                lower |= upcase_char(c) != c;
            }
            _ => {}
        }
    }
    (upper, lower)
}

/// What the readtable case does to each unescaped character of `text`.
fn case_conversion(text: &str, case: ReadCase) -> fn(char) -> char {
    fn same(c: char) -> char {
        c
    }
    match case {
        ReadCase::Upcase => upcase_char,
        ReadCase::Downcase => downcase_char,
        ReadCase::Preserve => same,
        ReadCase::Invert => match unescaped_cases(text) {
            (true, false) => downcase_char,
            (false, true) => upcase_char,
            _ => same,
        },
    }
}

/// Splits a symbol token at its package markers, removing escapes and converting the
/// unescaped characters of both the package name and the symbol name as the readtable
/// case says.
fn split_symbol(text: &str, case: ReadCase) -> Result<(PackagePrefix, String), String> {
    // Fast path for the usual token: printable ASCII without escapes or package markers.
    if case == ReadCase::Upcase
        && text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b':' | b'|' | b'\\'))
    {
        return Ok((PackagePrefix::None, text.to_ascii_uppercase()));
    }
    let convert = case_conversion(text, case);
    let mut name = String::with_capacity(text.len());
    let mut package: Option<String> = None;
    let mut markers = 0u8;
    let mut keyword = false;
    // Byte index just after the last package marker, to recognize `::`.
    let mut after_marker = usize::MAX;
    let mut in_bars = false;
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        if in_bars {
            match c {
                '|' => in_bars = false,
                '\\' => name.extend(chars.next().map(|(_, c)| c)),
                _ => name.push(c),
            }
            continue;
        }
        match c {
            '|' => in_bars = true,
            '\\' => name.extend(chars.next().map(|(_, c)| c)),
            ':' => {
                if markers == 1 && after_marker == i {
                    markers = 2;
                } else if markers == 0 {
                    markers = 1;
                    if i == 0 {
                        keyword = true;
                    } else {
                        package = Some(std::mem::take(&mut name));
                    }
                } else {
                    return Err(format!("too many colons in the symbol {}", shorten(text)));
                }
                after_marker = i + 1;
            }
            c if c.is_control() => {
                return Err(format!(
                    "invalid character U+{:04X} in the token {}; escape it with \\ or |...|",
                    c as u32,
                    shorten(&text.escape_debug().to_string())
                ));
            }
            c => name.push(convert(c)),
        }
    }
    if in_bars {
        return Err(format!("unterminated |...| in the token {}", shorten(text)));
    }
    if markers > 0 && after_marker == text.len() {
        return Err(format!(
            "expected a symbol name after the package marker in {}",
            shorten(text)
        ));
    }
    let prefix = match (keyword, package) {
        (true, _) => PackagePrefix::Keyword,
        (false, None) => PackagePrefix::None,
        (false, Some(p)) if markers == 2 => PackagePrefix::Internal(p),
        (false, Some(p)) => PackagePrefix::External(p),
    };
    Ok((prefix, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(result: Result<Classified, String>) -> String {
        match result {
            Ok(Classified::Dot) => "Dot".to_string(),
            Ok(Classified::Datum(kind)) => format!("{kind:?}"),
            Err(message) => format!("error: {message}"),
        }
    }

    fn check(text: &str, expected: &str) {
        let escaped = text.contains(['|', '\\']);
        assert_eq!(
            show(classify_atom(text, escaped, 10, ReadCase::Upcase)),
            expected,
            "classifying {text:?}"
        );
    }

    #[test]
    fn read_base_reads_integers_and_ratios_in_that_radix_and_floats_in_decimal() {
        let base = |text: &str, radix: u32| show(classify_atom(text, false, radix, ReadCase::Upcase));
        assert_eq!(base("FF", 16), "Integer(255)");
        assert_eq!(base("-ff/3", 16), "Integer(-85)");
        assert_eq!(base("1E5", 16), "Integer(485)");
        assert_eq!(base("1.5", 16), "Float(1.5)");
        assert_eq!(base("10.", 16), "Integer(10)");
        assert_eq!(base("101", 2), "Integer(5)");
        // Not an integer in base 2, and not a float: a symbol.
        assert!(base("2", 2).starts_with("Symbol"), "{}", base("2", 2));
        assert!(base("G", 16).starts_with("Symbol"));
        assert!(base("+", 16).starts_with("Symbol"));
        assert_eq!(base("Z", 36), "Integer(35)");
    }

    #[test]
    fn integers() {
        check("0", "Integer(0)");
        check("-5", "Integer(-5)");
        check("+5", "Integer(5)");
        check("1.", "Integer(1)");
        check("-1.", "Integer(-1)");
        check("007", "Integer(7)");
        check("9223372036854775807", "Integer(9223372036854775807)");
        check("-9223372036854775808", "Integer(-9223372036854775808)");
        check("9223372036854775808", "BigInteger(9223372036854775808)");
        check(
            "-123456789012345678901234567890",
            "BigInteger(-123456789012345678901234567890)",
        );
    }

    #[test]
    fn ratios() {
        check("1/3", "Ratio(1, 3)");
        check("2/4", "Ratio(1, 2)");
        check("-6/4", "Ratio(-3, 2)");
        check("4/2", "Integer(2)");
        check("0/5", "Integer(0)");
        check("+10/5", "Integer(2)");
        check("100000000000000000000/3", "Ratio(100000000000000000000, 3)");
        check(
            "1/0",
            "error: division by zero in the ratio 1/0: the denominator is 0",
        );
        check(
            "1/-2",
            "Symbol(SymbolName { package: None, name: \"1/-2\" })",
        );
        check("1/", "Symbol(SymbolName { package: None, name: \"1/\" })");
        check("/2", "Symbol(SymbolName { package: None, name: \"/2\" })");
    }

    #[test]
    fn floats() {
        check("1.5", "Float(1.5)");
        check("1e10", "Float(10000000000.0)");
        check("1.5d0", "Float(1.5)");
        check("1.5f0", "Float(1.5)");
        check("1.5s0", "Float(1.5)");
        check("1.5L0", "Float(1.5)");
        check("-.5e3", "Float(-500.0)");
        check("+1.0", "Float(1.0)");
        check(".5", "Float(0.5)");
        check("1.e2", "Float(100.0)");
        check("1E+2", "Float(100.0)");
        check("2.5e-1", "Float(0.25)");
        check("0.1", "Float(0.1)");
        check(
            "1e400",
            "error: the float 1e400 is too large for a double-float",
        );
        check("1e-400", "Float(0.0)");
    }

    #[test]
    fn symbols_that_look_numeric() {
        for text in [
            "1+", "1-", "+", "-", "...", "..", "+.", "-.", "1e", "1e+", "1.5e", "1.2.3", "e10",
            ".e5", "1x",
        ] {
            let expected = format!(
                "Symbol(SymbolName {{ package: None, name: {:?} }})",
                text.to_uppercase()
            );
            check(text, &expected);
        }
        check(".", "Dot");
    }

    #[test]
    fn symbols() {
        check("foo", "Symbol(SymbolName { package: None, name: \"FOO\" })");
        check(
            "|Mixed Case|",
            "Symbol(SymbolName { package: None, name: \"Mixed Case\" })",
        );
        check(
            "ab|cD|e",
            "Symbol(SymbolName { package: None, name: \"ABcDE\" })",
        );
        check(
            r"a\bc",
            "Symbol(SymbolName { package: None, name: \"AbC\" })",
        );
        check(r"\1", "Symbol(SymbolName { package: None, name: \"1\" })");
        check(
            "|1.5|",
            "Symbol(SymbolName { package: None, name: \"1.5\" })",
        );
        check(
            r"|a\|b|",
            "Symbol(SymbolName { package: None, name: \"a|b\" })",
        );
        check("\\.", "Symbol(SymbolName { package: None, name: \".\" })");
        check(
            ":key",
            "Symbol(SymbolName { package: Keyword, name: \"KEY\" })",
        );
        check(
            "::key",
            "Symbol(SymbolName { package: Keyword, name: \"KEY\" })",
        );
        check(
            "cl:car",
            "Symbol(SymbolName { package: External(\"CL\"), name: \"CAR\" })",
        );
        check(
            "my-pkg::x",
            "Symbol(SymbolName { package: Internal(\"MY-PKG\"), name: \"X\" })",
        );
        check(
            "|p|:|x|",
            "Symbol(SymbolName { package: External(\"p\"), name: \"x\" })",
        );
        check(
            r"a\:b",
            "Symbol(SymbolName { package: None, name: \"A:B\" })",
        );
        check(
            "straße",
            "Symbol(SymbolName { package: None, name: \"STRAßE\" })",
        );
        check("λx", "Symbol(SymbolName { package: None, name: \"ΛX\" })");
        check("a:b:c", "error: too many colons in the symbol a:b:c");
        check("a:::b", "error: too many colons in the symbol a:::b");
        check(
            "pkg:",
            "error: expected a symbol name after the package marker in pkg:",
        );
        check(
            ":",
            "error: expected a symbol name after the package marker in :",
        );
        check(
            "a\u{7}b",
            "error: invalid character U+0007 in the token a\\u{7}b; escape it with \\ or |...|",
        );
    }

    #[test]
    fn radix() {
        let r = |prefix: &str, radix, body: &str| match classify_radix(prefix, radix, body, false) {
            Ok(kind) => format!("{kind:?}"),
            Err(message) => format!("error: {message}"),
        };
        assert_eq!(r("#x", 16, "FF"), "Integer(255)");
        assert_eq!(r("#x", 16, "-ff"), "Integer(-255)");
        assert_eq!(r("#b", 2, "+101"), "Integer(5)");
        assert_eq!(r("#o", 8, "777"), "Integer(511)");
        assert_eq!(r("#36r", 36, "ZZ"), "Integer(1295)");
        assert_eq!(
            r("#x", 16, "10/4"),
            "Ratio(4, 1)".replace("Ratio(4, 1)", "Integer(4)")
        );
        assert_eq!(r("#b", 2, "1/10"), "Ratio(1, 2)");
        assert_eq!(
            r("#x", 16, "FFFFFFFFFFFFFFFFFF"),
            "BigInteger(4722366482869645213695)"
        );
        assert_eq!(
            r("#x", 16, "1.5"),
            "error: expected a rational number in radix 16 after #x, found '1.5'"
        );
        assert_eq!(
            r("#b", 2, "102"),
            "error: expected a rational number in radix 2 after #b, found '102'"
        );
        assert_eq!(
            r("#x", 16, ""),
            "error: expected a rational number in radix 16 after #x, found nothing"
        );
        assert_eq!(
            r("#x", 16, "1_0"),
            "error: expected a rational number in radix 16 after #x, found '1_0'"
        );
        assert_eq!(
            r("#x", 16, "1/0"),
            "error: division by zero in #x1/0: the denominator is 0"
        );
        assert_eq!(
            r("#1r", 0, "0"),
            "error: the radix in #1r must be a decimal number from 2 to 36"
        );
    }

    #[test]
    fn character_names() {
        let c = |name: &str| {
            char_from_name(name).map_err(|e| e.split(':').next().unwrap_or("").to_string())
        };
        assert_eq!(c("a"), Ok('a'));
        assert_eq!(c("("), Ok('('));
        assert_eq!(c("é"), Ok('é'));
        assert_eq!(c("Space"), Ok(' '));
        assert_eq!(c("SPACE"), Ok(' '));
        assert_eq!(c("newline"), Ok('\n'));
        assert_eq!(c("Linefeed"), Ok('\n'));
        assert_eq!(c("Tab"), Ok('\t'));
        assert_eq!(c("Return"), Ok('\r'));
        assert_eq!(c("Backspace"), Ok('\x08'));
        assert_eq!(c("Rubout"), Ok('\x7f'));
        assert_eq!(c("Nul"), Ok('\0'));
        assert_eq!(c("Null"), Ok('\0'));
        assert_eq!(c("Page"), Ok('\x0c'));
        assert_eq!(c("Escape"), Ok('\x1b'));
        assert_eq!(c("U+41"), Ok('A'));
        assert_eq!(c("u+03bb"), Ok('λ'));
        assert_eq!(
            c("U+D800"),
            Err("#\\U+D800 is not a valid Unicode code point".to_string())
        );
        assert_eq!(c("Foo"), Err("unknown character name #\\Foo".to_string()));
    }

    #[test]
    fn the_readtable_case_converts_only_unescaped_letters() {
        let name = |text: &str, case: ReadCase| match classify_atom(text, text.contains(['|', '\\']), 10, case) {
            Ok(Classified::Datum(DatumKind::Symbol(s))) => s.name,
            other => panic!("{text}: {:?}", other.is_ok()),
        };
        assert_eq!(name("Hello", ReadCase::Upcase), "HELLO");
        assert_eq!(name("Hello", ReadCase::Downcase), "hello");
        assert_eq!(name("Hello", ReadCase::Preserve), "Hello");
        // :invert flips a token whose unescaped letters share one case, else keeps it.
        assert_eq!(name("hello", ReadCase::Invert), "HELLO");
        assert_eq!(name("HELLO", ReadCase::Invert), "hello");
        assert_eq!(name("Hello", ReadCase::Invert), "Hello");
        assert_eq!(name("abc|DEF|", ReadCase::Invert), "ABCDEF");
        assert_eq!(name("a\\Bc", ReadCase::Downcase), "aBc");
        assert_eq!(name("|Foo|bar", ReadCase::Upcase), "FooBAR");
    }
}
