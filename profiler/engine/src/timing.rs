//! The time recorder: ATOM's gprof algorithm on a calling-context tree.
//!
//! The recorder keeps a model of the call stack. At every call and return it reads the
//! clock once and charges the time since the previous event to the context on top (its
//! self time), along with the interpreter instructions executed meanwhile. A call arc's
//! or a function's total time is then the sum of self times in the subtrees where it is
//! outermost on the path; reduce.rs computes exactly that ("each path once"), which is
//! ATOM's rule that a call to an already active function is timed only at its outermost
//! activation — measured per context, never estimated from call counts as Unix gprof did.
//!
//! The clock is the CPU's time-stamp counter, read inline with `rdtsc` when CPUID says
//! the counter is invariant (it ticks at a constant rate whatever the core's frequency),
//! else the monotonic clock (`Instant`). A TSC read costs about 12 ns on this machine
//! against 30 ns for `Instant::now`; reading it through the `quanta` crate cost an
//! out-of-line call and a dispatch per read (11% of a `--time` run's cycles). Ticks are
//! converted to nanoseconds at the end by comparing the counter with the monotonic clock
//! over the whole run, so no frequency table or calibration loop is needed. The cost of the
//! clock read itself is measured at start and, by default, subtracted once per event from
//! the self time being charged, so a function's self time excludes the profiler's reads;
//! the rest of the bookkeeping (a hash lookup per new call arc) is not compensated.
//!
//! Invariants: the stack holds one entry per frame the host pushed (entries of frames
//! the host calls transparent repeat the node below); node 0 is the root; nodes are
//! never removed, so ids handed out stay valid; depth is capped like the monitor's.

use rustc_hash::FxHashMap;
use std::time::Instant;

use crate::exec::{ClockInfo, TimeNode, TimeProfile};

/// The counter the recorder reads: raw ticks, scaled to nanoseconds at the end.
enum Clock {
    /// The invariant time-stamp counter (x86_64).
    Tsc,
    /// Nanoseconds of the monotonic clock since `origin`.
    Monotonic { origin: Instant },
}

impl Clock {
    fn new() -> Clock {
        #[cfg(target_arch = "x86_64")]
        {
            // CPUID leaf 0x8000_0007, EDX bit 8: invariant TSC.
            let max_extended = std::arch::x86_64::__cpuid(0x8000_0000).eax;
            if max_extended >= 0x8000_0007 && std::arch::x86_64::__cpuid(0x8000_0007).edx & (1 << 8) != 0 {
                return Clock::Tsc;
            }
        }
        Clock::Monotonic { origin: Instant::now() }
    }

    #[inline(always)]
    fn raw(&self) -> u64 {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: RDTSC exists on every x86_64 processor and has no preconditions.
            Clock::Tsc => unsafe { std::arch::x86_64::_rdtsc() },
            #[cfg(not(target_arch = "x86_64"))]
            Clock::Tsc => 0,
            Clock::Monotonic { origin } => origin.elapsed().as_nanos() as u64,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Clock::Tsc => "invariant TSC (rdtsc), scaled to CLOCK_MONOTONIC over the run",
            Clock::Monotonic { .. } => "CLOCK_MONOTONIC (no invariant TSC)",
        }
    }
}
use crate::model::{FuncId, NodeId};
use crate::monitor::MonitorOptions;

#[derive(Clone, Copy)]
struct Node {
    parent: u32,
    func: FuncId,
    depth: u32,
    calls: u64,
    recursion: u64,
    self_ticks: u64,
    instructions: u64,
    /// Events (calls and returns) charged to this node, for compensation.
    events: u64,
}

/// Records calls and returns with their times; see the module comment.
pub struct TimeRecorder {
    clock: Clock,
    options: MonitorOptions,
    nodes: Vec<Node>,
    children: FxHashMap<(u32, u32), u32>,
    stack: Vec<u32>,
    last_tick: u64,
    last_instructions: u64,
    start_tick: u64,
    start_instant: Instant,
    read_cost_ticks: f64,
    resolution_ticks: u64,
    compensate: bool,
}

