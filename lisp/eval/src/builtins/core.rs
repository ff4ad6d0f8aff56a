//! Core builtins: conses, identity and equality, symbols and definitions,
//! the system helpers the prelude's macros expand into, type tests, and
//! printing.

use gc_arena::Gc;
use mprof_heap::value::{SYM_CONSTANT, SYM_MACRO, SYM_SPECIAL, StructType};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::ctx::{Ctx, keyword_args, string_designator};
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

fn cons<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(alloc::cons(ctx.mc, a[0], a[1]))
}

fn list_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<(), Raise<'gc>> {
    if v.is_list() { Ok(()) } else { Err(ctx.type_error(v, "LIST")) }
}

fn car<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    list_arg(ctx, a[0])?;
    Ok(alloc::car(a[0]))
}

fn cdr<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    list_arg(ctx, a[0])?;
    Ok(alloc::cdr(a[0]))
}

fn rplaca<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Cons(c) => {
            alloc::set_car(ctx.mc, c, a[1]);
            Ok(a[0])
        }
        other => Err(ctx.type_error(other, "CONS")),
    }
}

fn rplacd<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Cons(c) => {
            alloc::set_cdr(ctx.mc, c, a[1]);
            Ok(a[0])
        }
        other => Err(ctx.type_error(other, "CONS")),
    }
}

fn list<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(alloc::list(ctx.mc, a))
}

fn list_star<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (last, init) = a.split_last().map(|(l, i)| (*l, i)).unwrap_or((Value::Nil, &[]));
    Ok(alloc::list_with_tail(ctx.mc, init, last))
}

fn eq<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(a[0].eq(a[1])))
}

fn eql<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(crate::runtime::equal::eql(a[0], a[1])))
}

fn equal<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match crate::runtime::equal::equal_checked(a[0], a[1]) {
        Some(same) => Ok(ctx.bool(same)),
        None => Err(too_deep_to_compare("EQUAL")),
    }
}

fn equalp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match crate::runtime::equal::equalp_checked(a[0], a[1]) {
        Some(same) => Ok(ctx.bool(same)),
        None => Err(too_deep_to_compare("EQUALP")),
    }
}

/// (sys:%check-pair-budget steps): the next milestone, 2 steps, for TREE-EQUAL
/// after comparing `steps` cons pairs; a storage-condition past the budget of
/// `equal::pair_budget_exceeded` (two circular lists compare without end).
fn check_pair_budget<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let steps = ctx.index_arg(a[0])?;
    if crate::runtime::equal::pair_budget_exceeded(steps) {
        return Err(too_deep_to_compare("TREE-EQUAL"));
    }
    Ok(Value::Fixnum(steps.saturating_mul(2).min(i64::MAX as usize) as i64))
}

/// More pairs waiting than equal's bound (circular data, or nesting past 4,000,000).
fn too_deep_to_compare<'gc>(what: &str) -> Raise<'gc> {
    Raise::simple(
        crate::runtime::raise::ErrorKind::Storage,
        format!("{what}: the data nest more than 4,000,000 levels deep, or are circular"),
    )
}

fn null<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(a[0].is_nil()))
}

fn atom<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(!matches!(a[0], Value::Cons(_))))
}

fn consp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Cons(_))))
}

fn listp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(a[0].is_list()))
}

fn symbolp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Symbol(_) | Value::Nil)))
}

fn functionp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Function(_))))
}

fn symbol_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>, Raise<'gc>> {
    match v {
        Value::Symbol(s) => Ok(s),
        other => Err(ctx.type_error(other, "SYMBOL")),
    }
}

fn symbol_value<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if a[0].is_nil() {
        return Ok(Value::Nil);
    }
    let s = symbol_arg(ctx, a[0])?;
    match s.value.get() {
        Value::Unbound => Err(Raise::UnboundVariable(a[0])),
        v => Ok(v),
    }
}

fn set<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = symbol_arg(ctx, a[0])?;
    if s.has_flag(SYM_CONSTANT) {
        return Err(Raise::program(format!("cannot set the constant {}", s.name)));
    }
    alloc::symbol_set_value(ctx.mc, s, a[1]);
    Ok(a[1])
}

fn boundp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if a[0].is_nil() {
        return Ok(ctx.t());
    }
    let s = symbol_arg(ctx, a[0])?;
    Ok(ctx.bool(!matches!(s.value.get(), Value::Unbound)))
}

fn makunbound<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = symbol_arg(ctx, a[0])?;
    alloc::symbol_set_value(ctx.mc, s, Value::Unbound);
    Ok(a[0])
}

/// A function name: a symbol (`None` for NIL, which names no function) or
/// `(SETF symbol)`.
enum FunctionName<'gc> {
    Symbol(Option<mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>>),
    Setf(Option<mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>>),
}

