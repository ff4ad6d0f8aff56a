//! The concurrent calling-context tree and its counters.
//!
//! A node is one distinct chain of return addresses from the outermost frame
//! captured down to the caller of malloc. Nodes are created rarely (under one
//! spin lock) and never move or die: they live in a [`SegVec`], and each node
//! keeps a lock-free list of its children (`first_child`/`next_sibling`,
//! published with release stores), so lookups take no lock.
//!
//! Counters are per thread: every thread owns a [`CounterBlock`] indexed by node
//! id and bumps it with plain (relaxed load + store) updates: no atomic
//! read-modify-write, no shared cache line on the hot path. Blocks are never
//! freed; a thread that ends gives its block back for reuse, and its counts
//! stay in it. A dump sums all blocks, so counts are exact once threads are
//! quiet. Frees are counted by the freeing thread on the allocation's node,
//! which the sum makes right.

use crate::lock::SpinLock;
use crate::real::map_zeroed;
use crate::segvec::SegVec;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use mprof_engine::scheme::{CategoryScheme, SIZE_BINS, size_bin};

pub const ROOT: u32 = 0;
/// Categories: the C size classes s (0-32), m (33-256), l (257-2048), x (>2048).
pub const CATEGORIES: usize = 4;
/// The engine's size bins (`mprof_engine::scheme::size_bin`, the one size-bin rule):
/// 0..=1024, as in the paper, then one per size class above, so that the live bytes
/// of each class can be told apart from the bins alone (the memory-over-time samples
/// do). The bin table shows the bins above 1024 as the paper's one (`BinKey::Larger`).
pub const BINS: usize = SIZE_BINS;
/// A safety cap on node count; deeper novelty is charged to the parent.
const MAX_NODES: u32 = 1 << 24;

/// The size class (category) of a block of `size` bytes.
#[inline]
fn category_of_size(size: u64) -> usize {
    CategoryScheme::c_category_of_size(size) as usize
}

/// One CCT node. All-zero is a valid (unpublished) value.
pub struct NodeRec {
    parent: AtomicU32,
    first_child: AtomicU32,
    next_sibling: AtomicU32,
    address: AtomicU64,
}

const NONE: u32 = 0; // node 0 is the root, never anyone's child or sibling

static NODES: SegVec<NodeRec> = unsafe { SegVec::new() };
static NODE_COUNT: AtomicU32 = AtomicU32::new(0);
pub static TREE_LOCK: SpinLock = SpinLock::new();

/// Create the root. Idempotent.
pub fn init() -> bool {
    if NODE_COUNT.load(Ordering::Acquire) > 0 {
        return true;
    }
    TREE_LOCK.with(|| {
        if NODE_COUNT.load(Ordering::Acquire) == 0 {
            if NODES.ensure(ROOT).is_none() {
                return false;
            }
            NODE_COUNT.store(1, Ordering::Release);
        }
        true
    })
}

pub fn node_count() -> u32 {
    NODE_COUNT.load(Ordering::Acquire)
}

/// (parent, return address) of a published node; None for the root or an unknown id.
pub fn node_info(id: u32) -> Option<(u32, u64)> {
    if id == ROOT || id >= node_count() {
        return None;
    }
    let n = NODES.get(id)?;
    Some((
        n.parent.load(Ordering::Relaxed),
        n.address.load(Ordering::Relaxed),
    ))
}

fn find_child(parent: &NodeRec, address: u64) -> Option<u32> {
    let mut c = parent.first_child.load(Ordering::Acquire);
    while c != NONE {
        let n = NODES.get(c)?;
        if n.address.load(Ordering::Relaxed) == address {
            return Some(c);
        }
        c = n.next_sibling.load(Ordering::Acquire);
    }
    None
}

/// The child of `parent` for return address `address`, created if new.
pub fn child(parent: u32, address: u64) -> u32 {
    let Some(p) = NODES.get(parent) else {
        return parent;
    };
    if let Some(c) = find_child(p, address) {
        return c;
    }
    TREE_LOCK.with(|| {
        if let Some(c) = find_child(p, address) {
            return c;
        }
        let id = NODE_COUNT.load(Ordering::Relaxed);
        if id >= MAX_NODES {
            return parent;
        }
        let Some(n) = NODES.ensure(id) else {
            return parent;
        };
        n.parent.store(parent, Ordering::Relaxed);
        n.address.store(address, Ordering::Relaxed);
        n.next_sibling
            .store(p.first_child.load(Ordering::Relaxed), Ordering::Relaxed);
        p.first_child.store(id, Ordering::Release);
        NODE_COUNT.store(id + 1, Ordering::Release);
        id
    })
}

