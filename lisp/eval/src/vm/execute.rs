//! The instruction loop: runs the Lisp frames on top, following calls into
//! Lisp functions and returns into Lisp frames without leaving, until the top
//! is a native frame, an error is raised, the run ends or the fuel runs out.
//! It is one `match` over the opcode on purpose: splitting the hot loop into
//! functions per group of opcodes costs calls on every instruction.
//!
//! Invariant: the locals `fi`, `code`, `consts`, `captured`, `base` and `pc`
//! always describe the top frame (`frame_state`); every path that changes the
//! frames either reloads them or leaves the loop, and the pc is saved into the
//! frame before anything that can push a frame or raise.

use gc_arena::Gc;
use mprof_heap::code::{Op, Proto};
use mprof_heap::value::{Function, Ptr, SYM_MACRO};
use mprof_heap::{Value, alloc};

use crate::runtime::raise::{ErrorKind, Raise};
use crate::runtime::world::function_of;
use crate::vm::{DynEntry, Env, ExitTarget, Frame, Pending, Step, VResult, Vm};

impl<'gc> Vm<'gc> {
    /// Execute the Lisp frame on top until it calls, returns, exits or runs out of fuel.
    pub(super) fn execute(&mut self, env: &mut Env<'_, 'gc>, fuel: &mut i64) -> VResult<'gc> {
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
        let (mut fi, mut code, mut consts, mut captured, mut base, mut pc) = frame_state(frame, fi, proto_ptr);
        let mc = env.mc;
        // After a call pushed a frame or a return popped one: go on with the
        // Lisp frame now on top without leaving the loop (leaving and entering
        // again cost a tenth of a call's instructions), or leave when the top is
        // a native frame or the run has finished.
        macro_rules! switch_frame {
            () => {{
                if self.finished.is_some() {
                    return Ok(());
                }
                let top = self.frames.len() - 1;
                match self.frames[top].proto {
                    Some(p) => (fi, code, consts, captured, base, pc) = frame_state(&self.frames[top], top, p),
                    None => return Ok(()),
                }
            }};
        }
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
                    if self.call_value(env, f, fpos + 1, n, fpos)? || self.frames.len() != fi + 1 {
                        switch_frame!();
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
                    if self.call_value(env, f, b, n, b)? || self.frames.len() != fi + 1 {
                        switch_frame!();
                    }
                }
                Op::Return => {
                    self.fuel_now = *fuel;
                    let below = fi.wrapping_sub(1);
                    match self.frames.get(below).and_then(|f| f.proto) {
                        // Into the Lisp frame below: what `do_return` does
                        // (the profiles' hooks included), without its way
                        // through native frames.
                        Some(p) if fi + 1 == self.frames.len() => {
                            let v = pop!();
                            let ret = self.frames[fi].ret as usize;
                            self.truncate_frames(fi);
                            self.stack.truncate(ret);
                            self.stack.push(v);
                            if self.frame_limit != self.base_frame_limit && fi < self.base_frame_limit / 2 {
                                self.frame_limit = self.base_frame_limit;
                            }
                            (fi, code, consts, captured, base, pc) = frame_state(&self.frames[below], below, p);
                        }
                        _ => {
                            self.do_return(env)?;
                            switch_frame!();
                        }
                    }
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
                            if self.call_value(env, f, b, nargs, b)? || self.frames.len() != fi + 1 {
                                switch_frame!();
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
                        .rposition(|e| matches!(e, DynEntry::Catch { tag: t, .. } if t.eq(tag) || crate::runtime::equal::eql(*t, tag)));
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
                    let mut check = crate::runtime::cycle::CycleCheck::new(cur);
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
                    if self.call_value(env, f, fpos + 1, n, fpos)? || self.frames.len() != fi + 1 {
                        switch_frame!();
                    }
                }
            }
        }
    }
}

/// The running state of Lisp frame `fi` (whose proto is `proto`): its code,
/// constants, captured values, base and pc.
#[allow(clippy::type_complexity)]
#[inline(always)]
fn frame_state<'gc>(
    frame: &Frame<'gc>,
    fi: usize,
    proto: Ptr<'gc, Proto<'gc>>,
) -> (usize, &'gc [Op], &'gc [Value<'gc>], &'gc [Value<'gc>], usize, usize) {
    let proto: &'gc Proto<'gc> = &Gc::as_ref(proto).val;
    let captured: &'gc [Value<'gc>] = match frame.func {
        Value::Function(f) => match &Gc::as_ref(f).val {
            Function::Closure(c) => &c.captured,
            Function::Builtin(_) => &[],
        },
        _ => &[],
    };
    (fi, &proto.code, &proto.consts, captured, frame.base as usize, frame.pc as usize)
}

/// Tags for blocks and tagbodies exited from closures: fixnums from a range
/// no program writes by hand, so they cannot collide with user catch tags.
pub(super) const TAG_BASE: i64 = i64::MIN / 2;

/// A float, or a fixnum a double represents exactly (|i| <= 2^53).
pub(super) fn small_or_float(v: Value<'_>) -> bool {
    match v {
        Value::Fixnum(i) => i.unsigned_abs() <= 1u64 << 53,
        _ => true,
    }
}
