//! The VM's table of macro expansions for the compilations in progress: each
//! (call form, expansion) pair in the order made, and the index the compiler
//! looks expansions up in, by the call's heap address.
//!
//! Compilations nest (an expander may call `eval`), so the table is a stack:
//! a compilation remembers `len()` when it starts and `truncate`s back to it
//! when it ends. The index is kept alongside rather than rebuilt for each
//! compile pass, so a pass costs the size of the form, not of every expansion
//! made so far (rebuilding it made D nested macros cost D² / 2 lookups).
//!
//! Invariants: `index` maps the address of every call in `pairs` to its most
//! recent expansion; truncating restores what an entry shadowed; the pairs keep
//! their call forms alive, so no address is reused while it is a key.
//!
//! Tests: `tests` below; the compile benchmarks in bench/compile.

use gc_arena::Collect;
use mprof_heap::Value;

use super::Expansions;

#[derive(Collect, Default)]
#[collect(no_drop)]
pub struct ExpansionTable<'gc> {
    /// (call form, expansion), oldest first.
    pairs: Vec<(Value<'gc>, Value<'gc>)>,
    /// For each pair, the expansion its call had in `index` before it, if any.
    shadowed: Vec<Option<Value<'gc>>>,
    index: Expansions<'gc>,
}

impl<'gc> ExpansionTable<'gc> {
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Records `expansion` as what `call` expands to.
    pub fn push(&mut self, call: Value<'gc>, expansion: Value<'gc>) {
        let shadowed = call.heap_address().and_then(|a| self.index.insert(a, expansion));
        self.pairs.push((call, expansion));
        self.shadowed.push(shadowed);
    }

    /// Forgets every pair recorded after the first `mark`.
    pub fn truncate(&mut self, mark: usize) {
        while self.pairs.len() > mark {
            let (Some((call, _)), Some(shadowed)) = (self.pairs.pop(), self.shadowed.pop()) else {
                break;
            };
            if let Some(a) = call.heap_address() {
                match shadowed {
                    Some(older) => self.index.insert(a, older),
                    None => self.index.remove(&a),
                };
            }
        }
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// The expansions by call address, as the compiler reads them.
    pub fn index(&self) -> &Expansions<'gc> {
        &self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gc_arena::{Arena, Rootable};

    #[test]
    fn truncating_restores_what_an_entry_shadowed() {
        let arena = Arena::<Rootable![()]>::new(|_| ());
        arena.mutate(|mc, _| {
            let call = mprof_heap::alloc::list(mc, &[Value::Fixnum(1)]);
            let other = mprof_heap::alloc::list(mc, &[Value::Fixnum(2)]);
            let (a, b) = (call.heap_address().unwrap_or(0), other.heap_address().unwrap_or(0));
            let mut table = ExpansionTable::default();
            table.push(call, Value::Fixnum(10));
            let mark = table.len();
            table.push(other, Value::Fixnum(20));
            table.push(call, Value::Fixnum(11));
            assert!(matches!(table.index().get(&a), Some(Value::Fixnum(11))));
            table.truncate(mark);
            assert!(matches!(table.index().get(&a), Some(Value::Fixnum(10))));
            assert!(table.index().get(&b).is_none());
            table.clear();
            assert!(table.index().is_empty() && table.len() == 0);
        });
    }
}
