//! `~R` without a radix: numbers in English words (cardinal and ordinal) and
//! in Roman numerals (new and old style).

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

// ---- ~R in English and Roman numerals ----

pub(super) const ONES: [&str; 10] = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
pub(super) const TENS: [&str; 10] = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
pub(super) const TEENS: [&str; 10] =
    ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"];
pub(super) const PERIODS: [&str; 22] = [
    "",
    " thousand",
    " million",
    " billion",
    " trillion",
    " quadrillion",
    " quintillion",
    " sextillion",
    " septillion",
    " octillion",
    " nonillion",
    " decillion",
    " undecillion",
    " duodecillion",
    " tredecillion",
    " quattuordecillion",
    " quindecillion",
    " sexdecillion",
    " septendecillion",
    " octodecillion",
    " novemdecillion",
    " vigintillion",
];
pub(super) const ORD_ONES: [&str; 10] = ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"];
pub(super) const ORD_TENS: [&str; 10] =
    ["", "tenth", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth"];

pub(super) fn small_cardinal(out: &mut String, n: usize) {
    let (hundreds, rem) = (n / 100, n % 100);
    if hundreds > 0 {
        out.push_str(ONES[hundreds]);
        out.push_str(" hundred");
        if rem > 0 {
            out.push(' ');
        }
    }
    if rem > 0 {
        let (tens, ones) = (rem / 10, rem % 10);
        if tens > 1 {
            out.push_str(TENS[tens]);
            if ones > 0 {
                out.push('-');
                out.push_str(ONES[ones]);
            }
        } else if tens == 1 {
            out.push_str(TEENS[ones]);
        } else {
            out.push_str(ONES[ones]);
        }
    }
}

pub(super) fn cardinal(n: &BigInt) -> Result<String, String> {
    let mut out = String::new();
    if n.is_zero() {
        return Ok("zero".into());
    }
    if n.is_negative() {
        out.push_str("negative ");
    }
    // Groups of three decimal digits, most significant first.
    let digits = n.abs().to_string();
    let groups: Vec<usize> = {
        let chars: Vec<char> = digits.chars().collect();
        let first = chars.len() % 3;
        let mut gs = Vec::new();
        if first > 0 {
            gs.push(chars[..first].iter().collect::<String>());
        }
        for c in chars[first..].chunks(3) {
            gs.push(c.iter().collect());
        }
        gs.iter().map(|g| g.parse::<usize>().unwrap_or(0)).collect()
    };
    if groups.len() > PERIODS.len() {
        return Err(format!("the number {n} is too large to print in English"));
    }
    let mut first = true;
    for (i, &g) in groups.iter().enumerate() {
        if g == 0 {
            continue;
        }
        if !first {
            out.push(' ');
        }
        first = false;
        small_cardinal(&mut out, g);
        out.push_str(PERIODS[groups.len() - 1 - i]);
    }
    Ok(out)
}

pub(super) fn ordinal(n: &BigInt) -> Result<String, String> {
    let mut out = String::new();
    if n.is_negative() {
        out.push_str("negative ");
    }
    let number = n.abs();
    let hundred = BigInt::from(100);
    let bot = (&number % &hundred).to_usize().unwrap_or(0);
    let top = &number / &hundred;
    if !top.is_zero() {
        out.push_str(&cardinal(&(&number - BigInt::from(bot)))?);
    }
    if !top.is_zero() && bot > 0 {
        out.push(' ');
    }
    let (tens, ones) = (bot / 10, bot % 10);
    if bot == 12 {
        out.push_str("twelfth");
    } else if tens == 1 {
        out.push_str(TEENS[ones]);
        out.push_str("th");
    } else if tens == 0 && ones > 0 {
        out.push_str(ORD_ONES[ones]);
    } else if ones == 0 && tens > 0 {
        out.push_str(ORD_TENS[tens]);
    } else if bot > 0 {
        out.push_str(TENS[tens]);
        out.push('-');
        out.push_str(ORD_ONES[ones]);
    } else if !number.is_zero() {
        out.push_str("th");
    } else {
        out.push_str("zeroth");
    }
    Ok(out)
}

pub(super) fn roman(n: &BigInt, old: bool) -> Result<String, String> {
    let limit = if old { 5000 } else { 4000 };
    let v = n.to_i64().filter(|&v| v > 0 && v < limit).ok_or_else(|| {
        format!("the number {n} cannot be printed in {}Roman numerals", if old { "old " } else { "" })
    })?;
    let table: &[(i64, &str)] = if old {
        &[(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]
    } else {
        &[
            (1000, "M"),
            (900, "CM"),
            (500, "D"),
            (400, "CD"),
            (100, "C"),
            (90, "XC"),
            (50, "L"),
            (40, "XL"),
            (10, "X"),
            (9, "IX"),
            (5, "V"),
            (4, "IV"),
            (1, "I"),
        ]
    };
    let mut rest = v;
    let mut out = String::new();
    for &(val, s) in table {
        while rest >= val {
            out.push_str(s);
            rest -= val;
        }
    }
    Ok(out)
}

// ---- floats ----
