//! Lisp values a host holds across runs: a [`Handle`] names a slot of its
//! interpreter's [`HeldValues`], a table in the arena's root, so the value it
//! holds is reachable (and kept valid across collections) for as long as the
//! host keeps the handle. Dropping the last clone of a handle queues its slot
//! for release; the interpreter empties released slots at its next entry.
//!
//! Invariants:
//! - a handle is used only with the interpreter that made it (each
//!   interpreter has a distinct id, checked on every use);
//! - a slot is reused only after every clone of its handle was dropped.

use std::sync::{Arc, Mutex, PoisonError};
use std::sync::atomic::{AtomicU64, Ordering};

use gc_arena::Collect;
use mprof_heap::Value;

/// Released slot numbers, shared by an interpreter and its handles (behind a
/// mutex so that a `HostValue` holding a handle stays `Send`: a handle dropped
/// on another thread releases its slot all the same).
type Released = Arc<Mutex<Vec<usize>>>;

fn lock(r: &Released) -> std::sync::MutexGuard<'_, Vec<usize>> {
    r.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Slot {
    interp: u64,
    index: usize,
    released: Released,
}

impl Drop for Slot {
    fn drop(&mut self) {
        lock(&self.released).push(self.index);
    }
}

/// A Lisp value the host holds (a function, closure, hash table, instance...):
/// it stays alive and valid across collections until the last clone is dropped.
/// Call it with `Interpreter::call_value`, pass it back to Lisp as
/// `HostValue::Handle`, or convert it with `Interpreter::value_of`.
#[derive(Clone)]
pub struct Handle(Arc<Slot>);

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handle(#{} of interpreter {})", self.0.index, self.0.interp)
    }
}

impl PartialEq for Handle {
    /// The same slot (two handles made separately for one object differ; compare
    /// the objects in Lisp with EQ).
    fn eq(&self, other: &Handle) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The table of held values, in the arena's root.
#[derive(Collect)]
#[collect(no_drop)]
pub struct HeldValues<'gc> {
    slots: Vec<Value<'gc>>,
    #[collect(require_static)]
    id: u64,
    #[collect(require_static)]
    free: Vec<usize>,
    #[collect(require_static)]
    released: Released,
}

static NEXT_INTERPRETER: AtomicU64 = AtomicU64::new(1);

impl<'gc> HeldValues<'gc> {
    pub fn new() -> Self {
        HeldValues {
            slots: Vec::new(),
            id: NEXT_INTERPRETER.fetch_add(1, Ordering::Relaxed),
            free: Vec::new(),
            released: Arc::default(),
        }
    }

    /// Empty the slots whose handles were dropped, for reuse.
    pub fn sweep(&mut self) {
        let released = std::mem::take(&mut *lock(&self.released));
        for i in released {
            self.slots[i] = Value::Nil;
            self.free.push(i);
        }
    }

    /// Hold `v` for the host.
    pub fn hold(&mut self, v: Value<'gc>) -> Handle {
        self.sweep();
        let index = match self.free.pop() {
            Some(i) => {
                self.slots[i] = v;
                i
            }
            None => {
                self.slots.push(v);
                self.slots.len() - 1
            }
        };
        Handle(Arc::new(Slot { interp: self.id, index, released: self.released.clone() }))
    }

    /// The value `h` holds, or an error when it belongs to another interpreter.
    pub fn get(&self, h: &Handle) -> Result<Value<'gc>, String> {
        if h.0.interp != self.id {
            return Err(format!("{h:?} belongs to another interpreter"));
        }
        Ok(self.slots[h.0.index])
    }

    /// Slots in use (held by the host).
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len() - lock(&self.released).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_handles_free_their_slot_for_reuse_and_foreign_handles_are_refused() {
        let mut held = HeldValues::new();
        let a = held.hold(Value::Fixnum(1));
        let a2 = a.clone();
        let b = held.hold(Value::Fixnum(2));
        assert_eq!(held.len(), 2);
        drop(a);
        assert_eq!(held.len(), 2, "a clone still holds the slot");
        drop(a2);
        assert_eq!(held.len(), 1);
        let c = held.hold(Value::Fixnum(3));
        assert!(matches!(held.get(&c), Ok(Value::Fixnum(3))));
        assert!(matches!(held.get(&b), Ok(Value::Fixnum(2))));
        let other = HeldValues::new();
        assert!(other.get(&b).unwrap_err().contains("another interpreter"));
    }
}
