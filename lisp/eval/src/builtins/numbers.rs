//! The numeric tower: fixnums that overflow into bignums, exact ratios, and
//! boxed doubles, with CL's contagion rules (any float makes the result a
//! float; rationals stay exact).
//!
//! Invariant: results are normalized: integers that fit are fixnums, ratios
//! with denominator 1 are integers.

use mprof_heap::{Value, alloc};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};

use super::{BuiltinDef, MANY, cl};
use crate::ctx::Ctx;
use crate::raise::{LResult, Raise};

/// A number taken out of a value, for arithmetic.
#[derive(Clone, Debug)]
pub enum Num {
    I(i64),
    B(BigInt),
    R(BigInt, BigInt),
    F(f64),
}

impl Num {
    pub fn from_value(v: Value<'_>) -> Option<Num> {
        Some(match v {
            Value::Fixnum(i) => Num::I(i),
            Value::BigInt(b) => Num::B(b.0.clone()),
            Value::Ratio(r) => Num::R(r.num.clone(), r.den.clone()),
            Value::Float(f) => Num::F(f.val),
            _ => return None,
        })
    }

    pub fn into_value<'gc>(self, ctx: &Ctx<'_, 'gc>) -> Value<'gc> {
        match self {
            Num::I(i) => Value::Fixnum(i),
            Num::B(b) => alloc::integer(ctx.mc, b),
            Num::R(n, d) => alloc::rational(ctx.mc, n, d),
            Num::F(x) => alloc::float(ctx.mc, x),
        }
    }

    pub fn to_f64(&self) -> f64 {
        match self {
            Num::I(i) => *i as f64,
            Num::B(b) => b.to_f64().unwrap_or(f64::NAN),
            Num::R(n, d) => ratio_to_f64(n, d),
            Num::F(x) => *x,
        }
    }

    fn to_big(&self) -> BigInt {
        match self {
            Num::I(i) => BigInt::from(*i),
            Num::B(b) => b.clone(),
            _ => BigInt::zero(),
        }
    }

    /// As an exact fraction (integers have denominator 1).
    fn to_frac(&self) -> (BigInt, BigInt) {
        match self {
            Num::I(i) => (BigInt::from(*i), BigInt::from(1)),
            Num::B(b) => (b.clone(), BigInt::from(1)),
            Num::R(n, d) => (n.clone(), d.clone()),
            Num::F(_) => (BigInt::zero(), BigInt::from(1)),
        }
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Num::I(i) => *i == 0,
            Num::B(b) => b.is_zero(),
            Num::R(..) => false,
            Num::F(x) => *x == 0.0,
        }
    }
}

fn ratio_to_f64(n: &BigInt, d: &BigInt) -> f64 {
    match (n.to_f64(), d.to_f64()) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() => a / b,
        _ => {
            // Scale down huge operands before dividing.
            let shift = (n.bits().max(d.bits()) as i64 - 1000).max(0) as usize;
            let (a, b) = (n >> shift, d >> shift);
            a.to_f64().unwrap_or(0.0) / b.to_f64().unwrap_or(1.0)
        }
    }
}

fn norm_big(b: BigInt) -> Num {
    match b.to_i64() {
        Some(i) => Num::I(i),
        None => Num::B(b),
    }
}

