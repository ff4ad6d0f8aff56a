//! Condition objects made by the VM for errors that builtins raise, and the
//! reports of the standard condition types (the text `princ` and `~a` show),
//! worded as SBCL words them.
//!
//! Conditions are structure instances whose type is marked as a condition;
//! their slots are looked up by name so that user subtypes may add slots.

use gc_arena::Mutation;
use mprof_heap::printer::{PrintContext, print_to_string};
use mprof_heap::value::{Ptr, StructType, Structure};
use mprof_heap::{Value, alloc};

use crate::runtime::raise::{ErrorKind, Raise};
use crate::runtime::world::World;

/// The value of the slot named `name` of a condition, if it has one.
pub fn slot<'gc>(s: Ptr<'gc, Structure<'gc>>, name: &str) -> Option<Value<'gc>> {
    let stype = s.stype();
    let names = stype.slot_names.borrow();
    let i = names.iter().position(|n| matches!(n, Value::Symbol(sym) if &*sym.name == name))?;
    s.slots.borrow().get(i).copied()
}

/// Whether a structure's type has `name` among its supertypes (or is it).
pub fn is_of_type<'gc>(s: Ptr<'gc, Structure<'gc>>, name: &str) -> bool {
    s.stype().precedence.borrow().iter().any(|n| matches!(n, Value::Symbol(sym) if &*sym.name == name))
}

/// Make an instance of a condition type, filling named slots.
pub fn make<'gc>(
    mc: &Mutation<'gc>,
    stype: Ptr<'gc, StructType<'gc>>,
    fields: &[(&str, Value<'gc>)],
) -> Value<'gc> {
    let names = stype.slot_names.borrow();
    let mut slots = vec![Value::Nil; names.len()];
    for (fname, v) in fields {
        if let Some(i) = names.iter().position(|n| matches!(n, Value::Symbol(sym) if &*sym.name == *fname)) {
            slots[i] = *v;
        }
    }
    alloc::structure(mc, stype, "condition", slots)
}

/// The condition object for an error a builtin raised.
pub fn from_raise<'gc>(mc: &Mutation<'gc>, world: &World<'gc>, raise: Raise<'gc>) -> Value<'gc> {
    let c = &world.conditions;
    // The message is the format control; "~" in it must not be taken as a directive.
    let control = |m: &str| alloc::string(mc, &m.replace('~', "~~"));
    match raise {
        Raise::Error { kind, message, irritants } => {
            let t = match kind {
                ErrorKind::Simple => c.simple_error,
                ErrorKind::Program => c.simple_program_error,
                ErrorKind::Control => c.simple_control_error,
                ErrorKind::Arithmetic => c.simple_arithmetic_error,
                ErrorKind::Stream => c.simple_stream_error,
                ErrorKind::Package => c.simple_package_error,
                ErrorKind::Reader => c.simple_reader_error,
                ErrorKind::StackExhausted => c.stack_exhausted,
                ErrorKind::Storage => c.simple_storage_condition,
                ErrorKind::Interrupt => c.interactive_interrupt,
                ErrorKind::Capability => c.capability_denied,
            };
            let args = alloc::list(mc, &irritants);
            make(mc, t, &[("FORMAT-CONTROL", control(&message)), ("FORMAT-ARGUMENTS", args)])
        }
        Raise::TypeError { datum, expected } => {
            make(mc, c.type_error, &[("DATUM", datum), ("EXPECTED-TYPE", expected)])
        }
        Raise::UnboundVariable(name) => make(mc, c.unbound_variable, &[("NAME", name)]),
        Raise::UndefinedFunction(name) => make(mc, c.undefined_function, &[("NAME", name)]),
        Raise::DivisionByZero { operation, operands } => {
            let ops = alloc::list(mc, &operands);
            make(mc, c.division_by_zero, &[("OPERATION", operation), ("OPERANDS", ops)])
        }
        Raise::Condition(v) => v,
        Raise::Request(_) => make(mc, c.simple_error, &[("FORMAT-CONTROL", control("internal request"))]),
        // A hand-over to Lisp that no VM call site took (see vm/call.rs).
        Raise::Gray => make(
            mc,
            c.simple_stream_error,
            &[
                ("FORMAT-CONTROL", control("this operation does not support Gray streams or the composite stream it was given")),
                ("FORMAT-ARGUMENTS", Value::Nil),
            ],
        ),
        Raise::UserType => make(
            mc,
            c.simple_error,
            &[
                ("FORMAT-CONTROL", control("this operation does not expand types defined with DEFTYPE")),
                ("FORMAT-ARGUMENTS", Value::Nil),
            ],
        ),
    }
}

/// The report of a condition whose type has no Lisp report function.
pub fn static_report<'gc>(v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> Option<String> {
    let Value::Struct(s) = v else { return None };
    if !s.stype().is_condition {
        // Pathnames print as #P"..." in messages too (their print method is Lisp).
        return crate::runtime::pathnames::message_text(v, ctx.escape);
    }
    let escaped = PrintContext { escape: true, ..*ctx };
    let p = |x: Value<'gc>| print_to_string(x, &escaped);
    match s.stype().report.get() {
        Value::String(text) => return Some(text.borrow().to_rust_string()),
        Value::Nil => {}
        _ => return None,
    }
    if let Some(Value::String(control)) = slot(s, "FORMAT-CONTROL") {
        let args: Vec<Value<'gc>> =
            alloc::list_iter(slot(s, "FORMAT-ARGUMENTS").unwrap_or(Value::Nil)).collect();
        let control = control.borrow().to_rust_string();
        return Some(crate::runtime::format::format_to_string(ctx, &control, &args).unwrap_or(control));
    }
    if is_of_type(s, "TYPE-ERROR") {
        let datum = slot(s, "DATUM").unwrap_or(Value::Nil);
        let expected = slot(s, "EXPECTED-TYPE").unwrap_or(Value::Nil);
        return Some(format!("The value\n  {}\nis not of type\n  {}", p(datum), p(expected)));
    }
    if is_of_type(s, "UNBOUND-VARIABLE") {
        return Some(format!("The variable {} is unbound.", p(slot(s, "NAME").unwrap_or(Value::Nil))));
    }
    if is_of_type(s, "UNDEFINED-FUNCTION") {
        return Some(format!("The function {} is undefined.", p(slot(s, "NAME").unwrap_or(Value::Nil))));
    }
    if is_of_type(s, "ARITHMETIC-ERROR") {
        let name = p(s.stype().name);
        let mut text = format!("arithmetic error {name} signalled");
        if let Some(op) = slot(s, "OPERATION")
            && op.truthy()
        {
            let operands = slot(s, "OPERANDS").unwrap_or(Value::Nil);
            let mut call = format!("({}", p(op));
            for x in alloc::list_iter(operands) {
                call.push(' ');
                call.push_str(&p(x));
            }
            call.push(')');
            text.push_str(&format!("\nOperation was {call}."));
        }
        return Some(text);
    }
    if is_of_type(s, "STACK-EXHAUSTED") {
        return Some("Control stack exhausted (the frame limit was reached).".to_string());
    }
    if is_of_type(s, "INTERACTIVE-INTERRUPT") {
        return Some("Interactive interrupt.".to_string());
    }
    Some(format!("Condition {} was signalled.", p(s.stype().name)))
}
