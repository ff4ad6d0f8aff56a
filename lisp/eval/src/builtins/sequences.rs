//! Sequence builtins that take no function arguments (`elt subseq copy-seq
//! nreverse fill replace`), and the `sys::%...` helpers the prelude's
//! sequence functions are built on: bounds checking, element access,
//! construction of result sequences, and the fast paths of `find position
//! count remove delete remove-duplicates` for the standard tests without
//! `:key`.
//!
//! A sequence is a proper list, a `Value::Vector`, a `Value::String` or a
//! rank-one `Value::SpecArray` (bit vectors, unboxed and displaced vectors,
//! whose elements are read and written through `mprof_heap::spec`, checked
//! against their element type); vectors are operated on up to their fill
//! pointer (their "active" part). Invariants: every index a caller passes is checked
//! against the active length before use (bad bounds are `type-error`s, as
//! in SBCL); vectors and strings are mutated only through
//! `alloc::borrow_mut`; a string never receives a non-character.

use mprof_heap::spec::{self, Elem, ElementType, SpecArray, Store};
use mprof_heap::value::{LString, Ptr};
use mprof_heap::{Value, alloc};

use super::lists::{Test, keys, nreverse_list_onto};
use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};
use crate::runtime::arrays::{displaced_too_small, element_type_value};

type A<'a, 'gc> = &'a [Value<'gc>];

/// The length of a proper list, or a type-error for dotted or circular ones.
pub fn proper_length<'gc>(ctx: &Ctx<'_, 'gc>, list: Value<'gc>) -> Result<usize, Raise<'gc>> {
    let mut n = 0usize;
    let mut fast = list;
    let mut slow = list;
    loop {
        match fast {
            Value::Nil => return Ok(n),
            Value::Cons(c) => {
                fast = c.cdr.get();
                n += 1;
            }
            _ => return Err(ctx.type_error(list, "LIST")),
        }
        if n.is_multiple_of(2) {
            slow = alloc::cdr(slow);
            if slow.eq(fast) && fast.truthy() {
                return Err(ctx.type_error(list, "LIST"));
            }
        }
    }
}

/// The active length of any sequence.
pub fn seq_length<'gc>(ctx: &Ctx<'_, 'gc>, seq: Value<'gc>) -> Result<usize, Raise<'gc>> {
    match seq {
        Value::Nil | Value::Cons(_) => proper_length(ctx, seq),
        Value::Vector(v) => Ok(v.borrow().active().len()),
        Value::String(s) => Ok(s.borrow().active().len()),
        Value::SpecArray(a) if a.borrow().dims.len() == 1 => Ok(a.borrow().active_len()),
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

/// The active elements of a specialized or displaced vector, boxed.
fn spec_items<'gc>(ctx: &Ctx<'_, 'gc>, a: Ptr<'gc, gc_arena::RefLock<SpecArray<'gc>>>) -> Result<Vec<Value<'gc>>, Raise<'gc>> {
    let v = Value::SpecArray(a);
    let n = a.borrow().active_len();
    (0..n)
        .map(|i| spec::get(v, i).map(|e| spec::boxed(ctx.mc, e)))
        .collect::<Option<_>>()
        .ok_or_else(|| displaced_too_small(ctx, v))
}

/// Store `x` at index `i` of a specialized or displaced vector, type-checked.
fn spec_store<'gc>(ctx: &Ctx<'_, 'gc>, a: Ptr<'gc, gc_arena::RefLock<SpecArray<'gc>>>, i: usize, x: Value<'gc>) -> Result<(), Raise<'gc>> {
    let et = a.borrow().element_type;
    if !et.admits(x) {
        let expected = element_type_value(ctx, et);
        return Err(Raise::TypeError { datum: x, expected });
    }
    if spec::set(ctx.mc, Value::SpecArray(a), i, Elem::Value(x)) {
        Ok(())
    } else {
        Err(displaced_too_small(ctx, Value::SpecArray(a)))
    }
}

/// A new simple vector of element type `et` holding `items` (type-checked).
pub(crate) fn make_typed_vector<'gc>(ctx: &Ctx<'_, 'gc>, et: ElementType, items: Vec<Value<'gc>>) -> LResult<'gc> {
    if let Some(bad) = items.iter().find(|x| !et.admits(**x)) {
        let expected = element_type_value(ctx, et);
        return Err(Raise::TypeError { datum: *bad, expected });
    }
    let fix = |v: &Value<'gc>| if let Value::Fixnum(i) = v { *i } else { 0 };
    let store = match et {
        ElementType::T => return Ok(make_vector(ctx, items)),
        ElementType::Character => return Ok(make_string(ctx, items.iter().map(|v| char_of(ctx, *v)).collect::<Result<_, _>>()?)),
        ElementType::Bit => Store::Bits(spec::Bits::from_bools(items.iter().map(|v| fix(v) != 0))),
        ElementType::Byte8 => Store::Bytes(items.iter().map(|v| fix(v) as u8).collect()),
        ElementType::Fixnum => Store::Fixnums(items.iter().map(fix).collect()),
        ElementType::Double => Store::Doubles(items.iter().map(|v| if let Value::Float(f) = v { f.val } else { 0.0 }).collect()),
    };
    Ok(alloc::spec_array(ctx.mc, vec![items.len()], store, None, false, et))
}

