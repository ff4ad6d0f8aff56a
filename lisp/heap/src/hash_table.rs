//! The hash table object: entries stored inline in one vector, found through
//! an index of positions keyed by the hash the evaluator computes under the
//! table's test.
//!
//! The heap knows nothing of `eql`, `equal` or `equalp`: every lookup takes
//! the key's hash and a comparison closure from the caller.
//!
//! Invariants:
//! - `entries` holds every entry once, in insertion order except that removing
//!   an entry moves the last one into its place (O(1); CL leaves the order
//!   unspecified after a removal).
//! - `index` holds exactly the positions `0..entries.len()`, each under its
//!   entry's hash.
//! - Two buffers and nothing else are owned out of line, so
//!   [`HashTable::owned_bytes`] is the table's real out-of-line size and
//!   costs O(1): one entry is one slot of `entries` (hash, key, value) and one
//!   4-byte position plus a control byte of `index`. There is no allocation
//!   per entry or per bucket.

use gc_arena::Collect;

use crate::value::{HashTest, Value};

/// One entry: the key's hash under the table's test, the key, the value.
#[derive(Clone, Copy, Collect)]
#[collect(no_drop)]
pub struct HashEntry<'gc> {
    #[collect(require_static)]
    pub hash: u64,
    pub key: Value<'gc>,
    pub value: Value<'gc>,
}

/// A hash table under one of the four tests.
#[derive(Collect)]
#[collect(no_drop)]
pub struct HashTable<'gc> {
    #[collect(require_static)]
    pub test: HashTest,
    entries: Vec<HashEntry<'gc>>,
    /// Positions in `entries`. Holds no `Gc` pointer.
    #[collect(require_static)]
    index: hashbrown::HashTable<u32>,
}

/// Bytes hashbrown allocates for a table of `slot`-byte items able to hold
/// `capacity` of them: one slot and one control byte per bucket plus a group of
/// trailing control bytes (hashbrown's bucket count is 8/7 of the capacity, a
/// power of two). IndexMap's index is such a table of `usize`.
pub fn index_bytes(capacity: usize, slot: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 { capacity + 1 } else { capacity / 7 * 8 };
    const GROUP_WIDTH: usize = 16;
    buckets * (slot + 1) + GROUP_WIDTH
}

impl<'gc> HashTable<'gc> {
    /// An empty table.
    pub fn new(test: HashTest) -> HashTable<'gc> {
        HashTable { test, entries: Vec::new(), index: hashbrown::HashTable::new() }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many entries fit before the table must grow.
    pub fn capacity(&self) -> usize {
        self.entries.capacity().min(self.index.capacity())
    }

    /// The entries, in iteration order.
    pub fn entries(&self) -> &[HashEntry<'gc>] {
        &self.entries
    }