/// allocs, bytes, frees, freed bytes for one category. All-zero valid. Aligned to
/// its size, so an allocation or a free touches one cache line of counters.
#[derive(Default)]
#[repr(C, align(32))]
pub struct Cell4 {
    pub allocs: AtomicU64,
    pub bytes: AtomicU64,
    pub frees: AtomicU64,
    pub freed_bytes: AtomicU64,
}

/// Owner-only increment: the block's owner is the only writer, so a relaxed
/// load and store is exact and cheaper than an atomic add; readers may see a
/// slightly stale value, never a torn one.
#[inline]
fn bump(c: &AtomicU64, by: u64) {
    c.store(
        c.load(Ordering::Relaxed).wrapping_add(by),
        Ordering::Relaxed,
    );
}

impl Cell4 {
    #[inline]
    fn add_alloc(&self, size: u64) {
        bump(&self.allocs, 1);
        bump(&self.bytes, size);
    }
    #[inline]
    fn add_free(&self, size: u64) {
        bump(&self.frees, 1);
        bump(&self.freed_bytes, size);
    }
    pub fn get(&self) -> [u64; 4] {
        [
            self.allocs.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
            self.frees.load(Ordering::Relaxed),
            self.freed_bytes.load(Ordering::Relaxed),
        ]
    }
    fn clear(&self) {
        for c in [&self.allocs, &self.bytes, &self.frees, &self.freed_bytes] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// One thread's counters: per node and category, and per size bin.
pub struct CounterBlock {
    nodes: SegVec<[Cell4; CATEGORIES]>,
    bins: [Cell4; BINS],
    /// Blocks freed with no other allocation by their thread in between
    /// (heaptrack's "temporary"): count and bytes.
    temporary: [AtomicU64; 2],
    /// The same per node of the allocation (the header names it at the free);
    /// apart from `nodes`, so threads that never see a temporary block map nothing.
    temporary_nodes: SegVec<[AtomicU64; 2]>,
    in_use: AtomicBool,
    next: AtomicPtr<CounterBlock>,
}

impl CounterBlock {
    #[inline]
    pub fn record_alloc(&self, node: u32, size: u64) {
        if let Some(n) = self.nodes.ensure(node) {
            n[category_of_size(size)].add_alloc(size);
        }
        self.bins[size_bin(size)].add_alloc(size);
    }

    #[inline]
    pub fn record_free(&self, node: u32, size: u64) {
        if let Some(n) = self.nodes.ensure(node) {
            n[category_of_size(size)].add_free(size);
        }
        self.bins[size_bin(size)].add_free(size);
    }

    #[inline]
    pub fn record_temporary(&self, node: u32, size: u64) {
        bump(&self.temporary[0], 1);
        bump(&self.temporary[1], size);
        if let Some(t) = self.temporary_nodes.ensure(node) {
            bump(&t[0], 1);
            bump(&t[1], size);
        }
    }

    fn clear(&self) {
        for t in &self.temporary {
            t.store(0, Ordering::Relaxed);
        }
        for i in 0..node_count() {
            if let Some(n) = self.nodes.get(i) {
                n.iter().for_each(Cell4::clear);
            }
            if let Some(t) = self.temporary_nodes.get(i) {
                t.iter().for_each(|x| x.store(0, Ordering::Relaxed));
            }
        }
        self.bins.iter().for_each(Cell4::clear);
    }
}

static BLOCKS: AtomicPtr<CounterBlock> = AtomicPtr::new(core::ptr::null_mut());

/// A block for a new thread: a released one if any, else a fresh mapping.
pub fn acquire_block() -> Option<&'static CounterBlock> {
    let mut b = BLOCKS.load(Ordering::Acquire);
    while !b.is_null() {
        // SAFETY: blocks are never unmapped.
        let block = unsafe { &*b };
        if block
            .in_use
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return Some(block);
        }
        b = block.next.load(Ordering::Acquire);
    }
    let fresh = map_zeroed(core::mem::size_of::<CounterBlock>()) as *mut CounterBlock;
    if fresh.is_null() {
        return None;
    }
    // SAFETY: zero-filled memory is a valid CounterBlock (atomics and null segment pointers).
    let block = unsafe { &*fresh };
    block.in_use.store(true, Ordering::Relaxed);
    let mut head = BLOCKS.load(Ordering::Acquire);
    loop {
        block.next.store(head, Ordering::Relaxed);
        match BLOCKS.compare_exchange(head, fresh, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(block),
            Err(h) => head = h,
        }
    }
}

