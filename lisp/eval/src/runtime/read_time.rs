//! `#.`: the reader (which knows nothing of evaluation or the heap) reads `#.x`
//! as `(mprof-system:%read-eval x)` (`#nA` it reads itself, as an array datum).
//! Evaluating at read time runs Lisp, which
//! a builtin may not do, so the work is the prelude's `SYS::%READ-TIME-RESOLVE`
//! (prelude/reader.lisp), and the readers only route data that needs it there:
//! - `load` and the REPL wrap such a top-level form in
//!   `(sys::%read-time-eval 'form)`, which resolves the markers (obeying
//!   `*read-eval*`) and evaluates the result in the form's place;
//! - `read` and `read-from-string` (Lisp wrappers over `sys::%read...`) resolve
//!   their result when the builtin set `SYS::*READ-TIME-PENDING*`.
//!
//! Only syntax that contains a marker is routed: [`datum_needs_read_time`]
//! decides on the syntax, with an explicit stack (no recursion on data depth).

use gc_arena::Mutation;
use mprof_heap::{Value, alloc};
use mprof_reader::{Datum, DatumKind, PackagePrefix, READ_EVAL_SYMBOL, SYSTEM_PACKAGE};

use crate::runtime::world::World;

/// Whether a datum contains `#.` syntax.
pub fn datum_needs_read_time(d: &Datum) -> bool {
    let mut stack = vec![d];
    while let Some(d) = stack.pop() {
        match &d.kind {
            // The marker heads its list, or, for `(a . #.x)`, which the parser reads
            // as the list `(a %read-eval x)`, stands in it after the dot's place.
            DatumKind::List(items, tail) => {
                let marked = items.iter().any(|item| {
                    matches!(&item.kind, DatumKind::Symbol(s)
                        if s.name == READ_EVAL_SYMBOL
                            && matches!(&s.package, PackagePrefix::External(p) if p == SYSTEM_PACKAGE))
                });
                if marked {
                    return true;
                }
                stack.extend(items.iter());
                stack.extend(tail.iter().map(|t| &**t));
            }
            DatumKind::Vector(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    false
}

/// A top-level form read by `load` or the REPL whose markers must be resolved
/// before it is evaluated: `(sys::%read-time-eval 'form)`.
pub fn deferred_form<'gc>(mc: &Mutation<'gc>, world: &World<'gc>, form: Value<'gc>) -> Value<'gc> {
    let p = &world.packages;
    let eval = p.intern_external(mc, p.system, "%READ-TIME-EVAL");
    let quoted = alloc::list(mc, &[Value::Symbol(world.syms.quote), form]);
    alloc::list(mc, &[eval, quoted])
}

/// Tell the Lisp wrapper of a reading builtin that its result holds markers.
pub fn set_pending<'gc>(mc: &Mutation<'gc>, world: &World<'gc>) {
    let p = &world.packages;
    if let Value::Symbol(s) = p.intern_external(mc, p.system, "*READ-TIME-PENDING*") {
        alloc::symbol_set_value(mc, s, world.t());
    }
}
