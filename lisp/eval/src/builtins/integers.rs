//! Integer builtins beyond arithmetic: bitwise operations on two's-complement
//! integers of any size (`logand` ... `ash`, `integer-length`, `logcount`),
//! random numbers (`random`, random states: splitmix64-seeded xorshift), and
//! the core of `parse-integer`.
//!
//! Invariant: on fixnums the bitwise operations never allocate.

use mprof_heap::{Value, alloc};
use num_bigint::BigInt;
use num_traits::Signed;

use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{ErrorKind, LResult, Raise};
use crate::runtime::numbers::{ArithError, MAX_RESULT_BITS, Num, arith_raise, compound_type_error, integer_arg, integer_range_error};

type A<'a, 'gc> = &'a [Value<'gc>];

// ---- bit operations (two's complement, any size) ----

/// Fold a bitwise operation over integers; the fixnum case never allocates.
fn logical<'gc>(
    ctx: &mut Ctx<'_, 'gc>,
    args: A<'_, 'gc>,
    unit: i64,
    small: fn(i64, i64) -> i64,
    big: fn(&BigInt, &BigInt) -> BigInt,
) -> LResult<'gc> {
    let mut acc = unit;
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            Value::Fixnum(x) => acc = small(acc, x),
            _ => break,
        }
        i += 1;
    }
    if i == args.len() {
        return Ok(Value::Fixnum(acc));
    }
    let mut acc = BigInt::from(acc);
    for &v in &args[i..] {
        acc = big(&acc, &integer_arg(ctx, v)?.to_big());
    }
    Ok(alloc::integer(ctx.mc, acc))
}

fn logand<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical(ctx, args, -1, |a, b| a & b, |a, b| a & b)
}
fn logior<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical(ctx, args, 0, |a, b| a | b, |a, b| a | b)
}
fn logxor<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical(ctx, args, 0, |a, b| a ^ b, |a, b| a ^ b)
}
fn logeqv<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical(ctx, args, -1, |a, b| !(a ^ b), |a, b| !(a ^ b))
}

/// The two-argument bit operations, as (not-first?, not-second?, op, not-result?).
fn logical2<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>, na: bool, nb: bool, and: bool, nr: bool) -> LResult<'gc> {
    let (a, b) = (integer_arg(ctx, args[0])?, integer_arg(ctx, args[1])?);
    if let (Num::I(a), Num::I(b)) = (&a, &b) {
        let (a, b) = (if na { !a } else { *a }, if nb { !b } else { *b });
        let r = if and { a & b } else { a | b };
        return Ok(Value::Fixnum(if nr { !r } else { r }));
    }
    let (a, b) = (a.to_big(), b.to_big());
    let (a, b) = (if na { !a } else { a }, if nb { !b } else { b });
    let r = if and { a & b } else { a | b };
    Ok(alloc::integer(ctx.mc, if nr { !r } else { r }))
}

fn lognand<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical2(ctx, args, false, false, true, true)
}
fn lognor<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical2(ctx, args, false, false, false, true)
}
fn logandc1<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical2(ctx, args, true, false, true, false)
}
fn logandc2<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical2(ctx, args, false, true, true, false)
}
fn logorc1<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical2(ctx, args, true, false, false, false)
}
fn logorc2<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    logical2(ctx, args, false, true, false, false)
}

fn logtest<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let r = logical2(ctx, args, false, false, true, false)?;
    Ok(ctx.bool(!matches!(r, Value::Fixnum(0))))
}

fn lognot<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    match integer_arg(ctx, args[0])? {
        Num::I(i) => Ok(Value::Fixnum(!i)),
        n => Ok(alloc::integer(ctx.mc, !n.to_big())),
    }
}

