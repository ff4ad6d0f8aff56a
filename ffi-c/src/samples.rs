//! Memory over time: live and allocated bytes sampled every [`PERIOD_MS`] by
//! the helper thread (see `endings`), plus one sample whenever a profile is
//! written, as the Lisp side samples after each collection.
//!
//! A sample sums the per-thread size bins (about a thousand counters per
//! thread, whatever the size of the tree), so sampling costs the program
//! nothing on its allocation path. The series is bounded: when it holds
//! [`MAX_SAMPLES`], every other sample is dropped and the period doubles, so a
//! long run keeps an even coverage of its whole life. The peak is not a sample's:
//! `peak` keeps the exact one (and its contexts), and the dump adds it to the
//! series as a point of its own.
//!
//! Counts follow the runtime's epochs: `reset` and `fork` restart the clock
//! and the series, and samples subtract the reset's baseline.

use crate::cct;
use crate::lock::Locked;
use mprof_engine::{CategoryScheme, Sample};
use std::time::Instant;

pub const PERIOD_MS: u64 = 10;
pub const MAX_SAMPLES: usize = 4096;

struct Series {
    started: Option<Instant>,
    samples: Vec<Sample>,
    /// Current period, a multiple of PERIOD_MS.
    period_ms: u64,
    last_ms: u64,
}

impl Series {
    /// An empty series at the first sampling period.
    const fn new() -> Series {
        Series {
            started: None,
            samples: Vec::new(),
            period_ms: PERIOD_MS,
            last_ms: 0,
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
    SERIES.with(|s| push(s, sample));
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
