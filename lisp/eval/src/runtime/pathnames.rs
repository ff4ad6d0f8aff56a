//! Pathname objects as the Rust side sees them.
//!
//! Representation: a pathname is a structure of the built-in structure type
//! `COMMON-LISP:PATHNAME`, which the prelude defines with DEFSTRUCT
//! (`prelude/pathnames.lisp`; `LOGICAL-PATHNAME` includes it). Its slots are,
//! in order, `HOST DEVICE DIRECTORY NAME TYPE VERSION %NATIVE`: the six
//! standard components and the native namestring the Lisp constructor
//! computes once (for a logical pathname, its translation when the host had
//! translations at the time, else NIL). Pathnames are immutable: the slots
//! are read-only and the prelude exports no setter.
//!
//! Why a structure and not a heap object of its own: TYPEP, TYPE-OF, CLASS-OF
//! and method dispatch (a `pathname` specializer), the printer's print-method
//! hook (`#P"..."` is the type's `:print-object`), the garbage collector, the
//! profiler's categories and `copy-structure` all come with structures, and
//! parsing and merging are list work that is simplest in Lisp. The Rust side
//! only has to recognize the type (by name along the precedence list, so
//! both types are found without a handle in the world) and read a slot:
//! [`native_namestring`] for builtins that take a file (through
//! `ctx::file_name_arg`), [`components`] for `equal`/`equalp` and their
//! hash codes, which compare pathnames by components (a version of NIL and
//! `:NEWEST` count as the same, as in SBCL).
//!
//! A string naming a file on a defined logical host ("HOST:DIR;NAME.TYPE")
//! cannot be translated here (translation is Lisp work), so
//! [`logical_host_of`] lets `file_name_arg` refuse it with a message saying
//! what to pass instead; the host names are the list in
//! `SYS::*LOGICAL-HOST-NAMES*`, kept by `(setf logical-pathname-translations)`.
//!
//! Invariant: nothing here allocates or runs Lisp; a structure that is not a
//! pathname, or a pathname whose slots are not what the prelude stores, is
//! answered with None, never a panic.

use mprof_heap::Value;
use mprof_heap::value::{Ptr, Structure};

use crate::runtime::world::World;

/// The number of component slots compared by `equal` (host to type); the
/// version follows them.
pub const COMPARED_COMPONENTS: usize = 5;

fn symbol_is(v: Value<'_>, package: &str, name: &str) -> bool {
    matches!(v, Value::Symbol(s) if &*s.name == name && s.package.get().is_some_and(|p| &*p.name() == package))
}

/// Whether a structure is a pathname (of type PATHNAME or a subtype).
pub fn is_pathname(s: Ptr<'_, Structure<'_>>) -> bool {
    let t = s.stype();
    let prec = t.precedence.borrow();
    prec.iter().any(|n| symbol_is(*n, "COMMON-LISP", "PATHNAME"))
}

/// The value of the slot named `name` (a symbol name), if the structure has one.
fn slot<'gc>(s: Ptr<'gc, Structure<'gc>>, name: &str) -> Option<Value<'gc>> {
    let t = s.stype();
    let names = t.slot_names.borrow();
    let i = names.iter().position(|n| matches!(n, Value::Symbol(sym) if &*sym.name == name))?;
    s.slots.borrow().get(i).copied()
}

/// The native namestring a pathname stands for, if `v` is a pathname that has one.
pub fn native_namestring(v: Value<'_>) -> Option<String> {
    let Value::Struct(s) = v else { return None };
    if !is_pathname(s) {
        return None;
    }
    match slot(s, "%NATIVE")? {
        Value::String(text) => Some(text.borrow().to_rust_string()),
        _ => None,
    }
}

/// A pathname's components compared by `equal` (host, device, directory,
/// name, type) and its version with NIL for `:NEWEST`; None when `v` is not
/// a pathname.
pub fn components<'gc>(v: Value<'gc>) -> Option<([Value<'gc>; COMPARED_COMPONENTS], Value<'gc>)> {
    let Value::Struct(s) = v else { return None };
    if !is_pathname(s) {
        return None;
    }
    let slots = s.slots.borrow();
    if slots.len() < COMPARED_COMPONENTS + 1 {
        return None;
    }
    let mut out = [Value::Nil; COMPARED_COMPONENTS];
    out.copy_from_slice(&slots[..COMPARED_COMPONENTS]);
    let version = slots[COMPARED_COMPONENTS];
    let version = if symbol_is(version, "KEYWORD", "NEWEST") { Value::Nil } else { version };
    Some((out, version))
}

/// The text a message shows for a pathname: `#P"namestring"` escaped, the
/// namestring itself otherwise (None when `v` is not a pathname with one).
pub fn message_text(v: Value<'_>, escape: bool) -> Option<String> {
    let native = native_namestring(v)?;
    Some(if escape { format!("#P{native:?}") } else { native })
}

/// The logical host a namestring starts with ("HOST:..."), when HOST is one
/// whose translations are defined (`SYS::*LOGICAL-HOST-NAMES*`).
pub fn logical_host_of(world: &World<'_>, name: &str) -> Option<String> {
    let colon = name.find(':')?;
    let host = &name[..colon];
    if host.is_empty() || !host.chars().all(|c| c.is_alphanumeric() || c == '-') {
        return None;
    }
    let p = &world.packages;
    let (Value::Symbol(sym), _) = p.find_symbol(p.system, "*LOGICAL-HOST-NAMES*")? else { return None };
    let mut list = sym.value.get();
    while let Value::Cons(c) = list {
        if let Value::String(s) = c.car.get()
            && s.borrow().to_rust_string().eq_ignore_ascii_case(host)
        {
            return Some(host.to_uppercase());
        }
        list = c.cdr.get();
    }
    None
}