impl TimeRecorder {
    /// A recorder whose clock starts now. `compensate` subtracts the measured cost of a
    /// clock read from each charged interval.
    pub fn new(options: MonitorOptions, compensate: bool) -> TimeRecorder {
        let clock = Clock::new();
        // Calibrate: the cost of a read (mean of many) and the smallest step seen.
        const READS: u64 = 2000;
        let mut resolution_ticks = u64::MAX;
        let first = clock.raw();
        let mut prev = first;
        for _ in 0..READS {
            let now = clock.raw();
            let d = now.wrapping_sub(prev);
            if d > 0 && d < resolution_ticks {
                resolution_ticks = d;
            }
            prev = now;
        }
        let read_cost_ticks = prev.wrapping_sub(first) as f64 / READS as f64;
        let root = Node { parent: 0, func: FuncId::NONE, depth: 0, calls: 0, recursion: 0, self_ticks: 0, instructions: 0, events: 0 };
        let now = clock.raw();
        TimeRecorder {
            clock,
            options,
            nodes: vec![root],
            children: FxHashMap::default(),
            stack: Vec::with_capacity(256),
            last_tick: now,
            last_instructions: 0,
            start_tick: now,
            start_instant: Instant::now(),
            read_cost_ticks,
            resolution_ticks: if resolution_ticks == u64::MAX { 1 } else { resolution_ticks },
            compensate,
        }
    }

    /// Restart the instruction count base (the host's counter value now).
    pub fn set_instructions(&mut self, instructions: u64) {
        self.last_instructions = instructions;
    }

    #[inline]
    fn top(&self) -> u32 {
        self.stack.last().copied().unwrap_or(0)
    }

    /// Charge the time and instructions since the last event to the node on top.
    #[inline]
    fn charge(&mut self, instructions: u64) {
        let now = self.clock.raw();
        let top = self.top() as usize;
        let n = &mut self.nodes[top];
        n.self_ticks = n.self_ticks.wrapping_add(now.wrapping_sub(self.last_tick));
        n.instructions = n.instructions.wrapping_add(instructions.wrapping_sub(self.last_instructions));
        n.events += 1;
        self.last_tick = now;
        self.last_instructions = instructions;
    }

    /// A call of `func`; `instructions` is the host's running instruction count.
    #[inline]
    pub fn enter(&mut self, func: FuncId, instructions: u64) {
        let parent = self.top();
        let (pfunc, pdepth) = {
            let p = &self.nodes[parent as usize];
            (p.func, p.depth)
        };
        let node = if self.options.fold_self_recursion && pfunc == func && parent != 0 {
            self.nodes[parent as usize].recursion += 1;
            parent
        } else if pdepth >= self.options.max_depth {
            parent
        } else {
            match self.children.get(&(parent, func.0)) {
                Some(&c) => c,
                None => {
                    let c = self.nodes.len() as u32;
                    self.nodes.push(Node {
                        parent,
                        func,
                        depth: pdepth + 1,
                        calls: 0,
                        recursion: 0,
                        self_ticks: 0,
                        instructions: 0,
                        events: 0,
                    });
                    self.children.insert((parent, func.0), c);
                    c
                }
            }
        };
        // A folded or capped call stays on the same node: nothing to charge yet.
        if node != parent {
            self.charge(instructions);
        }
        self.nodes[node as usize].calls += 1;
        self.stack.push(node);
    }

    /// A frame the host does not show (its time stays with the function below).
    #[inline]
    pub fn enter_transparent(&mut self) {
        let top = self.top();
        self.stack.push(top);
    }

    /// Pop to `depth` entries (a return, or a non-local exit through several frames).
    #[inline]
    pub fn truncate(&mut self, depth: usize, instructions: u64) {
        if self.stack.len() > depth {
            // Popping to the same node (transparent entries, folded recursion) needs no
            // clock read: the time stays with that node either way.
            let below = if depth == 0 { 0 } else { self.stack[depth - 1] };
            if below != self.top() {
                self.charge(instructions);
            }
            self.stack.truncate(depth);
        }
    }

