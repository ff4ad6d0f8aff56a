//! The embedding API's profiler: one handle, [`Interpreter::profiler`], over
//! everything an interpreter records — allocations (the memory profile),
//! time per calling context, execution counts and the I/O summary — and the
//! reports and profile file made from them.
//!
//! Invariant: the profiler's state is the interpreter's own, reached only
//! through its lent arena (`lent_arena.rs`), so two interpreters profile
//! independently, on one thread or several.

use mprof_display::report::ReportOptions;
use mprof_engine::monitor::{MonitorOptions, Totals};
use mprof_engine::timing::TimeRecorder;

use super::lent_arena::Root;
use super::{Interpreter, exec_tables};
use crate::runtime::raise::ProfileKinds;

/// The profiler of one interpreter (see [`Interpreter::profiler`]).
pub struct Profiler<'a> {
    lisp: &'a mut Interpreter,
}

impl Interpreter {
    /// The profiler: start and stop recording, reset, report, write the profile file.
    pub fn profiler(&mut self) -> Profiler<'_> {
        Profiler { lisp: self }
    }
}

impl Profiler<'_> {
    /// Start recording allocations (the MPROF package's start). `options`
    /// configures the calling-context tree when given (before any recording).
    pub fn start(&mut self, options: Option<MonitorOptions>, primitives_to_caller: bool) {
        self.lisp.arena.lend(|| {
            if let Some(o) = options {
                crate::profile::configure(o, primitives_to_caller);
            } else {
                crate::profile::with_state(|st| st.primitives_to_caller = primitives_to_caller);
            }
            crate::profile::set_mode(crate::profile::Mode::Profiling);
        });
        self.sync_vm();
    }

    /// Configure the calling-context tree (call sites, depth, folding) and whether
    /// builtins are charged to their caller, before anything is recorded.
    pub fn configure(&mut self, options: MonitorOptions, primitives_to_caller: bool) {
        self.lisp.arena.lend(|| crate::profile::configure(options, primitives_to_caller));
    }

    /// Show the interpreter's own helpers in profiles (SYS::%... functions and the
    /// expansion of the prelude's macros), instead of charging them to the Lisp
    /// function or form that uses them (the default).
    pub fn show_internals(&mut self, show: bool) {
        self.lisp.arena.lend(|| crate::profile::with_state(|st| st.show_internals = show));
        self.sync_vm();
    }

    /// A `key: value` line for the profile file's header (the program run, say).
    pub fn set_metadata(&mut self, key: &str, value: &str) {
        self.lisp.arena.lend(|| crate::profile::set_metadata(key, value));
    }

    /// Start counting reads, writes and opens per stream (the I/O summary).
    pub fn io_start(&mut self) {
        if self.lisp.host.io.is_none() {
            self.lisp.host.io = Some(crate::runtime::host::IoStats::default());
        }
    }

    /// The totals of the memory profile recorded so far.
    pub fn memory_totals(&mut self) -> Totals {
        self.lisp.arena.lend(crate::profile::totals)
    }

    /// Start recording the kinds of profile asked for (the MPROF package's start).
    pub fn start_kinds(&mut self, kinds: ProfileKinds, primitives_to_caller: bool) {
        if kinds.io && self.lisp.host.io.is_none() {
            self.lisp.host.io = Some(crate::runtime::host::IoStats::default());
        }
        if kinds.counts {
            self.count_start();
        }
        if kinds.memory {
            self.start(None, primitives_to_caller);
        }
        if kinds.time {
            self.time_start(true);
        }
    }

    #[doc(hidden)] // the command line's
    /// The report of the kinds asked for: memory tables, time tables, call counts
    /// with the annotated listings, input/output summary.
    pub fn report_kinds(&mut self, options: &ReportOptions, kinds: ProfileKinds) -> String {
        let mut text = String::new();
        if kinds.memory {
            text.push_str(&self.report(options));
        }
        if kinds.time || kinds.counts || kinds.io {
            let profile = self.full_profile();
            let listing = mprof_listing::ListingOptions::default();
            let exec = exec_tables(&profile, kinds, options, kinds.counts.then_some(&listing));
            if exec.is_empty() {
                text.push_str(";; no execution profile recorded: start one with (mprof:start :time t) or :counts t\n");
            } else {
                text.push_str(&exec);
            }
        }
        text
    }

    /// Keep the VM's memory context stack while memory is being profiled.
    pub(super) fn sync_vm(&mut self) {
        let on = self.lisp.arena.lend(crate::profile::mode) == crate::profile::Mode::Profiling;
        self.lisp.vm_profiling = on;
        self.lisp.arena.mutate_root(|_mc, root| {
            let Root { world, vm, .. } = root;
            vm.set_profiling(on, world)
        });
    }

    /// Start measuring time per calling context (`--time`). `compensate` subtracts
    /// the measured cost of the clock reads.
    pub fn time_start(&mut self, compensate: bool) {
        let recorder = Box::new(TimeRecorder::new(self.lisp.arena.lend(crate::profile::monitor_options), compensate));
        self.lisp.time_profile = None;
        self.lisp.arena.mutate_root(|_mc, root| {
            let Root { world, vm, .. } = root;
            vm.set_timing(Some(recorder), world);
        });
    }

    /// Place execution counters in code loaded from files from now on (`--count`).
    pub fn count_start(&mut self) {
        self.lisp.arena.mutate_root(|_mc, root| root.vm.counting = true);
    }

    /// Forget everything recorded so far — allocations, times, counts, I/O — while
    /// recording goes on as it was.
    pub fn reset(&mut self) {
        self.lisp.arena.lend(crate::profile::reset);
        self.lisp.time_profile = None;
        self.lisp.arena.mutate_root(|_mc, root| root.vm.reset_exec_profiles());
        if self.lisp.host.io.is_some() {
            self.lisp.host.io = Some(crate::runtime::host::IoStats::default());
        }
    }

    /// Stop recording everything: allocations, time and counts (what was recorded is kept).
    pub fn stop(&mut self) {
        self.lisp.arena.lend(|| crate::profile::set_mode(crate::profile::Mode::Off));
        let stopped = self.lisp.arena.mutate_root(|_mc, root| {
            let Root { world, vm, .. } = root;
            vm.counting = false;
            let instructions = vm.instructions();
            vm.set_timing(None, world).map(|mut t| t.snapshot(instructions))
        });
        if stopped.is_some() {
            self.lisp.time_profile = stopped;
        }
        self.sync_vm();
    }

    /// Everything recorded so far: the memory profile with the execution profiles
    /// (time, counts, I/O) beside it.
    pub fn full_profile(&mut self) -> mprof_engine::Profile {
        let mut p = self.lisp.arena.lend(crate::profile::profile);
        let running = self.lisp.arena.mutate_root(|_mc, root| root.vm.time_snapshot());
        p.exec.time = running.or_else(|| self.lisp.time_profile.clone());
        let (sources, counts) = self.lisp.arena.mutate(|_mc, root| root.vm.count_registry.to_exec(&root.vm.counts));
        p.exec.sources = sources;
        p.exec.counts = counts;
        p.exec.io = self.lisp.host.io_rows();
        p
    }

    /// Collect all garbage (so kept bytes are reachable bytes), then render the tables.
    pub fn report(&mut self, options: &ReportOptions) -> String {
        self.lisp.full_collection();
        self.lisp.arena.lend(|| {
            crate::profile::sample();
            crate::profile::report(options)
        })
    }

    /// Collect, then write the profile file.
    pub fn write(&mut self, path: &str) -> Result<(), String> {
        self.lisp.full_collection();
        self.lisp.arena.lend(crate::profile::sample);
        let profile = self.full_profile();
        let mut bytes = Vec::new();
        profile.write(&mut bytes).map_err(|e| e.to_string())?;
        mprof_engine::save_file(std::path::Path::new(path), &bytes).map_err(|e| e.to_string())
    }

    /// Live objects and bytes per category (exact while allocations are being
    /// counted or profiled; otherwise only the heap's object count).
    pub fn room_text(&mut self) -> String {
        let live = self.lisp.live_objects();
        let mode = self.lisp.arena.lend(crate::profile::mode);
        let mut out = format!("Heap: {live} objects live.\n");
        if mode == crate::profile::Mode::Off {
            out.push_str("Allocation counting is off; (mprof:start) or (time ...) counts objects by category.\n");
            return out;
        }
        let c = self.lisp.arena.lend(crate::profile::counts);
        out.push_str("Since counting began:    live objects     live bytes   allocated bytes\n");
        for (i, name) in crate::profile::CATEGORY_NAMES.iter().enumerate() {
            let objs = c.allocated_objects[i].saturating_sub(c.freed_objects[i]);
            let bytes = c.allocated_bytes[i].saturating_sub(c.freed_bytes[i]);
            out.push_str(&format!("  {name:<18}{objs:>16}{bytes:>15}{:>18}\n", c.allocated_bytes[i]));
        }
        out
    }
}
