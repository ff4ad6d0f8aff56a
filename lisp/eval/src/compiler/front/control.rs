//! Blocks and exits (BLOCK, RETURN-FROM, TAGBODY, GO), MULTIPLE-VALUE-BIND,
//! and the definitions the compiler sees directly (DEFUN with its docstring,
//! DEFMACRO).

use mprof_engine::exec::CountKind;
use mprof_heap::alloc::{self, car, cdr, list_to_vec};
use mprof_heap::Value;

use crate::compiler::ir::*;
use crate::compiler::front::{EnvEntry, Front, R, VarKind, build_macro_lambda, split_leading_decls, syntax};

impl<'a, 'gc> Front<'a, 'gc> {
    pub(super) fn block(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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

    pub(super) fn return_from(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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

    pub(super) fn describe(&self, v: Value<'gc>) -> String {
        match v {
            Value::Symbol(s) => s.name.to_string(),
            Value::Nil => "NIL".into(),
            _ => "a non-symbol".into(),
        }
    }

    pub(super) fn tagbody(&mut self, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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

    pub(super) fn go(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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

    pub(super) fn mv_bind(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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
    pub(super) fn defun(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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
    pub(super) fn record_documentation(&self, name: Value<'gc>, decls: &[Value<'gc>]) -> Option<Ir<'gc>> {
        let doc = decls.iter().find(|x| matches!(x, Value::String(_)))?;
        let set = self.sys_symbol("%SET-DOCUMENTATION");
        let function = self.packages.intern_external(self.mc, self.packages.common_lisp, "FUNCTION");
        Some(Ir::Call(Callee::Global(set), vec![Ir::Const(name), Ir::Const(function), Ir::Const(*doc)]))
    }

    /// `(defmacro name lambda-list . body)`.
    pub(super) fn defmacro(&mut self, form: Value<'gc>, args: &[Value<'gc>]) -> R<'gc, Ir<'gc>> {
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
}
