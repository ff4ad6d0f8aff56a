//! The embedding API and the driver loop: an [`Interpreter`] owns the GC
//! arena (world + VM) and the host side, runs the VM in fuel slices, and
//! collects garbage between slices — the only place collection can happen.
//!
//! Invariants:
//! - no `Gc` pointer leaves a `mutate` call; values handed to the host are
//!   converted to [`HostValue`]s, and values kept across runs are stashed in
//!   the root's dynamic root set;
//! - requests that need the whole arena (a full collection for `room`,
//!   `(gc)` and `mprof:report`) are carried out here, between slices.

mod boot;
mod embed;
mod error;
mod limits;
mod profiling;

pub use embed::IntoArgs;
pub use error::{ErrorKind, LispError};
pub use limits::Terminator;
use limits::{HeapLimit, HeapVerdict, RunLimits, Verdict};

pub use profiling::Profiler;
mod lent_arena;

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mprof_heap::{Value, alloc};

use self::lent_arena::{LentArena, Root};
use crate::builtins;
use crate::runtime::host::{Host, Options, STDIN, STDOUT};
use crate::runtime::raise::{HostRequest, ProfileKinds, ProfileRequest};
use mprof_display::report::ReportOptions;
use crate::runtime::syms::Syms;
use crate::vm::{Env, Step, Vm};
use crate::runtime::world::{World, make_condition_types};
use crate::runtime::host_value::{HostValue, print_context, to_host};
use crate::interp::boot::{PRELUDE, init_world};

type LispArena = LentArena;

#[doc(hidden)] // the command line's and REPL's, not the embedding API
/// The condition type of a return to the top level from the interactive
/// debugger: the error was reported there already.
pub const DEBUGGER_ABORT: &str = "MPROF-SYSTEM::DEBUGGER-ABORT";

/// The embedded interpreter.
pub struct Interpreter {
    arena: LispArena,
    host: Host,
    /// The most heap objects seen alive at once (sampled between slices).
    peak_live_objects: usize,
    /// The heap limit's threshold and state (see `limits.rs`).
    heap: HeapLimit,
    /// The host's handle to end runs (shares its flag with `Host::terminate`).
    terminator: Terminator,
    /// Profiling is on (the VM keeps the profiler's context stack).
    vm_profiling: bool,
    last_sample: std::time::Instant,
    /// The time profile of the last timed run, once timing stopped.
    time_profile: Option<mprof_engine::exec::TimeProfile>,
}

impl Interpreter {
    /// An interpreter writing to the process's standard output and error.
    pub fn new(options: Options) -> Result<Interpreter, LispError> {
        Interpreter::with_io(
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
            Box::new(std::io::BufReader::new(std::io::stdin())),
            options,
        )
    }

    /// An interpreter with the given standard streams.
    pub fn with_io(
        stdout: Box<dyn Write>,
        stderr: Box<dyn Write>,
        stdin: Box<dyn BufRead>,
        options: Options,
    ) -> Result<Interpreter, LispError> {
        // The prelude runs with every capability (it may ask for the current
        // directory); the host's grant applies from the first run of its own.
        let boot_options = Options { capabilities: Default::default(), max_fuel: None, max_run_time: None, ..options.clone() };
        let host = Host::new(stdout, stderr, stdin, boot_options);
        let frame_limit = options.max_frames;
        let arena = LispArena::new(|mc| {
            let packages = alloc::packages(mc);
            let type_key = packages.intern_external(mc, packages.system, "%TYPE");
            let syms = Syms::new(mc, &packages);
            let conditions = make_condition_types(mc, &packages, type_key);
            let world = World { packages, syms, conditions, type_key };
            init_world(mc, &world);
            Root { world, vm: Vm::new(frame_limit, builtins::table()), held: crate::runtime::handles::HeldValues::new() }
        });
        // Collect less eagerly than gc-arena's default (which restarts a cycle
        // after 256 new objects): short-lived garbage is swept in larger
        // batches, while the heap still stays within about twice its live size.
        arena.metrics().set_pacing(gc_arena::metrics::Pacing {
            sleep_factor: 1.0,
            min_sleep: 1 << 16,
            ..gc_arena::metrics::Pacing::DEFAULT
        });
        let mut interp = Interpreter {
            arena,
            host,
            peak_live_objects: 0,
            heap: HeapLimit::new(options.max_heap),
            terminator: Terminator::default(),
            vm_profiling: false,
            last_sample: std::time::Instant::now(),
            time_profile: None,
        };
        // The prelude is read in MPROF-SYSTEM, which uses COMMON-LISP and
        // MPROF-EXT: the standard names it defines are COMMON-LISP's (all made by
        // `Packages::new`), and every other name it reads (helpers, parameter
        // names) stays internal to MPROF-SYSTEM.
        interp.set_package_system(true);
        for (name, src) in PRELUDE {
            interp.eval_source(src, Some(name)).map_err(|e| LispError {
                message: format!("in the prelude {name}: {}", e.message),
                ..e
            })?;
        }
        interp.set_package_system(false);
        interp.host.terminate = interp.terminator.flag();
        interp.host.options = options;
        Ok(interp)
    }

