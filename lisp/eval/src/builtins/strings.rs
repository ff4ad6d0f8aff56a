//! Builtins: strings (designators, comparison with bounding indices, case
//! conversion, trimming, element access, construction), `write` and
//! `write-to-string` with their keywords, and `read-from-string`.
//!
//! Comparisons follow CL: the `string<`-family returns the mismatch index
//! (relative to the start of string 1) or NIL; the case-insensitive ones fold
//! characters to upper case as SBCL does. Keyword arguments are parsed here
//! ([`keyword_args`]), so a bad keyword is a program error, never ignored.

use mprof_heap::value::LString;
use mprof_heap::{Value, alloc};

use crate::runtime::chars::{char_downcase, char_upcase, fold};
use crate::runtime::ctx::{Ctx, keyword_args, string_designator};
use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

/// The characters of a string designator.
fn chars_of<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Vec<char>, Raise<'gc>> {
    match v {
        Value::String(s) => Ok(s.borrow().active().to_vec()),
        other => Ok(string_designator(ctx, other)?.chars().collect()),
    }
}

fn new_string<'gc>(ctx: &Ctx<'_, 'gc>, chars: Vec<char>) -> Value<'gc> {
    alloc::string_from_chars(ctx.mc, LString { chars, fill_pointer: None, adjustable: false })
}

/// Bounding indices `start`/`end` (NIL end = length), checked against `len`.
pub(crate) fn bounds<'gc>(ctx: &Ctx<'_, 'gc>, start: Option<Value<'gc>>, end: Option<Value<'gc>>, len: usize) -> Result<(usize, usize), Raise<'gc>> {
    let s = match start {
        None | Some(Value::Nil) => 0,
        Some(v) => ctx.index_arg(v)?,
    };
    let e = match end {
        None | Some(Value::Nil) => len,
        Some(v) => ctx.index_arg(v)?,
    };
    // Bad bounding indices are type errors, as in SBCL.
    if e > len {
        return Err(ctx.type_error(Value::Fixnum(e as i64), &format!("(INTEGER 0 {len})")));
    }
    if s > e {
        return Err(ctx.type_error(Value::Fixnum(s as i64), &format!("(INTEGER 0 {e})")));
    }
    Ok((s, e))
}

#[derive(Clone, Copy)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

/// The shared comparison: returns T/NIL for equality tests, the mismatch index or NIL otherwise.
fn compare<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, op: Cmp, fold_case: bool) -> LResult<'gc> {
    let s1 = chars_of(ctx, a[0])?;
    let s2 = chars_of(ctx, a[1])?;
    let k = keyword_args(ctx, &a[2..], &["START1", "END1", "START2", "END2"])?;
    let (b1, e1) = bounds(ctx, k[0], k[1], s1.len())?;
    let (b2, e2) = bounds(ctx, k[2], k[3], s2.len())?;
    let x = &s1[b1..e1];
    let y = &s2[b2..e2];
    let key = |c: char| if fold_case { fold(c) } else { c as u32 };
    let mismatch = x.iter().zip(y.iter()).position(|(&p, &q)| key(p) != key(q));
    // Ordering of x relative to y, and the index where they first differ.
    let (ord, at) = match mismatch {
        Some(i) => (key(x[i]).cmp(&key(y[i])), i),
        None => (x.len().cmp(&y.len()), x.len().min(y.len())),
    };
    use std::cmp::Ordering::*;
    let index = Value::Fixnum((b1 + at) as i64);
    Ok(match op {
        Cmp::Eq => ctx.bool(ord == Equal),
        Cmp::Ne => if ord != Equal { index } else { Value::Nil },
        Cmp::Lt => if ord == Less { index } else { Value::Nil },
        Cmp::Gt => if ord == Greater { index } else { Value::Nil },
        Cmp::Le => if ord != Greater { index } else { Value::Nil },
        Cmp::Ge => if ord != Less { index } else { Value::Nil },
    })
}

