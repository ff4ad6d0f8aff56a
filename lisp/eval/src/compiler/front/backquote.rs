//! Backquote: a template read as `MPROF-SYSTEM:BACKQUOTE` with `UNQUOTE` and
//! `UNQUOTE-SPLICING` inside, turned into the list-building forms that make
//! it (constants shared where a part has no unquote).

use mprof_heap::alloc::{self, car, cdr};
use mprof_heap::Value;

use crate::compiler::CompileError;
use crate::compiler::front::{Front, MAX_FORM_DEPTH, R, syntax};

impl<'a, 'gc> Front<'a, 'gc> {
    pub(super) fn sys_symbol(&self, name: &str) -> Value<'gc> {
        self.packages.intern_external(self.mc, self.packages.system, name)
    }

    /// Expand a backquoted template at nesting `depth` into list-building code.
    pub(super) fn backquote(&mut self, x: Value<'gc>, depth: usize) -> R<'gc, Value<'gc>> {
        if self.depth >= MAX_FORM_DEPTH {
            return Err(CompileError::TooDeep { form: x });
        }
        self.depth += 1;
        let r = crate::compiler::with_stack(|| self.backquote_at_depth(x, depth));
        self.depth -= 1;
        r
    }

    pub(super) fn backquote_at_depth(&mut self, x: Value<'gc>, depth: usize) -> R<'gc, Value<'gc>> {
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
}
