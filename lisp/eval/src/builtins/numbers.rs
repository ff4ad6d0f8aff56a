//! The numeric builtins that take no function argument: arithmetic,
//! comparison, the rounding family, exponentials and trigonometry, bit
//! operations on two's-complement integers, conversions, random numbers and
//! `parse-integer`'s core, over the numeric tower of `runtime::numbers`.
//!
//! Invariants:
//! - results are normalized: integers that fit are fixnums, ratios with
//!   denominator 1 are integers;
//! - operations on fixnums only (the common case) never allocate;
//! - comparisons between floats and rationals are exact (the float is taken
//!   as the rational it denotes), as CL requires;
//! - floating-point faults follow SBCL's default traps: an infinite result from
//!   finite operands signals `floating-point-overflow`, an undefined one
//!   `floating-point-invalid-operation`, a float divided by zero
//!   `division-by-zero`; results that are complex numbers (`(sqrt -4d0)`)
//!   and every complex argument are handed to `complex.rs`.
//!
//! SBCL returns single floats for irrational functions of rationals (`(sqrt 2)`);
//! here every float is a double.

use std::cmp::Ordering;

use mprof_heap::{Value, alloc};
use num_bigint::BigInt;
use num_integer::{Integer, Roots};
use num_traits::{FromPrimitive, One, Signed, ToPrimitive, Zero};

use crate::runtime::builtin::{BuiltinDef, MANY, cl};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};
use crate::runtime::numbers::{ArithError, MAX_RESULT_BITS, Num, Op2, arith, arith_raise, check_float, compare, decode_f64, float_arg, float_to_frac, integer_arg, norm_big, norm_frac, num_arg, ratio_to_f64, real_arg, scale_f64, shown_operands};

type A<'a, 'gc> = &'a [Value<'gc>];

fn fold<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>, op: Op2, name: &str, unit: i64) -> LResult<'gc> {
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
    if args.iter().any(|v| matches!(v, Value::Complex(_))) {
        return super::complex::fold(ctx, args, op, name, unit);
    }
    // Two integers, at least one a bignum: work on the stored digits without copying them.
    if let [a, b] = args
        && op != Op2::Div
        && let Some(r) = bignum_binop(op, *a, *b)
    {
        return Ok(alloc::integer(ctx.mc, r));
    }
    let mut acc = match args.first() {
        None => return Ok(Value::Fixnum(unit)),
        Some(&a) if args.len() == 1 && matches!(op, Op2::Sub | Op2::Div) => {
            let x = num_arg(ctx, a)?;
            let u = Num::I(unit);
            return match arith(op, &u, &x) {
                Ok(r) => Ok(r.into_value(ctx)),
                Err(e) => Err(arith_raise(ctx, e, name, &shown_operands(ctx, &u, &x))),
            };
        }
        Some(&a) if args.len() == 1 => {
            num_arg(ctx, a)?;
            return Ok(a);
        }
        Some(&a) => num_arg(ctx, a)?,
    };
    for &b in &args[1..] {
        let y = num_arg(ctx, b)?;
        acc = match arith(op, &acc, &y) {
            Ok(r) => r,
            Err(e) => return Err(arith_raise(ctx, e, name, &shown_operands(ctx, &acc, &y))),
        };
    }
    Ok(acc.into_value(ctx))
}

/// `+`, `-` or `*` of two integers of which at least one is a bignum, from
/// borrowed digits; None for any other pair.
fn bignum_binop(op: Op2, a: Value<'_>, b: Value<'_>) -> Option<BigInt> {
    Some(match (a, b) {
        (Value::BigInt(x), Value::BigInt(y)) => match op {
            Op2::Add => &x.0 + &y.0,
            Op2::Sub => &x.0 - &y.0,
            _ => &x.0 * &y.0,
        },
        (Value::BigInt(x), Value::Fixnum(y)) => match op {
            Op2::Add => &x.0 + y,
            Op2::Sub => &x.0 - y,
            _ => &x.0 * y,
        },
        (Value::Fixnum(x), Value::BigInt(y)) => match op {
            Op2::Add => x + &y.0,
            Op2::Sub => x - &y.0,
            _ => x * &y.0,
        },
        _ => return None,
    })
}

fn add<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    fold(ctx, args, Op2::Add, "+", 0)
}
fn sub<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    fold(ctx, args, Op2::Sub, "-", 0)
}
fn mul<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    fold(ctx, args, Op2::Mul, "*", 1)
}
fn div<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    fold(ctx, args, Op2::Div, "/", 1)
}

fn one_plus<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if let Value::Fixnum(i) = args[0]
        && let Some(r) = i.checked_add(1)
    {
        return Ok(Value::Fixnum(r));
    }
    fold(ctx, &[args[0], Value::Fixnum(1)], Op2::Add, "1+", 0)
}

fn one_minus<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if let Value::Fixnum(i) = args[0]
        && let Some(r) = i.checked_sub(1)
    {
        return Ok(Value::Fixnum(r));
    }
    fold(ctx, &[args[0], Value::Fixnum(1)], Op2::Sub, "1-", 0)
}

fn compare_chain<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>, ok: fn(Ordering) -> bool) -> LResult<'gc> {
    if let [Value::Fixnum(a), Value::Fixnum(b)] = args {
        return Ok(ctx.bool(ok(a.cmp(b))));
    }
    // Pairwise, without collecting; every argument is type-checked even after
    // the answer is known.
    let mut result = true;
    let mut prev = real_arg(ctx, args[0])?;
    for &v in &args[1..] {
        let n = real_arg(ctx, v)?;
        if result && !ok(compare(&prev, &n)) {
            result = false;
        }
        prev = n;
    }
    Ok(ctx.bool(result))
}

