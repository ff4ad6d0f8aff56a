//! Builtins: characters (comparison, case, classification, names and codes).
//!
//! Characters are Unicode scalar values; case mappings only apply when a
//! character maps to exactly one character (as SBCL's `char-upcase`).
//! Names follow SBCL: the ASCII control characters have their
//! abbreviations (`Nul`, `Soh`, ... `Rubout`), other characters print as
//! themselves.

use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::ctx::{Ctx, string_designator};
use crate::runtime::raise::{LResult, Raise};
use crate::runtime::chars::{char_downcase, char_name_of, char_upcase, fold, graphic_char_p, lower_case_p, name_char_of, upper_case_p};

type A<'a, 'gc> = &'a [Value<'gc>];

fn char_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<char, Raise<'gc>> {
    match v {
        Value::Char(c) => Ok(c),
        other => Err(ctx.type_error(other, "CHARACTER")),
    }
}

fn codes<'gc>(ctx: &Ctx<'_, 'gc>, a: A<'_, 'gc>, fold_case: bool) -> Result<Vec<u32>, Raise<'gc>> {
    a.iter()
        .map(|&v| char_arg(ctx, v).map(|c| if fold_case { fold(c) } else { c as u32 }))
        .collect()
}

/// Every adjacent pair satisfies `ok`.
fn monotone<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, fold_case: bool, ok: fn(u32, u32) -> bool) -> LResult<'gc> {
    let cs = codes(ctx, a, fold_case)?;
    Ok(ctx.bool(cs.windows(2).all(|w| ok(w[0], w[1]))))
}

/// No two arguments are equal.
fn all_different<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, fold_case: bool) -> LResult<'gc> {
    let cs = codes(ctx, a, fold_case)?;
    for i in 0..cs.len() {
        if cs[i + 1..].contains(&cs[i]) {
            return Ok(Value::Nil);
        }
    }
    Ok(ctx.t())
}

fn char_eq<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, false, |x, y| x == y)
}
fn char_ne<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    all_different(ctx, a, false)
}
fn char_lt<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, false, |x, y| x < y)
}
fn char_gt<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, false, |x, y| x > y)
}
fn char_le<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, false, |x, y| x <= y)
}
fn char_ge<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, false, |x, y| x >= y)
}
fn char_equal<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, true, |x, y| x == y)
}
fn char_not_equal<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    all_different(ctx, a, true)
}
fn char_lessp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, true, |x, y| x < y)
}
fn char_greaterp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, true, |x, y| x > y)
}
fn char_not_greaterp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, true, |x, y| x <= y)
}
fn char_not_lessp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    monotone(ctx, a, true, |x, y| x >= y)
}

fn char_code<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum(char_arg(ctx, a[0])? as i64))
}

fn code_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Fixnum(n) if (0..0x110000).contains(&n) => Ok(char::from_u32(n as u32).map(Value::Char).unwrap_or(Value::Nil)),
        other => Err(ctx.type_error(other, "(INTEGER 0 (1114112))")),
    }
}

fn upcase<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Char(char_upcase(char_arg(ctx, a[0])?)))
}

fn downcase<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Char(char_downcase(char_arg(ctx, a[0])?)))
}

fn alpha_char_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(ctx.bool(c.is_alphabetic()))
}

fn radix_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Option<&Value<'gc>>) -> Result<u32, Raise<'gc>> {
    match v {
        None => Ok(10),
        Some(Value::Fixnum(r)) if (2..=36).contains(r) => Ok(*r as u32),
        Some(&other) => Err(ctx.type_error(other, "(INTEGER 2 36)")),
    }
}

fn digit_char_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    let radix = radix_arg(ctx, a.get(1))?;
    Ok(c.to_digit(radix).map(|d| Value::Fixnum(d as i64)).unwrap_or(Value::Nil))
}

fn digit_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let radix = radix_arg(ctx, a.get(1))?;
    match a[0] {
        Value::Fixnum(w) if w >= 0 => Ok(if (w as u64) < radix as u64 {
            std::char::from_digit(w as u32, radix).map(|c| Value::Char(c.to_ascii_uppercase())).unwrap_or(Value::Nil)
        } else {
            Value::Nil
        }),
        Value::BigInt(_) => Ok(Value::Nil),
        other => Err(ctx.type_error(other, "(INTEGER 0)")),
    }
}