/// `v` as a function name, or the type error FBOUNDP, FMAKUNBOUND and
/// FDEFINITION signal for anything else (a dotted or longer SETF list too).
fn function_name_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<FunctionName<'gc>, Raise<'gc>> {
    let as_symbol = |x: Value<'gc>| match x {
        Value::Nil => Some(None),
        Value::Symbol(s) => Some(Some(s)),
        _ => None,
    };
    if let Some(s) = as_symbol(v) {
        return Ok(FunctionName::Symbol(s));
    }
    if let Value::Cons(c) = v
        && matches!(c.car.get(), Value::Symbol(h) if Gc::ptr_eq(h, ctx.world.syms.setf))
        && let Value::Cons(rest) = c.cdr.get()
        && rest.cdr.get().is_nil()
        && let Some(s) = as_symbol(rest.car.get())
    {
        return Ok(FunctionName::Setf(s));
    }
    Err(ctx.type_error(v, "(OR SYMBOL (CONS (EQL SETF) (CONS SYMBOL NULL)))"))
}

/// (symbol-function symbol)
fn symbol_function<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !a[0].is_nil() {
        symbol_arg(ctx, a[0])?;
    }
    global_function(a[0])
}

/// (fdefinition function-name)
fn fdefinition<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    function_name_arg(ctx, a[0])?;
    global_function(a[0])
}

/// The global function (or macro function) of a valid function name. A
/// special operator is fbound, and the standard leaves what this returns for
/// one to the implementation: here, its name.
fn global_function<'gc>(name: Value<'gc>) -> LResult<'gc> {
    match crate::runtime::world::function_of(name) {
        Some(f) => Ok(f),
        None => match name {
            Value::Symbol(s) if s.has_flag(SYM_MACRO) => Ok(s.function.get()),
            Value::Symbol(s) if s.has_flag(mprof_heap::value::SYM_SPECIAL_OPERATOR) => Ok(name),
            _ => Err(Raise::UndefinedFunction(name)),
        },
    }
}

fn fboundp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let bound = match function_name_arg(ctx, a[0])? {
        // A special operator is fbound too (CLHS FBOUNDP).
        FunctionName::Symbol(Some(s)) => {
            !matches!(s.function.get(), Value::Unbound) || s.has_flag(mprof_heap::value::SYM_SPECIAL_OPERATOR)
        }
        FunctionName::Setf(Some(s)) => !matches!(s.setf_function.get(), Value::Unbound),
        FunctionName::Symbol(None) | FunctionName::Setf(None) => false,
    };
    Ok(ctx.bool(bound))
}

fn fmakunbound<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match function_name_arg(ctx, a[0])? {
        FunctionName::Symbol(Some(s)) => {
            alloc::symbol_set_function(ctx.mc, s, Value::Unbound);
            s.set_flag(SYM_MACRO, false);
        }
        FunctionName::Setf(Some(s)) => alloc::symbol_set_setf_function(ctx.mc, s, Value::Unbound),
        FunctionName::Symbol(None) | FunctionName::Setf(None) => {}
    }
    Ok(a[0])
}

/// (sys:%set-fdefinition name function): name is a symbol or (setf symbol).
fn set_fdefinition<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !matches!(a[1], Value::Function(_)) {
        return Err(ctx.type_error(a[1], "FUNCTION"));
    }
    match a[0] {
        Value::Symbol(s) => {
            if s.has_flag(mprof_heap::value::SYM_SPECIAL_OPERATOR) {
                return Err(Raise::program(format!("cannot redefine the special operator {}", s.name)));
            }
            alloc::symbol_set_function(ctx.mc, s, a[1]);
            s.set_flag(SYM_MACRO, false);
        }
        Value::Cons(_) => match alloc::car(alloc::cdr(a[0])) {
            Value::Symbol(s) => alloc::symbol_set_setf_function(ctx.mc, s, a[1]),
            other => return Err(ctx.type_error(other, "SYMBOL")),
        },
        other => return Err(ctx.type_error(other, "(OR SYMBOL CONS)")),
    }
    Ok(a[0])
}

/// (sys:%set-macro-function name expander)
fn set_macro<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = symbol_arg(ctx, a[0])?;
    alloc::symbol_set_function(ctx.mc, s, a[1]);
    s.set_flag(SYM_MACRO, true);
    Ok(a[0])
}

