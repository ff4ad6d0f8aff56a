//! Memory over time: live and allocated bytes sampled every [`PERIOD_MS`] by
//! the helper thread (see `endings`), plus one sample whenever a profile is
//! written, as the Lisp side samples after each collection.
//!
//! A sample sums the per-thread size bins (about a thousand counters per
//! thread, whatever the size of the tree), so sampling costs the program
//! nothing on its allocation path. The series is bounded: when it holds
//! [`MAX_SAMPLES`], every other sample is dropped and the period doubles, so a
//! long run keeps an even coverage of its whole life. The peak is the highest
//! sample: exact to within the allocations of one period.
//!
//! When a sample is a new peak, the live blocks and bytes of every tree node
//! are summed too (the "memory at peak" figure): the cost of a full snapshot,
//! paid only while the peak grows, at most once per period, and never on the
//! program's allocation path. The figure is the one of the sample that set the
//! peak, so it is as exact as the peak itself. On a large tree a snapshot can
//! take milliseconds, so after each one the next waits [`SNAPSHOT_SPACING`]
//! times its duration: snapshots never take more than about a twentieth of the
//! helper thread's time. A peak sampled meanwhile keeps the figure of an
//! earlier, lower peak; the dump then says which (`dump`).
//!
//! Counts follow the runtime's epochs: `reset` and `fork` restart the clock
//! and the series (and the peak), and samples subtract the reset's baseline.

use crate::cct;
use crate::lock::Locked;
use mprof_engine::{CategoryScheme, Sample};
use std::time::Instant;

pub const PERIOD_MS: u64 = 10;
pub const MAX_SAMPLES: usize = 4096;
/// After a per-node snapshot, the next waits this many times its duration.
const SNAPSHOT_SPACING: u64 = 20;

struct Series {
    started: Option<Instant>,
    samples: Vec<Sample>,
    /// Current period, a multiple of PERIOD_MS.
    period_ms: u64,
    last_ms: u64,
    /// The live bytes and time of the highest sample with a per-node snapshot, and
    /// the live (raw node, blocks, bytes) of every node with live blocks then.
    peak_live: u64,
    peak_ns: u64,
    peak_nodes: Vec<(u32, u64, u64)>,
    /// When the next snapshot may be taken (ns since the start; see SNAPSHOT_SPACING).
    next_snapshot_ns: u64,
}

impl Series {
    /// An empty series at the first sampling period.
    const fn new() -> Series {
        Series {
            started: None,
            samples: Vec::new(),
            period_ms: PERIOD_MS,
            last_ms: 0,
            peak_live: 0,
            peak_ns: 0,
            peak_nodes: Vec::new(),
            next_snapshot_ns: 0,
        }
    }
}

static SERIES: Locked<Series> = Locked::new(Series::new());

/// Held across `fork` (the helper may be sampling when another thread forks).
pub fn lock_for_fork() {
    SERIES.raw().lock();
}

pub fn unlock_after_fork() {
    SERIES.raw().unlock();
}

/// Start (or restart, after a reset or in a forked child) the clock and the series.
pub fn restart() {
    SERIES.with(|s| {
        s.started = Some(Instant::now());
        s.samples.clear();
        s.period_ms = PERIOD_MS;
        s.last_ms = 0;
        s.peak_live = 0;
        s.peak_ns = 0;
        s.peak_nodes = Vec::new();
        s.next_snapshot_ns = 0;
    });
}

/// Seconds since the clock started.
pub fn elapsed_s() -> f64 {
    SERIES.with(|s| s.started.map_or(0.0, |t| t.elapsed().as_secs_f64()))
}

/// The sample for size bins `bins` (already net of the baseline) now.
fn sample_of(elapsed_ns: u64, bins: &[[u64; 4]]) -> Sample {
    let mut s = Sample { time_ns: elapsed_ns, ..Sample::default() };
    for (bin, c) in bins.iter().enumerate() {
        let live = c[1].saturating_sub(c[3]);
        s.allocated_bytes += c[1];
        s.live_bytes += live;
        s.live_by_category[CategoryScheme::c_category_of_bin(bin) as usize] += live;
    }
    s
}

/// The size bins of all threads, net of the reset's baseline.
fn net_bins() -> Vec<[u64; 4]> {
    let mut now = cct::snapshot_overall().bins;
    crate::state::BASELINE.with(|b| {
        if let Some(base) = b.as_ref() {
            for (n, b) in now.iter_mut().zip(&base.bins) {
                for (x, y) in n.iter_mut().zip(b) {
                    *x = x.saturating_sub(*y);
                }
            }
        }
    });
    now
}