fn num_eq<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if args.iter().any(|v| matches!(v, Value::Complex(_))) {
        return super::complex::num_eq(ctx, args, false);
    }
    compare_chain(ctx, args, |o| o.is_eq())
}
fn num_lt<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_lt())
}
fn num_gt<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_gt())
}
fn num_le<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_le())
}
fn num_ge<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    compare_chain(ctx, args, |o| o.is_ge())
}
fn num_ne<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if args.iter().any(|v| matches!(v, Value::Complex(_))) {
        return super::complex::num_eq(ctx, args, true);
    }
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

/// MIN and MAX return the winning argument itself (the first of equals), as SBCL does.
fn extremum<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>, want: Ordering) -> LResult<'gc> {
    let mut best = args[0];
    if let Value::Fixnum(mut b) = best
        && args.iter().all(|v| matches!(v, Value::Fixnum(_)))
    {
        for v in &args[1..] {
            if let Value::Fixnum(x) = *v
                && x.cmp(&b) == want
            {
                b = x;
            }
        }
        return Ok(Value::Fixnum(b));
    }
    let mut bn = real_arg(ctx, best)?;
    for &v in &args[1..] {
        let n = real_arg(ctx, v)?;
        if compare(&n, &bn) == want {
            best = v;
            bn = n;
        }
    }
    Ok(best)
}

fn min_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    extremum(ctx, args, Ordering::Less)
}
fn max_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    extremum(ctx, args, Ordering::Greater)
}

fn abs_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let v = args[0];
    Ok(match v {
        Value::Fixnum(i) => match i.checked_abs() {
            Some(a) => Value::Fixnum(a),
            None => alloc::integer(ctx.mc, BigInt::from(i).abs()),
        },
        Value::Float(f) if f.val.is_sign_negative() => alloc::float(ctx.mc, f.val.abs()),
        Value::BigInt(b) if b.0.is_negative() => alloc::integer(ctx.mc, b.0.abs()),
        Value::Ratio(r) if r.num.is_negative() => alloc::rational(ctx.mc, r.num.abs(), r.den.clone()),
        Value::Float(_) | Value::BigInt(_) | Value::Ratio(_) => v,
        Value::Complex(_) => return super::complex::abs(ctx, v),
        other => return Err(ctx.type_error(other, "NUMBER")),
    })
}

// ---- the rounding family ----

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rnd {
    Floor,
    Ceiling,
    Truncate,
    Round,
}

/// Fixnum quotient and remainder; None when the quotient overflows (MIN / -1).
fn fixnum_divide(mode: Rnd, a: i64, b: i64) -> Option<(i64, i64)> {
    let (mut q, mut r) = (a.checked_div(b)?, a.checked_rem(b)?);
    if r != 0 {
        // The true quotient is negative when the remainder's sign differs from the divisor's.
        let negative = (r < 0) != (b < 0);
        let away = match mode {
            Rnd::Truncate => false,
            Rnd::Floor => negative,
            Rnd::Ceiling => !negative,
            Rnd::Round => match (r.unsigned_abs() * 2).cmp(&b.unsigned_abs()) {
                Ordering::Greater => true,
                Ordering::Equal => q % 2 != 0,
                Ordering::Less => false,
            },
        };
        if away {
            if negative {
                q -= 1;
                r += b;
            } else {
                q += 1;
                r -= b;
            }
        }
    }
    Some((q, r))
}

/// Exact quotient (an integer) and remainder of two rationals.
fn rational_divide(mode: Rnd, x: &Num, y: &Num) -> Result<(Num, Num), ArithError> {
    if let (Num::I(a), Num::I(b)) = (x, y) {
        if *b == 0 {
            return Err(ArithError::DivisionByZero);
        }
        if let Some((q, r)) = fixnum_divide(mode, *a, *b) {
            return Ok((Num::I(q), Num::I(r)));
        }
    }
    // x/y = n/m; the remainder is x - q*y = (n - q*m) / den, with den = 1 for integers.
    let (n, m, den) = if x.is_integer() && y.is_integer() {
        (x.to_big(), y.to_big(), None)
    } else {
        let ((an, ad), (bn, bd)) = (x.to_frac(), y.to_frac());
        (&an * &bd, &ad * &bn, Some(ad * bd))
    };
    if m.is_zero() {
        return Err(ArithError::DivisionByZero);
    }
    let (mut q, mut rem) = n.div_rem(&m);
    if !rem.is_zero() {
        let negative = rem.is_negative() != m.is_negative();
        let away = match mode {
            Rnd::Truncate => false,
            Rnd::Floor => negative,
            Rnd::Ceiling => !negative,
            Rnd::Round => match (rem.abs() * 2u32).cmp(&m.abs()) {
                Ordering::Greater => true,
                Ordering::Equal => q.is_odd(),
                Ordering::Less => false,
            },
        };
        // Moving q one step away from zero moves n - q*m by m the other way.
        if away {
            if negative {
                q -= 1;
                rem += &m;
            } else {
                q += 1;
                rem -= &m;
            }
        }
    }
    let r = match den {
        None => norm_big(rem),
        Some(d) => norm_frac(rem, d),
    };
    Ok((norm_big(q), r))
}