/// (macro-function symbol &optional environment): a local macro or function of
/// the environment (see `Scope::to_environment`) shadows the global definition.
fn macro_function<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    // NIL is a symbol (Value::Nil) that names no macro.
    if a[0].is_nil() {
        return Ok(Value::Nil);
    }
    let s = symbol_arg(ctx, a[0])?;
    for entry in alloc::list_iter(a.get(1).copied().unwrap_or(Value::Nil)) {
        let (kind, name) = (alloc::car(entry), alloc::car(alloc::cdr(entry)));
        if !name.eq(a[0]) {
            continue;
        }
        match kind {
            Value::Symbol(k) if &*k.name == "MACRO" => return Ok(alloc::cdr(alloc::cdr(entry))),
            Value::Symbol(k) if &*k.name == "FUNCTION" => return Ok(Value::Nil),
            _ => {}
        }
    }
    Ok(if s.has_flag(SYM_MACRO) { s.function.get() } else { Value::Nil })
}

fn special_operator_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    // NIL is a symbol (Value::Nil), and names no special operator.
    if a[0].is_nil() {
        return Ok(Value::Nil);
    }
    let s = symbol_arg(ctx, a[0])?;
    Ok(ctx.bool(s.has_flag(mprof_heap::value::SYM_SPECIAL_OPERATOR)))
}

/// (sys:%constant-symbol-p symbol): whether it names a constant (DEFCONSTANT,
/// a keyword, T), for CONSTANTP.
fn constant_symbol_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = symbol_arg(ctx, a[0])?;
    Ok(ctx.bool(s.has_flag(SYM_CONSTANT)))
}

/// (sys:%proclaim-special symbol)
fn proclaim_special<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = symbol_arg(ctx, a[0])?;
    s.set_flag(SYM_SPECIAL, true);
    Ok(a[0])
}

/// (sys:%defconstant symbol value)
fn defconstant<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = symbol_arg(ctx, a[0])?;
    alloc::symbol_set_value(ctx.mc, s, a[1]);
    s.set_flag(SYM_CONSTANT, true);
    Ok(a[0])
}

fn specialp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Symbol(s) if s.has_flag(SYM_SPECIAL))))
}

// ---- destructuring helpers (see compiler::front::build_destructuring) ----

/// (sys:%destructuring-expansion lambda-list expression body): the form the
/// compiler compiles a DESTRUCTURING-BIND as, for its MACRO-FUNCTION
/// (prelude/direct-macros.lisp).
fn destructuring_expansion<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let body: Vec<Value<'gc>> = alloc::list_iter(a[2]).collect();
    let w = ctx.world;
    Ok(crate::compiler::front::build_destructuring(ctx.mc, &w.packages, &w.syms, a[0], a[1], &body, None))
}

/// (sys:%macro-lambda name lambda-list body): the expander function form a
/// DEFMACRO compiles, `(lambda (form env) ...)`, for DEFMACRO's MACRO-FUNCTION.
fn macro_lambda<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let body: Vec<Value<'gc>> = alloc::list_iter(a[2]).collect();
    let w = ctx.world;
    Ok(crate::compiler::front::build_macro_lambda(ctx.mc, &w.packages, &w.syms, a[0], a[1], &body))
}

fn dcar<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Cons(c) => Ok(c.car.get()),
        _ => Err(Raise::program(format!(
            "too few elements to destructure with the lambda list {}",
            ctx.print(a[1], true)
        ))),
    }
}

fn dkey<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    // Returns the tail starting at the value of the keyword, or NIL.
    let mut cur = a[0];
    let mut check = crate::runtime::cycle::CycleCheck::new(cur);
    while let Value::Cons(c) = cur {
        let rest = c.cdr.get();
        if c.car.get().eq(a[1]) {
            return Ok(rest);
        }
        cur = alloc::cdr(rest);
        if check.looped(cur) {
            return Err(ctx.type_error(a[0], "LIST"));
        }
    }
    Ok(Value::Nil)
}

fn dcheck_keys<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut cur = a[0];
    let allowed: Vec<Value<'gc>> = alloc::list_iter(a[1]).collect();
    let mut check = crate::runtime::cycle::CycleCheck::new(cur);
    while let Value::Cons(c) = cur {
        let k = c.car.get();
        if matches!(k, Value::Symbol(s) if &*s.name == "ALLOW-OTHER-KEYS") && alloc::car(c.cdr.get()).truthy() {
            return Ok(Value::Nil);
        }
        if !allowed.iter().any(|x| x.eq(k)) && !matches!(k, Value::Symbol(s) if &*s.name == "ALLOW-OTHER-KEYS") {
            return Err(Raise::program(format!(
                "unknown keyword {} for the lambda list {}",
                ctx.print(k, true),
                ctx.print(a[2], true)
            )));
        }
        cur = alloc::cdr(c.cdr.get());
        if check.looped(cur) {
            return Err(ctx.type_error(a[0], "LIST"));
        }
    }
    Ok(Value::Nil)
}

fn dend<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if a[0].is_nil() {
        Ok(Value::Nil)
    } else {
        Err(Raise::program(format!(
            "too many elements to destructure with the lambda list {}",
            ctx.print(a[1], true)
        )))
    }
}

