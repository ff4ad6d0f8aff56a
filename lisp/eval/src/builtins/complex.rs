//! Complex numbers: `complex`, `realpart`, `imagpart`, `conjugate`, `phase`,
//! `cis`, and the complex cases of the numeric functions of `numbers.rs`
//! (arithmetic, `=`, `abs`, `signum`, `zerop`, `sqrt`, `exp`, `log`,
//! `expt`, the trigonometric and hyperbolic functions), including the real
//! arguments for which the standard gives a complex result (`(sqrt -4d0)`).
//!
//! A complex is a pair of reals (`Num`s). Invariants: results are
//! canonical as CL requires — a complex with a float part has both parts
//! doubles (`Complex::Double`), a rational complex with a zero imaginary
//! part is that rational (`alloc::complex` checks); exact arithmetic on
//! rational complexes stays exact (`(* #C(0 1) #C(0 1))` is -1), while
//! the irrational functions work on doubles by the usual principal-branch
//! formulas.

use mprof_heap::value::Complex;
use mprof_heap::{Value, alloc};

use crate::runtime::numbers::{ArithError, Num, Op2, arith, arith_raise, equal_parts, num_arg, parts};
use crate::runtime::builtin::{BuiltinDef, cl};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

fn parts_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<(Num, Num), Raise<'gc>> {
    parts(v).ok_or_else(|| ctx.type_error(v, "NUMBER"))
}

/// The number with these parts: a double complex if either part is a float.
fn make<'gc>(ctx: &Ctx<'_, 'gc>, re: Num, im: Num) -> Value<'gc> {
    if matches!(re, Num::F(_)) || matches!(im, Num::F(_)) {
        return alloc::complex(ctx.mc, Complex::Double(re.to_f64(), im.to_f64()));
    }
    let (re, im) = (re.into_value(ctx), im.into_value(ctx));
    alloc::complex(ctx.mc, Complex::Rational(re, im))
}

fn c64<'gc>(ctx: &Ctx<'_, 'gc>, (re, im): (f64, f64)) -> Value<'gc> {
    alloc::complex(ctx.mc, Complex::Double(re, im))
}

fn op(o: Op2, a: &Num, b: &Num) -> Result<Num, ArithError> {
    arith(o, a, b)
}

/// One step of complex arithmetic on exact or float parts.
fn arith2(o: Op2, (a, b): &(Num, Num), (c, d): &(Num, Num)) -> Result<(Num, Num), ArithError> {
    Ok(match o {
        Op2::Add => (op(Op2::Add, a, c)?, op(Op2::Add, b, d)?),
        Op2::Sub => (op(Op2::Sub, a, c)?, op(Op2::Sub, b, d)?),
        Op2::Mul => (
            op(Op2::Sub, &op(Op2::Mul, a, c)?, &op(Op2::Mul, b, d)?)?,
            op(Op2::Add, &op(Op2::Mul, a, d)?, &op(Op2::Mul, b, c)?)?,
        ),
        Op2::Div => {
            if d.is_zero() && !d_is_float(d) {
                // Dividing by a real: part by part (exact when both are).
                (op(Op2::Div, a, c)?, op(Op2::Div, b, c)?)
            } else {
                let den = op(Op2::Add, &op(Op2::Mul, c, c)?, &op(Op2::Mul, d, d)?)?;
                let re = op(Op2::Add, &op(Op2::Mul, a, c)?, &op(Op2::Mul, b, d)?)?;
                let im = op(Op2::Sub, &op(Op2::Mul, b, c)?, &op(Op2::Mul, a, d)?)?;
                (op(Op2::Div, &re, &den)?, op(Op2::Div, &im, &den)?)
            }
        }
    })
}

fn d_is_float(n: &Num) -> bool {
    matches!(n, Num::F(_))
}