/// The elements of a sequence, copied out (strings as characters).
pub fn seq_items<'gc>(ctx: &Ctx<'_, 'gc>, seq: Value<'gc>) -> Result<Vec<Value<'gc>>, Raise<'gc>> {
    match seq {
        Value::Nil => Ok(Vec::new()),
        Value::Cons(_) => alloc::list_to_vec(seq).ok_or_else(|| ctx.type_error(seq, "LIST")),
        Value::Vector(v) => Ok(v.borrow().active().to_vec()),
        Value::String(s) => Ok(s.borrow().active().iter().map(|c| Value::Char(*c)).collect()),
        Value::SpecArray(a) if a.borrow().dims.len() == 1 => spec_items(ctx, a),
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

fn bad_index<'gc>(ctx: &Ctx<'_, 'gc>, index: Value<'gc>, lo: usize, hi: usize) -> Raise<'gc> {
    ctx.type_error(index, &format!("(INTEGER {lo} {hi})"))
}

/// Check `start`/`end` designators (end NIL means the length) against a
/// length: 0 <= start <= end <= len.
pub fn bounds<'gc>(ctx: &Ctx<'_, 'gc>, len: usize, start: Value<'gc>, end: Value<'gc>) -> Result<(usize, usize), Raise<'gc>> {
    let s = match start {
        Value::Nil => 0,
        Value::Fixnum(i) if i >= 0 && (i as usize) <= len => i as usize,
        other => return Err(bad_index(ctx, other, 0, len)),
    };
    let e = match end {
        Value::Nil => len,
        Value::Fixnum(i) if i >= s as i64 && (i as usize) <= len => i as usize,
        other => return Err(bad_index(ctx, other, s, len)),
    };
    Ok((s, e))
}

fn make_string<'gc>(ctx: &Ctx<'_, 'gc>, chars: Vec<char>) -> Value<'gc> {
    alloc::string_from_chars(ctx.mc, LString { chars, fill_pointer: None, adjustable: false })
}

fn make_vector<'gc>(ctx: &Ctx<'_, 'gc>, items: Vec<Value<'gc>>) -> Value<'gc> {
    alloc::vector_from(ctx.mc, items, None, false, ctx.t())
}

/// A simple vector of `items` with `like`'s element type (a copy of a
/// SINGLE-FLOAT vector is one too).
fn vector_like<'gc>(ctx: &Ctx<'_, 'gc>, like: Ptr<'gc, gc_arena::RefLock<mprof_heap::value::LVector<'gc>>>, items: Vec<Value<'gc>>) -> Value<'gc> {
    let element_type = match like.borrow().element_type {
        Value::Nil => ctx.t(),
        other => other,
    };
    alloc::vector_from(ctx.mc, items, None, false, element_type)
}

fn char_of<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<char, Raise<'gc>> {
    match v {
        Value::Char(c) => Ok(c),
        other => Err(ctx.type_error(other, "CHARACTER")),
    }
}

/// A new sequence of the same kind as `like` holding `items`.
fn same_kind<'gc>(ctx: &Ctx<'_, 'gc>, like: Value<'gc>, items: Vec<Value<'gc>>) -> LResult<'gc> {
    match like {
        Value::String(_) => Ok(make_string(ctx, items.iter().map(|v| char_of(ctx, *v)).collect::<Result<_, _>>()?)),
        Value::Vector(_) => Ok(make_vector(ctx, items)),
        Value::SpecArray(a) => make_typed_vector(ctx, a.borrow().element_type, items),
        _ => Ok(alloc::list(ctx.mc, &items)),
    }
}

fn index_of<'gc>(ctx: &Ctx<'_, 'gc>, seq: Value<'gc>, index: Value<'gc>) -> Result<usize, Raise<'gc>> {
    let len = seq_length(ctx, seq)?;
    match index {
        Value::Fixnum(i) if i >= 0 && (i as usize) < len => Ok(i as usize),
        other => Err(bad_index(ctx, other, 0, len.saturating_sub(1))),
    }
}

fn elt<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Vector(v) => {
            let v = v.borrow();
            let act = v.active();
            match a[1] {
                Value::Fixnum(i) if i >= 0 && (i as usize) < act.len() => Ok(act[i as usize]),
                other => Err(bad_index(ctx, other, 0, act.len().saturating_sub(1))),
            }
        }
        Value::String(s) => {
            let s = s.borrow();
            let act = s.active();
            match a[1] {
                Value::Fixnum(i) if i >= 0 && (i as usize) < act.len() => Ok(Value::Char(act[i as usize])),
                other => Err(bad_index(ctx, other, 0, act.len().saturating_sub(1))),
            }
        }
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => {
            let i = index_of(ctx, a[0], a[1])?;
            match spec::get(a[0], i) {
                Some(e) => Ok(spec::boxed(ctx.mc, e)),
                None => Err(displaced_too_small(ctx, a[0])),
            }
        }
        Value::Nil | Value::Cons(_) => {
            let mut cur = a[0];
            let n = ctx.index_arg(a[1])?;
            for _ in 0..n {
                cur = match cur {
                    Value::Cons(c) => c.cdr.get(),
                    _ => break,
                };
            }
            match cur {
                Value::Cons(c) => Ok(c.car.get()),
                _ => {
                    let len = proper_length(ctx, a[0])?;
                    Err(bad_index(ctx, a[1], 0, len.saturating_sub(1)))
                }
            }
        }
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