// ---- symbols ----

fn gensym<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let counter = ctx.world.intern_cl(ctx.mc, "*GENSYM-COUNTER*");
    let n = match counter {
        Value::Symbol(s) => match s.value.get() {
            Value::Fixnum(n) => {
                alloc::symbol_set_value(ctx.mc, s, Value::Fixnum(n + 1));
                n
            }
            _ => {
                alloc::symbol_set_value(ctx.mc, s, Value::Fixnum(1));
                0
            }
        },
        _ => 0,
    };
    let prefix = match a.first() {
        Some(Value::String(s)) => s.borrow().to_rust_string(),
        _ => "G".to_string(),
    };
    Ok(Value::Symbol(alloc::make_symbol(ctx.mc, &format!("{prefix}{n}"))))
}

fn make_symbol<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = ctx.string_arg(a[0])?;
    Ok(Value::Symbol(alloc::make_symbol(ctx.mc, &name)))
}

fn symbol_name<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Nil => Ok(alloc::string(ctx.mc, "NIL")),
        Value::Symbol(s) => Ok(alloc::string(ctx.mc, &s.name)),
        other => Err(ctx.type_error(other, "SYMBOL")),
    }
}

fn keywordp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Symbol(s)
        if matches!(s.package.get(), Some(p) if gc_arena::Gc::ptr_eq(p, ctx.world.packages.keyword)))))
}

// ---- structures and conditions ----

/// (sys:%make-struct-type name precedence-list slot-names condition-p) -> type
fn make_struct_type<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = symbol_arg(ctx, a[0])?;
    let prec: Vec<Value<'gc>> = alloc::list_iter(a[1]).collect();
    let slots: Vec<Value<'gc>> = alloc::list_iter(a[2]).collect();
    let t = match ctx.world.find_type(a[0]) {
        Some(t) => {
            *alloc::struct_type_precedence_mut(ctx.mc, t) = prec;
            *alloc::struct_type_slots_mut(ctx.mc, t) = slots;
            t
        }
        None => {
            let t = alloc::struct_type(ctx.mc, a[0], prec, slots, a[3].truthy());
            ctx.world.set_type(ctx.mc, name, t);
            t
        }
    };
    Ok(Value::StructType(t))
}

fn find_struct_type<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.world.find_type(a[0]).map(Value::StructType).unwrap_or(Value::Nil))
}

fn type_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<mprof_heap::value::Ptr<'gc, StructType<'gc>>, Raise<'gc>> {
    match v {
        Value::StructType(t) => Ok(t),
        other => match ctx.world.find_type(other) {
            Some(t) => Ok(t),
            None => Err(Raise::error(format!("{} does not name a structure or condition type", ctx.print(other, true)))),
        },
    }
}

/// (sys:%struct-type-slots type) -> list of slot names
fn struct_type_slots<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let t = type_arg(ctx, a[0])?;
    let slots = t.slot_names.borrow().clone();
    Ok(alloc::list(ctx.mc, &slots))
}

fn struct_type_set_report<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let t = type_arg(ctx, a[0])?;
    alloc::struct_type_set_report(ctx.mc, t, a[1]);
    Ok(a[1])
}

fn struct_type_report<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Struct(s) => {
            // The nearest type in the precedence list with a report.
            for name in s.stype().precedence.borrow().iter() {
                if let Some(t) = ctx.world.find_type(*name) {
                    let r = t.report.get();
                    if r.truthy() {
                        return Ok(r);
                    }
                }
            }
            Ok(Value::Nil)
        }
        _ => Ok(Value::Nil),
    }
}

fn struct_type_extra<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let t = type_arg(ctx, a[0])?;
    if a.len() > 1 {
        alloc::struct_type_set_extra(ctx.mc, t, a[1]);
        return Ok(a[1]);
    }
    Ok(t.extra.get())
}

/// (sys:%make-instance type &rest slot-values)
fn make_instance<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let t = type_arg(ctx, a[0])?;
    let n = t.slot_names.borrow().len();
    let mut slots = a[1..].to_vec();
    slots.resize(n, Value::Nil);
    Ok(alloc::structure(ctx.mc, t, "structure", slots))
}

fn struct_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<mprof_heap::value::Ptr<'gc, mprof_heap::value::Structure<'gc>>, Raise<'gc>> {
    match v {
        Value::Struct(s) => Ok(s),
        other => Err(ctx.type_error(other, "STRUCTURE-OBJECT")),
    }
}

