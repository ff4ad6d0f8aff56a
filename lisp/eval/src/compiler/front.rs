//! The front end: forms to [`Ir`], expanding macros and resolving lexical
//! variables, functions, blocks and tags.
//!
//! Macro expanders are Lisp functions, and a Rust function never runs the
//! VM, so when the front end meets a macro call whose expansion it does not
//! have it notes the call, compiles NIL in its place and goes on; a pass that
//! noted calls ends in [`CompileError::NeedExpansions`]. The VM calls their
//! expanders, records the expansions (keyed by the identity of the form) in
//! the [`Expansions`] table, searches each expansion for the calls inside it
//! (`Front::discover`, in the call's scope, see `front/scope.rs`), expands
//! those in turn, and compiles again once no call is left; each macro call is
//! expanded once per top-level form. So a top-level form costs about two passes
//! plus one walk of each expansion, however many macro calls it holds and however
//! deep they nest inside one another's expansions (`bench/compile`).
//!
//! Invariant: the front end allocates no heap objects except constants it
//! builds for destructuring and backquote; it never calls the VM.

use std::collections::HashMap;

mod env;
mod scope;
pub use scope::Needs;

use gc_arena::Mutation;
use mprof_heap::alloc::{self, car, cdr, list_to_vec};
use mprof_heap::value::{SYM_MACRO, SYM_SPECIAL};
use mprof_heap::{Packages, Value};

use super::ir::*;
use crate::profile::counting::CountCtx;
use mprof_engine::exec::CountKind;
use crate::runtime::syms::Syms;

/// Macro expansions made so far for the form being compiled, keyed by the
/// address of the macro call form.
pub type Expansions<'gc> = HashMap<usize, Value<'gc>>;

/// How deep forms (and backquote templates) may nest before compilation stops
/// with a storage-condition. The front end and code generator recurse once per
/// level on stacks that `with_stack` grows as needed, so this bounds memory
/// (a few KB per level), not the thread's stack.
pub const MAX_FORM_DEPTH: usize = 100_000;

#[derive(Debug)]
pub enum CompileError<'gc> {
    /// For each (expander, call) pair: call `expander` on the call form (and NIL
    /// as the environment), record the result; then discover the calls inside the
    /// expansions (`Front::discover`) and compile again.
    NeedExpansions(Needs<'gc>),
    /// Compile `lambda` (a macro expander from MACROLET) into a function, record it
    /// under the identity of the definition `key`, and compile again.
    NeedMacroFunction { key: Value<'gc>, lambda: Value<'gc> },
    /// A malformed form; the message says what was expected.
    Syntax { message: String, form: Value<'gc> },
    /// Forms nest more than MAX_FORM_DEPTH deep (`form` is the one that went past).
    TooDeep { form: Value<'gc> },
}

#[derive(Clone, Copy)]
enum VarKind<'gc> {
    Lexical(VarId),
    Special,
    SymbolMacro(Value<'gc>),
}

#[derive(Clone, Copy)]
enum FunKind<'gc> {
    Local(VarId),
    Macro(Value<'gc>),
}

enum EnvEntry<'gc> {
    Var { name: Value<'gc>, kind: VarKind<'gc> },
    Fun { name: Value<'gc>, kind: FunKind<'gc> },
    Block { name: Value<'gc>, id: BlockId, fn_id: FnId, up_depth: u32 },
    Tags { tags: Vec<Value<'gc>>, id: TagbodyId, fn_id: FnId, up_depth: u32 },
}

/// The cons of `list` whose car is element `n` (0-based); NIL past the end.
fn nth_cell<'gc>(list: Value<'gc>, n: usize) -> Value<'gc> {
    let mut cell = list;
    for _ in 0..n {
        cell = cdr(cell);
    }
    cell
}

/// Parsed declarations at the head of a body.
struct Decls<'gc> {
    specials: Vec<Value<'gc>>,
}

/// Forms the front end made itself (e.g. the SETF a SETQ of a symbol macro
/// becomes), keyed by the form they stand for and an index: a macro call in
/// them must keep its identity across compilation attempts, or its expansion
/// would never be found. Entries hold their key form, so addresses stay unique.
pub type Synthesized<'gc> = Vec<(Value<'gc>, u32, Value<'gc>)>;

pub struct Front<'a, 'gc> {
    pub mc: &'a Mutation<'gc>,
    pub packages: &'a Packages<'gc>,
    pub syms: &'a Syms<'gc>,
    pub expansions: &'a Expansions<'gc>,
    pub synthesized: &'a mut Synthesized<'gc>,
    pub unit: Unit<'gc>,
    env: env::Env<'gc>,
    current_fn: FnId,
    up_depth: u32,
    depth: usize,
    /// The source line of the form being compiled, when known.
    pub line: u32,
    /// Present when execution counts are being placed (see counting.rs).
    pub counting: Option<CountCtx<'a>>,
    /// The kind of count the next form compiled gets, if it has a source span.
    pending: Option<CountKind>,
    /// A pending count handed through a macro call without a span to its expansion.
    macro_pending: Option<CountKind>,
    /// The span of the innermost source form being compiled.
    anchor: Option<mprof_reader::Span>,
    /// Names of the functions being compiled, outermost first (for count points).
    fn_names: Vec<String>,
    /// Macro calls this pass found unexpanded, with their scopes.
    pub needs: Needs<'gc>,
    /// The addresses of the calls in `needs`.
    needed: std::collections::HashSet<usize>,
}

type R<'gc, T> = Result<T, CompileError<'gc>>;

fn syntax<'gc, T>(message: impl Into<String>, form: Value<'gc>) -> R<'gc, T> {
    Err(CompileError::Syntax { message: message.into(), form })
}

impl<'a, 'gc> Front<'a, 'gc> {
    pub fn new(
        mc: &'a Mutation<'gc>,
        packages: &'a Packages<'gc>,
        syms: &'a Syms<'gc>,
        expansions: &'a Expansions<'gc>,
        synthesized: &'a mut Synthesized<'gc>,
    ) -> Self {
        Front {
            mc,
            packages,
            syms,
            expansions,
            synthesized,
            unit: Unit::default(),
            env: env::Env::default(),
            current_fn: 0,
            up_depth: 0,
            depth: 0,
            line: 0,
            counting: None,
            pending: None,
            macro_pending: None,
            anchor: None,
            fn_names: Vec::new(),
            needs: Needs::default(),
            needed: std::collections::HashSet::new(),
        }
    }

    fn is(&self, v: Value<'gc>, s: mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>) -> bool {
        matches!(v, Value::Symbol(x) if gc_arena::Gc::ptr_eq(x, s))
    }

    fn new_fn(&mut self, parent: Option<FnId>) -> FnId {
        self.unit.captures.push(Vec::new());
        self.unit.parents.push(parent);
        self.unit.captures.len() - 1
    }

    fn new_var(&mut self, name: Value<'gc>) -> VarId {
        self.unit.vars.push(VarInfo { name, owner: self.current_fn, captured: false, assigned: false });
        self.unit.vars.len() - 1
    }

    /// Compile a top-level form as the body of a function of no arguments.
    pub fn toplevel(&mut self, form: Value<'gc>) -> R<'gc, LambdaIr<'gc>> {
        let id = self.new_fn(None);
        self.current_fn = id;
        self.pending = Some(CountKind::Toplevel);
        let body = self.form(form)?;
        Ok(LambdaIr {
            id,
            name: Value::Nil,
            required: vec![],
            optional: vec![],
            rest: None,
            has_keys: false,
            keys: vec![],
            allow_other_keys: false,
            body,
            line: self.line,
        })
    }

    /// Note a reference to `var` from the current function, recording captures.
    fn reference(&mut self, var: VarId) {
        let owner = self.unit.vars[var].owner;
        if owner == self.current_fn {
            return;
        }
        self.unit.vars[var].captured = true;
        let mut f = Some(self.current_fn);
        while let Some(fid) = f {
            if fid == owner {
                break;
            }
            if !self.unit.captures[fid].contains(&var) {
                self.unit.captures[fid].push(var);
            }
            f = self.unit.parents[fid];
        }
    }

