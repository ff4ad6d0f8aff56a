//! Rebuilding a cons tree without Rust recursion: the engine behind
//! `copy-tree` and `subst`.
//!
//! A tree is a spine (followed by iteration) whose cars may be trees; each
//! spine being rebuilt is one entry of an explicit work stack, so the Rust
//! stack depth never depends on how deeply the data nests.
//!
//! Invariants: a subtree `replace` maps to a value is not descended into;
//! with `share`, a spine whose elements all came back unchanged is returned
//! as is and only the prefix up to its last change is copied (SBCL's subst);
//! without it every cons is fresh (copy-tree). Data nested deeper than
//! [`MAX_TREE_DEPTH`], or more elements buffered than [`MAX_BUFFERED`] (a
//! circular car or cdr chain), ends in a storage-condition, never a hang or
//! an abort.

use mprof_heap::{Value, alloc};
use gc_arena::Mutation;

use crate::runtime::raise::{ErrorKind, Raise};

/// Deepest car nesting a tree walk follows: twice the depth the tests build,
/// far beyond real data; a circular car chain reaches it quickly (about 100
/// bytes of work stack per level).
pub const MAX_TREE_DEPTH: usize = 2_000_000;

/// Most elements held across all spines being rebuilt at once (a circular
/// cdr chain reaches it; 16 bytes each).
pub const MAX_BUFFERED: usize = 1 << 26;

struct Spine<'gc> {
    head: Value<'gc>,
    /// The cons whose car is being rebuilt, or what follows the last one done.
    cur: Value<'gc>,
    cars: Vec<Value<'gc>>,
    last_changed: Option<usize>,
}

/// What finishing a spine's walk found at its end.
enum End<'gc> {
    /// The atom ending the spine, unchanged.
    Atom(Value<'gc>),
    /// The tail starting at `cur` was replaced by this value.
    Replaced(Value<'gc>),
    /// The car of `cur` is a tree to rebuild first.
    Descend,
}

/// Rebuild `tree`, replacing every subtree (a car or a tail of a spine) for
/// which `replace` answers `Some`. `what` names the caller in errors.
pub fn rebuild<'gc>(
    mc: &Mutation<'gc>,
    tree: Value<'gc>,
    share: bool,
    what: &str,
    mut replace: impl FnMut(Value<'gc>) -> Option<Value<'gc>>,
) -> Result<Value<'gc>, Raise<'gc>> {
    if let Some(r) = replace(tree) {
        return Ok(r);
    }
    if !matches!(tree, Value::Cons(_)) {
        return Ok(tree);
    }
    let mut stack = vec![Spine { head: tree, cur: tree, cars: Vec::new(), last_changed: None }];
    let mut buffered = 0usize;
    // The rebuilt car of the top spine's `cur`, when a nested spine just finished.
    let mut delivered: Option<Value<'gc>> = None;
    loop {
        let depth = stack.len();
        let Some(top) = stack.last_mut() else { return Ok(tree) };
        if let Some(v) = delivered.take() {
            let Value::Cons(c) = top.cur else { return Ok(tree) };
            if !share || !v.eq(c.car.get()) {
                top.last_changed = Some(top.cars.len());
            }
            top.cars.push(v);
            buffered += 1;
            top.cur = c.cdr.get();
        }
        let end = loop {
            let Value::Cons(c) = top.cur else { break End::Atom(top.cur) };
            if !top.cars.is_empty()
                && let Some(r) = replace(top.cur)
            {
                break End::Replaced(r);
            }
            if buffered >= MAX_BUFFERED {
                return Err(too_big(what, "more than 67,108,864 conses in the spines being copied (a circular list?)"));
            }
            let car = c.car.get();
            if let Some(r) = replace(car) {
                if !share || !r.eq(car) {
                    top.last_changed = Some(top.cars.len());
                }
                top.cars.push(r);
                buffered += 1;
                top.cur = c.cdr.get();
                continue;
            }
            if matches!(car, Value::Cons(_)) {
                break End::Descend;
            }
            top.cars.push(car);
            buffered += 1;
            top.cur = c.cdr.get();
        };
        let result = match end {
            // A car that is itself a tree: descend.
            End::Descend => {
                if depth >= MAX_TREE_DEPTH {
                    return Err(too_big(what, "data nested more than 2,000,000 levels deep (a circular tree?)"));
                }
                let car = alloc::car(top.cur);
                stack.push(Spine { head: car, cur: car, cars: Vec::new(), last_changed: None });
                continue;
            }
            End::Replaced(r) => alloc::list_with_tail(mc, &top.cars, r),
            End::Atom(atom) => match (share, top.last_changed) {
                (false, _) => match replace(atom) {
                    Some(r) => alloc::list_with_tail(mc, &top.cars, r),
                    None => alloc::list_with_tail(mc, &top.cars, atom),
                },
                (true, last) => match replace(atom) {
                    Some(r) if !r.eq(atom) => alloc::list_with_tail(mc, &top.cars, r),
                    _ => match last {
                        None => top.head,
                        Some(i) => {
                            let mut rest = top.head;
                            for _ in 0..=i {
                                rest = alloc::cdr(rest);
                            }
                            alloc::list_with_tail(mc, &top.cars[..=i], rest)
                        }
                    },
                },
            },
        };
        if let Some(done) = stack.pop() {
            buffered -= done.cars.len();
        }
        if stack.is_empty() {
            return Ok(result);
        }
        delivered = Some(result);
    }
}

fn too_big<'gc>(what: &str, why: &str) -> Raise<'gc> {
    Raise::simple(ErrorKind::Storage, format!("{what}: {why}"))
}