/// `+ - * /` when some argument is complex (numbers.rs's fold calls this).
pub fn fold<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>, o: Op2, name: &str, unit: i64) -> LResult<'gc> {
    let mut acc = parts_arg(ctx, args[0])?;
    if args.len() == 1 {
        if matches!(o, Op2::Sub | Op2::Div) {
            acc = arith2(o, &(Num::I(unit), Num::I(0)), &acc).map_err(|e| arith_raise(ctx, e, name, args))?;
        }
        return Ok(make(ctx, acc.0, acc.1));
    }
    for &v in &args[1..] {
        let y = parts_arg(ctx, v)?;
        acc = arith2(o, &acc, &y).map_err(|e| arith_raise(ctx, e, name, args))?;
    }
    Ok(make(ctx, acc.0, acc.1))
}

/// `=` and `/=` when some argument is complex: every pair of arguments
/// (adjacent ones for `=`, all pairs for `/=`).
pub fn num_eq<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>, all_different: bool) -> LResult<'gc> {
    let nums: Vec<(Num, Num)> = args.iter().map(|&v| parts_arg(ctx, v)).collect::<Result<_, _>>()?;
    let ok = if all_different {
        (0..nums.len()).all(|i| (i + 1..nums.len()).all(|j| !equal_parts(&nums[i], &nums[j])))
    } else {
        nums.windows(2).all(|w| equal_parts(&w[0], &w[1]))
    };
    Ok(ctx.bool(ok))
}

fn to_c64(z: &(Num, Num)) -> (f64, f64) {
    (z.0.to_f64(), z.1.to_f64())
}

// ---- double-precision complex functions (principal branches) ----

fn cmul((a, b): (f64, f64), (c, d): (f64, f64)) -> (f64, f64) {
    (a * c - b * d, a * d + b * c)
}
fn cdiv((a, b): (f64, f64), (c, d): (f64, f64)) -> (f64, f64) {
    let den = c * c + d * d;
    ((a * c + b * d) / den, (b * c - a * d) / den)
}
fn cadd((a, b): (f64, f64), (c, d): (f64, f64)) -> (f64, f64) {
    (a + c, b + d)
}
fn csub((a, b): (f64, f64), (c, d): (f64, f64)) -> (f64, f64) {
    (a - c, b - d)
}
fn cabs((a, b): (f64, f64)) -> f64 {
    a.hypot(b)
}
fn cexp((a, b): (f64, f64)) -> (f64, f64) {
    let m = a.exp();
    (m * b.cos(), m * b.sin())
}
fn clog(z: (f64, f64)) -> (f64, f64) {
    (cabs(z).ln(), z.1.atan2(z.0))
}
fn csqrt((a, b): (f64, f64)) -> (f64, f64) {
    if b == 0.0 {
        // A real: exact roots, and no underflow for denormals.
        return if a >= 0.0 { (a.sqrt(), b) } else { (0.0, (-a).sqrt().copysign(b)) };
    }
    let m = cabs((a, b));
    if m < 1e-300 {
        // Tiny parts: scale by 2^200 so the halving below cannot underflow to 0.
        let s = 2f64.powi(200);
        let (re, im) = csqrt((a * s, b * s));
        return (re / 2f64.powi(100), im / 2f64.powi(100));
    }
    let m = cabs((a, b));
    // Halved before adding, so that parts near the double limit do not overflow.
    let re = (m / 2.0 + a.abs() / 2.0).sqrt();
    if a >= 0.0 { (re, b / (2.0 * re)) } else { (b.abs() / (2.0 * re), re.copysign(b)) }
}
const I: (f64, f64) = (0.0, 1.0);
const ONE: (f64, f64) = (1.0, 0.0);
fn casin(z: (f64, f64)) -> (f64, f64) {
    // -i log(iz + sqrt(1 - z^2))
    let w = clog(cadd(cmul(I, z), csqrt(csub(ONE, cmul(z, z)))));
    (w.1, -w.0)
}
fn cacos(z: (f64, f64)) -> (f64, f64) {
    let s = casin(z);
    (std::f64::consts::FRAC_PI_2 - s.0, -s.1)
}
fn catan(z: (f64, f64)) -> (f64, f64) {
    // (log(1 + iz) - log(1 - iz)) / 2i
    let iz = cmul(I, z);
    let d = csub(clog(cadd(ONE, iz)), clog(csub(ONE, iz)));
    cdiv(d, (0.0, 2.0))
}
fn csinh((a, b): (f64, f64)) -> (f64, f64) {
    (a.sinh() * b.cos(), a.cosh() * b.sin())
}
fn ccosh((a, b): (f64, f64)) -> (f64, f64) {
    (a.cosh() * b.cos(), a.sinh() * b.sin())
}
fn csin((a, b): (f64, f64)) -> (f64, f64) {
    (a.sin() * b.cosh(), a.cos() * b.sinh())
}
fn ccos((a, b): (f64, f64)) -> (f64, f64) {
    (a.cos() * b.cosh(), -(a.sin() * b.sinh()))
}
fn casinh(z: (f64, f64)) -> (f64, f64) {
    clog(cadd(z, csqrt(cadd(cmul(z, z), ONE))))
}
fn cacosh(z: (f64, f64)) -> (f64, f64) {
    let a = csqrt(cdiv(cadd(z, ONE), (2.0, 0.0)));
    let b = csqrt(cdiv(csub(z, ONE), (2.0, 0.0)));
    let l = clog(cadd(a, b));
    (2.0 * l.0, 2.0 * l.1)
}
fn catanh(z: (f64, f64)) -> (f64, f64) {
    if z.1 == 0.0 && z.0.abs() > 1.0 {
        // A real beyond the cut: SBCL's (Kahan's) branch, imaginary part +pi/2.
        return (0.5 * ((1.0 + z.0) / (1.0 - z.0)).abs().ln(), std::f64::consts::FRAC_PI_2);
    }
    let d = csub(clog(cadd(ONE, z)), clog(csub(ONE, z)));
    (d.0 / 2.0, d.1 / 2.0)
}

