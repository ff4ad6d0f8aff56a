//! Which blocks are ours and alive, and what each one was charged to.
//!
//! Every block the hooks hand out carries a 16-byte header just before the
//! user pointer: the requested size, the calling-context node, the epoch it
//! was allocated in, and the log2 of the offset from glibc's block to the user
//! pointer (16 for ordinary blocks, the alignment for aligned ones, so the
//! user pointer keeps the alignment asked for). That is the whole per-block
//! cost of attribution: 16 bytes, no hashing, no lock.
//!
//! A header is only trusted when the live bitmap says so: one bit per 16-byte
//! granule of the address space, set when a user pointer is handed out and
//! atomically tested-and-cleared when it is freed. A pointer whose bit is clear
//! was never handed out, or was already freed: its memory is never read, so a
//! bogus or double free cannot fault in the hooks and is never passed to
//! glibc. A small direct-mapped cache of recently freed addresses tells a
//! double free from a pointer that was never allocated.

use crate::real::map_zeroed;
use crate::segvec::SegVec;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// The header stored in the 16 bytes before every user pointer.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub size: u64,
    pub node: u32,
    pub epoch: u16,
    /// log2 of (user pointer - glibc block start); 4 for ordinary blocks.
    pub offset_shift: u8,
    pub flags: u8,
}

pub const HEADER_SIZE: usize = 16;
const _: () = assert!(core::mem::size_of::<Header>() == HEADER_SIZE);

/// Node value meaning "not profiled": allocated while recording was off, inside
/// the library itself, or by a thread that could not record.
pub const NO_NODE: u32 = u32::MAX;

impl Header {
    /// # Safety
    /// `user` must be a live user pointer handed out by the hooks.
    #[inline]
    pub unsafe fn read(user: usize) -> Header {
        unsafe { core::ptr::read((user - HEADER_SIZE) as *const Header) }
    }

    /// # Safety
    /// `user - 16 .. user` must be writable memory of the block.
    #[inline]
    pub unsafe fn write(self, user: usize) {
        unsafe { core::ptr::write((user - HEADER_SIZE) as *mut Header, self) }
    }

    /// glibc's pointer for this block.
    #[inline]
    pub fn real_start(&self, user: usize) -> usize {
        user - (1usize << self.offset_shift)
    }
}

// ---- the live bitmap: 48-bit address space, 64 MiB regions, one bit per 16 bytes.
pub const REGION_SHIFT: u32 = 26;
const ADDRESS_BITS: u32 = 48;
const REGIONS: usize = 1 << (ADDRESS_BITS - REGION_SHIFT);
pub const GRANULES_PER_REGION: usize = 1 << (REGION_SHIFT - 4);
pub const WORDS_PER_REGION: usize = GRANULES_PER_REGION / 64;

static TOP: AtomicPtr<AtomicPtr<AtomicU64>> = AtomicPtr::new(core::ptr::null_mut());
/// The regions that have a leaf (each index + 1; 0 while being published), in the
/// order they were made, so a walk of the live blocks never reads the whole top level.
static LEAVES: SegVec<AtomicU32> = unsafe { SegVec::new() };
static LEAF_COUNT: AtomicU32 = AtomicU32::new(0);

/// Reserve the bitmap's top level. Must succeed before any header is written.
pub fn init() -> bool {
    if !TOP.load(Ordering::Acquire).is_null() {
        return true;
    }
    let p = map_zeroed(REGIONS * core::mem::size_of::<AtomicPtr<AtomicU64>>())
        as *mut AtomicPtr<AtomicU64>;
    if p.is_null() {
        return false;
    }
    TOP.store(p, Ordering::Release);
    true
}

#[inline]
fn word_of(addr: usize, create: bool) -> Option<(&'static AtomicU64, u64)> {
    if addr >> ADDRESS_BITS != 0 || addr & 15 != 0 {
        return None;
    }
    let top = TOP.load(Ordering::Acquire);
    if top.is_null() {
        return None;
    }
    // SAFETY: region index < REGIONS because addr < 2^48.
    let slot = unsafe { &*top.add(addr >> REGION_SHIFT) };
    let mut leaf = slot.load(Ordering::Acquire);
    if leaf.is_null() {
        if !create {
            return None;
        }
        leaf = new_leaf(slot, addr >> REGION_SHIFT)?;
    }
    let granule = (addr >> 4) & (GRANULES_PER_REGION - 1);
    // SAFETY: granule / 64 < WORDS_PER_REGION.
    let word = unsafe { &*leaf.add(granule / 64) };
    Some((word, 1u64 << (granule % 64)))
}

#[cold]
fn new_leaf(slot: &AtomicPtr<AtomicU64>, region: usize) -> Option<*mut AtomicU64> {
    let bytes = WORDS_PER_REGION * 8;
    let fresh = map_zeroed(bytes) as *mut AtomicU64;
    if fresh.is_null() {
        return None;
    }
    match slot.compare_exchange(
        core::ptr::null_mut(),
        fresh,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => {
            let i = LEAF_COUNT.fetch_add(1, Ordering::AcqRel);
            if let Some(entry) = LEAVES.ensure(i) {
                entry.store(region as u32 + 1, Ordering::Release);
            }
            Some(fresh)
        }
        Err(existing) => {
            crate::real::unmap(fresh as *mut u8, bytes);
            Some(existing)
        }
    }
}