/// Give a block back when its thread ends; its counts stay in it.
pub fn release_block(block: &CounterBlock) {
    block.in_use.store(false, Ordering::Release);
}

/// Counters for threads that cannot have their own block (after their
/// thread-exit destructor ran, or when no memory was left): shared, so
/// every update holds [`ORPHAN_LOCK`].
pub static ORPHAN_LOCK: SpinLock = SpinLock::new();
static ORPHAN: AtomicPtr<CounterBlock> = AtomicPtr::new(core::ptr::null_mut());

pub fn with_orphan_block(f: impl FnOnce(&CounterBlock)) {
    ORPHAN_LOCK.with(|| {
        let mut o = ORPHAN.load(Ordering::Acquire);
        if o.is_null() {
            match acquire_block() {
                Some(b) => {
                    o = b as *const CounterBlock as *mut CounterBlock;
                    ORPHAN.store(o, Ordering::Release);
                }
                None => return,
            }
        }
        // SAFETY: blocks are never unmapped.
        f(unsafe { &*o })
    })
}

/// Zero every block (fork child: it is the only thread left, so no update races).
pub fn clear_all() {
    let mut b = BLOCKS.load(Ordering::Acquire);
    while !b.is_null() {
        // SAFETY: blocks are never unmapped.
        let block = unsafe { &*b };
        block.clear();
        b = block.next.load(Ordering::Acquire);
    }
}

/// The sum of all blocks: per node [category][allocs, bytes, frees, freed], and per bin.
pub struct Totals {
    pub nodes: Vec<[[u64; 4]; CATEGORIES]>,
    pub bins: Vec<[u64; 4]>,
    /// Temporary allocations: count and bytes.
    pub temporary: [u64; 2],
    /// Temporary allocations per node: count and bytes (empty in `snapshot_overall`).
    pub node_temporary: Vec<[u64; 2]>,
}

impl Totals {
    pub fn zero(nodes: usize) -> Totals {
        Totals {
            nodes: vec![[[0; 4]; CATEGORIES]; nodes],
            bins: vec![[0; 4]; BINS],
            temporary: [0; 2],
            node_temporary: vec![[0; 2]; nodes],
        }
    }

    /// allocs, bytes, frees, freed bytes over everything (the bins' sum).
    pub fn overall(&self) -> [u64; 4] {
        let mut o = [0u64; 4];
        for b in &self.bins {
            for (x, v) in o.iter_mut().zip(b) {
                *x += v;
            }
        }
        o
    }

    /// self - base, saturating (base is a snapshot taken at a reset).
    pub fn minus(mut self, base: &Totals) -> Totals {
        for (n, b) in self.nodes.iter_mut().zip(&base.nodes) {
            for (c, bc) in n.iter_mut().zip(b) {
                for (x, y) in c.iter_mut().zip(bc) {
                    *x = x.saturating_sub(*y);
                }
            }
        }
        for (n, b) in self.bins.iter_mut().zip(&base.bins) {
            for (x, y) in n.iter_mut().zip(b) {
                *x = x.saturating_sub(*y);
            }
        }
        for (x, y) in self.temporary.iter_mut().zip(base.temporary) {
            *x = x.saturating_sub(y);
        }
        for (n, b) in self.node_temporary.iter_mut().zip(&base.node_temporary) {
            for (x, y) in n.iter_mut().zip(b) {
                *x = x.saturating_sub(*y);
            }
        }
        self
    }
}

pub fn snapshot() -> Totals {
    let count = node_count() as usize;
    let mut t = Totals::zero(count);
    let mut b = BLOCKS.load(Ordering::Acquire);
    while !b.is_null() {
        // SAFETY: blocks are never unmapped.
        let block = unsafe { &*b };
        for (i, out) in t.nodes.iter_mut().enumerate() {
            if let Some(n) = block.nodes.get(i as u32) {
                for (c, o) in n.iter().zip(out.iter_mut()) {
                    for (x, v) in o.iter_mut().zip(c.get()) {
                        *x += v;
                    }
                }
            }
            if let Some(tn) = block.temporary_nodes.get(i as u32) {
                for (x, v) in t.node_temporary[i].iter_mut().zip(tn) {
                    *x += v.load(Ordering::Relaxed);
                }
            }
        }
        for (c, o) in block.bins.iter().zip(t.bins.iter_mut()) {
            for (x, v) in o.iter_mut().zip(c.get()) {
                *x += v;
            }
        }
        for (x, v) in t.temporary.iter_mut().zip(&block.temporary) {
            *x += v.load(Ordering::Relaxed);
        }
        b = block.next.load(Ordering::Acquire);
    }
    t
}