/// (sys:%struct-ref object index type-name): type-name checks the object's type.
fn struct_ref<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = match a[0] {
        Value::Struct(s) if a[2].is_nil() || s.stype().precedence.borrow().iter().any(|n| n.eq(a[2])) => s,
        other => {
            return Err(Raise::TypeError { datum: other, expected: if a[2].is_nil() { ctx.cl("STRUCTURE-OBJECT") } else { a[2] } });
        }
    };
    let i = ctx.index_arg(a[1])?;
    s.slots.borrow().get(i).copied().ok_or_else(|| Raise::error("structure slot index out of range"))
}

/// (sys:%struct-set object index value type-name)
fn struct_set<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = match a[0] {
        Value::Struct(s) if a[3].is_nil() || s.stype().precedence.borrow().iter().any(|n| n.eq(a[3])) => s,
        other => {
            return Err(Raise::TypeError { datum: other, expected: if a[3].is_nil() { ctx.cl("STRUCTURE-OBJECT") } else { a[3] } });
        }
    };
    let i = ctx.index_arg(a[1])?;
    let mut slots = alloc::struct_slots_mut(ctx.mc, s);
    match slots.get_mut(i) {
        Some(slot) => *slot = a[2],
        None => return Err(Raise::error("structure slot index out of range")),
    }
    Ok(a[2])
}

/// (sys:%slot-by-name object slot-name) for condition readers.
fn slot_by_name<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = struct_arg(ctx, a[0])?;
    let name = match a[1] {
        Value::Symbol(n) => n.name.to_string(),
        other => return Err(ctx.type_error(other, "SYMBOL")),
    };
    crate::runtime::conditions::slot(s, &name)
        .ok_or_else(|| Raise::error(format!("{} has no slot named {name}", ctx.print(a[0], true))))
}

/// (sys:%set-slot-by-name object slot-name value) for condition accessors: VALUE.
fn set_slot_by_name<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = struct_arg(ctx, a[0])?;
    let Value::Symbol(n) = a[1] else { return Err(ctx.type_error(a[1], "SYMBOL")) };
    let index = s.stype().slot_names.borrow().iter().position(|x| matches!(x, Value::Symbol(sym) if sym.name == n.name));
    let Some(i) = index else {
        return Err(Raise::error(format!("{} has no slot named {}", ctx.print(a[0], true), n.name)));
    };
    let mut slots = alloc::struct_slots_mut(ctx.mc, s);
    match slots.get_mut(i) {
        Some(slot) => *slot = a[2],
        None => return Err(Raise::error("structure slot index out of range")),
    }
    Ok(a[2])
}

fn struct_type_name<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(match a[0] {
        Value::Struct(s) => s.stype().name,
        _ => Value::Nil,
    })
}

fn copy_struct<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = struct_arg(ctx, a[0])?;
    let slots = s.slots.borrow().clone();
    Ok(alloc::structure(ctx.mc, s.stype(), "structure", slots))
}

/// (sys:%condition-report-string condition): the report of a standard condition, or NIL.
fn condition_static_report<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let pctx = ctx.print_context(false);
    match crate::runtime::conditions::static_report(a[0], &pctx) {
        Some(s) => Ok(alloc::string(ctx.mc, &s)),
        None => Ok(Value::Nil),
    }
}

// ---- types ----

fn typep<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let b = crate::runtime::types::typep(ctx, a[0], a[1])?;
    Ok(ctx.bool(b))
}

fn type_of<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(crate::runtime::types::type_of(ctx, a[0]))
}

// ---- printing ----

fn stream_of<'gc>(ctx: &Ctx<'_, 'gc>, a: A<'_, 'gc>, i: usize) -> Result<Value<'gc>, Raise<'gc>> {
    ctx.output_stream(a.get(i).copied().unwrap_or(Value::Nil))
}

fn terpri<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_of(ctx, a, 0)?;
    ctx.write_stream(s, "\n")?;
    Ok(Value::Nil)
}

fn fresh_line<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_of(ctx, a, 0)?;
    if ctx.stream_column(s) != 0 {
        ctx.write_stream(s, "\n")?;
        return Ok(ctx.t());
    }
    Ok(Value::Nil)
}

/// The text of (write-string string &optional stream &key start end): the
/// characters of STRING between the bounding indices.
fn bounded_text<'gc>(ctx: &Ctx<'_, 'gc>, a: A<'_, 'gc>) -> Result<String, Raise<'gc>> {
    let text = ctx.string_arg(a[0])?;
    if a.len() <= 2 {
        return Ok(text);
    }
    let keys = keyword_args(ctx, &a[2..], &["START", "END"])?;
    let (start, end) = super::strings::bounds(ctx, keys[0], keys[1], text.chars().count())?;
    Ok(text.chars().skip(start).take(end - start).collect())
}

fn write_string<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let text = bounded_text(ctx, a)?;
    let s = stream_of(ctx, a, 1)?;
    ctx.write_stream(s, &text)?;
    Ok(a[0])
}

