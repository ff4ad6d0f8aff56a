//! The two representations of a cons's car and cdr ([`ConsField`]):
//! [`Word`], a [`Value`] packed into one 8-byte word (the default: a cons is
//! then two words and gc-arena's header, 32 bytes), and [`Wide`], the 16-byte
//! `Value` itself (with the feature `wide-conses`: 48-byte conses, read and
//! written without decoding; kept to measure the compact layout against).
//! Both have the same three operations: `new`, `get` and the crate-private
//! `set`.
//!
//! The encoding of a `Word` (bit 63 first):
//! - `1nnn…n`: a fixnum in 63 bits, `-2^62 <= n < 2^62` (SBCL's fixnum range);
//! - `0ttttttt pppp…p`: a 7-bit tag and a 56-bit payload: 0 NIL (so the word 0
//!   is NIL), 1 the unbound marker, 2 a fixnum outside 63 bits (payload: the
//!   address of a boxed `i64`), 3 a character (payload: its code), and from 4
//!   on one tag per heap variant of `Value` (payload: the object's address).
//!
//! The tags are `Value`'s discriminants (it is `repr(u32)`; tag 2 is
//! `Fixnum`'s, whose immediate form needs no tag), so packing and unpacking
//! copy the tag and the payload between the word and the enum's defined layout
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

use crate::kind::Kind;
use crate::object::alloc_object;
use crate::value::{Ptr, Value};

const FIXNUM_BIT: u64 = 1 << 63;
const TAG_SHIFT: u32 = 56;
const PAYLOAD_MASK: u64 = (1 << TAG_SHIFT) - 1;
/// The smallest and one past the largest fixnum stored without a box.
const IMMEDIATE_MIN: i64 = -(1 << 62);
const IMMEDIATE_END: i64 = 1 << 62;

/// The discriminants of `Value` (`repr(u32)`, declaration order) the encoding
/// treats specially; every other one is a heap variant. Pinned by a test.
const TAG_NIL: u64 = 0;
const TAG_UNBOUND: u64 = 1;
const TAG_WIDE_FIXNUM: u64 = 2;
const TAG_CHAR: u64 = 3;
/// The last discriminant of `Value`.
const TAG_LAST: u64 = 22;

/// Offsets in a `Value` (`repr(u32)`: each variant is a `repr(C)` struct of the
/// `u32` tag and its field), pinned by a test: a character's code follows the
/// tag, any other payload is the second 8 bytes.
const CHAR_OFFSET: usize = 4;
const PAYLOAD_OFFSET: usize = 8;

/// The representation of a cons's car and cdr in this build.
#[cfg(not(feature = "wide-conses"))]
pub type ConsField<'gc> = Word<'gc>;
/// The representation of a cons's car and cdr in this build.
#[cfg(feature = "wide-conses")]
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
    #[cfg_attr(not(feature = "wide-conses"), allow(dead_code))]
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
    let at = &v as *const Value<'gc> as *const u8;
    // SAFETY: `Value` is `repr(u32)`: its first four bytes are the discriminant,
    // and each read below is of the field the discriminant says is there.
    unsafe {
        let tag = *(at as *const u32) as u64;
        match tag {
            TAG_WIDE_FIXNUM => {
                let n = *(at.add(PAYLOAD_OFFSET) as *const i64);
                if (IMMEDIATE_MIN..IMMEDIATE_END).contains(&n) { (n as u64) | FIXNUM_BIT } else { boxed_fixnum(mc, n) }
            }
            TAG_CHAR => (TAG_CHAR << TAG_SHIFT) | *(at.add(CHAR_OFFSET) as *const u32) as u64,
            TAG_NIL | TAG_UNBOUND => tag << TAG_SHIFT,
            _ => with_tag(tag, *(at.add(PAYLOAD_OFFSET) as *const usize)),
        }
    }
}

/// The `Value` whose two 8-byte halves are `first` and `second`. On x86-64 the
/// halves are joined in a vector register, so a value copied on (pushed on the
/// VM's stack) leaves as one 16-byte store: built in memory as two 8-byte
/// stores, it would be read back by a 16-byte load, which store forwarding
/// cannot serve (a stall that cost more than the decoding).
///
/// # Safety
/// The halves must be a valid `Value`'s bytes (see [`Word::get`]).
#[inline(always)]
unsafe fn value_from_halves<'gc>(first: u64, second: u64) -> Value<'gc> {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64; the caller vouches for the bytes.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_set_epi64x};
        std::mem::transmute::<__m128i, Value<'gc>>(_mm_set_epi64x(second as i64, first as i64))
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller vouches for the bytes.
    unsafe {
        std::mem::transmute::<[u64; 2], Value<'gc>>([first, second])
    }
}