/// (sys:%set-elt sequence index value) -> value
fn set_elt<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let i = index_of(ctx, a[0], a[1])?;
    match a[0] {
        Value::Vector(v) => alloc::borrow_mut(ctx.mc, v).items[i] = a[2],
        Value::String(s) => {
            let c = char_of(ctx, a[2])?;
            alloc::borrow_mut(ctx.mc, s).chars[i] = c;
        }
        Value::SpecArray(x) => spec_store(ctx, x, i, a[2])?,
        list => {
            if let Value::Cons(c) = alloc::list_iter(list).rest_after(i) {
                alloc::set_car(ctx.mc, c, a[2]);
            }
        }
    }
    Ok(a[2])
}

trait RestAfter<'gc> {
    fn rest_after(self, n: usize) -> Value<'gc>;
}

impl<'gc> RestAfter<'gc> for alloc::ListIter<'gc> {
    /// The tail after skipping n elements.
    fn rest_after(mut self, n: usize) -> Value<'gc> {
        for _ in 0..n {
            if self.next().is_none() {
                break;
            }
        }
        self.rest()
    }
}

/// (sys:%vref vector-or-string index): element access for the prelude's loops.
fn vref<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Vector(_) | Value::String(_) | Value::SpecArray(_) => elt(ctx, a),
        other => Err(ctx.type_error(other, "VECTOR")),
    }
}

fn vset<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Vector(_) | Value::String(_) | Value::SpecArray(_) => set_elt(ctx, a),
        other => Err(ctx.type_error(other, "VECTOR")),
    }
}

fn subseq<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let end = a.get(2).copied().unwrap_or(Value::Nil);
    match a[0] {
        Value::Vector(v) => {
            let items = {
                let v = v.borrow();
                let (s, e) = bounds(ctx, v.active().len(), a[1], end)?;
                v.active()[s..e].to_vec()
            };
            Ok(vector_like(ctx, v, items))
        }
        Value::String(st) => {
            let chars = {
                let st = st.borrow();
                let (s, e) = bounds(ctx, st.active().len(), a[1], end)?;
                st.active()[s..e].to_vec()
            };
            Ok(make_string(ctx, chars))
        }
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => {
            let items = spec_items(ctx, x)?;
            let (s, e) = bounds(ctx, items.len(), a[1], end)?;
            make_typed_vector(ctx, x.borrow().element_type, items[s..e].to_vec())
        }
        Value::Nil | Value::Cons(_) => {
            let len = proper_length(ctx, a[0])?;
            let (s, e) = bounds(ctx, len, a[1], end)?;
            let items: Vec<Value<'gc>> = alloc::list_iter(a[0]).skip(s).take(e - s).collect();
            Ok(alloc::list(ctx.mc, &items))
        }
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

fn copy_seq<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Vector(v) => {
            let items = v.borrow().active().to_vec();
            Ok(vector_like(ctx, v, items))
        }
        Value::String(s) => {
            let chars = s.borrow().active().to_vec();
            Ok(make_string(ctx, chars))
        }
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => {
            let items = spec_items(ctx, x)?;
            make_typed_vector(ctx, x.borrow().element_type, items)
        }
        Value::Nil | Value::Cons(_) => {
            proper_length(ctx, a[0])?;
            let items: Vec<Value<'gc>> = alloc::list_iter(a[0]).collect();
            Ok(alloc::list(ctx.mc, &items))
        }
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

fn nreverse<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Vector(v) => {
            let mut v = alloc::borrow_mut(ctx.mc, v);
            let n = v.active().len();
            v.items[..n].reverse();
            Ok(a[0])
        }
        Value::String(s) => {
            let mut s = alloc::borrow_mut(ctx.mc, s);
            let n = s.active().len();
            s.chars[..n].reverse();
            Ok(a[0])
        }
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => {
            let mut items = spec_items(ctx, x)?;
            items.reverse();
            write_items(ctx, a[0], 0, &items)?;
            Ok(a[0])
        }
        Value::Nil | Value::Cons(_) => nreverse_list_onto(ctx, a[0], Value::Nil),
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

/// Write `items` over positions start.. of a sequence (already bounds-checked).
fn write_items<'gc>(ctx: &Ctx<'_, 'gc>, seq: Value<'gc>, start: usize, items: &[Value<'gc>]) -> Result<(), Raise<'gc>> {
    match seq {
        Value::Vector(v) => {
            let mut v = alloc::borrow_mut(ctx.mc, v);
            v.items[start..start + items.len()].copy_from_slice(items);
        }
        Value::String(s) => {
            let chars = items.iter().map(|v| char_of(ctx, *v)).collect::<Result<Vec<char>, _>>()?;
            let mut s = alloc::borrow_mut(ctx.mc, s);
            s.chars[start..start + chars.len()].copy_from_slice(&chars);
        }
        Value::SpecArray(x) => {
            for (k, &item) in items.iter().enumerate() {
                spec_store(ctx, x, start + k, item)?;
            }
        }
        list => {
            let mut cur = alloc::list_iter(list).rest_after(start);
            for &x in items {
                let Value::Cons(c) = cur else { break };
                alloc::set_car(ctx.mc, c, x);
                cur = c.cdr.get();
            }
        }
    }
    Ok(())
}

fn fill<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let [start, end] = keys(ctx, "FILL", &a[2..], ["START", "END"])?;
    let len = seq_length(ctx, a[0])?;
    let (s, e) = bounds(ctx, len, start.unwrap_or(Value::Nil), end.unwrap_or(Value::Nil))?;
    match a[0] {
        Value::Vector(v) => alloc::borrow_mut(ctx.mc, v).items[s..e].fill(a[1]),
        Value::String(st) => {
            let c = char_of(ctx, a[1])?;
            alloc::borrow_mut(ctx.mc, st).chars[s..e].fill(c);
        }
        Value::SpecArray(x) => {
            for i in s..e {
                spec_store(ctx, x, i, a[1])?;
            }
        }
        list => {
            let mut cur = alloc::list_iter(list).rest_after(s);
            for _ in s..e {
                let Value::Cons(c) = cur else { break };
                alloc::set_car(ctx.mc, c, a[1]);
                cur = c.cdr.get();
            }
        }
    }
    Ok(a[0])
}

fn replace<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let [s1, e1, s2, e2] = keys(ctx, "REPLACE", &a[2..], ["START1", "END1", "START2", "END2"])?;
    let nil = Value::Nil;
    let len1 = seq_length(ctx, a[0])?;
    let (s1, e1) = bounds(ctx, len1, s1.unwrap_or(nil), e1.unwrap_or(nil))?;
    let len2 = seq_length(ctx, a[1])?;
    let (s2, e2) = bounds(ctx, len2, s2.unwrap_or(nil), e2.unwrap_or(nil))?;
    let n = (e1 - s1).min(e2 - s2);
    // Copied out first, so replacing a sequence with itself works whatever the overlap.
    let items: Vec<Value<'gc>> = match a[1] {
        Value::Vector(v) => v.borrow().active()[s2..s2 + n].to_vec(),
        Value::String(s) => s.borrow().active()[s2..s2 + n].iter().map(|c| Value::Char(*c)).collect(),
        Value::SpecArray(x) => spec_items(ctx, x)?[s2..s2 + n].to_vec(),
        list => alloc::list_iter(list).skip(s2).take(n).collect(),
    };
    write_items(ctx, a[0], s1, &items)?;
    Ok(a[0])
}