fn write_line<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let text = bounded_text(ctx, a)?;
    let s = stream_of(ctx, a, 1)?;
    ctx.write_stream(s, &text)?;
    ctx.write_stream(s, "\n")?;
    Ok(a[0])
}

fn write_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Value::Char(c) = a[0] else {
        return Err(ctx.type_error(a[0], "CHARACTER"));
    };
    let s = stream_of(ctx, a, 1)?;
    ctx.write_stream(s, &c.to_string())?;
    Ok(a[0])
}

/// (sys:%object-address object): the heap address PRINT-UNREADABLE-OBJECT's
/// :identity shows (0 for immediates).
fn object_address<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum(a[0].heap_address().unwrap_or(0) as i64))
}

fn identity<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(a[0])
}

fn not<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(a[0].is_nil()))
}

/// (sys:%fast-length list-or-vector) used by the prelude before sequences exist.
fn length<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Nil => Ok(Value::Fixnum(0)),
        Value::Cons(_) => {
            let mut n = 0i64;
            let mut cur = a[0];
            let mut check = crate::runtime::cycle::CycleCheck::new(cur);
            while let Value::Cons(c) = cur {
                n += 1;
                cur = c.cdr.get();
                if check.looped(cur) {
                    return Err(ctx.type_error(a[0], "LIST"));
                }
            }
            if !cur.is_nil() {
                return Err(ctx.type_error(a[0], "LIST"));
            }
            Ok(Value::Fixnum(n))
        }
        Value::String(s) => Ok(Value::Fixnum(s.borrow().active().len() as i64)),
        Value::Vector(v) => Ok(Value::Fixnum(v.borrow().active().len() as i64)),
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => Ok(Value::Fixnum(x.borrow().active_len() as i64)),
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

fn append<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Some((&last, init)) = a.split_last() else {
        return Ok(Value::Nil);
    };
    let mut items = Vec::new();
    for &l in init {
        let mut cur = l;
        let mut check = crate::runtime::cycle::CycleCheck::new(cur);
        while let Value::Cons(c) = cur {
            items.push(c.car.get());
            cur = c.cdr.get();
            if check.looped(cur) {
                return Err(ctx.type_error(l, "LIST"));
            }
        }
        if !cur.is_nil() {
            return Err(ctx.type_error(l, "LIST"));
        }
    }
    Ok(alloc::list_with_tail(ctx.mc, &items, last))
}

fn values_list<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Some(items) = alloc::list_to_vec(a[0]) else {
        return Err(ctx.type_error(a[0], "LIST"));
    };
    Ok(ctx.set_values(&items))
}

fn get_internal_real_time<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum(ctx.host.start.elapsed().as_micros() as i64))
}

fn find_package_or_die<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = string_designator(ctx, a[0])?;
    match ctx.world.packages.find_package(&name) {
        Some(p) => Ok(Value::Package(p)),
        None => Err(Raise::simple(crate::runtime::raise::ErrorKind::Package, format!("The package {name:?} does not exist."))),
    }
}

/// The symbol whose plist is NIL's: NIL is an immediate value with no symbol
/// object of its own, yet (setf (get nil 'x) 1) is legal.
fn plist_holder<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<mprof_heap::value::Ptr<'gc, mprof_heap::value::Symbol<'gc>>, Raise<'gc>> {
    match v {
        Value::Nil => {
            let p = &ctx.world.packages;
            symbol_arg(ctx, p.intern_external(ctx.mc, p.system, "%NIL-PLIST"))
        }
        other => symbol_arg(ctx, other),
    }
}

fn symbol_plist<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(plist_holder(ctx, a[0])?.plist.get())
}

fn set_symbol_plist<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = plist_holder(ctx, a[0])?;
    alloc::symbol_set_plist(ctx.mc, s, a[1]);
    Ok(a[1])
}

fn type_precedence<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let t = type_arg(ctx, a[0])?;
    let p = t.precedence.borrow().clone();
    Ok(alloc::list(ctx.mc, &p))
}

fn intern<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = ctx.string_arg(a[0])?;
    let package = match a.get(1) {
        None => ctx.current_package(),
        Some(Value::Package(p)) => *p,
        Some(&d) => {
            let pname = string_designator(ctx, d)?;
            ctx.world.packages.find_package(&pname).ok_or_else(|| {
                Raise::simple(crate::runtime::raise::ErrorKind::Package, format!("The package {pname:?} does not exist."))
            })?
        }
    };
    let found = ctx.world.packages.find_symbol(package, &name);
    let status = match found {
        Some((_, mprof_heap::FindStatus::Internal)) => ctx.kw("INTERNAL"),
        Some((_, mprof_heap::FindStatus::External)) => ctx.kw("EXTERNAL"),
        Some((_, mprof_heap::FindStatus::Inherited)) => ctx.kw("INHERITED"),
        None => Value::Nil,
    };
    let sym = ctx.world.packages.intern(ctx.mc, package, &name);
    Ok(ctx.set_values(&[sym, status]))
}