    fn lookup_var(&self, name: Value<'gc>) -> VarKind<'gc> {
        self.env.lookup_var(name)
    }

    fn lookup_fun(&self, name: Value<'gc>) -> Option<FunKind<'gc>> {
        self.env.lookup_fun(name)
    }

    fn globally_special(&self, name: Value<'gc>) -> bool {
        matches!(name, Value::Symbol(s) if s.has_flag(SYM_SPECIAL))
    }

    // ---- forms ----

    pub fn form(&mut self, form: Value<'gc>) -> R<'gc, Ir<'gc>> {
        if self.depth >= MAX_FORM_DEPTH {
            return Err(CompileError::TooDeep { form });
        }
        super::with_stack(|| self.form_at_depth(form))
    }

    fn form_at_depth(&mut self, form: Value<'gc>) -> R<'gc, Ir<'gc>> {
        self.depth += 1;
        let pending = self.pending.take();
        let span = match (&self.counting, form) {
            (Some(c), Value::Cons(_)) => form.heap_address().and_then(|a| c.spans.spans.get(&a).copied()),
            _ => None,
        };
        let r = match span {
            Some(span) => {
                let outer = self.anchor.replace(span);
                let r = self.form_inner(form);
                self.anchor = outer;
                match (r, pending) {
                    (Ok(ir), Some(kind)) => Ok(self.counted(kind, span, ir)),
                    (r, _) => r,
                }
            }
            None => {
                // A form the compiler or a macro made: a macro call passes the count on
                // to its expansion (`(when ...)` as a branch), anything else drops it.
                self.macro_pending = pending;
                self.form_inner(form)
            }
        };
        self.depth -= 1;
        r
    }

    /// Wrap `ir` in a count of `kind` for the source form at `span`.
    fn counted(&mut self, kind: CountKind, span: mprof_reader::Span, ir: Ir<'gc>) -> Ir<'gc> {
        let Some(c) = self.counting.as_mut() else { return ir };
        let function = self.fn_names.last().map(String::as_str).unwrap_or("");
        let depth = self.fn_names.len().saturating_sub(1) as u32;
        let id = c.registry.point(c.spans.source, span, kind, function, depth);
        Ir::Count(id, Box::new(ir))
    }

    /// Compile `f`, which is the car of `cell`, with a count of `kind`: its own span
    /// when it is a source list, else (an atom) the span of its place in the list.
    fn counted_in_list(&mut self, kind: CountKind, f: Value<'gc>, cell: Value<'gc>) -> R<'gc, Ir<'gc>> {
        self.pending = Some(kind);
        let ir = self.form(f)?;
        // A form with a span of its own is counted already; one without (an atom, or a
        // list the reader made without parentheses, like 'x) is found by its cell.
        if matches!(ir, Ir::Count(..)) {
            return Ok(ir);
        }
        let span = match &self.counting {
            Some(c) => cell.heap_address().and_then(|a| c.spans.cells.get(&a).copied()),
            None => None,
        };
        Ok(match span {
            Some(span) => self.counted(kind, span, ir),
            None => ir,
        })
    }

    /// The name a count point shows for a function.
    fn function_label(&self, name: Value<'gc>) -> String {
        match name {
            Value::Symbol(s) => s.name.to_string(),
            Value::Cons(_) if matches!(car(name), Value::Symbol(_)) => {
                let inner = match car(cdr(name)) {
                    Value::Symbol(s) => s.name.to_string(),
                    _ => "?".to_string(),
                };
                format!("(SETF {inner})")
            }
            _ => match self.fn_names.last() {
                Some(outer) => format!("(LAMBDA) in {outer}"),
                None => "(LAMBDA)".to_string(),
            },
        }
    }

    fn form_inner(&mut self, form: Value<'gc>) -> R<'gc, Ir<'gc>> {
        match form {
            Value::Symbol(s) => {
                if s.has_flag(mprof_heap::value::SYM_CONSTANT) && !matches!(s.value.get(), Value::Unbound) {
                    // Constants (T, keywords, defconstant) fold.
                    return Ok(Ir::Const(s.value.get()));
                }
                match self.lookup_var(form) {
                    VarKind::Lexical(v) => {
                        self.reference(v);
                        Ok(Ir::Var(v))
                    }
                    VarKind::Special => Ok(Ir::Special(form)),
                    VarKind::SymbolMacro(exp) => self.form(exp),
                }
            }
            Value::Cons(_) => self.compound(form),
            other => Ok(Ir::Const(other)),
        }
    }

    fn body(&mut self, forms: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let mut out = Vec::with_capacity(forms.len());
        for &f in forms {
            self.pending = Some(CountKind::Statement);
            out.push(self.form(f)?);
        }
        Ok(match out.len() {
            0 => Ir::Const(Value::Nil),
            1 => out.pop().unwrap_or(Ir::Const(Value::Nil)),
            _ => Ir::Progn(out),
        })
    }

    fn args_of(&self, form: Value<'gc>) -> R<'gc, Vec<Value<'gc>>> {
        match list_to_vec(cdr(form)) {
            Some(v) => Ok(v),
            None => syntax("a proper list of arguments", form),
        }
    }

    fn compound(&mut self, form: Value<'gc>) -> R<'gc, Ir<'gc>> {
        let head = car(form);
        if let Value::Symbol(hs) = head {
            let s = self.syms;
            // Local functions and macros shadow everything.
            if let Some(kind) = self.lookup_fun(head) {
                return match kind {
                    FunKind::Local(var) => {
                        self.reference(var);
                        let args = self.args_of(form)?;
                        let args = self.forms(&args)?;
                        Ok(Ir::Call(Callee::Local(var), args))
                    }
                    FunKind::Macro(expander) => {
                        let pending = self.macro_pending.take();
                        let exp = self.expansion(expander, form)?;
                        self.pending = pending;
                        self.form(exp)
                    }
                };
            }
            let p = gc_arena::Gc::as_ptr(hs);
            macro_rules! is {
                ($f:ident) => {
                    std::ptr::eq(p, gc_arena::Gc::as_ptr(s.$f))
                };
            }
            let args = self.args_of(form)?;
            if is!(quote) {
                return match args.as_slice() {
                    [x] => Ok(Ir::Const(*x)),
                    _ => syntax("QUOTE takes exactly one argument", form),
                };
            }
            if is!(function) {
                return self.function_form(form, &args);
            }
            if is!(if_) {
                return match args.as_slice() {
                    [c, t] => {
                        let c = self.form(*c)?;
                        let t = self.counted_in_list(CountKind::Branch, *t, nth_cell(form, 2))?;
                        Ok(Ir::If(Box::new(c), Box::new(t), Box::new(Ir::Const(Value::Nil))))
                    }
                    [c, t, e] => {
                        let c = self.form(*c)?;
                        let t = self.counted_in_list(CountKind::Branch, *t, nth_cell(form, 2))?;
                        let e = self.counted_in_list(CountKind::Branch, *e, nth_cell(form, 3))?;
                        Ok(Ir::If(Box::new(c), Box::new(t), Box::new(e)))
                    }
                    _ => syntax("IF takes a test, a then form and an optional else form", form),
                };
            }
            if is!(counted_branch) {
                // What AND and OR expand their later operands to: each runs only when
                // the ones before it let it, so under --count it is a branch of its own.
                return match args.as_slice() {
                    [x] => self.counted_in_list(CountKind::Branch, *x, nth_cell(form, 1)),
                    _ => syntax("SYS:%COUNTED-BRANCH takes exactly one form", form),
                };
            }
            if is!(progn) {
                // The forms are counted in place, so that an atom (a CASE clause's `:zero`,
                // spliced into a PROGN by the macro) is found by the cons holding it.
                let mut out = Vec::with_capacity(args.len());
                let mut cell = cdr(form);
                for &f in &args {
                    out.push(self.counted_in_list(CountKind::Statement, f, cell)?);
                    cell = cdr(cell);
                }
                return Ok(match out.len() {
                    0 => Ir::Const(Value::Nil),
                    1 => out.pop().unwrap_or(Ir::Const(Value::Nil)),
                    _ => Ir::Progn(out),
                });
            }
            if is!(let_) || is!(let_star) {
                return self.let_form(form, &args, is!(let_star));
            }
            if is!(setq) {
                return self.setq(form, &args);
            }
            if is!(flet) || is!(labels) {
                return self.flet(form, &args, is!(labels));
            }
            if is!(macrolet) {
                return self.macrolet(form, &args);
            }
            if is!(symbol_macrolet) {
                return self.symbol_macrolet(form, &args);
            }
            if is!(block) {
                return self.block(form, &args);
            }
            if is!(return_from) {
                return self.return_from(form, &args);
            }
            if is!(tagbody) {
                return self.tagbody(&args);
            }
            if is!(go) {
                return self.go(form, &args);
            }
            if is!(catch) {
                let (tag, body) = args.split_first().map(|(t, b)| (*t, b)).ok_or(()).or_else(|_| syntax("CATCH needs a tag form", form))?;
                let tag = self.form(tag)?;
                let body = self.body(body)?;
                return Ok(Ir::Catch(Box::new(tag), Box::new(body)));
            }
            if is!(throw) {
                return match args.as_slice() {
                    [tag, value] => Ok(Ir::Throw(Box::new(self.form(*tag)?), Box::new(self.form(*value)?))),
                    _ => syntax("THROW takes a tag and a result form", form),
                };
            }
            if is!(unwind_protect) {
                let Some((protected, cleanup)) = args.split_first() else {
                    return syntax("UNWIND-PROTECT needs a protected form", form);
                };
                self.up_depth += 1;
                let protected = self.form(*protected);
                self.up_depth -= 1;
                let protected = protected?;
                let cleanup = self.body(cleanup)?;
                return Ok(Ir::UnwindProtect(Box::new(protected), Box::new(cleanup)));
            }
            if is!(multiple_value_call) {
                let Some((f, forms)) = args.split_first() else {
                    return syntax("MULTIPLE-VALUE-CALL needs a function form", form);
                };
                let f = self.form(*f)?;
                let forms = self.forms(forms)?;
                return Ok(Ir::MvCall(Box::new(f), forms));
            }
            if is!(multiple_value_prog1) {
                let Some((first, rest)) = args.split_first() else {
                    return syntax("MULTIPLE-VALUE-PROG1 needs a form", form);
                };
                let first = self.form(*first)?;
                let rest = self.forms(rest)?;
                return Ok(Ir::MvProg1(Box::new(first), rest));
            }
            if is!(multiple_value_bind) {
                return self.mv_bind(form, &args);
            }
            if is!(multiple_value_list) {
                return match args.as_slice() {
                    [x] => Ok(Ir::MvList(Box::new(self.form(*x)?))),
                    _ => syntax("MULTIPLE-VALUE-LIST takes one form", form),
                };
            }
            if is!(the) {
                return match args.as_slice() {
                    [_, x] => self.form(*x),
                    _ => syntax("THE takes a type and a form", form),
                };
            }
            if is!(locally) {
                let (decls, body) = self.split_declarations(&args, false)?;
                let mark = self.env.len();
                for s in decls.specials {
                    self.env.push(EnvEntry::Var { name: s, kind: VarKind::Special });
                }
                let r = self.body(body);
                self.env.truncate(mark);
                return r;
            }
            if is!(eval_when) {
                let Some((situations, body)) = args.split_first() else {
                    return syntax("EVAL-WHEN needs a list of situations", form);
                };
                let sits = list_to_vec(*situations).unwrap_or_default();
                let runs = sits.iter().any(|x| {
                    self.is(*x, s.execute) || self.is(*x, s.load_toplevel) || matches!(x, Value::Symbol(y) if &*y.name == "EVAL" || &*y.name == "LOAD")
                });
                return if runs { self.body(body) } else { Ok(Ir::Const(Value::Nil)) };
            }
            if is!(load_time_value) {
                return match args.as_slice() {
                    [x] | [x, _] => self.form(*x),
                    _ => syntax("LOAD-TIME-VALUE takes a form", form),
                };
            }
            if is!(progv) {
                let [symbols, values, body @ ..] = args.as_slice() else {
                    return syntax("PROGV takes a symbol list form, a value list form and a body", form);
                };
                let symbols = self.form(*symbols)?;
                let values = self.form(*values)?;
                // Progv binds a dynamic number of variables: exits from its body
                // out of it go through the VM's unwinder, as across unwind-protect.
                self.up_depth += 1;
                let body = self.body(body);
                self.up_depth -= 1;
                let body = body?;
                return Ok(Ir::Progv(Box::new(symbols), Box::new(values), Box::new(body)));
            }
            if is!(declare) {
                return syntax("a declaration is not allowed here", form);
            }
            if is!(lambda) {
                // ((lambda ...)) as a form is (function (lambda ...)).
                let lam = self.lambda(Value::Nil, form, &args)?;
                return Ok(Ir::Lambda(Box::new(lam)));
            }
            if is!(named_lambda) {
                let Some((name, rest)) = args.split_first() else {
                    return syntax("NAMED-LAMBDA needs a name", form);
                };
                let lam = self.lambda(*name, form, rest)?;
                return Ok(Ir::Lambda(Box::new(lam)));
            }
            if is!(backquote) {
                let [x] = args.as_slice() else {
                    return syntax("a backquote takes one form", form);
                };
                let expansion = self.backquote(*x, 1)?;
                return self.form(expansion);
            }
            if is!(unquote) || is!(unquote_splicing) {
                return syntax("a comma outside a backquote", form);
            }
            if is!(defun) {
                return self.defun(form, &args);
            }
            if is!(defmacro) {
                return self.defmacro(form, &args);
            }
            if is!(destructuring_bind) {
                return self.destructuring_bind(form, &args);
            }
            // A global macro?
            if hs.has_flag(SYM_MACRO) {
                let expander = hs.function.get();
                let pending = self.macro_pending.take();
                let exp = self.expansion(expander, form)?;
                self.pending = pending;
                return self.form(exp);
            }
            if is!(funcall) && !args.is_empty() {
                let f = args[0];
                let rest = self.forms(&args[1..])?;
                // (funcall #'name ...) calls name directly.
                if let Value::Cons(_) = f
                    && self.is(car(f), s.function)
                    && let Some(name) = list_to_vec(cdr(f)).and_then(|v| if v.len() == 1 { Some(v[0]) } else { None })
                    && matches!(name, Value::Symbol(_))
                {
                    if let Some(FunKind::Local(var)) = self.lookup_fun(name) {
                        self.reference(var);
                        return Ok(Ir::Call(Callee::Local(var), rest));
                    }
                    return Ok(Ir::Call(Callee::Global(name), rest));
                }
                let f = self.form(f)?;
                return Ok(Ir::CallValue(Box::new(f), rest));
            }
            let args = self.forms(&args)?;
            return Ok(Ir::Call(Callee::Global(head), args));
        }
        if let Value::Cons(_) = head
            && self.is(car(head), self.syms.lambda)
        {
            // ((lambda (x) ...) args)
            let lam_args = list_to_vec(cdr(head)).ok_or(()).or_else(|_| syntax("a lambda expression", head))?;
            let lam = self.lambda(Value::Nil, head, &lam_args)?;
            let args = self.args_of(form)?;
            let args = self.forms(&args)?;
            return Ok(Ir::CallValue(Box::new(Ir::Lambda(Box::new(lam))), args));
        }
        syntax("a function name or lambda expression at the head of a form", form)
    }

    fn forms(&mut self, forms: &[Value<'gc>]) -> R<'gc, Vec<Ir<'gc>>> {
        forms.iter().map(|&f| self.form(f)).collect()
    }

    /// The expansion of macro call `form`, or (noting the call for the VM to
    /// expand) NIL as a stand-in: this pass's result is then thrown away.
    fn expansion(&mut self, expander: Value<'gc>, form: Value<'gc>) -> R<'gc, Value<'gc>> {
        let key = form.heap_address().unwrap_or(0);
        match self.expansions.get(&key) {
            Some(&exp) => Ok(exp),
            None => {
                if self.needed.insert(key) {
                    self.needs.calls.push(expander);
                    self.needs.calls.push(form);
                    let scope = self.scope();
                    self.needs.scopes.push(scope);
                }
                Ok(Value::Nil)
            }
        }
    }

    fn function_form(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let [name] = args else {
            return syntax("FUNCTION takes exactly one argument", form);
        };
        let name = *name;
        match name {
            Value::Symbol(_) => match self.lookup_fun(name) {
                Some(FunKind::Local(var)) => {
                    self.reference(var);
                    Ok(Ir::Var(var))
                }
                Some(FunKind::Macro(_)) => syntax("FUNCTION of a local macro", form),
                None => Ok(Ir::GlobalFunction(name)),
            },
            Value::Cons(_) if self.is(car(name), self.syms.lambda) => {
                let lam_args = list_to_vec(cdr(name)).ok_or(()).or_else(|_| syntax("a lambda expression", name))?;
                let lam = self.lambda(Value::Nil, name, &lam_args)?;
                Ok(Ir::Lambda(Box::new(lam)))
            }
            Value::Cons(_) if self.is(car(name), self.syms.named_lambda) => {
                let a = list_to_vec(cdr(name)).ok_or(()).or_else(|_| syntax("a named lambda", name))?;
                let Some((n, rest)) = a.split_first() else {
                    return syntax("NAMED-LAMBDA needs a name", name);
                };
                let lam = self.lambda(*n, name, rest)?;
                Ok(Ir::Lambda(Box::new(lam)))
            }
            Value::Cons(_) if self.is(car(name), self.syms.setf) => {
                // #'(setf foo): local first, else the global setf function.
                match self.lookup_fun(name) {
                    Some(FunKind::Local(var)) => {
                        self.reference(var);
                        Ok(Ir::Var(var))
                    }
                    _ => Ok(Ir::GlobalFunction(name)),
                }
            }
            _ => syntax("a function name or lambda expression", form),
        }
    }

    /// Split leading declarations (and, if `doc`, a documentation string) from a body.
    fn split_declarations<'b>(
        &self,
        body: &'b [Value<'gc>],
        doc: bool,
    ) -> R<'gc, (Decls<'gc>, &'b [Value<'gc>])> {
        let mut specials = Vec::new();
        let mut i = 0;
        while i < body.len() {
            let f = body[i];
            if matches!(f, Value::String(_)) && doc && i + 1 < body.len() {
                i += 1;
                continue;
            }
            if let Value::Cons(_) = f
                && self.is(car(f), self.syms.declare)
            {
                for spec in list_to_vec(cdr(f)).unwrap_or_default() {
                    if self.is(car(spec), self.syms.special) {
                        specials.extend(list_to_vec(cdr(spec)).unwrap_or_default());
                    }
                }
                i += 1;
                continue;
            }
            break;
        }
        Ok((Decls { specials }, &body[i..]))
    }

