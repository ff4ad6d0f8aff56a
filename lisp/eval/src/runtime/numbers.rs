//! The numeric tower: a number taken out of a value (`Num`: fixnum, bignum,
//! ratio, double), arithmetic with CL's contagion rules, exact comparison, the
//! parts of complex numbers, and the conditions an arithmetic failure signals.
//! The VM's inline arithmetic, equality, types and the numeric builtins all
//! compute with it.
//!
//! Invariants:
//! - results are normalized: integers that fit are fixnums, ratios with
//!   denominator 1 are integers;
//! - operations on fixnums only (the common case) never allocate;
//! - comparisons between floats and rationals are exact (the float is taken
//!   as the rational it denotes), as CL requires;
//! - an infinite result from finite operands is `ArithError::Overflow`, an
//!   undefined one `Invalid` (SBCL's default traps, signalled by `arith_raise`).

use std::cmp::Ordering;

use mprof_heap::value::Complex;
use mprof_heap::{Value, alloc};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{ErrorKind, Raise};

/// A number taken out of a value, for arithmetic.
#[derive(Clone, Debug)]
pub(crate) enum Num {
    I(i64),
    B(BigInt),
    R(BigInt, BigInt),
    F(f64),
}

impl Num {
    pub(crate) fn from_value(v: Value<'_>) -> Option<Num> {
        Some(match v {
            Value::Fixnum(i) => Num::I(i),
            Value::BigInt(b) => Num::B(b.0.clone()),
            Value::Ratio(r) => Num::R(r.num.clone(), r.den.clone()),
            Value::Float(f) => Num::F(f.val),
            _ => return None,
        })
    }

    pub(crate) fn into_value<'gc>(self, ctx: &Ctx<'_, 'gc>) -> Value<'gc> {
        match self {
            Num::I(i) => Value::Fixnum(i),
            Num::B(b) => alloc::integer(ctx.mc, b),
            Num::R(n, d) => alloc::rational(ctx.mc, n, d),
            Num::F(x) => alloc::float(ctx.mc, x),
        }
    }

    /// The nearest double; infinite for rationals beyond the double range.
    pub(crate) fn to_f64(&self) -> f64 {
        match self {
            Num::I(i) => *i as f64,
            Num::B(b) => b.to_f64().unwrap_or(f64::NAN),
            Num::R(n, d) => ratio_to_f64(n, d),
            Num::F(x) => *x,
        }
    }

    pub(crate) fn to_big(&self) -> BigInt {
        match self {
            Num::I(i) => BigInt::from(*i),
            Num::B(b) => b.clone(),
            _ => BigInt::zero(),
        }
    }

    /// As an exact fraction (integers have denominator 1; floats their exact value).
    pub(crate) fn to_frac(&self) -> (BigInt, BigInt) {
        match self {
            Num::I(i) => (BigInt::from(*i), BigInt::one()),
            Num::B(b) => (b.clone(), BigInt::one()),
            Num::R(n, d) => (n.clone(), d.clone()),
            Num::F(x) => float_to_frac(*x),
        }
    }

