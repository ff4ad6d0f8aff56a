//! The true peak: live bytes kept exactly, and the calling contexts of the memory
//! live at (or near) the peak.
//!
//! Each thread keeps, since it last flushed, the change of live bytes its own
//! allocations and frees made (`Deltas::live`), the highest that change reached
//! (`Deltas::max`) and the bytes allocated when it did. A flush adds the change to
//! the global live bytes and raises the global peak to the global live bytes before
//! the flush plus that highest change: for a single thread, the exact peak whatever
//! the flush interval. A thread flushes when its change passes [`BATCH`] either
//! way, and at a free when its highest change may have made a new peak (it passed
//! the headroom between the peak and the live bytes it last saw): so a peak, however
//! short, is flushed by the first free after it. With several threads the peak is
//! exact to within the other threads' unflushed changes (at most `BATCH` each).
//!
//! The contexts of the peak ("memory at peak"): when a thread flushes at a free
//! (before the free is counted) with the live bytes at the peak, and the peak grew by
//! at least 1/[`SNAPSHOT_GROWTH`] over the last snapshot's, it snapshots the live
//! blocks and bytes of every tree node: the state at the peak itself for a single
//! thread (a peak reached by an allocation's own flush makes the next free flush
//! again, for that snapshot). Snapshots
//! cost the size of the tree, so after each one the next waits [`SNAPSHOT_SPACING`]
//! times its duration (a twentieth of the time at most); the dump says when the
//! table is of a moment below the exact peak.
//!
//! Counts follow the runtime's epochs: `reset` and `fork` start over.

use crate::cct;
use crate::lock::Locked;
use core::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// The change of live bytes a thread keeps to itself before flushing.
pub const BATCH: i64 = 64 * 1024;
/// A snapshot is taken when the peak grew by 1/SNAPSHOT_GROWTH (about 3%).
pub const SNAPSHOT_GROWTH: u64 = 32;
/// After a snapshot, the next waits this many times its duration.
const SNAPSHOT_SPACING: u64 = 20;

/// A thread's unflushed changes (owned by `runtime::ThreadState`).
#[derive(Default)]
pub struct Deltas {
    pub live: i64,
    pub max: i64,
    pub allocated: u64,
    pub allocated_at_max: u64,
    /// The peak minus the live bytes when this thread last flushed: a free after
    /// `max` passed it may follow a new peak.
    pub headroom: i64,
    epoch: u32,
}

impl Deltas {
    /// A new thread's: nothing counted yet, in the current epoch.
    pub fn new() -> Deltas {
        Deltas {
            epoch: EPOCH.load(Ordering::Acquire),
            headroom: PEAK.load(Ordering::Acquire) as i64 - LIVE.load(Ordering::Acquire),
            ..Deltas::default()
        }
    }

    /// Counts an allocation; true when the thread should flush.
    #[inline(always)]
    pub fn alloc(&mut self, size: u64) -> bool {
        self.live += size as i64;
        self.allocated += size;
        if self.live > self.max {
            self.max = self.live;
            self.allocated_at_max = self.allocated;
        }
        self.live > BATCH
    }

    /// Whether a free now (before it is counted) must flush first.
    #[inline(always)]
    pub fn before_free(&self) -> bool {
        self.max > self.headroom
    }

    /// Counts a free; true when the thread should flush.
    #[inline(always)]
    pub fn free(&mut self, size: u64) -> bool {
        self.live -= size as i64;
        self.live < -BATCH
    }
}

static EPOCH: AtomicU32 = AtomicU32::new(0);
static LIVE: AtomicI64 = AtomicI64::new(0);
static ALLOCATED: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
/// The live bytes of the last snapshot (a copy of `PeakState::snapshot_live`).
static SNAPSHOT_LIVE: AtomicU64 = AtomicU64::new(0);

/// The peak's time and allocated bytes, and the snapshot of the contexts.
struct PeakState {
    started: Option<Instant>,
    peak: u64,
    peak_ns: u64,
    peak_allocated: u64,
    /// The live bytes, time and (raw node, blocks, bytes) rows of the last snapshot.
    snapshot_live: u64,
    snapshot_ns: u64,
    snapshot: Vec<(u32, u64, u64)>,
    next_snapshot_ns: u64,
}

static STATE: Locked<PeakState> = Locked::new(PeakState {
    started: None,
    peak: 0,
    peak_ns: 0,
    peak_allocated: 0,
    snapshot_live: 0,
    snapshot_ns: 0,
    snapshot: Vec::new(),
    next_snapshot_ns: 0,
});

/// Held across `fork`.
pub fn lock_for_fork() {
    STATE.raw().lock();
}

pub fn unlock_after_fork() {
    STATE.raw().unlock();
}

