//! Arrays whose elements are not boxed values in a buffer of their own:
//! specialized arrays (bits packed one per element, unsigned bytes, fixnums
//! and doubles stored unboxed) and displaced arrays (whose elements are
//! another array's), plus element access on every kind of array. (A
//! displaced general array or string that gets storage of its own again
//! keeps its identity with a `Store::Values` of boxed elements.)
//!
//! Representation: a `SpecArray` has its dimensions (any rank), a `Store`,
//! an optional fill pointer (rank one only), whether it is adjustable, and
//! its upgraded element type. A displaced array's element type is its
//! target's, and its element `i` (row-major) is the target's element
//! `offset + i`. A displaced array of characters is a string.
//!
//! Invariants:
//! - a store holds exactly the array's total size (product of the
//!   dimensions) of elements; a displaced array's offset plus total size was
//!   within its target's total size when it was made (the target may shrink
//!   later: access past its end is then an error, never a panic);
//! - displacement chains are acyclic (`would_cycle` is checked before
//!   displacing) and followed iteratively;
//! - a `Bits` store keeps the bits past `len` in its last word zero.

use gc_arena::{Collect, Mutation, RefLock};

use crate::alloc;
use crate::value::{Ptr, Value};

/// The upgraded element type of an array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ElementType {
    T,
    Character,
    Bit,
    /// `(unsigned-byte 8)`.
    Byte8,
    Fixnum,
    Double,
}

impl ElementType {
    /// Whether `v` may be stored in an array of this element type.
    pub fn admits(self, v: Value<'_>) -> bool {
        match self {
            ElementType::T => true,
            ElementType::Character => matches!(v, Value::Char(_)),
            ElementType::Bit => matches!(v, Value::Fixnum(0 | 1)),
            ElementType::Byte8 => matches!(v, Value::Fixnum(0..=255)),
            // SBCL's 62-bit fixnums.
            ElementType::Fixnum => matches!(v, Value::Fixnum(i) if (-(1i64 << 62)..(1i64 << 62)).contains(&i)),
            ElementType::Double => matches!(v, Value::Float(_)),
        }
    }
}

/// A packed bit vector's storage: `len` bits, 64 per word, low bit first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bits {
    pub words: Vec<u64>,
    pub len: usize,
}

impl Bits {
    pub fn zeros(len: usize) -> Bits {
        Bits { words: vec![0; len.div_ceil(64)], len }
    }

    pub fn from_bools(bits: impl IntoIterator<Item = bool>) -> Bits {
        let mut b = Bits::default();
        for bit in bits {
            b.push(bit);
        }
        b
    }

    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    pub fn set(&mut self, i: usize, bit: bool) {
        let w = &mut self.words[i / 64];
        if bit {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        self.len += 1;
        self.set(self.len - 1, bit);
    }

    /// Grow (with `fill`) or shrink to `len` bits.
    pub fn resize(&mut self, len: usize, fill: bool) {
        if len < self.len {
            self.words.truncate(len.div_ceil(64));
            self.len = len;
            if !len.is_multiple_of(64)
                && let Some(last) = self.words.last_mut()
            {
                *last &= (1u64 << (len % 64)) - 1;
            }
        } else {
            self.words.reserve(len.div_ceil(64).saturating_sub(self.words.len()));
            while self.len < len {
                self.push(fill);
            }
        }
    }
}

/// Where a specialized or displaced array's elements live.
#[derive(Collect)]
#[collect(no_drop)]
pub enum Store<'gc> {
    Bits(#[collect(require_static)] Bits),
    Bytes(#[collect(require_static)] Vec<u8>),
    Fixnums(#[collect(require_static)] Vec<i64>),
    Doubles(#[collect(require_static)] Vec<f64>),
    /// Boxed elements of a general array or string that was displaced and
    /// has storage of its own again (`adjust-array`, `vector-push-extend`),
    /// keeping its identity; characters are `Value::Char`s.
    Values(Vec<Value<'gc>>),
    /// The elements are `target`'s, from row-major index `offset`.
    Displaced {
        target: Value<'gc>,
        #[collect(require_static)]
        offset: usize,
    },
}

impl Store<'_> {
    /// The bytes this store owns out of line (displaced arrays own none).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Store::Bits(b) => b.words.capacity() * 8,
            Store::Bytes(v) => v.capacity(),
            Store::Fixnums(v) => v.capacity() * 8,
            Store::Doubles(v) => v.capacity() * 8,
            Store::Values(v) => v.capacity() * std::mem::size_of::<Value>(),
            Store::Displaced { .. } => 0,
        }
    }

    /// A fresh store of `n` zero elements of type `elt` (None for T and
    /// CHARACTER, which are general vectors and strings).
    pub fn zeros<'a>(elt: ElementType, n: usize) -> Option<Store<'a>> {
        Some(match elt {
            ElementType::Bit => Store::Bits(Bits::zeros(n)),
            ElementType::Byte8 => Store::Bytes(vec![0; n]),
            ElementType::Fixnum => Store::Fixnums(vec![0; n]),
            ElementType::Double => Store::Doubles(vec![0.0; n]),
            ElementType::T | ElementType::Character => return None,
        })
    }
}

/// A specialized or displaced array.
#[derive(Collect)]
#[collect(no_drop)]
pub struct SpecArray<'gc> {
    #[collect(require_static)]
    pub dims: Vec<usize>,
    pub store: Store<'gc>,
    #[collect(require_static)]
    pub fill_pointer: Option<usize>,
    #[collect(require_static)]
    pub adjustable: bool,
    #[collect(require_static)]
    pub element_type: ElementType,
}

impl SpecArray<'_> {
    pub fn total_size(&self) -> usize {
        self.dims.iter().product()
    }