/// The regions holding live bits, in address order, with their leaves: (region
/// index, the leaf's `WORDS_PER_REGION` words). Reads only the regions in use.
pub fn leaves() -> Vec<(usize, &'static [AtomicU64])> {
    let top = TOP.load(Ordering::Acquire);
    if top.is_null() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for i in 0..LEAF_COUNT.load(Ordering::Acquire) {
        let Some(region) = LEAVES.get(i).map(|e| e.load(Ordering::Acquire)) else { continue };
        let Some(region) = (region as usize).checked_sub(1) else { continue };
        // SAFETY: region < REGIONS (it came from an address below 2^48).
        let leaf = unsafe { &*top.add(region) }.load(Ordering::Acquire);
        if !leaf.is_null() {
            // SAFETY: a published leaf of WORDS_PER_REGION words, never unmapped.
            out.push((region, unsafe { core::slice::from_raw_parts(leaf as *const AtomicU64, WORDS_PER_REGION) }));
        }
    }
    out.sort_unstable_by_key(|l| l.0);
    out
}

/// Every live user pointer, in address order.
pub fn for_each_live(mut f: impl FnMut(usize)) {
    for (region, words) in leaves() {
        for (w, word) in words.iter().enumerate() {
            let mut bits = word.load(Ordering::Acquire);
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                f((region << REGION_SHIFT) | ((w * 64 + b) << 4));
            }
        }
    }
}

/// Mark `user` live. False when the address cannot be tracked (not 16-aligned,
/// above 2^48, or no memory for the bitmap); the caller must then not hand it out.
#[inline]
pub fn mark_live(user: usize) -> bool {
    match word_of(user, true) {
        Some((w, bit)) => {
            w.fetch_or(bit, Ordering::AcqRel);
            true
        }
        None => false,
    }
}

/// Clear `user`'s live bit; true if it was live (the caller now owns its header).
#[inline]
pub fn take_live(user: usize) -> bool {
    match word_of(user, false) {
        Some((w, bit)) => w.fetch_and(!bit, Ordering::AcqRel) & bit != 0,
        None => false,
    }
}

/// Whether `user` is live, without changing anything.
#[inline]
pub fn is_live(user: usize) -> bool {
    match word_of(user, false) {
        Some((w, bit)) => w.load(Ordering::Acquire) & bit != 0,
        None => false,
    }
}

// ---- recently freed addresses, to name double frees.
const FREED_SLOTS: usize = 1 << 14;
static FREED: [AtomicUsize; FREED_SLOTS] = [const { AtomicUsize::new(0) }; FREED_SLOTS];

/// Indexed by address bits, not a hash: frees that are close in time are
/// usually close in the heap, so the slots they touch share cache lines.
#[inline]
fn freed_slot(addr: usize) -> &'static AtomicUsize {
    &FREED[(addr >> 4) & (FREED_SLOTS - 1)]
}

/// Remember that `user` was just freed.
#[inline]
pub fn remember_freed(user: usize) {
    freed_slot(user).store(user, Ordering::Relaxed);
}

/// Whether `user` was freed recently. Only asked about pointers that are not
/// live, so a slot left over from before the address was handed out again
/// cannot mislead: the address has been freed since, or is live.
pub fn recently_freed(user: usize) -> bool {
    user != 0 && freed_slot(user).load(Ordering::Relaxed) == user
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_bits_track_one_granule_each() {
        assert!(init());
        let block = [0u128; 8];
        let a = block.as_ptr() as usize;
        assert!(!is_live(a));
        assert!(mark_live(a));
        assert!(is_live(a) && !is_live(a + 16) && !is_live(a + 8));
        assert!(take_live(a));
        assert!(!take_live(a), "a second take is a double free");
        remember_freed(a);
        assert!(recently_freed(a));
        assert!(mark_live(a), "the address is handed out again");
        assert!(take_live(a), "and freed once more, validly");
        assert!(
            !take_live(a) && recently_freed(a),
            "a second free is a double free"
        );
    }

    #[test]
    fn untrackable_addresses_are_refused() {
        assert!(init());
        assert!(!mark_live(1 << 50));
        assert!(!mark_live(0x1008));
        assert!(!take_live(0x1008));
    }

    #[test]
    fn header_round_trips() {
        let mut block = [0u128; 4];
        let user = block.as_mut_ptr() as usize + 32;
        let h = Header {
            size: 204,
            node: 7,
            epoch: 3,
            offset_shift: 4,
            flags: 0,
        };
        unsafe { h.write(user) };
        assert_eq!(unsafe { Header::read(user) }, h);
        assert_eq!(h.real_start(user), user - 16);
    }
}