/// Start over (start-up, reset, fork child): nothing live, no peak.
pub fn restart() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
    LIVE.store(0, Ordering::Release);
    ALLOCATED.store(0, Ordering::Release);
    PEAK.store(0, Ordering::Release);
    SNAPSHOT_LIVE.store(0, Ordering::Release);
    STATE.with(|s| {
        s.started = Some(Instant::now());
        s.peak = 0;
        s.peak_ns = 0;
        s.peak_allocated = 0;
        s.snapshot_live = 0;
        s.snapshot_ns = 0;
        s.snapshot = Vec::new();
        s.next_snapshot_ns = 0;
    });
}

/// Adds a thread's changes to the global count (see the module comment); `at_free`
/// says the thread is at a free (not yet counted), where the live bytes may be the
/// peak's: then the contexts are snapshotted if the peak grew enough.
#[cold]
pub fn flush(d: &mut Deltas, at_free: bool) {
    let epoch = EPOCH.load(Ordering::Acquire);
    if d.epoch != epoch {
        // Changes from before a reset (or from the parent, in a fork child) are not counted.
        *d = Deltas::new();
        return;
    }
    let before = LIVE.fetch_add(d.live, Ordering::AcqRel);
    let allocated_before = ALLOCATED.fetch_add(d.allocated, Ordering::AcqRel);
    let candidate = (before + d.max).max(0) as u64;
    let mut peak = PEAK.load(Ordering::Acquire);
    if candidate > peak {
        let was = PEAK.fetch_max(candidate, Ordering::AcqRel);
        if was < candidate {
            raise(candidate, allocated_before + d.allocated_at_max);
        }
        peak = was.max(candidate);
    }
    let live = before + d.live;
    let at_peak = live >= 0 && live as u64 >= peak;
    let pending = at_peak && SNAPSHOT_LIVE.load(Ordering::Acquire) < peak - peak / (SNAPSHOT_GROWTH + 1);
    if pending && at_free {
        snapshot_now(peak);
    }
    *d = Deltas { epoch, ..Deltas::default() };
    // A peak without its snapshot yet makes the next free flush again.
    d.headroom = if pending && !at_free { -1 } else { peak as i64 - live };
}

/// A flush raised the peak to `peak`: note when, and the bytes allocated by then.
fn raise(peak: u64, allocated: u64) {
    STATE.with(|s| {
        if peak > s.peak {
            s.peak = peak;
            s.peak_ns = s.started.map_or(0, |t| t.elapsed().as_nanos() as u64);
            s.peak_allocated = allocated;
        }
    });
}

/// Snapshot the contexts of the live bytes now (`live`, the peak), unless the last
/// snapshot was so recent that the spacing forbids it.
fn snapshot_now(live: u64) {
    let due = STATE.with(|s| {
        let ns = s.started.map_or(0, |t| t.elapsed().as_nanos() as u64);
        (ns >= s.next_snapshot_ns).then_some((ns, s.started))
    });
    let Some((ns, Some(started))) = due else { return };
    // Outside the lock: the snapshot walks every thread's counters.
    let nodes = crate::state::BASELINE.with(|b| cct::live_by_node(b.as_ref()));
    let done = started.elapsed().as_nanos() as u64;
    STATE.with(|s| {
        s.next_snapshot_ns = done.saturating_add(done.saturating_sub(ns).saturating_mul(SNAPSHOT_SPACING));
        if live > s.snapshot_live {
            s.snapshot_live = live;
            s.snapshot_ns = ns;
            s.snapshot = nodes;
            SNAPSHOT_LIVE.store(live, Ordering::Release);
        }
    });
}

/// The counts of a thread without a state of its own (flushed at once).
pub fn count_orphan(size: u64, alloc: bool) {
    let mut d = Deltas { epoch: EPOCH.load(Ordering::Acquire), headroom: i64::MAX, ..Deltas::default() };
    if alloc {
        d.alloc(size);
    } else {
        d.free(size);
    }
    flush(&mut d, false);
}

/// The exact peak: (live bytes, time since the start in ns, bytes allocated then).
pub fn peak() -> (u64, u64, u64) {
    STATE.with(|s| (s.peak, s.peak_ns, s.peak_allocated))
}

/// The last snapshot of the contexts: (its live bytes, its time, rows).
pub fn snapshot() -> (u64, u64, Vec<(u32, u64, u64)>) {
    STATE.with(|s| (s.snapshot_live, s.snapshot_ns, s.snapshot.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_threads_peak_is_exact_whatever_the_flushes() {
        restart();
        let mut d = Deltas::new();
        // 100 blocks of 1000 bytes, then all freed: the peak is 100,000 bytes.
        for _ in 0..100 {
            if d.alloc(1000) {
                flush(&mut d, false);
            }
        }
        for i in 0..100 {
            if i == 0 {
                assert!(d.before_free(), "the first free after a new peak flushes");
                flush(&mut d, false);
            }
            if d.free(1000) {
                flush(&mut d, false);
            }
        }
        flush(&mut d, false);
        assert_eq!(peak().0, 100_000);
        assert_eq!(peak().2, 100_000, "the bytes allocated at the peak");
        assert_eq!(LIVE.load(Ordering::Relaxed), 0);
    }
}
