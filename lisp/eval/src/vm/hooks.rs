//! The VM's profiler hooks: keeping the memory profiler's context stack and
//! the time recorder in step with frames (entered, truncated), the profiler
//! ids of compiled functions and builtins (cached in protos and per builtin,
//! with a generation so a new profile starts fresh), and which frames are
//! transparent (the system's helpers and the prelude's macro expansions,
//! charged to their user unless internals are shown).
//!
//! Invariant: while profiling, the context stack has one entry per shown VM
//! frame, plus one for a builtin that allocated; every frame pop truncates it.

use gc_arena::Gc;
use mprof_engine::model::FuncId;
use mprof_engine::timing::TimeRecorder;
use mprof_heap::code::Proto;
use mprof_heap::value::{Function, Ptr};
use mprof_heap::Value;

use crate::runtime::builtin;
use crate::runtime::world::World;
use crate::vm::Vm;

impl<'gc> Vm<'gc> {
    /// A frame was pushed: tell the profiles that want it. `None` is a frame they do
    /// not show (native frames, primitives charged to their caller).
    #[inline]
    pub(super) fn hook_enter(&mut self, func: Option<FuncId>) {
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
    pub(super) fn shown(&self, func: Option<FuncId>) -> Option<FuncId> {
        match self.internal_from {
            Some(from) if self.frames.len() > from => None,
            _ => func,
        }
    }

    /// The time recorder's part of [`Vm::hook_enter`], out of line so the memory
    /// profiler's common path stays small enough to inline.
    #[inline(never)]
    pub(super) fn time_enter(&mut self, func: Option<FuncId>) {
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
    pub(super) fn hook_truncate(&mut self, n: usize) {
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
    pub(super) fn time_truncate(&mut self, n: usize) {
        let instructions = self.instructions();
        if let Some(t) = self.time.as_deref_mut() {
            t.truncate(n, instructions);
        }
    }

    pub(super) fn refresh_profiling(&mut self) {
        self.profiling = self.memory_profiling || self.time.is_some();
        self.primitives_to_caller = crate::profile::primitives_to_caller();
        self.show_internals = crate::profile::show_internals();
        self.prof_generation = crate::profile::generation();
    }

    /// The profiler function of each running frame, outermost first.
    pub(super) fn running_functions(&mut self, world: &World<'gc>) -> Vec<Option<FuncId>> {
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
    pub(super) fn proto_function(&mut self, proto: Ptr<'gc, Proto<'gc>>, world: &World<'gc>) -> Option<FuncId> {
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
    pub(super) fn prof_push_proto(&mut self, proto: Ptr<'gc, Proto<'gc>>, world: &World<'gc>) {
        let f = self.proto_function(proto, world);
        self.hook_enter(f);
    }

    /// The call site of the call being made: the saved pc of the nearest Lisp
    /// frame below the top (the caller), for call-site distinction.
    pub(super) fn caller_site(&self) -> u64 {
        let n = self.frames.len();
        let below = if n >= 2 && self.frames[n - 1].proto.is_some() { n - 2 } else { n.saturating_sub(1) };
        self.frames.get(below).map(|f| f.pc as u64).unwrap_or(0)
    }

    /// The call site of a builtin being called: it gets no frame, so its caller
    /// is the top frame, whose pc was saved by the call.
    #[inline]
    pub(super) fn builtin_call_site(&self) -> u64 {
        self.frames.last().map(|f| f.pc as u64).unwrap_or(0)
    }

    /// Push the profiler entry of a builtin being called; returns false when it
    /// gets none (its allocations are then charged to the caller's entry).
    #[inline]
    pub(super) fn prof_push_builtin(&mut self, id: u32) -> bool {
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
    pub(super) fn prof_pop_builtin(&mut self) {
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
    pub(super) fn builtin_function_id(&mut self, id: u32) -> Option<FuncId> {
        let i = id as usize;
        if self.builtin_prof_ids.len() <= i {
            self.builtin_prof_ids.resize(i + 1, 0);
        }
        if self.builtins.get(i).is_some_and(|d| d.package == builtin::Pkg::Sys) {
            self.builtin_prof_ids[i] = ((self.prof_generation as u64) << 32) | TRANSPARENT_ID;
            return None;
        }
        let (fid, cache) = crate::profile::function_id(self.builtin_prof_ids[i], || {
            let name = self.builtins.get(i).map(|d| d.name).unwrap_or("?");
            mprof_engine::model::FunctionInfo { name: name.to_string(), file: None, line: None, module: None }
        });
        self.builtin_prof_ids[i] = cache;
        Some(fid)
    }

    /// About to call `expander` for the compiler: when it is one of the prelude's
    /// macros (DEFSTRUCT, LOOP...) and internals are hidden, make its frame and all
    /// above it transparent, so the expansion's allocations and time go to the form
    /// being compiled.
    pub(super) fn hide_prelude_expansion(&mut self, expander: Value<'gc>) {
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

/// Whether a function was compiled from the prelude (its file is named `prelude/...`).
pub(super) fn from_prelude(info: &mprof_heap::code::ProtoInfo) -> bool {
    info.file.as_deref().is_some_and(|f| f.starts_with("prelude/"))
}

/// Whether a function's name is one of the system's own (its home package is SYSTEM).
pub(super) fn is_system_name<'gc>(name: Value<'gc>, world: &World<'gc>) -> bool {
    matches!(name, Value::Symbol(s) if s.package.get().is_some_and(|p| Gc::ptr_eq(p, world.packages.system)))
}

/// The low half of a cached profiler id (a proto's `prof_id`, a builtin's
/// `builtin_prof_ids` entry) marking the function transparent to the profiler:
/// it gets no entry (see `Vm::proto_function`, `Vm::builtin_function_id`).
pub(super) const TRANSPARENT_ID: u64 = 0xffff_ffff;

/// What the profile shows of a compiled function: its name (as the printer
/// writes it, without a package prefix for COMMON-LISP and CL-USER symbols),
/// file and line.
pub(super) fn function_info<'gc>(p: &Proto<'gc>, world: &World<'gc>) -> mprof_engine::model::FunctionInfo {
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
    mprof_engine::model::FunctionInfo {
        name,
        line,
        file,
        module: None,
    }
}
