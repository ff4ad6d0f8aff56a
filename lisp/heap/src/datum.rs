//! Turning the reader's syntax ([`mprof_reader::Datum`]) into heap values:
//! interning symbols in the current package, boxing numbers.
//!
//! Conversion is iterative over list spines and uses an explicit stack for
//! nesting, so a deeply nested datum cannot overflow the Rust stack.

use gc_arena::Mutation;
use mprof_reader::{Datum, DatumKind, PackagePrefix, Span};

use num_traits::ToPrimitive;

use crate::alloc;
use crate::spec::Bits;
use crate::packages::{PackageError, Packages};
use crate::value::*;

/// A symbol that could not be resolved, with where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct DatumError {
    pub error: PackageError,
    pub span: Span,
}

/// Convert one datum to a value, interning unqualified symbols in `package`.
pub fn datum_to_value<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    package: Ptr<'gc, Package<'gc>>,
    datum: &Datum,
) -> Result<Value<'gc>, DatumError> {
    convert(mc, packages, package, datum, None)
}

/// Where the conses made from a datum came from, for the execution counter's listing.
#[derive(Default)]
pub struct SourceSpans<'gc> {
    /// The first cons of each list datum's spine, with the list's span.
    pub lists: Vec<(Value<'gc>, Span)>,
    /// Every cons of every spine, with the span of the element in its car (so that an
    /// atom, which has no identity of its own, can be found by its place in a list).
    pub cells: Vec<(Value<'gc>, Span)>,
}

/// [`datum_to_value`] that also records where each cons came from (see [`SourceSpans`]).
pub fn datum_to_value_spanned<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    package: Ptr<'gc, Package<'gc>>,
    datum: &Datum,
    spans: &mut SourceSpans<'gc>,
) -> Result<Value<'gc>, DatumError> {
    convert(mc, packages, package, datum, Some(spans))
}

fn convert<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    package: Ptr<'gc, Package<'gc>>,
    datum: &Datum,
    mut spans: Option<&mut SourceSpans<'gc>>,
) -> Result<Value<'gc>, DatumError> {
    // Work items: either convert a datum, or assemble a compound from the
    // last `n` converted values.
    enum Work<'d> {
        Convert(&'d Datum),
        List { items: &'d [Datum], dotted: bool, span: Span },
        Vector(usize),
        Array(&'d [usize]),
    }
    let mut work = vec![Work::Convert(datum)];
    let mut done: Vec<Value<'gc>> = Vec::new();
    while let Some(w) = work.pop() {
        match w {
            Work::Convert(d) => match &d.kind {
                DatumKind::List(items, tail) => {
                    if items.is_empty() && tail.is_none() {
                        done.push(Value::Nil);
                        continue;
                    }
                    work.push(Work::List { items, dotted: tail.is_some(), span: d.span });
                    if let Some(t) = tail {
                        work.push(Work::Convert(t));
                    }
                    for item in items.iter().rev() {
                        work.push(Work::Convert(item));
                    }
                }
                DatumKind::Vector(items) => {
                    work.push(Work::Vector(items.len()));
                    for item in items.iter().rev() {
                        work.push(Work::Convert(item));
                    }
                }
                DatumKind::Array(dims, items) => {
                    work.push(Work::Array(dims));
                    for item in items.iter().rev() {
                        work.push(Work::Convert(item));
                    }
                }
                _ => done.push(atom_to_value(mc, packages, package, d)?),
            },
            Work::List { items, dotted, span } => {
                let tail = if dotted { done.pop().unwrap_or(Value::Nil) } else { Value::Nil };
                let start = done.len().saturating_sub(items.len());
                let v = alloc::list_with_tail(mc, &done[start..], tail);
                if let Some(spans) = spans.as_mut() {
                    spans.lists.push((v, span));
                    let mut cell = v;
                    for item in items {
                        let Value::Cons(c) = cell else { break };
                        spans.cells.push((cell, item.span));
                        cell = c.cdr.get();
                    }
                }
                done.truncate(start);
                done.push(v);
            }
            Work::Array(dims) => {
                let n: usize = dims.iter().product();
                let start = done.len().saturating_sub(n);
                let items = done.split_off(start);
                done.push(if dims.len() == 1 {
                    alloc::vector_from(mc, items, None, false, Value::Symbol(packages.t))
                } else {
                    alloc::array(mc, dims.to_vec(), items, Value::Nil)
                });
            }
            Work::Vector(n) => {
                let start = done.len().saturating_sub(n);
                let items = done.split_off(start);
                done.push(alloc::vector_from(mc, items, None, false, Value::Symbol(packages.t)));
            }
        }
    }
    Ok(done.pop().unwrap_or(Value::Nil))
}

fn atom_to_value<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    package: Ptr<'gc, Package<'gc>>,
    d: &Datum,
) -> Result<Value<'gc>, DatumError> {
    Ok(match &d.kind {
        DatumKind::Integer(i) => Value::Fixnum(*i),
        DatumKind::BigInteger(b) => alloc::integer(mc, b.clone()),
        DatumKind::Ratio(n, den) => alloc::rational(mc, n.clone(), den.clone()),
        DatumKind::Float(x) => alloc::float(mc, *x),
        DatumKind::Char(c) => Value::Char(*c),
        DatumKind::String(s) => alloc::string(mc, s),
        DatumKind::Symbol(name) => {
            let r = match &name.package {
                PackagePrefix::None => Ok(packages.intern(mc, package, &name.name)),
                PackagePrefix::Keyword => Ok(packages.keyword(mc, &name.name)),
                PackagePrefix::External(p) => packages.intern_qualified(mc, package, p, &name.name, true),
                PackagePrefix::Internal(p) => packages.intern_qualified(mc, package, p, &name.name, false),
                PackagePrefix::Uninterned => Ok(Value::Symbol(alloc::make_symbol(mc, &name.name))),
            };
            r.map_err(|error| DatumError { error, span: d.span })?
        }
        DatumKind::BitVector(bits) => alloc::bit_vector(mc, Bits::from_bools(bits.iter().copied())),
        DatumKind::Complex(re, im) => {
            let float = |d: &Datum| match &d.kind {
                DatumKind::Float(x) => Some(*x),
                _ => None,
            };
            let part = |d: &Datum| atom_to_value(mc, packages, package, d);
            match (float(re), float(im)) {
                (None, None) => alloc::complex(mc, Complex::Rational(part(re)?, part(im)?)),
                _ => alloc::complex(mc, Complex::Double(real_to_f64(re), real_to_f64(im))),
            }
        }
        DatumKind::List(..) | DatumKind::Vector(..) | DatumKind::Array(..) => Value::Nil,
    })
}

/// A real number datum as a double (a complex literal with a float part has
/// both parts converted, as by `complex`).
fn real_to_f64(d: &Datum) -> f64 {
    match &d.kind {
        DatumKind::Integer(i) => *i as f64,
        DatumKind::BigInteger(b) => b.to_f64().unwrap_or(f64::NAN),
        DatumKind::Ratio(n, den) => n.to_f64().unwrap_or(f64::NAN) / den.to_f64().unwrap_or(f64::NAN),
        DatumKind::Float(x) => *x,
        _ => 0.0,
    }
}