/// (sys:%check-bounds sequence start end) -> the end as an index.
fn check_bounds<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let len = seq_length(ctx, a[0])?;
    let (_, e) = bounds(ctx, len, a[1], a[2])?;
    Ok(Value::Fixnum(e as i64))
}

/// (sys:%make-vector n initial-element)
fn make_vector_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[0])?;
    ctx.reserve("a vector", n, std::mem::size_of::<Value<'gc>>())?;
    Ok(make_vector(ctx, vec![a[1]; n]))
}

/// (sys:%make-string n initial-char)
fn make_string_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[0])?;
    let c = match a[1] {
        Value::Nil => ' ',
        v => char_of(ctx, v)?,
    };
    ctx.reserve("a string", n, std::mem::size_of::<char>())?;
    Ok(make_string(ctx, vec![c; n]))
}

/// Result kinds by the code the prelude's `sys::%result-kind` returns.
fn kind_code<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<u8, Raise<'gc>> {
    match v {
        Value::Fixnum(k @ 0..=3) => Ok(k as u8),
        other => Err(ctx.type_error(other, "(INTEGER 0 3)")),
    }
}

/// (sys:%concatenate kind &rest sequences): kind 0 list, 1 vector, 2 string,
/// 3 bit vector.
fn concatenate<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let kind = kind_code(ctx, a[0])?;
    if kind == 2 {
        let mut chars = Vec::new();
        for &s in &a[1..] {
            match s {
                Value::String(st) => chars.extend_from_slice(st.borrow().active()),
                other => {
                    for x in seq_items(ctx, other)? {
                        chars.push(char_of(ctx, x)?);
                    }
                }
            }
        }
        return Ok(make_string(ctx, chars));
    }
    let mut items = Vec::new();
    for &s in &a[1..] {
        match s {
            Value::Vector(v) => items.extend_from_slice(v.borrow().active()),
            other => items.extend(seq_items(ctx, other)?),
        }
    }
    match kind {
        0 => Ok(alloc::list(ctx.mc, &items)),
        3 => make_typed_vector(ctx, ElementType::Bit, items),
        _ => Ok(make_vector(ctx, items)),
    }
}

/// Positions in [s, e) in the order a search visits them.
fn order(s: usize, e: usize, from_end: bool) -> Box<dyn Iterator<Item = usize>> {
    if from_end { Box::new((s..e).rev()) } else { Box::new(s..e) }
}

