//! Printing atoms: numbers in any `*print-base*`, symbols with package
//! prefixes, `|...|` escapes and `*print-case*`, characters and strings.
//! Each function appends to a `String`; none looks inside another object,
//! so nothing here depends on the depth of the data.

use gc_arena::Gc;
use num_bigint::BigInt;

use mprof_reader::{ReadCase, downcase_char, upcase_char};

use super::{Case, PrintContext};
use crate::packages::FindStatus;
use crate::value::*;

/// An integer in `base`, digits above 9 upper-case as SBCL prints them.
pub fn integer(out: &mut String, n: &BigInt, base: u32, radix: bool) {
    radix_prefix(out, base, radix, true);
    out.push_str(&n.to_str_radix(base).to_uppercase());
    if radix && base == 10 {
        out.push('.');
    }
}

/// A fixnum, without going through a bignum in the common base-10 case.
pub fn fixnum(out: &mut String, i: i64, base: u32, radix: bool) {
    if base == 10 && !radix {
        out.push_str(&i.to_string());
    } else {
        integer(out, &BigInt::from(i), base, radix);
    }
}

pub fn ratio(out: &mut String, num: &BigInt, den: &BigInt, base: u32, radix: bool) {
    radix_prefix(out, base, radix, false);
    out.push_str(&num.to_str_radix(base).to_uppercase());
    out.push('/');
    out.push_str(&den.to_str_radix(base).to_uppercase());
}

/// `#b`, `#o`, `#x` or `#NNr`; base 10 integers get a trailing dot instead,
/// ratios `#10r`.
fn radix_prefix(out: &mut String, base: u32, radix: bool, integer: bool) {
    if !radix {
        return;
    }
    match base {
        2 => out.push_str("#b"),
        8 => out.push_str("#o"),
        16 => out.push_str("#x"),
        10 if integer => {}
        b => {
            out.push('#');
            out.push_str(&b.to_string());
            out.push('r');
        }
    }
}

pub fn character(out: &mut String, c: char, escape: bool) {
    if escape {
        out.push_str("#\\");
        // SBCL prints graphic standard characters, Space included, as themselves.
        match char_name(c).filter(|_| c != ' ') {
            Some(name) => out.push_str(name),
            None => out.push(c),
        }
    } else {
        out.push(c);
    }
}

pub fn string(out: &mut String, s: &LString, escape: bool) {
    if escape {
        out.push('"');
        for &c in s.active() {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
    } else {
        out.extend(s.active().iter());
    }
}

/// A real part of a complex number: an integer, a ratio or a double.
fn real(out: &mut String, v: Value<'_>, base: u32, radix: bool) {
    match v {
        Value::Fixnum(i) => fixnum(out, i, base, radix),
        Value::BigInt(b) => integer(out, &b.0, base, radix),
        Value::Ratio(r) => ratio(out, &r.num, &r.den, base, radix),
        Value::Float(f) => out.push_str(&format_float(f.val)),
        _ => out.push('?'),
    }
}

/// `#C(re im)`.
pub fn complex(out: &mut String, c: &Complex<'_>, base: u32, radix: bool) {
    out.push_str("#C(");
    match *c {
        Complex::Double(re, im) => {
            out.push_str(&format_float(re));
            out.push(' ');
            out.push_str(&format_float(im));
        }
        Complex::Rational(re, im) => {
            real(out, re, base, radix);
            out.push(' ');
            real(out, im, base, radix);
        }
    }
    out.push(')');
}

pub fn symbol<'gc>(out: &mut String, s: Ptr<'gc, Symbol<'gc>>, ctx: &PrintContext<'_, 'gc>) {
    let escape = ctx.escaping();
    let (case, read_case) = (ctx.settings.case, ctx.settings.read_case);
    if escape {
        match s.package.get() {
            None => {
                if ctx.settings.gensym || ctx.settings.readably {
                    out.push_str("#:");
                }
            }
            Some(p) if Gc::ptr_eq(p, ctx.packages.keyword) => out.push(':'),
            Some(p) => {
                let accessible = matches!(
                    ctx.packages.find_symbol(ctx.current_package, &s.name),
                    Some((Value::Symbol(found), _)) if Gc::ptr_eq(found, s)
                );
                if !accessible {
                    symbol_name_cased(out, &p.name(), true, case, read_case);
                    let external =
                        matches!(ctx.packages.find_symbol(p, &s.name), Some((_, FindStatus::External)));
                    out.push_str(if external { ":" } else { "::" });
                }
            }
        }
    }
    symbol_name_cased(out, &s.name, escape, case, read_case);
}

