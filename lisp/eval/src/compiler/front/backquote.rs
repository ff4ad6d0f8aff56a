//! Backquote: a template read as `MPROF-SYSTEM:BACKQUOTE` with `UNQUOTE` and
//! `UNQUOTE-SPLICING` inside, turned into the list-building forms that make
//! it, nested backquotes of any depth included.
//!
//! The expansion is Bawden's (*Quasiquotation in Lisp*, 1999), which is what
//! CLHS 2.4.6 describes: a comma belongs to the innermost backquote, and at
//! nesting depth `d > 0` an unquote is rebuilt as data, its arguments being a
//! template at depth `d - 1`. So in ``` ``(a ,,@x) ``` the inner comma list
//! `(unquote (unquote-splicing x))` becomes `(unquote x1 x2 ...)`, one unquote
//! with every element of `x` as an argument, and an unquote of several
//! arguments (only ever made this way) inserts each of them, as SBCL's does.
//!
//! Invariants: the forms made are calls of LIST, LIST*, APPEND, CONS, APPLY
//! and VECTOR over quoted constants and the unquoted forms, so a template's
//! lists are fresh each time it runs (as before: no literal sharing for
//! programs to modify by accident); recursion over the template is bounded by
//! `MAX_FORM_DEPTH` and runs on the compiler's growable stack.

use mprof_heap::alloc::{self, car, cdr};
use mprof_heap::Value;

use crate::compiler::CompileError;
use crate::compiler::front::{Front, MAX_FORM_DEPTH, R, syntax};