/// (raw node, live blocks, live bytes) of every node with live blocks, net of
/// `baseline` (the counts at a reset): the sum over every thread's counters, with
/// 16 bytes of scratch a node.
pub fn live_by_node(baseline: Option<&Totals>) -> Vec<(u32, u64, u64)> {
    let count = node_count() as usize;
    let mut live = vec![(0i64, 0i64); count];
    let mut b = BLOCKS.load(Ordering::Acquire);
    while !b.is_null() {
        // SAFETY: blocks are never unmapped.
        let block = unsafe { &*b };
        for (i, out) in live.iter_mut().enumerate() {
            let Some(n) = block.nodes.get(i as u32) else { continue };
            for c in n {
                let [allocs, bytes, frees, freed] = c.get();
                out.0 += allocs.wrapping_sub(frees) as i64;
                out.1 += bytes.wrapping_sub(freed) as i64;
            }
        }
        b = block.next.load(Ordering::Acquire);
    }
    if let Some(base) = baseline {
        for (out, n) in live.iter_mut().zip(&base.nodes) {
            for c in n {
                out.0 -= c[0].wrapping_sub(c[2]) as i64;
                out.1 -= c[1].wrapping_sub(c[3]) as i64;
            }
        }
    }
    live.into_iter()
        .enumerate()
        .filter(|&(_, (blocks, bytes))| blocks > 0 || bytes > 0)
        .map(|(i, (blocks, bytes))| (i as u32, blocks.max(0) as u64, bytes.max(0) as u64))
        .collect()
}

/// Only the bins' and temporary sums (what a memory-over-time sample needs:
/// cheap, whatever the tree's size).
pub fn snapshot_overall() -> Totals {
    let mut t = Totals::zero(0);
    let mut b = BLOCKS.load(Ordering::Acquire);
    while !b.is_null() {
        // SAFETY: blocks are never unmapped.
        let block = unsafe { &*b };
        for (c, o) in block.bins.iter().zip(t.bins.iter_mut()) {
            for (x, v) in o.iter_mut().zip(c.get()) {
                *x += v;
            }
        }
        for (x, v) in t.temporary.iter_mut().zip(&block.temporary) {
            *x += v.load(Ordering::Relaxed);
        }
        b = block.next.load(Ordering::Acquire);
    }
    t
}

/// In a fork child: every block but the surviving thread's is free for reuse
/// (the threads that owned them do not exist in the child).
pub fn release_all_but(keep: Option<&CounterBlock>) {
    let keep = keep.map(|k| k as *const CounterBlock);
    let orphan = ORPHAN.load(Ordering::Acquire) as *const CounterBlock;
    let mut b = BLOCKS.load(Ordering::Acquire);
    while !b.is_null() {
        // SAFETY: blocks are never unmapped.
        let block = unsafe { &*b };
        if Some(b as *const CounterBlock) != keep && !core::ptr::eq(b, orphan) {
            block.in_use.store(false, Ordering::Release);
        }
        b = block.next.load(Ordering::Acquire);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_are_interned_per_parent() {
        assert!(init());
        let a = child(ROOT, 0x1000);
        let b = child(a, 0x2000);
        assert_eq!(child(ROOT, 0x1000), a);
        assert_eq!(child(a, 0x2000), b);
        let c = child(ROOT, 0x2000);
        assert_ne!(c, b, "same address under another parent is another node");
        assert_eq!(node_info(b), Some((a, 0x2000)));
        assert_eq!(node_info(ROOT), None);
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        assert!(init());
        let node = child(ROOT, 0xdead_0000);
        let before = snapshot();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    let block = acquire_block().unwrap();
                    for _ in 0..1000 {
                        block.record_alloc(node, 40);
                    }
                    for _ in 0..250 {
                        block.record_free(node, 40);
                    }
                    release_block(block);
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let t = snapshot().minus(&before);
        assert_eq!(t.nodes[node as usize][1], [4000, 160_000, 1000, 40_000]);
        assert_eq!(t.bins[40], [4000, 160_000, 1000, 40_000]);
    }
}
