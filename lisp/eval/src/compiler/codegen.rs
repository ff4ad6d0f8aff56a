//! Code generation: [`Ir`] to [`Proto`]s of stack-machine code.
//!
//! Each expression pushes exactly one value. The generator tracks, per
//! function, the stack height above the slots and the number of dynamic
//! entries (special bindings and catches) the function has pushed, so local
//! exits (`return-from`, `go`) drop a statically known number of values and
//! dynamic entries. Exits that leave the function or cross an unwind-protect
//! were marked nonlocal by the front end and go through catch/throw.
//!
//! Invariant: in a multiple-value context (`mv`), the values register holds
//! all values of the expression when its code ends.

use std::collections::HashMap;

use gc_arena::Mutation;
use mprof_heap::code::{Capture, Op, Params, Proto, ProtoInfo};
use mprof_heap::value::Ptr;
use mprof_heap::{Value, alloc};

use super::ir::*;
use crate::runtime::syms::Syms;

struct BlockState {
    height: u32,
    dyn_depth: u32,
    /// Unwind-protect (and progv) nesting at the block: a return-from from a
    /// deeper nesting must unwind through the VM to run the cleanups.
    up_depth: u32,
    mv: bool,
    exits: Vec<usize>,
}

struct TagbodyState {
    height: u32,
    up_depth: u32,
    /// Dynamic depth inside the tagbody (after its own catch, if any).
    dyn_depth: u32,
    labels: Vec<Option<u32>>,
    pending: Vec<(usize, usize)>,
}

struct FnGen<'gc> {
    id: FnId,
    code: Vec<Op>,
    lines: Vec<u32>,
    consts: Vec<Value<'gc>>,
    const_index: HashMap<(u8, usize), u32>,
    slots: HashMap<VarId, u32>,
    nslots: u32,
    height: u32,
    dyn_depth: u32,
    up_depth: u32,
    blocks: HashMap<BlockId, BlockState>,
    tagbodies: HashMap<TagbodyId, TagbodyState>,
    line: u32,
}

pub struct Codegen<'a, 'gc> {
    pub mc: &'a Mutation<'gc>,
    pub syms: &'a Syms<'gc>,
    pub unit: &'a Unit<'gc>,
    pub file: Option<String>,
    /// The outermost function is a top-level form's thunk.
    pub toplevel: bool,
    fns: Vec<FnGen<'gc>>,
}

impl<'a, 'gc> Codegen<'a, 'gc> {
    pub fn new(mc: &'a Mutation<'gc>, syms: &'a Syms<'gc>, unit: &'a Unit<'gc>, file: Option<String>) -> Self {
        Codegen { mc, syms, unit, file, toplevel: false, fns: Vec::new() }
    }

