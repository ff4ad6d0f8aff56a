//! Calls: entering a compiled function (its lambda list parsed into a new
//! frame, `&optional`/`&rest`/`&key` included), calling a builtin or a host
//! native by id with its argument count checked, and the special builtins the
//! VM carries out itself (FUNCALL, APPLY, VALUES, EVAL, the loader, printing,
//! FORMAT, macroexpansion).

use std::rc::Rc;

use gc_arena::Gc;
use mprof_heap::code::Proto;
use mprof_heap::value::{Function, Ptr, SYM_MACRO};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{self, Kind, Special};
use crate::runtime::ctx::Ctx;
use crate::runtime::printing;
use crate::runtime::raise::{ErrorKind, HostRequest, Raise};
use crate::vm::{Cont, DynEntry, Env, Frame, LoadWait, Native, VResult, Vm};

impl<'gc> Vm<'gc> {
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
    pub(super) fn enter(
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
            return Err(Raise::Request(HostRequest::FramesExhausted(self.base_frame_limit)));
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

    pub(super) fn parse_keys(
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

    pub(super) fn print_ctx<'a>(&self, env: &'a Env<'_, 'gc>) -> mprof_heap::printer::PrintContext<'a, 'gc> {
        let current = match env.world.syms.package.value.get() {
            Value::Package(p) => p,
            _ => env.world.packages.user,
        };
        mprof_heap::printer::PrintContext {
            settings: mprof_heap::printer::Settings::safe(),
            condition_report: Some(crate::runtime::conditions::static_report),
            ..mprof_heap::printer::PrintContext::new(&env.world.packages, current, true)
        }
    }

    pub(super) fn name_of(&self, env: &Env<'_, 'gc>, f: Value<'gc>) -> String {
        let name = match f {
            Value::Function(fp) => fp.name(),
            other => other,
        };
        match name {
            Value::Nil => "an anonymous function".to_string(),
            n => mprof_heap::printer::print_to_string(n, &self.print_ctx(env)),
        }
    }

    pub(super) fn arg_count_error(&self, env: &Env<'_, 'gc>, func: Value<'gc>, nargs: usize) -> Raise<'gc> {
        Raise::program(format!("invalid number of arguments: {nargs} (in a call to {})", self.name_of(env, func)))
    }

    pub(super) fn call_builtin(
        &mut self,
        env: &mut Env<'_, 'gc>,
        id: u32,
        base: usize,
        nargs: usize,
        ret: usize,
    ) -> Result<bool, Raise<'gc>> {
        let Some(def) = self.builtins.get(id as usize) else {
            return self.call_native(env, id as usize - self.builtins.len(), base, nargs, ret);
        };
        if nargs < def.min as usize || (def.max != builtin::MANY && nargs > def.max as usize) {
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
                let v = match r {
                    Ok(v) => v,
                    Err(Raise::Gray) => return self.delegate(env, "%GRAY-", def.name, base, nargs, ret),
                    Err(Raise::UserType) => return self.delegate(env, "%USER-TYPE-", def.name, base, nargs, ret),
                    Err(e) => return Err(e),
                };
                self.stack.truncate(ret);
                self.stack.push(v);
                self.values_single = !multiple;
                Ok(false)
            }
            Kind::Special(sp) => match self.call_special(env, sp, base, nargs, ret) {
                Err(Raise::Gray) => self.delegate(env, "%GRAY-", def.name, base, nargs, ret),
                Err(Raise::UserType) => self.delegate(env, "%USER-TYPE-", def.name, base, nargs, ret),
                r => r,
            },
        }
    }

    /// Carry out a builtin's call with Lisp code instead: the builtin met
    /// something it does not handle itself (a Gray stream, see `Raise::Gray`; a
    /// DEFTYPE name, see `Raise::UserType`) before doing anything, so its
    /// arguments are still in place and the Lisp function
    /// `SYS::<prefix><name>` is called with them. The common case pays nothing
    /// for this: only the error path looks here.
    #[cold]
    #[inline(never)]
    fn delegate(
        &mut self,
        env: &mut Env<'_, 'gc>,
        prefix: &str,
        name: &str,
        base: usize,
        nargs: usize,
        ret: usize,
    ) -> Result<bool, Raise<'gc>> {
        let packages = &env.world.packages;
        let f = packages.find_symbol(packages.system, &format!("{prefix}{name}")).map(|(v, _)| v);
        match f {
            Some(Value::Symbol(s)) if matches!(s.function.get(), Value::Function(_)) => {
                let f = s.function.get();
                self.call_value(env, f, base, nargs, ret)
            }
            _ if prefix == "%GRAY-" => Err(Raise::simple(ErrorKind::Stream, format!("{name} does not support Gray streams"))),
            _ => Err(Raise::error(format!("{name} does not accept types defined with DEFTYPE"))),
        }
    }

    /// Call a function the host registered: arguments and result cross as HostValues.
    pub(super) fn call_native(
        &mut self,
        env: &mut Env<'_, 'gc>,
        index: usize,
        base: usize,
        nargs: usize,
        ret: usize,
    ) -> Result<bool, Raise<'gc>> {
        let args: Vec<crate::runtime::host_value::HostValue> =
            self.stack[base..base + nargs].iter().map(|v| crate::runtime::host_value::to_host(env.world, *v, 0)).collect();
        let Some((name, f)) = env.host.natives.get_mut(index) else {
            return Err(Raise::error("internal error: unknown native function"));
        };
        let r = f(&args).map_err(|m| Raise::error(format!("{name}: {m}")))?;
        let v = crate::runtime::host_value::from_host(env.mc, env.world, None, &r)
            .map_err(|m| Raise::error(format!("{name} returned a value Lisp cannot take: {m}")))?;
        self.stack.truncate(ret);
        self.stack.push(v);
        self.values_single = true;
        Ok(false)
    }

    pub(super) fn call_special(
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
                let mut check = crate::runtime::cycle::CycleCheck::new(cur);
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
                // LOAD binds *PACKAGE* and *READTABLE*, so an IN-PACKAGE or a
                // readtable the file installs stays in the file.
                let dyn_mark = self.dyn_stack.len() as u32;
                let pkg_sym = env.world.syms.package;
                self.dyn_stack.push(DynEntry::Special { sym: pkg_sym, old: pkg_sym.value.get() });
                if let Value::Symbol(rt) = env.world.intern_cl(env.mc, "*READTABLE*") {
                    self.dyn_stack.push(DynEntry::Special { sym: rt, old: rt.value.get() });
                }
                self.push_native(Native::LoadSource {
                    text: Rc::from(text.as_str()),
                    offset: 0,
                    file: file.as_deref().map(Rc::from),
                    queued: Value::Nil,
                    last: env.world.t(),
                    dyn_mark,
                    text_value: Value::Nil,
                    wait: LoadWait::Value,
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
                    crate::runtime::format_function::format_run(&mut ctx, &self.stack[base..base + nargs], &lisp_printed)?
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
}