/// (sys:%find item sequence start end from-end test-code want-index):
/// the first (last, from the end) element in [start, end) the test accepts
/// against item: its index when want-index, else the element; NIL if none.
fn find<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (item, seq, from_end, want_index) = (a[0], a[1], a[4].truthy(), a[6].truthy());
    let test = Test::from_code(ctx, a[5])?;
    let hit = |i: usize, x: Value<'gc>| if want_index { Value::Fixnum(i as i64) } else { x };
    match seq {
        Value::Nil | Value::Cons(_) if !from_end && a[2].is_nil() && a[3].is_nil() => {
            // The common case: stop at the first match without measuring the list.
            let mut cur = seq;
            let mut i = 0;
            let mut check = crate::runtime::cycle::CycleCheck::new(cur);
            loop {
                match cur {
                    Value::Cons(c) => {
                        let x = c.car.get();
                        if test.test(item, x) {
                            return Ok(hit(i, x));
                        }
                        cur = c.cdr.get();
                        i += 1;
                        if check.looped(cur) {
                            return Err(ctx.type_error(seq, "LIST"));
                        }
                    }
                    Value::Nil => return Ok(Value::Nil),
                    _ => return Err(ctx.type_error(seq, "LIST")),
                }
            }
        }
        Value::String(st) => {
            let st = st.borrow();
            let act = st.active();
            let (s, e) = bounds(ctx, act.len(), a[2], a[3])?;
            for i in order(s, e, from_end) {
                let x = Value::Char(act[i]);
                if test.test(item, x) {
                    return Ok(hit(i, x));
                }
            }
            Ok(Value::Nil)
        }
        _ => {
            let items = seq_items(ctx, seq)?;
            let (s, e) = bounds(ctx, items.len(), a[2], a[3])?;
            for i in order(s, e, from_end) {
                if test.test(item, items[i]) {
                    return Ok(hit(i, items[i]));
                }
            }
            Ok(Value::Nil)
        }
    }
}

/// (sys:%count item sequence start end test-code)
fn count<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let test = Test::from_code(ctx, a[4])?;
    let n = match a[1] {
        Value::String(st) => {
            let st = st.borrow();
            let act = st.active();
            let (s, e) = bounds(ctx, act.len(), a[2], a[3])?;
            act[s..e].iter().filter(|c| test.test(a[0], Value::Char(**c))).count()
        }
        seq => {
            let items = seq_items(ctx, seq)?;
            let (s, e) = bounds(ctx, items.len(), a[2], a[3])?;
            items[s..e].iter().filter(|x| test.test(a[0], **x)).count()
        }
    };
    Ok(Value::Fixnum(n as i64))
}

/// Build the result of removing the flagged elements of `seq` (whose
/// elements are `items`). Lists share the tail after the last removed
/// element (or, when destructive, are spliced in place); vectors and strings
/// are always fresh.
fn rebuild<'gc>(ctx: &Ctx<'_, 'gc>, seq: Value<'gc>, items: &[Value<'gc>], drop: &[bool], destructive: bool) -> LResult<'gc> {
    let Some(last) = drop.iter().rposition(|d| *d) else {
        return match seq {
            Value::Nil | Value::Cons(_) => Ok(seq),
            _ => same_kind(ctx, seq, items.to_vec()),
        };
    };
    match seq {
        Value::Nil | Value::Cons(_) if destructive => {
            let mut head = seq;
            let mut prev: Option<gc_arena::Gc<'gc, mprof_heap::value::Cons<'gc>>> = None;
            let mut cur = seq;
            let mut i = 0;
            while let Value::Cons(c) = cur {
                if i > last {
                    break;
                }
                let next = c.cdr.get();
                if drop[i] {
                    match prev {
                        Some(p) => alloc::set_cdr(ctx.mc, p, next),
                        None => head = next,
                    }
                } else {
                    prev = Some(c);
                }
                cur = next;
                i += 1;
            }
            Ok(head)
        }
        Value::Nil | Value::Cons(_) => {
            let kept: Vec<Value<'gc>> = items[..last].iter().zip(drop).filter(|(_, d)| !**d).map(|(x, _)| *x).collect();
            let tail = alloc::list_iter(seq).rest_after(last + 1);
            Ok(alloc::list_with_tail(ctx.mc, &kept, tail))
        }
        _ => {
            let kept: Vec<Value<'gc>> = items.iter().zip(drop).filter(|(_, d)| !**d).map(|(x, _)| *x).collect();
            // DELETE on a vector with a fill pointer compacts it in place, as SBCL does.
            if destructive {
                match seq {
                    Value::Vector(v) if v.borrow().fill_pointer.is_some() => {
                        let mut v = alloc::borrow_mut(ctx.mc, v);
                        v.items[..kept.len()].copy_from_slice(&kept);
                        v.fill_pointer = Some(kept.len());
                        return Ok(seq);
                    }
                    Value::String(st) if st.borrow().fill_pointer.is_some() => {
                        let chars = kept.iter().map(|x| char_of(ctx, *x)).collect::<Result<Vec<char>, _>>()?;
                        let mut st = alloc::borrow_mut(ctx.mc, st);
                        st.chars[..chars.len()].copy_from_slice(&chars);
                        st.fill_pointer = Some(chars.len());
                        return Ok(seq);
                    }
                    _ => {}
                }
            }
            same_kind(ctx, seq, kept)
        }
    }
}

/// (sys:%seq-capacity sequence): how many elements MAP-INTO may store: the
/// whole storage of a vector with a fill pointer, else the length.
fn capacity<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = match a[0] {
        Value::Vector(v) => v.borrow().items.len(),
        Value::String(s) => s.borrow().chars.len(),
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => x.borrow().total_size(),
        other => seq_length(ctx, other)?,
    };
    Ok(Value::Fixnum(n as i64))
}

