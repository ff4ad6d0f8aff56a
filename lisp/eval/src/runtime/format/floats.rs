//! `~F ~E ~G ~$`: floats printed with SBCL's algorithms (Burger & Dybvig digit
//! generation with a cut-off position, SBCL's `scale-exponent` for `~E`), so
//! every digit rounds as SBCL rounds it.

use mprof_heap::Value;
use num_bigint::BigInt;
use num_traits::{One, ToPrimitive, Zero};

/// A float to print, with its format: doubles, or singles (what rationals
/// become under ~F ~E ~G ~$, as in SBCL).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flo {
    pub x: f64,
    pub single: bool,
}

pub(super) fn to_float(v: Value<'_>) -> Option<Flo> {
    match v {
        Value::Float(f) => Some(Flo { x: f.val, single: false }),
        Value::Fixnum(n) => Some(Flo { x: n as f32 as f64, single: true }),
        Value::BigInt(b) => Some(Flo { x: b.0.to_f32().unwrap_or(f32::INFINITY) as f64, single: true }),
        Value::Ratio(r) => {
            let x = ratio_to_f64(&r.num, &r.den);
            Some(Flo { x: x as f32 as f64, single: true })
        }
        _ => None,
    }
}

pub(super) fn ratio_to_f64(num: &BigInt, den: &BigInt) -> f64 {
    match (num.to_f64(), den.to_f64()) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() => a / b,
        _ => {
            // Scale down huge numerators/denominators before dividing.
            let shift = num.bits().max(den.bits()).saturating_sub(1000);
            let a = (num >> shift).to_f64().unwrap_or(0.0);
            let b = (den >> shift).to_f64().unwrap_or(1.0);
            a / b
        }
    }
}

impl Flo {
    fn with(self, x: f64) -> Flo {
        Flo { x, single: self.single }
    }
    fn is_special(self) -> bool {
        !self.x.is_finite()
    }
    /// (integer-decode-float x) and (float-digits x), min-e for |x|.
    fn decode(self) -> (u64, i32, u32, i32) {
        if self.single {
            let bits = (self.x.abs() as f32).to_bits();
            let exp = ((bits >> 23) & 0xff) as i32;
            let frac = (bits & 0x7f_ffff) as u64;
            let (f, e) = if exp == 0 { (frac, -149) } else { (frac | 0x80_0000, exp - 150) };
            (f, e, 24, -148)
        } else {
            let bits = self.x.abs().to_bits();
            let exp = ((bits >> 52) & 0x7ff) as i32;
            let frac = bits & 0xf_ffff_ffff_ffff;
            let (f, e) = if exp == 0 { (frac, -1074) } else { (frac | (1 << 52), exp - 1075) };
            (f, e, 53, -1073)
        }
    }
    /// Infinities and NaNs print as the printer prints them.
    fn print(self) -> String {
        if self.single && self.x.is_infinite() {
            let sign = if self.x > 0.0 { "POSITIVE" } else { "NEGATIVE" };
            format!("#.SB-EXT:SINGLE-FLOAT-{sign}-INFINITY")
        } else {
            mprof_heap::printer::format_float(self.x)
        }
    }
}

pub(super) fn pow10(n: u32) -> BigInt {
    num_traits::pow(BigInt::from(10), n as usize)
}

