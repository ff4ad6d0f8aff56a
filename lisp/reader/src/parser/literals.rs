//! The literals `#(...)`, `#nA`, `#*` and `#C` assemble from what the parser
//! read: sequences to array contents of a given rank, bit vectors, complex
//! numbers, each checked (shape, rank, digits) with an error naming the problem.

use crate::datum::{Datum, DatumKind, Span};
use crate::parser::describe_char;

/// The largest rank `#nA` reads (SBCL's `array-rank-limit` is 129).
pub(super) const MAX_ARRAY_RANK: u32 = 129;

/// The elements of a sequence datum at one level of `#nA` contents, or None
/// for a datum that is not a sequence.
pub(super) fn sequence_elements(d: Datum) -> Result<Vec<Datum>, Datum> {
    let span = d.span;
    match d.kind {
        DatumKind::List(items, None) => Ok(items.into_vec()),
        DatumKind::Vector(items) => Ok(items.into_vec()),
        DatumKind::String(s) => Ok(s.chars().map(|c| Datum::new(DatumKind::Char(c), span)).collect()),
        DatumKind::BitVector(bits) => {
            Ok(bits.into_iter().map(|b| Datum::new(DatumKind::Integer(b as i64), span)).collect())
        }
        kind => Err(Datum::new(kind, span)),
    }
}

pub(super) fn sequence_len(d: &Datum) -> Option<usize> {
    match &d.kind {
        DatumKind::List(items, None) | DatumKind::Vector(items) => Some(items.len()),
        DatumKind::String(s) => Some(s.chars().count()),
        DatumKind::BitVector(bits) => Some(bits.len()),
        _ => None,
    }
}

/// The datum of `#nA contents`: the dimensions come from the first element
/// at each level, and every level must have them (flattened with a stack).
pub(super) fn array_datum(rank: usize, contents: Datum, open: Span) -> Result<Datum, String> {
    let span = Span { end: contents.span.end, ..open };
    let mut dims = Vec::with_capacity(rank);
    let mut probe = Some(&contents);
    for _ in 0..rank {
        let d = probe.ok_or("")?;
        let Some(n) = sequence_len(d) else {
            return Err(format!("#{rank}A: the contents must be nested sequences {rank} deep"));
        };
        dims.push(n);
        probe = match &d.kind {
            DatumKind::List(items, None) | DatumKind::Vector(items) => items.first(),
            // A string's or bit vector's elements are atoms: a deeper level fails above.
            _ => None,
        };
        if n == 0 {
            // Nothing below an empty level: the remaining dimensions are 0.
            dims.resize(rank, 0);
            break;
        }
        if probe.is_none() && dims.len() < rank {
            return Err(format!("#{rank}A: the contents must be nested sequences {rank} deep"));
        }
    }
    let mut items = Vec::with_capacity(dims.iter().product());
    let mut stack = vec![(contents, 0usize)];
    let mut error = None;
    while let Some((d, level)) = stack.pop() {
        if error.is_some() {
            continue;
        }
        if level == rank {
            items.push(d);
            continue;
        }
        match sequence_elements(d) {
            Ok(elements) if elements.len() == dims[level] => {
                stack.extend(elements.into_iter().rev().map(|e| (e, level + 1)));
            }
            Ok(elements) => {
                error = Some(format!(
                    "#{rank}A: a sequence of {} elements where dimension {level} is {}",
                    elements.len(),
                    dims[level]
                ));
            }
            Err(_) => {
                error = Some(format!("#{rank}A: the contents must be nested sequences {rank} deep"));
            }
        }
    }
    match error {
        Some(message) => Err(message),
        None => Ok(Datum::new(DatumKind::Array(dims, items.into()), span)),
    }
}

/// The bits of `#*0101` or `#n*01` (`n` bits, the last one repeated).
pub(super) fn parse_bit_vector(text: &str) -> Result<Vec<bool>, String> {
    let star = text.find('*').unwrap_or(text.len());
    let count = &text[1..star];
    let body = &text[star + 1..];
    if let Some(bad) = body.chars().find(|c| *c != '0' && *c != '1') {
        return Err(format!(
            "{text}: a bit vector may hold only the digits 0 and 1, not {}",
            describe_char(bad)
        ));
    }
    let mut bits: Vec<bool> = body.bytes().map(|b| b == b'1').collect();
    if count.is_empty() {
        return Ok(bits);
    }
    let n: usize = match count.parse() {
        // 16M bits: a bound on what one token can make the reader allocate.
        Ok(n) if n <= 1 << 24 => n,
        _ => return Err(format!("{text}: the length {count} of a bit vector is too large")),
    };
    match bits.last().copied() {
        _ if bits.len() > n => Err(format!(
            "{text}: {} bits given for a bit vector of length {n}",
            bits.len()
        )),
        None if n > 0 => Err(format!(
            "{text}: a bit vector of length {n} needs at least one bit"
        )),
        last => {
            bits.resize(n, last.unwrap_or(false));
            Ok(bits)
        }
    }
}

/// The datum of `#C(re im)` from the list read after `#C`.
pub(super) fn complex_datum(list: Datum, open: Span) -> Result<Datum, String> {
    let span = Span { end: list.span.end, ..open };
    let is_real = |d: &Datum| {
        matches!(
            d.kind,
            DatumKind::Integer(_) | DatumKind::BigInteger(_) | DatumKind::Ratio(..) | DatumKind::Float(_)
        )
    };
    match list.kind {
        DatumKind::List(mut items, None) if items.len() == 2 && items.iter().all(is_real) => {
            let im = items.pop().map(Box::new);
            let re = items.pop().map(Box::new);
            match (re, im) {
                (Some(re), Some(im)) => Ok(Datum::new(DatumKind::Complex(re, im), span)),
                _ => Err("#C: expected a list of two real numbers, as in #C(1 2)".to_string()),
            }
        }
        other => {
            let datum = Datum::new(other, list.span);
            let mut shown = datum.to_string();
            if shown.len() > 60 {
                let cut = (0..=60).rev().find(|&i| shown.is_char_boundary(i)).unwrap_or(0);
                shown.truncate(cut);
                shown.push_str("...");
            }
            Err(format!(
                "#C{shown}: expected a list of two real numbers, as in #C(1 2)"
            ))
        }
    }
}