    fn binding_for(&mut self, name: Value<'gc>, decls: &Decls<'gc>, form: Value<'gc>) -> R<'gc, Binding<'gc>> {
        match name {
            Value::Symbol(s) => {
                if s.has_flag(mprof_heap::value::SYM_CONSTANT) {
                    return syntax(format!("cannot bind the constant {}", s.name), form);
                }
                if self.globally_special(name) || decls.specials.iter().any(|d| d.eq(name)) {
                    Ok(Binding::Special(name))
                } else {
                    Ok(Binding::Lexical(self.new_var(name)))
                }
            }
            _ => syntax("a symbol as a variable name", form),
        }
    }

    fn push_binding(&mut self, b: Binding<'gc>) {
        match b {
            Binding::Lexical(v) => {
                let name = self.unit.vars[v].name;
                self.env.push(EnvEntry::Var { name, kind: VarKind::Lexical(v) })
            }
            Binding::Special(name) => self.env.push(EnvEntry::Var { name, kind: VarKind::Special }),
        }
    }

    fn let_form(&mut self, form: Value<'gc>, args: &[Value<'gc>], sequential: bool) -> R<'gc, Ir<'gc>> {
        let Some((bindings, body)) = args.split_first() else {
            return syntax("LET needs a binding list", form);
        };
        let Some(bindings) = list_to_vec(*bindings) else {
            return syntax("a proper list of bindings", form);
        };
        let (decls, body) = self.split_declarations(body, false)?;
        let mark = self.env.len();
        let mut out = Vec::with_capacity(bindings.len());
        let mut pending = Vec::new();
        for b in bindings {
            let (name, init) = match b {
                Value::Symbol(_) => (b, Value::Nil),
                Value::Cons(_) => match list_to_vec(b).as_deref() {
                    Some([n]) => (*n, Value::Nil),
                    Some([n, i]) => (*n, *i),
                    _ => return syntax("a binding of the form (variable [init-form])", b),
                },
                _ => return syntax("a binding of the form (variable [init-form])", b),
            };
            let init = self.form(init)?;
            let binding = self.binding_for(name, &decls, b)?;
            if sequential {
                self.push_binding(binding);
            } else {
                pending.push(binding);
            }
            out.push((binding, init));
        }
        for b in pending {
            self.push_binding(b);
        }
        for s in &decls.specials {
            self.env.push(EnvEntry::Var { name: *s, kind: VarKind::Special });
        }
        let body = self.body(body);
        self.env.truncate(mark);
        Ok(Ir::Let { bindings: out, sequential, body: Box::new(body?) })
    }

    fn setq(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        if !args.len().is_multiple_of(2) {
            return syntax("SETQ takes pairs of variables and values", form);
        }
        let mut out = Vec::new();
        for pair in args.chunks(2) {
            let (name, value) = (pair[0], pair[1]);
            let Value::Symbol(s) = name else {
                return syntax("a symbol to assign", form);
            };
            if s.has_flag(mprof_heap::value::SYM_CONSTANT) {
                return syntax(format!("cannot assign the constant {}", s.name), form);
            }
            match self.lookup_var(name) {
                VarKind::Lexical(v) => {
                    let value = self.form(value)?;
                    self.reference(v);
                    self.unit.vars[v].assigned = true;
                    out.push(Ir::SetVar(v, Box::new(value)));
                }
                VarKind::Special => {
                    let value = self.form(value)?;
                    out.push(Ir::SetSpecial(name, Box::new(value)));
                }
                VarKind::SymbolMacro(exp) => {
                    let index = (out.len()) as u32;
                    let found = self
                        .synthesized
                        .iter()
                        .find(|(k, i, _)| k.eq(form) && *i == index)
                        .map(|(_, _, f)| *f);
                    let setf = match found {
                        Some(f) => f,
                        None => {
                            let f = alloc::list(self.mc, &[Value::Symbol(self.syms.setf), exp, value]);
                            self.synthesized.push((form, index, f));
                            f
                        }
                    };
                    out.push(self.form(setf)?);
                }
            }
        }
        Ok(match out.len() {
            0 => Ir::Const(Value::Nil),
            1 => out.pop().unwrap_or(Ir::Const(Value::Nil)),
            _ => Ir::Progn(out),
        })
    }

    /// Parse and compile a lambda list and body into a new function.
    pub fn lambda(&mut self, name: Value<'gc>, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, LambdaIr<'gc>> {
        let Some((params, body)) = args.split_first() else {
            return syntax("LAMBDA needs a lambda list", form);
        };
        let Some(params) = list_to_vec(*params) else {
            return syntax("a proper lambda list", form);
        };
        let (decls, body) = self.split_declarations(body, true)?;
        let parent = self.current_fn;
        let saved_up = self.up_depth;
        let id = self.new_fn(Some(parent));
        self.current_fn = id;
        self.up_depth = 0;
        let mark = self.env.len();
        let entry = self.entry_span(form);
        if entry.is_some() {
            let label = self.function_label(name);
            self.fn_names.push(label);
        }
        let mut r = self.lambda_inner(id, name, form, &params, &decls, body);
        if let Some(span) = entry {
            if let Ok(lam) = &mut r {
                let body = std::mem::replace(&mut lam.body, Ir::Const(Value::Nil));
                lam.body = self.counted(CountKind::Entry, span, body);
            }
            self.fn_names.pop();
        }
        self.env.truncate(mark);
        self.current_fn = parent;
        self.up_depth = saved_up;
        r
    }

    /// Where a function's entry count is shown: its own form when that came from the
    /// source (a DEFUN, a LAMBDA, an FLET definition), else the innermost source form
    /// being compiled (a macro's expansion into a lambda). None when not counting.
    fn entry_span(&self, form: Value<'gc>) -> Option<mprof_reader::Span> {
        let c = self.counting.as_ref()?;
        form.heap_address().and_then(|a| c.spans.spans.get(&a).copied()).or(self.anchor)
    }

    fn lambda_inner(
        &mut self,
        id: FnId,
        name: Value<'gc>,
        form: Value<'gc>,
        params: &[Value<'gc>],
        decls: &Decls<'gc>,
        body: &[Value<'gc>],
    ) -> R<'gc, LambdaIr<'gc>> {
        #[derive(PartialEq)]
        enum Mode {
            Req,
            Opt,
            Rest,
            Key,
            Aux,
        }
        let s = self.syms;
        let mut mode = Mode::Req;
        let mut lam = LambdaIr {
            id,
            name,
            required: vec![],
            optional: vec![],
            rest: None,
            has_keys: false,
            keys: vec![],
            allow_other_keys: false,
            body: Ir::Const(Value::Nil),
            line: self.line,
        };
        let mut aux: Vec<(Value<'gc>, Value<'gc>)> = vec![];
        let mut expect_rest_var = false;
        for &p in params {
            if self.is(p, s.optional) {
                mode = Mode::Opt;
                continue;
            }
            if self.is(p, s.rest) || self.is(p, s.body) {
                mode = Mode::Rest;
                expect_rest_var = true;
                continue;
            }
            if self.is(p, s.key) {
                mode = Mode::Key;
                lam.has_keys = true;
                continue;
            }
            if self.is(p, s.allow_other_keys) {
                lam.allow_other_keys = true;
                continue;
            }
            if self.is(p, s.aux) {
                mode = Mode::Aux;
                continue;
            }
            if self.is(p, s.whole) || self.is(p, s.environment) {
                return syntax("&WHOLE and &ENVIRONMENT are only allowed in macro lambda lists", form);
            }
            match mode {
                Mode::Req => {
                    let b = self.binding_for(p, decls, form)?;
                    self.push_binding(b);
                    lam.required.push(b);
                }
                Mode::Opt => {
                    let (var, default, sp) = self.param_spec(p, form)?;
                    let (var, default, supplied) = self.defaulted_param(var, default, sp, decls, form)?;
                    lam.optional.push(OptParam { var, default, supplied });
                }
                Mode::Rest => {
                    if !expect_rest_var {
                        return syntax("only one variable after &REST", form);
                    }
                    expect_rest_var = false;
                    let b = self.binding_for(p, decls, form)?;
                    self.push_binding(b);
                    lam.rest = Some(b);
                }
                Mode::Key => {
                    let (var_spec, default, sp) = self.param_spec(p, form)?;
                    let (keyword, var) = match var_spec {
                        Value::Cons(_) => match list_to_vec(var_spec).as_deref() {
                            Some([k, v]) => (*k, *v),
                            _ => return syntax("a keyword parameter ((keyword var) ...)", form),
                        },
                        Value::Symbol(vs) => (self.packages.keyword(self.mc, &vs.name), var_spec),
                        _ => return syntax("a keyword parameter", form),
                    };
                    let (var, default, supplied) = self.defaulted_param(var, default, sp, decls, form)?;
                    lam.keys.push(KeyParam { keyword, var, default, supplied });
                }
                Mode::Aux => {
                    let (var, init, _) = self.param_spec(p, form)?;
                    aux.push((var, init.unwrap_or(Value::Nil)));
                }
            }
        }
        if expect_rest_var {
            return syntax("a variable after &REST", form);
        }
        for sp in &decls.specials {
            self.env.push(EnvEntry::Var { name: *sp, kind: VarKind::Special });
        }
        let body_ir = if aux.is_empty() {
            self.body(body)?
        } else {
            // &aux is let* around the body.
            let bindings: Vec<Value<'gc>> = aux.iter().map(|(v, i)| alloc::list(self.mc, &[*v, *i])).collect();
            let mut let_args = vec![alloc::list(self.mc, &bindings)];
            let_args.extend_from_slice(body);
            self.let_form(form, &let_args, true)?
        };
        lam.body = body_ir;
        Ok(lam)
    }

    /// An optional or keyword parameter: its default is compiled where earlier
    /// parameters are visible, then the variable and its supplied-p variable
    /// come into scope.
    fn defaulted_param(
        &mut self,
        var: Value<'gc>,
        default: Option<Value<'gc>>,
        supplied: Option<Value<'gc>>,
        decls: &Decls<'gc>,
        form: Value<'gc>,
    ) -> R<'gc, (Binding<'gc>, Option<Ir<'gc>>, Option<Binding<'gc>>)> {
        let default = match default {
            Some(d) => Some(self.form(d)?),
            None => None,
        };
        let b = self.binding_for(var, decls, form)?;
        self.push_binding(b);
        let supplied = match supplied {
            Some(spv) => {
                let sb = self.binding_for(spv, decls, form)?;
                self.push_binding(sb);
                Some(sb)
            }
            None => None,
        };
        Ok((b, default, supplied))
    }

    /// `var`, `(var)`, `(var default)` or `(var default supplied-p)`.
    fn param_spec(&self, p: Value<'gc>, form: Value<'gc>) -> R<'gc, (Value<'gc>, Option<Value<'gc>>, Option<Value<'gc>>)> {
        match p {
            Value::Symbol(_) => Ok((p, None, None)),
            Value::Cons(_) => match list_to_vec(p).as_deref() {
                Some([v]) => Ok((*v, None, None)),
                Some([v, d]) => Ok((*v, Some(*d), None)),
                Some([v, d, sp]) => Ok((*v, Some(*d), Some(*sp))),
                _ => syntax("a parameter (var [default [supplied-p]])", form),
            },
            _ => syntax("a parameter name", form),
        }
    }

    fn flet(&mut self, form: Value<'gc>, args: &[Value<'gc>], recursive: bool) -> R<'gc, Ir<'gc>> {
        let Some((defs, body)) = args.split_first() else {
            return syntax("FLET/LABELS needs a list of function definitions", form);
        };
        let Some(defs) = list_to_vec(*defs) else {
            return syntax("a proper list of function definitions", form);
        };
        let mark = self.env.len();
        let mut names = Vec::new();
        let mut vars = Vec::new();
        for d in &defs {
            let name = car(*d);
            let var = self.new_var(name);
            names.push(name);
            vars.push(var);
        }
        if recursive {
            for (n, v) in names.iter().zip(&vars) {
                self.env.push(EnvEntry::Fun { name: *n, kind: FunKind::Local(*v) });
                self.unit.vars[*v].assigned = true;
            }
        }
        let mut lambdas = Vec::new();
        for (d, name) in defs.iter().zip(&names) {
            let Some(parts) = list_to_vec(cdr(*d)) else {
                return syntax("a function definition (name lambda-list . body)", *d);
            };
            // The body is wrapped in a block named after the function.
            let block_name = match name {
                Value::Cons(_) => car(cdr(*name)),
                n => *n,
            };
            let Some((ll, body)) = parts.split_first() else {
                return syntax("a function definition (name lambda-list . body)", *d);
            };
            let (decl_forms, rest) = split_leading_decls(self, body);
            let mut block = vec![Value::Symbol(self.syms.block), block_name];
            block.extend_from_slice(rest);
            let mut lam_args = vec![*ll];
            lam_args.extend_from_slice(decl_forms);
            lam_args.push(alloc::list(self.mc, &block));
            lambdas.push(self.lambda(*name, *d, &lam_args)?);
        }
        if !recursive {
            for (n, v) in names.iter().zip(&vars) {
                self.env.push(EnvEntry::Fun { name: *n, kind: FunKind::Local(*v) });
            }
        }
        let (decls, body) = self.split_declarations(body, false)?;
        for s in decls.specials {
            self.env.push(EnvEntry::Var { name: s, kind: VarKind::Special });
        }
        let body = self.body(body);
        self.env.truncate(mark);
        Ok(Ir::LocalFunctions { vars, lambdas, recursive, body: Box::new(body?) })
    }

    fn macrolet(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let Some((defs, body)) = args.split_first() else {
            return syntax("MACROLET needs a list of macro definitions", form);
        };
        let Some(defs) = list_to_vec(*defs) else {
            return syntax("a proper list of macro definitions", form);
        };
        let mark = self.env.len();
        for d in defs {
            // The expander is compiled by the VM from a (lambda (form env) ...) built
            // here; it is found again through the expansion table keyed by the
            // definition's identity.
            let name = car(d);
            let key = d.heap_address().unwrap_or(0);
            let expander = match self.expansions.get(&key) {
                Some(&e) => e,
                None => {
                    let lambda = self.macro_lambda(d)?;
                    return Err(CompileError::NeedMacroFunction { key: d, lambda });
                }
            };
            self.env.push(EnvEntry::Fun { name, kind: FunKind::Macro(expander) });
        }
        let (decls, body) = self.split_declarations(body, false)?;
        for s in decls.specials {
            self.env.push(EnvEntry::Var { name: s, kind: VarKind::Special });
        }
        let r = self.body(body);
        self.env.truncate(mark);
        r
    }

    /// The expander lambda of a macro definition `(name lambda-list . body)`:
    /// `(lambda (form env) (destructuring-bind lambda-list (cdr form) (block name . body)))`,
    /// with &whole and &environment handled.
    pub fn macro_lambda(&mut self, def: Value<'gc>) -> R<'gc, Value<'gc>> {
        let Some(parts) = list_to_vec(def) else {
            return syntax("a macro definition (name lambda-list . body)", def);
        };
        let [name, ll, body @ ..] = parts.as_slice() else {
            return syntax("a macro definition (name lambda-list . body)", def);
        };
        Ok(build_macro_lambda(self.mc, self.packages, self.syms, *name, *ll, body))
    }

    fn symbol_macrolet(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let Some((defs, body)) = args.split_first() else {
            return syntax("SYMBOL-MACROLET needs a list of definitions", form);
        };
        let mark = self.env.len();
        for d in list_to_vec(*defs).unwrap_or_default() {
            match list_to_vec(d).as_deref() {
                Some([name, exp]) => self.env.push(EnvEntry::Var { name: *name, kind: VarKind::SymbolMacro(*exp) }),
                _ => return syntax("a symbol macro definition (name expansion)", d),
            }
        }
        let (_, body) = self.split_declarations(body, false)?;
        let r = self.body(body);
        self.env.truncate(mark);
        r
    }

    fn block(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let Some((name, body)) = args.split_first() else {
            return syntax("BLOCK needs a name", form);
        };
        if !matches!(name, Value::Symbol(_) | Value::Nil) {
            return syntax("a symbol as a block name", form);
        }
        let tag_var = self.new_var(Value::Nil);
        let id = self.unit.blocks.len();
        self.unit.blocks.push(BlockInfo { nonlocal: false, tag_var });
        let mark = self.env.len();
        self.env.push(EnvEntry::Block { name: *name, id, fn_id: self.current_fn, up_depth: self.up_depth });
        let body = self.body(body);
        self.env.truncate(mark);
        Ok(Ir::Block { id, body: Box::new(body?) })
    }

    fn return_from(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let (name, value) = match args {
            [n] => (*n, Value::Nil),
            [n, v] => (*n, *v),
            _ => return syntax("RETURN-FROM takes a block name and an optional value", form),
        };
        let found = self.env.iter().rev().find_map(|e| match e {
            EnvEntry::Block { name: n, id, fn_id, up_depth } if n.eq(name) => Some((*id, *fn_id, *up_depth)),
            _ => None,
        });
        let Some((id, fn_id, up_depth)) = found else {
            return syntax(
                format!("RETURN-FROM names a block that is not visible here: {}", self.describe(name)),
                form,
            );
        };
        if fn_id != self.current_fn || up_depth != self.up_depth {
            self.unit.blocks[id].nonlocal = true;
            let tv = self.unit.blocks[id].tag_var;
            self.reference(tv);
        }
        let value = self.form(value)?;
        Ok(Ir::ReturnFrom { id, value: Box::new(value) })
    }

    fn describe(&self, v: Value<'gc>) -> String {
        match v {
            Value::Symbol(s) => s.name.to_string(),
            Value::Nil => "NIL".into(),
            _ => "a non-symbol".into(),
        }
    }

    fn tagbody(&mut self, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let tags: Vec<Value<'gc>> = args.iter().copied().filter(|a| !matches!(a, Value::Cons(_))).collect();
        let tag_var = self.new_var(Value::Nil);
        let id = self.unit.tagbodies.len();
        self.unit.tagbodies.push(TagbodyInfo { nonlocal: false, tag_var, nonlocal_tags: vec![false; tags.len()] });
        let mark = self.env.len();
        self.env.push(EnvEntry::Tags { tags: tags.clone(), id, fn_id: self.current_fn, up_depth: self.up_depth });
        let mut items = Vec::new();
        let mut tag_index = 0;
        for &a in args {
            if let Value::Cons(_) = a {
                self.pending = Some(CountKind::Statement);
                match self.form(a) {
                    Ok(ir) => items.push(TagbodyItem::Form(ir)),
                    Err(e) => {
                        self.env.truncate(mark);
                        return Err(e);
                    }
                }
            } else {
                items.push(TagbodyItem::Tag(tag_index));
                tag_index += 1;
            }
        }
        self.env.truncate(mark);
        Ok(Ir::Tagbody { id, items })
    }

    fn go(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let [tag] = args else {
            return syntax("GO takes one tag", form);
        };
        let found = self.env.iter().rev().find_map(|e| match e {
            EnvEntry::Tags { tags, id, fn_id, up_depth } => {
                tags.iter().position(|t| crate::runtime::equal::eql(*t, *tag)).map(|i| (*id, i, *fn_id, *up_depth))
            }
            _ => None,
        });
        let Some((id, index, fn_id, up_depth)) = found else {
            return syntax("GO to a tag that is not visible here", form);
        };
        if fn_id != self.current_fn || up_depth != self.up_depth {
            let tb = &mut self.unit.tagbodies[id];
            tb.nonlocal = true;
            tb.nonlocal_tags[index] = true;
            let tv = tb.tag_var;
            self.reference(tv);
        }
        Ok(Ir::Go { id, tag: index })
    }

    fn mv_bind(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let [vars, value, body @ ..] = args else {
            return syntax("MULTIPLE-VALUE-BIND takes a variable list, a form and a body", form);
        };
        let Some(vars) = list_to_vec(*vars) else {
            return syntax("a proper list of variables", form);
        };
        let value = self.form(*value)?;
        let (decls, body) = self.split_declarations(body, false)?;
        let mark = self.env.len();
        let mut bs = Vec::new();
        for v in vars {
            let b = self.binding_for(v, &decls, form)?;
            bs.push(b);
        }
        for b in &bs {
            self.push_binding(*b);
        }
        for s in decls.specials {
            self.env.push(EnvEntry::Var { name: s, kind: VarKind::Special });
        }
        let body = self.body(body);
        self.env.truncate(mark);
        Ok(Ir::MvBind { vars: bs, form: Box::new(value), body: Box::new(body?) })
    }

    /// `(defun name lambda-list . body)`: a named function whose body is a
    /// block named after it, installed as the global definition.
    fn defun(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let [name, ll, body @ ..] = args else {
            return syntax("DEFUN takes a name, a lambda list and a body", form);
        };
        let block_name = match name {
            Value::Symbol(_) => *name,
            Value::Cons(_) if self.is(car(*name), self.syms.setf) => car(cdr(*name)),
            _ => return syntax("a function name (a symbol or (SETF symbol))", form),
        };
        let (decls, rest) = split_leading_decls(self, body);
        let mc = self.mc;
        let mut block = vec![Value::Symbol(self.syms.block), block_name];
        block.extend_from_slice(rest);
        let mut lam_args = vec![*ll];
        lam_args.extend_from_slice(decls);
        lam_args.push(alloc::list(mc, &block));
        let lam = self.lambda(*name, form, &lam_args)?;
        let set = self.sys_symbol("%SET-FDEFINITION");
        let mut forms = vec![Ir::Call(Callee::Global(set), vec![Ir::Const(*name), Ir::Lambda(Box::new(lam))])];
        forms.extend(self.record_documentation(*name, decls));
        forms.push(Ir::Const(*name));
        Ok(Ir::Progn(forms))
    }

    /// The call that records a definition's documentation string (the first
    /// string among its leading declarations), for DOCUMENTATION. A definition
    /// without one compiles to no extra code (so it keeps an earlier one).
    fn record_documentation(&self, name: Value<'gc>, decls: &[Value<'gc>]) -> Option<Ir<'gc>> {
        let doc = decls.iter().find(|x| matches!(x, Value::String(_)))?;
        let set = self.sys_symbol("%SET-DOCUMENTATION");
        let function = self.packages.intern_external(self.mc, self.packages.common_lisp, "FUNCTION");
        Some(Ir::Call(Callee::Global(set), vec![Ir::Const(name), Ir::Const(function), Ir::Const(*doc)]))
    }

    /// `(defmacro name lambda-list . body)`.
    fn defmacro(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let [name, ll, body @ ..] = args else {
            return syntax("DEFMACRO takes a name, a lambda list and a body", form);
        };
        if !matches!(name, Value::Symbol(_)) {
            return syntax("a symbol as a macro name", form);
        }
        let lambda = build_macro_lambda(self.mc, self.packages, self.syms, *name, *ll, body);
        let parts = list_to_vec(cdr(lambda)).unwrap_or_default();
        let lam = self.lambda(*name, form, &parts)?;
        let set = self.sys_symbol("%SET-MACRO-FUNCTION");
        let mut forms = vec![Ir::Call(Callee::Global(set), vec![Ir::Const(*name), Ir::Lambda(Box::new(lam))])];
        forms.extend(self.record_documentation(*name, split_leading_decls(self, body).0));
        forms.push(Ir::Const(*name));
        Ok(Ir::Progn(forms))
    }

    fn sys_symbol(&self, name: &str) -> Value<'gc> {
        self.packages.intern_external(self.mc, self.packages.system, name)
    }

    /// Expand a backquoted template at nesting `depth` into list-building code.
    fn backquote(&mut self, x: Value<'gc>, depth: usize) -> R<'gc, Value<'gc>> {
        if self.depth >= MAX_FORM_DEPTH {
            return Err(CompileError::TooDeep { form: x });
        }
        self.depth += 1;
        let r = super::with_stack(|| self.backquote_at_depth(x, depth));
        self.depth -= 1;
        r
    }

    fn backquote_at_depth(&mut self, x: Value<'gc>, depth: usize) -> R<'gc, Value<'gc>> {
        let mc = self.mc;
        let s = self.syms;
        let quote = |v: Value<'gc>| alloc::list(mc, &[Value::Symbol(s.quote), v]);
        match x {
            Value::Cons(_) => {
                let head = car(x);
                if self.is(head, s.unquote) {
                    let e = car(cdr(x));
                    return if depth == 1 {
                        Ok(e)
                    } else {
                        let inner = self.backquote(e, depth - 1)?;
                        Ok(alloc::list(mc, &[Value::Symbol(s.list), quote(Value::Symbol(s.unquote)), inner]))
                    };
                }
                if self.is(head, s.backquote) {
                    let e = car(cdr(x));
                    let inner = self.backquote(e, depth + 1)?;
                    return Ok(alloc::list(mc, &[Value::Symbol(s.list), quote(Value::Symbol(s.backquote)), inner]));
                }
                if self.is(head, s.unquote_splicing) {
                    return syntax(",@ right after a backquote", x);
                }
                // Walk the list, collecting segments for APPEND.
                let mut segments: Vec<Value<'gc>> = Vec::new();
                let mut items: Vec<Value<'gc>> = Vec::new();
                let mut cur = x;
                let mut guard = 0usize;
                let tail: Value<'gc> = loop {
                    guard += 1;
                    if guard > 1_000_000 {
                        return syntax("a backquoted list too long or circular", x);
                    }
                    match cur {
                        Value::Nil => break Value::Nil,
                        Value::Cons(c) => {
                            let item = c.car.get();
                            // `(a . ,b)` reads as (a unquote b): an unquote in cdr position.
                            if self.is(item, s.unquote) && depth == 1 {
                                break car(c.cdr.get());
                            }
                            if self.is(item, s.unquote) || self.is(item, s.backquote) {
                                let t = self.backquote(cur, depth)?;
                                break t;
                            }
                            if matches!(item, Value::Cons(_)) && self.is(car(item), s.unquote_splicing) {
                                let e = car(cdr(item));
                                if depth == 1 {
                                    if !items.is_empty() {
                                        segments.push(alloc::list_with_tail(mc, &[Value::Symbol(s.list)], alloc::list(mc, &items)));
                                        items.clear();
                                    }
                                    segments.push(e);
                                } else {
                                    let inner = self.backquote(e, depth - 1)?;
                                    items.push(alloc::list(
                                        mc,
                                        &[Value::Symbol(s.list), quote(Value::Symbol(s.unquote_splicing)), inner],
                                    ));
                                }
                            } else {
                                items.push(self.backquote(item, depth)?);
                            }
                            cur = c.cdr.get();
                        }
                        other => break quote(other),
                    }
                };
                let tail_is_nil = tail.is_nil();
                if segments.is_empty() {
                    return Ok(if tail_is_nil {
                        alloc::list_with_tail(mc, &[Value::Symbol(s.list)], alloc::list(mc, &items))
                    } else {
                        let mut v = vec![Value::Symbol(s.list_star)];
                        v.extend(items);
                        v.push(tail);
                        alloc::list(mc, &v)
                    });
                }
                if !items.is_empty() {
                    let mut v = vec![Value::Symbol(s.list_star)];
                    v.extend(items);
                    v.push(tail);
                    segments.push(alloc::list(mc, &v));
                } else if !tail_is_nil {
                    segments.push(tail);
                }
                let mut v = vec![Value::Symbol(s.append)];
                v.extend(segments);
                Ok(alloc::list(mc, &v))
            }
            Value::Vector(vec) => {
                let items: Vec<Value<'gc>> = vec.borrow().active().to_vec();
                let as_list = alloc::list(mc, &items);
                let expanded = self.backquote(as_list, depth)?;
                Ok(alloc::list(
                    mc,
                    &[Value::Symbol(s.apply), quote(Value::Symbol(s.vector)), expanded],
                ))
            }
            Value::Symbol(_) => Ok(quote(x)),
            other => Ok(other),
        }
    }

    fn destructuring_bind(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let [ll, expr, body @ ..] = args else {
            return syntax("DESTRUCTURING-BIND takes a lambda list, a form and a body", form);
        };
        let expansion = build_destructuring(self.mc, self.packages, self.syms, *ll, *expr, body, None);
        self.form(expansion)
    }
}