macro_rules! comparisons {
    ($($name:ident => $op:ident, $fold:expr;)*) => {
        $(fn $name<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> { compare(ctx, a, Cmp::$op, $fold) })*
    };
}

comparisons! {
    string_eq => Eq, false;
    string_ne => Ne, false;
    string_lt => Lt, false;
    string_gt => Gt, false;
    string_le => Le, false;
    string_ge => Ge, false;
    string_equal => Eq, true;
    string_not_equal => Ne, true;
    string_lessp => Lt, true;
    string_greaterp => Gt, true;
    string_not_greaterp => Le, true;
    string_not_lessp => Ge, true;
}

fn string<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::String(_) => Ok(a[0]),
        other if mprof_heap::spec::is_displaced_string(other) => Ok(other),
        other => {
            let s = string_designator(ctx, other)?;
            Ok(alloc::string(ctx.mc, &s))
        }
    }
}

#[derive(Clone, Copy)]
enum Case {
    Up,
    Down,
    Capitalize,
}

fn convert_case(chars: &mut [char], start: usize, end: usize, case: Case) {
    match case {
        Case::Up => chars[start..end].iter_mut().for_each(|c| *c = char_upcase(*c)),
        Case::Down => chars[start..end].iter_mut().for_each(|c| *c = char_downcase(*c)),
        Case::Capitalize => {
            let mut in_word = false;
            for c in &mut chars[start..end] {
                let alnum = c.is_alphabetic() || c.is_ascii_digit();
                *c = if alnum && !in_word { char_upcase(*c) } else { char_downcase(*c) };
                in_word = alnum;
            }
        }
    }
}

fn case_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, case: Case) -> LResult<'gc> {
    let mut chars = chars_of(ctx, a[0])?;
    let k = keyword_args(ctx, &a[1..], &["START", "END"])?;
    let (s, e) = bounds(ctx, k[0], k[1], chars.len())?;
    convert_case(&mut chars, s, e, case);
    Ok(new_string(ctx, chars))
}

fn ncase_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, case: Case) -> LResult<'gc> {
    if let Some(mut chars) = mprof_heap::spec::displaced_string(a[0]) {
        // A displaced string: convert a copy, then store it through the displacement.
        let k = keyword_args(ctx, &a[1..], &["START", "END"])?;
        let (s, e) = bounds(ctx, k[0], k[1], chars.len())?;
        convert_case(&mut chars, s, e, case);
        for (i, c) in chars.into_iter().enumerate().take(e).skip(s) {
            mprof_heap::spec::set(ctx.mc, a[0], i, mprof_heap::spec::Elem::Value(Value::Char(c)));
        }
        return Ok(a[0]);
    }
    let Value::String(st) = a[0] else {
        return Err(ctx.type_error(a[0], "STRING"));
    };
    let len = st.borrow().active().len();
    let k = keyword_args(ctx, &a[1..], &["START", "END"])?;
    let (s, e) = bounds(ctx, k[0], k[1], len)?;
    let mut b = alloc::borrow_mut(ctx.mc, st);
    convert_case(&mut b.chars, s, e, case);
    Ok(a[0])
}

fn string_upcase<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    case_fn(ctx, a, Case::Up)
}
fn string_downcase<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    case_fn(ctx, a, Case::Down)
}
fn string_capitalize<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    case_fn(ctx, a, Case::Capitalize)
}
fn nstring_upcase<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    ncase_fn(ctx, a, Case::Up)
}
fn nstring_downcase<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    ncase_fn(ctx, a, Case::Down)
}
fn nstring_capitalize<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    ncase_fn(ctx, a, Case::Capitalize)
}

