//! Turning the reader's syntax ([`mprof_reader::Datum`]) into heap values:
//! interning symbols in the current package, boxing numbers.
//!
//! Conversion is iterative over list spines and uses an explicit stack for
//! nesting, so a deeply nested datum cannot overflow the Rust stack.

use gc_arena::Mutation;
use mprof_reader::{Datum, DatumKind, PackagePrefix, Span};

use crate::alloc;
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

/// [`datum_to_value`] that also lists every cons made for a list datum (the first cons
/// of its spine) with the datum's source span, for the execution counter's listing.
pub fn datum_to_value_spanned<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    package: Ptr<'gc, Package<'gc>>,
    datum: &Datum,
    spans: &mut Vec<(Value<'gc>, Span)>,
) -> Result<Value<'gc>, DatumError> {
    convert(mc, packages, package, datum, Some(spans))
}

fn convert<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    package: Ptr<'gc, Package<'gc>>,
    datum: &Datum,
    mut spans: Option<&mut Vec<(Value<'gc>, Span)>>,
) -> Result<Value<'gc>, DatumError> {
    // Work items: either convert a datum, or assemble a compound from the
    // last `n` converted values.
    enum Work<'d> {
        Convert(&'d Datum),
        List { n: usize, dotted: bool, span: Span },
        Vector(usize),
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
                    work.push(Work::List { n: items.len(), dotted: tail.is_some(), span: d.span });
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
                _ => done.push(atom_to_value(mc, packages, package, d)?),
            },
            Work::List { n, dotted, span } => {
                let tail = if dotted { done.pop().unwrap_or(Value::Nil) } else { Value::Nil };
                let start = done.len().saturating_sub(n);
                let v = alloc::list_with_tail(mc, &done[start..], tail);
                if let Some(spans) = spans.as_mut() {
                    spans.push((v, span));
                }
                done.truncate(start);
                done.push(v);
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
                PackagePrefix::External(p) => packages.intern_qualified(mc, p, &name.name, true),
                PackagePrefix::Internal(p) => packages.intern_qualified(mc, p, &name.name, false),
                PackagePrefix::Uninterned => Ok(Value::Symbol(alloc::make_symbol(mc, &name.name))),
            };
            r.map_err(|error| DatumError { error, span: d.span })?
        }
        DatumKind::List(..) | DatumKind::Vector(..) => Value::Nil,
    })
}