fn logbitp<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let index = match args[0] {
        Value::Fixnum(i) if i >= 0 => Some(i as u64),
        Value::BigInt(b) if !b.0.is_negative() => None,
        other => return Err(ctx.type_error(other, "UNSIGNED-BYTE")),
    };
    let n = integer_arg(ctx, args[1])?;
    let bit = match (index, &n) {
        // Beyond the representation: the sign bit extends forever.
        (None, _) => n.signum() < 0,
        (Some(k), Num::I(i)) => {
            if k >= 64 {
                *i < 0
            } else {
                (i >> k) & 1 == 1
            }
        }
        (Some(k), _) => n.to_big().bit(k),
    };
    Ok(ctx.bool(bit))
}

fn logcount<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum(match integer_arg(ctx, args[0])? {
        Num::I(i) => (if i < 0 { !i } else { i }).count_ones() as i64,
        n => {
            let b = n.to_big();
            let b = if b.is_negative() { !b } else { b };
            b.magnitude().count_ones() as i64
        }
    }))
}

fn integer_length<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum(match integer_arg(ctx, args[0])? {
        Num::I(i) => 64 - (if i < 0 { !i } else { i }).leading_zeros() as i64,
        n => {
            let b = n.to_big();
            (if b.is_negative() { !b } else { b }).bits() as i64
        }
    }))
}

fn ash<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let n = integer_arg(ctx, args[0])?;
    let count = match integer_arg(ctx, args[1])? {
        Num::I(c) => c,
        big => {
            // A shift by a bignum: only zero survives to the left.
            return if big.signum() < 0 || n.is_zero() {
                Ok(Value::Fixnum(if n.signum() < 0 { -1 } else { 0 }))
            } else {
                Err(arith_raise(ctx, ArithError::TooLarge, "ASH", args))
            };
        }
    };
    if let Num::I(x) = n {
        if count <= 0 {
            return Ok(Value::Fixnum(x >> count.unsigned_abs().min(63)));
        }
        if x == 0 {
            return Ok(Value::Fixnum(0));
        }
        // Fits when the bits shifted out (and the new sign bit) equal the sign.
        if count < 64 {
            let shifted = x << count;
            if shifted >> count == x {
                return Ok(Value::Fixnum(shifted));
            }
        }
    }
    let b = n.to_big();
    if count <= 0 {
        let k = count.unsigned_abs();
        if k >= b.bits() {
            return Ok(Value::Fixnum(if b.is_negative() { -1 } else { 0 }));
        }
        return Ok(alloc::integer(ctx.mc, b >> k as usize));
    }
    if b.bits().saturating_add(count as u64) > MAX_RESULT_BITS {
        return Err(arith_raise(ctx, ArithError::TooLarge, "ASH", args));
    }
    Ok(alloc::integer(ctx.mc, b << count as usize))
}

// ---- random numbers ----

/// SplitMix64: turns any seed into a well-mixed, non-zero xorshift state.
fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)).max(1)
}

