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

mod call;
mod deliver;
mod execute;
mod hooks;
mod load;
mod print;
mod unwind;

use std::rc::Rc;

use gc_arena::{Collect, Mutation};
use mprof_heap::code::Proto;
use crate::profile::counting::{CountRegistry, SpanTable};
use mprof_engine::timing::TimeRecorder;
use mprof_heap::value::{Ptr, Symbol};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::BuiltinDef;
use crate::compiler;
use crate::runtime::host::Host;
use crate::runtime::printing::PrintTask;
use crate::runtime::raise::{ErrorKind, HostRequest, Raise};
use crate::runtime::world::World;

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
        /// Top-level forms to process before reading on: a PROGN's forms, a
        /// macro call's expansion, a form the Lisp reader read.
        queued: Value<'gc>,
        last: Value<'gc>,
        #[collect(require_static)]
        dyn_mark: u32,
        /// The text as a Lisp string, made when the Lisp reader first needs it.
        text_value: Value<'gc>,
        /// What the value delivered to this frame is.
        #[collect(require_static)]
        wait: LoadWait,
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
/// What a value delivered to a `Native::LoadSource` frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadWait {
    /// The value of the top-level form just evaluated.
    Value,
    /// A form the Lisp reader read (`(form end-offset)`), or NIL at the end of the text.
    Read,
    /// The expansion of a top-level macro call, itself a top-level form.
    Expansion,
}

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
    /// The builtins, by id (the builtins layer's table, handed in by the interpreter).
    #[collect(require_static)]
    builtins: &'static [BuiltinDef],
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
    pub fn new(frame_limit: usize, builtins: &'static [BuiltinDef]) -> Self {
        Vm {
            builtins,
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
            text_value: Value::Nil,
            wait: LoadWait::Value,
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

    /// Set the frame limit (the host may change it between runs or during one;
    /// a margin being used by a handler is kept until the run unwinds).
    pub fn set_frame_limit(&mut self, limit: usize) {
        if self.frame_limit == self.base_frame_limit {
            self.frame_limit = limit;
        }
        self.base_frame_limit = limit;
    }

    /// Whether nothing is queued for the next slice (an interrupt may be).
    pub fn idle_kick(&self) -> bool {
        matches!(self.kick, Kick::None)
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