fn alphanumericp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(ctx.bool(c.is_alphabetic() || c.is_ascii_digit()))
}

fn upper_case<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(ctx.bool(upper_case_p(c)))
}

fn lower_case<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(ctx.bool(lower_case_p(c)))
}

fn both_case<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(ctx.bool(upper_case_p(c) || lower_case_p(c)))
}

fn whitespace_char_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(ctx.bool(matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}' | '\u{b}')))
}

fn graphic<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(ctx.bool(graphic_char_p(c)))
}

fn standard_char_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(ctx.bool((' '..='~').contains(&c) || c == '\n'))
}

fn characterp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Char(_))))
}

fn char_name<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let c = char_arg(ctx, a[0])?;
    Ok(match char_name_of(c) {
        Some(n) => alloc::string(ctx.mc, &n),
        None => Value::Nil,
    })
}

fn name_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if let Value::Char(c) = a[0] {
        return Ok(Value::Char(c));
    }
    let name = string_designator(ctx, a[0])?;
    // A one-character name is only a name when it is a character designator.
    if name.chars().count() == 1 && !matches!(a[0], Value::Char(_)) {
        return Ok(Value::Nil);
    }
    Ok(name_char_of(&name).map(Value::Char).unwrap_or(Value::Nil))
}

/// (character designator): a character, or a one-character string or symbol name.
fn character<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Char(c) => Ok(Value::Char(c)),
        Value::String(_) | Value::Symbol(_) | Value::Nil => {
            let s = string_designator(ctx, a[0])?;
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Ok(Value::Char(c)),
                _ => Err(ctx.type_error(a[0], "CHARACTER")),
            }
        }
        other => Err(ctx.type_error(other, "CHARACTER")),
    }
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("CHAR=", 1, MANY, char_eq),
    cl("CHAR/=", 1, MANY, char_ne),
    cl("CHAR<", 1, MANY, char_lt),
    cl("CHAR>", 1, MANY, char_gt),
    cl("CHAR<=", 1, MANY, char_le),
    cl("CHAR>=", 1, MANY, char_ge),
    cl("CHAR-EQUAL", 1, MANY, char_equal),
    cl("CHAR-NOT-EQUAL", 1, MANY, char_not_equal),
    cl("CHAR-LESSP", 1, MANY, char_lessp),
    cl("CHAR-GREATERP", 1, MANY, char_greaterp),
    cl("CHAR-NOT-GREATERP", 1, MANY, char_not_greaterp),
    cl("CHAR-NOT-LESSP", 1, MANY, char_not_lessp),
    cl("CHAR-CODE", 1, 1, char_code),
    cl("CHAR-INT", 1, 1, char_code),
    cl("CODE-CHAR", 1, 1, code_char),
    cl("CHAR-UPCASE", 1, 1, upcase),
    cl("CHAR-DOWNCASE", 1, 1, downcase),
    cl("ALPHA-CHAR-P", 1, 1, alpha_char_p),
    cl("DIGIT-CHAR-P", 1, 2, digit_char_p),
    cl("DIGIT-CHAR", 1, 2, digit_char),
    cl("ALPHANUMERICP", 1, 1, alphanumericp),
    cl("UPPER-CASE-P", 1, 1, upper_case),
    cl("LOWER-CASE-P", 1, 1, lower_case),
    cl("BOTH-CASE-P", 1, 1, both_case),
    sys("WHITESPACE-CHAR-P", 1, 1, whitespace_char_p),
    cl("GRAPHIC-CHAR-P", 1, 1, graphic),
    cl("STANDARD-CHAR-P", 1, 1, standard_char_p),
    cl("CHARACTERP", 1, 1, characterp),
    cl("CHAR-NAME", 1, 1, char_name),
    cl("NAME-CHAR", 1, 1, name_char),
    cl("CHARACTER", 1, 1, character),
];