/// Write a symbol name, with `|...|` when escaping and the name would not read back as itself.
pub fn write_symbol_name(out: &mut String, name: &str, escape: bool) {
    symbol_name_cased(out, name, escape, Case::Upcase, ReadCase::Upcase);
}

/// A symbol name under `*print-case*` and the readtable case (CLHS 22.1.3.3.2):
/// with `:upcase`, only upper-case letters follow `*print-case*` (a lower-case
/// letter is escaped anyway); with `:downcase`, only lower-case ones; `:preserve`
/// prints the name as it is and `:invert` inverts a name whose letters share one
/// case, both ignoring `*print-case*`. A name printed between bars is printed as it is.
pub fn symbol_name_cased(out: &mut String, name: &str, escape: bool, case: Case, read_case: ReadCase) {
    if escape && needs_bars_in(name, read_case) {
        out.push('|');
        for c in name.chars() {
            if c == '|' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('|');
        return;
    }
    match read_case {
        ReadCase::Upcase => {}
        ReadCase::Preserve => return out.push_str(name),
        ReadCase::Invert => {
            let upper = name.chars().any(|c| c.is_uppercase());
            let lower = name.chars().any(|c| c.is_lowercase());
            return match (upper, lower) {
                (true, false) => out.extend(name.chars().map(downcase_char)),
                (false, true) => out.extend(name.chars().map(upcase_char)),
                _ => out.push_str(name),
            };
        }
        ReadCase::Downcase => {
            return match case {
                Case::Downcase => out.push_str(name),
                Case::Upcase => out.extend(name.chars().map(|c| if c.is_lowercase() { upcase_char(c) } else { c })),
                Case::Capitalize => {
                    let mut in_word = false;
                    for c in name.chars() {
                        out.push(if !in_word && c.is_lowercase() { upcase_char(c) } else { c });
                        in_word = c.is_alphanumeric();
                    }
                }
            };
        }
    }
    match case {
        Case::Upcase => out.push_str(name),
        Case::Downcase => out.extend(name.chars().map(|c| if c.is_uppercase() { lower(c) } else { c })),
        Case::Capitalize => {
            // A word is a run of alphanumeric characters; its first letter stays upper case.
            let mut in_word = false;
            for c in name.chars() {
                if c.is_alphanumeric() {
                    out.push(if in_word && c.is_uppercase() { lower(c) } else { c });
                    in_word = true;
                } else {
                    out.push(c);
                    in_word = false;
                }
            }
        }
    }
}

fn lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// Whether a symbol name must be printed between bars to read back as itself under
/// the standard readtable (`:upcase`).
pub fn needs_bars(name: &str) -> bool {
    needs_bars_in(name, ReadCase::Upcase)
}

/// Whether a symbol name must be printed between bars to read back as itself under
/// a readtable of case `read_case`: a letter the reader would convert needs them
/// (lower case under `:upcase`, upper case under `:downcase`; none otherwise), as do
/// syntax characters and names that would read as numbers or dots.
pub fn needs_bars_in(name: &str, read_case: ReadCase) -> bool {
    if name.is_empty() {
        return true;
    }
    let converted = |c: char| match read_case {
        ReadCase::Upcase => c.is_lowercase(),
        ReadCase::Downcase => c.is_uppercase(),
        ReadCase::Preserve | ReadCase::Invert => false,
    };
    if name.chars().any(converted) {
        return true;
    }
    if name.chars().any(|c| {
        c.is_whitespace()
            || matches!(c, '(' | ')' | '\'' | '"' | '`' | ',' | ';' | '|' | '\\' | ':' | '#')
    }) {
        // '#' is only special at the start of a token.
        let only_inner_hash = name.chars().all(|c| {
            !(c.is_whitespace()
                || matches!(c, '(' | ')' | '\'' | '"' | '`' | ',' | ';' | '|' | '\\' | ':'))
        }) && !name.starts_with('#');
        return !only_inner_hash;
    }
    if name.chars().all(|c| c == '.') {
        return true;
    }
    looks_like_number(name)
}

fn looks_like_number(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if body.is_empty() {
        return false;
    }
    let body = body.strip_suffix('.').unwrap_or(body);
    if !body.is_empty() && body.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    if let Some((a, b)) = body.split_once('/') {
        return !a.is_empty()
            && !b.is_empty()
            && a.chars().all(|c| c.is_ascii_digit())
            && b.chars().all(|c| c.is_ascii_digit());
    }
    // A float: digits with a dot and/or an exponent marker.
    let lower = body.to_ascii_lowercase();
    let (mant, exp) = match lower.find(['e', 'd', 'f', 's', 'l']) {
        Some(i) => (&lower[..i], Some(&lower[i + 1..])),
        None => (&lower[..], None),
    };
    let mant_ok = {
        let (a, b) = mant.split_once('.').unwrap_or((mant, ""));
        (a.chars().all(|c| c.is_ascii_digit()) && b.chars().all(|c| c.is_ascii_digit()))
            && (!a.is_empty() || !b.is_empty())
            && (mant.contains('.') || exp.is_some())
    };
    let exp_ok = match exp {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
        }
    };
    mant_ok && exp_ok
}