    /// As a fraction of machine integers, when both parts fit.
    pub(crate) fn small_frac(&self) -> Option<(i64, i64)> {
        match self {
            Num::I(i) => Some((*i, 1)),
            Num::R(n, d) => Some((n.to_i64()?, d.to_i64()?)),
            _ => None,
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        match self {
            Num::I(i) => *i == 0,
            Num::B(b) => b.is_zero(),
            Num::R(..) => false,
            Num::F(x) => *x == 0.0,
        }
    }

    pub(crate) fn is_float(&self) -> bool {
        matches!(self, Num::F(_))
    }

    pub(crate) fn is_integer(&self) -> bool {
        matches!(self, Num::I(_) | Num::B(_))
    }

    /// -1, 0 or 1 (a negative zero float is 0).
    pub(crate) fn signum(&self) -> i32 {
        match self {
            Num::I(i) => i.signum() as i32,
            Num::B(b) | Num::R(b, _) => {
                if b.is_negative() {
                    -1
                } else if b.is_zero() {
                    0
                } else {
                    1
                }
            }
            Num::F(x) => {
                if *x < 0.0 {
                    -1
                } else if *x > 0.0 {
                    1
                } else {
                    0
                }
            }
        }
    }

    /// The double this number converts to under contagion; a rational too
    /// large for a double overflows, as SBCL's conversion does.
    pub(crate) fn float_value(&self) -> Result<f64, ArithError> {
        let x = self.to_f64();
        if !self.is_float() && !x.is_finite() { Err(ArithError::Overflow) } else { Ok(x) }
    }
}

/// The mantissa, exponent and sign of a double as SBCL's `integer-decode-float`
/// gives them (denormals keep their unshifted fraction and exponent -1074).
pub(crate) fn decode_f64(x: f64) -> (u64, i32, i32) {
    let bits = x.to_bits();
    let sign = if bits >> 63 == 0 { 1 } else { -1 };
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & 0x000f_ffff_ffff_ffff;
    if exp == 0 { (frac, -1074, sign) } else { (frac | 0x0010_0000_0000_0000, exp - 1075, sign) }
}

/// The exact value of a finite double as a fraction in lowest terms.
pub(crate) fn float_to_frac(x: f64) -> (BigInt, BigInt) {
    if !x.is_finite() || x == 0.0 {
        return (BigInt::zero(), BigInt::one());
    }
    let (frac, exp, sign) = decode_f64(x);
    let (frac, exp) = (frac >> frac.trailing_zeros(), exp + frac.trailing_zeros() as i32);
    let n = BigInt::from(frac) * sign;
    if exp >= 0 { (n << exp as usize, BigInt::one()) } else { (n, BigInt::one() << (-exp) as usize) }
}

/// n/d correctly rounded to a double (d > 0), even when n or d is beyond the
/// double range.
pub(crate) fn ratio_to_f64(n: &BigInt, d: &BigInt) -> f64 {
    if let (Some(a), Some(b)) = (n.to_i64(), d.to_i64())
        && a.unsigned_abs() < 1 << 53
        && b.unsigned_abs() < 1 << 53
    {
        // Both exact as doubles: one correctly rounded division.
        return a as f64 / b as f64;
    }
    let negative = n.is_negative() != d.is_negative();
    let (n, d) = (n.abs(), d.abs());
    // Scale so the integer quotient has 65..66 bits, then fold the remainder
    // into a sticky bit so the final rounding to 53 bits is exact.
    let shift = 65 - (n.bits() as i64 - d.bits() as i64);
    let (q, r) = if shift >= 0 { (&n << shift as usize).div_rem(&d) } else { n.div_rem(&(&d << (-shift) as usize)) };
    let q = if r.is_zero() { q } else { q | BigInt::one() };
    let m = q.to_f64().unwrap_or(f64::INFINITY);
    let v = scale_f64(m, -shift);
    if negative { -v } else { v }
}

/// x * 2^e without intermediate overflow or underflow.
pub(crate) fn scale_f64(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
        if x.is_infinite() {
            return x;
        }
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
        if x == 0.0 {
            return x;
        }
    }
    x * 2f64.powi(e as i32)
}

pub(crate) fn norm_big(b: BigInt) -> Num {
    match b.to_i64() {
        Some(i) => Num::I(i),
        None => Num::B(b),
    }
}

/// Binary GCD on machine words.
pub(crate) fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// n/d in lowest terms from 128-bit parts (d != 0), staying off bignums
/// when the result fits in machine words.
pub(crate) fn norm_frac_i128(n: i128, d: i128) -> Num {
    let (n, d) = if d < 0 { (n.wrapping_neg(), d.wrapping_neg()) } else { (n, d) };
    let g = gcd_u128(n.unsigned_abs(), d.unsigned_abs()) as i128;
    let (n, d) = if g > 1 { (n / g, d / g) } else { (n, d) };
    match (i64::try_from(n), i64::try_from(d)) {
        (Ok(n), Ok(1)) => Num::I(n),
        (Ok(n), Ok(d)) if d > 0 => Num::R(BigInt::from(n), BigInt::from(d)),
        _ => norm_frac(BigInt::from(n), BigInt::from(d)),
    }
}