/// (sys:%seq-set-fill sequence n): set the fill pointer, if there is one, to
/// n (at most the capacity). Returns the sequence.
fn set_fill<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[1])?;
    match a[0] {
        Value::Vector(v) if v.borrow().fill_pointer.is_some() => {
            let mut v = alloc::borrow_mut(ctx.mc, v);
            v.fill_pointer = Some(n.min(v.items.len()));
        }
        Value::String(s) if s.borrow().fill_pointer.is_some() => {
            let mut s = alloc::borrow_mut(ctx.mc, s);
            s.fill_pointer = Some(n.min(s.chars.len()));
        }
        Value::SpecArray(x) if x.borrow().fill_pointer.is_some() => {
            let mut x = alloc::borrow_mut(ctx.mc, x);
            x.fill_pointer = Some(n.min(x.total_size()));
        }
        _ => {}
    }
    Ok(a[0])
}

fn count_limit<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<usize, Raise<'gc>> {
    match v {
        Value::Nil => Ok(usize::MAX),
        Value::Fixnum(n) => Ok(n.max(0) as usize),
        Value::BigInt(b) if b.0.sign() == num_bigint::Sign::Minus => Ok(0),
        Value::BigInt(_) => Ok(usize::MAX),
        other => Err(ctx.type_error(other, "INTEGER")),
    }
}

/// Flag the elements in [start, end) equal to item under the test: at
/// most `limit` of them, the last ones when from_end.
fn flag_matches<'gc>(item: Value<'gc>, items: &[Value<'gc>], range: (usize, usize), limit: usize, from_end: bool, test: Test) -> Vec<bool> {
    let mut flags = vec![false; items.len()];
    let mut n = 0;
    for i in order(range.0, range.1, from_end) {
        if n >= limit {
            break;
        }
        if test.test(item, items[i]) {
            flags[i] = true;
            n += 1;
        }
    }
    flags
}

/// (sys:%seq-remove item sequence start end count from-end test-code destructive)
fn remove<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (item, seq) = (a[0], a[1]);
    let limit = count_limit(ctx, a[4])?;
    let test = Test::from_code(ctx, a[6])?;
    let items = seq_items(ctx, seq)?;
    let range = bounds(ctx, items.len(), a[2], a[3])?;
    let drop = flag_matches(item, &items, range, limit, a[5].truthy(), test);
    rebuild(ctx, seq, &items, &drop, a[7].truthy())
}

/// The flags of the positions listed in `indices` (any order; out-of-range ones ignored).
fn flags_of<'gc>(ctx: &Ctx<'_, 'gc>, indices: Value<'gc>, len: usize) -> Result<Vec<bool>, Raise<'gc>> {
    let mut flags = vec![false; len];
    for i in alloc::list_iter(indices) {
        let i = ctx.index_arg(i)?;
        if i < len {
            flags[i] = true;
        }
    }
    Ok(flags)
}

/// (sys:%remove-at sequence indices destructive): remove the elements at the
/// listed positions, which the prelude computed by calling :test/:key/the
/// predicate once per element.
fn remove_at<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let items = seq_items(ctx, a[0])?;
    let drop = flags_of(ctx, a[1], items.len())?;
    rebuild(ctx, a[0], &items, &drop, a[2].truthy())
}

/// (sys:%substitute-at sequence new indices destructive): replace the
/// elements at the listed positions by new. A non-destructive list result
/// shares the tail after the last replaced element.
fn substitute_at<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let items = seq_items(ctx, a[0])?;
    let flags = flags_of(ctx, a[2], items.len())?;
    substitute_flagged(ctx, a[0], a[1], items, &flags, a[3].truthy())
}

/// (sys:%seq-substitute new old sequence start end count from-end test-code destructive)
fn substitute<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (new, old, seq) = (a[0], a[1], a[2]);
    let limit = count_limit(ctx, a[5])?;
    let test = Test::from_code(ctx, a[7])?;
    let items = seq_items(ctx, seq)?;
    let range = bounds(ctx, items.len(), a[3], a[4])?;
    let flags = flag_matches(old, &items, range, limit, a[6].truthy(), test);
    substitute_flagged(ctx, seq, new, items, &flags, a[8].truthy())
}

