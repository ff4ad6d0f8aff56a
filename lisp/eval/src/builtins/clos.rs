//! The Rust primitives under CLOS (`prelude/clos.lisp`): the dispatch key of
//! any object, instance allocation and the fast paths of slot access.
//!
//! A standard-object instance is a heap structure whose type is its class's
//! `StructType` (so the profiler's bin table names the class), with slot 0
//! holding the class's *layout token* at allocation time and the instance
//! slots after it. The layout token is the first of the type's slot names,
//! a fresh uninterned symbol per (re)definition of the class: an instance
//! whose slot 0 is not the type's current token is obsolete, and the fast
//! paths below hand it to the Lisp side, which updates it. Unbound slots hold
//! `Value::Unbound`, which never leaves this module: readers return the
//! caller's `miss` marker instead, so Lisp code never sees it.
//!
//! Invariant: every function here is O(number of slots) at worst and
//! allocates only in `%allocate-instance` and `%instance-change-type` (one
//! structure each, charged to the class name in category s).

use mprof_heap::value::{Ptr, Structure};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, sys};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

/// The built-in class codes `%class-key` answers for objects that are not
/// structures; `prelude/clos.lisp` keeps the class of each code in a vector
/// in this order.
const BUILT_IN_CLASSES: &[&str] = &[
    "T",
    "NULL",
    "CONS",
    "SYMBOL",
    "FIXNUM",
    "BIGNUM",
    "RATIO",
    "DOUBLE-FLOAT",
    "CHARACTER",
    "STRING",
    "VECTOR",
    "ARRAY",
    "FUNCTION",
    "HASH-TABLE",
    "PACKAGE",
    "STREAM",
    "RANDOM-STATE",
    "BIT-VECTOR",
    "COMPLEX",
    "FILE-STREAM",
    "STRING-STREAM",
    "SYNONYM-STREAM",
    "TWO-WAY-STREAM",
    "ECHO-STREAM",
    "BROADCAST-STREAM",
    "CONCATENATED-STREAM",
];

fn code<'gc>(name: &str) -> Value<'gc> {
    Value::Fixnum(BUILT_IN_CLASSES.iter().position(|n| *n == name).unwrap_or(0) as i64)
}

/// (sys:%class-key object): what the dispatch caches are keyed by. The
/// structure type of a structure, condition or instance; for anything else
/// the index of its most specific built-in class in `BUILT_IN_CLASSES`.
fn class_key<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    use Value::*;
    Ok(match a[0] {
        Struct(s) => StructType(s.stype()),
        Nil => code("NULL"),
        Cons(_) => code("CONS"),
        Symbol(_) => code("SYMBOL"),
        Fixnum(i) if (-crate::runtime::types::SBCL_MOST_POSITIVE_FIXNUM - 1..=crate::runtime::types::SBCL_MOST_POSITIVE_FIXNUM).contains(&i) => {
            code("FIXNUM")
        }
        Fixnum(_) | BigInt(_) => code("BIGNUM"),
        Ratio(_) => code("RATIO"),
        Float(_) => code("DOUBLE-FLOAT"),
        Char(_) => code("CHARACTER"),
        String(_) => code("STRING"),
        Vector(_) => code("VECTOR"),
        Array(_) => code("ARRAY"),
        Function(_) => code("FUNCTION"),
        HashTable(_) => code("HASH-TABLE"),
        Package(_) => code("PACKAGE"),
        Stream(s) => code(crate::runtime::composite::class_name(&s.borrow().kind)),
        RandomState(_) => code("RANDOM-STATE"),
        SpecArray(a) => {
            use mprof_heap::spec::ElementType;
            let a = a.borrow();
            match (a.dims.len(), a.element_type) {
                (1, ElementType::Bit) => code("BIT-VECTOR"),
                (1, ElementType::Character) => code("STRING"),
                (1, _) => code("VECTOR"),
                _ => code("ARRAY"),
            }
        }
        Complex(_) => code("COMPLEX"),
        // Structure types, internal objects and any kind added later.
        #[allow(unreachable_patterns)]
        _ => code("T"),
    })
}