pub(crate) fn norm_frac(n: BigInt, d: BigInt) -> Num {
    let (mut n, mut d) = (n, d);
    if d.is_negative() {
        n = -n;
        d = -d;
    }
    let g = n.gcd(&d);
    if !g.is_zero() && !g.is_one() {
        n /= &g;
        d /= &g;
    }
    if d.is_one() { norm_big(n) } else { Num::R(n, d) }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Op2 {
    Add,
    Sub,
    Mul,
    Div,
}

/// Why an arithmetic operation has no result.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ArithError {
    DivisionByZero,
    /// Finite operands, infinite result (or a rational too large for a double).
    Overflow,
    /// Finite operands, undefined result (0.0/0.0).
    Invalid,
    /// The result would be a complex number.
    Complex,
    /// An exact result too large to represent.
    TooLarge,
}

/// Check a float result of finite operands.
pub(crate) fn check_float(r: f64) -> Result<f64, ArithError> {
    if r.is_nan() {
        Err(ArithError::Invalid)
    } else if r.is_infinite() {
        Err(ArithError::Overflow)
    } else {
        Ok(r)
    }
}

/// Apply a binary operation with contagion.
pub(crate) fn arith(op: Op2, a: &Num, b: &Num) -> Result<Num, ArithError> {
    use Num::*;
    if a.is_float() || b.is_float() {
        let (x, y) = (a.float_value()?, b.float_value()?);
        let r = match op {
            Op2::Add => x + y,
            Op2::Sub => x - y,
            Op2::Mul => x * y,
            Op2::Div => {
                if y == 0.0 {
                    return Err(if x == 0.0 || x.is_nan() { ArithError::Invalid } else { ArithError::DivisionByZero });
                }
                x / y
            }
        };
        if x.is_finite() && y.is_finite() {
            return check_float(r).map(F);
        }
        return Ok(F(r));
    }
    if let (I(x), I(y)) = (a, b) {
        let (x, y) = (*x, *y);
        return Ok(match op {
            Op2::Add => x.checked_add(y).map(I).unwrap_or_else(|| B(BigInt::from(x) + y)),
            Op2::Sub => x.checked_sub(y).map(I).unwrap_or_else(|| B(BigInt::from(x) - y)),
            Op2::Mul => x.checked_mul(y).map(I).unwrap_or_else(|| B(BigInt::from(x) * y)),
            Op2::Div => {
                if y == 0 {
                    return Err(ArithError::DivisionByZero);
                }
                match (x.checked_rem(y), x.checked_div(y)) {
                    (Some(0), Some(q)) => I(q),
                    _ => norm_frac(BigInt::from(x), BigInt::from(y)),
                }
            }
        });
    }
    // Small ratios: 128-bit arithmetic cannot overflow on 64-bit parts.
    if let (Some((an, ad)), Some((bn, bd))) = (a.small_frac(), b.small_frac()) {
        let (an, ad, bn, bd) = (an as i128, ad as i128, bn as i128, bd as i128);
        return Ok(match op {
            Op2::Add => norm_frac_i128(an * bd + bn * ad, ad * bd),
            Op2::Sub => norm_frac_i128(an * bd - bn * ad, ad * bd),
            Op2::Mul => norm_frac_i128(an * bn, ad * bd),
            Op2::Div => {
                if bn == 0 {
                    return Err(ArithError::DivisionByZero);
                }
                norm_frac_i128(an * bd, ad * bn)
            }
        });
    }
    if a.is_integer() && b.is_integer() && op != Op2::Div {
        let (x, y) = (a.to_big(), b.to_big());
        return Ok(norm_big(match op {
            Op2::Add => x + y,
            Op2::Sub => x - y,
            _ => x * y,
        }));
    }
    let ((an, ad), (bn, bd)) = (a.to_frac(), b.to_frac());
    Ok(match op {
        Op2::Add => norm_frac(&an * &bd + &bn * &ad, ad * bd),
        Op2::Sub => norm_frac(&an * &bd - &bn * &ad, ad * bd),
        Op2::Mul => norm_frac(an * bn, ad * bd),
        Op2::Div => {
            if bn.is_zero() {
                return Err(ArithError::DivisionByZero);
            }
            norm_frac(an * bd, ad * bn)
        }
    })
}

