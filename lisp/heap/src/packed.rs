//! [`Word`]: a [`Value`] packed into one 8-byte word, the representation of a
//! cons's car and cdr. A cons is two words and gc-arena's header: 32 bytes
//! where two 16-byte `Value`s made it 48 (the arithmetic is in ARCHITECTURE.md).
//!
//! The encoding (bit 63 first):
//! - `1nnn…n`: a fixnum in 63 bits, `-2^62 <= n < 2^62` (SBCL's fixnum range);
//! - `0ttttttt pppp…p`: a 7-bit tag and a 56-bit payload: 0 NIL (so the word 0
//!   is NIL), 1 the unbound marker, 2 a character (its code), 3 a fixnum
//!   outside 63 bits (a pointer to a boxed `i64`), and from 4 on one tag per
//!   heap variant of `Value` with the object's address as payload.
//!
//! Invariants:
//! - `Word::get` returns exactly the `Value` last stored: a fixnum too wide for
//!   63 bits is boxed when stored (made by `alloc_object`, so the profile sees
//!   the box as an allocation of type `fixnum`) and unboxed when read, so Lisp
//!   code never sees the box.
//! - A heap address fits the 56-bit payload: user-space addresses are below
//!   2^47 on x86-64 and aarch64 (2^56 with 5-level paging), checked when
//!   stored.
//! - A `Word` holds a `Gc` pointer only as its payload; `Collect::trace`
//!   decodes it and traces that pointer. Storing into a `Word` of a live object
//!   must follow `Gc::write` on the object (the write barrier), which is why
//!   `Word::set` is crate-private and called only by `alloc::set_car`/`set_cdr`.

use std::cell::Cell;
use std::marker::PhantomData;

use gc_arena::collect::Trace;
use gc_arena::{Collect, Gc, Mutation};

use crate::object::{Category, alloc_object};
use crate::value::{Ptr, Value};

const FIXNUM_BIT: u64 = 1 << 63;
const TAG_SHIFT: u32 = 56;
const PAYLOAD_MASK: u64 = (1 << TAG_SHIFT) - 1;
/// The smallest and one past the largest fixnum stored without a box.
const IMMEDIATE_MIN: i64 = -(1 << 62);
const IMMEDIATE_END: i64 = 1 << 62;

const TAG_NIL: u64 = 0;
const TAG_UNBOUND: u64 = 1;
const TAG_CHAR: u64 = 2;
const TAG_WIDE_FIXNUM: u64 = 3;

/// One `Value` in 8 bytes. See the module invariants.
pub struct Word<'gc> {
    bits: Cell<u64>,
    _gc: PhantomData<Gc<'gc, ()>>,
}

/// Declares the heap variants' tags once, for both directions of the encoding.
macro_rules! heap_variants {
    ($($tag:literal => $variant:ident),* $(,)?) => {
        /// `v`'s tag and address if it is a heap object.
        #[inline]
        fn heap_bits(v: Value<'_>) -> Option<(u64, usize)> {
            match v {
                $(Value::$variant(p) => Some(($tag, Gc::as_ptr(p) as *const () as usize)),)*
                _ => None,
            }
        }

        /// The heap value of tag `tag` at `address`.
        ///
        /// # Safety
        /// `tag` and `address` come from `heap_bits` of a value that is still
        /// alive (the `Word` holding it is traced).
        #[inline]
        unsafe fn heap_value<'gc>(tag: u64, address: usize) -> Value<'gc> {
            // SAFETY: per the function's contract the address is a live object of
            // the variant the tag names.
            unsafe {
                match tag {
                    $($tag => Value::$variant(Gc::from_ptr(address as *const _)),)*
                    _ => unreachable_tag(tag),
                }
            }
        }
    };
}

heap_variants! {
    4 => Cons, 5 => Float, 6 => Symbol, 7 => String, 8 => Vector, 9 => Array,
    10 => SpecArray, 11 => Complex, 12 => BigInt, 13 => Ratio, 14 => Function,
    15 => Struct, 16 => HashTable, 17 => Package, 18 => Stream, 19 => RandomState,
    20 => StructType, 21 => Cell, 22 => Proto,
}

#[cold]
fn unreachable_tag(tag: u64) -> ! {
    // Only `encode` writes words, and it writes only the tags above.
    unreachable!("a packed value word with tag {tag}")
}

#[inline]
fn with_tag(tag: u64, payload: usize) -> u64 {
    let payload = payload as u64;
    assert!(payload <= PAYLOAD_MASK, "a heap address above 2^56 cannot be packed");
    (tag << TAG_SHIFT) | payload
}

/// The word for `v`; a fixnum too wide for 63 bits is boxed first.
#[inline]
fn encode<'gc>(mc: &Mutation<'gc>, v: Value<'gc>) -> u64 {
    match v {
        Value::Nil => TAG_NIL,
        Value::Fixnum(n) if (IMMEDIATE_MIN..IMMEDIATE_END).contains(&n) => (n as u64) | FIXNUM_BIT,
        Value::Fixnum(n) => {
            let boxed: Ptr<'gc, i64> = alloc_object(mc, Category::Other, "fixnum", 0, n);
            with_tag(TAG_WIDE_FIXNUM, Gc::as_ptr(boxed) as usize)
        }
        Value::Char(c) => with_tag(TAG_CHAR, c as usize),
        Value::Unbound => with_tag(TAG_UNBOUND, 0),
        _ => match heap_bits(v) {
            Some((tag, address)) => with_tag(tag, address),
            None => unreachable!("every other variant is a heap variant"),
        },
    }
}