/// Float division as SBCL does it: the truncated quotient `t` (an integral
/// double), the remainder x - t*y in doubles, and the step (-1, 0 or 1) the
/// rounding mode applies to the quotient (the remainder then moves by -step*y).
/// The step is applied by the caller so that an integer quotient beyond 2^53
/// still changes by exactly one. `x_sign` is the sign of the dividend as given
/// (SBCL decides FLOOR and CEILING from it, not from the remainder).
///
/// With `integer_quotient` the quotient is taken as the integer it will become
/// (so a -0.0 quotient is 0 and (floor -0.0) leaves the remainder -0.0, as in SBCL).
fn float_divide(mode: Rnd, x: f64, x_sign: i32, y: f64, integer_quotient: bool) -> Result<(f64, f64, i8), ArithError> {
    if y == 0.0 {
        return Err(if x == 0.0 { ArithError::Invalid } else { ArithError::DivisionByZero });
    }
    let f = check_float(x / y)?;
    let t = f.trunc();
    let t = if integer_quotient && t == 0.0 { 0.0 } else { t };
    let r = x - t * y;
    if r == 0.0 {
        return Ok((t, r, 0));
    }
    let step = match mode {
        Rnd::Truncate => 0,
        Rnd::Floor => {
            if (y < 0.0 && x_sign > 0) || (y > 0.0 && x_sign < 0) {
                -1
            } else {
                0
            }
        }
        Rnd::Ceiling => {
            if (y < 0.0 && x_sign < 0) || (y > 0.0 && x_sign > 0) {
                1
            } else {
                0
            }
        }
        Rnd::Round => {
            let half = y.abs() / 2.0;
            let odd = t % 2.0 != 0.0;
            let toward_y = if y < 0.0 { -1 } else { 1 };
            if r > half || (r == half && odd) {
                toward_y
            } else if r < -half || (r == -half && odd) {
                -toward_y
            } else {
                0
            }
        }
    };
    Ok((t, r - step as f64 * y, step))
}

/// FLOOR, CEILING, TRUNCATE, ROUND and their F- variants: two values.
fn divide_values<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>, mode: Rnd, float_q: bool, name: &str) -> LResult<'gc> {
    if !float_q {
        match *args {
            [Value::Fixnum(a)] => return Ok(ctx.set_values(&[Value::Fixnum(a), Value::Fixnum(0)])),
            [Value::Fixnum(a), Value::Fixnum(b)] if b != 0 => {
                if let Some((q, r)) = fixnum_divide(mode, a, b) {
                    return Ok(ctx.set_values(&[Value::Fixnum(q), Value::Fixnum(r)]));
                }
            }
            _ => {}
        }
    }
    let x = real_arg(ctx, args[0])?;
    let y = match args.get(1) {
        Some(&v) => real_arg(ctx, v)?,
        None => Num::I(1),
    };
    let fail = |ctx: &Ctx<'_, 'gc>, e: ArithError| arith_raise(ctx, e, name, args);
    let (q, r) = if x.is_float() || y.is_float() {
        let xf = x.float_value().map_err(|e| fail(ctx, e))?;
        let yf = y.float_value().map_err(|e| fail(ctx, e))?;
        let (t, rf, step) =
            float_divide(mode, xf, x.signum(), yf, !float_q || mode == Rnd::Round).map_err(|e| fail(ctx, e))?;
        // FROUND goes through the integer quotient (so never gives -0.0), as in SBCL.
        let q = if float_q && mode != Rnd::Round {
            Num::F(if step == 0 { t } else { t + step as f64 })
        } else {
            let qi = BigInt::from_f64(t).unwrap_or_default() + step;
            let qi = norm_big(qi);
            if float_q { Num::F(qi.to_f64()) } else { qi }
        };
        (q, Num::F(rf))
    } else {
        let (q, r) = rational_divide(mode, &x, &y).map_err(|e| fail(ctx, e))?;
        if float_q { (Num::F(q.float_value().map_err(|e| fail(ctx, e))?), r) } else { (q, r) }
    };
    let (q, r) = (q.into_value(ctx), r.into_value(ctx));
    Ok(ctx.set_values(&[q, r]))
}

macro_rules! rounding {
    ($($fname:ident, $mode:ident, $fq:expr, $lname:expr;)*) => {$(
        fn $fname<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
            divide_values(ctx, args, Rnd::$mode, $fq, $lname)
        }
    )*};
}

rounding! {
    floor_fn, Floor, false, "FLOOR";
    ceiling_fn, Ceiling, false, "CEILING";
    truncate_fn, Truncate, false, "TRUNCATE";
    round_fn, Round, false, "ROUND";
    ffloor_fn, Floor, true, "FFLOOR";
    fceiling_fn, Ceiling, true, "FCEILING";
    ftruncate_fn, Truncate, true, "FTRUNCATE";
    fround_fn, Round, true, "FROUND";
}

/// MOD and REM: the remainder of FLOOR and TRUNCATE.
fn remainder<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>, mode: Rnd, name: &str) -> LResult<'gc> {
    if let [Value::Fixnum(a), Value::Fixnum(b)] = *args
        && b != 0
    {
        // MIN rem -1 overflows the quotient but the remainder is 0.
        return Ok(Value::Fixnum(fixnum_divide(mode, a, b).map(|(_, r)| r).unwrap_or(0)));
    }
    divide_values(ctx, args, mode, false, name)?;
    let r = ctx.values.get(1).copied().unwrap_or(Value::Nil);
    ctx.values.clear();
    ctx.multiple = false;
    Ok(r)
}

fn mod_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    remainder(ctx, args, Rnd::Floor, "MOD")
}
fn rem_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    remainder(ctx, args, Rnd::Truncate, "REM")
}

// ---- gcd, lcm, expt ----

fn gcd2(a: &Num, b: &Num) -> Num {
    if let (Num::I(x), Num::I(y)) = (a, b) {
        let g = x.unsigned_abs().gcd(&y.unsigned_abs());
        return match i64::try_from(g) {
            Ok(g) => Num::I(g),
            Err(_) => Num::B(BigInt::from(g)),
        };
    }
    norm_big(a.to_big().gcd(&b.to_big()))
}

fn lcm2(a: &Num, b: &Num) -> Num {
    if a.is_zero() || b.is_zero() {
        return Num::I(0);
    }
    if let (Num::I(x), Num::I(y)) = (a, b) {
        let (x, y) = (x.unsigned_abs(), y.unsigned_abs());
        if let Some(l) = (x / x.gcd(&y)).checked_mul(y)
            && let Ok(l) = i64::try_from(l)
        {
            return Num::I(l);
        }
    }
    norm_big(a.to_big().lcm(&b.to_big()))
}

