//! The protocol between the VM and the builtins: what a builtin is (a Rust
//! function over the builtins' context, or a special kind the VM carries out
//! itself because it calls Lisp or unwinds), its name, package and argument
//! counts. The builtins layer makes the table; the interpreter hands it to the
//! VM, which calls through it by id.
//!
//! Invariant: a builtin's id is its index in the table, the same for every
//! interpreter in the process; ids past the table's end are the host's natives.

use mprof_heap::Value;

use crate::runtime::ctx::Ctx;
use crate::runtime::printing::PrintFn;
use crate::runtime::raise::LResult;

pub type BuiltinFn = for<'a, 'gc> fn(&mut Ctx<'a, 'gc>, &[Value<'gc>]) -> LResult<'gc>;

/// Which package a builtin's name is interned and exported in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pkg {
    Cl,
    Sys,
    /// MPROF-EXT: extensions a program may call (COMMON-LISP-USER uses the package).
    Ext,
    Mprof,
}

/// Builtins the VM carries out itself because they call Lisp or unwind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Funcall,
    Apply,
    Values,
    /// (eval form)
    Eval,
    /// (sys:%load-source text file-name) evaluates every form of a source text.
    LoadSource,
    /// (sys:%unhandled-condition condition): no handler took it; abort to the driver.
    Unhandled,
    /// (sys:%backtrace): the running Lisp frames, innermost first, as (name . arguments).
    Backtrace,
    /// (compile name &optional definition)
    Compile,
    /// (sys:%macroexpand-1 form): expand once; two values.
    Macroexpand1,
    /// A printing function (printing.rs): may call print methods.
    Print(PrintFn),
    /// (format destination control &rest args): may call print methods.
    Format,
}

#[derive(Clone, Copy)]
pub enum Kind {
    Plain(BuiltinFn),
    Special(Special),
}

#[derive(Clone, Copy)]
pub struct BuiltinDef {
    pub name: &'static str,
    pub package: Pkg,
    pub min: u16,
    /// `u16::MAX` for any number.
    pub max: u16,
    pub kind: Kind,
}

pub const MANY: u16 = u16::MAX;

/// A plain builtin in COMMON-LISP: its name must be one of the standard's
/// (`mprof_heap::cl_symbols`; the `builtins_in_common_lisp_are_standard` test).
pub const fn cl(name: &'static str, min: u16, max: u16, f: BuiltinFn) -> BuiltinDef {
    BuiltinDef { name, package: Pkg::Cl, min, max, kind: Kind::Plain(f) }
}

/// A plain builtin in MPROF-SYSTEM (internal helpers of the prelude).
pub const fn sys(name: &'static str, min: u16, max: u16, f: BuiltinFn) -> BuiltinDef {
    BuiltinDef { name, package: Pkg::Sys, min, max, kind: Kind::Plain(f) }
}

/// A plain builtin in MPROF-EXT, the extensions programs may call.
pub const fn ext(name: &'static str, min: u16, max: u16, f: BuiltinFn) -> BuiltinDef {
    BuiltinDef { name, package: Pkg::Ext, min, max, kind: Kind::Plain(f) }
}

/// A plain builtin in MPROF.
pub const fn mprof(name: &'static str, min: u16, max: u16, f: BuiltinFn) -> BuiltinDef {
    BuiltinDef { name, package: Pkg::Mprof, min, max, kind: Kind::Plain(f) }
}