    /// The length a sequence function sees: the fill pointer, else the size.
    pub fn active_len(&self) -> usize {
        self.fill_pointer.unwrap_or_else(|| self.total_size())
    }

    pub fn is_displaced(&self) -> bool {
        matches!(self.store, Store::Displaced { .. })
    }

    /// Simple in SBCL's sense: not displaced, not adjustable, no fill pointer.
    pub fn is_simple(&self) -> bool {
        !self.is_displaced() && !self.adjustable && self.fill_pointer.is_none()
    }
}

/// One element read from an array: a value, or a double stored unboxed
/// (boxing it is the caller's choice, so reading never allocates here).
#[derive(Clone, Copy, Debug)]
pub enum Elem<'gc> {
    Value(Value<'gc>),
    Double(f64),
}

/// The longest displacement chain followed (chains are acyclic; this only
/// bounds the work of a pathological chain).
const MAX_CHAIN: usize = 1 << 20;

/// The row-major size of any array value (None for non-arrays).
pub fn total_size(v: Value<'_>) -> Option<usize> {
    Some(match v {
        Value::String(s) => s.borrow().chars.len(),
        Value::Vector(x) => x.borrow().items.len(),
        Value::Array(a) => a.borrow().items.len(),
        Value::SpecArray(a) => a.borrow().total_size(),
        _ => return None,
    })
}

/// The upgraded element type of any array value.
pub fn element_type(v: Value<'_>) -> Option<ElementType> {
    Some(match v {
        Value::String(_) => ElementType::Character,
        Value::Vector(_) | Value::Array(_) => ElementType::T,
        Value::SpecArray(a) => a.borrow().element_type,
        _ => return None,
    })
}

/// Element `i` (row-major) of any array, following displacement; None when
/// `i` is past the end of the array or of a displaced-to array.
pub fn get<'gc>(array: Value<'gc>, i: usize) -> Option<Elem<'gc>> {
    let (mut v, mut i) = (array, i);
    for _ in 0..MAX_CHAIN {
        match v {
            Value::String(s) => return s.borrow().chars.get(i).map(|&c| Elem::Value(Value::Char(c))),
            Value::Vector(x) => return x.borrow().items.get(i).map(|&e| Elem::Value(e)),
            Value::Array(a) => return a.borrow().items.get(i).map(|&e| Elem::Value(e)),
            Value::SpecArray(a) => {
                let a = a.borrow();
                if i >= a.total_size() {
                    return None;
                }
                return Some(match &a.store {
                    Store::Bits(b) => Elem::Value(Value::Fixnum(b.get(i) as i64)),
                    Store::Bytes(b) => Elem::Value(Value::Fixnum(b[i] as i64)),
                    Store::Fixnums(b) => Elem::Value(Value::Fixnum(b[i])),
                    Store::Doubles(b) => Elem::Double(b[i]),
                    Store::Values(b) => Elem::Value(b[i]),
                    Store::Displaced { target, offset } => {
                        (v, i) = (*target, offset + i);
                        continue;
                    }
                });
            }
            _ => return None,
        }
    }
    None
}

/// Store `e` as element `i` (row-major) of any array, following
/// displacement. The caller has checked the element type; false when `i` is
/// out of range (nothing is stored).
pub fn set<'gc>(mc: &Mutation<'gc>, array: Value<'gc>, i: usize, e: Elem<'gc>) -> bool {
    let (mut v, mut i) = (array, i);
    for _ in 0..MAX_CHAIN {
        match v {
            Value::String(s) => {
                let (Elem::Value(Value::Char(c)), true) = (e, i < s.borrow().chars.len()) else { return false };
                alloc::borrow_mut(mc, s).chars[i] = c;
                return true;
            }
            Value::Vector(x) => {
                if i >= x.borrow().items.len() {
                    return false;
                }
                let val = boxed(mc, e);
                alloc::borrow_mut(mc, x).items[i] = val;
                return true;
            }
            Value::Array(a) => {
                if i >= a.borrow().items.len() {
                    return false;
                }
                let val = boxed(mc, e);
                alloc::borrow_mut(mc, a).items[i] = val;
                return true;
            }
            Value::SpecArray(a) => {
                if let Store::Displaced { target, offset } = a.borrow().store {
                    if i >= a.borrow().total_size() {
                        return false;
                    }
                    (v, i) = (target, offset + i);
                    continue;
                }
                if i >= a.borrow().total_size() {
                    return false;
                }
                if matches!(a.borrow().store, Store::Values(_)) {
                    let val = boxed(mc, e);
                    if let Store::Values(b) = &mut alloc::borrow_mut(mc, a).store {
                        b[i] = val;
                    }
                    return true;
                }
                let mut a = alloc::borrow_mut(mc, a);
                let fix = match e {
                    Elem::Value(Value::Fixnum(n)) => Some(n),
                    _ => None,
                };
                match (&mut a.store, fix, e) {
                    (Store::Bits(b), Some(n), _) => b.set(i, n != 0),
                    (Store::Bytes(b), Some(n), _) => b[i] = n as u8,
                    (Store::Fixnums(b), Some(n), _) => b[i] = n,
                    (Store::Doubles(b), _, Elem::Double(x)) => b[i] = x,
                    (Store::Doubles(b), _, Elem::Value(Value::Float(x))) => b[i] = x.val,
                    _ => return false,
                }
                return true;
            }
            _ => return false,
        }
    }
    false
}