fn gcd_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let mut acc = Num::I(0);
    for &v in args {
        acc = gcd2(&acc, &integer_arg(ctx, v)?);
    }
    Ok(acc.into_value(ctx))
}

fn lcm_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let Some((&first, rest)) = args.split_first() else {
        return Ok(Value::Fixnum(1));
    };
    let mut acc = integer_arg(ctx, first)?;
    if let Num::I(i) = acc {
        acc = match i.checked_abs() {
            Some(a) => Num::I(a),
            None => Num::B(BigInt::from(i).abs()),
        };
    } else {
        acc = norm_big(acc.to_big().abs());
    }
    for &v in rest {
        acc = lcm2(&acc, &integer_arg(ctx, v)?);
    }
    Ok(acc.into_value(ctx))
}


/// base^power for an integer base and a non-negative power.
fn int_pow(base: &Num, power: u64) -> Result<Num, ArithError> {
    if let Num::I(b) = base {
        // Square-and-multiply in i64 while it fits.
        let (mut acc, mut sq, mut p) = (1i64, *b, power);
        let fits = loop {
            if p & 1 == 1 {
                match acc.checked_mul(sq) {
                    Some(v) => acc = v,
                    None => break false,
                }
            }
            p >>= 1;
            if p == 0 {
                break true;
            }
            match sq.checked_mul(sq) {
                Some(v) => sq = v,
                None => break false,
            }
        };
        if fits {
            return Ok(Num::I(acc));
        }
    }
    let b = base.to_big();
    if b.bits().saturating_mul(power) > MAX_RESULT_BITS {
        return Err(ArithError::TooLarge);
    }
    let p = u32::try_from(power).map_err(|_| ArithError::TooLarge)?;
    Ok(norm_big(num_traits::pow::Pow::pow(&b, p)))
}

/// Exact rational base to an integer power.
fn exact_expt(base: &Num, power: &Num) -> Result<Num, ArithError> {
    let negative = power.signum() < 0;
    if base.is_zero() {
        return if negative { Err(ArithError::DivisionByZero) } else { Ok(Num::I(0)) };
    }
    let odd = match power {
        Num::I(p) => p & 1 == 1,
        _ => power.to_big().is_odd(),
    };
    // Units first, so that bignum powers of them work.
    match base {
        Num::I(1) => return Ok(Num::I(1)),
        Num::I(-1) => return Ok(Num::I(if odd { -1 } else { 1 })),
        _ => {}
    }
    let p = match power {
        Num::I(p) => p.unsigned_abs(),
        _ => return Err(ArithError::TooLarge),
    };
    let r = match base {
        Num::R(n, d) => {
            let (n, d) = (int_pow(&norm_big(n.clone()), p)?, int_pow(&norm_big(d.clone()), p)?);
            norm_frac(n.to_big(), d.to_big())
        }
        _ => int_pow(base, p)?,
    };
    if negative { arith(Op2::Div, &Num::I(1), &r) } else { Ok(r) }
}

fn expt_num(base: &Num, power: &Num) -> Result<Num, ArithError> {
    if power.is_zero() {
        if power.is_float() {
            if base.is_zero() {
                return Err(ArithError::Invalid);
            }
            return Ok(Num::F(1.0));
        }
        return Ok(if base.is_float() { Num::F(1.0) } else { Num::I(1) });
    }
    if power.is_integer() && !base.is_float() {
        return exact_expt(base, power);
    }
    let b = base.float_value()?;
    let p = match power {
        Num::I(_) | Num::B(_) => power.to_f64(),
        _ => power.float_value()?,
    };
    if b == 0.0 {
        return if p > 0.0 { Ok(Num::F(0.0)) } else { Err(ArithError::DivisionByZero) };
    }
    if b < 0.0 && p.fract() != 0.0 {
        return Err(ArithError::Complex);
    }
    let r = b.powf(p);
    if b.is_finite() { check_float(r).map(Num::F) } else { Ok(Num::F(r)) }
}

fn expt<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if args.iter().any(|v| matches!(v, Value::Complex(_))) {
        return super::complex::expt(ctx, args[0], args[1]);
    }
    let (base, power) = (num_arg(ctx, args[0])?, num_arg(ctx, args[1])?);
    match expt_num(&base, &power) {
        Ok(r) => Ok(r.into_value(ctx)),
        Err(ArithError::Complex) => super::complex::expt(ctx, args[0], args[1]),
        Err(e) => Err(arith_raise(ctx, e, "EXPT", args)),
    }
}

// ---- exponentials, logarithms, roots, trigonometry ----

/// ln|b| of a positive integer of any size.
fn big_ln(b: &BigInt) -> f64 {
    let bits = b.bits();
    if bits < 1000 {
        return b.to_f64().unwrap_or(f64::NAN).ln();
    }
    let shift = bits - 64;
    (b >> shift as usize).to_f64().unwrap_or(f64::NAN).ln() + shift as f64 * std::f64::consts::LN_2
}

/// The natural logarithm of a real; rationals of any size.
fn ln_num(x: &Num) -> Result<f64, ArithError> {
    match x.signum() {
        0 => return Err(ArithError::DivisionByZero),
        -1 => return Err(ArithError::Complex),
        _ => {}
    }
    Ok(match x {
        Num::I(i) => (*i as f64).ln(),
        Num::B(b) => big_ln(b),
        Num::F(f) => f.ln(),
        Num::R(n, d) => {
            let q = ratio_to_f64(n, d);
            if q.is_normal() { q.ln() } else { big_ln(n) - big_ln(d) }
        }
    })
}

