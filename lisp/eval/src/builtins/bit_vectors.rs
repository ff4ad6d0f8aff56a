//! Bit arrays: `bit` and `sbit` (their setters are `(setf aref)`'s),
//! `bit-vector-p`, `simple-bit-vector-p`, and the bitwise operations
//! `bit-and` ... `bit-orc2` and `bit-not` with their optional result
//! argument (NIL: a fresh array; T: the first argument; an array: that one).
//!
//! Bit arrays are `SpecArray`s with a packed `Bits` store or displaced to
//! one (see `mprof_heap::spec`). Invariant: every operand and result array
//! is checked to be a bit array of the operands' dimensions before any bit
//! is written, so a failing call changes nothing.

use gc_arena::RefLock;
use mprof_heap::spec::{self, Bits, Elem, ElementType, SpecArray, Store};
use mprof_heap::value::Ptr;
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, MANY, cl};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};
use crate::runtime::arrays::displaced_too_small;

type A<'a, 'gc> = &'a [Value<'gc>];

/// A bit array argument, or a type-error naming `expected`.
fn bit_array<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>, expected: &str) -> Result<Ptr<'gc, RefLock<SpecArray<'gc>>>, Raise<'gc>> {
    match v {
        Value::SpecArray(a) if a.borrow().element_type == ElementType::Bit => Ok(a),
        other => Err(ctx.type_error(other, expected)),
    }
}

/// (bit bit-array &rest subscripts)
fn bit<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    bit_array(ctx, a[0], "(ARRAY BIT)")?;
    super::arrays::aref(ctx, a)
}

/// (sbit simple-bit-array &rest subscripts)
fn sbit<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = bit_array(ctx, a[0], "(SIMPLE-ARRAY BIT)")?;
    if !arr.borrow().is_simple() {
        return Err(ctx.type_error(a[0], "(SIMPLE-ARRAY BIT)"));
    }
    super::arrays::aref(ctx, a)
}

fn bit_vector_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(super::arrays::is_bit_vector(a[0])))
}

fn simple_bit_vector_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let simple = matches!(a[0], Value::SpecArray(x) if x.borrow().is_simple());
    Ok(ctx.bool(simple && super::arrays::is_bit_vector(a[0])))
}

/// Every bit of a bit array, row-major.
fn bits_of<'gc>(ctx: &Ctx<'_, 'gc>, p: Ptr<'gc, RefLock<SpecArray<'gc>>>) -> Result<Vec<bool>, Raise<'gc>> {
    if let Store::Bits(b) = &p.borrow().store {
        return Ok((0..b.len).map(|i| b.get(i)).collect());
    }
    let n = p.borrow().total_size();
    (0..n)
        .map(|i| match spec::get(Value::SpecArray(p), i) {
            Some(Elem::Value(Value::Fixnum(x))) => Some(x != 0),
            _ => None,
        })
        .collect::<Option<_>>()
        .ok_or_else(|| displaced_too_small(ctx, Value::SpecArray(p)))
}

/// The array a bitwise operation stores into, per its optional argument.
fn destination<'gc>(ctx: &Ctx<'_, 'gc>, first: Value<'gc>, opt: Option<Value<'gc>>, dims: &[usize]) -> LResult<'gc> {
    let dest = match opt {
        None | Some(Value::Nil) => {
            let store = Store::Bits(Bits::zeros(dims.iter().product()));
            return Ok(alloc::spec_array(ctx.mc, dims.to_vec(), store, None, false, ElementType::Bit));
        }
        Some(t) if t.eq(ctx.t()) => first,
        Some(v) => v,
    };
    let d = bit_array(ctx, dest, "(ARRAY BIT)")?;
    if d.borrow().dims != dims {
        return Err(Raise::error(format!(
            "The result array {} does not have the dimensions {:?} of the arguments.",
            ctx.print(dest, true),
            dims
        )));
    }
    Ok(dest)
}

/// Store `bits` into bit array `dest`, row-major.
fn store<'gc>(ctx: &Ctx<'_, 'gc>, dest: Value<'gc>, bits: &[bool]) -> LResult<'gc> {
    if let Value::SpecArray(p) = dest
        && let Store::Bits(b) = &mut alloc::borrow_mut(ctx.mc, p).store
    {
        *b = Bits::from_bools(bits.iter().copied());
        return Ok(dest);
    }
    for (i, &bit) in bits.iter().enumerate() {
        if !spec::set(ctx.mc, dest, i, Elem::Value(Value::Fixnum(bit as i64))) {
            return Err(displaced_too_small(ctx, dest));
        }
    }
    Ok(dest)
}

fn bitwise<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, op: fn(bool, bool) -> bool) -> LResult<'gc> {
    let (x, y) = (bit_array(ctx, a[0], "(ARRAY BIT)")?, bit_array(ctx, a[1], "(ARRAY BIT)")?);
    let dims = x.borrow().dims.clone();
    if y.borrow().dims != dims {
        return Err(Raise::error(format!(
            "The bit arrays {} and {} do not have the same dimensions.",
            ctx.print(a[0], true),
            ctx.print(a[1], true)
        )));
    }
    let (xs, ys) = (bits_of(ctx, x)?, bits_of(ctx, y)?);
    let dest = destination(ctx, a[0], a.get(2).copied(), &dims)?;
    let out: Vec<bool> = xs.iter().zip(&ys).map(|(p, q)| op(*p, *q)).collect();
    store(ctx, dest, &out)
}

macro_rules! bit_ops {
    ($($name:ident: |$p:ident, $q:ident| $e:expr;)*) => {
        $(fn $name<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
            bitwise(ctx, a, |$p, $q| $e)
        })*
    };
}

bit_ops! {
    bit_and: |p, q| p & q;
    bit_ior: |p, q| p | q;
    bit_xor: |p, q| p ^ q;
    bit_eqv: |p, q| p == q;
    bit_nand: |p, q| !(p & q);
    bit_nor: |p, q| !(p | q);
    bit_andc1: |p, q| !p & q;
    bit_andc2: |p, q| p & !q;
    bit_orc1: |p, q| !p | q;
    bit_orc2: |p, q| p | !q;
}

/// (bit-not bit-array &optional opt-arg)
fn bit_not<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let x = bit_array(ctx, a[0], "(ARRAY BIT)")?;
    let dims = x.borrow().dims.clone();
    let bits: Vec<bool> = bits_of(ctx, x)?.into_iter().map(|b| !b).collect();
    let dest = destination(ctx, a[0], a.get(1).copied(), &dims)?;
    store(ctx, dest, &bits)
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("BIT", 1, MANY, bit),
    cl("SBIT", 1, MANY, sbit),
    cl("BIT-VECTOR-P", 1, 1, bit_vector_p),
    cl("SIMPLE-BIT-VECTOR-P", 1, 1, simple_bit_vector_p),
    cl("BIT-AND", 2, 3, bit_and),
    cl("BIT-IOR", 2, 3, bit_ior),
    cl("BIT-XOR", 2, 3, bit_xor),
    cl("BIT-EQV", 2, 3, bit_eqv),
    cl("BIT-NAND", 2, 3, bit_nand),
    cl("BIT-NOR", 2, 3, bit_nor),
    cl("BIT-ANDC1", 2, 3, bit_andc1),
    cl("BIT-ANDC2", 2, 3, bit_andc2),
    cl("BIT-ORC1", 2, 3, bit_orc1),
    cl("BIT-ORC2", 2, 3, bit_orc2),
    cl("BIT-NOT", 1, 2, bit_not),
];
