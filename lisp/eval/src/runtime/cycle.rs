//! Telling a circular list from a long one while walking its cdrs, for the builtins
//! that walk a whole list (LENGTH, APPEND, REVERSE, LAST...): on a circular list they
//! would loop forever in Rust, where Ctrl-C cannot reach them, or grow memory until
//! the process aborts. They signal a type-error (not a proper list) instead.
//!
//! Brent's algorithm: the walk keeps one remembered cons and compares each cons it
//! reaches with it, moving the mark to the current cons at every power of two steps.
//! It costs a pointer comparison per step and no memory, and a cycle is found within
//! twice its length plus its distance from the head.

use mprof_heap::Value;

/// The state of one walk.
pub(crate) struct CycleCheck<'gc> {
    mark: Value<'gc>,
    steps: usize,
    limit: usize,
}

impl<'gc> CycleCheck<'gc> {
    /// A walk starting at `head`.
    pub(crate) fn new(head: Value<'gc>) -> Self {
        CycleCheck { mark: head, steps: 0, limit: 2 }
    }

    /// Call after moving to `cur`: true when the walk has come back to a cons it passed,
    /// so the list is circular.
    #[inline]
    pub(crate) fn looped(&mut self, cur: Value<'gc>) -> bool {
        if matches!(cur, Value::Cons(_)) && cur.eq(self.mark) {
            return true;
        }
        self.steps += 1;
        if self.steps == self.limit {
            self.mark = cur;
            self.steps = 0;
            self.limit = self.limit.saturating_mul(2);
        }
        false
    }
}