fn stringp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::String(_)) || mprof_heap::spec::is_displaced_string(a[0])))
}

/// (make-string-output-stream &key element-type): the element type is a
/// character type (every string holds any character).
fn make_string_output_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    keyword_args(ctx, a, &["ELEMENT-TYPE"])?;
    Ok(alloc::stream(ctx.mc, "string-output", mprof_heap::value::StreamKind::StringOutput { buffer: String::new() }))
}

fn get_output_stream_string<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Value::Stream(s) = a[0] else {
        return Err(ctx.type_error(a[0], "STRING-STREAM"));
    };
    let text = {
        let mut st = alloc::borrow_mut(ctx.mc, s);
        st.column = 0;
        match &mut st.kind {
            mprof_heap::value::StreamKind::StringOutput { buffer } => std::mem::take(buffer),
            _ => return Err(ctx.type_error(a[0], "STRING-STREAM")),
        }
    };
    Ok(alloc::string(ctx.mc, &text))
}

fn reverse<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Nil | Value::Cons(_) => {
            let mut out = Value::Nil;
            let mut cur = a[0];
            let mut check = crate::runtime::cycle::CycleCheck::new(cur);
            while let Value::Cons(c) = cur {
                out = alloc::cons(ctx.mc, c.car.get(), out);
                cur = c.cdr.get();
                if check.looped(cur) {
                    return Err(ctx.type_error(a[0], "LIST"));
                }
            }
            if !cur.is_nil() {
                return Err(ctx.type_error(a[0], "LIST"));
            }
            Ok(out)
        }
        Value::String(s) => {
            let mut chars = s.borrow().active().to_vec();
            chars.reverse();
            Ok(alloc::string_from_chars(ctx.mc, mprof_heap::value::LString { chars, fill_pointer: None, adjustable: false }))
        }
        Value::Vector(v) => {
            let mut items = v.borrow().active().to_vec();
            items.reverse();
            Ok(alloc::vector(ctx.mc, items))
        }
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => {
            let mut items = super::sequences::seq_items(ctx, a[0])?;
            items.reverse();
            super::sequences::make_typed_vector(ctx, x.borrow().element_type, items)
        }
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

fn nth<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[0])?;
    let mut cur = a[1];
    for _ in 0..n {
        match cur {
            Value::Cons(c) => cur = c.cdr.get(),
            Value::Nil => return Ok(Value::Nil),
            other => return Err(ctx.type_error(other, "LIST")),
        }
    }
    list_arg(ctx, cur)?;
    Ok(alloc::car(cur))
}