/// (sys:%built-in-class-names): the names, in code order.
fn built_in_class_names<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    let names: Vec<Value<'gc>> = BUILT_IN_CLASSES.iter().map(|n| ctx.cl(n)).collect();
    Ok(alloc::list(ctx.mc, &names))
}

fn instance_type<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Ptr<'gc, mprof_heap::value::StructType<'gc>>, Raise<'gc>> {
    match v {
        Value::StructType(t) => Ok(t),
        other => Err(ctx.type_error(other, "STRUCTURE-CLASS")),
    }
}

/// (sys:%allocate-instance type): a new instance of the class whose
/// structure type is `type`, every slot unbound, stamped with the current layout.
fn allocate_instance<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let t = instance_type(ctx, a[0])?;
    let mut slots = t.slot_names.borrow().clone();
    let Some(first) = slots.first_mut() else {
        return Err(Raise::error(format!("{} is not a standard class's type (it has no layout)", ctx.print(a[0], true))));
    };
    let layout = *first;
    slots.iter_mut().for_each(|s| *s = Value::Unbound);
    slots[0] = layout;
    Ok(alloc::structure(ctx.mc, t, "instance", slots))
}

/// The index of `name` in a current-layout instance, or None (not an
/// instance, obsolete, or no such local slot).
fn fast_index<'gc>(obj: Value<'gc>, name: Value<'gc>) -> Option<(Ptr<'gc, Structure<'gc>>, usize)> {
    let Value::Struct(s) = obj else { return None };
    let stype = s.stype();
    let names = stype.slot_names.borrow();
    let slots = s.slots.borrow();
    let layout = *names.first()?;
    if !matches!(layout, Value::Symbol(_)) || !slots.first()?.eq(layout) {
        return None;
    }
    let i = names.iter().skip(1).position(|n| n.eq(name))? + 1;
    (i < slots.len()).then_some((s, i))
}

/// (sys:%slot-ref object slot-name miss): the slot's value, or `miss` when
/// the slot is unbound, not local, or the object not a current instance.
fn slot_ref<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(match fast_index(a[0], a[1]) {
        Some((s, i)) => match s.slots.borrow()[i] {
            Value::Unbound => a[2],
            v => v,
        },
        None => a[2],
    })
}

/// Whether the instance's class declares slot types: its layout token's
/// value is true then, and stores take the Lisp path, which checks them.
fn has_typed_slots(s: Ptr<'_, Structure<'_>>) -> bool {
    matches!(s.stype().slot_names.borrow().first(), Some(Value::Symbol(token)) if token.value.get().truthy())
}

/// (sys:%slot-set object slot-name value miss): stores and returns `value`,
/// or returns `miss` (storing nothing) when the fast path does not apply.
fn slot_set<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match fast_index(a[0], a[1]).filter(|(s, _)| !has_typed_slots(*s)) {
        Some((s, i)) => {
            alloc::struct_slots_mut(ctx.mc, s)[i] = a[2];
            Ok(a[2])
        }
        None => Ok(a[3]),
    }
}

fn struct_of<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Ptr<'gc, Structure<'gc>>, Raise<'gc>> {
    match v {
        Value::Struct(s) => Ok(s),
        other => Err(ctx.type_error(other, "STANDARD-OBJECT")),
    }
}

/// (sys:%instance-ref object index unbound-marker): raw slot access (slot 0
/// is the layout token); `unbound-marker` for an unbound slot.
fn instance_ref<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = struct_of(ctx, a[0])?;
    let i = ctx.index_arg(a[1])?;
    match s.slots.borrow().get(i) {
        Some(Value::Unbound) => Ok(a[2]),
        Some(v) => Ok(*v),
        None => Err(Raise::error(format!("instance slot index {i} out of range"))),
    }
}