/// The characters of a character bag (a string, list or vector of characters).
fn bag<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Vec<char>, Raise<'gc>> {
    let items: Vec<Value<'gc>> = match v {
        Value::String(s) => return Ok(s.borrow().active().to_vec()),
        Value::SpecArray(_) => super::sequences::seq_items(ctx, v)?,
        Value::Nil | Value::Cons(_) => alloc::list_to_vec(v).ok_or_else(|| ctx.type_error(v, "SEQUENCE"))?,
        Value::Vector(vec) => vec.borrow().active().to_vec(),
        other => return Err(ctx.type_error(other, "SEQUENCE")),
    };
    items
        .into_iter()
        .map(|x| match x {
            Value::Char(c) => Ok(c),
            other => Err(ctx.type_error(other, "CHARACTER")),
        })
        .collect()
}

fn trim<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, left: bool, right: bool) -> LResult<'gc> {
    let bag = bag(ctx, a[0])?;
    let chars = chars_of(ctx, a[1])?;
    let mut s = 0;
    let mut e = chars.len();
    if left {
        while s < e && bag.contains(&chars[s]) {
            s += 1;
        }
    }
    if right {
        while e > s && bag.contains(&chars[e - 1]) {
            e -= 1;
        }
    }
    Ok(new_string(ctx, chars[s..e].to_vec()))
}

fn string_trim<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    trim(ctx, a, true, true)
}
fn string_left_trim<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    trim(ctx, a, true, false)
}
fn string_right_trim<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    trim(ctx, a, false, true)
}

fn char_index<'gc>(ctx: &Ctx<'_, 'gc>, s: Value<'gc>, i: Value<'gc>) -> Result<usize, Raise<'gc>> {
    let Value::String(st) = s else {
        return Err(ctx.type_error(s, "STRING"));
    };
    let len = st.borrow().active().len();
    match i {
        Value::Fixnum(n) if n >= 0 && (n as usize) < len => Ok(n as usize),
        other => Err(ctx.type_error(other, &format!("(INTEGER 0 ({len}))"))),
    }
}

fn char_<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if mprof_heap::spec::is_displaced_string(a[0]) {
        return super::arrays::aref(ctx, a);
    }
    let i = char_index(ctx, a[0], a[1])?;
    let Value::String(st) = a[0] else {
        return Err(ctx.type_error(a[0], "STRING"));
    };
    Ok(Value::Char(st.borrow().active()[i]))
}

/// (sys:%set-char string index char)
fn set_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if mprof_heap::spec::is_displaced_string(a[0]) {
        return super::arrays::aset(ctx, a);
    }
    let i = char_index(ctx, a[0], a[1])?;
    let Value::Char(c) = a[2] else {
        return Err(ctx.type_error(a[2], "CHARACTER"));
    };
    let Value::String(st) = a[0] else {
        return Err(ctx.type_error(a[0], "STRING"));
    };
    alloc::borrow_mut(ctx.mc, st).chars[i] = c;
    Ok(a[2])
}

fn make_string<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[0])?;
    let k = keyword_args(ctx, &a[1..], &["INITIAL-ELEMENT", "ELEMENT-TYPE"])?;
    let c = match k[0] {
        None => '\0',
        Some(Value::Char(c)) => c,
        Some(other) => return Err(ctx.type_error(other, "CHARACTER")),
    };
    if n > (1 << 26) {
        return Err(Raise::error(format!("cannot make a string of {n} characters")));
    }
    Ok(new_string(ctx, vec![c; n]))
}

/// (sys:%string-concat &rest designators): a fresh string of them all.
fn string_concat<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut chars = Vec::new();
    for &v in a {
        chars.extend(chars_of(ctx, v)?);
    }
    Ok(new_string(ctx, chars))
}