fn norm_frac(n: BigInt, d: BigInt) -> Num {
    let (mut n, mut d) = (n, d);
    if d.is_negative() {
        n = -n;
        d = -d;
    }
    let g = n.gcd(&d);
    if !g.is_zero() && g != BigInt::from(1) {
        n /= &g;
        d /= &g;
    }
    if d == BigInt::from(1) { norm_big(n) } else { Num::R(n, d) }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Op2 {
    Add,
    Sub,
    Mul,
    Div,
}

/// Apply a binary operation with contagion. Division by an exact zero is an error (None).
pub fn arith(op: Op2, a: &Num, b: &Num) -> Option<Num> {
    use Num::*;
    if let (F(_), _) | (_, F(_)) = (a, b) {
        let (x, y) = (a.to_f64(), b.to_f64());
        return Some(F(match op {
            Op2::Add => x + y,
            Op2::Sub => x - y,
            Op2::Mul => x * y,
            Op2::Div => {
                if y == 0.0 && !matches!(b, F(_)) {
                    return None;
                }
                if y == 0.0 {
                    return None;
                }
                x / y
            }
        }));
    }
    if let (I(x), I(y)) = (a, b) {
        match op {
            Op2::Add => return Some(x.checked_add(*y).map(I).unwrap_or_else(|| B(BigInt::from(*x) + y))),
            Op2::Sub => return Some(x.checked_sub(*y).map(I).unwrap_or_else(|| B(BigInt::from(*x) - y))),
            Op2::Mul => return Some(x.checked_mul(*y).map(I).unwrap_or_else(|| B(BigInt::from(*x) * y))),
            Op2::Div => {
                if *y == 0 {
                    return None;
                }
                if x % y == 0 {
                    return Some(x.checked_div(*y).map(I).unwrap_or_else(|| norm_big(BigInt::from(*x) / y)));
                }
                return Some(norm_frac(BigInt::from(*x), BigInt::from(*y)));
            }
        }
    }
    if matches!(a, I(_) | B(_)) && matches!(b, I(_) | B(_)) && op != Op2::Div {
        let (x, y) = (a.to_big(), b.to_big());
        return Some(norm_big(match op {
            Op2::Add => x + y,
            Op2::Sub => x - y,
            _ => x * y,
        }));
    }
    let ((an, ad), (bn, bd)) = (a.to_frac(), b.to_frac());
    Some(match op {
        Op2::Add => norm_frac(&an * &bd + &bn * &ad, ad * bd),
        Op2::Sub => norm_frac(&an * &bd - &bn * &ad, ad * bd),
        Op2::Mul => norm_frac(an * bn, ad * bd),
        Op2::Div => {
            if bn.is_zero() {
                return None;
            }
            norm_frac(an * bd, ad * bn)
        }
    })
}

/// Compare two real numbers: -1, 0, 1 (exact for rationals; floats compare as CL does, by value).
pub fn compare(a: &Num, b: &Num) -> std::cmp::Ordering {
    use Num::*;
    use std::cmp::Ordering;
    match (a, b) {
        (I(x), I(y)) => x.cmp(y),
        (F(_), _) | (_, F(_)) => {
            let (x, y) = (a.to_f64(), b.to_f64());
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
        _ => {
            let ((an, ad), (bn, bd)) = (a.to_frac(), b.to_frac());
            (an * bd).cmp(&(bn * ad))
        }
    }
}

/// `=` on two values, None if either is not a number.
pub fn numbers_equal<'gc>(a: Value<'gc>, b: Value<'gc>) -> Option<bool> {
    let (x, y) = (Num::from_value(a)?, Num::from_value(b)?);
    Some(compare(&x, &y) == std::cmp::Ordering::Equal)
}

pub fn to_f64(v: Value<'_>) -> Option<f64> {
    Num::from_value(v).map(|n| n.to_f64())
}

/// The numeric argument `v`, or a type error naming `NUMBER`.
pub fn num_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Num, Raise<'gc>> {
    Num::from_value(v).ok_or_else(|| ctx.type_error(v, "NUMBER"))
}

fn div_zero<'gc>(ctx: &Ctx<'_, 'gc>, name: &str, args: &[Value<'gc>]) -> Raise<'gc> {
    Raise::DivisionByZero { operation: ctx.cl(name), operands: args.to_vec() }
}

fn fold<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>], op: Op2, name: &str, unit: i64) -> LResult<'gc> {
    // Fast path: two fixnums.
    if let [Value::Fixnum(a), Value::Fixnum(b)] = args {
        let r = match op {
            Op2::Add => a.checked_add(*b),
            Op2::Sub => a.checked_sub(*b),
            Op2::Mul => a.checked_mul(*b),
            Op2::Div => None,
        };
        if let Some(r) = r {
            return Ok(Value::Fixnum(r));
        }
    }
    let mut acc = match (args.first(), op) {
        (None, _) => return Ok(Value::Fixnum(unit)),
        (Some(&a), _) if args.len() == 1 && matches!(op, Op2::Sub | Op2::Div) => {
            let x = num_arg(ctx, a)?;
            return match arith(op, &Num::I(unit), &x) {
                Some(r) => Ok(r.into_value(ctx)),
                None => Err(div_zero(ctx, name, args)),
            };
        }
        (Some(&a), _) => num_arg(ctx, a)?,
    };
    for &b in &args[1..] {
        let y = num_arg(ctx, b)?;
        acc = match arith(op, &acc, &y) {
            Some(r) => r,
            None => return Err(div_zero(ctx, name, args)),
        };
    }
    Ok(acc.into_value(ctx))
}

