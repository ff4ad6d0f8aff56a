//! Destructuring lambda lists, for DESTRUCTURING-BIND and macro lambda lists
//! (`&whole`, `&environment`, `&body`, nested patterns, dotted tails): the
//! form that binds a pattern's variables from a value, with the errors SBCL
//! signals for too few or too many elements.

use gc_arena::Mutation;
use mprof_heap::alloc::{self, car, cdr, list_to_vec};
use mprof_heap::{Packages, Value};

use crate::compiler::ir::*;
use crate::compiler::front::{Front, R, syntax};
use crate::runtime::syms::Syms;

impl<'a, 'gc> Front<'a, 'gc> {
    pub(super) fn destructuring_bind(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
        let [ll, expr, body @ ..] = args else {
            return syntax("DESTRUCTURING-BIND takes a lambda list, a form and a body", form);
        };
        let expansion = build_destructuring(self.mc, self.packages, self.syms, *ll, *expr, body, None);
        self.form(expansion)
    }
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

pub(super) fn packages_cdr<'gc>(mc: &Mutation<'gc>, packages: &Packages<'gc>) -> mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>> {
    match packages.intern(mc, packages.common_lisp, "CDR") {
        Value::Symbol(s) => s,
        _ => alloc::make_symbol(mc, "CDR"),
    }
}

pub(super) fn dotted_to_vec<'gc>(v: Value<'gc>) -> Vec<Value<'gc>> {
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

pub(super) fn dotted_tail<'gc>(v: Value<'gc>) -> Value<'gc> {
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
                    // `()` is a pattern too, matching the empty list (yason's WITH-ARRAY).
                    if matches!(p, Value::Cons(_) | Value::Nil) {
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
