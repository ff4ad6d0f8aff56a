//! Errors and non-local exits: a builtin's `Raise` becomes a condition passed
//! to ERROR; an unhandled one aborts the run with a backtrace of the program's
//! frames; an exit to a block, tag or catch pops the dynamic stack entry by
//! entry, undoing special bindings and running unwind-protect cleanups.

use gc_arena::Gc;
use mprof_heap::{Value, alloc};

use crate::runtime::raise::{ErrorKind, HostRequest, Raise};
use crate::vm::{Cont, DynEntry, Env, ExitTarget, Frame, Native, Pending, Step, VResult, Vm};
use crate::vm::hooks::from_prelude;

impl<'gc> Vm<'gc> {
    /// Signal an error raised by a builtin or by the VM: make the condition
    /// and call ERROR with it (or abort if ERROR cannot run).
    pub(super) fn raise(&mut self, env: &mut Env<'_, 'gc>, r: Raise<'gc>) {
        if let Raise::Request(HostRequest::FramesExhausted(_)) = r {
            // The frame limit was hit again while handling stack exhaustion.
            let c = crate::runtime::conditions::from_raise(
                env.mc,
                env.world,
                Raise::simple(ErrorKind::StackExhausted, "Control stack exhausted"),
            );
            self.abort(env, c);
            return;
        }
        let condition = crate::runtime::conditions::from_raise(env.mc, env.world, r);
        let error_fn = env.world.syms.error.function.get();
        if self.aborting || !matches!(error_fn, Value::Function(_)) {
            self.abort(env, condition);
            return;
        }
        let b = self.stack.len();
        self.stack.push(condition);
        if let Err(r2) = self.call_value(env, error_fn, b, 1, b) {
            let c2 = crate::runtime::conditions::from_raise(env.mc, env.world, r2);
            let _ = condition;
            self.abort(env, c2);
        }
    }

    /// The running Lisp frames of the program, innermost first, with their
    /// functions' names: the condition system's own frames (ERROR, SIGNAL...) are
    /// left out, for backtraces and the debugger alike.
    pub(super) fn program_frames(&self) -> impl Iterator<Item = (&Frame<'gc>, Value<'gc>)> {
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
    pub(super) fn backtrace_frames(&self, env: &mut Env<'_, 'gc>) -> Value<'gc> {
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
    pub(super) fn abort(&mut self, env: &mut Env<'_, 'gc>, condition: Value<'gc>) {
        let ctx = self.print_ctx(env);
        self.backtrace = self
            .program_frames()
            .map(|(_, n)| match n {
                Value::Nil => "(LAMBDA)".to_string(),
                n => mprof_heap::printer::print_to_string(n, &ctx),
            })
            .take(50)
            .collect();
        // The innermost top-level form running; or, when the innermost load has not
        // started running its current form (it failed to read, expand or compile),
        // that form's file and line.
        self.error_location = None;
        for f in self.frames.iter().rev() {
            if let Cont::Native(n) = &f.cont
                && matches!(**n, Native::LoadSource { .. })
            {
                self.error_location = match self.compile_file.as_deref() {
                    Some(file) if !file.starts_with("prelude/") && file != "-e" && self.compile_line > 0 => {
                        Some(format!("{file}:{}", self.compile_line))
                    }
                    _ => None,
                };
                break;
            }
            let Some(proto) = f.proto else { continue };
            let info = &Gc::as_ref(proto).val.info;
            let Some(file) = info.file.as_deref() else { continue };
            if info.toplevel && !from_prelude(info) && file != "-e" && info.line > 0 {
                self.error_location = Some(format!("{file}:{}", info.line));
                break;
            }
        }
        self.result = condition;
        self.aborting = true;
        let _ = self.unwind_to(env, ExitTarget::Abort, Vec::new());
    }

    /// Unwind toward `target`, undoing bindings; stop to run a cleanup when
    /// one is met (EndCleanup resumes the exit).
    pub(super) fn unwind_to(&mut self, env: &mut Env<'_, 'gc>, target: ExitTarget, vals: Vec<Value<'gc>>) -> VResult<'gc> {
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
