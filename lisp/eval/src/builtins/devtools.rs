//! The Rust side of the development functions (prelude/devtools.lisp):
//! documentation strings, the disassembly of compiled code, and what a
//! function object can tell about itself.
//!
//! Invariants:
//! - Documentation lives on the plist of the name's symbol (for `(setf f)`,
//!   of `f`, under the doc type `SETF-FUNCTION`...) as an alist of
//!   (doc-type . string) under `SYS::%DOCUMENTATION`; setting a doc type
//!   replaces its entry, so redefinitions do not grow the list. A builtin
//!   keeps it (not the prelude) because `defun` records docstrings from the
//!   first prelude file on.
//! - The disassembly is text built here from the proto's instructions and
//!   constants; it never runs Lisp (constants print without print methods).

use mprof_heap::code::Op;
use mprof_heap::value::{Function, Ptr, Symbol};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, sys};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

/// The symbol that holds a name's documentation and the doc type to use:
/// `(setf f)` documents as function is kept on `f` as `SETF-FUNCTION`.
fn doc_place<'gc>(
    ctx: &Ctx<'_, 'gc>,
    name: Value<'gc>,
    doc_type: Value<'gc>,
) -> Result<(Ptr<'gc, Symbol<'gc>>, Value<'gc>), Raise<'gc>> {
    let p = &ctx.world.packages;
    match name {
        Value::Symbol(s) => Ok((s, doc_type)),
        // NIL's plist lives on a system symbol (see core.rs, plist_holder).
        Value::Nil => match p.intern_external(ctx.mc, p.system, "%NIL-PLIST") {
            Value::Symbol(s) => Ok((s, doc_type)),
            _ => Err(ctx.type_error(name, "SYMBOL")),
        },
        Value::Cons(_) => match alloc::car(alloc::cdr(name)) {
            Value::Symbol(s) => {
                let kind = p.intern_external(ctx.mc, p.system, "SETF-FUNCTION");
                Ok((s, if doc_type.is_nil() { doc_type } else { kind }))
            }
            _ => Err(ctx.type_error(name, "(OR SYMBOL CONS)")),
        },
        other => Err(ctx.type_error(other, "(OR SYMBOL CONS)")),
    }
}

fn doc_key<'gc>(ctx: &Ctx<'_, 'gc>) -> Value<'gc> {
    let p = &ctx.world.packages;
    p.intern_external(ctx.mc, p.system, "%DOCUMENTATION")
}

/// The alist of a symbol's documentation (NIL when it has none).
fn doc_alist<'gc>(s: Ptr<'gc, Symbol<'gc>>, key: Value<'gc>) -> Value<'gc> {
    let mut plist = s.plist.get();
    while let Value::Cons(_) = plist {
        if alloc::car(plist).eq(key) {
            return alloc::car(alloc::cdr(plist));
        }
        plist = alloc::cdr(alloc::cdr(plist));
    }
    Value::Nil
}

/// (sys::%documentation name doc-type): the string, or NIL.
fn documentation<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (s, doc_type) = doc_place(ctx, a[0], a[1])?;
    let mut alist = doc_alist(s, doc_key(ctx));
    while let Value::Cons(_) = alist {
        let entry = alloc::car(alist);
        if alloc::car(entry).eq(doc_type) {
            return Ok(alloc::cdr(entry));
        }
        alist = alloc::cdr(alist);
    }
    Ok(Value::Nil)
}

/// (sys::%set-documentation name doc-type string-or-nil): replaces the entry.
fn set_documentation<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (s, doc_type) = doc_place(ctx, a[0], a[1])?;
    let doc = a[2];
    if !matches!(doc, Value::Nil | Value::String(_)) {
        return Err(ctx.type_error(doc, "(OR STRING NULL)"));
    }
    let key = doc_key(ctx);
    if doc.is_nil() && doc_alist(s, key).is_nil() {
        // Nothing to clear: a definition without documentation adds no entry.
        return Ok(doc);
    }
    let mut kept = Vec::new();
    let mut alist = doc_alist(s, key);
    while let Value::Cons(_) = alist {
        let entry = alloc::car(alist);
        if !alloc::car(entry).eq(doc_type) {
            kept.push(entry);
        }
        alist = alloc::cdr(alist);
    }
    if !doc.is_nil() {
        kept.insert(0, alloc::cons(ctx.mc, doc_type, doc));
    }
    let new_alist = alloc::list(ctx.mc, &kept);
    // Replace the value under the key in place, or add the key in front.
    let mut plist = s.plist.get();
    while let Value::Cons(_) = plist {
        if alloc::car(plist).eq(key)
            && let Value::Cons(cell) = alloc::cdr(plist)
        {
            alloc::set_car(ctx.mc, cell, new_alist);
            return Ok(doc);
        }
        plist = alloc::cdr(alloc::cdr(plist));
    }
    let tail = alloc::cons(ctx.mc, new_alist, s.plist.get());
    alloc::symbol_set_plist(ctx.mc, s, alloc::cons(ctx.mc, key, tail));
    Ok(doc)
}