/// The complex result of the one-argument function `name` on `v` (a
/// complex, or a real outside the function's real domain).
pub fn unary<'gc>(ctx: &mut Ctx<'_, 'gc>, name: &str, v: Value<'gc>) -> LResult<'gc> {
    let z = to_c64(&parts_arg(ctx, v)?);
    let r = match name {
        "SQRT" => csqrt(z),
        "EXP" => cexp(z),
        "LOG" => {
            if z == (0.0, 0.0) {
                return Err(arith_raise(ctx, ArithError::DivisionByZero, name, &[v]));
            }
            clog(z)
        }
        "SIN" => csin(z),
        "COS" => ccos(z),
        "TAN" => cdiv(csin(z), ccos(z)),
        "ASIN" => casin(z),
        "ACOS" => cacos(z),
        "ATAN" => catan(z),
        "SINH" => csinh(z),
        "COSH" => ccosh(z),
        "TANH" => cdiv(csinh(z), ccosh(z)),
        "ASINH" => casinh(z),
        "ACOSH" => cacosh(z),
        "ATANH" => catanh(z),
        _ => return Err(Raise::error(format!("{name} has no complex case"))),
    };
    if !(r.0.is_finite() && r.1.is_finite()) {
        return Err(arith_raise(ctx, ArithError::Overflow, name, &[v]));
    }
    Ok(c64(ctx, r))
}

/// `(log x base)` when either is complex or negative.
pub fn log2<'gc>(ctx: &mut Ctx<'_, 'gc>, x: Value<'gc>, base: Value<'gc>) -> LResult<'gc> {
    let (zx, zb) = (to_c64(&parts_arg(ctx, x)?), to_c64(&parts_arg(ctx, base)?));
    if zx == (0.0, 0.0) || zb == (0.0, 0.0) {
        return Err(arith_raise(ctx, ArithError::DivisionByZero, "LOG", &[x, base]));
    }
    Ok(c64(ctx, cdiv(clog(zx), clog(zb))))
}