/// SBCL's FLONUM-TO-DIGITS (Burger & Dybvig with a cut-off position):
/// returns the decimal exponent k and the digit string.
pub(super) fn flonum_to_digits(v: Flo, position: Option<i64>, relativep: bool) -> (i64, String) {
    let (f, e, float_digits, min_e) = v.decode();
    if f == 0 {
        return (0, "0".into());
    }
    let f = BigInt::from(f);
    let mut high_ok = f.clone() % 2u32 == BigInt::zero();
    let mut low_ok = high_ok;
    let hidden = BigInt::one() << (float_digits - 1);
    let (mut r, mut s, mut mp, mut mm);
    if e >= 0 {
        let be = BigInt::one() << e as u32;
        if f != hidden {
            r = &f * &be * 2;
            s = BigInt::from(2);
            mp = be.clone();
            mm = be;
        } else {
            mm = be.clone();
            mp = &be * 2;
            r = &f * &mp * 2;
            s = BigInt::from(4);
        }
    } else if e == min_e || f != hidden {
        r = &f * 2;
        s = BigInt::one() << (1 - e) as u32;
        mp = BigInt::one();
        mm = BigInt::one();
    } else {
        r = &f * 4;
        s = BigInt::one() << (2 - e) as u32;
        mp = BigInt::from(2);
        mm = BigInt::one();
    }
    if let Some(mut position) = position {
        if relativep {
            // Find k̂, then make the position absolute.
            let mut k: i64 = 0;
            let mut l = BigInt::one();
            while &s * &l < &r + &mp {
                k += 1;
                l *= 10;
            }
            // r + s*10^(k-position)/2 < s*l, multiplied through to stay integral.
            let d = k - position;
            let lhs_less = if d >= 0 {
                &r * 2 + &s * pow10(d as u32) < &s * &l * 2
            } else {
                let m = pow10((-d) as u32);
                &r * 2 * &m + &s < &s * &l * 2 * &m
            };
            position = if lhs_less { k - position } else { k - position - 1 };
        }
        // x = s * 10^position / 2; scale everything so x stays an integer.
        let x;
        if position < 0 {
            let factor = pow10((-position).min(4000) as u32) * 2;
            x = s.clone();
            r *= &factor;
            s *= &factor;
            mp *= &factor;
            mm *= &factor;
        } else {
            let factor = BigInt::from(2);
            r *= &factor;
            s *= &factor;
            mp *= &factor;
            mm *= &factor;
            x = &s * pow10(position.min(4000) as u32) / 2;
        }
        if mm <= x {
            mm = x.clone();
            low_ok = true;
        }
        if mp <= x {
            mp = x;
            high_ok = true;
        }
    }
    // The digit loops only multiply by 10 and compare: when the inputs are
    // below 2^100 every intermediate value stays below 2^114, so u128
    // arithmetic (no allocation) gives the same digits as bignums.
    let limit = BigInt::one() << 100u32;
    let small = [&r, &s, &mp, &mm].iter().all(|v| **v < limit);
    let (k, mut digits) = match (small, r.to_u128(), s.to_u128(), mp.to_u128(), mm.to_u128()) {
        (true, Some(r), Some(s), Some(mp), Some(mm)) => scale_and_generate(r, s, mp, mm, high_ok, low_ok),
        _ => scale_and_generate(r, s, mp, mm, high_ok, low_ok),
    };
    let mut k = k;
    // A final digit of 10 carries into the digits before it.
    let mut i = digits.len();
    while i > 0 && digits[i - 1] >= 10 {
        digits[i - 1] -= 10;
        if i >= 2 {
            digits[i - 2] += 1;
        } else {
            digits.insert(0, 1);
            k += 1;
            break;
        }
        i -= 1;
    }
    let s: String = digits.iter().map(|d| (b'0' + d) as char).collect();
    (k, s)
}

/// The integer operations the digit loops need, for bignums and for u128.
pub(super) trait DigitArith: Ord + Sized {
    fn plus(&self, other: &Self) -> Self;
    fn times10(&mut self);
    fn twice(&self) -> Self;
    /// (self * 10) divided by `s`: the digit, and the remainder into self.
    fn next_digit(&mut self, s: &Self) -> u8;
}

impl DigitArith for BigInt {
    fn plus(&self, other: &Self) -> Self {
        self + other
    }
    fn times10(&mut self) {
        *self *= 10u32;
    }
    fn twice(&self) -> Self {
        self * 2u32
    }
    fn next_digit(&mut self, s: &Self) -> u8 {
        *self *= 10u32;
        let (q, r) = num_integer::Integer::div_rem(&*self, s);
        *self = r;
        q.to_u8().unwrap_or(0)
    }
}

impl DigitArith for u128 {
    fn plus(&self, other: &Self) -> Self {
        self.saturating_add(*other)
    }
    fn times10(&mut self) {
        *self = self.saturating_mul(10);
    }
    fn twice(&self) -> Self {
        self.saturating_mul(2)
    }
    fn next_digit(&mut self, s: &Self) -> u8 {
        let x = self.saturating_mul(10);
        let s = (*s).max(1);
        *self = x % s;
        (x / s).min(255) as u8
    }
}