impl<'gc> Word<'gc> {
    /// A word holding `v` (for a new object: no barrier is needed).
    #[inline]
    pub fn new(mc: &Mutation<'gc>, v: Value<'gc>) -> Self {
        Word { bits: Cell::new(encode(mc, v)), _gc: PhantomData }
    }

    /// The value held.
    #[inline]
    pub fn get(&self) -> Value<'gc> {
        let bits = self.bits.get();
        if bits & FIXNUM_BIT != 0 {
            return Value::Fixnum(((bits << 1) as i64) >> 1);
        }
        let tag = bits >> TAG_SHIFT;
        let payload = (bits & PAYLOAD_MASK) as usize;
        match tag {
            TAG_NIL => Value::Nil,
            TAG_UNBOUND => Value::Unbound,
            // SAFETY-free: only `encode` wrote this payload, from a `char`.
            TAG_CHAR => Value::Char(char::from_u32(payload as u32).unwrap_or('\u{FFFD}')),
            TAG_WIDE_FIXNUM => {
                // SAFETY: the box is traced through this word, so it is alive.
                let boxed: Ptr<'gc, i64> = unsafe { Gc::from_ptr(payload as *const _) };
                Value::Fixnum(boxed.val)
            }
            // SAFETY: the tag and address were written by `encode` from a live
            // value, which this word keeps alive by tracing it.
            _ => unsafe { heap_value(tag, payload) },
        }
    }

    /// Store `v`. The caller has passed the write barrier of the object this
    /// word belongs to (`Gc::write`).
    #[inline]
    pub(crate) fn set(&self, mc: &Mutation<'gc>, v: Value<'gc>) {
        self.bits.set(encode(mc, v));
    }
}

// SAFETY: `trace` traces the one `Gc` pointer a word can hold (a heap value or
// a wide fixnum's box), decoded exactly as `get` decodes it.
unsafe impl<'gc> Collect<'gc> for Word<'gc> {
    #[inline]
    fn trace<T: Trace<'gc>>(&self, cc: &mut T) {
        let bits = self.bits.get();
        if bits & FIXNUM_BIT != 0 {
            return;
        }
        let tag = bits >> TAG_SHIFT;
        if tag < TAG_WIDE_FIXNUM {
            return;
        }
        // SAFETY: a tag of 3 or more carries the address of a live `Gc` object.
        let gc: Gc<'gc, ()> = unsafe { Gc::from_ptr((bits & PAYLOAD_MASK) as usize as *const ()) };
        cc.trace_gc(gc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gc_arena::{Arena, Rootable};

    #[test]
    fn a_word_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<Word<'static>>(), 8);
    }

    #[test]
    fn every_immediate_round_trips() {
        let arena = Arena::<Rootable![()]>::new(|_| ());
        arena.mutate(|mc, _| {
            let cases = [
                Value::Nil,
                Value::Unbound,
                Value::Fixnum(0),
                Value::Fixnum(-1),
                Value::Fixnum(IMMEDIATE_MIN),
                Value::Fixnum(IMMEDIATE_END - 1),
                Value::Fixnum(IMMEDIATE_END),
                Value::Fixnum(IMMEDIATE_MIN - 1),
                Value::Fixnum(i64::MAX),
                Value::Fixnum(i64::MIN),
                Value::Char('a'),
                Value::Char('\u{10FFFF}'),
            ];
            for v in cases {
                let back = Word::new(mc, v).get();
                let same = match (v, back) {
                    (Value::Fixnum(a), Value::Fixnum(b)) => a == b,
                    (Value::Char(a), Value::Char(b)) => a == b,
                    (Value::Nil, Value::Nil) | (Value::Unbound, Value::Unbound) => true,
                    _ => false,
                };
                assert!(same, "{v:?} came back as {back:?}");
            }
        });
    }

    #[test]
    fn only_wide_fixnums_are_boxed() {
        let arena = Arena::<Rootable![()]>::new(|_| ());
        arena.mutate(|mc, _| {
            assert!(Word::new(mc, Value::Fixnum(IMMEDIATE_END - 1)).bits.get() & FIXNUM_BIT != 0);
            let wide = Word::new(mc, Value::Fixnum(IMMEDIATE_END));
            assert_eq!(wide.bits.get() >> TAG_SHIFT, TAG_WIDE_FIXNUM);
        });
    }

    #[test]
    fn heap_values_keep_their_identity() {
        let arena = Arena::<Rootable![()]>::new(|_| ());
        arena.mutate(|mc, _| {
            let s = crate::alloc::string(mc, "x");
            let c = crate::alloc::cons(mc, s, Value::Nil);
            let f = crate::alloc::float(mc, 1.5);
            for v in [s, c, f] {
                let w = Word::new(mc, v);
                assert!(w.get().eq(v));
            }
        });
    }
}
