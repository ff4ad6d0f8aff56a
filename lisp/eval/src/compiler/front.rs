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

mod backquote;
mod control;
mod destructuring;
mod env;
mod lambda;
mod scope;
pub use destructuring::{build_destructuring, build_macro_lambda};
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
/// addresses of the macro call form and of its expander (`expansions::key`).
pub type Expansions<'gc> = HashMap<(usize, usize), Value<'gc>>;

/// Whether a top-level call headed by `head` is a macro call that LOAD expands
/// before processing it (CLHS 3.2.3.1): a global macro, but not one of the
/// macros this front end compiles itself (DEFUN, DEFMACRO, LAMBDA...), whose
/// macro functions only serve MACRO-FUNCTION and MACROEXPAND.
pub fn expands_at_toplevel<'gc>(syms: &Syms<'gc>, head: mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>) -> bool {
    if !head.has_flag(SYM_MACRO) {
        return false;
    }
    let p = gc_arena::Gc::as_ptr(head);
    let direct = [
        syms.defun,
        syms.defmacro,
        syms.destructuring_bind,
        syms.multiple_value_bind,
        syms.multiple_value_list,
        syms.lambda,
        syms.named_lambda,
    ];
    !direct.iter().any(|s| std::ptr::eq(p, gc_arena::Gc::as_ptr(*s)))
}

/// The expansion DEFINE-SYMBOL-MACRO gave `symbol`: the value after the
/// indicator `MPROF-SYSTEM::%SYMBOL-MACRO` on its property list.
pub fn global_symbol_macro<'gc>(symbol: mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>) -> Option<Value<'gc>> {
    let mut plist = symbol.plist.get();
    while let Value::Cons(c) = plist {
        let rest = c.cdr.get();
        if matches!(c.car.get(), Value::Symbol(k) if &*k.name == "%SYMBOL-MACRO"
            && k.package.get().is_some_and(|p| &*p.name() == "MPROF-SYSTEM"))
        {
            return Some(car(rest));
        }
        plist = cdr(rest);
    }
    None
}

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
    needed: std::collections::HashSet<(usize, usize)>,
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
                    VarKind::Special => match global_symbol_macro(s) {
                        Some(exp) => self.form(exp),
                        None => Ok(Ir::Special(form)),
                    },
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
                let expansion = self.backquote(*x, 0)?;
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
        let key = super::expansions::key(form, expander).unwrap_or_default();
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