/// What one element of a backquoted list contributes.
enum Part<'gc> {
    /// One element: the value of this form.
    Item(Value<'gc>),
    /// Any number of elements: the list this form returns.
    Splice(Value<'gc>),
}

impl<'a, 'gc> Front<'a, 'gc> {
    pub(super) fn sys_symbol(&self, name: &str) -> Value<'gc> {
        self.packages.intern_external(self.mc, self.packages.system, name)
    }

    /// The form that builds backquoted `x`, whose commas at nesting `depth` 0
    /// are evaluated (deeper ones belong to inner backquotes and are rebuilt).
    pub(super) fn backquote(&mut self, x: Value<'gc>, depth: usize) -> R<'gc, Value<'gc>> {
        if self.depth >= MAX_FORM_DEPTH {
            return Err(CompileError::TooDeep { form: x });
        }
        self.depth += 1;
        let r = crate::compiler::with_stack(|| self.backquote_at_depth(x, depth));
        self.depth -= 1;
        r
    }

    fn quoted(&self, v: Value<'gc>) -> Value<'gc> {
        alloc::list(self.mc, &[Value::Symbol(self.syms.quote), v])
    }

    /// A call of the function named by the well-known symbol `f`.
    fn call(&self, f: Value<'gc>, args: &[Value<'gc>]) -> Value<'gc> {
        alloc::list_with_tail(self.mc, &[f], alloc::list(self.mc, args))
    }

    /// `(MARKER . args)` rebuilt as data for an inner backquote: `(cons 'marker <args>)`.
    fn rebuilt(&mut self, marker: Value<'gc>, args: Value<'gc>, depth: usize) -> R<'gc, Value<'gc>> {
        let args = self.backquote(args, depth)?;
        Ok(self.call(Value::Symbol(self.syms.cons), &[self.quoted(marker), args]))
    }

    fn backquote_at_depth(&mut self, x: Value<'gc>, depth: usize) -> R<'gc, Value<'gc>> {
        let s = self.syms;
        match x {
            Value::Cons(_) => {
                let head = car(x);
                if self.is(head, s.backquote) {
                    return self.rebuilt(head, cdr(x), depth + 1);
                }
                if self.is(head, s.unquote) || self.is(head, s.unquote_splicing) {
                    if depth > 0 {
                        return self.rebuilt(head, cdr(x), depth - 1);
                    }
                    if self.is(head, s.unquote_splicing) {
                        return syntax(",@ right after a backquote or a dot", x);
                    }
                    return match alloc::list_to_vec(cdr(x)).as_deref() {
                        Some([form]) => Ok(*form),
                        _ => syntax("a comma takes one form here", x),
                    };
                }
                self.backquote_list(x, depth)
            }
            Value::Vector(vec) => {
                let items: Vec<Value<'gc>> = vec.borrow().active().to_vec();
                let as_list = alloc::list(self.mc, &items);
                let expanded = self.backquote(as_list, depth)?;
                let vector = self.quoted(Value::Symbol(s.vector));
                Ok(self.call(Value::Symbol(s.apply), &[vector, expanded]))
            }
            Value::Symbol(_) => Ok(self.quoted(x)),
            other => Ok(other),
        }
    }

    /// What one element of a list template contributes.
    fn backquote_part(&mut self, item: Value<'gc>, depth: usize, parts: &mut Vec<Part<'gc>>) -> R<'gc, ()> {
        let s = self.syms;
        if let Value::Cons(_) = item {
            let head = car(item);
            let splicing = self.is(head, s.unquote_splicing);
            if depth == 0 && (splicing || self.is(head, s.unquote)) {
                let Some(args) = alloc::list_to_vec(cdr(item)) else {
                    return syntax("a comma followed by a dotted list", item);
                };
                // One argument but for a `,,@` expansion: each argument is an element (`,`)
                // or a list of elements (`,@`).
                parts.extend(args.into_iter().map(|a| if splicing { Part::Splice(a) } else { Part::Item(a) }));
                return Ok(());
            }
        }
        parts.push(Part::Item(self.backquote(item, depth)?));
        Ok(())
    }

    /// A list template: its elements' parts, then its tail (NIL, a constant, or a
    /// comma in the cdr: `(a . ,b)` reads as `(a unquote b)`).
    fn backquote_list(&mut self, x: Value<'gc>, depth: usize) -> R<'gc, Value<'gc>> {
        let s = self.syms;
        let mut parts: Vec<Part<'gc>> = Vec::new();
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
                    let marker = self.is(item, s.unquote) || self.is(item, s.unquote_splicing) || self.is(item, s.backquote);
                    if marker {
                        break self.backquote(cur, depth)?;
                    }
                    self.backquote_part(item, depth, &mut parts)?;
                    cur = c.cdr.get();
                }
                other => break self.backquote(other, depth)?,
            }
        };
        Ok(self.assemble(parts, tail))
    }

    /// `(list ...)`, `(list* ... tail)` or `(append ...)` of the parts and the tail.
    fn assemble(&self, parts: Vec<Part<'gc>>, tail: Value<'gc>) -> Value<'gc> {
        let s = self.syms;
        let mut segments: Vec<Value<'gc>> = Vec::new();
        let mut items: Vec<Value<'gc>> = Vec::new();
        for part in parts {
            match part {
                Part::Item(form) => items.push(form),
                Part::Splice(form) => {
                    if !items.is_empty() {
                        segments.push(self.call(Value::Symbol(s.list), &items));
                        items.clear();
                    }
                    segments.push(form);
                }
            }
        }
        let rest = match (items.is_empty(), tail.is_nil()) {
            (true, true) => None,
            (true, false) => Some(tail),
            (false, true) => Some(self.call(Value::Symbol(s.list), &items)),
            (false, false) => {
                items.push(tail);
                Some(self.call(Value::Symbol(s.list_star), &items))
            }
        };
        if segments.is_empty() {
            return rest.unwrap_or(Value::Nil);
        }
        segments.extend(rest);
        if segments.len() == 1 {
            // A lone splice `(,@x)`: APPEND of one list copies nothing; the list itself.
            return segments[0];
        }
        self.call(Value::Symbol(s.append), &segments)
    }
}
