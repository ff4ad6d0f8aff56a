//! Returning: a value returned from a Lisp frame to its caller, or into a
//! native frame, whose continuation it resumes (compilation after a macro
//! expansion, the next form of a source text, a print or FORMAT waiting for a
//! method, the end of a run).

use mprof_heap::Value;

use crate::compiler;
use crate::runtime::raise::Raise;
use crate::vm::{Cont, Env, Frame, Native, Step, VResult, Vm};

impl<'gc> Vm<'gc> {
    /// Return from the Lisp frame on top with the value on top of the stack.
    pub(super) fn do_return(&mut self, env: &mut Env<'_, 'gc>) -> VResult<'gc> {
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
    pub(super) fn deliver(&mut self, env: &mut Env<'_, 'gc>, v: Value<'gc>) -> VResult<'gc> {
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
                    let ((expander, key), form, mark) = (needs.pair(*next).unwrap_or((Value::Nil, Value::Nil)), *form, *mark);
                    let following = *next + 1;
                    let exp = self.stack.pop().unwrap_or(Value::Nil);
                    self.expansions.push(key, expander, exp);
                    if let Some((expander, call)) = needs.pair(following) {
                        let environment =
                            needs.scopes.get(following).map_or(Value::Nil, |s| s.to_environment(env.mc, &env.world.packages));
                        let n = self.frames.len() - 1;
                        if let Cont::Native(b) = &mut self.frames[n].cont
                            && let Native::Expansion { next, .. } = &mut **b
                        {
                            *next = following;
                        }
                        self.hide_prelude_expansion(expander);
                        let b = self.stack.len();
                        self.stack.push(call);
                        self.stack.push(environment);
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
                    self.expansions.push(key, Value::Nil, f);
                    return self.compile_start(env, form, mark);
                }
                Native::LoadSource { .. } => {
                    let v = self.stack.pop().unwrap_or(Value::Nil);
                    self.load_delivered(env, v);
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
}
