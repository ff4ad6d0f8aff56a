//! The VM's table of macro expansions for the compilations in progress: each
//! (call form, expander, expansion) in the order made, and the index the
//! compiler looks expansions up in, by the call's and the expander's heap
//! addresses (one form placed by a macro inside two MACROLETs that define its
//! head differently has two expansions).
//!
//! Compilations nest (an expander may call `eval`), so the table is a stack:
//! a compilation remembers `len()` when it starts and `truncate`s back to it
//! when it ends. The index is kept alongside rather than rebuilt for each
//! compile pass, so a pass costs the size of the form, not of every expansion
//! made so far (rebuilding it made D nested macros cost D² / 2 lookups).
//!
//! Invariants: `index` maps the key of every entry to its most recent
//! expansion; truncating restores what an entry shadowed; the entries keep
//! their call forms and expanders alive, so no address is reused while it is a
//! key.
//!
//! Tests: `tests` below; the compile benchmarks in bench/compile.

use gc_arena::Collect;
use mprof_heap::Value;

use super::Expansions;

#[derive(Collect, Default)]
#[collect(no_drop)]
pub struct ExpansionTable<'gc> {
    /// (call form, expander, expansion), oldest first.
    pairs: Vec<(Value<'gc>, Value<'gc>, Value<'gc>)>,
    /// For each pair, the expansion its call had in `index` before it, if any.
    shadowed: Vec<Option<Value<'gc>>>,
    index: Expansions<'gc>,
}

impl<'gc> ExpansionTable<'gc> {
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Records `expansion` as what `call` expands to under `expander` (NIL for
    /// the expander of a MACROLET definition, keyed by the definition alone).
    pub fn push(&mut self, call: Value<'gc>, expander: Value<'gc>, expansion: Value<'gc>) {
        let shadowed = key(call, expander).and_then(|k| self.index.insert(k, expansion));
        self.pairs.push((call, expander, expansion));
        self.shadowed.push(shadowed);
    }

    /// Forgets every pair recorded after the first `mark`.
    pub fn truncate(&mut self, mark: usize) {
        while self.pairs.len() > mark {
            let (Some((call, expander, _)), Some(shadowed)) = (self.pairs.pop(), self.shadowed.pop()) else {
                break;
            };
            if let Some(k) = key(call, expander) {
                match shadowed {
                    Some(older) => self.index.insert(k, older),
                    None => self.index.remove(&k),
                };
            }
        }
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// The expansions by (call, expander) address, as the compiler reads them.
    pub fn index(&self) -> &Expansions<'gc> {
        &self.index
    }
}

/// The index key of `call` expanded by `expander`.
pub fn key(call: Value<'_>, expander: Value<'_>) -> Option<(usize, usize)> {
    Some((call.heap_address()?, expander.heap_address().unwrap_or(0)))
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
            let (a, b) = ((a, 0), (b, 0));
            let mut table = ExpansionTable::default();
            table.push(call, Value::Nil, Value::Fixnum(10));
            let mark = table.len();
            table.push(other, Value::Nil, Value::Fixnum(20));
            table.push(call, Value::Nil, Value::Fixnum(11));
            // The same call under another expander is another entry.
            let expander = mprof_heap::alloc::list(mc, &[Value::Fixnum(3)]);
            table.push(call, expander, Value::Fixnum(12));
            assert!(matches!(table.index().get(&key(call, expander).unwrap_or_default()), Some(Value::Fixnum(12))));
            assert!(matches!(table.index().get(&a), Some(Value::Fixnum(11))));
            table.truncate(mark);
            assert!(matches!(table.index().get(&a), Some(Value::Fixnum(10))));
            assert!(table.index().get(&b).is_none());
            table.clear();
            assert!(table.index().is_empty() && table.len() == 0);
        });
    }
}