fn log_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if args.iter().any(|v| matches!(v, Value::Complex(_))) {
        return match args.get(1) {
            None => super::complex::unary(ctx, "LOG", args[0]),
            Some(&b) => super::complex::log2(ctx, args[0], b),
        };
    }
    let x = num_arg(ctx, args[0])?;
    let r = match args.get(1) {
        None => ln_num(&x),
        Some(&b) => {
            let base = num_arg(ctx, b)?;
            if base.is_zero() {
                Ok(0.0)
            } else {
                ln_num(&x).and_then(|lx| {
                    let lb = ln_num(&base)?;
                    if lb == 0.0 {
                        Err(if lx == 0.0 { ArithError::Invalid } else { ArithError::DivisionByZero })
                    } else {
                        Ok(lx / lb)
                    }
                })
            }
        }
    };
    match r {
        Ok(f) => Ok(alloc::float(ctx.mc, f)),
        Err(ArithError::Complex) => match args.get(1) {
            None => super::complex::unary(ctx, "LOG", args[0]),
            Some(&b) => super::complex::log2(ctx, args[0], b),
        },
        Err(e) => Err(arith_raise(ctx, e, "LOG", args)),
    }
}

fn sqrt_num(x: &Num) -> Result<f64, ArithError> {
    if x.signum() < 0 {
        return Err(ArithError::Complex);
    }
    if let Num::B(b) = x
        && b.to_f64().is_none_or(|f| !f.is_finite())
    {
        // Beyond the double range, but its root is not: halve the exponent first.
        let k = (b.bits() - 1000) / 2;
        let root = (b >> (2 * k) as usize).to_f64().unwrap_or(f64::NAN).sqrt();
        return check_float(scale_f64(root, k as i64));
    }
    Ok(x.float_value()?.sqrt())
}

fn sqrt_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if let Value::Complex(_) = args[0] {
        return super::complex::unary(ctx, "SQRT", args[0]);
    }
    let x = num_arg(ctx, args[0])?;
    match sqrt_num(&x) {
        Ok(f) => Ok(alloc::float(ctx.mc, f)),
        Err(ArithError::Complex) => super::complex::unary(ctx, "SQRT", args[0]),
        Err(e) => Err(arith_raise(ctx, e, "SQRT", args)),
    }
}

fn isqrt_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    match args[0] {
        Value::Fixnum(i) if i >= 0 => Ok(Value::Fixnum((i as u64).sqrt() as i64)),
        Value::BigInt(b) if !b.0.is_negative() => Ok(alloc::integer(ctx.mc, b.0.sqrt())),
        other => Err(ctx.type_error(other, "UNSIGNED-BYTE")),
    }
}

/// A one-argument float function of a real: domain check, then overflow check.
fn real_fn<'gc>(
    ctx: &mut Ctx<'_, 'gc>,
    args: A<'_, 'gc>,
    name: &str,
    domain: fn(f64) -> Result<(), ArithError>,
    f: fn(f64) -> f64,
) -> LResult<'gc> {
    if let Value::Complex(_) = args[0] {
        return super::complex::unary(ctx, name, args[0]);
    }
    let x = real_arg(ctx, args[0])?;
    let r = x.float_value().and_then(|xf| {
        domain(xf)?;
        check_float(f(xf))
    });
    match r {
        Ok(v) => Ok(alloc::float(ctx.mc, v)),
        Err(ArithError::Complex) => super::complex::unary(ctx, name, args[0]),
        Err(e) => Err(arith_raise(ctx, e, name, args)),
    }
}

fn any(_: f64) -> Result<(), ArithError> {
    Ok(())
}
fn unit_interval(x: f64) -> Result<(), ArithError> {
    if (-1.0..=1.0).contains(&x) { Ok(()) } else { Err(ArithError::Complex) }
}
fn at_least_one(x: f64) -> Result<(), ArithError> {
    if x >= 1.0 { Ok(()) } else { Err(ArithError::Complex) }
}
fn open_unit_interval(x: f64) -> Result<(), ArithError> {
    if x.abs() == 1.0 {
        Err(ArithError::DivisionByZero)
    } else if x.abs() > 1.0 {
        Err(ArithError::Complex)
    } else {
        Ok(())
    }
}

macro_rules! float_fns {
    ($($fname:ident, $lname:expr, $domain:ident, $f:expr;)*) => {$(
        fn $fname<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
            real_fn(ctx, args, $lname, $domain, $f)
        }
    )*};
}

float_fns! {
    exp_fn, "EXP", any, f64::exp;
    sin_fn, "SIN", any, f64::sin;
    cos_fn, "COS", any, f64::cos;
    tan_fn, "TAN", any, f64::tan;
    asin_fn, "ASIN", unit_interval, f64::asin;
    acos_fn, "ACOS", unit_interval, f64::acos;
    sinh_fn, "SINH", any, f64::sinh;
    cosh_fn, "COSH", any, f64::cosh;
    tanh_fn, "TANH", any, f64::tanh;
    asinh_fn, "ASINH", any, f64::asinh;
    acosh_fn, "ACOSH", at_least_one, f64::acosh;
    atanh_fn, "ATANH", open_unit_interval, f64::atanh;
}

fn atan_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if let (Value::Complex(_), None) = (args[0], args.get(1)) {
        return super::complex::unary(ctx, "ATAN", args[0]);
    }
    let y = real_arg(ctx, args[0])?;
    let r = match args.get(1) {
        None => y.float_value().map(f64::atan),
        Some(&xv) => {
            let x = real_arg(ctx, xv)?;
            y.float_value().and_then(|yf| Ok(yf.atan2(x.float_value()?)))
        }
    };
    match r {
        Ok(v) => Ok(alloc::float(ctx.mc, v)),
        Err(e) => Err(arith_raise(ctx, e, "ATAN", args)),
    }
}

// ---- conversions and accessors ----