/// One step of xorshift64*.
fn next_u64(state: &std::cell::Cell<u64>) -> u64 {
    let mut x = state.get();
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    state.set(x);
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn current_random_state<'gc>(ctx: &Ctx<'_, 'gc>) -> Value<'gc> {
    match ctx.cl("*RANDOM-STATE*") {
        Value::Symbol(s) => s.value.get(),
        _ => Value::Nil,
    }
}

fn random_fn<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let sv = match args.get(1) {
        Some(&s) => s,
        None => current_random_state(ctx),
    };
    let Value::RandomState(st) = sv else {
        return Err(ctx.type_error(sv, "RANDOM-STATE"));
    };
    let state = &st.state;
    match args[0] {
        Value::Fixnum(n) if n > 0 => {
            // Rejection sampling: uniform without modulo bias.
            let n = n as u64;
            let zone = u64::MAX - (u64::MAX - n + 1) % n;
            loop {
                let r = next_u64(state);
                if r <= zone {
                    return Ok(Value::Fixnum((r % n) as i64));
                }
            }
        }
        Value::BigInt(b) if b.0.is_positive() => {
            let limit = &b.0;
            let bits = limit.bits();
            let words = bits.div_ceil(64) as usize;
            loop {
                let mut digits: Vec<u64> = (0..words).map(|_| next_u64(state)).collect();
                let extra = (words as u64) * 64 - bits;
                if let Some(top) = digits.last_mut() {
                    *top >>= extra;
                }
                let r = BigInt::from(num_bigint::BigUint::new(
                    digits.iter().flat_map(|d| [*d as u32, (*d >> 32) as u32]).collect(),
                ));
                if &r < limit {
                    return Ok(alloc::integer(ctx.mc, r));
                }
            }
        }
        Value::Float(f) if f.val > 0.0 && f.val.is_finite() => loop {
            let unit = (next_u64(state) >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            let r = unit * f.val;
            if r < f.val {
                return Ok(alloc::float(ctx.mc, r));
            }
        },
        other => {
            let positive_float =
                alloc::list(ctx.mc, &[ctx.cl("DOUBLE-FLOAT"), alloc::list(ctx.mc, &[alloc::float(ctx.mc, 0.0)])]);
            let positive_integer = alloc::list(ctx.mc, &[ctx.cl("INTEGER"), Value::Fixnum(1)]);
            Err(compound_type_error(ctx, other, &[ctx.cl("OR"), positive_float, positive_integer]))
        }
    }
}

fn make_random_state<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let arg = args.first().copied().unwrap_or(Value::Nil);
    let from = if arg.is_nil() { current_random_state(ctx) } else { arg };
    match from {
        Value::RandomState(s) => Ok(alloc::random_state(ctx.mc, s.state.get())),
        v if v.eq(ctx.t()) => {
            // A fresh state: seeded from the clock and a per-process counter.
            static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let seed = nanos ^ ((std::process::id() as u64) << 32) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            Ok(alloc::random_state(ctx.mc, splitmix64(seed)))
        }
        _ => Err(compound_type_error(ctx, arg, &[ctx.cl("OR"), ctx.cl("RANDOM-STATE"), ctx.cl("BOOLEAN")])),
    }
}

/// (sys:%seeded-random-state integer): a state determined by the seed, for a
/// reproducible initial `*random-state*`.
fn seeded_random_state<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let seed = match integer_arg(ctx, args[0])? {
        Num::I(i) => i as u64,
        n => n.to_big().iter_u64_digits().fold(0u64, |acc, d| splitmix64(acc ^ d)),
    };
    Ok(alloc::random_state(ctx.mc, splitmix64(seed)))
}

fn random_state_p<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(args[0], Value::RandomState(_))))
}

// ---- parse-integer ----

fn parse_error<'gc>(ctx: &Ctx<'_, 'gc>, control: &str, string: Value<'gc>) -> Raise<'gc> {
    let name = ctx.world.intern_sys(ctx.mc, "SIMPLE-PARSE-ERROR");
    match ctx.world.find_type(name) {
        Some(t) => {
            let args = alloc::list(ctx.mc, &[string]);
            let control = alloc::string(ctx.mc, control);
            Raise::Condition(crate::runtime::conditions::make(
                ctx.mc,
                t,
                &[("FORMAT-CONTROL", control), ("FORMAT-ARGUMENTS", args)],
            ))
        }
        None => Raise::Error { kind: ErrorKind::Simple, message: control.to_string(), irritants: vec![string] },
    }
}

fn is_parse_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')
}