    /// Number of entries on the stack.
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// The recorded profile so far (time up to now is charged to the stack's top).
    pub fn snapshot(&mut self, instructions: u64) -> TimeProfile {
        self.charge(instructions);
        let end_tick = self.last_tick;
        // The counter is scaled by the monotonic clock over the whole recording, read
        // together with the counter at both ends, so self times add up to the elapsed
        // time however far the counter's nominal frequency is off.
        let elapsed_ns = self.start_instant.elapsed().as_nanos() as u64;
        let ticks = end_tick.wrapping_sub(self.start_tick).max(1);
        let ns_per_tick = elapsed_ns as f64 / ticks as f64;
        let ns_per_tick = if ns_per_tick.is_finite() && ns_per_tick > 0.0 { ns_per_tick } else { 1.0 };
        let read_cost_ps = (self.read_cost_ticks * ns_per_tick * 1000.0) as u64;
        let compensation_ticks = if self.compensate { self.read_cost_ticks } else { 0.0 };
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let ticks = (n.self_ticks as f64 - compensation_ticks * n.events as f64).max(0.0);
                TimeNode {
                    parent: if i == 0 { None } else { Some(NodeId(n.parent)) },
                    func: n.func,
                    calls: n.calls,
                    recursion: n.recursion,
                    self_ns: (ticks * ns_per_tick) as u64,
                    instructions: n.instructions,
                }
            })
            .collect();
        TimeProfile {
            clock: ClockInfo {
                source: self.clock.name().into(),
                resolution_ps: (self.resolution_ticks as f64 * ns_per_tick * 1000.0) as u64,
                read_cost_ps,
                compensation_ps: if self.compensate { read_cost_ps } else { 0 },
                elapsed_ns,
            },
            nodes,
        }
    }

    /// Forget the recorded times (the tree is kept, counters zeroed).
    pub fn reset(&mut self, instructions: u64) {
        for n in &mut self.nodes {
            n.calls = 0;
            n.recursion = 0;
            n.self_ticks = 0;
            n.instructions = 0;
            n.events = 0;
        }
        self.last_tick = self.clock.raw();
        self.start_tick = self.last_tick;
        self.start_instant = Instant::now();
        self.last_instructions = instructions;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> TimeRecorder {
        TimeRecorder::new(MonitorOptions::default(), false)
    }

    #[test]
    fn calls_build_contexts_and_fold_self_recursion() {
        let mut r = recorder();
        let (f, g) = (FuncId(0), FuncId(1));
        r.enter(f, 0);
        r.enter(f, 10); // folded
        r.enter(g, 25);
        r.truncate(2, 30);
        r.truncate(1, 31);
        r.truncate(0, 40);
        let t = r.snapshot(40);
        assert_eq!(t.nodes.len(), 3, "root, f, f->g");
        assert_eq!((t.nodes[1].func, t.nodes[1].calls, t.nodes[1].recursion), (f, 2, 1));
        assert_eq!((t.nodes[2].func, t.nodes[2].parent, t.nodes[2].calls), (g, Some(NodeId(1)), 1));
        // Instructions: f ran 10 + 15 (before g) + 1 + 9 = 35; g ran 5.
        assert_eq!(t.nodes[1].instructions, 35);
        assert_eq!(t.nodes[2].instructions, 5);
    }

    #[test]
    fn transparent_entries_keep_time_with_the_function_below() {
        let mut r = recorder();
        r.enter(FuncId(0), 0);
        r.enter_transparent();
        assert_eq!(r.depth(), 2);
        r.truncate(1, 7);
        r.truncate(0, 9);
        let t = r.snapshot(9);
        assert_eq!(t.nodes.len(), 2);
        assert_eq!(t.nodes[1].instructions, 9);
    }

    #[test]
    fn self_times_partition_the_elapsed_time() {
        let mut r = recorder();
        r.enter(FuncId(0), 0);
        std::hint::black_box((0..20_000).map(|x: u64| x * x).sum::<u64>());
        r.enter(FuncId(1), 0);
        std::hint::black_box((0..20_000).map(|x: u64| x * x).sum::<u64>());
        r.truncate(1, 0);
        r.truncate(0, 0);
        let t = r.snapshot(0);
        let sum: u64 = t.nodes.iter().map(|n| n.self_ns).sum();
        assert!(sum > 0);
        // Without compensation the self times are the whole span, scaled to the elapsed
        // time (each node rounds down, so they may fall short by a nanosecond each).
        assert!(sum <= t.clock.elapsed_ns && sum + 3 >= t.clock.elapsed_ns, "{sum} vs {}", t.clock.elapsed_ns);
        assert!(t.clock.read_cost_ps > 0);
    }

    #[test]
    fn depth_is_capped() {
        let mut r = TimeRecorder::new(MonitorOptions { max_depth: 2, ..MonitorOptions::default() }, true);
        for f in 0..5 {
            r.enter(FuncId(f), 0);
        }
        let t = r.snapshot(0);
        assert_eq!(t.nodes.len(), 3, "root and two levels");
        assert_eq!(t.nodes[2].calls, 4, "calls beyond the cap count at the cap");
    }
}