/// `expt` with a complex base or power, or a negative base and a
/// non-integer power. An exact base raised to an integer stays exact.
pub fn expt<'gc>(ctx: &mut Ctx<'_, 'gc>, base: Value<'gc>, power: Value<'gc>) -> LResult<'gc> {
    let b = parts_arg(ctx, base)?;
    let p = parts_arg(ctx, power)?;
    let exact = |n: &Num| matches!(n, Num::I(_) | Num::B(_) | Num::R(..));
    if let (Num::I(n), true) = (&p.0, p.1.is_zero() && exact(&p.1)) {
        // Repeated squaring; exact for rational complexes.
        let mut result = (Num::I(1), Num::I(0));
        if exact(&b.0) && exact(&b.1) || n.unsigned_abs() <= 64 {
            let mut sq = b.clone();
            let mut k = n.unsigned_abs();
            while k > 0 {
                if k & 1 == 1 {
                    result = arith2(Op2::Mul, &result, &sq).map_err(|e| arith_raise(ctx, e, "EXPT", &[base, power]))?;
                }
                k >>= 1;
                if k > 0 {
                    sq = arith2(Op2::Mul, &sq, &sq).map_err(|e| arith_raise(ctx, e, "EXPT", &[base, power]))?;
                }
            }
            if *n < 0 {
                result = arith2(Op2::Div, &(Num::I(1), Num::I(0)), &result)
                    .map_err(|e| arith_raise(ctx, e, "EXPT", &[base, power]))?;
            }
            if matches!(b.0, Num::F(_)) || matches!(b.1, Num::F(_)) {
                // A float complex to the power 0 is #C(1.0 0.0), not 1.
                return Ok(c64(ctx, to_c64(&result)));
            }
            return Ok(make(ctx, result.0, result.1));
        }
    }
    let (zb, zp) = (to_c64(&b), to_c64(&p));
    if zb.1 == 0.0 && zp.1 == 0.0 && zb.0 < 0.0 && b.1.is_zero() && p.1.is_zero() {
        // A negative real to a real power: |b|^p cis(p pi), as SBCL computes it.
        let (m, angle) = ((-zb.0).powf(zp.0), zp.0 * std::f64::consts::PI);
        return Ok(c64(ctx, (m * angle.cos(), m * angle.sin())));
    }
    if zb == (0.0, 0.0) {
        return if zp.0 > 0.0 {
            Ok(c64(ctx, (0.0, 0.0)))
        } else {
            Err(arith_raise(ctx, ArithError::DivisionByZero, "EXPT", &[base, power]))
        };
    }
    Ok(c64(ctx, cexp(cmul(zp, clog(zb)))))
}

/// `abs` of a complex: its magnitude.
pub fn abs<'gc>(ctx: &mut Ctx<'_, 'gc>, v: Value<'gc>) -> LResult<'gc> {
    let z = parts_arg(ctx, v)?;
    Ok(alloc::float(ctx.mc, cabs(to_c64(&z))))
}

/// `signum` of a complex: z/|z| (zero is its own signum).
pub fn signum<'gc>(ctx: &mut Ctx<'_, 'gc>, v: Value<'gc>) -> LResult<'gc> {
    let z = to_c64(&parts_arg(ctx, v)?);
    let m = cabs(z);
    if m == 0.0 {
        // A zero is its own signum.
        return Ok(v);
    }
    Ok(c64(ctx, (z.0 / m, z.1 / m)))
}

/// `zerop` of a complex.
pub fn is_zero(v: Value<'_>) -> bool {
    parts(v).is_some_and(|(re, im)| re.is_zero() && im.is_zero())
}

/// (complex realpart &optional imagpart)
fn complex_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let re = real_arg(ctx, a[0])?;
    let im = match a.get(1) {
        Some(&v) => real_arg(ctx, v)?,
        // A zero of the real part's type.
        None if matches!(re, Num::F(_)) => Num::F(0.0),
        None => Num::I(0),
    };
    Ok(make(ctx, re, im))
}