/// (sys:%parse-integer string start end radix junk-allowed): PARSE-INTEGER
/// after its keywords are taken apart; two values.
fn parse_integer<'gc>(ctx: &mut Ctx<'_, 'gc>, args: A<'_, 'gc>) -> LResult<'gc> {
    let sv = args[0];
    // Any string, displaced ones included.
    let chars: Vec<char> = ctx.string_arg(sv)?.chars().collect();
    let len = chars.len();
    let start = match args[1] {
        Value::Fixnum(i) if i >= 0 && i as usize <= len => i as usize,
        other => return Err(integer_range_error(ctx, other, 0, len as i64)),
    };
    let end = match args[2] {
        Value::Nil => len,
        Value::Fixnum(i) if i >= start as i64 && i as usize <= len => i as usize,
        other => return Err(integer_range_error(ctx, other, start as i64, len as i64)),
    };
    let radix = match args[3] {
        Value::Fixnum(r) if (2..=36).contains(&r) => r as u32,
        other => return Err(integer_range_error(ctx, other, 2, 36)),
    };
    let junk_allowed = args[4].truthy();
    let mut i = start;
    while i < end && is_parse_whitespace(chars[i]) {
        i += 1;
    }
    if i >= end {
        if junk_allowed {
            return Ok(ctx.set_values(&[Value::Nil, Value::Fixnum(end as i64)]));
        }
        return Err(parse_error(ctx, "no non-whitespace characters in string ~S.", sv));
    }
    let negative = chars[i] == '-';
    if matches!(chars[i], '+' | '-') {
        i += 1;
    }
    let mut small: i64 = 0;
    let mut big: Option<BigInt> = None;
    let mut any_digit = false;
    while i < end {
        let Some(d) = chars[i].to_digit(radix) else {
            if junk_allowed {
                break;
            }
            if is_parse_whitespace(chars[i]) && chars[i..end].iter().all(|&c| is_parse_whitespace(c)) {
                i = end;
                break;
            }
            return Err(parse_error(ctx, "junk in string ~S", sv));
        };
        any_digit = true;
        match &mut big {
            Some(b) => *b = &*b * radix + d,
            None => match small.checked_mul(radix as i64).and_then(|v| v.checked_add(d as i64)) {
                Some(v) => small = v,
                None => big = Some(BigInt::from(small) * radix + d),
            },
        }
        i += 1;
    }
    if !any_digit {
        if junk_allowed {
            return Ok(ctx.set_values(&[Value::Nil, Value::Fixnum(i as i64)]));
        }
        return Err(parse_error(ctx, "no digits in string ~S", sv));
    }
    let n = match big {
        Some(b) => alloc::integer(ctx.mc, if negative { -b } else { b }),
        None => Value::Fixnum(if negative { -small } else { small }),
    };
    Ok(ctx.set_values(&[n, Value::Fixnum(i as i64)]))
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("LOGAND", 0, MANY, logand),
    cl("LOGIOR", 0, MANY, logior),
    cl("LOGXOR", 0, MANY, logxor),
    cl("LOGEQV", 0, MANY, logeqv),
    cl("LOGNAND", 2, 2, lognand),
    cl("LOGNOR", 2, 2, lognor),
    cl("LOGANDC1", 2, 2, logandc1),
    cl("LOGANDC2", 2, 2, logandc2),
    cl("LOGORC1", 2, 2, logorc1),
    cl("LOGORC2", 2, 2, logorc2),
    cl("LOGTEST", 2, 2, logtest),
    cl("LOGNOT", 1, 1, lognot),
    cl("LOGBITP", 2, 2, logbitp),
    cl("LOGCOUNT", 1, 1, logcount),
    cl("INTEGER-LENGTH", 1, 1, integer_length),
    cl("ASH", 2, 2, ash),
    cl("RANDOM", 1, 2, random_fn),
    cl("MAKE-RANDOM-STATE", 0, 1, make_random_state),
    cl("RANDOM-STATE-P", 1, 1, random_state_p),
    sys("%SEEDED-RANDOM-STATE", 1, 1, seeded_random_state),
    sys("%PARSE-INTEGER", 5, 5, parse_integer),
];

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn xorshift_state_never_sticks_at_zero() {
        assert_ne!(splitmix64(0), 0);
        let st = std::cell::Cell::new(splitmix64(0));
        let draws: Vec<u64> = (0..4).map(|_| next_u64(&st)).collect();
        assert!(draws.windows(2).all(|w| w[0] != w[1]));
    }
}
