//! Values as the host sees them: a Lisp value converted to a [`HostValue`]
//! (numbers, characters, strings, symbols and proper lists by value; anything
//! else printed) and back. The embedding API and the VM's calls of host
//! functions convert through here.
//!
//! Invariant: no `Gc` pointer is in a `HostValue`; converting never recurses
//! deeper than 1,000 list levels (deeper lists come back printed) and prints
//! circular data finitely.

use gc_arena::Mutation;
use mprof_heap::{Value, alloc};

use crate::runtime::world::World;

/// A Lisp value converted for the host.
#[derive(Clone, Debug, PartialEq)]
pub enum HostValue {
    /// NIL (also the empty list).
    Nil,
    /// T.
    T,
    /// A fixnum, or a bignum within the i64 range.
    Integer(i64),
    /// An integer outside the i64 range, in decimal.
    BigInteger(String),
    /// A double float.
    Float(f64),
    /// A character.
    Char(char),
    /// A string's characters.
    String(String),
    /// A symbol, printed as `prin1` would (qualified when not accessible).
    Symbol(String),
    /// A proper list, element by element.
    List(Vec<HostValue>),
    /// Anything else, printed as `prin1` would.
    Other(String),
}

pub(crate) fn print_context<'a, 'gc>(world: &'a World<'gc>, escape: bool) -> mprof_heap::printer::PrintContext<'a, 'gc> {
    let current = match world.syms.package.value.get() {
        Value::Package(p) => p,
        _ => world.packages.user,
    };
    // Values handed to the host: circular data terminates.
    mprof_heap::printer::PrintContext {
        settings: mprof_heap::printer::Settings::safe(),
        condition_report: Some(crate::runtime::conditions::static_report),
        ..mprof_heap::printer::PrintContext::new(&world.packages, current, escape)
    }
}

pub(crate) fn to_host<'gc>(world: &World<'gc>, v: Value<'gc>, depth: usize) -> HostValue {
    let pctx = print_context(world, true);
    match v {
        Value::Nil => HostValue::Nil,
        Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, world.packages.t) => HostValue::T,
        Value::Fixnum(i) => HostValue::Integer(i),
        Value::BigInt(b) => HostValue::BigInteger(b.0.to_string()),
        Value::Float(f) => HostValue::Float(f.val),
        Value::Char(c) => HostValue::Char(c),
        Value::String(s) => HostValue::String(s.borrow().to_rust_string()),
        Value::Symbol(_) => HostValue::Symbol(mprof_heap::printer::print_to_string(v, &pctx)),
        Value::Cons(_) if depth < 1000 => match alloc::list_to_vec(v) {
            Some(items) => HostValue::List(items.into_iter().map(|x| to_host(world, x, depth + 1)).collect()),
            None => HostValue::Other(mprof_heap::printer::print_to_string(v, &pctx)),
        },
        other => HostValue::Other(mprof_heap::printer::print_to_string(other, &pctx)),
    }
}

pub(crate) fn from_host<'gc>(mc: &Mutation<'gc>, world: &World<'gc>, v: &HostValue) -> Value<'gc> {
    match v {
        HostValue::Nil => Value::Nil,
        HostValue::T => world.t(),
        HostValue::Integer(i) => Value::Fixnum(*i),
        HostValue::BigInteger(s) => s.parse::<num_bigint::BigInt>().map(|b| alloc::integer(mc, b)).unwrap_or(Value::Nil),
        HostValue::Float(x) => alloc::float(mc, *x),
        HostValue::Char(c) => Value::Char(*c),
        HostValue::String(s) => alloc::string(mc, s),
        HostValue::Symbol(name) | HostValue::Other(name) => match mprof_reader::read_one(name, 0, &Default::default()) {
            Ok(Some((d, _))) => mprof_heap::datum::datum_to_value(mc, &world.packages, world.packages.user, &d).unwrap_or(Value::Nil),
            _ => Value::Nil,
        },
        HostValue::List(items) => {
            let vals: Vec<Value<'gc>> = items.iter().map(|x| from_host(mc, world, x)).collect();
            alloc::list(mc, &vals)
        }
    }
}