    fn f(&mut self) -> &mut FnGen<'gc> {
        // Generation always happens inside a function.
        let n = self.fns.len();
        &mut self.fns[n - 1]
    }

    fn emit(&mut self, op: Op) -> usize {
        let f = self.f();
        let line = f.line;
        f.code.push(op);
        f.lines.push(line);
        match op {
            Op::Const(_)
            | Op::Nil
            | Op::T
            | Op::Fixnum(_)
            | Op::LocalGet(_)
            | Op::BoxGet(_)
            | Op::CapGet(_)
            | Op::CapBoxGet(_)
            | Op::SymValue(_)
            | Op::FunctionOf(_)
            | Op::MakeClosure(_)
            | Op::Dup
            | Op::NewTag
            | Op::Supplied(_) => f.height += 1,
            Op::Pop | Op::JumpIfNil(_) | Op::JumpIfTrue(_) | Op::BindSpecial(_) | Op::PushCatch(_) => {
                f.height -= 1
            }
            Op::Slide(n) | Op::Drop(n) => f.height -= n,
            Op::Call(n) => f.height -= n, // function + n args -> 1 result
            Op::Inline { op, .. } => f.height = f.height + 1 - op.arity(),
            Op::CallGlobal { nargs, .. } => f.height = f.height + 1 - nargs,
            Op::MvPush(n) => f.height = f.height - 1 + n,
            Op::Throw => f.height -= 1,
            Op::Apply => f.height -= 1,
            Op::ProgvBind => f.height -= 1,
            Op::ProgvUnbind => f.height -= 1,
            _ => {}
        }
        f.code.len() - 1
    }

    fn here(&mut self) -> u32 {
        self.f().code.len() as u32
    }

    fn patch(&mut self, at: usize, target: u32) {
        let f = self.f();
        f.code[at] = match f.code[at] {
            Op::Jump(_) => Op::Jump(target),
            Op::JumpIfNil(_) => Op::JumpIfNil(target),
            Op::JumpIfTrue(_) => Op::JumpIfTrue(target),
            Op::PushCatch(_) => Op::PushCatch(target),
            Op::PushUnwindProtect(_) => Op::PushUnwindProtect(target),
            Op::JumpIfSupplied { slot, .. } => Op::JumpIfSupplied { slot, target },
            Op::JumpIfEqFixnum { value, .. } => Op::JumpIfEqFixnum { value, target },
            other => other,
        };
    }

    fn constant(&mut self, v: Value<'gc>) -> u32 {
        let key = match v {
            Value::Nil => (0, 0),
            Value::Fixnum(i) => (1, i as usize),
            Value::Char(c) => (2, c as usize),
            other => (3, other.heap_address().unwrap_or(0)),
        };
        let f = self.f();
        if let Some(&k) = f.const_index.get(&key) {
            return k;
        }
        f.consts.push(v);
        let k = (f.consts.len() - 1) as u32;
        f.const_index.insert(key, k);
        k
    }

    fn slot_of(&mut self, var: VarId) -> u32 {
        let f = self.f();
        if let Some(&s) = f.slots.get(&var) {
            return s;
        }
        let s = f.nslots;
        f.nslots += 1;
        f.slots.insert(var, s);
        s
    }

    fn anonymous_slot(&mut self) -> u32 {
        let f = self.f();
        let s = f.nslots;
        f.nslots += 1;
        s
    }

    /// Generate a function and everything inside it.
    pub fn function(&mut self, lam: &LambdaIr<'gc>) -> Ptr<'gc, Proto<'gc>> {
        self.fns.push(FnGen {
            id: lam.id,
            code: Vec::new(),
            lines: Vec::new(),
            consts: Vec::new(),
            const_index: HashMap::new(),
            slots: HashMap::new(),
            nslots: 0,
            height: 0,
            dyn_depth: 0,
            up_depth: 0,
            blocks: HashMap::new(),
            tagbodies: HashMap::new(),
            line: lam.line,
        });
        // Parameter slots come first, in the VM's layout order.
        let mut params = Params {
            required: lam.required.len() as u32,
            optional: lam.optional.len() as u32,
            rest: lam.rest.is_some(),
            keys: vec![],
            has_keys: lam.has_keys,
            allow_other_keys: lam.allow_other_keys,
        };
        // A parameter that is special gets an anonymous slot, bound in the prologue.
        let mut specials: Vec<(u32, Value<'gc>)> = Vec::new();
        let mut param_slot = |this: &mut Self, b: &Binding<'gc>| -> u32 {
            match b {
                Binding::Lexical(v) => this.slot_of(*v),
                Binding::Special(sym) => {
                    let s = this.anonymous_slot();
                    specials.push((s, *sym));
                    s
                }
            }
        };
        let mut req_slots = vec![];
        for b in &lam.required {
            req_slots.push(param_slot(self, b));
        }
        let mut opt_slots = vec![];
        for o in &lam.optional {
            opt_slots.push(param_slot(self, &o.var));
        }
        let rest_slot = lam.rest.as_ref().map(|b| param_slot(self, b));
        let mut key_slots = vec![];
        for k in &lam.keys {
            let kc = self.constant(k.keyword);
            params.keys.push(kc);
            key_slots.push(param_slot(self, &k.var));
        }
        let _ = (&req_slots, rest_slot);
        // Prologue: defaults and supplied-p for optionals and keys, in order,
        // so a default can see earlier parameters.
        let mut special_binds = 0;
        for (i, o) in lam.optional.iter().enumerate() {
            self.param_default(opt_slots[i], &o.var, o.default.as_ref(), o.supplied.as_ref(), &mut special_binds);
        }
        if let Some(b) = &lam.rest
            && let Some(rs) = rest_slot
        {
            self.bind_param_special(rs, b, &mut special_binds);
        }
        for (i, k) in lam.keys.iter().enumerate() {
            self.param_default(key_slots[i], &k.var, k.default.as_ref(), k.supplied.as_ref(), &mut special_binds);
        }
        for (i, b) in lam.required.iter().enumerate() {
            self.bind_param_special(req_slots[i], b, &mut special_binds);
        }
        // Box captured-and-assigned lexical parameters.
        let all_params = lam
            .required
            .iter()
            .chain(lam.optional.iter().map(|o| &o.var))
            .chain(lam.rest.iter())
            .chain(lam.keys.iter().map(|k| &k.var));
        let boxed: Vec<VarId> = all_params
            .filter_map(|b| match b {
                Binding::Lexical(v) if self.unit.vars[*v].boxed() => Some(*v),
                _ => None,
            })
            .collect();
        for v in boxed {
            let s = self.slot_of(v);
            self.emit(Op::MakeBox(s));
        }
        let _ = specials;
        self.expr(&lam.body, true);
        if special_binds > 0 {
            self.emit(Op::PopDyn(special_binds));
        }
        self.emit(Op::Return);
        let Some(mut f) = self.fns.pop() else {
            unreachable_function()
        };
        jumps_to_return(&mut f.code);
        let captures = self.unit.captures[lam.id]
            .iter()
            .map(|&v| self.capture_source(v))
            .collect::<Vec<_>>();
        let info = ProtoInfo {
            params,
            nslots: f.nslots,
            captures,
            file: self.file.clone(),
            line: lam.line,
            lines: f.lines,
            toplevel: self.fns.is_empty() && self.toplevel,
        };
        alloc::proto(
            self.mc,
            Proto {
                name: lam.name,
                consts: f.consts.into_boxed_slice(),
                code: f.code.into_boxed_slice(),
                info,
                prof_id: std::cell::Cell::new(0),
            },
        )
    }

    /// How the function now being generated (the parent of a new closure)
    /// obtains variable `v` for the closure.
    fn capture_source(&mut self, v: VarId) -> Capture {
        if self.fns.is_empty() {
            return Capture::Local(0);
        }
        let owner = self.unit.vars[v].owner;
        let me = self.f().id;
        if owner == me {
            Capture::Local(self.slot_of(v))
        } else {
            let idx = self.unit.captures[me].iter().position(|&x| x == v).unwrap_or(0);
            Capture::Captured(idx as u32)
        }
    }

    /// Prologue code of an optional or keyword parameter: bind its supplied-p
    /// variable, evaluate its default when the argument is missing, and bind
    /// it dynamically if it is special.
    fn param_default(
        &mut self,
        slot: u32,
        var: &Binding<'gc>,
        default: Option<&Ir<'gc>>,
        supplied: Option<&Binding<'gc>>,
        special_binds: &mut u32,
    ) {
        if let Some(sp) = supplied {
            self.emit(Op::Supplied(slot));
            self.store_new_binding(sp, special_binds);
        }
        let skip = self.emit(Op::JumpIfSupplied { slot, target: 0 });
        match default {
            Some(d) => self.expr(d, false),
            None => {
                self.emit(Op::Nil);
            }
        }
        self.emit(Op::LocalSet(slot));
        self.emit(Op::Pop);
        let h = self.here();
        self.patch(skip, h);
        self.bind_param_special(slot, var, special_binds);
    }

    fn bind_param_special(&mut self, slot: u32, b: &Binding<'gc>, special_binds: &mut u32) {
        if let Binding::Special(sym) = b {
            let k = self.constant(*sym);
            self.emit(Op::LocalGet(slot));
            self.emit(Op::BindSpecial(k));
            self.f().dyn_depth += 1;
            *special_binds += 1;
        }
    }

    /// Store the top into a fresh binding (pops it).
    fn store_new_binding(&mut self, b: &Binding<'gc>, special_binds: &mut u32) {
        match b {
            Binding::Lexical(v) => {
                let s = self.slot_of(*v);
                self.emit(Op::LocalSet(s));
                self.emit(Op::Pop);
                if self.unit.vars[*v].boxed() {
                    self.emit(Op::MakeBox(s));
                }
            }
            Binding::Special(sym) => {
                let k = self.constant(*sym);
                self.emit(Op::BindSpecial(k));
                self.f().dyn_depth += 1;
                *special_binds += 1;
            }
        }
    }

    fn var_get(&mut self, v: VarId) {
        let owner = self.unit.vars[v].owner;
        let boxed = self.unit.vars[v].boxed();
        if owner == self.f().id {
            let s = self.slot_of(v);
            self.emit(if boxed { Op::BoxGet(s) } else { Op::LocalGet(s) });
        } else {
            let me = self.f().id;
            let idx = self.unit.captures[me].iter().position(|&x| x == v).unwrap_or(0) as u32;
            self.emit(if boxed { Op::CapBoxGet(idx) } else { Op::CapGet(idx) });
        }
    }

    fn var_set(&mut self, v: VarId) {
        let owner = self.unit.vars[v].owner;
        let boxed = self.unit.vars[v].boxed();
        if owner == self.f().id {
            let s = self.slot_of(v);
            self.emit(if boxed { Op::BoxSet(s) } else { Op::LocalSet(s) });
        } else {
            let me = self.f().id;
            let idx = self.unit.captures[me].iter().position(|&x| x == v).unwrap_or(0) as u32;
            // Captured variables that are assigned are always boxed.
            self.emit(Op::CapBoxSet(idx));
        }
    }

    fn single(&mut self, mv: bool) {
        if mv {
            self.emit(Op::Values1);
        }
    }

    /// Generate code that pushes the value of `ir`.
    fn expr(&mut self, ir: &Ir<'gc>, mv: bool) {
        super::with_stack(|| self.expr_here(ir, mv))
    }

    fn expr_here(&mut self, ir: &Ir<'gc>, mv: bool) {
        match ir {
            Ir::Const(v) => {
                match *v {
                    Value::Nil => self.emit(Op::Nil),
                    Value::Fixnum(i) if i32::try_from(i).is_ok() => self.emit(Op::Fixnum(i as i32)),
                    Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, self.t_sym()) => self.emit(Op::T),
                    other => {
                        let k = self.constant(other);
                        self.emit(Op::Const(k))
                    }
                };
                self.single(mv);
            }
            Ir::Var(v) => {
                self.var_get(*v);
                self.single(mv);
            }
            Ir::SetVar(v, value) => {
                self.expr(value, false);
                self.var_set(*v);
                self.single(mv);
            }
            Ir::Special(sym) => {
                let k = self.constant(*sym);
                self.emit(Op::SymValue(k));
                self.single(mv);
            }
            Ir::SetSpecial(sym, value) => {
                self.expr(value, false);
                let k = self.constant(*sym);
                self.emit(Op::SymSet(k));
                self.single(mv);
            }
            Ir::If(c, t, e) => {
                self.expr(c, false);
                let jf = self.emit(Op::JumpIfNil(0));
                self.expr(t, mv);
                let jend = self.emit(Op::Jump(0));
                self.f().height -= 1;
                let h = self.here();
                self.patch(jf, h);
                self.expr(e, mv);
                let h = self.here();
                self.patch(jend, h);
            }
            Ir::Count(id, inner) => {
                self.emit(Op::Count(*id));
                self.expr(inner, mv);
            }
            Ir::Progn(forms) => {
                let n = forms.len();
                for (i, f) in forms.iter().enumerate() {
                    if i + 1 == n {
                        self.expr(f, mv);
                    } else {
                        self.expr(f, false);
                        self.emit(Op::Pop);
                    }
                }
                if n == 0 {
                    self.emit(Op::Nil);
                    self.single(mv);
                }
            }
            Ir::Let { bindings, sequential, body } => self.let_(bindings, *sequential, body, mv),
            Ir::Lambda(lam) => {
                let p = self.function(lam);
                let k = self.constant(Value::Proto(p));
                self.emit(Op::MakeClosure(k));
                self.single(mv);
            }
            Ir::Call(callee, args) => match callee {
                Callee::Global(name) => {
                    let k = self.constant(*name);
                    // (+ a b c ...) and (* a b c ...) are chained two at a time,
                    // left to right, as CL defines them.
                    if args.len() > 2
                        && let Some(op @ (mprof_heap::code::InlineOp::Add | mprof_heap::code::InlineOp::Mul)) =
                            self.inline_op(*name, 2)
                    {
                        self.expr(&args[0], false);
                        for a in &args[1..] {
                            self.expr(a, false);
                            self.emit(Op::Inline { op, sym: k });
                        }
                    } else {
                        for a in args {
                            self.expr(a, false);
                        }
                        let op = self.inline_op(*name, args.len());
                        match op {
                            Some(op) => {
                                self.emit(Op::Inline { op, sym: k });
                            }
                            None => {
                                self.emit(Op::CallGlobal { sym: k, nargs: args.len() as u32 });
                            }
                        }
                    }
                }
                Callee::Local(var) => {
                    self.var_get(*var);
                    for a in args {
                        self.expr(a, false);
                    }
                    self.emit(Op::Call(args.len() as u32));
                }
            },
            Ir::CallValue(f, args) => {
                self.expr(f, false);
                for a in args {
                    self.expr(a, false);
                }
                self.emit(Op::Call(args.len() as u32));
            }
            Ir::GlobalFunction(name) => {
                let k = self.constant(*name);
                self.emit(Op::FunctionOf(k));
                self.single(mv);
            }
            Ir::LocalFunctions { vars, lambdas, recursive, body } => {
                if *recursive {
                    for v in vars {
                        let s = self.slot_of(*v);
                        self.emit(Op::Nil);
                        self.emit(Op::LocalSet(s));
                        self.emit(Op::Pop);
                        if self.unit.vars[*v].boxed() {
                            self.emit(Op::MakeBox(s));
                        }
                    }
                    for (v, lam) in vars.iter().zip(lambdas) {
                        let p = self.function(lam);
                        let k = self.constant(Value::Proto(p));
                        self.emit(Op::MakeClosure(k));
                        self.var_set(*v);
                        self.emit(Op::Pop);
                    }
                } else {
                    for (v, lam) in vars.iter().zip(lambdas) {
                        let p = self.function(lam);
                        let k = self.constant(Value::Proto(p));
                        self.emit(Op::MakeClosure(k));
                        let s = self.slot_of(*v);
                        self.emit(Op::LocalSet(s));
                        self.emit(Op::Pop);
                        if self.unit.vars[*v].boxed() {
                            self.emit(Op::MakeBox(s));
                        }
                    }
                }
                self.expr(body, mv);
            }
            Ir::Block { id, body } => self.block(*id, body, mv),
            Ir::ReturnFrom { id, value } => self.return_from(*id, value),
            Ir::Tagbody { id, items } => {
                self.tagbody(*id, items);
                self.single(mv);
            }
            Ir::Go { id, tag } => self.go(*id, *tag),
            Ir::Catch(tag, body) => {
                self.expr(tag, false);
                let pc = self.emit(Op::PushCatch(0));
                self.f().dyn_depth += 1;
                self.expr(body, true);
                self.emit(Op::PopDyn(1));
                self.f().dyn_depth -= 1;
                let jend = self.emit(Op::Jump(0));
                let h = self.here();
                self.patch(pc, h);
                let h = self.here();
                self.patch(jend, h);
            }
            Ir::Throw(tag, value) => {
                self.expr(tag, false);
                self.expr(value, true);
                self.emit(Op::Throw);
            }
            Ir::UnwindProtect(protected, cleanup) => {
                let push = self.emit(Op::PushUnwindProtect(0));
                self.f().dyn_depth += 1;
                self.f().up_depth += 1;
                self.expr(protected, true);
                self.f().up_depth -= 1;
                self.emit(Op::PopUnwindProtect);
                self.f().dyn_depth -= 1;
                // The cleanup starts right after PopUnwindProtect; an exit in
                // progress enters it there too, with NIL in place of the value.
                let start = self.here();
                self.patch(push, start);
                self.expr(cleanup, false);
                self.emit(Op::Pop);
                self.emit(Op::EndCleanup);
            }
            Ir::MvBind { vars, form, body } => {
                self.expr(form, true);
                self.emit(Op::MvPush(vars.len() as u32));
                let mut special_binds = 0;
                for b in vars.iter().rev() {
                    self.store_new_binding(b, &mut special_binds);
                }
                self.expr(body, mv);
                if special_binds > 0 {
                    self.emit(Op::PopDyn(special_binds));
                    self.f().dyn_depth -= special_binds;
                }
            }
            Ir::MvList(form) => {
                self.expr(form, true);
                self.emit(Op::MvList);
                self.single(mv);
            }
            Ir::MvCall(f, forms) => {
                self.expr(f, false);
                for form in forms {
                    self.expr(form, true);
                    self.emit(Op::MvList);
                }
                let append = self.constant(Value::Symbol(self.syms.append));
                self.emit(Op::CallGlobal { sym: append, nargs: forms.len() as u32 });
                self.emit(Op::Apply);
            }
            Ir::MvProg1(first, rest) => {
                self.expr(first, true);
                self.emit(Op::MvList);
                for r in rest {
                    self.expr(r, false);
                    self.emit(Op::Pop);
                }
                let vl = self.constant(self.values_list_sym());
                self.emit(Op::CallGlobal { sym: vl, nargs: 1 });
            }
            Ir::Progv(symbols, values, body) => {
                self.expr(symbols, false);
                self.expr(values, false);
                // ProgvBind leaves the count of bindings under the body's value.
                self.emit(Op::ProgvBind);
                self.f().up_depth += 1;
                self.expr(body, true);
                self.f().up_depth -= 1;
                self.emit(Op::ProgvUnbind);
            }
        }
    }

    /// The inline operation for a call of COMMON-LISP function `name` with `nargs` arguments.
    fn inline_op(&self, name: Value<'gc>, nargs: usize) -> Option<mprof_heap::code::InlineOp> {
        let Value::Symbol(s) = name else { return None };
        let in_cl = matches!(s.package.get(), Some(p) if &*p.name() == "COMMON-LISP");
        if !in_cl {
            return None;
        }
        let op = mprof_heap::code::InlineOp::from_name(&s.name)?;
        // (- x) negates.
        let op = if op == mprof_heap::code::InlineOp::Sub && nargs == 1 { mprof_heap::code::InlineOp::Neg } else { op };
        (op.arity() as usize == nargs).then_some(op)
    }

    fn t_sym(&self) -> Ptr<'gc, mprof_heap::value::Symbol<'gc>> {
        self.syms.t_symbol
    }

    fn values_list_sym(&self) -> Value<'gc> {
        Value::Symbol(self.syms.values_list)
    }

    fn let_(&mut self, bindings: &[(Binding<'gc>, Ir<'gc>)], sequential: bool, body: &Ir<'gc>, mv: bool) {
        let mut special_binds = 0u32;
        let mut deferred = Vec::new();
        for (b, init) in bindings {
            self.expr(init, false);
            match b {
                Binding::Lexical(_) => {
                    let mut sb = 0;
                    self.store_new_binding(b, &mut sb);
                }
                Binding::Special(sym) => {
                    if sequential {
                        let k = self.constant(*sym);
                        self.emit(Op::BindSpecial(k));
                        self.f().dyn_depth += 1;
                        special_binds += 1;
                    } else {
                        deferred.push(*sym);
                    }
                }
            }
        }
        for sym in deferred.iter().rev() {
            let k = self.constant(*sym);
            self.emit(Op::BindSpecial(k));
            self.f().dyn_depth += 1;
            special_binds += 1;
        }
        self.expr(body, mv);
        if special_binds > 0 {
            self.emit(Op::PopDyn(special_binds));
            self.f().dyn_depth -= special_binds;
        }
    }

    fn block(&mut self, id: BlockId, body: &Ir<'gc>, mv: bool) {
        let info = &self.unit.blocks[id];
        let nonlocal = info.nonlocal;
        let tag_var = info.tag_var;
        let height = self.f().height;
        let dyn_depth = self.f().dyn_depth;
        let mut catch_at = None;
        if nonlocal {
            self.emit(Op::NewTag);
            self.var_set(tag_var);
            catch_at = Some(self.emit(Op::PushCatch(0)));
            self.f().dyn_depth += 1;
        }
        let up_depth = self.f().up_depth;
        self.f().blocks.insert(id, BlockState { height, dyn_depth, up_depth, mv, exits: vec![] });
        self.expr(body, mv || nonlocal);
        if nonlocal {
            self.emit(Op::PopDyn(1));
            self.f().dyn_depth -= 1;
        }
        let state = self.f().blocks.remove(&id);
        let jend = if nonlocal { Some(self.emit(Op::Jump(0))) } else { None };
        let end = self.here();
        if let Some(c) = catch_at {
            self.patch(c, end);
        }
        if let Some(j) = jend {
            self.patch(j, end);
        }
        if let Some(state) = state {
            for e in state.exits {
                self.patch(e, end);
            }
        }
        self.f().height = height + 1;
    }

    fn return_from(&mut self, id: BlockId, value: &Ir<'gc>) {
        let up_now = self.f().up_depth;
        let local = self.f().blocks.get(&id).is_some_and(|b| b.up_depth == up_now);
        if local {
            let (height, dyn_depth, mv) = {
                let s = &self.f().blocks[&id];
                (s.height, s.dyn_depth, s.mv)
            };
            let nonlocal = self.unit.blocks[id].nonlocal;
            self.expr(value, mv || nonlocal);
            let now = self.f().height;
            let drop = now - 1 - height;
            if drop > 0 {
                self.emit(Op::Slide(drop));
            }
            let dyn_now = self.f().dyn_depth;
            if dyn_now > dyn_depth {
                self.emit(Op::PopDyn(dyn_now - dyn_depth));
            }
            let j = self.emit(Op::Jump(0));
            if let Some(s) = self.f().blocks.get_mut(&id) {
                s.exits.push(j);
            }
            // Code after an exit is unreachable; keep the static height as if
            // the form had produced its value here.
            self.f().height = now;
            self.f().dyn_depth = dyn_now;
        } else {
            let tag_var = self.unit.blocks[id].tag_var;
            self.var_get(tag_var);
            self.expr(value, true);
            self.emit(Op::Throw);
        }
    }

    fn tagbody(&mut self, id: TagbodyId, items: &[TagbodyItem<'gc>]) {
        let info = &self.unit.tagbodies[id];
        let nonlocal = info.nonlocal;
        let tag_var = info.tag_var;
        let nonlocal_tags: Vec<usize> =
            info.nonlocal_tags.iter().enumerate().filter(|(_, b)| **b).map(|(i, _)| i).collect();
        let ntags = info.nonlocal_tags.len();
        let height = self.f().height;
        let mut dispatch = vec![];
        let idx_slot = if nonlocal { Some(self.anonymous_slot()) } else { None };
        if nonlocal {
            self.emit(Op::NewTag);
            self.var_set(tag_var);
            let pc = self.emit(Op::PushCatch(0));
            self.f().dyn_depth += 1;
            // Jump over the landing pad.
            let skip = self.emit(Op::Jump(0));
            let landing = self.here();
            self.patch(pc, landing);
            // A throw lands here with the tag index pushed.
            self.f().height += 1;
            let slot = idx_slot.unwrap_or(0);
            self.emit(Op::LocalSet(slot));
            self.emit(Op::Pop);
            self.var_get(tag_var);
            let again = self.emit(Op::PushCatch(landing));
            let _ = again;
            for &t in &nonlocal_tags {
                self.emit(Op::LocalGet(slot));
                // JumpIfEqFixnum pops only when it jumps; Pop on fall-through.
                let j = self.emit(Op::JumpIfEqFixnum { value: t as i32, target: 0 });
                dispatch.push((j, t));
                self.emit(Op::Pop);
            }
            let s = self.here();
            self.patch(skip, s);
        }
        let dyn_depth = self.f().dyn_depth;
        let up_depth = self.f().up_depth;
        self.f().tagbodies.insert(id, TagbodyState { height, dyn_depth, up_depth, labels: vec![None; ntags], pending: vec![] });
        for item in items {
            match item {
                TagbodyItem::Tag(t) => {
                    let here = self.here();
                    self.f().height = height;
                    if let Some(s) = self.f().tagbodies.get_mut(&id) {
                        s.labels[*t] = Some(here);
                    }
                }
                TagbodyItem::Form(f) => {
                    self.expr(f, false);
                    self.emit(Op::Pop);
                }
            }
        }
        if nonlocal {
            self.emit(Op::PopDyn(1));
            self.f().dyn_depth -= 1;
        }
        self.emit(Op::Nil);
        if let Some(state) = self.f().tagbodies.remove(&id) {
            for (at, tag) in state.pending {
                if let Some(Some(target)) = state.labels.get(tag) {
                    let target = *target;
                    self.patch(at, target);
                }
            }
            for (at, tag) in dispatch {
                if let Some(Some(target)) = state.labels.get(tag) {
                    let target = *target;
                    self.patch(at, target);
                }
            }
        }
        self.f().height = height + 1;
    }

    fn go(&mut self, id: TagbodyId, tag: usize) {
        let up_now = self.f().up_depth;
        if self.f().tagbodies.get(&id).is_some_and(|t| t.up_depth == up_now) {
            let (height, dyn_depth) = {
                let s = &self.f().tagbodies[&id];
                (s.height, s.dyn_depth)
            };
            let now = self.f().height;
            if now > height {
                self.emit(Op::Drop(now - height));
            }
            let dyn_now = self.f().dyn_depth;
            if dyn_now > dyn_depth {
                self.emit(Op::PopDyn(dyn_now - dyn_depth));
            }
            let j = self.emit(Op::Jump(0));
            if let Some(s) = self.f().tagbodies.get_mut(&id) {
                match s.labels[tag] {
                    Some(target) => {
                        let f = self.f();
                        f.code[j] = Op::Jump(target);
                    }
                    None => s.pending.push((j, tag)),
                }
            }
            // Unreachable continuation: pretend a value was pushed.
            self.f().height = now + 1;
            self.f().dyn_depth = dyn_now;
        } else {
            let tag_var = self.unit.tagbodies[id].tag_var;
            self.var_get(tag_var);
            self.emit(Op::Fixnum(tag as i32));
            self.emit(Op::Values1);
            self.emit(Op::Throw);
        }
    }
}

/// A jump whose target (through other jumps) is a `Return` becomes that
/// `Return`: the branches of an `if` in tail position return at once instead
/// of jumping to the function's end. The stack height at a jump is the one at
/// its target, so `Return` finds the same value on top.
fn jumps_to_return(code: &mut [Op]) {
    for i in 0..code.len() {
        let Op::Jump(mut t) = code[i] else { continue };
        // Bounded, so a cycle of jumps (an empty infinite loop) ends the search.
        for _ in 0..8 {
            match code.get(t as usize) {
                Some(Op::Jump(next)) => t = *next,
                Some(Op::Return) => {
                    code[i] = Op::Return;
                    break;
                }
                _ => break,
            }
        }
    }
}

fn unreachable_function() -> ! {
    // `function` pushes before it pops; an empty stack here is a bug in this file.
    panic!("codegen: function stack empty")
}