/// An element as a value, boxing a double.
pub fn boxed<'gc>(mc: &Mutation<'gc>, e: Elem<'gc>) -> Value<'gc> {
    match e {
        Elem::Value(v) => v,
        Elem::Double(x) => alloc::float(mc, x),
    }
}

/// The active characters of a displaced string (a rank-one array of
/// characters that is not a `Value::String`); None for anything else, or
/// when its target has shrunk below it.
pub fn displaced_string(v: Value<'_>) -> Option<Vec<char>> {
    let Value::SpecArray(a) = v else { return None };
    let n = {
        let a = a.borrow();
        if a.dims.len() != 1 || a.element_type != ElementType::Character {
            return None;
        }
        a.active_len()
    };
    (0..n)
        .map(|i| match get(v, i) {
            Some(Elem::Value(Value::Char(c))) => Some(c),
            _ => None,
        })
        .collect()
}

/// Whether `v` is a displaced string.
pub fn is_displaced_string(v: Value<'_>) -> bool {
    matches!(v, Value::SpecArray(a) if a.borrow().dims.len() == 1 && a.borrow().element_type == ElementType::Character)
}

/// Whether displacing `array` to `target` would make a displacement cycle.
pub fn would_cycle<'gc>(array: Value<'gc>, target: Value<'gc>) -> bool {
    let mut v = target;
    for _ in 0..MAX_CHAIN {
        if v.eq(array) {
            return true;
        }
        match v {
            Value::SpecArray(a) => match a.borrow().store {
                Store::Displaced { target, .. } => v = target,
                _ => return false,
            },
            _ => return false,
        }
    }
    true
}

/// The array's displacement: its target and offset, if displaced.
pub fn displacement<'gc>(p: Ptr<'gc, RefLock<SpecArray<'gc>>>) -> Option<(Value<'gc>, usize)> {
    match p.borrow().store {
        Store::Displaced { target, offset } => Some((target, offset)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_pack_push_and_resize_keep_the_tail_zero() {
        let mut b = Bits::from_bools([true, false, true]);
        assert_eq!((b.len, b.words.clone()), (3, vec![0b101]));
        b.resize(70, true);
        assert_eq!(b.words.len(), 2);
        assert!(b.get(69) && b.get(3) && !b.get(1));
        b.resize(2, false);
        assert_eq!((b.len, b.words.clone()), (2, vec![0b01]));
        let mut z = Bits::zeros(65);
        z.set(64, true);
        assert_eq!(z.words, vec![0, 1]);
    }

    #[test]
    fn element_types_admit_only_their_values() {
        assert!(ElementType::Bit.admits(Value::Fixnum(1)));
        assert!(!ElementType::Bit.admits(Value::Fixnum(2)));
        assert!(ElementType::Byte8.admits(Value::Fixnum(255)));
        assert!(!ElementType::Byte8.admits(Value::Fixnum(256)));
        assert!(!ElementType::Fixnum.admits(Value::Fixnum(1 << 62)));
        assert!(!ElementType::Character.admits(Value::Fixnum(0)));
    }

    #[test]
    fn displaced_arrays_read_and_write_their_target() {
        gc_arena::arena::rootless_mutate(|mc| {
            let base = alloc::spec_array(mc, vec![4], Store::Bits(Bits::zeros(4)), None, false, ElementType::Bit);
            let d = alloc::spec_array(
                mc,
                vec![2],
                Store::Displaced { target: base, offset: 2 },
                None,
                false,
                ElementType::Bit,
            );
            assert!(set(mc, d, 1, Elem::Value(Value::Fixnum(1))));
            assert!(matches!(get(base, 3), Some(Elem::Value(Value::Fixnum(1)))));
            assert!(get(d, 2).is_none());
            assert!(!set(mc, d, 2, Elem::Value(Value::Fixnum(1))));
            assert!(would_cycle(base, d));
            assert!(!would_cycle(d, base));
        });
    }
}