/// (sys:%instance-set object index value [unbind]): raw store; with
/// `unbind` true the slot becomes unbound instead.
fn instance_set<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = struct_of(ctx, a[0])?;
    let i = ctx.index_arg(a[1])?;
    let v = if a.get(3).is_some_and(|u| u.truthy()) { Value::Unbound } else { a[2] };
    match alloc::struct_slots_mut(ctx.mc, s).get_mut(i) {
        Some(slot) => *slot = v,
        None => return Err(Raise::error(format!("instance slot index {i} out of range"))),
    }
    Ok(a[2])
}

/// (sys:%instance-length object): the number of raw slots, layout included.
fn instance_length<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = struct_of(ctx, a[0])?;
    Ok(Value::Fixnum(s.slots.borrow().len() as i64))
}

/// (sys:%instance-resize object n): grow or shrink the raw slots to `n`,
/// new ones unbound (for an obsolete instance being updated).
fn instance_resize<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = struct_of(ctx, a[0])?;
    let n = ctx.index_arg(a[1])?;
    if n > 1 << 20 {
        return Err(Raise::error(format!("an instance cannot have {n} slots")));
    }
    alloc::struct_slots_mut(ctx.mc, s).resize(n, Value::Unbound);
    Ok(a[0])
}

/// (sys:%instance-change-type object type): make `object` an instance of the
/// class whose structure type is `type`, stamped with its current layout and
/// every slot unbound (CHANGE-CLASS then fills in the kept values). Returns
/// a copy of the object as it was, for UPDATE-INSTANCE-FOR-DIFFERENT-CLASS.
fn instance_change_type<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = struct_of(ctx, a[0])?;
    let t = instance_type(ctx, a[1])?;
    let old_type = s.stype();
    if old_type.slot_names.borrow().first().is_none_or(|n| !matches!(n, Value::Symbol(_)))
        || !matches!(s.slots.borrow().first(), Some(Value::Symbol(_)))
    {
        return Err(Raise::error(format!("CHANGE-CLASS: {} is not a standard object", ctx.print(a[0], true))));
    }
    let mut fresh = t.slot_names.borrow().clone();
    let Some(layout) = fresh.first().copied() else {
        return Err(Raise::error("CHANGE-CLASS: the new class is not a standard class"));
    };
    fresh.iter_mut().for_each(|v| *v = Value::Unbound);
    fresh[0] = layout;
    let old_slots = std::mem::replace(&mut *alloc::struct_slots_mut(ctx.mc, s), fresh);
    let previous = alloc::structure(ctx.mc, old_type, "instance", old_slots);
    alloc::struct_set_type(ctx.mc, s, t);
    Ok(previous)
}

/// (sys:%struct-type-report-of type): the type's own print method or
/// report (not an inherited one), NIL when none.
fn struct_type_report_of<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(instance_type(ctx, a[0])?.report.get())
}

/// (sys:%memq item list): the tail of `list` starting at `item` (EQ), or
/// NIL; a dotted end stops the walk. CLOS's initialization tests initargs
/// with it (the library's MEMBER takes keywords and is far slower).
fn memq<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut l = a[1];
    while let Value::Cons(c) = l {
        if c.car.get().eq(a[0]) {
            return Ok(l);
        }
        l = c.cdr.get();
    }
    Ok(Value::Nil)
}

pub const BUILTINS: &[BuiltinDef] = &[
    sys("%CLASS-KEY", 1, 1, class_key),
    sys("%BUILT-IN-CLASS-NAMES", 0, 0, built_in_class_names),
    sys("%ALLOCATE-INSTANCE", 1, 1, allocate_instance),
    sys("%SLOT-REF", 3, 3, slot_ref),
    sys("%SLOT-SET", 4, 4, slot_set),
    sys("%INSTANCE-REF", 3, 3, instance_ref),
    sys("%INSTANCE-SET", 3, 4, instance_set),
    sys("%INSTANCE-LENGTH", 1, 1, instance_length),
    sys("%INSTANCE-RESIZE", 2, 2, instance_resize),
    sys("%STRUCT-TYPE-REPORT-OF", 1, 1, struct_type_report_of),
    sys("%MEMQ", 2, 2, memq),
    sys("%INSTANCE-CHANGE-TYPE", 2, 2, instance_change_type),
];
