//! Lambda expressions and local functions: lambda lists (`&optional`, `&rest`,
//! `&key`, `&aux`, supplied-p parameters, defaults evaluated in order), FLET
//! and LABELS, and the local macros of MACROLET and SYMBOL-MACROLET.

use mprof_engine::exec::CountKind;
use mprof_heap::alloc::{self, car, cdr, list_to_vec};
use mprof_heap::Value;

use crate::compiler::ir::*;
use crate::compiler::CompileError;
use crate::compiler::front::{Decls, EnvEntry, Front, FunKind, R, VarKind, build_macro_lambda, split_leading_decls, syntax};

impl<'a, 'gc> Front<'a, 'gc> {
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
    pub(super) fn entry_span(&self, form: Value<'gc>) -> Option<mprof_reader::Span> {
        let c = self.counting.as_ref()?;
        form.heap_address().and_then(|a| c.spans.spans.get(&a).copied()).or(self.anchor)
    }

    pub(super) fn lambda_inner(
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
    pub(super) fn defaulted_param(
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
    pub(super) fn param_spec(&self, p: Value<'gc>, form: Value<'gc>) -> R<'gc, (Value<'gc>, Option<Value<'gc>>, Option<Value<'gc>>)> {
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

    pub(super) fn flet(&mut self, form: Value<'gc>, args: &[Value<'gc>], recursive: bool) -> R<'gc, Ir<'gc>> {
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

    pub(super) fn macrolet(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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
            let key = crate::compiler::expansions::key(d, Value::Nil).unwrap_or_default();
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

    pub(super) fn symbol_macrolet(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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
}
