//! The stackless VM. Its whole state (value stack, frames, dynamic stack,
//! values register, pending unwinds) lives in the arena root; [`Vm::run`]
//! executes at most a given amount of fuel and returns, so the driver can let
//! the collector work between slices.
//!
//! Invariants:
//! - Lisp calls push a [`Frame`] and never recurse on the Rust stack; the Rust
//!   stack depth of `run` does not depend on the Lisp program.
//! - Frames are Lisp frames or native continuations ([`Cont`]); a value
//!   returned into a native frame resumes it (compilation after a macro
//!   expansion, the next form of a source text, the end of a run).
//! - Every dynamic entry (special binding, catch, unwind-protect) records the
//!   frame and stack height it belongs to; non-local exits pop entries one by
//!   one, undoing bindings and running cleanups, so no exit skips a cleanup.
//! - A builtin never runs Lisp code; errors it raises become condition
//!   objects passed to the Lisp function ERROR.

use std::rc::Rc;

use gc_arena::{Collect, Gc, Mutation};
use mprof_heap::code::{Op, Proto};
use crate::counting::{CountCtx, CountRegistry, SpanTable};
use mprof_engine::model::FuncId;
use mprof_engine::timing::TimeRecorder;
use mprof_heap::value::{Function, Ptr, SYM_MACRO, Symbol};
use mprof_heap::{Value, alloc};

use crate::builtins::{self, Kind, Special};
use crate::compiler::{self, CompileError};
use crate::ctx::Ctx;
use crate::host::Host;
use crate::printing::{self, PrintFn, PrintTask};
use crate::raise::{ErrorKind, HostRequest, Raise};
use crate::world::World;

/// What a frame is: a Lisp function's, or a native continuation (boxed, so
/// frames stay small: a deep recursion holds one frame per call).
#[derive(Collect)]
#[collect(no_drop)]
pub enum Cont<'gc> {
    /// A Lisp function's frame.
    Lisp,
    Native(Box<Native<'gc>>),
}

/// A native continuation: Rust code resumed when a value is returned into it.
#[derive(Collect)]
#[collect(no_drop)]
pub enum Native<'gc> {
    /// The bottom of a run: a value returned into it ends the run.
    Toplevel,
    /// Macro expanders are running, one after another, for the calls one
    /// compilation pass of `form` (or a discovery round, see compiler::discover)
    /// found unexpanded: `next` is the pair of `needs` whose expander is running.
    Expansion {
        needs: compiler::Needs<'gc>,
        #[collect(require_static)]
        next: usize,
        form: Value<'gc>,
        #[collect(require_static)]
        mark: u32,
    },
    /// A MACROLET expander function is being made for definition `key`.
    MacroFunction {
        key: Value<'gc>,
        form: Value<'gc>,
        #[collect(require_static)]
        mark: u32,
    },
    /// Evaluating the forms of a source text one after another.
    LoadSource {
        #[collect(require_static)]
        text: Rc<str>,
        #[collect(require_static)]
        offset: usize,
        #[collect(require_static)]
        file: Option<Rc<str>>,
        /// Forms queued by a top-level PROGN.
        queued: Value<'gc>,
        last: Value<'gc>,
        #[collect(require_static)]
        dyn_mark: u32,
    },
    /// A macro expander called by macroexpand-1: its result is the first value.
    Macroexpand,
    /// A print waiting for a print method it called (printing.rs).
    Print(PrintTask<'gc>),
    /// A FORMAT waiting for the texts of objects printed by Lisp methods:
    /// each is printed to a string in turn, then FORMAT runs again.
    Format {
        args: Vec<Value<'gc>>,
        texts: Vec<FormatText<'gc>>,
        /// Objects still to print, with their escape, last first.
        pending: Vec<FormatText<'gc>>,
    },
}

/// An object FORMAT prints with a Lisp method, and its text once known.
#[derive(Collect)]
#[collect(no_drop)]
pub struct FormatText<'gc> {
    pub object: Value<'gc>,
    #[collect(require_static)]
    pub escape: bool,
    #[collect(require_static)]
    pub text: String,
}

#[derive(Collect)]
#[collect(no_drop)]
pub struct Frame<'gc> {
    /// The function running (a Function value), NIL for native frames.
    pub func: Value<'gc>,
    pub proto: Option<Ptr<'gc, Proto<'gc>>>,
    #[collect(require_static)]
    pub pc: u32,
    /// First slot.
    #[collect(require_static)]
    pub base: u32,
    /// Stack height to cut back to on return (below the function and arguments).
    #[collect(require_static)]
    pub ret: u32,
    pub cont: Cont<'gc>,
}

#[derive(Collect)]
#[collect(no_drop)]
pub enum DynEntry<'gc> {
    Special { sym: Ptr<'gc, Symbol<'gc>>, old: Value<'gc> },
    Catch {
        tag: Value<'gc>,
        #[collect(require_static)]
        frame: u32,
        #[collect(require_static)]
        height: u32,
        #[collect(require_static)]
        pc: u32,
    },
    UnwindProtect {
        #[collect(require_static)]
        frame: u32,
        #[collect(require_static)]
        height: u32,
        #[collect(require_static)]
        pc: u32,
    },
}

/// Where an exit in progress is going: a catch (by index in the dynamic
/// stack) or, for an abort, all the way out.
#[derive(Collect, Clone, Copy, Debug, PartialEq, Eq)]
#[collect(require_static)]
pub enum ExitTarget {
    Catch(usize),
    Abort,
}

#[derive(Collect)]
#[collect(no_drop)]
pub enum Pending<'gc> {
    /// The protected form ended normally; restore its values after the cleanup.
    Normal {
        values: Vec<Value<'gc>>,
        #[collect(require_static)]
        single: bool,
        #[collect(require_static)]
        dyn_len: u32,
    },
    /// An exit passes through this cleanup; resume it afterwards.
    Exit {
        target: ExitTarget,
        values: Vec<Value<'gc>>,
        #[collect(require_static)]
        dyn_len: u32,
    },
}

/// How a slice of running ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Out of fuel: call `run` again.
    Running,
    /// The run finished; its value is `Vm::result` (values in the register).
    Done,
    /// An error no handler took; the condition is `Vm::result`, the backtrace `Vm::backtrace`.
    Error,
    /// The driver must do this, then call [`Vm::resume`].
    Request(HostRequest),
}

#[derive(Collect)]
#[collect(no_drop)]
pub struct Vm<'gc> {
    pub stack: Vec<Value<'gc>>,
    pub frames: Vec<Frame<'gc>>,
    pub dyn_stack: Vec<DynEntry<'gc>>,
    /// The values register. When `values_single`, it holds just the primary value.
    pub values: Vec<Value<'gc>>,
    #[collect(require_static)]
    pub values_single: bool,
    pub pending: Vec<Pending<'gc>>,
    /// Macro expansions of the compilations in progress.
    pub expansions: compiler::expansions::ExpansionTable<'gc>,
    /// Forms the compiler synthesized, kept for the run (see compiler::Synthesized).
    pub synthesized: Vec<(Value<'gc>, u32, Value<'gc>)>,
    #[collect(require_static)]
    pub next_tag: i64,
    /// The result of the last run, or the unhandled condition.
    pub result: Value<'gc>,
    /// Function names, innermost first, captured when an error went unhandled.
    #[collect(require_static)]
    pub backtrace: Vec<String>,
    /// `file:line` of the top-level form that was running when an error went unhandled
    /// (None for forms typed at the REPL or given with `-e`).
    #[collect(require_static)]
    pub error_location: Option<String>,
    #[collect(require_static)]
    pub frame_limit: usize,
    #[collect(require_static)]
    aborting: bool,
    /// Work to do when `run` is next entered (it needs the world at hand).
    pub kick: Kick<'gc>,
    /// Set when the run ended (done, error) during a slice.
    #[collect(require_static)]
    finished: Option<Step>,
    /// The configured frame limit (`frame_limit` is raised by a margin while a
    /// stack-exhausted error is being handled).
    #[collect(require_static)]
    base_frame_limit: usize,
    /// Where the form being compiled came from (for function names and lines).
    #[collect(require_static)]
    compile_file: Option<Rc<str>>,
    #[collect(require_static)]
    compile_line: u32,
    /// Some profile wants call and return events (memory or time).
    #[collect(require_static)]
    pub profiling: bool,
    /// Keep the memory profiler's context stack in step with the frames.
    #[collect(require_static)]
    memory_profiling: bool,
    /// The memory profiler's calling-context stack while `memory_profiling`.
    #[collect(require_static)]
    context: Option<crate::profile::ContextStack>,
    /// The time recorder, fed directly by calls and returns (no thread-local access).
    #[collect(require_static)]
    time: Option<Box<TimeRecorder>>,
    #[collect(require_static)]
    primitives_to_caller: bool,
    /// Show the system's own helpers (SYS::%... functions, the expansion of the
    /// prelude's macros) in profiles instead of charging them to their caller.
    show_internals: bool,
    /// While a prelude macro is being expanded for the compiler: the index of the
    /// expander's frame. It and every frame above it are transparent to the
    /// profiles, so an expansion is charged to the form being compiled.
    internal_from: Option<usize>,
    /// The profiler's monitor generation, so cached function ids are checked
    /// without touching the profiler's state.
    #[collect(require_static)]
    prof_generation: u32,
    /// The profiler's cached function ids of builtins, by builtin id.
    #[collect(require_static)]
    builtin_prof_ids: Vec<u64>,
    /// Place execution counters in code compiled from source files (counting.rs), and
    /// let the counters of code compiled so count.
    #[collect(require_static)]
    pub counting: bool,
    /// Execution counts, indexed by count point id.
    #[collect(require_static)]
    pub counts: Vec<u64>,
    #[collect(require_static)]
    pub count_registry: CountRegistry,
    /// Spans of the lists of the top-level form being compiled, and those lists, kept
    /// alive so that no other cons can take their addresses meanwhile.
    #[collect(require_static)]
    count_spans: SpanTable,
    count_span_roots: Vec<Value<'gc>>,
    /// The text of the load whose source index is known, and that index. Holding the
    /// text keeps its address from being reused by another load's text.
    #[collect(require_static)]
    count_source: Option<(Rc<str>, u32)>,
    /// Instructions executed before the current slice, the slice's fuel, and the fuel
    /// left at the last call or return: together the running instruction count.
    #[collect(require_static)]
    instr_base: u64,
    #[collect(require_static)]
    slice_fuel: i64,
    #[collect(require_static)]
    fuel_now: i64,
}