/// Take a sample if the current period has passed (the helper's tick).
pub fn tick() {
    let due = SERIES.with(|s| match s.started {
        Some(t) => {
            let ms = t.elapsed().as_millis() as u64;
            (ms >= s.last_ms + s.period_ms).then_some(t)
        }
        None => None,
    });
    let Some(started) = due else { return };
    let bins = net_bins();
    let ns = started.elapsed().as_nanos() as u64;
    let sample = sample_of(ns, &bins);
    let new_peak = SERIES.with(|s| {
        push(s, sample);
        sample.live_bytes > s.peak_live && ns >= s.next_snapshot_ns
    });
    if new_peak {
        // Outside the series lock: the snapshot walks every thread's counters.
        let nodes = live_by_node(&net_totals());
        let done = started.elapsed().as_nanos() as u64;
        SERIES.with(|s| {
            s.next_snapshot_ns =
                done.saturating_add(done.saturating_sub(ns).saturating_mul(SNAPSHOT_SPACING));
            if sample.live_bytes > s.peak_live {
                s.peak_live = sample.live_bytes;
                s.peak_ns = sample.time_ns;
                s.peak_nodes = nodes;
            }
        });
    }
}

/// All counters, net of the reset's baseline.
fn net_totals() -> cct::Totals {
    let now = cct::snapshot();
    crate::state::BASELINE.with(|b| match b.as_ref() {
        Some(base) => now.minus(base),
        None => now,
    })
}

/// (raw node, live blocks, live bytes) of every node with live blocks in `t`.
pub fn live_by_node(t: &cct::Totals) -> Vec<(u32, u64, u64)> {
    t.nodes
        .iter()
        .enumerate()
        .filter_map(|(i, cats)| {
            let (mut blocks, mut bytes) = (0u64, 0u64);
            for c in cats {
                blocks = blocks.saturating_add(c[0].saturating_sub(c[2]));
                bytes = bytes.saturating_add(c[1].saturating_sub(c[3]));
            }
            (blocks != 0 || bytes != 0).then_some((i as u32, blocks, bytes))
        })
        .collect()
}

/// The highest sample with a per-node snapshot: its live bytes, its time, and its
/// live blocks and bytes per raw node.
pub fn peak() -> (u64, u64, Vec<(u32, u64, u64)>) {
    SERIES.with(|s| (s.peak_live, s.peak_ns, s.peak_nodes.clone()))
}

fn push(s: &mut Series, sample: Sample) {
    s.last_ms = sample.time_ns / 1_000_000;
    s.samples.push(sample);
    if s.samples.len() >= MAX_SAMPLES {
        let mut i = 0;
        s.samples.retain(|_| {
            i += 1;
            i % 2 == 1
        });
        s.period_ms *= 2;
    }
}

/// The series for a profile being written, ending with a sample of the size bins
/// `bins` (net) now.
pub fn for_profile(bins: &[[u64; 4]]) -> Vec<Sample> {
    SERIES.with(|s| {
        let ns = s.started.map_or(0, |t| t.elapsed().as_nanos() as u64);
        let mut out = s.samples.clone();
        out.push(sample_of(ns, bins));
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_series_halves_and_the_period_doubles() {
        let mut s = Series::new();
        for i in 0..MAX_SAMPLES as u64 {
            // One bin of 100-byte blocks (size class m): i allocated, none freed... as bytes.
            let mut bins = vec![[0u64; 4]; cct::BINS];
            bins[100] = [i, 100 * i, 0, 50 * i];
            push(&mut s, sample_of(i * 10_000_000, &bins));
        }
        assert_eq!(s.samples.len(), MAX_SAMPLES / 2);
        assert_eq!(s.period_ms, 2 * PERIOD_MS);
        // Every other sample kept: the first, third, ... and the series still spans the run.
        assert_eq!(s.samples[0].time_ns, 0);
        assert_eq!(s.samples[1].time_ns, 20_000_000);
        assert_eq!(s.samples[1].live_bytes, 100);
        assert_eq!(s.samples[1].allocated_bytes, 200);
        assert_eq!(s.samples[1].live_by_category, [0, 100, 0, 0], "all live bytes in size class m");
    }
}