    /// Room for `additional` more entries (a size hint).
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
        let entries = &self.entries;
        self.index.reserve(additional, |&i| entries[i as usize].hash);
    }

    /// The position of the entry whose key has this hash and satisfies `same`;
    /// `None` from `same` (a comparison that could not be made) ends the search
    /// with `None`.
    pub fn position_with(
        &self,
        hash: u64,
        mut same: impl FnMut(Value<'gc>) -> Option<bool>,
    ) -> Option<Option<usize>> {
        for &i in self.index.iter_hash(hash) {
            let e = &self.entries[i as usize];
            if e.hash == hash && same(e.key)? {
                return Some(Some(i as usize));
            }
        }
        Some(None)
    }

    /// The position of the entry whose key has this hash and satisfies `same`.
    pub fn position(&self, hash: u64, mut same: impl FnMut(Value<'gc>) -> bool) -> Option<usize> {
        self.position_with(hash, |k| Some(same(k))).flatten()
    }

    /// The value stored under the key found by `hash` and `same`.
    pub fn get(&self, hash: u64, same: impl FnMut(Value<'gc>) -> bool) -> Option<Value<'gc>> {
        self.position(hash, same).map(|i| self.entries[i].value)
    }

    /// Store `value` under `key`: replace the value of the entry found by
    /// `hash` and `same`, or add an entry. Returns whether an entry was added.
    pub fn insert(
        &mut self,
        hash: u64,
        key: Value<'gc>,
        value: Value<'gc>,
        same: impl FnMut(Value<'gc>) -> bool,
    ) -> bool {
        if let Some(i) = self.position(hash, same) {
            self.entries[i].value = value;
            return false;
        }
        // More than u32::MAX entries would need 200 GB; refuse rather than corrupt the index.
        let Ok(i) = u32::try_from(self.entries.len()) else { return false };
        self.entries.push(HashEntry { hash, key, value });
        let entries = &self.entries;
        self.index.insert_unique(hash, i, |&j| entries[j as usize].hash);
        true
    }

    /// Remove the entry found by `hash` and `same`; returns whether there was one.
    pub fn remove(&mut self, hash: u64, same: impl FnMut(Value<'gc>) -> bool) -> bool {
        let Some(i) = self.position(hash, same) else { return false };
        let last = self.entries.len() - 1;
        if let Ok(slot) = self.index.find_entry(hash, |&j| j as usize == i) {
            slot.remove();
        }
        self.entries.swap_remove(i);
        if i != last {
            let moved_hash = self.entries[i].hash;
            if let Some(slot) = self.index.find_mut(moved_hash, |&j| j as usize == last) {
                *slot = i as u32;
            }
        }
        true
    }

    /// Remove every entry, keeping the buffers.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.index.clear();
    }

    /// The bytes the table owns out of line (its two buffers).
    pub fn owned_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<HashEntry<'gc>>() + index_bytes(self.index.capacity(), std::mem::size_of::<u32>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(n: i64) -> Value<'static> {
        Value::Fixnum(n)
    }

    /// A deliberately bad hash, so that every key collides with others.
    fn h(n: i64) -> u64 {
        (n % 3) as u64
    }

    #[test]
    fn insert_get_replace_remove_with_colliding_hashes() {
        let mut t = HashTable::new(HashTest::Eql);
        for n in 0..100 {
            assert!(t.insert(h(n), fix(n), fix(n * 10), |k| k.eq(fix(n))));
        }
        assert!(!t.insert(h(7), fix(7), fix(-7), |k| k.eq(fix(7))));
        assert_eq!(t.len(), 100);
        assert!(t.get(h(7), |k| k.eq(fix(7))).is_some_and(|v| v.eq(fix(-7))));
        for n in (0..100).step_by(2) {
            assert!(t.remove(h(n), |k| k.eq(fix(n))));
        }
        assert!(!t.remove(h(4), |k| k.eq(fix(4))));
        assert_eq!(t.len(), 50);
        for n in 0..100 {
            let got = t.get(h(n), |k| k.eq(fix(n)));
            assert_eq!(got.is_some(), n % 2 == 1, "key {n}");
        }
        // The index still names every position exactly once.
        let mut seen: Vec<i64> =
            t.entries().iter().map(|e| if let Value::Fixnum(k) = e.key { k } else { -1 }).collect();
        seen.sort();
        assert_eq!(seen, (0..100).filter(|n| n % 2 == 1).collect::<Vec<_>>());
    }

    #[test]
    fn owned_bytes_follow_the_buffers_and_no_entry_allocates_alone() {
        let mut t = HashTable::new(HashTest::Eq);
        assert_eq!(t.owned_bytes(), 0);
        for n in 0..1000 {
            t.insert(n as u64, fix(n), fix(n), |k| k.eq(fix(n)));
        }
        let entry = std::mem::size_of::<HashEntry>();
        assert!(t.owned_bytes() >= 1000 * (entry + 5));
        // Growth by doubling: never more than twice what 1000 entries need, plus slack.
        assert!(t.owned_bytes() <= 2 * 1000 * (entry + 10), "{}", t.owned_bytes());
        t.clear();
        assert!(t.owned_bytes() > 0, "clear keeps the buffers");
    }
}