/// Compare two real numbers, exactly (a float compares as the rational it denotes).
pub(crate) fn compare(a: &Num, b: &Num) -> Ordering {
    use Num::*;
    match (a, b) {
        (I(x), I(y)) => x.cmp(y),
        (F(x), F(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (F(x), r) => compare_float_rational(*x, r),
        (r, F(y)) => compare_float_rational(*y, r).reverse(),
        (I(_) | B(_), I(_) | B(_)) => a.to_big().cmp(&b.to_big()),
        _ => {
            let ((an, ad), (bn, bd)) = (a.to_frac(), b.to_frac());
            (an * bd).cmp(&(bn * ad))
        }
    }
}

pub(crate) fn compare_float_rational(x: f64, r: &Num) -> Ordering {
    if x.is_nan() {
        return Ordering::Equal;
    }
    if x.is_infinite() {
        return if x > 0.0 { Ordering::Greater } else { Ordering::Less };
    }
    if let Num::I(i) = r
        && i.unsigned_abs() <= 1 << 53
    {
        // Exactly representable: the float comparison is exact.
        return x.partial_cmp(&(*i as f64)).unwrap_or(Ordering::Equal);
    }
    let (xn, xd) = float_to_frac(x);
    let (rn, rd) = r.to_frac();
    (xn * rd).cmp(&(rn * xd))
}

/// `=` on two values, None if either is not a number.
pub(crate) fn numbers_equal<'gc>(a: Value<'gc>, b: Value<'gc>) -> Option<bool> {
    if matches!(a, Value::Complex(_)) || matches!(b, Value::Complex(_)) {
        return complex_numbers_equal(a, b);
    }
    let (x, y) = (Num::from_value(a)?, Num::from_value(b)?);
    Some(compare(&x, &y) == Ordering::Equal)
}

pub(crate) fn to_f64(v: Value<'_>) -> Option<f64> {
    Num::from_value(v).map(|n| n.to_f64())
}

/// The numeric argument `v`, or a type error naming `NUMBER`.
pub(crate) fn num_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Num, Raise<'gc>> {
    Num::from_value(v).ok_or_else(|| ctx.type_error(v, "NUMBER"))
}

pub(crate) fn real_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Num, Raise<'gc>> {
    Num::from_value(v).ok_or_else(|| ctx.type_error(v, "REAL"))
}

pub(crate) fn integer_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Num, Raise<'gc>> {
    match v {
        Value::Fixnum(i) => Ok(Num::I(i)),
        Value::BigInt(b) => Ok(Num::B(b.0.clone())),
        other => Err(ctx.type_error(other, "INTEGER")),
    }
}

/// A type error with a compound expected type built from CL symbols (so that
/// it prints as SBCL prints it).
pub(crate) fn compound_type_error<'gc>(ctx: &Ctx<'_, 'gc>, datum: Value<'gc>, spec: &[Value<'gc>]) -> Raise<'gc> {
    Raise::TypeError { datum, expected: alloc::list(ctx.mc, spec) }
}

pub(crate) fn integer_range_error<'gc>(ctx: &Ctx<'_, 'gc>, datum: Value<'gc>, lo: i64, hi: i64) -> Raise<'gc> {
    compound_type_error(ctx, datum, &[ctx.cl("INTEGER"), Value::Fixnum(lo), Value::Fixnum(hi)])
}

pub(crate) fn float_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<f64, Raise<'gc>> {
    match v {
        Value::Float(f) => Ok(f.val),
        other => Err(ctx.type_error(other, "FLOAT")),
    }
}

