//! The printer: values to text, as SBCL prints them with
//! `*print-pretty*` NIL and `*read-default-float-format*` DOUBLE-FLOAT.
//!
//! `escape` is `*print-escape*`: true for `prin1`/`print`/`~s`, false for
//! `princ`/`~a`. Symbols are qualified relative to the current package.
//! Invariant: printing never recurses deeper than [`MAX_PRINT_DEPTH`] on the
//! Rust stack; deeper structure prints as `#`. List spines are iterated.

use gc_arena::Gc;

use crate::packages::{FindStatus, Packages};
use crate::value::*;

/// Nesting depth beyond which sub-structures print as `#`.
pub const MAX_PRINT_DEPTH: usize = 2000;

/// What the printer needs to know of the environment.
pub struct PrintContext<'a, 'gc> {
    pub packages: &'a Packages<'gc>,
    pub current_package: Ptr<'gc, Package<'gc>>,
    pub escape: bool,
    /// Report strings for conditions, supplied by the evaluator (which can run
    /// report functions); when None, conditions print unreadably.
    pub condition_report: Option<fn(Value<'gc>, &PrintContext<'_, 'gc>) -> Option<String>>,
}

pub fn print_to_string<'gc>(v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> String {
    let mut out = String::new();
    write_value(&mut out, v, ctx, 0);
    out
}