fn split_leading_decls<'b, 'gc>(f: &Front<'_, 'gc>, body: &'b [Value<'gc>]) -> (&'b [Value<'gc>], &'b [Value<'gc>]) {
    let mut i = 0;
    while i < body.len() {
        let x = body[i];
        let is_decl = matches!(x, Value::Cons(_)) && f.is(car(x), f.syms.declare);
        let is_doc = matches!(x, Value::String(_)) && i + 1 < body.len();
        if is_decl || is_doc {
            i += 1;
        } else {
            break;
        }
    }
    (&body[..i], &body[i..])
}

/// Build `(lambda (#:form #:env) (destructuring-bind ll (cdr #:form) (block name . body)))`.
pub fn build_macro_lambda<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    syms: &Syms<'gc>,
    name: Value<'gc>,
    ll: Value<'gc>,
    body: &[Value<'gc>],
) -> Value<'gc> {
    let form_var = Value::Symbol(alloc::make_symbol(mc, "FORM"));
    let env_var = Value::Symbol(alloc::make_symbol(mc, "ENV"));
    // Pull &whole and &environment out of the lambda list.
    let mut whole = None;
    let mut envname = None;
    let mut rest_ll = Vec::new();
    let mut items = list_to_vec(ll).unwrap_or_else(|| dotted_to_vec(ll));
    let dotted_tail = dotted_tail(ll);
    let mut i = 0;
    while i < items.len() {
        let x = items[i];
        if matches!(x, Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, syms.whole)) && i + 1 < items.len() {
            whole = Some(items[i + 1]);
            i += 2;
            continue;
        }
        if matches!(x, Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, syms.environment)) && i + 1 < items.len() {
            envname = Some(items[i + 1]);
            i += 2;
            continue;
        }
        rest_ll.push(x);
        i += 1;
    }
    items.clear();
    let ll = alloc::list_with_tail(mc, &rest_ll, dotted_tail);
    let (decls, body) = {
        let mut j = 0;
        while j < body.len() {
            let x = body[j];
            let is_decl = matches!(x, Value::Cons(_)) && matches!(car(x), Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, syms.declare));
            let is_doc = matches!(x, Value::String(_)) && j + 1 < body.len();
            if is_decl || is_doc {
                j += 1;
            } else {
                break;
            }
        }
        (&body[..j], &body[j..])
    };
    let mut block = vec![Value::Symbol(syms.block), name];
    block.extend_from_slice(body);
    // The documentation string stays out of the destructuring body, whose
    // declarations must come first ("doc" (declare ...) is legal in a macro body).
    let mut inner: Vec<Value<'gc>> = decls.iter().copied().filter(|x| !matches!(x, Value::String(_))).collect();
    inner.push(alloc::list(mc, &block));
    let cdr_form = alloc::list(mc, &[Value::Symbol(packages_cdr(mc, packages)), form_var]);
    let mut db = build_destructuring(mc, packages, syms, ll, cdr_form, &inner, None);
    let mut lets = Vec::new();
    if let Some(w) = whole {
        lets.push(alloc::list(mc, &[w, form_var]));
    }
    if let Some(e) = envname {
        lets.push(alloc::list(mc, &[e, env_var]));
    }
    if !lets.is_empty() {
        db = alloc::list(mc, &[Value::Symbol(syms.let_star), alloc::list(mc, &lets), db]);
    }
    let ignorable = alloc::list(
        mc,
        &[
            Value::Symbol(syms.declare),
            alloc::list(mc, &[packages.intern(mc, packages.common_lisp, "IGNORABLE"), form_var, env_var]),
        ],
    );
    alloc::list(
        mc,
        &[Value::Symbol(syms.lambda), alloc::list(mc, &[form_var, env_var]), ignorable, db],
    )
}