/// The word of a fixnum outside 63 bits: a pointer to a box holding it (rare,
/// so kept out of line of the common encodings).
#[cold]
#[inline(never)]
fn boxed_fixnum<'gc>(mc: &Mutation<'gc>, n: i64) -> u64 {
    let boxed: Ptr<'gc, i64> = alloc_object(mc, Kind::BoxedFixnum, "fixnum", 0, n);
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
        let (first, second) = if bits & FIXNUM_BIT != 0 {
            (TAG_WIDE_FIXNUM, (((bits << 1) as i64) >> 1) as u64)
        } else {
            let tag = bits >> TAG_SHIFT;
            let payload = bits & PAYLOAD_MASK;
            if tag == TAG_WIDE_FIXNUM {
                return unbox_fixnum(payload);
            }
            debug_assert!(tag <= TAG_LAST);
            (tag | (payload << 32), payload)
        };
        // SAFETY: the first half holds a discriminant (a fixnum's, or the tag
        // `encode` took from a `Value`) and, at offset 4, a character's code; the
        // second the fixnum or the heap address (of an object this word keeps
        // alive by tracing it). Each variant reads its own field and finds the
        // rest in its padding.
        unsafe { value_from_halves(first, second) }
    }

    /// Store `v`. The caller has passed the write barrier of the object this
    /// word belongs to (`Gc::write`).
    #[inline]
    #[cfg_attr(feature = "wide-conses", allow(dead_code))]
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
        fn tag(v: &Value<'_>) -> u32 {
            // SAFETY: `Value` is `repr(u32)`: its first four bytes are the discriminant.
            unsafe { *(v as *const Value<'_> as *const u32) }
        }
        fn at<T: Copy>(v: &Value<'_>, offset: usize) -> T {
            // SAFETY: only called below at the offset of the variant's field.
            unsafe { *((v as *const Value<'_> as *const u8).add(offset) as *const T) }
        }
        assert_eq!(tag(&Value::Nil) as u64, TAG_NIL);
        assert_eq!(tag(&Value::Unbound) as u64, TAG_UNBOUND);
        assert_eq!(tag(&Value::Fixnum(0)) as u64, TAG_WIDE_FIXNUM);
        assert_eq!(tag(&Value::Char('a')) as u64, TAG_CHAR);
        assert_eq!(at::<i64>(&Value::Fixnum(0x1122_3344_5566_7788), PAYLOAD_OFFSET), 0x1122_3344_5566_7788);
        assert_eq!(at::<u32>(&Value::Char('\u{10FFFF}'), CHAR_OFFSET), 0x10FFFF);
        let arena = Arena::<Rootable![()]>::new(|_| ());
        arena.mutate(|mc, _| {
            let s = crate::alloc::string(mc, "x");
            let Value::String(p) = s else { unreachable!() };
            assert_eq!(tag(&s), 7);
            assert_eq!(at::<usize>(&s, PAYLOAD_OFFSET), Gc::as_ptr(p) as usize);
            let c = crate::alloc::cons(mc, s, Value::Nil);
            assert_eq!(tag(&c), 4);
            let f = crate::alloc::float(mc, 1.0);
            assert_eq!(tag(&f), 5);
            assert_eq!(tag(&crate::alloc::cell(mc, Value::Nil)), 21);
        });
    }

    #[test]
    fn a_word_keeps_what_it_holds_alive_through_a_collection() {
        let mut arena = Arena::<Rootable![[Word<'_>; 3]]>::new(|mc| {
            let list = crate::alloc::cons(mc, crate::alloc::string(mc, "kept"), Value::Nil);
            [Word::new(mc, list), Word::new(mc, Value::Fixnum(i64::MAX)), Word::new(mc, crate::alloc::float(mc, 2.5))]
        });
        // Garbage around the words, so the collection has something to sweep.
        arena.mutate(|mc, _| {
            for i in 0..1000 {
                crate::alloc::cons(mc, Value::Fixnum(i), Value::Nil);
            }
        });
        arena.finish_cycle();
        arena.finish_cycle();
        arena.mutate(|_, root| {
            let Value::Cons(c) = root[0].get() else { panic!("the list is gone") };
            let Value::String(s) = c.car.get() else { panic!("the string is gone") };
            assert_eq!(s.val.borrow().to_rust_string(), "kept");
            assert!(matches!(root[1].get(), Value::Fixnum(i64::MAX)));
            let Value::Float(f) = root[2].get() else { panic!("the float is gone") };
            assert_eq!(f.val, 2.5);
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