fn substitute_flagged<'gc>(
    ctx: &Ctx<'_, 'gc>,
    seq: Value<'gc>,
    new: Value<'gc>,
    items: Vec<Value<'gc>>,
    flags: &[bool],
    destructive: bool,
) -> LResult<'gc> {
    let Some(last) = flags.iter().rposition(|f| *f) else {
        return match seq {
            Value::Nil | Value::Cons(_) => Ok(seq),
            _ if destructive => Ok(seq),
            _ => same_kind(ctx, seq, items),
        };
    };
    if destructive {
        let mut cur = seq;
        for (i, f) in flags.iter().enumerate() {
            if *f {
                match seq {
                    Value::Vector(v) => alloc::borrow_mut(ctx.mc, v).items[i] = new,
                    Value::String(st) => {
                        let c = char_of(ctx, new)?;
                        alloc::borrow_mut(ctx.mc, st).chars[i] = c;
                    }
                    Value::SpecArray(x) => spec_store(ctx, x, i, new)?,
                    _ => {
                        if let Value::Cons(c) = cur {
                            alloc::set_car(ctx.mc, c, new);
                        }
                    }
                }
            }
            cur = alloc::cdr(cur);
        }
        return Ok(seq);
    }
    match seq {
        Value::Nil | Value::Cons(_) => {
            let head: Vec<Value<'gc>> = items[..=last].iter().zip(flags).map(|(x, f)| if *f { new } else { *x }).collect();
            let tail = alloc::list_iter(seq).rest_after(last + 1);
            Ok(alloc::list_with_tail(ctx.mc, &head, tail))
        }
        _ => {
            let out: Vec<Value<'gc>> = items.iter().zip(flags).map(|(x, f)| if *f { new } else { *x }).collect();
            same_kind(ctx, seq, out)
        }
    }
}

/// (sys:%seq-search sequence1 sequence2 from-end test-code start1 end1 start2 end2)
fn search<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let test = Test::from_code(ctx, a[3])?;
    let pat = seq_items(ctx, a[0])?;
    let text = seq_items(ctx, a[1])?;
    let (s1, e1) = bounds(ctx, pat.len(), a[4], a[5])?;
    let (s2, e2) = bounds(ctx, text.len(), a[6], a[7])?;
    let pat = &pat[s1..e1];
    if pat.len() > e2 - s2 {
        return Ok(Value::Nil);
    }
    let at = |p: usize| pat.iter().zip(&text[p..]).all(|(x, y)| test.test(*x, *y));
    let last = e2 - pat.len();
    let found = if a[2].truthy() { (s2..=last).rev().find(|p| at(*p)) } else { (s2..=last).find(|p| at(*p)) };
    Ok(found.map(|p| Value::Fixnum(p as i64)).unwrap_or(Value::Nil))
}

/// (sys:%seq-mismatch sequence1 sequence2 from-end test-code start1 end1 start2 end2)
fn mismatch<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let test = Test::from_code(ctx, a[3])?;
    let x = seq_items(ctx, a[0])?;
    let y = seq_items(ctx, a[1])?;
    let (s1, e1) = bounds(ctx, x.len(), a[4], a[5])?;
    let (s2, e2) = bounds(ctx, y.len(), a[6], a[7])?;
    let (x, y) = (&x[s1..e1], &y[s2..e2]);
    let same = if a[2].truthy() {
        x.iter().rev().zip(y.iter().rev()).take_while(|(p, q)| test.test(**p, **q)).count()
    } else {
        x.iter().zip(y).take_while(|(p, q)| test.test(**p, **q)).count()
    };
    if same == x.len() && same == y.len() {
        return Ok(Value::Nil);
    }
    // From the end, the answer is one past the last mismatching position.
    let at = if a[2].truthy() { s1 + x.len() - same } else { s1 + same };
    Ok(Value::Fixnum(at as i64))
}

/// (sys:%seq-half n) -> floor(n/2), for the merge sorts.
fn half<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum((ctx.index_arg(a[0])? / 2) as i64))
}

/// (sys:%remove-duplicates sequence start end from-end test-code destructive)
fn remove_duplicates<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let seq = a[0];
    let test = Test::from_code(ctx, a[4])?;
    let items = seq_items(ctx, seq)?;
    let (s, e) = bounds(ctx, items.len(), a[1], a[2])?;
    let mut drop = vec![false; items.len()];
    // Walk from the end whose occurrence is kept: without :from-end the
    // last occurrence survives, so walk backwards.
    let mut seen: std::collections::HashMap<u64, Vec<Value<'gc>>> = std::collections::HashMap::new();
    for i in order(s, e, !a[3].truthy()) {
        let x = items[i];
        let h = crate::runtime::equal::hash_key(test.hash_test(), x);
        let bucket = seen.entry(h).or_default();
        if bucket.iter().any(|y| test.test(*y, x)) {
            drop[i] = true;
        } else {
            bucket.push(x);
        }
    }
    rebuild(ctx, seq, &items, &drop, a[5].truthy())
}

/// (sys:%seq-kind object) -> 0 list, 1 vector, 2 string, 3 bit vector;
/// else a type-error.
fn seq_kind<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Nil | Value::Cons(_) => Ok(Value::Fixnum(0)),
        Value::Vector(_) => Ok(Value::Fixnum(1)),
        Value::String(_) => Ok(Value::Fixnum(2)),
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => Ok(Value::Fixnum(match x.borrow().element_type {
            ElementType::Bit => 3,
            ElementType::Character => 2,
            _ => 1,
        })),
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