/// Work queued for the next entry into `run`.
#[derive(Collect)]
#[collect(no_drop)]
pub enum Kick<'gc> {
    None,
    /// Take the next step of the LoadSource frame on top.
    LoadStep,
    /// Call the function below `nargs` arguments on top of the stack.
    Call(#[collect(require_static)] u32),
    /// Deliver this value to the frame on top (after a host request).
    Deliver(Value<'gc>),
    /// Signal this interrupt condition at the current point.
    Interrupt,
    /// Signal a storage-condition: the heap holds this many bytes, past its limit.
    HeapExhausted(#[collect(require_static)] usize, #[collect(require_static)] usize),
    /// Signal a storage-condition: the run used up this much fuel.
    FuelExhausted(#[collect(require_static)] u64),
}

type VResult<'gc> = Result<(), Raise<'gc>>;

impl<'gc> Vm<'gc> {
    pub fn new(frame_limit: usize) -> Self {
        Vm {
            stack: Vec::with_capacity(1024),
            frames: Vec::with_capacity(256),
            dyn_stack: Vec::new(),
            values: Vec::new(),
            values_single: true,
            pending: Vec::new(),
            expansions: Default::default(),
            synthesized: Vec::new(),
            next_tag: 1,
            result: Value::Nil,
            backtrace: Vec::new(),
            error_location: None,
            frame_limit,
            aborting: false,
            kick: Kick::None,
            finished: None,
            base_frame_limit: frame_limit,
            compile_file: None,
            compile_line: 0,
            profiling: false,
            memory_profiling: false,
            context: None,
            time: None,
            primitives_to_caller: false,
            show_internals: false,
            internal_from: None,
            prof_generation: 0,
            builtin_prof_ids: Vec::new(),
            counting: false,
            counts: Vec::new(),
            count_registry: CountRegistry::default(),
            count_spans: SpanTable::default(),
            count_span_roots: Vec::new(),
            count_source: None,
            instr_base: 0,
            slice_fuel: 0,
            fuel_now: 0,
        }
    }

    /// Instructions executed so far (exact at calls and returns, which is when the
    /// time profiler asks).
    pub fn instructions(&self) -> u64 {
        self.instr_base.wrapping_add((self.slice_fuel - self.fuel_now) as u64)
    }

    /// All values of the last result (from the register).
    pub fn result_values(&self) -> Vec<Value<'gc>> {
        if self.values_single { vec![self.result] } else { self.values.clone() }
    }

    /// Forget everything in progress (after an abort or before a new run).
    /// Special bindings left on the dynamic stack are undone.
    pub fn reset(&mut self, mc: &Mutation<'gc>) {
        while let Some(e) = self.dyn_stack.pop() {
            if let DynEntry::Special { sym, old } = e {
                alloc::symbol_set_value(mc, sym, old);
            }
        }
        self.stack.clear();
        self.truncate_frames(0);
        self.pending.clear();
        self.expansions.clear();
        self.synthesized.clear();
        self.aborting = false;
        self.kick = Kick::None;
        self.values_single = true;
        self.finished = None;
        self.frame_limit = self.base_frame_limit;
    }

    /// Start evaluating every form of a source text in order. The run's result
    /// is the last form's value (with its values in the register).
    pub fn start_source(&mut self, mc: &Mutation<'gc>, text: &str, file: Option<&str>) {
        self.reset(mc);
        self.push_native(Native::Toplevel);
        self.push_native(Native::LoadSource {
            text: Rc::from(text),
            offset: 0,
            file: file.map(Rc::from),
            queued: Value::Nil,
            last: Value::Nil,
            dyn_mark: 0,
        });
        self.kick = Kick::LoadStep;
    }

    /// Start calling a function with arguments (embedding API).
    pub fn start_call(&mut self, mc: &Mutation<'gc>, f: Value<'gc>, args: &[Value<'gc>]) {
        self.reset(mc);
        self.push_native(Native::Toplevel);
        self.stack.push(f);
        self.stack.extend_from_slice(args);
        self.kick = Kick::Call(args.len() as u32);
    }

    /// Resume after a host request, delivering `value` as the request's result.
    pub fn resume(&mut self, value: Value<'gc>) {
        self.kick = Kick::Deliver(value);
    }

    /// Signal a storage-condition at the program's next step: the heap holds
    /// `used` bytes after a full collection, more than `limit`.
    pub fn heap_exhausted(&mut self, used: usize, limit: usize) {
        if !self.frames.is_empty() {
            self.kick = Kick::HeapExhausted(used, limit);
        }
    }

    /// Signal a storage-condition at the program's next step: the run executed
    /// its `limit` of VM instructions (the embedding API's max_fuel).
    pub fn fuel_exhausted(&mut self, limit: u64) {
        if !self.frames.is_empty() {
            self.kick = Kick::FuelExhausted(limit);
        }
    }

    /// Interrupt the running program at its next step (Ctrl-C).
    pub fn interrupt(&mut self) {
        if !self.frames.is_empty() {
            self.kick = Kick::Interrupt;
        }
    }

    fn push_native(&mut self, native: Native<'gc>) {
        let h = self.stack.len() as u32;
        let cont = Cont::Native(Box::new(native));
        self.frames.push(Frame { func: Value::Nil, proto: None, pc: 0, base: h, ret: h, cont });
        if self.profiling {
            self.hook_enter(None);
        }
    }

    fn pop_frame(&mut self) -> Option<Frame<'gc>> {
        let f = self.frames.pop();
        if self.profiling {
            self.hook_truncate(self.frames.len());
        }
        f
    }

    fn truncate_frames(&mut self, n: usize) {
        self.frames.truncate(n);
        if self.profiling {
            self.hook_truncate(n);
        }
    }

    /// A frame was pushed: tell the profiles that want it. `None` is a frame they do
    /// not show (native frames, primitives charged to their caller).
    #[inline]
    fn hook_enter(&mut self, func: Option<FuncId>) {
        let func = self.shown(func);
        if let Some(c) = &self.context {
            match func {
                Some(f) => c.push_function(f, self.caller_site()),
                None => c.push_transparent(),
            }
        }
        if self.time.is_some() {
            self.time_enter(func);
        }
    }

    /// `func` as the profiles show it: `None` (transparent) inside the expansion
    /// of a prelude macro (see `internal_from`).
    #[inline]
    fn shown(&self, func: Option<FuncId>) -> Option<FuncId> {
        match self.internal_from {
            Some(from) if self.frames.len() > from => None,
            _ => func,
        }
    }

    /// The time recorder's part of [`Vm::hook_enter`], out of line so the memory
    /// profiler's common path stays small enough to inline.
    #[inline(never)]
    fn time_enter(&mut self, func: Option<FuncId>) {
        let instructions = self.instructions();
        if let Some(t) = self.time.as_deref_mut() {
            match func {
                Some(f) => t.enter(f, instructions),
                None => t.enter_transparent(),
            }
        }
    }

    /// Frames were popped down to `n`.
    #[inline]
    fn hook_truncate(&mut self, n: usize) {
        if self.internal_from.is_some_and(|from| n <= from) {
            self.internal_from = None;
        }
        if let Some(c) = &self.context {
            c.truncate(n);
        }
        if self.time.is_some() {
            self.time_truncate(n);
        }
    }

    /// The time recorder's part of [`Vm::hook_truncate`] (see [`Vm::time_enter`]).
    #[inline(never)]
    fn time_truncate(&mut self, n: usize) {
        let instructions = self.instructions();
        if let Some(t) = self.time.as_deref_mut() {
            t.truncate(n, instructions);
        }
    }

    fn refresh_profiling(&mut self) {
        self.profiling = self.memory_profiling || self.time.is_some();
        self.primitives_to_caller = crate::profile::primitives_to_caller();
        self.show_internals = crate::profile::show_internals();
        self.prof_generation = crate::profile::generation();
    }

    /// The profiler function of each running frame, outermost first.
    fn running_functions(&mut self, world: &World<'gc>) -> Vec<Option<FuncId>> {
        (0..self.frames.len())
            .map(|i| match self.frames[i].proto {
                Some(p) => self.proto_function(p, world),
                None => None,
            })
            .collect()
    }

    /// Start or stop keeping the memory profiler's context stack; when starting,
    /// push an entry for every frame already running.
    pub fn set_profiling(&mut self, on: bool, world: &World<'gc>) {
        self.memory_profiling = on;
        self.refresh_profiling();
        let context = crate::profile::context_stack();
        context.truncate(0);
        if !on {
            self.context = None;
            return;
        }
        for (i, f) in self.running_functions(world).into_iter().enumerate() {
            let site = self.frames.get(i.wrapping_sub(1)).map(|f| f.pc as u64).unwrap_or(0);
            match f {
                Some(f) => context.push_function(f, site),
                None => context.push_transparent(),
            }
        }
        self.context = Some(context);
    }

    /// Install (or, with `None`, remove) the time recorder; returns the one it replaces.
    /// A new recorder gets an entry for every frame already running.
    pub fn set_timing(&mut self, recorder: Option<Box<TimeRecorder>>, world: &World<'gc>) -> Option<Box<TimeRecorder>> {
        let old = std::mem::replace(&mut self.time, recorder);
        self.refresh_profiling();
        if self.time.is_some() {
            let running = self.running_functions(world);
            let instructions = self.instructions();
            if let Some(t) = self.time.as_deref_mut() {
                t.set_instructions(instructions);
                for f in running {
                    match f {
                        Some(f) => t.enter(f, instructions),
                        None => t.enter_transparent(),
                    }
                }
            }
        }
        old
    }

    /// Forget the execution counts and the times recorded so far (the MPROF package's
    /// reset); recording goes on if it was on.
    pub fn reset_exec_profiles(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        let instructions = self.instructions();
        if let Some(t) = self.time.as_deref_mut() {
            t.reset(instructions);
        }
    }

    /// The time profile recorded so far, if time is being recorded.
    pub fn time_snapshot(&mut self) -> Option<mprof_engine::exec::TimeProfile> {
        let instructions = self.instructions();
        self.time.as_deref_mut().map(|t| t.snapshot(instructions))
    }

    /// The profiler's function for a compiled function (None: charged to its caller).
    fn proto_function(&mut self, proto: Ptr<'gc, Proto<'gc>>, world: &World<'gc>) -> Option<FuncId> {
        let p = &Gc::as_ref(proto).val;
        let prelude = from_prelude(&p.info);
        if prelude && (self.primitives_to_caller || (!self.show_internals && is_system_name(p.name, world))) {
            return None;
        }
        let cached = p.prof_id.get();
        if cached >> 32 == self.prof_generation as u64 && cached & 0xffff_ffff != 0 {
            if cached & 0xffff_ffff == TRANSPARENT_ID {
                return None;
            }
            return Some(FuncId((cached & 0xffff_ffff) as u32 - 1));
        }
        // CLOS's effective-method closures are transparent: what they
        // allocate is charged to the generic function calling them.
        if matches!(p.name, Value::Symbol(s) if &*s.name == "%EFFECTIVE-METHOD") {
            p.prof_id.set(((self.prof_generation as u64) << 32) | TRANSPARENT_ID);
            return None;
        }
        let (id, cache) = crate::profile::function_id(cached, || function_info(p, world));
        p.prof_id.set(cache);
        Some(id)
    }

    /// Push the profiler entry of a compiled function.
    fn prof_push_proto(&mut self, proto: Ptr<'gc, Proto<'gc>>, world: &World<'gc>) {
        let f = self.proto_function(proto, world);
        self.hook_enter(f);
    }

    /// The call site of the call being made: the saved pc of the nearest Lisp
    /// frame below the top (the caller), for call-site distinction.
    fn caller_site(&self) -> u64 {
        let n = self.frames.len();
        let below = if n >= 2 && self.frames[n - 1].proto.is_some() { n - 2 } else { n.saturating_sub(1) };
        self.frames.get(below).map(|f| f.pc as u64).unwrap_or(0)
    }

    /// The call site of a builtin being called: it gets no frame, so its caller
    /// is the top frame, whose pc was saved by the call.
    #[inline]
    fn builtin_call_site(&self) -> u64 {
        self.frames.last().map(|f| f.pc as u64).unwrap_or(0)
    }

    /// Push the profiler entry of a builtin being called; returns false when it
    /// gets none (its allocations are then charged to the caller's entry).
    #[inline]
    fn prof_push_builtin(&mut self, id: u32) -> bool {
        if self.primitives_to_caller {
            return false;
        }
        let cached = self.builtin_prof_ids.get(id as usize).copied().unwrap_or(0);
        let fid = if cached >> 32 == self.prof_generation as u64 && cached & 0xffff_ffff != 0 {
            if cached & 0xffff_ffff == TRANSPARENT_ID {
                return false;
            }
            FuncId((cached & 0xffff_ffff) as u32 - 1)
        } else {
            match self.builtin_function_id(id) {
                Some(fid) => fid,
                None => return false,
            }
        };
        let func = self.shown(Some(fid));
        // A transparent builtin needs no entry: its caller's stands for it.
        if let (Some(c), Some(f)) = (&self.context, func) {
            c.begin_builtin(f, self.builtin_call_site());
        }
        if self.time.is_some() {
            self.time_enter(func);
        }
        true
    }

    /// The builtin entered by [`Vm::prof_push_builtin`] returned.
    #[inline]
    fn prof_pop_builtin(&mut self) {
        let n = self.frames.len();
        if let Some(c) = &self.context {
            c.end_builtin(n);
        }
        if self.time.is_some() {
            self.time_truncate(n);
        }
    }

    /// The profiler's function id of builtin `id`, interned and cached (the first
    /// call of a builtin under a monitor); `None` for the system's internal
    /// helpers (structure constructors' %MAKE-INSTANCE...), which get no entry:
    /// they are charged to the Lisp function calling them.
    #[inline(never)]
    fn builtin_function_id(&mut self, id: u32) -> Option<FuncId> {
        let i = id as usize;
        if self.builtin_prof_ids.len() <= i {
            self.builtin_prof_ids.resize(i + 1, 0);
        }
        if builtins::table().get(i).is_some_and(|d| d.package == builtins::Pkg::Sys) {
            self.builtin_prof_ids[i] = ((self.prof_generation as u64) << 32) | TRANSPARENT_ID;
            return None;
        }
        let (fid, cache) = crate::profile::function_id(self.builtin_prof_ids[i], || {
            let name = builtins::table().get(i).map(|d| d.name).unwrap_or("?");
            mprof_engine::monitor::FunctionInfo { name: name.to_string(), file: None, line: None, module: None }
        });
        self.builtin_prof_ids[i] = cache;
        Some(fid)
    }
}

/// Whether a function was compiled from the prelude (its file is named `prelude/...`).
fn from_prelude(info: &mprof_heap::code::ProtoInfo) -> bool {
    info.file.as_deref().is_some_and(|f| f.starts_with("prelude/"))
}

/// Whether a function's name is one of the system's own (its home package is SYSTEM).
fn is_system_name<'gc>(name: Value<'gc>, world: &World<'gc>) -> bool {
    matches!(name, Value::Symbol(s) if s.package.get().is_some_and(|p| Gc::ptr_eq(p, world.packages.system)))
}

impl<'gc> Vm<'gc> {
    /// About to call `expander` for the compiler: when it is one of the prelude's
    /// macros (DEFSTRUCT, LOOP...) and internals are hidden, make its frame and all
    /// above it transparent, so the expansion's allocations and time go to the form
    /// being compiled.
    fn hide_prelude_expansion(&mut self, expander: Value<'gc>) {
        if self.show_internals || self.internal_from.is_some() {
            return;
        }
        let prelude = match expander {
            Value::Function(f) => match &f.val {
                Function::Closure(c) => from_prelude(&c.proto.info),
                _ => false,
            },
            _ => false,
        };
        if prelude {
            self.internal_from = Some(self.frames.len());
        }
    }
}

/// Everything `run` needs besides the VM.
pub struct Env<'a, 'gc> {
    pub mc: &'a Mutation<'gc>,
    pub world: &'a World<'gc>,
    pub host: &'a mut Host,
}

impl<'gc> Vm<'gc> {
    /// Run for at most `fuel` instructions.
    pub fn run(&mut self, env: &mut Env<'_, 'gc>, fuel: u32) -> Step {
        let step = self.run_slice(env, fuel);
        self.instr_base = self.instructions();
        self.slice_fuel = 0;
        self.fuel_now = 0;
        step
    }

    fn run_slice(&mut self, env: &mut Env<'_, 'gc>, fuel: u32) -> Step {
        let mut fuel = fuel as i64;
        self.slice_fuel = fuel;
        self.fuel_now = fuel;
        match std::mem::replace(&mut self.kick, Kick::None) {
            Kick::None => {}
            Kick::LoadStep => {
                if let Err(r) = self.load_step(env) {
                    self.raise(env, r);
                }
            }
            Kick::Call(n) => {
                let h = self.stack.len() - n as usize;
                let f = self.stack[h - 1];
                match self.call_value(env, f, h, n as usize, h - 1) {
                    // A builtin returned at once: hand its value to the run's bottom frame.
                    Ok(false) => {
                        let v = self.stack.pop().unwrap_or(Value::Nil);
                        if let Err(r) = self.deliver(env, v) {
                            self.raise(env, r);
                        }
                    }
                    Ok(true) => {}
                    Err(r) => self.raise(env, r),
                }
            }
            Kick::Deliver(v) => {
                if let Err(r) = self.deliver(env, v) {
                    self.raise(env, r);
                }
            }
            Kick::Interrupt => {
                let r = Raise::simple(ErrorKind::Interrupt, "interrupted");
                self.raise(env, r);
            }
            Kick::FuelExhausted(limit) => {
                let r = Raise::simple(
                    ErrorKind::Storage,
                    format!("Fuel exhausted: the run executed its limit of {limit} VM instructions (max_fuel)."),
                );
                self.raise(env, r);
            }
            Kick::HeapExhausted(used, limit) => {
                let r = Raise::simple(
                    ErrorKind::Storage,
                    format!(
                        "Heap exhausted: {} MB of live objects, more than the limit of {} MB (--max-heap).",
                        used >> 20,
                        limit >> 20
                    ),
                );
                self.raise(env, r);
            }
        }
        loop {
            if let Some(step) = self.finished.take() {
                return step;
            }
            if fuel <= 0 {
                return Step::Running;
            }
            let r = self.execute(env, &mut fuel);
            self.fuel_now = fuel;
            match r {
                Ok(()) => {}
                Err(Raise::Request(req)) => return Step::Request(req),
                Err(r) => self.raise(env, r),
            }
        }
    }
}

/// Tags for blocks and tagbodies exited from closures: fixnums from a range
/// no program writes by hand, so they cannot collide with user catch tags.
const TAG_BASE: i64 = i64::MIN / 2;

impl<'gc> Vm<'gc> {
    /// Execute the Lisp frame on top until it calls, returns, exits or runs out of fuel.
    fn execute(&mut self, env: &mut Env<'_, 'gc>, fuel: &mut i64) -> VResult<'gc> {
        let Some(fi) = self.frames.len().checked_sub(1) else {
            self.finished = Some(Step::Done);
            return Ok(());
        };
        let frame = &self.frames[fi];
        let Some(proto_ptr) = frame.proto else {
            // A native frame on top with nothing to deliver: the run is over.
            self.finished = Some(Step::Done);
            return Ok(());
        };
        let proto: &'gc Proto<'gc> = &Gc::as_ref(proto_ptr).val;
        let code: &'gc [Op] = &proto.code;
        let consts: &'gc [Value<'gc>] = &proto.consts;
        let captured: &'gc [Value<'gc>] = match frame.func {
            Value::Function(f) => match &Gc::as_ref(f).val {
                Function::Closure(c) => &c.captured,
                Function::Builtin(_) => &[],
            },
            _ => &[],
        };
        let base = frame.base as usize;
        let mut pc = frame.pc as usize;
        let mc = env.mc;
        macro_rules! save {
            () => {{
                self.frames[fi].pc = pc as u32;
                self.fuel_now = *fuel;
            }};
        }
        macro_rules! top {
            () => {
                match self.stack.last() {
                    Some(v) => *v,
                    None => return Err(Raise::error("internal error: value stack underflow")),
                }
            };
        }
        macro_rules! pop {
            () => {
                match self.stack.pop() {
                    Some(v) => v,
                    None => return Err(Raise::error("internal error: value stack underflow")),
                }
            };
        }
        macro_rules! sym {
            ($k:expr) => {
                match consts[$k as usize] {
                    Value::Symbol(s) => s,
                    _ => return Err(Raise::error("internal error: symbol constant expected")),
                }
            };
        }
        loop {
            // Checked before the decrement, so a slice always makes progress.
            if *fuel <= 0 {
                save!();
                return Ok(());
            }
            *fuel -= 1;
            let Some(&op) = code.get(pc) else {
                return Err(Raise::error("internal error: pc out of range"));
            };
            pc += 1;
            match op {
                Op::Const(k) => self.stack.push(consts[k as usize]),
                Op::Nil => self.stack.push(Value::Nil),
                Op::T => self.stack.push(env.world.t()),
                Op::Fixnum(i) => self.stack.push(Value::Fixnum(i as i64)),
                Op::LocalGet(i) => {
                    let v = self.stack[base + i as usize];
                    self.stack.push(v);
                }
                Op::LocalSet(i) => {
                    let v = top!();
                    self.stack[base + i as usize] = v;
                }
                Op::BoxGet(i) => match self.stack[base + i as usize] {
                    Value::Cell(c) => self.stack.push(c.get()),
                    v => self.stack.push(v),
                },
                Op::BoxSet(i) => {
                    let v = top!();
                    match self.stack[base + i as usize] {
                        Value::Cell(c) => alloc::set_lock(mc, c, v),
                        _ => self.stack[base + i as usize] = v,
                    }
                }
                Op::MakeBox(i) => {
                    let v = self.stack[base + i as usize];
                    self.stack[base + i as usize] = alloc::cell(mc, v);
                }
                Op::CapGet(i) => self.stack.push(captured[i as usize]),
                Op::CapBoxGet(i) => match captured[i as usize] {
                    Value::Cell(c) => self.stack.push(c.get()),
                    v => self.stack.push(v),
                },
                Op::CapBoxSet(i) => {
                    let v = top!();
                    if let Value::Cell(c) = captured[i as usize] {
                        alloc::set_lock(mc, c, v);
                    }
                }
                Op::SymValue(k) => {
                    let s = sym!(k);
                    let v = s.value.get();
                    if matches!(v, Value::Unbound) {
                        save!();
                        return Err(Raise::UnboundVariable(Value::Symbol(s)));
                    }
                    self.stack.push(v);
                }
                Op::SymSet(k) => {
                    let s = sym!(k);
                    let v = top!();
                    alloc::symbol_set_value(mc, s, v);
                }
                Op::FunctionOf(k) => {
                    let f = match function_of(consts[k as usize]) {
                        Some(f) => f,
                        None => {
                            save!();
                            return Err(Raise::UndefinedFunction(consts[k as usize]));
                        }
                    };
                    self.stack.push(f);
                }
                Op::MakeClosure(k) => {
                    let Value::Proto(p) = consts[k as usize] else {
                        return Err(Raise::error("internal error: code constant expected"));
                    };
                    let caps: Box<[Value<'gc>]> = p
                        .info
                        .captures
                        .iter()
                        .map(|c| match *c {
                            mprof_heap::code::Capture::Local(i) => self.stack[base + i as usize],
                            mprof_heap::code::Capture::Captured(i) => captured[i as usize],
                        })
                        .collect();
                    self.stack.push(alloc::closure(mc, p, caps));
                }
                Op::Pop => {
                    self.stack.pop();
                }
                Op::Dup => {
                    let v = top!();
                    self.stack.push(v);
                }
                Op::Slide(n) => {
                    let v = pop!();
                    let len = self.stack.len() - n as usize;
                    self.stack.truncate(len);
                    self.stack.push(v);
                }
                Op::Drop(n) => {
                    let len = self.stack.len() - n as usize;
                    self.stack.truncate(len);
                }
                Op::Jump(t) => pc = t as usize,
                Op::JumpIfNil(t) => {
                    if pop!().is_nil() {
                        pc = t as usize;
                    }
                }
                Op::JumpIfTrue(t) => {
                    if pop!().truthy() {
                        pc = t as usize;
                    }
                }
                Op::JumpIfEqFixnum { value, target } => {
                    if matches!(top!(), Value::Fixnum(x) if x == value as i64) {
                        self.stack.pop();
                        pc = target as usize;
                    }
                }
                Op::JumpIfSupplied { slot, target } => {
                    if !matches!(self.stack[base + slot as usize], Value::Unbound) {
                        pc = target as usize;
                    }
                }
                Op::Supplied(slot) => {
                    let b = !matches!(self.stack[base + slot as usize], Value::Unbound);
                    self.stack.push(if b { env.world.t() } else { Value::Nil });
                }
                Op::Call(n) => {
                    save!();
                    let n = n as usize;
                    let fpos = self.stack.len() - n - 1;
                    let f = self.stack[fpos];
                    if self.call_value(env, f, fpos + 1, n, fpos)? {
                        return Ok(());
                    }
                    if self.frames.len() != fi + 1 {
                        return Ok(());
                    }
                }
                Op::CallGlobal { sym, nargs } => {
                    save!();
                    let s = sym!(sym);
                    let f = s.function.get();
                    if matches!(f, Value::Unbound) || s.has_flag(SYM_MACRO) {
                        return Err(Raise::UndefinedFunction(Value::Symbol(s)));
                    }
                    let n = nargs as usize;
                    let b = self.stack.len() - n;
                    if self.call_value(env, f, b, n, b)? {
                        return Ok(());
                    }
                    if self.frames.len() != fi + 1 {
                        return Ok(());
                    }
                }
                Op::Return => {
                    self.fuel_now = *fuel;
                    return self.do_return(env);
                }
                // Code compiled while counting keeps its counters: they count only
                // while counting is on.
                Op::Count(k) if self.counting => match self.counts.get_mut(k as usize) {
                    Some(c) => *c += 1,
                    None => {
                        self.counts.resize(k as usize + 1, 0);
                        self.counts[k as usize] = 1;
                    }
                },
                Op::Count(_) => {}
                Op::Inline { op, sym } => {
                    use mprof_heap::code::InlineOp as I;
                    let n = self.stack.len();
                    let fast = match op {
                        I::Car => match self.stack[n - 1] {
                            Value::Cons(c) => Some(c.car.get()),
                            Value::Nil => Some(Value::Nil),
                            _ => None,
                        },
                        I::Cdr => match self.stack[n - 1] {
                            Value::Cons(c) => Some(c.cdr.get()),
                            Value::Nil => Some(Value::Nil),
                            _ => None,
                        },
                        I::Not => Some(if self.stack[n - 1].is_nil() { env.world.t() } else { Value::Nil }),
                        I::Neg => match self.stack[n - 1] {
                            Value::Fixnum(x) => x.checked_neg().map(Value::Fixnum),
                            Value::Float(p) => Some(alloc::float(mc, -p.val)),
                            _ => None,
                        },
                        I::Inc => match self.stack[n - 1] {
                            Value::Fixnum(x) => x.checked_add(1).map(Value::Fixnum),
                            _ => None,
                        },
                        I::Dec => match self.stack[n - 1] {
                            Value::Fixnum(x) => x.checked_sub(1).map(Value::Fixnum),
                            _ => None,
                        },
                        I::Eq => Some(if self.stack[n - 2].eq(self.stack[n - 1]) { env.world.t() } else { Value::Nil }),
                        _ => match (self.stack[n - 2], self.stack[n - 1]) {
                            (Value::Fixnum(a), Value::Fixnum(b)) => match op {
                                I::Add => a.checked_add(b).map(Value::Fixnum),
                                I::Sub => a.checked_sub(b).map(Value::Fixnum),
                                I::Mul => a.checked_mul(b).map(Value::Fixnum),
                                I::Lt => Some(Value::bool(a < b, env.world.t())),
                                I::Gt => Some(Value::bool(a > b, env.world.t())),
                                I::Le => Some(Value::bool(a <= b, env.world.t())),
                                I::Ge => Some(Value::bool(a >= b, env.world.t())),
                                I::NumEq => Some(Value::bool(a == b, env.world.t())),
                                _ => None,
                            },
                            // Double-float contagion: a fixnum meets a float.
                            // (Fixnums beyond 2^53 are not exact as doubles: the builtin compares exactly.)
                            (x @ (Value::Float(_) | Value::Fixnum(_)), y @ (Value::Float(_) | Value::Fixnum(_)))
                                if small_or_float(x) && small_or_float(y) =>
                            {
                                let f = |v: Value<'gc>| match v {
                                    Value::Float(p) => p.val,
                                    Value::Fixnum(i) => i as f64,
                                    _ => 0.0,
                                };
                                let (a, b) = (f(x), f(y));
                                let t = env.world.t();
                                // Overflow and NaN go to the builtin, which signals as SBCL does.
                                let finite = |r: f64| if r.is_finite() { Some(alloc::float(mc, r)) } else { None };
                                match op {
                                    I::Add => finite(a + b),
                                    I::Sub => finite(a - b),
                                    I::Mul => finite(a * b),
                                    I::Lt => Some(Value::bool(a < b, t)),
                                    I::Gt => Some(Value::bool(a > b, t)),
                                    I::Le => Some(Value::bool(a <= b, t)),
                                    I::Ge => Some(Value::bool(a >= b, t)),
                                    I::NumEq => Some(Value::bool(a == b, t)),
                                    _ => None,
                                }
                            }
                            _ => None,
                        },
                    };
                    match fast {
                        Some(v) => {
                            let keep = n - op.arity() as usize;
                            self.stack.truncate(keep);
                            self.stack.push(v);
                            self.values_single = true;
                        }
                        None => {
                            save!();
                            let s = sym!(sym);
                            let f = s.function.get();
                            if matches!(f, Value::Unbound) || s.has_flag(SYM_MACRO) {
                                return Err(Raise::UndefinedFunction(Value::Symbol(s)));
                            }
                            let nargs = op.arity() as usize;
                            let b = n - nargs;
                            if self.call_value(env, f, b, nargs, b)? {
                                return Ok(());
                            }
                            if self.frames.len() != fi + 1 {
                                return Ok(());
                            }
                        }
                    }
                }
                Op::Values1 => self.values_single = true,
                Op::MvPush(n) => {
                    let primary = pop!();
                    for i in 0..n as usize {
                        let v = if self.values_single {
                            if i == 0 { primary } else { Value::Nil }
                        } else {
                            self.values.get(i).copied().unwrap_or(Value::Nil)
                        };
                        self.stack.push(v);
                    }
                }
                Op::MvList => {
                    let primary = pop!();
                    let l = if self.values_single {
                        alloc::list(mc, &[primary])
                    } else {
                        alloc::list(mc, &self.values)
                    };
                    self.stack.push(l);
                }
                Op::MvSave | Op::MvRestore => {
                    return Err(Raise::error("internal error: MvSave is not generated"));
                }
                Op::BindSpecial(k) => {
                    let s = sym!(k);
                    let v = pop!();
                    self.dyn_stack.push(DynEntry::Special { sym: s, old: s.value.get() });
                    alloc::symbol_set_value(mc, s, v);
                }
                Op::PopDyn(n) => {
                    for _ in 0..n {
                        if let Some(DynEntry::Special { sym, old }) = self.dyn_stack.pop() {
                            alloc::symbol_set_value(mc, sym, old);
                        }
                    }
                }
                Op::NewTag => {
                    self.next_tag += 1;
                    self.stack.push(Value::Fixnum(TAG_BASE + self.next_tag));
                }
                Op::PushCatch(t) => {
                    let tag = pop!();
                    self.dyn_stack.push(DynEntry::Catch {
                        tag,
                        frame: fi as u32,
                        height: self.stack.len() as u32,
                        pc: t,
                    });
                }
                Op::Throw => {
                    save!();
                    let value = pop!();
                    let tag = pop!();
                    let vals = if self.values_single { vec![value] } else { self.values.clone() };
                    let found = self
                        .dyn_stack
                        .iter()
                        .rposition(|e| matches!(e, DynEntry::Catch { tag: t, .. } if t.eq(tag) || crate::equal::eql(*t, tag)));
                    let Some(i) = found else {
                        return Err(Raise::Error {
                            kind: ErrorKind::Control,
                            message: "attempt to throw to a tag that does not exist".into(),
                            irritants: vec![tag],
                        });
                    };
                    return self.unwind_to(env, ExitTarget::Catch(i), vals);
                }
                Op::PushUnwindProtect(t) => {
                    self.dyn_stack.push(DynEntry::UnwindProtect {
                        frame: fi as u32,
                        height: self.stack.len() as u32,
                        pc: t,
                    });
                }
                Op::PopUnwindProtect => {
                    self.dyn_stack.pop();
                    let values = if self.values_single { Vec::new() } else { self.values.clone() };
                    let dyn_len = self.dyn_stack.len() as u32;
                    self.pending.push(Pending::Normal { values, single: self.values_single, dyn_len });
                }
                Op::EndCleanup => match self.pending.pop() {
                    Some(Pending::Normal { values, single, .. }) => {
                        self.values = values;
                        self.values_single = single;
                    }
                    Some(Pending::Exit { target, values, .. }) => {
                        save!();
                        return self.unwind_to(env, target, values);
                    }
                    None => return Err(Raise::error("internal error: cleanup without an unwind in progress")),
                },
                Op::ProgvBind => {
                    let vals = pop!();
                    let syms = pop!();
                    let mut n = 0i64;
                    let mut vs = alloc::list_iter(vals);
                    for s in alloc::list_iter(syms) {
                        let Value::Symbol(s) = s else {
                            save!();
                            return Err(Raise::TypeError { datum: s, expected: env.world.intern_cl(mc, "SYMBOL") });
                        };
                        let v = vs.next().unwrap_or(Value::Unbound);
                        self.dyn_stack.push(DynEntry::Special { sym: s, old: s.value.get() });
                        alloc::symbol_set_value(mc, s, v);
                        n += 1;
                    }
                    self.stack.push(Value::Fixnum(n));
                }
                Op::ProgvUnbind => {
                    let v = pop!();
                    let n = match pop!() {
                        Value::Fixnum(n) => n,
                        _ => 0,
                    };
                    for _ in 0..n {
                        if let Some(DynEntry::Special { sym, old }) = self.dyn_stack.pop() {
                            alloc::symbol_set_value(mc, sym, old);
                        }
                    }
                    self.stack.push(v);
                }
                Op::Apply => {
                    save!();
                    let list = pop!();
                    let fpos = self.stack.len() - 1;
                    let f = self.stack[fpos];
                    let mut n = 0;
                    let mut cur = list;
                    // A circular spread list is a type-error, not a stack growing until memory runs out.
                    let mut check = crate::cycle::CycleCheck::new(cur);
                    while let Value::Cons(c) = cur {
                        self.stack.push(c.car.get());
                        cur = c.cdr.get();
                        n += 1;
                        if check.looped(cur) {
                            self.stack.truncate(fpos + 1);
                            break;
                        }
                    }
                    if !cur.is_nil() {
                        return Err(Raise::TypeError { datum: list, expected: env.world.intern_cl(mc, "LIST") });
                    }
                    if self.call_value(env, f, fpos + 1, n, fpos)? {
                        return Ok(());
                    }
                    if self.frames.len() != fi + 1 {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Call `f` with the `nargs` arguments at `base`; `ret` is where its value goes.
    /// Returns whether a new Lisp frame was pushed.
    pub fn call_value(
        &mut self,
        env: &mut Env<'_, 'gc>,
        f: Value<'gc>,
        base: usize,
        nargs: usize,
        ret: usize,
    ) -> Result<bool, Raise<'gc>> {
        match f {
            Value::Function(fp) => match &Gc::as_ref(fp).val {
                Function::Closure(c) => {
                    self.enter(env, f, c.proto, base, nargs, ret)?;
                    Ok(true)
                }
                Function::Builtin(b) => self.call_builtin(env, b.id, base, nargs, ret),
            },
            Value::Symbol(s) => {
                let g = s.function.get();
                if matches!(g, Value::Unbound) || s.has_flag(SYM_MACRO) {
                    return Err(Raise::UndefinedFunction(f));
                }
                self.call_value(env, g, base, nargs, ret)
            }
            Value::Nil => Err(Raise::UndefinedFunction(Value::Nil)),
            other => Err(Raise::TypeError {
                datum: other,
                expected: env.world.intern_cl(env.mc, "FUNCTION"),
            }),
        }
    }

    /// Push a frame for a closure call, laying out its parameters.
    fn enter(
        &mut self,
        env: &mut Env<'_, 'gc>,
        func: Value<'gc>,
        proto: Ptr<'gc, Proto<'gc>>,
        base: usize,
        nargs: usize,
        ret: usize,
    ) -> VResult<'gc> {
        if self.frames.len() >= self.frame_limit {
            if self.frame_limit == self.base_frame_limit {
                // Leave room for the handlers of the error.
                self.frame_limit = self.base_frame_limit + 10_000;
                return Err(Raise::simple(ErrorKind::StackExhausted, "Control stack exhausted"));
            }
            return Err(Raise::Request(HostRequest::Exit(70)));
        }
        let info = &Gc::as_ref(proto).val.info;
        let p = &info.params;
        let req = p.required as usize;
        let positional = req + p.optional as usize;
        if nargs < req || (nargs > positional && !p.rest && !p.has_keys) {
            return Err(self.arg_count_error(env, func, nargs));
        }
        if nargs > positional {
            if p.rest || p.has_keys {
                let extras: Vec<Value<'gc>> = self.stack[base + positional..base + nargs].to_vec();
                self.stack.truncate(base + positional);
                if p.rest {
                    let l = alloc::list(env.mc, &extras);
                    self.stack.push(l);
                }
                if p.has_keys {
                    self.parse_keys(env, func, &Gc::as_ref(proto).val, &extras)?;
                }
            }
        } else {
            for _ in nargs..positional {
                self.stack.push(Value::Unbound);
            }
            if p.rest {
                self.stack.push(Value::Nil);
            }
            if p.has_keys {
                for _ in &p.keys {
                    self.stack.push(Value::Unbound);
                }
            }
        }
        let want = base + info.nslots as usize;
        if self.stack.len() < want {
            self.stack.resize(want, Value::Nil);
        }
        self.frames.push(Frame {
            func,
            proto: Some(proto),
            pc: 0,
            base: base as u32,
            ret: ret as u32,
            cont: Cont::Lisp,
        });
        if self.profiling {
            self.prof_push_proto(proto, env.world);
        }
        Ok(())
    }

    fn parse_keys(
        &mut self,
        env: &mut Env<'_, 'gc>,
        func: Value<'gc>,
        proto: &Proto<'gc>,
        extras: &[Value<'gc>],
    ) -> VResult<'gc> {
        let p = &proto.info.params;
        if !extras.len().is_multiple_of(2) {
            return Err(Raise::program(format!(
                "odd number of &KEY arguments in a call to {}",
                self.name_of(env, func)
            )));
        }
        let mut allow = p.allow_other_keys;
        if !allow {
            for pair in extras.chunks(2) {
                if matches!(pair[0], Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, env.world.syms.allow_other_keys_kw))
                    && pair[1].truthy()
                {
                    allow = true;
                }
            }
        }
        for &k in &p.keys {
            let kw = proto.consts[k as usize];
            let v = extras.chunks(2).find(|pair| pair[0].eq(kw)).map(|pair| pair[1]).unwrap_or(Value::Unbound);
            self.stack.push(v);
        }
        if !allow {
            for pair in extras.chunks(2) {
                let known = p.keys.iter().any(|&k| proto.consts[k as usize].eq(pair[0]))
                    || matches!(pair[0], Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, env.world.syms.allow_other_keys_kw));
                if !known {
                    let ctx = self.print_ctx(env);
                    let key = mprof_heap::printer::print_to_string(pair[0], &ctx);
                    return Err(Raise::program(format!(
                        "unknown &KEY argument {key} in a call to {}",
                        self.name_of(env, func)
                    )));
                }
            }
        }
        Ok(())
    }

    fn print_ctx<'a>(&self, env: &'a Env<'_, 'gc>) -> mprof_heap::printer::PrintContext<'a, 'gc> {
        let current = match env.world.syms.package.value.get() {
            Value::Package(p) => p,
            _ => env.world.packages.user,
        };
        mprof_heap::printer::PrintContext {
            settings: mprof_heap::printer::Settings::safe(),
            condition_report: Some(crate::conditions::static_report),
            ..mprof_heap::printer::PrintContext::new(&env.world.packages, current, true)
        }
    }

    fn name_of(&self, env: &Env<'_, 'gc>, f: Value<'gc>) -> String {
        let name = match f {
            Value::Function(fp) => fp.name(),
            other => other,
        };
        match name {
            Value::Nil => "an anonymous function".to_string(),
            n => mprof_heap::printer::print_to_string(n, &self.print_ctx(env)),
        }
    }

    fn arg_count_error(&self, env: &Env<'_, 'gc>, func: Value<'gc>, nargs: usize) -> Raise<'gc> {
        Raise::program(format!("invalid number of arguments: {nargs} (in a call to {})", self.name_of(env, func)))
    }

    fn call_builtin(
        &mut self,
        env: &mut Env<'_, 'gc>,
        id: u32,
        base: usize,
        nargs: usize,
        ret: usize,
    ) -> Result<bool, Raise<'gc>> {
        let Some(def) = builtins::table().get(id as usize) else {
            return self.call_native(env, id as usize - builtins::table().len(), base, nargs, ret);
        };
        if nargs < def.min as usize || (def.max != builtins::MANY && nargs > def.max as usize) {
            return Err(Raise::program(format!("invalid number of arguments: {nargs} (in a call to {})", def.name)));
        }
        match def.kind {
            Kind::Plain(f) => {
                let pushed = self.profiling && self.prof_push_builtin(id);
                let mut ctx = Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
                let r = f(&mut ctx, &self.stack[base..base + nargs]);
                let multiple = ctx.multiple;
                if pushed {
                    self.prof_pop_builtin();
                }
                let v = r?;
                self.stack.truncate(ret);
                self.stack.push(v);
                self.values_single = !multiple;
                Ok(false)
            }
            Kind::Special(sp) => self.call_special(env, sp, base, nargs, ret),
        }
    }

    /// Call a function the host registered: arguments and result cross as HostValues.
    fn call_native(
        &mut self,
        env: &mut Env<'_, 'gc>,
        index: usize,
        base: usize,
        nargs: usize,
        ret: usize,
    ) -> Result<bool, Raise<'gc>> {
        let args: Vec<crate::HostValue> =
            self.stack[base..base + nargs].iter().map(|v| crate::interp::to_host(env.world, *v, 0)).collect();
        let Some((name, f)) = env.host.natives.get_mut(index) else {
            return Err(Raise::error("internal error: unknown native function"));
        };
        let r = f(&args).map_err(|m| Raise::error(format!("{name}: {m}")))?;
        let v = crate::interp::from_host(env.mc, env.world, &r);
        self.stack.truncate(ret);
        self.stack.push(v);
        self.values_single = true;
        Ok(false)
    }

    fn call_special(
        &mut self,
        env: &mut Env<'_, 'gc>,
        sp: Special,
        base: usize,
        nargs: usize,
        ret: usize,
    ) -> Result<bool, Raise<'gc>> {
        match sp {
            Special::Funcall => {
                let f = self.stack[base];
                self.stack.remove(base);
                self.call_value(env, f, base, nargs - 1, ret)
            }
            Special::Apply => {
                let list = self.stack.pop().unwrap_or(Value::Nil);
                let mut n = nargs - 1;
                let mut cur = list;
                let spread_at = self.stack.len();
                let mut check = crate::cycle::CycleCheck::new(cur);
                while let Value::Cons(c) = cur {
                    self.stack.push(c.car.get());
                    cur = c.cdr.get();
                    n += 1;
                    if check.looped(cur) {
                        self.stack.truncate(spread_at);
                        break;
                    }
                }
                if !cur.is_nil() {
                    return Err(Raise::TypeError { datum: list, expected: env.world.intern_cl(env.mc, "LIST") });
                }
                let f = self.stack[base];
                self.stack.remove(base);
                self.call_value(env, f, base, n - 1, ret)
            }
            Special::Values => {
                self.values.clear();
                self.values.extend_from_slice(&self.stack[base..base + nargs]);
                let primary = self.values.first().copied().unwrap_or(Value::Nil);
                self.values_single = false;
                self.stack.truncate(ret);
                self.stack.push(primary);
                Ok(false)
            }
            Special::Eval => {
                let form = self.stack[base];
                self.stack.truncate(ret);
                let mark = self.expansions.len() as u32;
                self.compile_start(env, form, mark)?;
                Ok(true)
            }
            Special::LoadSource => {
                let text = match self.stack[base] {
                    Value::String(s) => s.borrow().to_rust_string(),
                    other => return Err(Raise::TypeError { datum: other, expected: env.world.intern_cl(env.mc, "STRING") }),
                };
                let file = match self.stack[base + 1] {
                    Value::String(s) => Some(s.borrow().to_rust_string()),
                    _ => None,
                };
                self.stack.truncate(ret);
                // LOAD binds *PACKAGE* so IN-PACKAGE in the file does not leak.
                let pkg_sym = env.world.syms.package;
                let dyn_mark = self.dyn_stack.len() as u32;
                self.dyn_stack.push(DynEntry::Special { sym: pkg_sym, old: pkg_sym.value.get() });
                self.push_native(Native::LoadSource {
                    text: Rc::from(text.as_str()),
                    offset: 0,
                    file: file.as_deref().map(Rc::from),
                    queued: Value::Nil,
                    last: env.world.t(),
                    dyn_mark,
                });
                self.load_step(env)?;
                Ok(true)
            }
            Special::Unhandled => {
                let condition = self.stack[base];
                self.abort(env, condition);
                Ok(true)
            }
            Special::Backtrace => {
                let frames = self.backtrace_frames(env);
                self.stack.truncate(ret);
                self.stack.push(frames);
                self.values_single = true;
                Ok(false)
            }
            Special::Compile => Err(Raise::error("internal error: COMPILE is defined in the prelude")),
            Special::Print(kind) => {
                let task = {
                    let mut ctx =
                        Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
                    printing::start(&mut ctx, kind, &self.stack[base..base + nargs])?
                };
                self.stack.truncate(ret);
                self.print_run(env, task)
            }
            Special::Format => {
                // The common case, no object printed by a method: format in place.
                let lisp_printed = mprof_heap::printer::LispPrinted::default();
                let r = {
                    let mut ctx =
                        Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
                    builtins::core::format_run(&mut ctx, &self.stack[base..base + nargs], &lisp_printed)?
                };
                if let Some(v) = r {
                    self.stack.truncate(ret);
                    self.stack.push(v);
                    self.values_single = true;
                    return Ok(false);
                }
                let args = self.stack[base..base + nargs].to_vec();
                self.stack.truncate(ret);
                self.format_run(env, args, Vec::new())
            }
            Special::Macroexpand1 => {
                let form = self.stack[base];
                self.stack.truncate(ret);
                let expander = match form {
                    Value::Cons(c) => match c.car.get() {
                        Value::Symbol(s) if s.has_flag(SYM_MACRO) => Some(s.function.get()),
                        _ => None,
                    },
                    _ => None,
                };
                match expander {
                    Some(e) => {
                        self.push_native(Native::Macroexpand);
                        let b = self.stack.len();
                        self.stack.push(form);
                        self.stack.push(Value::Nil);
                        self.call_value(env, e, b, 2, b)?;
                        Ok(true)
                    }
                    None => {
                        self.values.clear();
                        self.values.push(form);
                        self.values.push(Value::Nil);
                        self.values_single = false;
                        self.stack.push(form);
                        Ok(false)
                    }
                }
            }
        }
    }

    /// Run a print task: its value is pushed (false), or it waits in a native
    /// frame for the print method it called (true).
    fn print_run(&mut self, env: &mut Env<'_, 'gc>, mut task: PrintTask<'gc>) -> Result<bool, Raise<'gc>> {
        let r = {
            let mut ctx = Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
            printing::step(&mut ctx, &mut task)?
        };
        match r {
            Ok(v) => {
                self.stack.push(v);
                self.values_single = true;
                Ok(false)
            }
            Err(call) => {
                task.dyn_mark = self.dyn_stack.len() as u32;
                let bindings = {
                    let mut ctx =
                        Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
                    printing::bindings(&mut ctx, &task)
                };
                for (sym, v) in bindings {
                    self.dyn_stack.push(DynEntry::Special { sym, old: sym.value.get() });
                    alloc::symbol_set_value(env.mc, sym, v);
                }
                self.push_native(Native::Print(task));
                if self.call_method(env, call)? {
                    return Ok(true);
                }
                // The method was a builtin and returned at once.
                self.stack.pop();
                self.print_resume(env)
            }
        }
    }

    /// Go on with the print task in the native frame on top after its method
    /// returned: true when it called another method (a frame is on top), false
    /// when it finished (frame popped, value pushed).
    fn print_resume(&mut self, env: &mut Env<'_, 'gc>) -> Result<bool, Raise<'gc>> {
        loop {
            let n = self.frames.len().saturating_sub(1);
            let Some(Frame { cont: Cont::Native(b), ret, .. }) = self.frames.get_mut(n) else {
                return Err(Raise::error("internal error: print frame expected"));
            };
            let ret = *ret as usize;
            let Native::Print(task) = &mut **b else {
                return Err(Raise::error("internal error: print frame expected"));
            };
            let r = {
                let mut ctx = Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
                printing::step(&mut ctx, task)?
            };
            match r {
                Ok(v) => {
                    let mark = task.dyn_mark as usize;
                    while self.dyn_stack.len() > mark {
                        if let Some(DynEntry::Special { sym, old }) = self.dyn_stack.pop() {
                            alloc::symbol_set_value(env.mc, sym, old);
                        }
                    }
                    self.pop_frame();
                    self.stack.truncate(ret);
                    self.stack.push(v);
                    self.values_single = true;
                    return Ok(false);
                }
                Err(call) => {
                    if self.call_method(env, call)? {
                        return Ok(true);
                    }
                    self.stack.pop();
                }
            }
        }
    }

    /// Call a print method above the frame on top: true when it pushed a frame,
    /// false when it was a builtin whose value is now on the stack.
    fn call_method(&mut self, env: &mut Env<'_, 'gc>, call: printing::MethodCall<'gc>) -> Result<bool, Raise<'gc>> {
        let b = self.stack.len();
        let n = call.args.len();
        self.stack.extend(call.args);
        self.call_value(env, call.method, b, n, b)
    }

    /// Run FORMAT with the texts known so far: its value is pushed (false), or
    /// objects printed by methods still need texts and a FORMAT frame waits for
    /// them (true).
    fn format_run(
        &mut self,
        env: &mut Env<'_, 'gc>,
        args: Vec<Value<'gc>>,
        texts: Vec<FormatText<'gc>>,
    ) -> Result<bool, Raise<'gc>> {
        let lisp_printed = mprof_heap::printer::LispPrinted {
            texts: texts.iter().map(|t| (t.object, t.escape, t.text.clone())).collect(),
            missing: Default::default(),
        };
        let r = {
            let mut ctx = Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
            builtins::core::format_run(&mut ctx, &args, &lisp_printed)?
        };
        if let Some(v) = r {
            self.stack.push(v);
            self.values_single = true;
            return Ok(false);
        }
        let mut pending: Vec<FormatText<'gc>> = lisp_printed
            .missing
            .into_inner()
            .into_iter()
            .map(|(object, escape)| FormatText { object, escape, text: String::new() })
            .collect();
        pending.reverse();
        let Some(first) = pending.last() else { return Ok(false) };
        let (object, escape) = (first.object, first.escape);
        self.push_native(Native::Format { args, texts, pending });
        if self.format_print_next(env, object, escape)? {
            return Ok(true);
        }
        // Printed at once: hand the text to the FORMAT frame.
        let v = self.stack.pop().unwrap_or(Value::Nil);
        self.deliver(env, v)?;
        Ok(true)
    }

    /// Print one of FORMAT's objects to a string with its method (true: a
    /// frame is running; false: the string is on the stack).
    fn format_print_next(&mut self, env: &mut Env<'_, 'gc>, object: Value<'gc>, escape: bool) -> Result<bool, Raise<'gc>> {
        let task = {
            let mut ctx = Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
            let t = env.world.t();
            printing::start(&mut ctx, PrintFn::ForFormat, &[object, Value::bool(escape, t)])?
        };
        self.print_run(env, task)
    }

    /// Return from the Lisp frame on top with the value on top of the stack.
    fn do_return(&mut self, env: &mut Env<'_, 'gc>) -> VResult<'gc> {
        let v = self.stack.pop().unwrap_or(Value::Nil);
        let Some(frame) = self.pop_frame() else {
            return Err(Raise::error("internal error: return without a frame"));
        };
        self.stack.truncate(frame.ret as usize);
        if self.frame_limit != self.base_frame_limit && self.frames.len() < self.base_frame_limit / 2 {
            self.frame_limit = self.base_frame_limit;
        }
        self.deliver(env, v)
    }

    /// Push `v` as the value returned to the frame on top, resuming native frames.
    fn deliver(&mut self, env: &mut Env<'_, 'gc>, v: Value<'gc>) -> VResult<'gc> {
        self.stack.push(v);
        loop {
            let Some(top) = self.frames.last() else {
                self.result = self.stack.pop().unwrap_or(Value::Nil);
                self.finished = Some(Step::Done);
                return Ok(());
            };
            let native = match &top.cont {
                Cont::Lisp => return Ok(()),
                Cont::Native(n) => &**n,
            };
            match native {
                Native::Toplevel => {
                    self.result = self.stack.pop().unwrap_or(Value::Nil);
                    self.pop_frame();
                    self.finished = Some(Step::Done);
                    return Ok(());
                }
                Native::Expansion { needs, next, form, mark } => {
                    let (key, form, mark) = (needs.pair(*next).map_or(Value::Nil, |(_, call)| call), *form, *mark);
                    let following = *next + 1;
                    let exp = self.stack.pop().unwrap_or(Value::Nil);
                    self.expansions.push(key, exp);
                    if let Some((expander, call)) = needs.pair(following) {
                        let n = self.frames.len() - 1;
                        if let Cont::Native(b) = &mut self.frames[n].cont
                            && let Native::Expansion { next, .. } = &mut **b
                        {
                            *next = following;
                        }
                        self.hide_prelude_expansion(expander);
                        let b = self.stack.len();
                        self.stack.push(call);
                        self.stack.push(Value::Nil);
                        self.call_value(env, expander, b, 2, b)?;
                        return Ok(());
                    }
                    let ret = top.ret as usize;
                    let round = match self.pop_frame().map(|f| f.cont) {
                        Some(Cont::Native(b)) => match *b {
                            Native::Expansion { needs, .. } => needs,
                            _ => compiler::Needs::default(),
                        },
                        _ => compiler::Needs::default(),
                    };
                    self.stack.truncate(ret);
                    // The calls inside this round's expansions are the next round; once
                    // there are none, the whole form compiles (see compiler::discover).
                    let next_round =
                        compiler::discover(env.mc, env.world, self.expansions.index(), &mut self.synthesized, &round);
                    if !next_round.is_empty() {
                        return self.expand(env, next_round, form, mark);
                    }
                    return self.compile_start(env, form, mark);
                }
                Native::MacroFunction { key, form, mark } => {
                    let (key, form, mark) = (*key, *form, *mark);
                    let f = self.stack.pop().unwrap_or(Value::Nil);
                    let ret = top.ret as usize;
                    self.pop_frame();
                    self.stack.truncate(ret);
                    self.expansions.push(key, f);
                    return self.compile_start(env, form, mark);
                }
                Native::LoadSource { .. } => {
                    let v = self.stack.pop().unwrap_or(Value::Nil);
                    let n = self.frames.len() - 1;
                    if let Cont::Native(b) = &mut self.frames[n].cont
                        && let Native::LoadSource { last, .. } = &mut **b
                    {
                        *last = v;
                    }
                    return self.load_step(env);
                }
                Native::Print(_) => {
                    // The method's value is not used.
                    self.stack.pop();
                    if self.print_resume(env)? {
                        return Ok(());
                    }
                    continue;
                }
                Native::Format { .. } => {
                    let text = match self.stack.pop() {
                        Some(Value::String(s)) => s.borrow().to_rust_string(),
                        _ => String::new(),
                    };
                    let ret = top.ret as usize;
                    let Some(Frame { cont: Cont::Native(b), .. }) = self.frames.last_mut() else {
                        return Err(Raise::error("internal error: FORMAT frame expected"));
                    };
                    let Native::Format { args, texts, pending } = &mut **b else {
                        return Err(Raise::error("internal error: FORMAT frame expected"));
                    };
                    if let Some(mut done) = pending.pop() {
                        done.text = text;
                        texts.push(done);
                    }
                    if let Some(next) = pending.last() {
                        let (object, escape) = (next.object, next.escape);
                        if self.format_print_next(env, object, escape)? {
                            return Ok(());
                        }
                        continue;
                    }
                    let (args, texts) = (std::mem::take(args), std::mem::take(texts));
                    self.pop_frame();
                    self.stack.truncate(ret);
                    if self.format_run(env, args, texts)? {
                        return Ok(());
                    }
                    continue;
                }
                Native::Macroexpand => {
                    let exp = self.stack.pop().unwrap_or(Value::Nil);
                    let ret = top.ret as usize;
                    self.pop_frame();
                    self.stack.truncate(ret);
                    self.values.clear();
                    self.values.push(exp);
                    self.values.push(env.world.t());
                    self.values_single = false;
                    self.stack.push(exp);
                    continue;
                }
            }
        }
    }

    /// Run the expanders of `needs` one after another (a `Native::Expansion`
    /// frame), for the compilation of `form` that started at expansion `mark`.
    fn expand(&mut self, env: &mut Env<'_, 'gc>, needs: compiler::Needs<'gc>, form: Value<'gc>, mark: u32) -> VResult<'gc> {
        let Some((expander, call)) = needs.pair(0) else {
            return self.compile_start(env, form, mark);
        };
        self.push_native(Native::Expansion { needs, next: 0, form, mark });
        self.hide_prelude_expansion(expander);
        let b = self.stack.len();
        self.stack.push(call);
        self.stack.push(Value::Nil);
        self.call_value(env, expander, b, 2, b)?;
        Ok(())
    }

    /// Compile `form` and call the result; macro expansions needed along the
    /// way are run first, each in a native frame that resumes the compilation.
    fn compile_start(&mut self, env: &mut Env<'_, 'gc>, form: Value<'gc>, mark: u32) -> VResult<'gc> {
        let file = self.compile_file.clone();
        let mut synthesized = std::mem::take(&mut self.synthesized);
        let counting = if self.counting && !self.count_spans.spans.is_empty() {
            Some(CountCtx { spans: &self.count_spans, registry: &mut self.count_registry })
        } else {
            None
        };
        let origin = compiler::Origin { file: file.as_deref(), line: self.compile_line };
        let compiled = compiler::compile_toplevel(env.mc, env.world, self.expansions.index(), &mut synthesized, form, origin, counting);
        self.synthesized = synthesized;
        if self.counts.len() < self.count_registry.points.len() {
            self.counts.resize(self.count_registry.points.len(), 0);
        }
        match compiled {
            Ok(proto) => {
                self.expansions.truncate(mark as usize);
                let clo = alloc::closure(env.mc, proto, Box::new([]));
                let b = self.stack.len();
                self.stack.push(clo);
                self.call_value(env, clo, b + 1, 0, b)?;
                Ok(())
            }
            Err(CompileError::NeedExpansions(needs)) => self.expand(env, needs, form, mark),
            Err(CompileError::NeedMacroFunction { key, lambda }) => {
                self.push_native(Native::MacroFunction { key, form, mark });
                let fform = alloc::list(env.mc, &[Value::Symbol(env.world.syms.function), lambda]);
                let inner_mark = self.expansions.len() as u32;
                self.compile_start(env, fform, inner_mark)
            }
            Err(CompileError::TooDeep { form: bad }) => {
                self.expansions.truncate(mark as usize);
                // Only the head is named: printing a form this deep would be huge.
                let head = match bad {
                    Value::Cons(c) if matches!(c.car.get(), Value::Symbol(_)) => {
                        let name = mprof_heap::printer::print_to_string(c.car.get(), &self.print_ctx(env));
                        format!(" (at a form headed by {name})")
                    }
                    _ => String::new(),
                };
                Err(Raise::simple(
                    ErrorKind::Storage,
                    format!("forms nest more than {} levels deep{head}", compiler::front::MAX_FORM_DEPTH),
                ))
            }
            Err(CompileError::Syntax { message, form: bad }) => {
                self.expansions.truncate(mark as usize);
                let text = mprof_heap::printer::print_to_string(bad, &self.print_ctx(env));
                let text = if text.chars().count() > 200 { format!("{}...", text.chars().take(200).collect::<String>()) } else { text };
                Err(Raise::program(format!("{message}, in {text}")))
            }
        }
    }

    /// Take the next form of the LoadSource frame on top and start evaluating it,
    /// or finish the frame.
    fn load_step(&mut self, env: &mut Env<'_, 'gc>) -> VResult<'gc> {
        loop {
            let n = self.frames.len() - 1;
            let Cont::Native(b) = &mut self.frames[n].cont else {
                return Err(Raise::error("internal error: load step without a source"));
            };
            let Native::LoadSource { text, offset, file, queued, last, dyn_mark } = &mut **b else {
                return Err(Raise::error("internal error: load step without a source"));
            };
            let form = if let Value::Cons(c) = *queued {
                *queued = c.cdr.get();
                c.car.get()
            } else {
                let features = feature_names(env.world);
                let opts = mprof_reader::ReadOptions {
                    file: file.as_deref().map(String::from),
                    features,
                    read_base: env.world.read_base(),
                    case: env.world.read_case(),
                    ..Default::default()
                };
                match mprof_reader::read_one(text, *offset, &opts) {
                    Ok(None) => {
                        let (last, dyn_mark) = (*last, *dyn_mark as usize);
                        let ret = self.frames[n].ret as usize;
                        self.pop_frame();
                        self.stack.truncate(ret);
                        while self.dyn_stack.len() > dyn_mark {
                            if let Some(DynEntry::Special { sym, old }) = self.dyn_stack.pop() {
                                alloc::symbol_set_value(env.mc, sym, old);
                            }
                        }
                        return self.deliver(env, last);
                    }
                    Ok(Some((datum, end))) => {
                        *offset = end;
                        self.compile_line = datum.span.line;
                        self.compile_file = file.clone();
                        let package = match env.world.syms.package.value.get() {
                            Value::Package(p) => p,
                            _ => env.world.packages.user,
                        };
                        self.count_spans.spans.clear();
                        self.count_spans.cells.clear();
                        self.count_span_roots.clear();
                        let converted = match file {
                            Some(path) if self.counting => {
                                let source = match &self.count_source {
                                    Some((t, i)) if Rc::ptr_eq(t, text) => *i,
                                    _ => {
                                        let i = self.count_registry.source(path, text);
                                        self.count_source = Some((text.clone(), i));
                                        i
                                    }
                                };
                                self.count_spans.source = source;
                                let mut spans = mprof_heap::datum::SourceSpans::default();
                                let r = mprof_heap::datum::datum_to_value_spanned(
                                    env.mc,
                                    &env.world.packages,
                                    package,
                                    &datum,
                                    &mut spans,
                                );
                                for (v, span) in spans.lists {
                                    if let Some(a) = v.heap_address() {
                                        self.count_spans.spans.insert(a, span);
                                    }
                                }
                                // Every cons of the form is a cell: rooting the cells roots all.
                                for (v, span) in spans.cells {
                                    if let Some(a) = v.heap_address() {
                                        self.count_spans.cells.insert(a, span);
                                        self.count_span_roots.push(v);
                                    }
                                }
                                r
                            }
                            _ => mprof_heap::datum::datum_to_value(env.mc, &env.world.packages, package, &datum),
                        };
                        let converted = match converted {
                            Ok(v) if crate::labels::datum_has_labels(&datum) => {
                                crate::labels::resolve(env.mc, env.world, v).map(Ok)?
                            }
                            other => other,
                        };
                        match converted {
                            Ok(v) if crate::read_time::datum_needs_read_time(&datum) => {
                                crate::read_time::deferred_form(env.mc, env.world, v)
                            }
                            Ok(v) => v,
                            Err(e) => {
                                let where_ = match file {
                                    Some(f) => format!("{f}:{}:{}", e.span.line, e.span.column),
                                    None => format!("{}:{}", e.span.line, e.span.column),
                                };
                                return Err(Raise::simple(ErrorKind::Package, format!("{where_}: {}", e.error)));
                            }
                        }
                    }
                    Err(e) => {
                        // Skip the rest of the text: one reader error ends the load.
                        *offset = text.len();
                        return Err(Raise::simple(ErrorKind::Reader, e.to_string()));
                    }
                }
            };
            // A top-level PROGN's forms are top-level forms too, and so are those
            // of an EVAL-WHEN that runs at load time (a macro it defines is then
            // defined before the next of its forms is compiled, as in CL).
            if let Value::Cons(c) = form
                && let Some(body) = toplevel_body(env.world, c.car.get(), c.cdr.get())
            {
                let items = alloc::list_to_vec(body).unwrap_or_default();
                let n = self.frames.len() - 1;
                if let Cont::Native(b) = &mut self.frames[n].cont
                    && let Native::LoadSource { queued, .. } = &mut **b
                {
                    *queued = alloc::list_with_tail(env.mc, &items, *queued);
                }
                continue;
            }
            let mark = self.expansions.len() as u32;
            return self.compile_start(env, form, mark);
        }
    }

    /// Signal an error raised by a builtin or by the VM: make the condition
    /// and call ERROR with it (or abort if ERROR cannot run).
    fn raise(&mut self, env: &mut Env<'_, 'gc>, r: Raise<'gc>) {
        if let Raise::Request(HostRequest::Exit(70)) = r {
            // The frame limit was hit again while handling stack exhaustion.
            let c = crate::conditions::from_raise(
                env.mc,
                env.world,
                Raise::simple(ErrorKind::StackExhausted, "Control stack exhausted"),
            );
            self.abort(env, c);
            return;
        }
        let condition = crate::conditions::from_raise(env.mc, env.world, r);
        let error_fn = env.world.syms.error.function.get();
        if self.aborting || !matches!(error_fn, Value::Function(_)) {
            self.abort(env, condition);
            return;
        }
        let b = self.stack.len();
        self.stack.push(condition);
        if let Err(r2) = self.call_value(env, error_fn, b, 1, b) {
            let c2 = crate::conditions::from_raise(env.mc, env.world, r2);
            let _ = condition;
            self.abort(env, c2);
        }
    }

    /// The running Lisp frames of the program, innermost first, with their
    /// functions' names: the condition system's own frames (ERROR, SIGNAL...) are
    /// left out, for backtraces and the debugger alike.
    fn program_frames(&self) -> impl Iterator<Item = (&Frame<'gc>, Value<'gc>)> {
        const MACHINERY: [&str; 5] = ["ERROR", "SIGNAL", "%UNHANDLED-CONDITION", "%SIGNAL", "INVOKE-DEBUGGER"];
        self.frames.iter().rev().filter(|f| matches!(f.cont, Cont::Lisp)).filter_map(|f| match f.func {
            Value::Function(fp) => match fp.name() {
                Value::Symbol(s) if MACHINERY.contains(&&*s.name) => None,
                name => Some((f, name)),
            },
            _ => None,
        })
    }

    /// The running Lisp frames for the debugger, innermost first, each a list of
    /// the function's name and its parameters' current values (at most 100).
    fn backtrace_frames(&self, env: &mut Env<'_, 'gc>) -> Value<'gc> {
        let mut out = Vec::new();
        for (f, name) in self.program_frames().take(100) {
            let name = match name {
                Value::Nil => alloc::list(env.mc, &[Value::Symbol(env.world.syms.lambda)]),
                n => n,
            };
            let params = f.proto.map(|p| {
                let ps = &Gc::as_ref(p).val.info.params;
                ps.required as usize + ps.optional as usize + usize::from(ps.rest) + ps.keys.len()
            });
            let base = f.base as usize;
            let args: Vec<Value<'gc>> = match params {
                Some(n) => self.stack.get(base..(base + n).min(self.stack.len())).unwrap_or(&[]).to_vec(),
                None => Vec::new(),
            };
            let frame = alloc::list_with_tail(env.mc, &[name], alloc::list(env.mc, &args));
            out.push(frame);
        }
        alloc::list(env.mc, &out)
    }

    /// No handler took `condition`: record the backtrace, run every pending
    /// cleanup and end the run with an error.
    fn abort(&mut self, env: &mut Env<'_, 'gc>, condition: Value<'gc>) {
        let ctx = self.print_ctx(env);
        self.backtrace = self
            .program_frames()
            .map(|(_, n)| match n {
                Value::Nil => "(LAMBDA)".to_string(),
                n => mprof_heap::printer::print_to_string(n, &ctx),
            })
            .take(50)
            .collect();
        self.error_location = self.frames.iter().rev().find_map(|f| {
            let info = &Gc::as_ref(f.proto?).val.info;
            let file = info.file.as_deref()?;
            (info.toplevel && !from_prelude(info) && file != "-e" && info.line > 0).then(|| format!("{file}:{}", info.line))
        });
        self.result = condition;
        self.aborting = true;
        let _ = self.unwind_to(env, ExitTarget::Abort, Vec::new());
    }

    /// Unwind toward `target`, undoing bindings; stop to run a cleanup when
    /// one is met (EndCleanup resumes the exit).
    fn unwind_to(&mut self, env: &mut Env<'_, 'gc>, target: ExitTarget, vals: Vec<Value<'gc>>) -> VResult<'gc> {
        loop {
            if let ExitTarget::Catch(i) = target
                && self.dyn_stack.len() == i + 1
            {
                let Some(DynEntry::Catch { frame, height, pc, .. }) = self.dyn_stack.pop() else {
                    return Err(Raise::error("internal error: exit target is not a catch"));
                };
                self.pending.retain(|p| match p {
                    Pending::Exit { dyn_len, .. } | Pending::Normal { dyn_len, .. } => (*dyn_len as usize) <= i,
                });
                self.truncate_frames(frame as usize + 1);
                self.stack.truncate(height as usize);
                let primary = vals.first().copied().unwrap_or(Value::Nil);
                self.values_single = vals.len() == 1;
                self.values = vals;
                self.stack.push(primary);
                if let Some(f) = self.frames.last_mut() {
                    f.pc = pc;
                }
                return Ok(());
            }
            match self.dyn_stack.pop() {
                None => {
                    // Only an abort gets here: everything is unwound.
                    self.truncate_frames(0);
                    self.stack.clear();
                    self.pending.clear();
                    self.expansions.clear();
                    self.finished = Some(Step::Error);
                    return Ok(());
                }
                Some(DynEntry::Special { sym, old }) => alloc::symbol_set_value(env.mc, sym, old),
                Some(DynEntry::Catch { .. }) => {}
                Some(DynEntry::UnwindProtect { frame, height, pc }) => {
                    self.truncate_frames(frame as usize + 1);
                    self.stack.truncate(height as usize);
                    self.stack.push(Value::Nil);
                    self.pending.push(Pending::Exit { target, values: vals, dyn_len: self.dyn_stack.len() as u32 });
                    if let Some(f) = self.frames.last_mut() {
                        f.pc = pc;
                    }
                    return Ok(());
                }
            }
        }
    }
}

