//! An append-only array whose elements never move, for lock-free readers.
//!
//! Segment `k` holds `BASE << k` elements and is mapped (zero-filled) the first
//! time an index inside it is needed; a segment pointer, once published, never
//! changes. So `&T` handed out stays valid for the life of the process, readers
//! need no lock, and growth copies nothing. Invariant: `T` must be valid when
//! all its bytes are zero (atomics, integers), since segments start zeroed.

use crate::real::{map_zeroed, unmap};
use core::sync::atomic::{AtomicPtr, Ordering};

const BASE_SHIFT: u32 = 10;
const SEGMENTS: usize = 22;

/// See the module comment. `T` must be all-zero-valid (see [`SegVec::new`]).
pub struct SegVec<T> {
    segments: [AtomicPtr<T>; SEGMENTS],
}

// SAFETY: elements are only reachable as &T; T's own Sync governs sharing.
unsafe impl<T: Sync> Sync for SegVec<T> {}
unsafe impl<T: Send> Send for SegVec<T> {}

fn locate(index: u32) -> (usize, usize) {
    let j = (index as u64 >> BASE_SHIFT) + 1;
    let k = 63 - j.leading_zeros() as usize;
    let start = ((1u64 << k) - 1) << BASE_SHIFT;
    (k, (index as u64 - start) as usize)
}

fn segment_len(k: usize) -> usize {
    (1usize << BASE_SHIFT) << k
}

impl<T> SegVec<T> {
    /// # Safety
    /// `T` must be valid when zero-filled.
    pub const unsafe fn new() -> Self {
        SegVec {
            segments: [const { AtomicPtr::new(core::ptr::null_mut()) }; SEGMENTS],
        }
    }

    /// The element at `index` if its segment exists (then it is at least zeroed).
    #[inline]
    pub fn get(&self, index: u32) -> Option<&T> {
        let (k, off) = locate(index);
        let seg = self.segments.get(k)?.load(Ordering::Acquire);
        if seg.is_null() {
            None
        } else {
            // SAFETY: off < segment_len(k) by construction of locate; segment is zero-valid T.
            Some(unsafe { &*seg.add(off) })
        }
    }

    /// The element at `index`, mapping its segment if needed. None when the
    /// index is beyond the last segment or the kernel refuses memory.
    #[inline]
    pub fn ensure(&self, index: u32) -> Option<&T> {
        if let Some(e) = self.get(index) {
            return Some(e);
        }
        self.ensure_slow(index)
    }

    #[cold]
    fn ensure_slow(&self, index: u32) -> Option<&T> {
        let (k, off) = locate(index);
        let slot = self.segments.get(k)?;
        let bytes = segment_len(k) * core::mem::size_of::<T>();
        let fresh = map_zeroed(bytes) as *mut T;
        if fresh.is_null() {
            return None;
        }
        let seg = match slot.compare_exchange(
            core::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => fresh,
            Err(existing) => {
                unmap(fresh as *mut u8, bytes);
                existing
            }
        };
        // SAFETY: as in get.
        Some(unsafe { &*seg.add(off) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::AtomicU64;

    #[test]
    fn locate_is_dense_and_in_bounds() {
        let mut expected = (0usize, 0usize);
        for i in 0..100_000u32 {
            let (k, off) = locate(i);
            assert_eq!((k, off), expected, "index {i}");
            assert!(off < segment_len(k));
            expected = if off + 1 == segment_len(k) {
                (k + 1, 0)
            } else {
                (k, off + 1)
            };
        }
    }

    #[test]
    fn elements_keep_their_values_and_addresses() {
        let v: SegVec<AtomicU64> = unsafe { SegVec::new() };
        assert!(v.get(5000).is_none());
        let first = v.ensure(3).unwrap() as *const _;
        for i in 0..5000u32 {
            v.ensure(i).unwrap().store(i as u64 * 3, Ordering::Relaxed);
        }
        assert_eq!(first, v.get(3).unwrap() as *const _);
        for i in 0..5000u32 {
            assert_eq!(v.get(i).unwrap().load(Ordering::Relaxed), i as u64 * 3);
        }
    }
}