fn nconc<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut result = Value::Nil;
    let mut last: Option<gc_arena::Gc<'gc, mprof_heap::value::Cons<'gc>>> = None;
    for (i, &l) in a.iter().enumerate() {
        match l {
            Value::Nil => {}
            Value::Cons(c) => {
                match last {
                    Some(p) => alloc::set_cdr(ctx.mc, p, l),
                    None => result = l,
                }
                // The last argument is not walked: it may be circular.
                if i + 1 < a.len() {
                    let mut cur = c;
                    let mut check = crate::runtime::cycle::CycleCheck::new(l);
                    while let Value::Cons(next) = cur.cdr.get() {
                        cur = next;
                        if check.looped(Value::Cons(next)) {
                            return Err(ctx.type_error(l, "LIST"));
                        }
                    }
                    last = Some(cur);
                }
            }
            other if i + 1 == a.len() => {
                match last {
                    Some(p) => alloc::set_cdr(ctx.mc, p, other),
                    None => result = other,
                }
            }
            other => return Err(ctx.type_error(other, "LIST")),
        }
    }
    Ok(result)
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("CONS", 2, 2, cons),
    cl("CAR", 1, 1, car),
    cl("CDR", 1, 1, cdr),
    cl("RPLACA", 2, 2, rplaca),
    cl("RPLACD", 2, 2, rplacd),
    cl("LIST", 0, MANY, list),
    cl("LIST*", 1, MANY, list_star),
    cl("APPEND", 0, MANY, append),
    cl("VALUES-LIST", 1, 1, values_list),
    cl("EQ", 2, 2, eq),
    cl("EQL", 2, 2, eql),
    cl("EQUAL", 2, 2, equal),
    cl("EQUALP", 2, 2, equalp),
    cl("NULL", 1, 1, null),
    cl("NOT", 1, 1, not),
    cl("ATOM", 1, 1, atom),
    cl("CONSP", 1, 1, consp),
    cl("LISTP", 1, 1, listp),
    cl("SYMBOLP", 1, 1, symbolp),
    cl("FUNCTIONP", 1, 1, functionp),
    cl("IDENTITY", 1, 1, identity),
    cl("SYMBOL-VALUE", 1, 1, symbol_value),
    cl("SET", 2, 2, set),
    cl("BOUNDP", 1, 1, boundp),
    cl("MAKUNBOUND", 1, 1, makunbound),
    cl("SYMBOL-FUNCTION", 1, 1, symbol_function),
    cl("FDEFINITION", 1, 1, fdefinition),
    cl("FBOUNDP", 1, 1, fboundp),
    cl("FMAKUNBOUND", 1, 1, fmakunbound),
    cl("MACRO-FUNCTION", 1, 2, macro_function),
    cl("SPECIAL-OPERATOR-P", 1, 1, special_operator_p),
    cl("GENSYM", 0, 1, gensym),
    cl("MAKE-SYMBOL", 1, 1, make_symbol),
    cl("SYMBOL-NAME", 1, 1, symbol_name),
    cl("KEYWORDP", 1, 1, keywordp),
    cl("TYPEP", 2, 3, typep),
    cl("TYPE-OF", 1, 1, type_of),
    cl("TERPRI", 0, 1, terpri),
    cl("FRESH-LINE", 0, 1, fresh_line),
    cl("WRITE-STRING", 1, MANY, write_string),
    cl("WRITE-LINE", 1, MANY, write_line),
    cl("WRITE-CHAR", 1, 2, write_char),
    cl("LENGTH", 1, 1, length),
    cl("GET-INTERNAL-REAL-TIME", 0, 0, get_internal_real_time),
    cl("INTERN", 1, 2, intern),
    cl("STRINGP", 1, 1, stringp),
    cl("MAKE-STRING-OUTPUT-STREAM", 0, MANY, make_string_output_stream),
    cl("GET-OUTPUT-STREAM-STRING", 1, 1, get_output_stream_string),
    cl("REVERSE", 1, 1, reverse),
    cl("NTH", 2, 2, nth),
    cl("NCONC", 0, MANY, nconc),
    sys("%CHECK-PAIR-BUDGET", 1, 1, check_pair_budget),
    sys("%FIND-PACKAGE-OR-DIE", 1, 1, find_package_or_die),
    sys("%SYMBOL-PLIST", 1, 1, symbol_plist),
    sys("%SET-SYMBOL-PLIST", 2, 2, set_symbol_plist),
    sys("%CONSTANT-SYMBOL-P", 1, 1, constant_symbol_p),
    sys("%DESTRUCTURING-EXPANSION", 3, 3, destructuring_expansion),
    sys("%MACRO-LAMBDA", 3, 3, macro_lambda),
    sys("%TYPE-PRECEDENCE", 1, 1, type_precedence),
    sys("%SET-FDEFINITION", 2, 2, set_fdefinition),
    sys("%SET-MACRO-FUNCTION", 2, 2, set_macro),
    sys("%PROCLAIM-SPECIAL", 1, 1, proclaim_special),
    sys("%DEFCONSTANT", 2, 2, defconstant),
    sys("%SPECIALP", 1, 1, specialp),
    sys("%DCAR", 2, 2, dcar),
    sys("%DKEY", 2, 2, dkey),
    sys("%DCHECK-KEYS", 3, 3, dcheck_keys),
    sys("%DEND", 2, 2, dend),
    sys("%MAKE-STRUCT-TYPE", 4, 4, make_struct_type),
    sys("%FIND-STRUCT-TYPE", 1, 1, find_struct_type),
    sys("%STRUCT-TYPE-SLOTS", 1, 1, struct_type_slots),
    sys("%STRUCT-TYPE-SET-REPORT", 2, 2, struct_type_set_report),
    sys("%CONDITION-REPORT-FUNCTION", 1, 1, struct_type_report),
    sys("%OBJECT-ADDRESS", 1, 1, object_address),
    sys("%STRUCT-TYPE-EXTRA", 1, 2, struct_type_extra),
    sys("%MAKE-INSTANCE", 1, MANY, make_instance),
    sys("%STRUCT-REF", 3, 3, struct_ref),
    sys("%STRUCT-SET", 4, 4, struct_set),
    sys("%SLOT-BY-NAME", 2, 2, slot_by_name),
    sys("%SET-SLOT-BY-NAME", 3, 3, set_slot_by_name),
    sys("%STRUCT-TYPE-NAME", 1, 1, struct_type_name),
    sys("%COPY-STRUCT", 1, 1, copy_struct),
    sys("%CONDITION-STATIC-REPORT", 1, 1, condition_static_report),
];