/// The name `#\` uses for a character, when it has one (SBCL's names of
/// the ASCII control characters).
pub fn char_name(c: char) -> Option<&'static str> {
    const CONTROL: [&str; 32] = [
        "Nul", "Soh", "Stx", "Etx", "Eot", "Enq", "Ack", "Bel", "Backspace", "Tab", "Newline", "Vt", "Page", "Return",
        "So", "Si", "Dle", "Dc1", "Dc2", "Dc3", "Dc4", "Nak", "Syn", "Etb", "Can", "Em", "Sub", "Esc", "Fs", "Gs", "Rs",
        "Us",
    ];
    match c {
        ' ' => Some("Space"),
        '\u{7f}' => Some("Rubout"),
        c if (c as u32) < 32 => Some(CONTROL[c as usize]),
        _ => None,
    }
}

/// Format a double as SBCL does when doubles are the default float format:
/// shortest round-trip digits; fixed notation for 1e-3 <= |x| < 1e7, else
/// `d.ddde±n`.
pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        return "#<DOUBLE-FLOAT quiet NaN>".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "#.SB-EXT:DOUBLE-FLOAT-POSITIVE-INFINITY".to_string()
        } else {
            "#.SB-EXT:DOUBLE-FLOAT-NEGATIVE-INFINITY".to_string()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0".to_string() } else { "0.0".to_string() };
    }
    let sci = format!("{:e}", x.abs()); // e.g. "1.2345e6" or "5e-324"
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if x < 0.0 { "-" } else { "" };
    let ax = x.abs();
    if (1e-3..1e7).contains(&ax) {
        // Fixed notation: place the decimal point after exp+1 digits.
        let point = exp + 1;
        let s = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
        format!("{sign}{s}")
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}e{exp}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_sbcl_prints_doubles() {
        let cases = [
            (1.5, "1.5"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1234567.0, "1234567.0"),
            (1e7, "1.0e7"),
            (1.5e10, "1.5e10"),
            (0.001, "0.001"),
            (0.0001, "1.0e-4"),
            (-2.5, "-2.5"),
            (std::f64::consts::PI, "3.141592653589793"),
            (0.0, "0.0"),
            (1e-10, "1.0e-10"),
            (123.456, "123.456"),
        ];
        for (x, want) in cases {
            assert_eq!(format_float(x), want, "printing {x:?}");
        }
    }

    #[test]
    fn symbol_names_that_need_bars() {
        for (name, bars) in [
            ("FOO", false),
            ("foo", true),
            ("1+", false),
            ("123", true),
            ("1.5", true),
            ("A B", true),
            ("", true),
            ("FOO#", false),
            ("+", false),
            ("...", true),
            ("1/2", true),
            ("1E5", true),
            ("E5", false),
        ] {
            assert_eq!(needs_bars(name), bars, "needs_bars({name:?})");
        }
    }

    #[test]
    fn integers_in_other_bases_with_and_without_radix() {
        let check = |i: i64, base, radix, want: &str| {
            let mut s = String::new();
            fixnum(&mut s, i, base, radix);
            assert_eq!(s, want, "{i} in base {base} radix {radix}");
        };
        check(255, 16, false, "FF");
        check(255, 16, true, "#xFF");
        check(-5, 2, true, "#b-101");
        check(8, 8, true, "#o10");
        check(12, 10, true, "12.");
        check(35, 36, true, "#36rZ");
        let mut s = String::new();
        ratio(&mut s, &BigInt::from(1), &BigInt::from(2), 10, true);
        assert_eq!(s, "#10r1/2");
    }

    #[test]
    fn print_case_changes_only_upper_case_letters() {
        let cased = |name: &str, case| {
            let mut s = String::new();
            symbol_name_cased(&mut s, name, false, case, ReadCase::Upcase);
            s
        };
        assert_eq!(cased("FOO-BAR", Case::Downcase), "foo-bar");
        assert_eq!(cased("FOO-BAR2X", Case::Capitalize), "Foo-Bar2x");
        assert_eq!(cased("FOO", Case::Upcase), "FOO");
        let mut s = String::new();
        symbol_name_cased(&mut s, "foo", true, Case::Upcase, ReadCase::Upcase);
        assert_eq!(s, "|foo|");
    }
}