fn float_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if let Some(&p) = args.get(1) {
        float_arg(ctx, p)?;
    }
    let v = args[0];
    if let Value::Float(_) = v {
        return Ok(v);
    }
    let n = real_arg(ctx, v)?;
    match n.float_value() {
        Ok(f) => Ok(alloc::float(ctx.mc, f)),
        Err(e) => Err(arith_raise(ctx, e, "FLOAT", &args[..1])),
    }
}

fn rational_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    match args[0] {
        Value::Float(f) => {
            let (n, d) = float_to_frac(f.val);
            Ok(alloc::rational(ctx.mc, n, d))
        }
        v @ (Value::Fixnum(_) | Value::BigInt(_) | Value::Ratio(_)) => Ok(v),
        other => Err(ctx.type_error(other, "REAL")),
    }
}

/// The simplest rational within half a unit in the last place of x: SBCL's
/// continued-fraction algorithm.
fn rationalize_f64(x: f64) -> (BigInt, BigInt) {
    let (frac, expo, sign) = decode_f64(x);
    if frac == 0 || expo >= 0 {
        return ((BigInt::from(frac) * sign) << expo.max(0) as usize, BigInt::one());
    }
    // The interval ((2f-1)/2^(1-e), (2f+1)/2^(1-e)) around x.
    let den = BigInt::one() << (1 - expo) as usize;
    let two_f = BigInt::from(frac) * 2u32;
    let mut a = (&two_f - 1u32, den.clone());
    let mut b = (two_f + 1u32, den);
    let (mut p0, mut q0, mut p1, mut q1) = (BigInt::zero(), BigInt::one(), BigInt::one(), BigInt::zero());
    loop {
        let c = a.0.div_ceil(&a.1);
        // c < b  <=>  c * b.den < b.num
        if &c * &b.1 < b.0 {
            let top = &c * &p1 + &p0;
            let bot = &c * &q1 + &q0;
            return (top * sign, bot);
        }
        let k = &c - 1u32;
        let p2 = &k * &p1 + &p0;
        let q2 = &k * &q1 + &q0;
        // a, b := 1/(b-k), 1/(a-k)
        let new_a = (b.1.clone(), &b.0 - &k * &b.1);
        let new_b = (a.1.clone(), &a.0 - &k * &a.1);
        a = new_a;
        b = new_b;
        p0 = std::mem::replace(&mut p1, p2);
        q0 = std::mem::replace(&mut q1, q2);
    }
}

fn rationalize_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    match args[0] {
        Value::Float(f) if f.val.is_finite() => {
            let (n, d) = rationalize_f64(f.val);
            Ok(alloc::rational(ctx.mc, n, d))
        }
        v @ (Value::Fixnum(_) | Value::BigInt(_) | Value::Ratio(_)) => Ok(v),
        other => Err(ctx.type_error(other, "REAL")),
    }
}

fn numerator_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    match args[0] {
        Value::Ratio(r) => Ok(alloc::integer(ctx.mc, r.num.clone())),
        v @ (Value::Fixnum(_) | Value::BigInt(_)) => Ok(v),
        other => Err(ctx.type_error(other, "RATIONAL")),
    }
}

fn denominator_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    match args[0] {
        Value::Ratio(r) => Ok(alloc::integer(ctx.mc, r.den.clone())),
        Value::Fixnum(_) | Value::BigInt(_) => Ok(Value::Fixnum(1)),
        other => Err(ctx.type_error(other, "RATIONAL")),
    }
}

fn integer_decode_float_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let x = float_arg(ctx, args[0])?;
    let (frac, expo, sign) = if x == 0.0 { (0, 0, if x.is_sign_negative() { -1 } else { 1 }) } else { decode_f64(x) };
    let frac = alloc::integer(ctx.mc, BigInt::from(frac));
    Ok(ctx.set_values(&[frac, Value::Fixnum(expo as i64), Value::Fixnum(sign as i64)]))
}

/// The significand in [0.5, 1), the exponent and the sign of a float.
fn decode_float_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let x = float_arg(ctx, args[0])?;
    let sign = alloc::float(ctx.mc, 1f64.copysign(x));
    if x == 0.0 {
        let zero = alloc::float(ctx.mc, 0.0);
        return Ok(ctx.set_values(&[zero, Value::Fixnum(0), sign]));
    }
    let (frac, expo, _) = decode_f64(x);
    // Normalize denormals so the significand keeps 53 bits' worth of scale.
    let shift = frac.leading_zeros() as i32 - 11;
    let significand = (frac << shift) as f64 / (1u64 << 53) as f64;
    let exponent = expo - shift + 53;
    let significand = alloc::float(ctx.mc, significand);
    Ok(ctx.set_values(&[significand, Value::Fixnum(exponent as i64), sign]))
}

/// The number of significant bits: 53 for normal floats, fewer for denormals, 0 for zero.
fn float_precision_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let x = float_arg(ctx, args[0])?;
    if x == 0.0 {
        return Ok(Value::Fixnum(0));
    }
    let (frac, _, _) = decode_f64(x);
    Ok(Value::Fixnum(64 - frac.leading_zeros() as i64))
}

fn scale_float_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let x = float_arg(ctx, args[0])?;
    let e = ctx.fixnum_arg(args[1])?;
    match check_float(scale_f64(x, e.clamp(-100_000, 100_000))) {
        Ok(r) => Ok(alloc::float(ctx.mc, r)),
        Err(err) => Err(arith_raise(ctx, err, "SCALE-FLOAT", args)),
    }
}

fn float_digits_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    float_arg(ctx, args[0])?;
    Ok(Value::Fixnum(53))
}

fn float_radix_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    float_arg(ctx, args[0])?;
    Ok(Value::Fixnum(2))
}

// ---- predicates and signs ----