/// FLONUM-TO-DIGITS' `scale` and `generate`: the decimal exponent and the digits.
pub(super) fn scale_and_generate<N: DigitArith>(mut r: N, mut s: N, mut mp: N, mut mm: N, high_ok: bool, low_ok: bool) -> (i64, Vec<u8>) {
    let mut k: i64 = 0;
    let rmp = r.plus(&mp);
    while rmp > s || (high_ok && rmp == s) {
        s.times10();
        k += 1;
    }
    while r > mm {
        let mut x = r.plus(&mp);
        x.times10();
        if x < s || (!high_ok && x == s) {
            k -= 1;
            r.times10();
            mp.times10();
            mm.times10();
        } else {
            break;
        }
    }
    let mut digits: Vec<u8> = Vec::new();
    loop {
        let d = r.next_digit(&s);
        mp.times10();
        mm.times10();
        let tc1 = r < mm || (low_ok && r == mm);
        let rmp = r.plus(&mp);
        let tc2 = rmp > s || (high_ok && rmp == s);
        if tc1 || tc2 {
            // Round up when only the high end terminates, or on a tie-break past half.
            let up = if tc1 != tc2 { tc2 } else { r.twice() >= s };
            digits.push(if up { d + 1 } else { d });
            break;
        }
        digits.push(d);
        if digits.len() > 5000 {
            break;
        }
    }
    (k, digits)
}