fn real_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Num, Raise<'gc>> {
    Num::from_value(v).ok_or_else(|| ctx.type_error(v, "REAL"))
}

fn realpart<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Complex(_) => Ok(parts_arg(ctx, a[0])?.0.into_value(ctx)),
        v => {
            num_arg(ctx, v)?;
            Ok(v)
        }
    }
}

fn imagpart<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Complex(_) => Ok(parts_arg(ctx, a[0])?.1.into_value(ctx)),
        // (* 0 x): a float's imaginary part is a zero float of its sign.
        Value::Float(f) => Ok(alloc::float(ctx.mc, 0.0 * f.val)),
        v => {
            num_arg(ctx, v)?;
            Ok(Value::Fixnum(0))
        }
    }
}

fn conjugate<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Complex(_) => {
            let (re, im) = parts_arg(ctx, a[0])?;
            let neg = arith(Op2::Sub, &Num::I(0), &im).map_err(|e| arith_raise(ctx, e, "CONJUGATE", a))?;
            // -0.0, not 0.0, for a float zero.
            let neg = match im {
                Num::F(x) => Num::F(-x),
                _ => neg,
            };
            Ok(make(ctx, re, neg))
        }
        v => {
            num_arg(ctx, v)?;
            Ok(v)
        }
    }
}

fn phase<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (re, im) = to_c64(&parts_arg(ctx, a[0])?);
    Ok(alloc::float(ctx.mc, im.atan2(re)))
}

fn cis<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let x = real_arg(ctx, a[0])?.to_f64();
    Ok(c64(ctx, (x.cos(), x.sin())))
}

fn complexp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Complex(_))))
}

/// (upgraded-complex-part-type typespec &optional environment): every real
/// type upgrades to REAL, except float types, whose parts are doubles.
fn upgraded_complex_part_type<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let float = matches!(a[0], Value::Symbol(s) if matches!(&*s.name, "FLOAT" | "DOUBLE-FLOAT" | "SINGLE-FLOAT" | "SHORT-FLOAT" | "LONG-FLOAT"));
    Ok(ctx.cl(if float { "DOUBLE-FLOAT" } else { "REAL" }))
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("COMPLEX", 1, 2, complex_fn),
    cl("REALPART", 1, 1, realpart),
    cl("IMAGPART", 1, 1, imagpart),
    cl("CONJUGATE", 1, 1, conjugate),
    cl("PHASE", 1, 1, phase),
    cl("CIS", 1, 1, cis),
    cl("COMPLEXP", 1, 1, complexp),
    cl("UPGRADED-COMPLEX-PART-TYPE", 1, 2, upgraded_complex_part_type),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12
    }

    #[test]
    fn principal_branches() {
        assert!(close(csqrt((-4.0, 0.0)), (0.0, 2.0)));
        assert!(close(csqrt((0.0, 2.0)), (1.0, 1.0)));
        assert!(close(clog((-1.0, 0.0)), (0.0, std::f64::consts::PI)));
        assert!(close(cexp((0.0, std::f64::consts::PI)), (-1.0, 0.0)));
        let z = (0.3, -0.7);
        assert!(close(csin(casin(z)), z));
        assert!(close(ccos(cacos(z)), z));
        assert!(close(cdiv(csin(catan(z)), ccos(catan(z))), z));
        assert!(close(csinh(casinh(z)), z));
        assert!(close(ccosh(cacosh(z)), z));
    }

    #[test]
    fn exact_arithmetic_stays_exact() {
        let i = (Num::I(0), Num::I(1));
        let sq = arith2(Op2::Mul, &i, &i).unwrap();
        assert!(equal_parts(&sq, &(Num::I(-1), Num::I(0))));
        let q = arith2(Op2::Div, &(Num::I(1), Num::I(0)), &(Num::I(1), Num::I(1))).unwrap();
        assert!(matches!(q, (Num::R(..), Num::R(..))));
    }
}