/// The global function named by `name` (a symbol or `(setf symbol)`), if defined.
pub fn function_of<'gc>(name: Value<'gc>) -> Option<Value<'gc>> {
    match name {
        Value::Symbol(s) => {
            let f = s.function.get();
            if matches!(f, Value::Unbound) || s.has_flag(SYM_MACRO) { None } else { Some(f) }
        }
        Value::Cons(_) => match alloc::car(alloc::cdr(name)) {
            Value::Symbol(s) => {
                let f = s.setf_function.get();
                if matches!(f, Value::Unbound) { None } else { Some(f) }
            }
            _ => None,
        },
        _ => None,
    }
}

/// The names of the features in *FEATURES*, for #+ and #-.
fn feature_names(world: &World<'_>) -> Vec<String> {
    alloc::list_iter(world.syms.features.value.get())
        .filter_map(|f| match f {
            Value::Symbol(s) => Some(s.name.to_string()),
            _ => None,
        })
        .collect()
}

/// The low half of a cached profiler id (a proto's `prof_id`, a builtin's
/// `builtin_prof_ids` entry) marking the function transparent to the profiler:
/// it gets no entry (see `Vm::proto_function`, `Vm::builtin_function_id`).
const TRANSPARENT_ID: u64 = 0xffff_ffff;