fn add<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    fold(ctx, args, Op2::Add, "+", 0)
}
fn sub<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    fold(ctx, args, Op2::Sub, "-", 0)
}
fn mul<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    fold(ctx, args, Op2::Mul, "*", 1)
}
fn div<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    fold(ctx, args, Op2::Div, "/", 1)
}

fn one_plus<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    if let Value::Fixnum(i) = args[0]
        && let Some(r) = i.checked_add(1)
    {
        return Ok(Value::Fixnum(r));
    }
    fold(ctx, &[args[0], Value::Fixnum(1)], Op2::Add, "1+", 0)
}

fn one_minus<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    if let Value::Fixnum(i) = args[0]
        && let Some(r) = i.checked_sub(1)
    {
        return Ok(Value::Fixnum(r));
    }
    fold(ctx, &[args[0], Value::Fixnum(1)], Op2::Sub, "1-", 0)
}

fn real_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Num, Raise<'gc>> {
    Num::from_value(v).ok_or_else(|| ctx.type_error(v, "REAL"))
}

fn compare_chain<'gc>(
    ctx: &mut Ctx<'_, 'gc>,
    args: &[Value<'gc>],
    ok: fn(std::cmp::Ordering) -> bool,
) -> LResult<'gc> {
    if let [Value::Fixnum(a), Value::Fixnum(b)] = args {
        return Ok(ctx.bool(ok(a.cmp(b))));
    }
    let nums: Vec<Num> = args.iter().map(|&a| real_arg(ctx, a)).collect::<Result<_, _>>()?;
    Ok(ctx.bool(nums.windows(2).all(|w| ok(compare(&w[0], &w[1])))))
}

fn num_eq<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_eq())
}
fn num_lt<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_lt())
}
fn num_gt<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_gt())
}
fn num_le<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_le())
}
fn num_ge<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_ge())
}
fn num_ne<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    let nums: Vec<Num> = args.iter().map(|&a| num_arg(ctx, a)).collect::<Result<_, _>>()?;
    for i in 0..nums.len() {
        for j in i + 1..nums.len() {
            if compare(&nums[i], &nums[j]).is_eq() {
                return Ok(Value::Nil);
            }
        }
    }
    Ok(ctx.t())
}

fn zerop<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    let n = num_arg(ctx, args[0])?;
    Ok(ctx.bool(n.is_zero()))
}

fn numberp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    Ok(ctx.bool(Num::from_value(args[0]).is_some()))
}

fn integerp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    Ok(ctx.bool(matches!(args[0], Value::Fixnum(_) | Value::BigInt(_))))
}

fn floatp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    Ok(ctx.bool(matches!(args[0], Value::Float(_))))
}

fn float_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: &[Value<'gc>]) -> LResult<'gc> {
    let n = real_arg(ctx, args[0])?;
    Ok(alloc::float(ctx.mc, n.to_f64()))
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("+", 0, MANY, add),
    cl("-", 1, MANY, sub),
    cl("*", 0, MANY, mul),
    cl("/", 1, MANY, div),
    cl("1+", 1, 1, one_plus),
    cl("1-", 1, 1, one_minus),
    cl("=", 1, MANY, num_eq),
    cl("/=", 1, MANY, num_ne),
    cl("<", 1, MANY, num_lt),
    cl(">", 1, MANY, num_gt),
    cl("<=", 1, MANY, num_le),
    cl(">=", 1, MANY, num_ge),
    cl("ZEROP", 1, 1, zerop),
    cl("NUMBERP", 1, 1, numberp),
    cl("INTEGERP", 1, 1, integerp),
    cl("FLOATP", 1, 1, floatp),
    cl("FLOAT", 1, 2, float_fn),
];
