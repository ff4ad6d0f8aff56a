//! [`Word`]: a [`Value`] packed into one 8-byte word, the representation of a
//! cons's car and cdr. A cons is two words and gc-arena's header: 32 bytes
//! where two 16-byte `Value`s made it 48 (the arithmetic is in ARCHITECTURE.md).
//!
//! The encoding (bit 63 first):
//! - `1nnn…n`: a fixnum in 63 bits, `-2^62 <= n < 2^62` (SBCL's fixnum range);
//! - `0ttttttt pppp…p`: a 7-bit tag and a 56-bit payload. The tag is the
//!   variant's discriminant in `Value` (which is `repr(u8)`): 0 NIL (so the
//!   word 0 is NIL), 1 the unbound marker, 3 a character (payload: its code),
//!   4 and up the heap variants (payload: the object's address); tag 2, the
//!   discriminant of `Fixnum`, marks a fixnum outside 63 bits (payload: the
//!   address of a boxed `i64`).
//!
//! Because tags are discriminants, packing and unpacking copy the tag byte and
//! the payload between the word and the enum's defined layout (`repr(u8)`: the
//! tag byte at offset 0, a character's code at 4, any other payload at 8)
//! instead of matching on twenty variants.
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

/// The discriminants of `Value` the encoding treats specially (pinned by a test).
const TAG_UNBOUND: u64 = 1;
const TAG_WIDE_FIXNUM: u64 = 2;
const TAG_CHAR: u64 = 3;
/// The last discriminant of `Value`.
const TAG_LAST: u64 = 22;

/// Offsets in a `Value` (`repr(u8)`: each variant is a `repr(C)` struct of the
/// tag byte and its field), pinned by a test.
const CHAR_OFFSET: usize = 4;
const PAYLOAD_OFFSET: usize = 8;

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
    let at = &v as *const Value<'gc> as *const u8;
    // SAFETY: `Value` is `repr(u8)`, so its first byte is the discriminant, and
    // each read below is of the field the discriminant says is there.
    unsafe {
        let tag = *at as u64;
        match tag {
            TAG_WIDE_FIXNUM => {
                let n = *(at.add(PAYLOAD_OFFSET) as *const i64);
                if (IMMEDIATE_MIN..IMMEDIATE_END).contains(&n) {
                    (n as u64) | FIXNUM_BIT
                } else {
                    boxed_fixnum(mc, n)
                }
            }
            TAG_CHAR => (tag << TAG_SHIFT) | *(at.add(CHAR_OFFSET) as *const u32) as u64,
            0 | TAG_UNBOUND => tag << TAG_SHIFT,
            _ => with_tag(tag, *(at.add(PAYLOAD_OFFSET) as *const usize)),
        }
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
        if tag == TAG_WIDE_FIXNUM {
            return unbox_fixnum(payload);
        }
        debug_assert!(tag <= TAG_LAST);
        // SAFETY: `encode` wrote this tag and payload from a `Value` of that
        // discriminant (a heap value this word keeps alive by tracing it). The
        // first word holds the tag byte and, at offset 4, a character's code;
        // the second any other payload. Each variant reads its own field and
        // finds the rest in its padding.
        unsafe { std::mem::transmute::<[u64; 2], Value<'gc>>([tag | (payload << 32), payload]) }
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
    fn the_encoding_matches_values_layout() {
        fn tag(v: Value<'_>) -> u8 {
            // SAFETY: `Value` is `repr(u8)`: its first byte is the discriminant.
            unsafe { *(&v as *const Value<'_> as *const u8) }
        }
        assert_eq!(tag(Value::Nil), 0);
        assert_eq!(tag(Value::Unbound) as u64, TAG_UNBOUND);
        assert_eq!(tag(Value::Fixnum(0)) as u64, TAG_WIDE_FIXNUM);
        assert_eq!(tag(Value::Char('a')) as u64, TAG_CHAR);
        let n = Value::Fixnum(0x1122_3344_5566_7788);
        // SAFETY: reads of initialized fields at the offsets under test.
        unsafe {
            assert_eq!(*((&n as *const Value<'_> as *const u8).add(PAYLOAD_OFFSET) as *const i64), 0x1122_3344_5566_7788);
            let c = Value::Char('\u{10FFFF}');
            assert_eq!(*((&c as *const Value<'_> as *const u8).add(CHAR_OFFSET) as *const u32), 0x10FFFF);
        }
        let arena = Arena::<Rootable![()]>::new(|_| ());
        arena.mutate(|mc, _| {
            let s = crate::alloc::string(mc, "x");
            let Value::String(p) = s else { unreachable!() };
            assert_eq!(tag(s), 7);
            // SAFETY: a heap variant's pointer is its field at PAYLOAD_OFFSET.
            let at = unsafe { *((&s as *const Value<'_> as *const u8).add(PAYLOAD_OFFSET) as *const usize) };
            assert_eq!(at, Gc::as_ptr(p) as usize);
        });
    }

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
