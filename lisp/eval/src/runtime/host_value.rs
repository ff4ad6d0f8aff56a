//! Values as the host sees them: a Lisp value converted to a [`HostValue`]
//! (numbers, characters, strings, symbols and proper lists by value; anything
//! else printed) and back. The embedding API and the VM's calls of host
//! functions convert through here.
//!
//! Invariants: no `Gc` pointer is in a `HostValue` (a [`Handle`] names a
//! slot of the interpreter's held values instead); converting never recurses
//! deeper than 1,000 list levels (deeper lists come back printed) and prints
//! circular data finitely; converting back never guesses: a symbol name that
//! does not read as exactly one symbol, a malformed big integer or printed
//! text (`Other`) is an error, never NIL.

use gc_arena::Mutation;
use mprof_heap::{Value, alloc};

use crate::runtime::handles::{Handle, HeldValues};
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
    /// Anything else, printed as `prin1` would (it cannot be passed back:
    /// hold a [`Handle`] to keep the object itself).
    Other(String),
    /// A Lisp object the host holds (see `Interpreter::eval_handle`); passed
    /// back to Lisp as the object itself.
    Handle(Handle),
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

/// The Lisp value of `v`; `held` resolves handles (None where no handle can be
/// resolved: a native's result). An error says what could not be converted.
pub(crate) fn from_host<'gc>(
    mc: &Mutation<'gc>,
    world: &World<'gc>,
    held: Option<&HeldValues<'gc>>,
    v: &HostValue,
) -> Result<Value<'gc>, String> {
    Ok(match v {
        HostValue::Nil => Value::Nil,
        HostValue::T => world.t(),
        HostValue::Integer(i) => Value::Fixnum(*i),
        HostValue::BigInteger(s) => match s.parse::<num_bigint::BigInt>() {
            Ok(b) => alloc::integer(mc, b),
            Err(_) => return Err(format!("BigInteger({s:?}) is not a decimal integer")),
        },
        HostValue::Float(x) => alloc::float(mc, *x),
        HostValue::Char(c) => Value::Char(*c),
        HostValue::String(s) => alloc::string(mc, s),
        HostValue::Symbol(name) => {
            let read = mprof_reader::read_one(name, 0, &Default::default());
            let sym = match read {
                Ok(Some((d, end))) if name[end..].trim().is_empty() => {
                    mprof_heap::datum::datum_to_value(mc, &world.packages, world.packages.user, &d).ok()
                }
                _ => None,
            };
            match sym {
                Some(s @ (Value::Symbol(_) | Value::Nil)) => s,
                _ => return Err(format!("Symbol({name:?}) does not read as one symbol (write it as prin1 would: |hello world|)")),
            }
        }
        HostValue::Other(text) => {
            return Err(format!("Other({text:?}) is printed text, not an object: hold it as a Handle to pass it back"));
        }
        HostValue::List(items) => {
            let vals = items.iter().map(|x| from_host(mc, world, held, x)).collect::<Result<Vec<_>, _>>()?;
            alloc::list(mc, &vals)
        }
        HostValue::Handle(h) => match held {
            Some(held) => held.get(h)?,
            None => return Err(format!("{h:?} cannot be resolved here")),
        },
    })
}
