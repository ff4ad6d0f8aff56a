//! `*print-circle*`: finds the objects that the printer will reach more than
//! once, so that the first time it prints `#n=` and afterwards `#n#`.
//!
//! The scan follows exactly the edges the printer follows, cut where it cuts
//! (`*print-level*`, `*print-length*`, objects printed by Lisp code, arrays
//! when `*print-array*` is NIL), with an explicit stack and a table of the
//! addresses seen, so it ends on any graph, circular or 1,000,000 deep, in
//! time and memory linear in the part of the graph printed. As in SBCL only
//! conses, general vectors and arrays, structures and (when printed with
//! `#:`) uninterned symbols get labels; strings and numbers never do.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher};

use super::PrintContext;
use crate::value::*;

/// The shared objects, by address: 0 until the printer assigns their label.
/// (A fixed-key hasher: every print makes an empty table, and a randomly
/// seeded one costs a thread-local access each time.)
pub type Labels = HashMap<usize, u32, BuildHasherDefault<DefaultHasher>>;

/// Whether `v` can carry a label: an object whose identity the reader can
/// preserve and the printer descends into.
pub fn labelable(v: Value<'_>, ctx: &PrintContext<'_, '_>) -> bool {
    match v {
        Value::Cons(_) | Value::Vector(_) | Value::Array(_) | Value::Struct(_) => true,
        Value::SpecArray(a) => a.borrow().element_type == crate::spec::ElementType::T,
        Value::Symbol(s) => s.package.get().is_none() && ctx.escaping() && ctx.settings.gensym,
        _ => false,
    }
}

/// The objects `v`'s printing reaches twice or more.
pub fn shared_objects<'gc>(v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> Labels {
    let mut seen: HashMap<usize, bool> = HashMap::new();
    let mut stack: Vec<(Value<'gc>, usize)> = vec![(v, 0)];
    let level = ctx.level();
    let length = ctx.length();
    // Marks `x` seen; true when it was new (the caller then descends into it).
    let mut visit = |x: Value<'gc>| -> bool {
        let Some(addr) = x.heap_address() else { return false };
        match seen.get_mut(&addr) {
            Some(shared) => {
                *shared = true;
                false
            }
            None => {
                seen.insert(addr, false);
                true
            }
        }
    };
    while let Some((x, depth)) = stack.pop() {
        if !labelable(x, ctx) || level.is_some_and(|l| depth >= l) && !matches!(x, Value::Symbol(_)) {
            continue;
        }
        if !visit(x) {
            continue;
        }
        match x {
            Value::Cons(first) => {
                // The spine is walked here: each cdr that is a cons is its own object.
                let mut cell = first;
                let mut count = 0usize;
                loop {
                    if length.is_some_and(|n| count >= n) {
                        break;
                    }
                    stack.push((cell.car.get(), depth + 1));
                    count += 1;
                    match cell.cdr.get() {
                        Value::Cons(next) => {
                            if length.is_some_and(|n| count >= n) || !visit(Value::Cons(next)) {
                                break;
                            }
                            cell = next;
                        }
                        Value::Nil => break,
                        tail => {
                            stack.push((tail, depth + 1));
                            break;
                        }
                    }
                }
            }
            Value::Vector(vec) if ctx.prints_arrays() => {
                let vec = vec.borrow();
                let items = vec.active();
                let n = length.map_or(items.len(), |n| n.min(items.len()));
                stack.extend(items[..n].iter().map(|&i| (i, depth + 1)));
            }
            Value::Array(a) if ctx.prints_arrays() => {
                let a = a.borrow();
                let rank = a.dims.len().max(1);
                stack.extend(a.items.iter().map(|&i| (i, depth + rank)));
            }
            Value::SpecArray(a) if ctx.prints_arrays() && a.borrow().element_type == crate::spec::ElementType::T => {
                // A displaced general array: its elements are its target's.
                let a = a.borrow();
                let (n, step) = if a.dims.len() == 1 { (a.active_len(), 1) } else { (a.total_size(), a.dims.len().max(1)) };
                let n = if a.dims.len() == 1 { length.map_or(n, |l| l.min(n)) } else { n };
                for i in 0..n {
                    if let Some(crate::spec::Elem::Value(e)) = crate::spec::get(x, i) {
                        stack.push((e, depth + step));
                    }
                }
            }
            Value::Struct(s) if ctx.lisp_method(x).is_none() && !s.stype().is_condition => {
                let slots = s.slots.borrow();
                let n = length.map_or(slots.len(), |n| n.min(slots.len()));
                stack.extend(slots[..n].iter().map(|&i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    seen.into_iter().filter(|&(_, shared)| shared).map(|(addr, _)| (addr, 0)).collect()
}