fn zerop<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    if let Value::Fixnum(i) = args[0] {
        return Ok(ctx.bool(i == 0));
    }
    if let Value::Complex(_) = args[0] {
        return Ok(ctx.bool(super::complex::is_zero(args[0])));
    }
    let n = num_arg(ctx, args[0])?;
    Ok(ctx.bool(n.is_zero()))
}

fn sign_of<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<i32, Raise<'gc>> {
    match v {
        Value::Fixnum(i) => Ok(i.signum() as i32),
        Value::Float(f) => Ok(if f.val > 0.0 {
            1
        } else if f.val < 0.0 {
            -1
        } else {
            0
        }),
        Value::BigInt(b) => Ok(if b.0.is_negative() { -1 } else { 1 }),
        Value::Ratio(r) => Ok(if r.num.is_negative() { -1 } else { 1 }),
        other => Err(ctx.type_error(other, "REAL")),
    }
}

fn plusp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let s = sign_of(ctx, args[0])?;
    Ok(ctx.bool(s > 0))
}

fn minusp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let s = sign_of(ctx, args[0])?;
    Ok(ctx.bool(s < 0))
}

fn is_odd<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<bool, Raise<'gc>> {
    match v {
        Value::Fixnum(i) => Ok(i & 1 == 1),
        Value::BigInt(b) => Ok(b.0.is_odd()),
        other => Err(ctx.type_error(other, "INTEGER")),
    }
}

fn evenp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let odd = is_odd(ctx, args[0])?;
    Ok(ctx.bool(!odd))
}

fn oddp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let odd = is_odd(ctx, args[0])?;
    Ok(ctx.bool(odd))
}

fn numberp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(args[0], Value::Fixnum(_) | Value::BigInt(_) | Value::Ratio(_) | Value::Float(_) | Value::Complex(_))))
}

fn realp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(args[0], Value::Fixnum(_) | Value::BigInt(_) | Value::Ratio(_) | Value::Float(_))))
}

fn rationalp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(args[0], Value::Fixnum(_) | Value::BigInt(_) | Value::Ratio(_))))
}

fn integerp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(args[0], Value::Fixnum(_) | Value::BigInt(_))))
}

fn floatp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(args[0], Value::Float(_))))
}

fn signum_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let v = args[0];
    match v {
        // Zeros (including -0.0) are their own sign.
        Value::Float(f) if f.val == 0.0 => Ok(v),
        Value::Float(f) => Ok(alloc::float(ctx.mc, 1f64.copysign(f.val))),
        Value::Complex(_) => super::complex::signum(ctx, v),
        _ => Ok(Value::Fixnum(sign_of(ctx, v).map_err(|_| ctx.type_error(v, "NUMBER"))? as i64)),
    }
}

