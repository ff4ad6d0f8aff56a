//! `format` directives, interpreted over a control string.
//!
//! The engine is pure: it prints values through the heap printer and returns
//! the text; the `format` builtin writes it to the destination.

use mprof_heap::Value;
use mprof_heap::printer::{PrintContext, print_to_string};

/// Format `control` with `args`; `Err` carries a message naming the directive.
pub fn format_to_string<'gc>(ctx: &PrintContext<'_, 'gc>, control: &str, args: &[Value<'gc>]) -> Result<String, String> {
    format_with_column(ctx, control, args, 0)
}

/// As [`format_to_string`], starting at output column `column` (for `~&`).
pub fn format_with_column<'gc>(
    ctx: &PrintContext<'_, 'gc>,
    control: &str,
    args: &[Value<'gc>],
    column: usize,
) -> Result<String, String> {
    let mut out = String::new();
    let chars: Vec<char> = control.chars().collect();
    let mut i = 0;
    let mut arg = 0;
    let next_arg = |arg: &mut usize, d: char| -> Result<Value<'gc>, String> {
        let v = args.get(*arg).copied().ok_or_else(|| format!("no more arguments for ~{d}"))?;
        *arg += 1;
        Ok(v)
    };
    let at_line_start = |out: &String| if out.is_empty() { column == 0 } else { out.ends_with('\n') };
    while i < chars.len() {
        let c = chars[i];
        if c != '~' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        // Parameters: numbers or 'c separated by commas, then : and @ modifiers.
        let mut params: Vec<Option<i64>> = Vec::new();
        loop {
            let start = i;
            if i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '-' || chars[i] == '+') {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                let s: String = chars[start..i].iter().collect();
                params.push(s.parse().ok());
            } else if i + 1 < chars.len() && chars[i] == '\'' {
                params.push(Some(chars[i + 1] as i64));
                i += 2;
            } else if i < chars.len() && chars[i] == ',' {
                params.push(None);
            }
            if i < chars.len() && chars[i] == ',' {
                i += 1;
                continue;
            }
            break;
        }
        let mut colon = false;
        let mut at = false;
        while i < chars.len() && (chars[i] == ':' || chars[i] == '@') {
            if chars[i] == ':' {
                colon = true;
            } else {
                at = true;
            }
            i += 1;
        }
        let Some(&d) = chars.get(i) else {
            return Err("the control string ends inside a directive".to_string());
        };
        i += 1;
        let mincol = params.first().copied().flatten().unwrap_or(0).max(0) as usize;
        match d.to_ascii_uppercase() {
            'A' | 'S' => {
                let v = next_arg(&mut arg, d)?;
                let text = if d.eq_ignore_ascii_case(&'a') && colon && v.is_nil() {
                    "()".to_string()
                } else {
                    print_to_string(v, &PrintContext { escape: d.eq_ignore_ascii_case(&'s'), ..*ctx })
                };
                let pad = mincol.saturating_sub(text.chars().count());
                if at {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(&text);
                } else {
                    out.push_str(&text);
                    out.push_str(&" ".repeat(pad));
                }
            }
            'D' | 'B' | 'O' | 'X' => {
                let v = next_arg(&mut arg, d)?;
                let radix = match d.to_ascii_uppercase() {
                    'B' => 2,
                    'O' => 8,
                    'X' => 16,
                    _ => 10,
                };
                let text = match v {
                    Value::Fixnum(n) => {
                        let mut s = to_radix(n.unsigned_abs() as u128, radix);
                        if colon {
                            s = group_digits(&s);
                        }
                        if n < 0 {
                            format!("-{s}")
                        } else if at {
                            format!("+{s}")
                        } else {
                            s
                        }
                    }
                    Value::BigInt(b) => {
                        let s = b.0.to_str_radix(radix as u32).to_uppercase();
                        if at && b.0.sign() != num_bigint::Sign::Minus { format!("+{s}") } else { s }
                    }
                    other => print_to_string(other, &PrintContext { escape: false, ..*ctx }),
                };
                let pad_char = params.get(1).copied().flatten().and_then(|c| char::from_u32(c as u32)).unwrap_or(' ');
                let pad = mincol.saturating_sub(text.chars().count());
                out.extend(std::iter::repeat_n(pad_char, pad));
                out.push_str(&text);
            }
            'C' => {
                let v = next_arg(&mut arg, d)?;
                match v {
                    Value::Char(ch) => {
                        if colon {
                            match mprof_heap::printer::char_name(ch) {
                                Some(n) => out.push_str(n),
                                None => out.push(ch),
                            }
                        } else if at {
                            out.push_str(&print_to_string(v, &PrintContext { escape: true, ..*ctx }));
                        } else {
                            out.push(ch);
                        }
                    }
                    other => return Err(format!("~C needs a character, got {}", print_to_string(other, ctx))),
                }
            }
            '%' => {
                for _ in 0..mincol.max(1) {
                    out.push('\n');
                }
            }
            '&' => {
                let n = params.first().copied().flatten().unwrap_or(1).max(0) as usize;
                if n > 0 {
                    if !at_line_start(&out) {
                        out.push('\n');
                    }
                    for _ in 1..n {
                        out.push('\n');
                    }
                }
            }
            '~' => {
                for _ in 0..mincol.max(1) {
                    out.push('~');
                }
            }
            '\n' => {
                // ~<newline>: skip the newline and following whitespace.
                while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
                    i += 1;
                }
            }
            other => return Err(format!("unknown format directive ~{other}")),
        }
    }
    Ok(out)
}

fn to_radix(mut n: u128, radix: u128) -> String {
    if n == 0 {
        return "0".to_string();
    }
    let mut digits = Vec::new();
    while n > 0 {
        let d = (n % radix) as u32;
        digits.push(std::char::from_digit(d, radix as u32).unwrap_or('?').to_ascii_uppercase());
        n /= radix;
    }
    digits.iter().rev().collect()
}

fn group_digits(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if i > 0 && (chars.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(*c);
    }
    out
}