/// (sys::%function-info f): (values name closure-p compiled-p) of a function.
fn function_info<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Value::Function(f) = a[0] else {
        return Err(ctx.type_error(a[0], "FUNCTION"));
    };
    let (closure, lisp) = match &f.val {
        Function::Closure(c) => (!c.captured.is_empty(), true),
        Function::Builtin(_) => (false, false),
    };
    let t = ctx.t();
    Ok(ctx.set_values(&[f.name(), if closure { t } else { Value::Nil }, if lisp { t } else { Value::Nil }]))
}

/// The operand of an instruction that indexes the constants, if any.
fn constant_operand(op: &Op) -> Option<u32> {
    match *op {
        Op::Const(k) | Op::SymValue(k) | Op::SymSet(k) | Op::FunctionOf(k) | Op::MakeClosure(k) => Some(k),
        _ => None,
    }
}

/// (sys::%disassemble f): the text of a function's bytecode, one instruction
/// a line with its index, and the constant it refers to in a comment; the
/// code of the closures it makes follows, each under its own heading.
fn disassemble<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Value::Function(f) = a[0] else {
        return Err(ctx.type_error(a[0], "FUNCTION"));
    };
    let Function::Closure(c) = &f.val else {
        let text = format!("; {} is a builtin written in Rust: it has no bytecode\n", ctx.print(a[0], true));
        return Ok(alloc::string(ctx.mc, &text));
    };
    let mut out = String::new();
    // Nested protos are listed after their parent, from an explicit work list.
    let mut work = vec![(c.proto, ctx.print(a[0], true))];
    let mut listed = 0;
    while let Some((proto, title)) = work.pop() {
        listed += 1;
        if listed > 1000 {
            out.push_str("; ... (more nested functions not shown)\n");
            break;
        }
        let info = &proto.info;
        out.push_str(&format!(
            "; disassembly of {title}\n; {} required, {} optional parameter(s){}{}, {} slot(s), {} instruction(s)\n",
            info.params.required,
            info.params.optional,
            if info.params.rest { ", &rest" } else { "" },
            if info.params.keys.is_empty() { String::new() } else { format!(", {} key(s)", info.params.keys.len()) },
            info.nslots,
            proto.code.len()
        ));
        let mut nested = Vec::new();
        for (i, op) in proto.code.iter().enumerate() {
            let mut line = format!("{i:5}  {op:?}");
            if let Some(k) = constant_operand(op)
                && let Some(&v) = proto.consts.get(k as usize)
            {
                if let (Op::MakeClosure(_), Value::Proto(p)) = (op, v) {
                    let name = if p.name.is_nil() { "(LAMBDA)".to_string() } else { ctx.print(p.name, true) };
                    line.push_str(&format!("    ; {name}"));
                    nested.push((p, format!("{name} (made at {i})")));
                } else {
                    let text = ctx.print(v, true);
                    let short: String = text.chars().take(60).collect();
                    line.push_str(&format!("    ; {short}{}", if short.len() < text.len() { "..." } else { "" }));
                }
            }
            out.push_str(&line);
            out.push('\n');
        }
        work.extend(nested.into_iter().rev());
    }
    Ok(alloc::string(ctx.mc, &out))
}

pub const BUILTINS: &[BuiltinDef] = &[
    sys("%DOCUMENTATION", 2, 2, documentation),
    sys("%SET-DOCUMENTATION", 3, 3, set_documentation),
    sys("%FUNCTION-INFO", 1, 1, function_info),
    sys("%DISASSEMBLE", 1, 1, disassemble),
];