fn float_sign_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let s = float_arg(ctx, args[0])?;
    let m = match args.get(1) {
        Some(&v) => float_arg(ctx, v)?,
        None => 1.0,
    };
    Ok(alloc::float(ctx.mc, m.abs().copysign(s)))
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
    cl("MIN", 1, MANY, min_fn),
    cl("MAX", 1, MANY, max_fn),
    cl("ABS", 1, 1, abs_fn),
    cl("FLOOR", 1, 2, floor_fn),
    cl("CEILING", 1, 2, ceiling_fn),
    cl("TRUNCATE", 1, 2, truncate_fn),
    cl("ROUND", 1, 2, round_fn),
    cl("FFLOOR", 1, 2, ffloor_fn),
    cl("FCEILING", 1, 2, fceiling_fn),
    cl("FTRUNCATE", 1, 2, ftruncate_fn),
    cl("FROUND", 1, 2, fround_fn),
    cl("MOD", 2, 2, mod_fn),
    cl("REM", 2, 2, rem_fn),
    cl("GCD", 0, MANY, gcd_fn),
    cl("LCM", 0, MANY, lcm_fn),
    cl("EXPT", 2, 2, expt),
    cl("EXP", 1, 1, exp_fn),
    cl("LOG", 1, 2, log_fn),
    cl("SQRT", 1, 1, sqrt_fn),
    cl("ISQRT", 1, 1, isqrt_fn),
    cl("SIN", 1, 1, sin_fn),
    cl("COS", 1, 1, cos_fn),
    cl("TAN", 1, 1, tan_fn),
    cl("ASIN", 1, 1, asin_fn),
    cl("ACOS", 1, 1, acos_fn),
    cl("ATAN", 1, 2, atan_fn),
    cl("SINH", 1, 1, sinh_fn),
    cl("COSH", 1, 1, cosh_fn),
    cl("TANH", 1, 1, tanh_fn),
    cl("ASINH", 1, 1, asinh_fn),
    cl("ACOSH", 1, 1, acosh_fn),
    cl("ATANH", 1, 1, atanh_fn),
    cl("FLOAT", 1, 2, float_fn),
    cl("RATIONAL", 1, 1, rational_fn),
    cl("RATIONALIZE", 1, 1, rationalize_fn),
    cl("NUMERATOR", 1, 1, numerator_fn),
    cl("DENOMINATOR", 1, 1, denominator_fn),
    cl("INTEGER-DECODE-FLOAT", 1, 1, integer_decode_float_fn),
    cl("DECODE-FLOAT", 1, 1, decode_float_fn),
    cl("FLOAT-PRECISION", 1, 1, float_precision_fn),
    cl("SCALE-FLOAT", 2, 2, scale_float_fn),
    cl("FLOAT-DIGITS", 1, 1, float_digits_fn),
    cl("FLOAT-RADIX", 1, 1, float_radix_fn),
    cl("ZEROP", 1, 1, zerop),
    cl("PLUSP", 1, 1, plusp),
    cl("MINUSP", 1, 1, minusp),
    cl("EVENP", 1, 1, evenp),
    cl("ODDP", 1, 1, oddp),
    cl("NUMBERP", 1, 1, numberp),
    cl("REALP", 1, 1, realp),
    cl("RATIONALP", 1, 1, rationalp),
    cl("INTEGERP", 1, 1, integerp),
    cl("FLOATP", 1, 1, floatp),
    cl("SIGNUM", 1, 1, signum_fn),
    cl("FLOAT-SIGN", 1, 2, float_sign_fn),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_to_double_is_correctly_rounded() {
        let big = BigInt::from(10).pow(400u32);
        let r = ratio_to_f64(&big, &(&big * 3u32));
        assert_eq!(r, 1.0 / 3.0);
        assert_eq!(ratio_to_f64(&BigInt::from(1), &BigInt::from(10).pow(400u32)), 0.0);
        assert_eq!(ratio_to_f64(&BigInt::from(-7), &BigInt::from(2)), -3.5);
        // 2^53 + 1 over 1 rounds to even.
        let n = (BigInt::one() << 53usize) + 1u32;
        assert_eq!(ratio_to_f64(&(&n * 3u32), &BigInt::from(3)), 9007199254740992.0);
    }

    #[test]
    fn floats_convert_exactly_to_fractions() {
        assert_eq!(float_to_frac(0.5), (BigInt::from(1), BigInt::from(2)));
        assert_eq!(float_to_frac(-3.0), (BigInt::from(-3), BigInt::from(1)));
        let (n, d) = float_to_frac(0.1);
        assert_eq!(n, BigInt::from(3602879701896397u64));
        assert_eq!(d, BigInt::one() << 55usize);
    }

    #[test]
    fn rationalize_finds_the_simplest_fraction() {
        assert_eq!(rationalize_f64(0.1), (BigInt::from(1), BigInt::from(10)));
        assert_eq!(rationalize_f64(-2.5), (BigInt::from(-5), BigInt::from(2)));
        assert_eq!(rationalize_f64(0.333), (BigInt::from(333), BigInt::from(1000)));
    }

    #[test]
    fn comparisons_between_floats_and_rationals_are_exact() {
        let two53 = Num::B(BigInt::one() << 53usize);
        let above = arith(Op2::Add, &two53, &Num::I(1)).unwrap_or(Num::I(0));
        let f = Num::F(9007199254740992.0);
        assert_eq!(compare(&f, &above), Ordering::Less);
        assert_eq!(compare(&f, &two53), Ordering::Equal);
        assert_eq!(compare(&Num::F(0.5), &Num::R(BigInt::from(1), BigInt::from(2))), Ordering::Equal);
    }

    #[test]
    fn rounding_matches_cl() {
        assert_eq!(fixnum_divide(Rnd::Floor, -7, 2), Some((-4, 1)));
        assert_eq!(fixnum_divide(Rnd::Ceiling, -5, 2), Some((-2, -1)));
        assert_eq!(fixnum_divide(Rnd::Round, 5, 2), Some((2, 1)));
        assert_eq!(fixnum_divide(Rnd::Round, 7, 2), Some((4, -1)));
        assert_eq!(fixnum_divide(Rnd::Truncate, i64::MIN, -1), None);
        assert_eq!(float_divide(Rnd::Round, 2.5, 1, 1.0, true), Ok((2.0, 0.5, 0)));
        assert_eq!(float_divide(Rnd::Floor, -0.5, -1, 1.0, false), Ok((-0.0, 0.5, -1)));
        assert_eq!(float_divide(Rnd::Floor, 1e300, 1, 1e-300, true), Err(ArithError::Overflow));
        // Beyond 2^53 the step must still reach the quotient: SBCL's FLOOR of
        // 948.5732421875 by -5.142857142857144e-14 is -18444479709201385.
        let r = float_divide(Rnd::Floor, 948.5732421875, 1, -5.142857142857144e-14, true);
        assert_eq!(r.map(|(t, _, step)| (t, step)), Ok((-18444479709201384.0, -1)));
    }

    #[test]
    fn float_overflow_and_division_by_zero_are_errors() {
        assert_eq!(arith(Op2::Mul, &Num::F(1e308), &Num::I(10)).err(), Some(ArithError::Overflow));
        assert_eq!(arith(Op2::Div, &Num::I(1), &Num::F(0.0)).err(), Some(ArithError::DivisionByZero));
        assert_eq!(arith(Op2::Div, &Num::F(0.0), &Num::F(0.0)).err(), Some(ArithError::Invalid));
        let huge = Num::B(BigInt::from(10).pow(400u32));
        assert_eq!(arith(Op2::Add, &huge, &Num::F(1.0)).err(), Some(ArithError::Overflow));
    }

    #[test]
    fn exact_powers_and_their_limits() {
        let r = expt_num(&Num::R(BigInt::from(2), BigInt::from(3)), &Num::I(-3)).ok();
        assert!(matches!(r, Some(Num::R(n, d)) if n == BigInt::from(27) && d == BigInt::from(8)));
        assert!(matches!(expt_num(&Num::I(-1), &Num::B(BigInt::one() << 70usize)), Ok(Num::I(1))));
        assert_eq!(expt_num(&Num::I(2), &Num::B(BigInt::one() << 70usize)).err(), Some(ArithError::TooLarge));
        assert_eq!(expt_num(&Num::I(0), &Num::I(-1)).err(), Some(ArithError::DivisionByZero));
        assert_eq!(expt_num(&Num::F(-8.0), &Num::F(0.5)).err(), Some(ArithError::Complex));
        assert!(matches!(expt_num(&Num::I(3), &Num::I(40)), Ok(Num::B(_))));
    }

    #[test]
    fn denormals_decode_like_sbcl() {
        assert_eq!(decode_f64(1.5), (6755399441055744, -52, 1));
        assert_eq!(decode_f64(-5e-324), (1, -1074, -1));
    }
}