/// SBCL's FLONUM-TO-STRING: (string, length, leading point?, trailing point?, point position).
pub(super) fn flonum_to_string(
    x: Flo,
    width: Option<i64>,
    fdigits: Option<i64>,
    scale: Option<i64>,
    fmin: Option<i64>,
) -> (String, usize, bool, bool, usize) {
    let x = x.with(x.x.abs());
    let (e, string) = if x.x == 0.0 {
        // Zero: FLONUM-TO-DIGITS yields exponent 0 and the digit "0".
        (0, "0".to_string())
    } else if let Some(fd) = fdigits {
        flonum_to_digits(x, Some((-(fd + scale.unwrap_or(0))).min(-fmin.unwrap_or(0))), false)
    } else if let Some(w) = width.filter(|&w| w > 1) {
        let sc = scale.unwrap_or(0);
        let wres = flonum_to_digits(x, Some(1.max(w - 1 + if sc < 0 { sc } else { 0 })), true);
        let fres = flonum_to_digits(x, Some(-(fmin.unwrap_or(0) + sc)), false);
        if wres.1.len() >= fres.1.len() { wres } else { fres }
    } else {
        flonum_to_digits(x, None, false)
    };
    let e = if x.x == 0.0 { e } else { e + scale.unwrap_or(0) };
    let len = string.len() as i64;
    let mut out = String::new();
    if e > 0 {
        out.push_str(&string[..len.min(e) as usize]);
        out.extend(std::iter::repeat_n('0', (e - len).max(0) as usize));
        out.push('.');
        out.push_str(&string[len.min(e) as usize..]);
        if let Some(fd) = fdigits {
            out.extend(std::iter::repeat_n('0', (fd - (len - len.min(e))).max(0) as usize));
        }
    } else {
        out.push('.');
        out.extend(std::iter::repeat_n('0', (-e) as usize));
        let end = match fdigits {
            Some(fd) => len.min(fmin.unwrap_or(0).max(fd + e)).max(0) as usize,
            None => len as usize,
        };
        out.push_str(&string[..end]);
        if let Some(fd) = fdigits {
            out.extend(std::iter::repeat_n('0', (fd + e - len).max(0) as usize));
        }
    }
    let n = out.chars().count();
    let lpoint = out.starts_with('.');
    let tpoint = out.ends_with('.');
    let pos = out.find('.').unwrap_or(0);
    (out, n, lpoint, tpoint, pos)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn format_fixed_aux(
    out: &mut String,
    number: Flo,
    w: Option<i64>,
    d: Option<i64>,
    k: Option<i64>,
    ovf: Option<char>,
    pad: char,
    atsign: bool,
) -> bool {
    if number.is_special() {
        out.push_str(&number.print());
        return false;
    }
    let neg = number.x.is_sign_negative();
    let mut spaceleft = w;
    if let Some(s) = spaceleft.as_mut()
        && (atsign || neg)
    {
        *s -= 1;
    }
    let (s, len, mut lpoint, mut tpoint, _) = flonum_to_string(number, spaceleft, d, k, None);
    if d == Some(0) {
        tpoint = false;
    }
    if let Some(sl) = spaceleft.as_mut() {
        *sl -= len as i64;
        if lpoint {
            if *sl > 0 || tpoint {
                *sl -= 1;
            } else {
                lpoint = false;
            }
        }
        if tpoint {
            if *sl > 0 {
                *sl -= 1;
            } else {
                tpoint = false;
            }
        }
    }
    if let (Some(w), Some(sl), Some(o)) = (w, spaceleft, ovf)
        && sl < 0
    {
        out.extend(std::iter::repeat_n(o, w.max(0) as usize));
        return true;
    }
    if let Some(sl) = spaceleft {
        out.extend(std::iter::repeat_n(pad, sl.max(0) as usize));
    }
    if neg {
        out.push('-');
    } else if atsign {
        out.push('+');
    }
    if lpoint {
        out.push('0');
    }
    out.push_str(&s);
    if tpoint {
        out.push('0');
    }
    false
}

/// SBCL's SCALE-EXPONENT, in double arithmetic as SBCL does it: a number in
/// (0.1, 1] and a decimal exponent.
pub(super) fn scale_exponent(x: f64) -> (f64, i64) {
    if x == 0.0 {
        return (0.0, 1);
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let denormal = biased == 0;
    // (decode-float x) exponent: x = sig * 2^exponent with sig in [0.5, 1).
    let exponent = if denormal {
        let frac = bits & 0xf_ffff_ffff_ffff;
        -1022 - (frac.leading_zeros() as i64 - 12)
    } else {
        biased - 1022
    };
    let log10_2 = f64::from_bits(0x3FD3_4413_509F_79FF);
    let ex0 = round_half_even(exponent as f64 * log10_2);
    let expt10 = |n: i64| -> f64 { 10f64.powf(n as f64) };
    let x = if ex0 < 0 {
        if denormal {
            x * 1.0e16 * expt10(-ex0 - 16)
        } else {
            x * 10.0 * expt10(-ex0 - 1)
        }
    } else {
        x / 10.0 / expt10(ex0 - 1)
    };
    let mut d = 10.0f64;
    let mut y = x;
    let mut ex = ex0;
    while y >= 1.0 {
        y = x / d;
        d *= 10.0;
        ex += 1;
    }
    let mut m = 10.0f64;
    let mut z = y;
    while z < 0.1 {
        z = y * m;
        m *= 10.0;
        ex -= 1;
    }
    (z, ex)
}

pub(super) fn round_half_even(v: f64) -> i64 {
    let r = v.round();
    if (v - v.trunc()).abs() == 0.5 {
        let t = v.trunc();
        if (t as i64) % 2 == 0 { t as i64 } else { r as i64 }
    } else {
        r as i64
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn format_exp_aux(
    out: &mut String,
    number: Flo,
    w: Option<i64>,
    d: Option<i64>,
    e: Option<i64>,
    k: i64,
    ovf: Option<char>,
    pad: char,
    marker: Option<char>,
    atsign: bool,
) {
    if number.is_special() {
        out.push_str(&number.print());
        return;
    }
    let (num, expt) = if number.single {
        let (n, ex) = scale_exponent(number.x.abs());
        // Singles scale in double arithmetic, then come back to single precision.
        (n as f32 as f64, ex)
    } else {
        scale_exponent(number.x.abs())
    };
    let num = number.with(num);
    let k = if num.x == 1.0 { k - 1 } else { k };
    let expt = expt - k;
    let estr = expt.abs().to_string();
    let elen = match e {
        Some(e) => (estr.len() as i64).max(e),
        None => estr.len() as i64,
    };
    let neg = number.x.is_sign_negative();
    let mut spaceleft = w.map(|w| w - 2 - elen - if atsign || neg { 1 } else { 0 });
    if let (Some(w), Some(o), Some(e)) = (w, ovf, e)
        && elen > e
    {
        out.extend(std::iter::repeat_n(o, w.max(0) as usize));
        return;
    }
    let fdig = d.map(|d| if k > 0 { d - k + 1 } else { d });
    let fmin = if k < 0 { Some(1) } else { fdig };
    let (fstr, flen, mut lpoint, mut tpoint, _) = flonum_to_string(num, spaceleft, fdig, Some(k), fmin);
    if d == Some(0) {
        tpoint = false;
    }
    if let Some(sl) = spaceleft.as_mut() {
        *sl -= flen as i64;
        if lpoint {
            if *sl > 0 || tpoint {
                *sl -= 1;
            } else {
                lpoint = false;
            }
        }
        if tpoint && *sl <= 0 {
            tpoint = false;
        }
    }
    if let (Some(w), Some(sl), Some(o)) = (w, spaceleft, ovf)
        && sl < 0
    {
        out.extend(std::iter::repeat_n(o, w.max(0) as usize));
        return;
    }
    if let Some(sl) = spaceleft {
        out.extend(std::iter::repeat_n(pad, sl.max(0) as usize));
    }
    if neg {
        out.push('-');
    } else if atsign {
        out.push('+');
    }
    if lpoint {
        out.push('0');
    }
    out.push_str(&fstr);
    if tpoint {
        out.push('0');
    }
    out.push(marker.unwrap_or(if number.single { 'f' } else { 'e' }));
    out.push(if expt < 0 { '-' } else { '+' });
    if let Some(e) = e {
        out.extend(std::iter::repeat_n('0', (e - estr.len() as i64).max(0) as usize));
    }
    out.push_str(&estr);
}

#[allow(clippy::too_many_arguments)]
pub(super) fn format_general_aux(
    out: &mut String,
    number: Flo,
    w: Option<i64>,
    d: Option<i64>,
    e: Option<i64>,
    k: Option<i64>,
    ovf: Option<char>,
    pad: char,
    marker: Option<char>,
    atsign: bool,
) {
    if number.is_special() {
        out.push_str(&number.print());
        return;
    }
    let (_, n) = scale_exponent(number.x.abs());
    let d = match d {
        Some(d) => d,
        None => {
            let (_, len, _, _, _) = flonum_to_string(number.with(number.x.abs()), None, None, None, None);
            let q = if len == 1 { 1 } else { len as i64 - 1 };
            q.max(n.min(7))
        }
    };
    let ee = e.map(|e| e + 2).unwrap_or(4);
    let ww = w.map(|w| w - ee);
    let dd = d - n;
    if 0 <= dd && dd <= d {
        let overflowed = format_fixed_aux(out, number, ww, Some(dd), None, ovf, pad, atsign);
        let c = if overflowed { ovf.unwrap_or(' ') } else { ' ' };
        out.extend(std::iter::repeat_n(c, ee.max(0) as usize));
    } else {
        format_exp_aux(out, number, w, Some(d), e, k.unwrap_or(1), ovf, pad, marker, atsign);
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn format_dollars(out: &mut String, number: Flo, d: i64, n: i64, w: i64, pad: char, colon: bool, atsign: bool) {
    if number.is_special() {
        out.push_str(&number.print());
        return;
    }
    let signstr = if number.x.is_sign_negative() {
        "-"
    } else if atsign {
        "+"
    } else {
        ""
    };
    let signlen = signstr.len() as i64;
    let (s, _, _, _, pointplace) = flonum_to_string(number.with(number.x.abs()), None, Some(d), None, None);
    let pointplace = pointplace as i64;
    if colon {
        out.push_str(signstr);
    }
    out.extend(std::iter::repeat_n(pad, (w - signlen - n.max(pointplace) - 1 - d).max(0) as usize));
    if !colon {
        out.push_str(signstr);
    }
    out.extend(std::iter::repeat_n('0', (n - pointplace).max(0) as usize));
    out.push_str(&s);
}