/// What the profile shows of a compiled function: its name (as the printer
/// writes it, without a package prefix for COMMON-LISP and CL-USER symbols),
/// file and line.
fn function_info<'gc>(p: &Proto<'gc>, world: &World<'gc>) -> mprof_engine::monitor::FunctionInfo {
    let name = if p.info.toplevel {
        "(top level)".to_string()
    } else {
        match p.name {
            Value::Nil => "(LAMBDA)".to_string(),
            Value::Symbol(s) => s.name.to_string(),
            other => {
                let ctx = mprof_heap::printer::PrintContext {
                    settings: mprof_heap::printer::Settings::safe(),
                    ..mprof_heap::printer::PrintContext::new(&world.packages, world.packages.user, true)
                };
                mprof_heap::printer::print_to_string(other, &ctx)
            }
        }
    };
    let file = p.info.file.clone().filter(|_| !from_prelude(&p.info));
    // All top-level forms share one "(top level)" entry (no line).
    let line = if file.is_some() && p.info.line > 0 && !p.info.toplevel { Some(p.info.line) } else { None };
    mprof_engine::monitor::FunctionInfo {
        name,
        line,
        file,
        module: None,
    }
}

/// A float, or a fixnum a double represents exactly (|i| <= 2^53).
fn small_or_float(v: Value<'_>) -> bool {
    match v {
        Value::Fixnum(i) => i.unsigned_abs() <= 1u64 << 53,
        _ => true,
    }
}

/// The forms of a top-level form to be processed as top-level forms in turn:
/// a PROGN's body, and an EVAL-WHEN's body when its situations include load
/// or execute time (NIL, no forms, when they do not).
fn toplevel_body<'gc>(world: &crate::world::World<'gc>, head: Value<'gc>, rest: Value<'gc>) -> Option<Value<'gc>> {
    let Value::Symbol(s) = head else { return None };
    let syms = &world.syms;
    if gc_arena::Gc::ptr_eq(s, syms.progn) {
        return Some(rest);
    }
    if !gc_arena::Gc::ptr_eq(s, syms.eval_when) {
        return None;
    }
    let situations = alloc::list_to_vec(alloc::car(rest))?;
    let runs = situations.iter().any(|x| match x {
        Value::Symbol(y) => {
            gc_arena::Gc::ptr_eq(*y, syms.execute)
                || gc_arena::Gc::ptr_eq(*y, syms.load_toplevel)
                || &*y.name == "EVAL"
                || &*y.name == "LOAD"
        }
        _ => false,
    });
    Some(if runs { alloc::cdr(rest) } else { Value::Nil })
}
