//! The two representations of a cons's car and cdr ([`ConsField`]):
//! [`Word`], a [`Value`] packed into one 8-byte word (with the feature
//! `compact-conses`: a cons is then two words and gc-arena's header, 32 bytes),
//! and [`Wide`], the 16-byte `Value` itself (the default: 48-byte conses, read
//! and written without decoding, which bench/profile measured faster). Both
//! have the same three operations: `new`, `get` and the crate-private `set`.
//!
//! The encoding of a `Word` (bit 63 first):
//! - `1nnn…n`: a fixnum in 63 bits, `-2^62 <= n < 2^62` (SBCL's fixnum range);
//! - `0ttttttt pppp…p`: a 7-bit tag and a 56-bit payload: 0 NIL (so the word 0
//!   is NIL), 1 the unbound marker, 2 a fixnum outside 63 bits (payload: the
//!   address of a boxed `i64`), 3 a character (payload: its code), and from 4
//!   on one tag per heap variant of `Value` (payload: the object's address).
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
const TAG_WIDE_FIXNUM: u64 = 2;
const TAG_CHAR: u64 = 3;

/// Declares the heap variants' tags once, for both directions of the encoding.
macro_rules! heap_variants {
    ($($tag:literal => $variant:ident),* $(,)?) => {
        /// `v`'s tag and address if it is a heap object.
        #[inline(always)]
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
        #[inline(always)]
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

/// The representation of a cons's car and cdr in this build.
#[cfg(feature = "compact-conses")]
pub type ConsField<'gc> = Word<'gc>;
/// The representation of a cons's car and cdr in this build.
#[cfg(not(feature = "compact-conses"))]
pub type ConsField<'gc> = Wide<'gc>;

/// One `Value` as it is, 16 bytes.
pub struct Wide<'gc> {
    value: Cell<Value<'gc>>,
}

impl<'gc> Wide<'gc> {
    /// A field holding `v` (for a new object: no barrier is needed).
    #[inline(always)]
    pub fn new(_mc: &Mutation<'gc>, v: Value<'gc>) -> Self {
        Wide { value: Cell::new(v) }
    }

    /// The value held.
    #[inline(always)]
    pub fn get(&self) -> Value<'gc> {
        self.value.get()
    }

    /// Store `v`. The caller has passed the write barrier of the object this
    /// field belongs to (`Gc::write`).
    #[inline(always)]
    #[cfg_attr(feature = "compact-conses", allow(dead_code))]
    pub(crate) fn set(&self, _mc: &Mutation<'gc>, v: Value<'gc>) {
        self.value.set(v);
    }
}

// SAFETY: traces the value held, the only thing a `Wide` holds.
unsafe impl<'gc> Collect<'gc> for Wide<'gc> {
    #[inline]
    fn trace<T: Trace<'gc>>(&self, cc: &mut T) {
        self.value.get().trace(cc);
    }
}

/// One `Value` in 8 bytes. See the module invariants.
pub struct Word<'gc> {
    bits: Cell<u64>,
    _gc: PhantomData<Gc<'gc, ()>>,
}

#[inline]
fn with_tag(tag: u64, payload: usize) -> u64 {
    let payload = payload as u64;
    assert!(payload <= PAYLOAD_MASK, "a heap address above 2^56 cannot be packed");
    (tag << TAG_SHIFT) | payload
}

/// The word for `v`; a fixnum too wide for 63 bits is boxed first.
#[inline(always)]
fn encode<'gc>(mc: &Mutation<'gc>, v: Value<'gc>) -> u64 {
    match v {
        Value::Nil => TAG_NIL,
        Value::Fixnum(n) if (IMMEDIATE_MIN..IMMEDIATE_END).contains(&n) => (n as u64) | FIXNUM_BIT,
        Value::Fixnum(n) => boxed_fixnum(mc, n),
        Value::Char(c) => (TAG_CHAR << TAG_SHIFT) | c as u64,
        Value::Unbound => TAG_UNBOUND << TAG_SHIFT,
        _ => match heap_bits(v) {
            Some((tag, address)) => with_tag(tag, address),
            None => unreachable_tag(u64::MAX),
        },
    }
}

/// The word of a fixnum outside 63 bits: a pointer to a box holding it (rare,
/// so kept out of line of the common encodings).
#[cold]
#[inline(never)]
fn boxed_fixnum<'gc>(mc: &Mutation<'gc>, n: i64) -> u64 {
    let boxed: Ptr<'gc, i64> = alloc_object(mc, Category::Other, "fixnum", 0, n);
    with_tag(TAG_WIDE_FIXNUM, Gc::as_ptr(boxed) as usize)
}

/// The fixnum in the box at `address` (kept out of line: rare).
#[cold]
#[inline(never)]
fn unbox_fixnum<'gc>(address: u64) -> Value<'gc> {
    // SAFETY: the box is traced through the word holding its address, so it is alive.
    let boxed: Ptr<'gc, i64> = unsafe { Gc::from_ptr(address as usize as *const _) };
    Value::Fixnum(boxed.val)
}

impl<'gc> Word<'gc> {
    /// A word holding `v` (for a new object: no barrier is needed).
    #[inline]
    pub fn new(mc: &Mutation<'gc>, v: Value<'gc>) -> Self {
        Word { bits: Cell::new(encode(mc, v)), _gc: PhantomData }
    }

    /// The value held.
    #[inline(always)]
    pub fn get(&self) -> Value<'gc> {
        let bits = self.bits.get();
        if bits & FIXNUM_BIT != 0 {
            return Value::Fixnum(((bits << 1) as i64) >> 1);
        }
        let tag = bits >> TAG_SHIFT;
        let payload = bits & PAYLOAD_MASK;
        match tag {
            TAG_NIL => Value::Nil,
            TAG_UNBOUND => Value::Unbound,
            TAG_WIDE_FIXNUM => unbox_fixnum(payload),
            TAG_CHAR => Value::Char(char::from_u32(payload as u32).unwrap_or(char::REPLACEMENT_CHARACTER)),
            // SAFETY: the tag and address were written by `encode` from a live
            // value, which this word keeps alive by tracing it.
            _ => unsafe { heap_value(tag, payload as usize) },
        }
    }

    /// Store `v`. The caller has passed the write barrier of the object this
    /// word belongs to (`Gc::write`).
    #[inline]
    #[cfg_attr(not(feature = "compact-conses"), allow(dead_code))]
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
        if tag < TAG_WIDE_FIXNUM || tag == TAG_CHAR {
            return;
        }
        // SAFETY: a wide fixnum's tag and every tag above a character's carry
        // the address of a live `Gc` object.
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