/// Signal a condition of a type defined in Lisp (or, before the prelude has
/// defined it, a plain arithmetic error), filling its arithmetic-error slots.
pub(crate) fn arith_condition<'gc>(ctx: &Ctx<'_, 'gc>, type_name: &str, op: Value<'gc>, operands: &[Value<'gc>]) -> Raise<'gc> {
    let name = ctx.cl(type_name);
    match ctx.world.find_type(name) {
        Some(t) => {
            let ops = alloc::list(ctx.mc, operands);
            Raise::Condition(crate::runtime::conditions::make(ctx.mc, t, &[("OPERATION", op), ("OPERANDS", ops)]))
        }
        None => Raise::Error {
            kind: ErrorKind::Arithmetic,
            message: format!("arithmetic error {type_name} signalled"),
            irritants: vec![],
        },
    }
}

/// The condition for an arithmetic failure of the operation `name` applied to `operands`.
pub(crate) fn arith_raise<'gc>(ctx: &Ctx<'_, 'gc>, err: ArithError, name: &str, operands: &[Value<'gc>]) -> Raise<'gc> {
    let op = ctx.cl(name);
    match err {
        ArithError::DivisionByZero => Raise::DivisionByZero { operation: op, operands: operands.to_vec() },
        ArithError::Overflow => arith_condition(ctx, "FLOATING-POINT-OVERFLOW", op, operands),
        ArithError::Invalid => arith_condition(ctx, "FLOATING-POINT-INVALID-OPERATION", op, operands),
        ArithError::Complex => {
            let shown: Vec<String> = operands.iter().map(|&v| ctx.print(v, true)).collect();
            Raise::Error {
                kind: ErrorKind::Arithmetic,
                message: format!(
                    "({name} {}) has a complex result that {name} cannot compute",
                    shown.join(" ")
                ),
                irritants: vec![],
            }
        }
        ArithError::TooLarge => {
            let shown: Vec<String> = operands.iter().map(|&v| ctx.print(v, true)).collect();
            let mut text = format!("({name} {})", shown.join(" "));
            if text.len() > 200 {
                text.truncate(200);
                text.push_str("...");
            }
            Raise::error(format!("the result of {text} is too large to represent"))
        }
    }
}

/// The operands to show in an error of a binary float operation: converted to
/// floats, as SBCL shows them, when contagion applied.
pub(crate) fn shown_operands<'gc>(ctx: &Ctx<'_, 'gc>, a: &Num, b: &Num) -> Vec<Value<'gc>> {
    let contagion = a.is_float() || b.is_float();
    [a, b]
        .iter()
        .map(|n| match n.float_value() {
            // A rational too large for a double is shown as it is.
            Ok(f) if contagion => alloc::float(ctx.mc, f),
            _ => (*n).clone().into_value(ctx),
        })
        .collect()
}

/// The real and imaginary parts of any number (a real's imaginary part is an exact 0).
pub(crate) fn parts(v: Value<'_>) -> Option<(Num, Num)> {
    match v {
        Value::Complex(c) => Some(match c.val {
            Complex::Double(re, im) => (Num::F(re), Num::F(im)),
            Complex::Rational(re, im) => (Num::from_value(re)?, Num::from_value(im)?),
        }),
        other => Some((Num::from_value(other)?, Num::I(0))),
    }
}

/// `=` of two numbers, one of them complex or not.
pub(crate) fn equal_parts(x: &(Num, Num), y: &(Num, Num)) -> bool {
    compare(&x.0, &y.0).is_eq() && compare(&x.1, &y.1).is_eq()
}

/// `(= a b)` for equalp, when either is complex; None if either is not a number.
pub(crate) fn complex_numbers_equal(a: Value<'_>, b: Value<'_>) -> Option<bool> {
    Some(equal_parts(&parts(a)?, &parts(b)?))
}

/// Exponents whose result would take more bits than this are refused.
pub(crate) const MAX_RESULT_BITS: u64 = 1 << 28;