pub fn write_value<'gc>(out: &mut String, v: Value<'gc>, ctx: &PrintContext<'_, 'gc>, depth: usize) {
    if depth > MAX_PRINT_DEPTH {
        out.push('#');
        return;
    }
    match v {
        Value::Nil => out.push_str("NIL"),
        Value::Unbound => out.push_str("#<unbound>"),
        Value::Fixnum(i) => out.push_str(&i.to_string()),
        Value::BigInt(b) => out.push_str(&b.0.to_string()),
        Value::Ratio(r) => {
            out.push_str(&r.num.to_string());
            out.push('/');
            out.push_str(&r.den.to_string());
        }
        Value::Float(f) => out.push_str(&format_float(f.val)),
        Value::Char(c) => {
            if ctx.escape {
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
        Value::String(s) => {
            let s = s.borrow();
            if ctx.escape {
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
        Value::Symbol(s) => write_symbol(out, s, ctx),
        Value::Cons(_) => write_list(out, v, ctx, depth),
        Value::Vector(vec) => {
            let vec = vec.borrow();
            out.push_str("#(");
            for (i, &item) in vec.active().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_value(out, item, ctx, depth + 1);
            }
            out.push(')');
        }
        Value::Array(a) => {
            let a = a.borrow();
            out.push('#');
            out.push_str(&a.dims.len().to_string());
            out.push('A');
            if a.dims.is_empty() {
                out.push(' ');
                write_value(out, a.items.first().copied().unwrap_or(Value::Nil), ctx, depth + 1);
            } else {
                write_array_level(out, &a.dims, &a.items, ctx, depth);
            }
        }
        Value::Function(f) => {
            out.push_str("#<FUNCTION ");
            match f.name() {
                Value::Nil => out.push_str("(LAMBDA)"),
                name => write_value(out, name, &PrintContext { escape: true, ..*ctx }, depth + 1),
            }
            out.push('>');
        }
        Value::Struct(s) => {
            if s.stype.is_condition {
                if !ctx.escape
                    && let Some(report) = ctx.condition_report
                    && let Some(text) = report(v, ctx)
                {
                    out.push_str(&text);
                    return;
                }
                out.push_str("#<");
                write_value(out, s.stype.name, &PrintContext { escape: true, ..*ctx }, depth + 1);
                out.push_str(" {");
                out.push_str(&format!("{:X}", Gc::as_ptr(s) as usize));
                out.push_str("}>");
                return;
            }
            out.push_str("#S(");
            write_value(out, s.stype.name, &PrintContext { escape: true, ..*ctx }, depth + 1);
            let names = s.stype.slot_names.borrow();
            let slots = s.slots.borrow();
            for (name, &val) in names.iter().zip(slots.iter()) {
                out.push_str(" :");
                if let Value::Symbol(sym) = name {
                    write_symbol_name(out, &sym.name, ctx.escape);
                }
                out.push(' ');
                write_value(out, val, ctx, depth + 1);
            }
            out.push(')');
        }
        Value::HashTable(h) => {
            let h = h.borrow();
            let test = match h.test {
                HashTest::Eq => "EQ",
                HashTest::Eql => "EQL",
                HashTest::Equal => "EQUAL",
                HashTest::Equalp => "EQUALP",
            };
            out.push_str(&format!("#<HASH-TABLE :TEST {test} :COUNT {}>", h.count));
        }
        Value::Package(p) => out.push_str(&format!("#<PACKAGE \"{}\">", p.name)),
        Value::Stream(s) => out.push_str(&format!("#<STREAM {}>", s.borrow().name)),
        Value::RandomState(_) => out.push_str("#<RANDOM-STATE>"),
        Value::StructType(t) => {
            out.push_str("#<STRUCTURE-CLASS ");
            write_value(out, t.name, ctx, depth + 1);
            out.push('>');
        }
        Value::Cell(_) => out.push_str("#<value-cell>"),
        Value::Proto(_) => out.push_str("#<code>"),
    }
}

fn write_array_level<'gc>(
    out: &mut String,
    dims: &[usize],
    items: &[Value<'gc>],
    ctx: &PrintContext<'_, 'gc>,
    depth: usize,
) {
    out.push('(');
    if dims.len() == 1 {
        for (i, &item) in items.iter().take(dims[0]).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            write_value(out, item, ctx, depth + 1);
        }
    } else {
        let stride: usize = dims[1..].iter().product();
        for i in 0..dims[0] {
            if i > 0 {
                out.push(' ');
            }
            let start = (i * stride).min(items.len());
            let end = (start + stride).min(items.len());
            write_array_level(out, &dims[1..], &items[start..end], ctx, depth + 1);
        }
    }
    out.push(')');
}

fn write_list<'gc>(out: &mut String, v: Value<'gc>, ctx: &PrintContext<'_, 'gc>, depth: usize) {
    out.push('(');
    let mut cur = v;
    let mut first = true;
    loop {
        match cur {
            Value::Cons(c) => {
                if !first {
                    out.push(' ');
                }
                first = false;
                write_value(out, c.car.get(), ctx, depth + 1);
                cur = c.cdr.get();
            }
            Value::Nil => break,
            other => {
                out.push_str(" . ");
                write_value(out, other, ctx, depth + 1);
                break;
            }
        }
    }
    out.push(')');
}

fn write_symbol<'gc>(out: &mut String, s: Ptr<'gc, Symbol<'gc>>, ctx: &PrintContext<'_, 'gc>) {
    if ctx.escape {
        match s.package.get() {
            None => out.push_str("#:"),
            Some(p) if Gc::ptr_eq(p, ctx.packages.keyword) => out.push(':'),
            Some(p) => {
                let accessible = matches!(
                    ctx.packages.find_symbol(ctx.current_package, &s.name),
                    Some((Value::Symbol(found), _)) if Gc::ptr_eq(found, s)
                );
                if !accessible {
                    write_symbol_name(out, &p.name, true);
                    let external = matches!(
                        ctx.packages.find_symbol(p, &s.name),
                        Some((_, FindStatus::External))
                    );
                    out.push_str(if external { ":" } else { "::" });
                }
            }
        }
    }
    write_symbol_name(out, &s.name, ctx.escape);
}

/// Write a symbol name, with `|...|` when escaping and the name would not read back as itself.
pub fn write_symbol_name(out: &mut String, name: &str, escape: bool) {
    if escape && needs_bars(name) {
        out.push('|');
        for c in name.chars() {
            if c == '|' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('|');
    } else {
        out.push_str(name);
    }
}

fn needs_bars(name: &str) -> bool {
    if name.is_empty() {
        return true;
    }
    if name.chars().any(|c| {
        c.is_lowercase()
            || c.is_whitespace()
            || matches!(c, '(' | ')' | '\'' | '"' | '`' | ',' | ';' | '|' | '\\' | ':' | '#')
    }) {
        // '#' is only special at the start of a token.
        let only_inner_hash = name.chars().all(|c| {
            !(c.is_lowercase()
                || c.is_whitespace()
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
        return !a.is_empty() && !b.is_empty() && a.chars().all(|c| c.is_ascii_digit()) && b.chars().all(|c| c.is_ascii_digit());
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
}
