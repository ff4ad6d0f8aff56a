//! Benchmark: reduce and print a profile of 1,000,000 allocations over 10,000 distinct
//! paths (the paper's reduction and display took 10-37 s for 31k-306k allocations).
//!
//! Run: `cargo bench -p mprof-cli --bench reduce`. Prints the median of several
//! runs for each phase, and the ratio of the whole display phase to the paper's fastest
//! reduction (10.3 s). Also times the monitor's record path, per allocation.

use std::hint::black_box;
use std::time::{Duration, Instant};

use mprof_display::*;
use mprof_engine::*;

const PATHS: usize = 10_000;
const ALLOCS: usize = 1_000_000;

/// A deterministic generator (xorshift), so every run builds the same profile.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// 10,000 distinct leaf paths of depth 4-12 over 400 functions, with some recursion
/// (paths may revisit functions, which makes cycles), 100 allocations per path.
fn build() -> (Monitor, Vec<NodeId>) {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    let funcs: Vec<FuncId> = (0..400).map(|i| m.function(FunctionInfo::named(format!("function_{i}")))).collect();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut leaves = Vec::with_capacity(PATHS);
    let mut seen = std::collections::HashSet::new();
    while leaves.len() < PATHS {
        let depth = 4 + (rng.next() % 9) as usize;
        let mut node = NodeId::ROOT;
        // Shared prefixes, as real programs have: the first frames come from few functions.
        for d in 0..depth {
            let spread = if d < 2 { 3 } else { 400 };
            node = m.child(node, funcs[(rng.next() % spread) as usize], 0);
        }
        if seen.insert(node) {
            leaves.push(node);
        }
    }
    (m, leaves)
}

fn record(m: &mut Monitor, leaves: &[NodeId]) {
    let mut rng = Rng(42);
    for i in 0..ALLOCS {
        let node = leaves[i % leaves.len()];
        let size = rng.next() % 3000;
        let cat = CategoryScheme::c_category_of_size(size);
        m.record_alloc(node, cat, size, Bin::Size(size));
        if i % 3 == 0 {
            m.record_free(node, cat, size, Bin::Size(size));
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// CPU time of this thread (`CLOCK_THREAD_CPUTIME_ID`), so that other processes on a
/// shared machine do not inflate the figures. Where that clock fails, wall time.
fn cpu_now() -> Option<Duration> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let (cpu, wall) = (cpu_now(), Instant::now());
                black_box(f());
                match (cpu, cpu_now()) {
                    (Some(a), Some(b)) => b.saturating_sub(a),
                    _ => wall.elapsed(),
                }
            })
            .collect(),
    )
}

fn main() {
    let (mut m, leaves) = build();
    let record_time = time(5, || {
        m.reset();
        record(&mut m, &leaves);
    });
    let profile = m.to_profile();
    let mut file = Vec::new();
    profile.write(&mut file).expect("writing to memory");
    let options = ReportOptions::default();
    // Profiling aid: MPROF_BENCH_ONLY=reduce|graph loops one phase under a profiler.
    match std::env::var("MPROF_BENCH_ONLY").as_deref() {
        Ok("reduce") => {
            for _ in 0..20 {
                let _ = black_box(reduce(&profile, &options.reduce_options()).map(|r| r.entities.len()));
            }
            return;
        }
        Ok("graph") => {
            let o = ReportOptions { tables: Tables::GRAPH, ..ReportOptions::default() };
            for _ in 0..10 {
                black_box(render_report(&profile, &o).len());
            }
            return;
        }
        _ => {}
    }
    let report = render_report(&profile, &options);

    let write_time = time(9, || {
        let mut out = Vec::new();
        profile.write(&mut out).map(|_| out.len())
    });
    let read_time = time(9, || Profile::read(&file).map(|p| p.nodes.len()));
    let reduce_time = time(9, || reduce(&profile, &options.reduce_options()).map(|r| r.entities.len()));
    let report_time = time(9, || render_report(&profile, &options).len());
    let whole = time(9, || {
        let p = Profile::read(&file).expect("reading back");
        render_report(&p, &options).len()
    });
    let per_table: Vec<(String, Duration)> = ["leak", "bins", "direct", "graph"]
        .iter()
        .map(|t| {
            let o = ReportOptions { tables: Tables::parse(t).expect("table name"), ..ReportOptions::default() };
            (t.to_string(), time(5, || render_report(&profile, &o).len()))
        })
        .collect();
    let merged_report = time(5, || {
        let o = ReportOptions { merge_cycles: true, ..ReportOptions::default() };
        render_report(&profile, &o).len()
    });

    let clock = if cpu_now().is_some() { "CPU time of the benchmark thread" } else { "wall time" };
    println!("median of several runs, {clock}");
    let total: u64 = profile.nodes.iter().flat_map(|n| &n.counters).map(|c| c.allocs).sum();
    println!("profile: {total} allocations, {} nodes, {} distinct leaf paths", profile.nodes.len(), leaves.len());
    println!("file size: {} bytes; report: {} lines", file.len(), report.lines().count());
    println!(
        "monitor record_alloc (+free every 3rd): {:.1} ns per allocation",
        record_time.as_nanos() as f64 / ALLOCS as f64
    );
    println!("write file:             {:>8.1} ms", write_time.as_secs_f64() * 1e3);
    println!("read file:              {:>8.1} ms", read_time.as_secs_f64() * 1e3);
    println!("reduce:                 {:>8.1} ms", reduce_time.as_secs_f64() * 1e3);
    println!("reduce + print tables:  {:>8.1} ms", report_time.as_secs_f64() * 1e3);
    for (t, d) in &per_table {
        println!("  reduce + {t:<6} table: {:>8.1} ms", d.as_secs_f64() * 1e3);
    }
    println!("read + reduce + print:  {:>8.1} ms", whole.as_secs_f64() * 1e3);
    println!("  same, cycles merged:  {:>8.1} ms", merged_report.as_secs_f64() * 1e3);
    println!(
        "ratio to the paper's fastest reduction (10.3 s): 1/{:.0}",
        10.3 / whole.as_secs_f64()
    );
}