/// (read-from-string string &optional eof-error-p eof-value &key start end preserve-whitespace)
fn read_from_string<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let chars = chars_of(ctx, a[0])?;
    let eof_error = a.get(1).is_none_or(|v| v.truthy());
    let eof_value = a.get(2).copied().unwrap_or(Value::Nil);
    let k = keyword_args(ctx, a.get(3..).unwrap_or(&[]), &["START", "END", "PRESERVE-WHITESPACE"])?;
    let (start, end) = bounds(ctx, k[0], k[1], chars.len())?;
    let text: String = chars[..end].iter().collect();
    let byte_start: usize = chars[..start].iter().map(|c| c.len_utf8()).sum();
    let opts = ctx.world.read_options();
    match mprof_reader::read_one(&text, byte_start, &opts) {
        Ok(Some((datum, byte_end))) => {
            let pkg = ctx.current_package();
            let v = mprof_heap::datum::datum_to_value(ctx.mc, &ctx.world.packages, pkg, &datum)
                .map_err(|e| Raise::simple(crate::runtime::raise::ErrorKind::Package, e.error.to_string()))?;
            let v = if crate::runtime::labels::datum_has_labels(&datum) { crate::runtime::labels::resolve(ctx.mc, ctx.world, v)? } else { v };
            if crate::runtime::read_time::datum_needs_read_time(&datum) {
                crate::runtime::read_time::set_pending(ctx.mc, ctx.world);
            }
            // CL's index is just past the datum and one following whitespace character.
            let mut index = text.get(..byte_end).map(|t| t.chars().count()).unwrap_or(end);
            if index < end && chars[index].is_whitespace() && !k[2].is_some_and(|v| v.truthy()) {
                index += 1;
            }
            Ok(ctx.set_values(&[v, Value::Fixnum(index as i64)]))
        }
        Ok(None) => {
            if eof_error {
                Err(Raise::simple(crate::runtime::raise::ErrorKind::Stream, "end of file while reading from a string".to_string()))
            } else {
                Ok(ctx.set_values(&[eof_value, Value::Fixnum(end as i64)]))
            }
        }
        Err(e) => Err(Raise::simple(crate::runtime::raise::ErrorKind::Reader, e.to_string())),
    }
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("STRING", 1, 1, string),
    cl("STRING=", 2, MANY, string_eq),
    cl("STRING/=", 2, MANY, string_ne),
    cl("STRING<", 2, MANY, string_lt),
    cl("STRING>", 2, MANY, string_gt),
    cl("STRING<=", 2, MANY, string_le),
    cl("STRING>=", 2, MANY, string_ge),
    cl("STRING-EQUAL", 2, MANY, string_equal),
    cl("STRING-NOT-EQUAL", 2, MANY, string_not_equal),
    cl("STRING-LESSP", 2, MANY, string_lessp),
    cl("STRING-GREATERP", 2, MANY, string_greaterp),
    cl("STRING-NOT-GREATERP", 2, MANY, string_not_greaterp),
    cl("STRING-NOT-LESSP", 2, MANY, string_not_lessp),
    cl("STRING-UPCASE", 1, MANY, string_upcase),
    cl("STRING-DOWNCASE", 1, MANY, string_downcase),
    cl("STRING-CAPITALIZE", 1, MANY, string_capitalize),
    cl("NSTRING-UPCASE", 1, MANY, nstring_upcase),
    cl("NSTRING-DOWNCASE", 1, MANY, nstring_downcase),
    cl("NSTRING-CAPITALIZE", 1, MANY, nstring_capitalize),
    cl("STRING-TRIM", 2, 2, string_trim),
    cl("STRING-LEFT-TRIM", 2, 2, string_left_trim),
    cl("STRING-RIGHT-TRIM", 2, 2, string_right_trim),
    cl("CHAR", 2, 2, char_),
    cl("SCHAR", 2, 2, char_),
    cl("MAKE-STRING", 1, MANY, make_string),
    // READ-FROM-STRING is a Lisp wrapper (prelude/reader.lisp), see read_time.rs.
    sys("%READ-FROM-STRING", 1, MANY, read_from_string),
    sys("%SET-CHAR", 3, 3, set_char),
    sys("%STRING-CONCAT", 0, MANY, string_concat),
];