    fn set_package_system(&mut self, system: bool) {
        self.arena.mutate_root(|mc, root| {
            let p = &root.world.packages;
            let pkg = if system { p.system } else { p.user };
            alloc::symbol_set_value(mc, root.world.syms.package, Value::Package(pkg));
        });
    }

    /// The flag that interrupts a running evaluation: set it (from a signal
    /// handler or another thread) and the program gets an interactive-interrupt
    /// condition at its next slice; the interpreter clears it when it takes it.
    /// A program can handle it (as a REPL's Ctrl-C wants); to end a run that
    /// no handler can keep alive, use [`Interpreter::terminator`].
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.host.interrupt.clone()
    }

    /// A handle that ends the run in progress (or the next one) from any
    /// thread with [`ErrorKind::Terminated`]; no Lisp handler sees it.
    pub fn terminator(&self) -> Terminator {
        self.terminator.clone()
    }

    /// The options in force (limits and capabilities).
    pub fn options(&self) -> &Options {
        &self.host.options
    }

    /// Change the limits and capabilities; they hold from the next slice of
    /// the run in progress (a native may call this) or the next run. The
    /// standard streams stay as they are.
    pub fn set_options(&mut self, options: Options) {
        let frames = options.max_frames;
        if options.max_heap != self.host.options.max_heap {
            self.heap.reset(options.max_heap);
        }
        self.host.options = options;
        self.arena.mutate_root(|_mc, root| root.vm.set_frame_limit(frames));
    }

    /// Set the deepest Lisp call nesting (`Options::max_frames`) from now on.
    pub fn set_max_frames(&mut self, frames: usize) {
        let options = Options { max_frames: frames, ..self.host.options.clone() };
        self.set_options(options);
    }

    /// The command-line arguments the program sees (`MPROF-EXT:*POSIX-ARGV*`'s tail).
    pub fn set_argv(&mut self, argv: Vec<String>) {
        self.arena.mutate_root(|mc, root| {
            let p = &root.world.packages;
            let mut items = vec![alloc::string(mc, "mprof-lisp")];
            items.extend(argv.iter().map(|a| alloc::string(mc, a)));
            let list = alloc::list(mc, &items);
            if let Value::Symbol(s) = p.intern_external(mc, p.extensions, "*POSIX-ARGV*") {
                alloc::symbol_set_value(mc, s, list);
            }
        });
        self.host.argv = argv;
    }

    #[doc(hidden)] // the command line's and REPL's, not the embedding API
    /// One line from the interpreter's standard input (the one Lisp reads), without
    /// its newline; None at end of input.
    pub fn read_line(&mut self) -> Result<Option<String>, String> {
        self.host.read_line(STDIN)
    }


    /// Evaluate every form of `src`; returns the last form's values, printed
    /// as `prin1` prints them.
    pub fn eval_source(&mut self, src: &str, file: Option<&str>) -> Result<Vec<String>, LispError> {
        self.run_source(src, file)?;
        Ok(self.arena.mutate(|_mc, root| {
            let vals = root.vm.result_values();
            let pctx = print_context(&root.world, true);
            vals.iter().map(|v| mprof_heap::printer::print_to_string(*v, &pctx)).collect()
        }))
    }

    #[doc(hidden)] // the command line's and REPL's, not the embedding API
    /// Evaluate every form of `src`, keeping the last form's values for
    /// [`Interpreter::print_results`].
    pub fn run_source(&mut self, src: &str, file: Option<&str>) -> Result<(), LispError> {
        self.arena.mutate_root(|mc, root| root.vm.start_source(mc, src, file));
        self.drive()
    }

    #[doc(hidden)] // the command line's and REPL's, not the embedding API
    /// Print the last run's values on standard output as the REPL does (one
    /// per line, as `prin1`, after a newline when `newline`), by Lisp code: the
    /// output streams, print methods run, and Ctrl-C interrupts it.
    pub fn print_results(&mut self, newline: bool) -> Result<(), LispError> {
        self.arena.mutate_root(|mc, root| {
            let mut vals = root.vm.result_values();
            vals.insert(0, Value::bool(newline, root.world.t()));
            let p = &root.world.packages;
            let name = p.intern(mc, p.system, "%PRINT-VALUES");
            if let Some(f) = crate::runtime::world::function_of(name) {
                root.vm.start_call(mc, f, &vals);
            }
        });
        self.drive()
    }

    /// Evaluate a string and convert its (first) value for the host.
    pub fn eval(&mut self, src: &str) -> Result<HostValue, LispError> {
        self.arena.mutate_root(|mc, root| root.vm.start_source(mc, src, None));
        self.drive()?;
        Ok(self.arena.mutate(|_mc, root| to_host(&root.world, root.vm.result, 0)))
    }

    /// Load and evaluate a file.
    pub fn load_file(&mut self, path: &str) -> Result<(), LispError> {
        let src = std::fs::read_to_string(path)
            .map_err(|e| LispError::new(ErrorKind::Condition, "FILE-ERROR", format!("cannot read {path}: {e}")))?;
        self.eval_source(&src, Some(path)).map(|_| ())
    }

    /// Make a Rust function callable from Lisp as the global function `name`
    /// (read in CL-USER, e.g. "host-add"). Arguments and the result are
    /// converted to and from [`HostValue`]s; an `Err` becomes a Lisp error.
    pub fn register_native(
        &mut self,
        name: &str,
        f: impl FnMut(&[HostValue]) -> Result<HostValue, String> + 'static,
    ) -> Result<(), LispError> {
        let id = (crate::builtins::table().len() + self.host.natives.len()) as u32;
        let ok = self.arena.mutate_root(|mc, root| {
            let world = &root.world;
            let sym = match mprof_reader::read_one(name, 0, &Default::default()) {
                Ok(Some((d, _))) => mprof_heap::datum::datum_to_value(mc, &world.packages, world.packages.user, &d).ok(),
                _ => None,
            };
            match sym {
                Some(Value::Symbol(s)) => {
                    let f = alloc::builtin(mc, Value::Symbol(s), id);
                    alloc::symbol_set_function(mc, s, f);
                    true
                }
                _ => false,
            }
        });
        if !ok {
            return Err(LispError::new(ErrorKind::Condition, "PROGRAM-ERROR", format!("{name:?} is not a symbol name")));
        }
        self.host.natives.push((name.to_string(), Box::new(embed::catching_panics(name, f))));
        Ok(())
    }

    /// Run the VM until the current run ends, collecting between slices and
    /// holding the run to its limits (`limits.rs`).
    fn drive(&mut self) -> Result<(), LispError> {
        let mut limits = RunLimits::new(self.host.options.max_fuel, self.host.options.max_run_time);
        // Each run starts with its soft signal of the heap limit (as of fuel):
        // memory stays bounded by the limit and the reserve either way.
        self.heap.reset(self.host.options.max_heap);
        if let Some(e) = limits.before_run(&self.terminator) {
            return Err(self.end_run(e));
        }
        loop {
            let fuel = self.host.options.slice_fuel;
            let host = &mut self.host;
            let step = self.arena.mutate_root(|mc, root| {
                let Root { world, vm, .. } = root;
                let mut env = Env { mc, world, host };
                vm.run(&mut env, fuel)
            });
            let live = self.arena.metrics().total_gc_count();
            if live > self.peak_live_objects {
                self.peak_live_objects = live;
            }
            if self.arena.metrics().allocation_debt() > 1024.0 {
                self.arena.collect_debt();
                if self.vm_profiling && self.last_sample.elapsed().as_millis() >= 10 {
                    self.arena.lend(crate::profile::sample);
                    self.last_sample = std::time::Instant::now();
                }
            }
            if matches!(step, Step::Running) {
                if let Some(e) = self.check_limits(&mut limits, fuel) {
                    return Err(self.end_run(e));
                }
                // Taken only when nothing else is queued for the next slice, so
                // that a limit's signal and an interrupt never overwrite each
                // other: a flag left set is taken at a later slice.
                if self.host.interrupt.load(Ordering::SeqCst)
                    && self.arena.mutate(|_mc, root| root.vm.idle_kick())
                    && self.host.interrupt.swap(false, Ordering::SeqCst)
                {
                    self.arena.mutate_root(|_mc, root| root.vm.interrupt());
                }
            }
            match step {
                Step::Running => {}
                Step::Done => {
                    self.finished();
                    return Ok(());
                }
                Step::Error => {
                    self.finished();
                    return Err(self.error_from_result());
                }
                Step::Request(req) => match req {
                    HostRequest::FullGc => {
                        self.full_collection();
                        self.arena.mutate_root(|_mc, root| root.vm.resume(Value::Nil));
                    }
                    HostRequest::Room => {
                        self.full_collection();
                        let text = self.profiler().room_text();
                        let _ = self.host.write(STDOUT, &text);
                        self.arena.mutate_root(|_mc, root| root.vm.resume(Value::Nil));
                    }
                    HostRequest::Profile(p) => self.profile_request(p),
                    HostRequest::Exit(code) => {
                        return Err(self.end_run(LispError::new(
                            ErrorKind::Exit { code },
                            "EXIT",
                            format!("exit with code {code}"),
                        )));
                    }
                    HostRequest::FramesExhausted(limit) => return Err(self.end_run(limits::frames_exhausted(limit))),
                },
            }
        }
    }

    /// After a slice that is still running: the host's termination, the
    /// deadline, fuel and the heap. Returns the error that ends the run, if any;
    /// a soft first signal is queued in the VM instead.
    fn check_limits(&mut self, limits: &mut RunLimits, fuel: u32) -> Option<LispError> {
        match limits.after_slice(u64::from(fuel), self.host.options.max_fuel, &self.terminator) {
            Verdict::Continue => {}
            Verdict::SignalFuel(max) => self.arena.mutate_root(|_mc, root| root.vm.fuel_exhausted(max)),
            Verdict::End(e) => return Some(e),
        }
        if self.arena.lend(mprof_heap::live_bytes) as usize > self.heap.threshold {
            self.full_collection();
            let used = self.arena.lend(mprof_heap::live_bytes) as usize;
            let limit = self.host.options.max_heap;
            match self.heap.measured(used, limit) {
                HeapVerdict::Fine => {}
                HeapVerdict::Signal => self.arena.mutate_root(|_mc, root| root.vm.heap_exhausted(used, limit)),
                HeapVerdict::End(e) => return Some(e),
            }
        }
        None
    }

    /// The run ended by itself: an interrupt that came too late for it is
    /// dropped (it was meant for this run, not the next).
    fn finished(&mut self) {
        self.host.flush_all();
        self.host.interrupt.store(false, Ordering::SeqCst);
    }

    /// End the run in progress with `e`: flush, forget the VM's state (no Lisp
    /// handler or cleanup runs), and collect what the run held.
    fn end_run(&mut self, e: LispError) -> LispError {
        self.host.flush_all();
        self.arena.mutate_root(|mc, root| root.vm.reset(mc));
        if e.is_limit() {
            self.full_collection();
        }
        e
    }

    fn resume_with_string(&mut self, text: &str) {
        self.arena.mutate_root(|mc, root| {
            let s = alloc::string(mc, text);
            root.vm.resume(s)
        });
    }

    fn profile_request(&mut self, req: ProfileRequest) {
        match req {
            ProfileRequest::Start { primitives_to_caller, kinds } => {
                self.profiler().start_kinds(kinds, primitives_to_caller);
                self.arena.mutate_root(|_mc, root| {
                    let t = root.world.t();
                    root.vm.resume(t)
                });
            }
            ProfileRequest::Stop => {
                self.profiler().stop();
                self.arena.mutate_root(|_mc, root| root.vm.resume(Value::Nil));
            }
            ProfileRequest::Reset => {
                self.profiler().reset();
                self.arena.mutate_root(|_mc, root| root.vm.resume(Value::Nil));
            }
            ProfileRequest::Report(options, kinds) => {
                let text = self.profiler().report_kinds(&options, kinds);
                self.resume_with_string(&text);
            }
            ProfileRequest::Write(path) => match self.profiler().write(&path) {
                Ok(()) => self.arena.mutate_root(|_mc, root| {
                    let t = root.world.t();
                    root.vm.resume(t)
                }),
                Err(e) => self.resume_with_string(&e),
            },
        }
    }

    #[doc(hidden)] // the command line's and REPL's, not the embedding API
    /// Enter the debugger on an unhandled error (an interactive REPL): it lists the
    /// restarts, chosen by number, and a backtrace with arguments, reading its
    /// commands from the standard input. An error then ends in [`LispError`] only
    /// when the user returns to the top level (condition type
    /// [`DEBUGGER_ABORT`], already reported) or picks no restart.
    pub fn set_interactive_debugger(&mut self, on: bool) -> Result<(), LispError> {
        self.eval(if on { "(setq sys::*interactive-debugger* t)" } else { "(setq sys::*interactive-debugger* nil)" }).map(|_| ())
    }

    /// The number of heap objects alive now (including garbage not yet swept).
    pub fn live_objects(&self) -> usize {
        self.arena.metrics().total_gc_count()
    }

    /// The most heap objects alive at once so far (sampled between VM slices).
    pub fn peak_live_objects(&self) -> usize {
        self.peak_live_objects
    }

    /// Collect all garbage now (a report's "kept" is then what is reachable).
    pub fn full_collection(&mut self) {
        self.arena.finish_cycle();
        self.arena.finish_cycle();
    }

    fn error_from_result(&mut self) -> LispError {
        let (condition_type, message, backtrace) = self.arena.mutate_root(|mc, root| {
            let world = &root.world;
            let c = root.vm.result;
            let pctx = print_context(world, true);
            let type_name = match c {
                Value::Struct(s) => mprof_heap::printer::print_to_string(s.stype().name, &pctx),
                other => mprof_heap::printer::print_to_string(crate::runtime::types::type_of(
                    &mut crate::runtime::ctx::Ctx { mc, world, host: &mut Host::detached(), values: &mut Vec::new(), multiple: false },
                    other,
                ), &pctx),
            };
            let report_ctx = print_context(world, false);
            let message = crate::runtime::conditions::static_report(c, &report_ctx)
                .unwrap_or_else(|| mprof_heap::printer::print_to_string(c, &report_ctx));
            (type_name, message, (root.vm.backtrace.clone(), root.vm.error_location.clone()))
        });
        let (backtrace, location) = backtrace;
        // A condition with a Lisp :report function is reported by Lisp.
        let lisp_report = self.lisp_report();
        let message = lisp_report.unwrap_or(message);
        let kind = self.kind_of_condition(&condition_type, &message);
        LispError { kind, condition_type, message, backtrace, location }
    }

    /// The kind of an unhandled condition: a limit's first signal that no handler
    /// took is that limit's kind, a reader error carries its position.
    fn kind_of_condition(&mut self, condition_type: &str, message: &str) -> ErrorKind {
        let options = &self.host.options;
        if condition_type.ends_with("STACK-EXHAUSTED") {
            ErrorKind::Frames { limit: options.max_frames }
        } else if condition_type.ends_with("STORAGE-CONDITION") && message.starts_with("Fuel exhausted") {
            ErrorKind::Fuel { limit: options.max_fuel.unwrap_or(0) }
        } else if condition_type.ends_with("STORAGE-CONDITION") && message.starts_with("Heap exhausted") {
            let limit = options.max_heap;
            ErrorKind::Heap { used: self.arena.lend(mprof_heap::live_bytes) as usize, limit }
        } else if condition_type.ends_with("READER-ERROR")
            && let Some((_file, line, column)) = error::reader_position(message)
        {
            ErrorKind::Reader { line, column }
        } else {
            ErrorKind::Condition
        }
    }

    /// Run the prelude's report function on the unhandled condition, if the
    /// condition's type has a Lisp report function.
    fn lisp_report(&mut self) -> Option<String> {
        let has_fn = self.arena.mutate(|_mc, root| match root.vm.result {
            Value::Struct(s) => s.stype().precedence.borrow().iter().any(|n| {
                root.world.find_type(*n).map(|t| matches!(t.report.get(), Value::Function(_))).unwrap_or(false)
            }),
            _ => false,
        });
        if !has_fn {
            return None;
        }
        let ok = self.arena.mutate_root(|mc, root| {
            let c = root.vm.result;
            let f = root.world.intern_sys(mc, "%REPORT-STRING");
            match crate::runtime::world::function_of(f) {
                Some(f) => {
                    root.vm.start_call(mc, f, &[c]);
                    true
                }
                None => false,
            }
        });
        if !ok {
            return None;
        }
        if self.drive().is_err() {
            return None;
        }
        self.arena.mutate(|_mc, root| match root.vm.result {
            Value::String(s) => Some(s.borrow().to_rust_string()),
            _ => None,
        })
    }

    #[doc(hidden)] // the command line's and REPL's, not the embedding API
    /// The names of all symbols accessible in the current package (for completion).
    /// Exported symbols come before internal ones, each group in alphabetical order.
    pub fn symbol_names(&mut self) -> Vec<String> {
        self.arena.mutate(|_mc, root| {
            let pkg = match root.world.syms.package.value.get() {
                Value::Package(p) => p,
                _ => root.world.packages.user,
            };
            // (rank, name): exported symbols first, then the current package's own
            // internal ones, then package-qualified names.
            let mut names: Vec<(u8, String)> = Vec::new();
            for (k, (_, ext)) in pkg.symbols.borrow().iter() {
                names.push((if *ext { 0 } else { 1 }, k.to_lowercase()));
            }
            for used in pkg.uses.borrow().iter() {
                names.extend(used.symbols.borrow().iter().filter(|(_, (_, ext))| *ext).map(|(k, _)| (0, k.to_lowercase())));
            }
            for (name, p) in root.world.packages.by_name.borrow().iter() {
                if &*p.name() == name.as_str() {
                    for (k, (_, ext)) in p.symbols.borrow().iter() {
                        if *ext {
                            names.push((2, format!("{}:{}", name.to_lowercase(), k.to_lowercase())));
                        }
                    }
                }
            }
            names.sort();
            let mut seen = std::collections::HashSet::new();
            names.into_iter().filter(|(_, n)| seen.insert(n.clone())).map(|(_, n)| n).collect()
        })
    }

    #[doc(hidden)] // the command line's and REPL's, not the embedding API
    /// Set `*`, `**` and `***`, and `/`, `//` and `///`, after a REPL evaluation
    /// (from the values of the last run).
    pub fn record_repl_values(&mut self) {
        self.arena.mutate_root(|mc, root| {
            let s = &root.world.syms;
            let v = root.vm.result;
            alloc::symbol_set_value(mc, s.star3, s.star2.value.get());
            alloc::symbol_set_value(mc, s.star2, s.star.value.get());
            alloc::symbol_set_value(mc, s.star, v);
            let values = alloc::list(mc, &root.vm.result_values());
            let [Value::Symbol(slash), Value::Symbol(slash2), Value::Symbol(slash3)] =
                ["/", "//", "///"].map(|n| root.world.intern_cl(mc, n))
            else {
                return;
            };
            alloc::symbol_set_value(mc, slash3, slash2.value.get());
            alloc::symbol_set_value(mc, slash2, slash.value.get());
            alloc::symbol_set_value(mc, slash, values);
        });
    }
}

#[doc(hidden)] // the command line's and REPL's, not the embedding API
/// The execution tables of `kinds` that `profile` holds (time, call counts, I/O), then,
/// with `listing`, the annotated listing of every counted source. Empty when there is
/// nothing to print. Shared by the MPROF package's report and the command line.
pub fn exec_tables(
    profile: &mprof_engine::Profile,
    kinds: ProfileKinds,
    options: &ReportOptions,
    listing: Option<&mprof_listing::ListingOptions>,
) -> String {
    let listing = listing.map(|o| mprof_listing::listing::render_listings(profile, o));
    let report = mprof_display::TextReport {
        memory: mprof_display::Memory::Omit,
        time: kinds.time,
        counts: kinds.counts,
        io: kinds.io,
        listing: listing.as_deref(),
    };
    mprof_display::render_text(profile, options, &report)
}