fn packages_cdr<'gc>(mc: &Mutation<'gc>, packages: &Packages<'gc>) -> mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>> {
    match packages.intern(mc, packages.common_lisp, "CDR") {
        Value::Symbol(s) => s,
        _ => alloc::make_symbol(mc, "CDR"),
    }
}

fn dotted_to_vec<'gc>(v: Value<'gc>) -> Vec<Value<'gc>> {
    let mut out = Vec::new();
    let mut cur = v;
    let mut guard = 0;
    while let Value::Cons(c) = cur {
        out.push(c.car.get());
        cur = c.cdr.get();
        guard += 1;
        if guard > 100_000 {
            break;
        }
    }
    out
}

fn dotted_tail<'gc>(v: Value<'gc>) -> Value<'gc> {
    let mut cur = v;
    let mut guard = 0;
    while let Value::Cons(c) = cur {
        cur = c.cdr.get();
        guard += 1;
        if guard > 100_000 {
            return Value::Nil;
        }
    }
    cur
}

/// Expand a destructuring lambda list over `expr` into nested `let*` forms
/// calling the system's destructuring helpers, which signal a program-error
/// naming the lambda list when the shapes do not match.
pub fn build_destructuring<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    syms: &Syms<'gc>,
    ll: Value<'gc>,
    expr: Value<'gc>,
    body: &[Value<'gc>],
    _name: Option<Value<'gc>>,
) -> Value<'gc> {
    let sys = |n: &str| packages.intern(mc, packages.system, n);
    let cl = |n: &str| packages.intern(mc, packages.common_lisp, n);
    let mut bindings: Vec<Value<'gc>> = Vec::new();
    let mut counter = 0usize;
    let mut gensym = |mc: &Mutation<'gc>| {
        counter += 1;
        Value::Symbol(alloc::make_symbol(mc, &format!("D{counter}")))
    };
    let top = gensym(mc);
    bindings.push(alloc::list(mc, &[top, expr]));
    // Work list of (pattern, variable holding the value).
    let mut work = vec![(ll, top)];
    let quote = |v: Value<'gc>| alloc::list(mc, &[Value::Symbol(syms.quote), v]);
    while let Some((pattern, holder)) = work.pop() {
        let items = dotted_to_vec(pattern);
        let tail = dotted_tail(pattern);
        let mut cur = gensym(mc);
        bindings.push(alloc::list(mc, &[cur, holder]));
        #[derive(PartialEq)]
        enum Mode {
            Req,
            Opt,
            Rest,
            Key,
            Aux,
        }
        let mut mode = Mode::Req;
        let mut has_rest_or_key = !tail.is_nil();
        let mut keys: Vec<Value<'gc>> = Vec::new();
        let mut allow_other = false;
        let mut i = 0;
        while i < items.len() {
            let p = items[i];
            i += 1;
            let is = |s: mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>| matches!(p, Value::Symbol(x) if gc_arena::Gc::ptr_eq(x, s));
            if is(syms.optional) {
                mode = Mode::Opt;
                continue;
            }
            if is(syms.rest) || is(syms.body) {
                mode = Mode::Rest;
                has_rest_or_key = true;
                continue;
            }
            if is(syms.key) {
                mode = Mode::Key;
                has_rest_or_key = true;
                continue;
            }
            if is(syms.allow_other_keys) {
                allow_other = true;
                continue;
            }
            if is(syms.aux) {
                mode = Mode::Aux;
                continue;
            }
            if is(syms.whole) {
                if i < items.len() {
                    bindings.push(alloc::list(mc, &[items[i], holder]));
                    i += 1;
                }
                continue;
            }
            match mode {
                Mode::Req => {
                    let v = alloc::list(mc, &[sys("%DCAR"), cur, quote(ll)]);
                    if matches!(p, Value::Cons(_)) {
                        let g = gensym(mc);
                        bindings.push(alloc::list(mc, &[g, v]));
                        work.push((p, g));
                    } else {
                        bindings.push(alloc::list(mc, &[p, v]));
                    }
                    let next = gensym(mc);
                    bindings.push(alloc::list(mc, &[next, alloc::list(mc, &[cl("CDR"), cur])]));
                    cur = next;
                }
                Mode::Opt => {
                    let (var, default, sp) = match p {
                        Value::Cons(_) => {
                            let v = list_to_vec(p).unwrap_or_default();
                            (v.first().copied().unwrap_or(Value::Nil), v.get(1).copied().unwrap_or(Value::Nil), v.get(2).copied())
                        }
                        _ => (p, Value::Nil, None),
                    };
                    let test = alloc::list(mc, &[cl("CAR"), cur]);
                    let val = alloc::list(mc, &[Value::Symbol(syms.if_), cur, test, default]);
                    if matches!(var, Value::Cons(_)) {
                        let g = gensym(mc);
                        bindings.push(alloc::list(mc, &[g, val]));
                        work.push((var, g));
                    } else {
                        bindings.push(alloc::list(mc, &[var, val]));
                    }
                    if let Some(sp) = sp {
                        let t = Value::Symbol(packages.t);
                        bindings.push(alloc::list(mc, &[sp, alloc::list(mc, &[Value::Symbol(syms.if_), cur, t, Value::Nil])]));
                    }
                    let next = gensym(mc);
                    bindings.push(alloc::list(mc, &[next, alloc::list(mc, &[cl("CDR"), cur])]));
                    cur = next;
                }
                Mode::Rest => {
                    if matches!(p, Value::Cons(_)) {
                        work.push((p, cur));
                    } else {
                        bindings.push(alloc::list(mc, &[p, cur]));
                    }
                }
                Mode::Key => {
                    let (spec, default, sp) = match p {
                        Value::Cons(_) => {
                            let v = list_to_vec(p).unwrap_or_default();
                            (v.first().copied().unwrap_or(Value::Nil), v.get(1).copied().unwrap_or(Value::Nil), v.get(2).copied())
                        }
                        _ => (p, Value::Nil, None),
                    };
                    let (kw, var) = match spec {
                        Value::Cons(_) => (car(spec), car(cdr(spec))),
                        Value::Symbol(s) => (packages.keyword(mc, &s.name), spec),
                        _ => (Value::Nil, spec),
                    };
                    keys.push(kw);
                    let found = gensym(mc);
                    bindings.push(alloc::list(mc, &[found, alloc::list(mc, &[sys("%DKEY"), cur, kw])]));
                    let val = alloc::list(
                        mc,
                        &[Value::Symbol(syms.if_), found, alloc::list(mc, &[cl("CAR"), found]), default],
                    );
                    if matches!(var, Value::Cons(_)) {
                        let g = gensym(mc);
                        bindings.push(alloc::list(mc, &[g, val]));
                        work.push((var, g));
                    } else {
                        bindings.push(alloc::list(mc, &[var, val]));
                    }
                    if let Some(sp) = sp {
                        let t = Value::Symbol(packages.t);
                        bindings.push(alloc::list(mc, &[sp, alloc::list(mc, &[Value::Symbol(syms.if_), found, t, Value::Nil])]));
                    }
                }
                Mode::Aux => {
                    let (var, init) = match p {
                        Value::Cons(_) => (car(p), car(cdr(p))),
                        _ => (p, Value::Nil),
                    };
                    bindings.push(alloc::list(mc, &[var, init]));
                }
            }
        }
        if !tail.is_nil() {
            bindings.push(alloc::list(mc, &[tail, cur]));
        }
        if !keys.is_empty() && !allow_other {
            let g = gensym(mc);
            bindings.push(alloc::list(
                mc,
                &[g, alloc::list(mc, &[sys("%DCHECK-KEYS"), cur, quote(alloc::list(mc, &keys)), quote(ll)])],
            ));
        }
        if !has_rest_or_key {
            let g = gensym(mc);
            bindings.push(alloc::list(mc, &[g, alloc::list(mc, &[sys("%DEND"), cur, quote(ll)])]));
        }
    }
    let mut form = vec![Value::Symbol(syms.let_star), alloc::list(mc, &bindings)];
    // Destructuring temporaries are often unused: declare them ignorable by not
    // warning at all (this implementation does not warn about unused variables).
    form.extend_from_slice(body);
    alloc::list(mc, &form)
}
