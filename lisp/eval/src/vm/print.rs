//! Printing as a VM operation: a print job that stops at an object with a
//! Lisp print method waits in a native frame while the VM calls the method,
//! then resumes; FORMAT has such objects printed to strings first and runs
//! again with their texts.

use mprof_heap::{Value, alloc};

use crate::runtime::ctx::Ctx;
use crate::runtime::printing::{self, PrintFn, PrintTask};
use crate::runtime::raise::Raise;
use crate::vm::{Cont, DynEntry, Env, FormatText, Frame, Native, Vm};

impl<'gc> Vm<'gc> {
    /// Run a print task: its value is pushed (false), or it waits in a native
    /// frame for the print method it called (true).
    pub(super) fn print_run(&mut self, env: &mut Env<'_, 'gc>, mut task: PrintTask<'gc>) -> Result<bool, Raise<'gc>> {
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
    pub(super) fn print_resume(&mut self, env: &mut Env<'_, 'gc>) -> Result<bool, Raise<'gc>> {
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
    pub(super) fn call_method(&mut self, env: &mut Env<'_, 'gc>, call: printing::MethodCall<'gc>) -> Result<bool, Raise<'gc>> {
        let b = self.stack.len();
        let n = call.args.len();
        self.stack.extend(call.args);
        self.call_value(env, call.method, b, n, b)
    }

    /// Run FORMAT with the texts known so far: its value is pushed (false), or
    /// objects printed by methods still need texts and a FORMAT frame waits for
    /// them (true).
    pub(super) fn format_run(
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
            crate::runtime::format_function::format_run(&mut ctx, &args, &lisp_printed)?
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
    pub(super) fn format_print_next(&mut self, env: &mut Env<'_, 'gc>, object: Value<'gc>, escape: bool) -> Result<bool, Raise<'gc>> {
        let task = {
            let mut ctx = Ctx { mc: env.mc, world: env.world, host: env.host, values: &mut self.values, multiple: false };
            let t = env.world.t();
            printing::start(&mut ctx, PrintFn::ForFormat, &[object, Value::bool(escape, t)])?
        };
        self.print_run(env, task)
    }
}