/// (sys:%seq-list sequence start end) -> a fresh list of the elements in
/// [start, end); the prelude's general paths iterate over it.
fn seq_list<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let items = seq_items(ctx, a[0])?;
    let (s, e) = bounds(ctx, items.len(), a[1], a[2])?;
    Ok(alloc::list(ctx.mc, &items[s..e]))
}

/// (sys:%fill-from-list sequence list start): write the list's elements
/// over the sequence from start (sort and map-into store through this).
fn fill_from_list<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let items: Vec<Value<'gc>> = alloc::list_iter(a[1]).collect();
    let len = seq_length(ctx, a[0])?;
    let s = ctx.index_arg(a[2])?;
    if s + items.len() > len {
        return Err(Raise::error(format!("{} elements do not fit in a sequence of length {len} from {s}", items.len())));
    }
    write_items(ctx, a[0], s, &items)?;
    Ok(a[0])
}

/// (sys:%char-seq-p sequence) -> true when every element is a character
/// (a string can hold it).
fn char_seq_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let ok = match a[0] {
        Value::String(_) => true,
        seq => seq_items(ctx, seq)?.iter().all(|x| matches!(x, Value::Char(_))),
    };
    Ok(ctx.bool(ok))
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("ELT", 2, 2, elt),
    cl("SUBSEQ", 2, 3, subseq),
    cl("COPY-SEQ", 1, 1, copy_seq),
    cl("NREVERSE", 1, 1, nreverse),
    cl("FILL", 2, MANY, fill),
    cl("REPLACE", 2, MANY, replace),
    sys("%SET-ELT", 3, 3, set_elt),
    sys("%SEQ-VREF", 2, 2, vref),
    sys("%SEQ-VSET", 3, 3, vset),
    sys("%SEQ-CHECK-BOUNDS", 3, 3, check_bounds),
    sys("%SEQ-MAKE-VECTOR", 2, 2, make_vector_fn),
    sys("%SEQ-MAKE-STRING", 2, 2, make_string_fn),
    sys("%SEQ-CONCATENATE", 1, MANY, concatenate),
    sys("%SEQ-FIND", 7, 7, find),
    sys("%SEQ-COUNT", 5, 5, count),
    sys("%SEQ-REMOVE", 8, 8, remove),
    sys("%REMOVE-AT", 3, 3, remove_at),
    sys("%SUBSTITUTE-AT", 4, 4, substitute_at),
    sys("%SEQ-HALF", 1, 1, half),
    sys("%SEQ-CAPACITY", 1, 1, capacity),
    sys("%SEQ-SET-FILL", 2, 2, set_fill),
    sys("%SEQ-SUBSTITUTE", 9, 9, substitute),
    sys("%SEQ-SEARCH", 8, 8, search),
    sys("%SEQ-MISMATCH", 8, 8, mismatch),
    sys("%REMOVE-DUPLICATES", 6, 6, remove_duplicates),
    sys("%SEQ-KIND", 1, 1, seq_kind),
    sys("%SEQ-LIST", 3, 3, seq_list),
    sys("%FILL-FROM-LIST", 3, 3, fill_from_list),
    sys("%CHAR-SEQ-P", 1, 1, char_seq_p),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(xs: &[i64]) -> Vec<Value<'static>> {
        xs.iter().map(|x| Value::Fixnum(*x)).collect()
    }

    #[test]
    fn flag_matches_honours_range_count_and_direction() {
        let items = fix(&[1, 2, 1, 3, 1, 1]);
        let one = Value::Fixnum(1);
        let all = flag_matches(one, &items, (0, 6), usize::MAX, false, Test::Eql);
        assert_eq!(all, [true, false, true, false, true, true]);
        let first_two = flag_matches(one, &items, (0, 6), 2, false, Test::Eql);
        assert_eq!(first_two, [true, false, true, false, false, false]);
        let last_two = flag_matches(one, &items, (0, 6), 2, true, Test::Eql);
        assert_eq!(last_two, [false, false, false, false, true, true]);
        let inner = flag_matches(one, &items, (1, 4), usize::MAX, false, Test::Eql);
        assert_eq!(inner, [false, false, true, false, false, false]);
        let none = flag_matches(one, &items, (0, 6), 0, false, Test::Eql);
        assert!(none.iter().all(|f| !f));
    }

    #[test]
    fn order_visits_the_range_in_the_asked_direction() {
        assert_eq!(order(2, 5, false).collect::<Vec<_>>(), [2, 3, 4]);
        assert_eq!(order(2, 5, true).collect::<Vec<_>>(), [4, 3, 2]);
        assert_eq!(order(3, 3, true).count(), 0);
    }

    #[test]
    fn standard_tests_compare_as_their_predicates() {
        let (a, b) = (Value::Fixnum(7), Value::Fixnum(7));
        for t in [Test::Eq, Test::Eql, Test::Equal, Test::Equalp] {
            assert!(t.test(a, b));
            assert!(!t.test(a, Value::Fixnum(8)));
        }
        assert!(Test::Equalp.test(Value::Char('a'), Value::Char('A')));
        assert!(!Test::Eql.test(Value::Char('a'), Value::Char('A')));
    }
}
