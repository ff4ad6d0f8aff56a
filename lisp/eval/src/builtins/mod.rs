//! The builtin function table: every function written in Rust, with its
//! name, package and argument counts. Builtins never run Lisp code: those
//! that must call a Lisp function (`funcall`, `apply`, `eval`...) are
//! special kinds the VM carries out itself, and higher-order library
//! functions are written in Lisp in the prelude.
//!
//! Invariant: a builtin's id is its index in [`table`], the same for every
//! interpreter in the process.

use std::sync::OnceLock;

use mprof_heap::Value;

use crate::runtime::ctx::Ctx;
use crate::runtime::printing::PrintFn;
use crate::runtime::raise::LResult;

pub mod arrays;
pub mod bit_vectors;
pub mod chars;
pub mod clos;
pub mod complex;
pub mod core;
pub mod devtools;
pub mod directory;
pub mod hash;
pub mod lists;
pub mod numbers;
pub mod pretty;
pub mod profiling;
pub mod sequences;
pub mod streams;
pub mod strings;
pub mod symbols;
pub mod system;

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
    Print(crate::runtime::printing::PrintFn),
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

const SPECIALS: &[BuiltinDef] = &[
    BuiltinDef { name: "FUNCALL", package: Pkg::Cl, min: 1, max: MANY, kind: Kind::Special(Special::Funcall) },
    BuiltinDef { name: "APPLY", package: Pkg::Cl, min: 2, max: MANY, kind: Kind::Special(Special::Apply) },
    BuiltinDef { name: "VALUES", package: Pkg::Cl, min: 0, max: MANY, kind: Kind::Special(Special::Values) },
    BuiltinDef { name: "EVAL", package: Pkg::Cl, min: 1, max: 1, kind: Kind::Special(Special::Eval) },
    BuiltinDef { name: "%LOAD-SOURCE", package: Pkg::Sys, min: 2, max: 2, kind: Kind::Special(Special::LoadSource) },
    BuiltinDef {
        name: "%UNHANDLED-CONDITION",
        package: Pkg::Sys,
        min: 1,
        max: 1,
        kind: Kind::Special(Special::Unhandled),
    },
    BuiltinDef { name: "%BACKTRACE", package: Pkg::Sys, min: 0, max: 0, kind: Kind::Special(Special::Backtrace) },
    BuiltinDef { name: "COMPILE", package: Pkg::Cl, min: 1, max: 2, kind: Kind::Special(Special::Compile) },
    BuiltinDef { name: "%MACROEXPAND-1", package: Pkg::Sys, min: 1, max: 2, kind: Kind::Special(Special::Macroexpand1) },
    print_fn("PRIN1", Pkg::Cl, 1, 2, PrintFn::Prin1),
    print_fn("PRINC", Pkg::Cl, 1, 2, PrintFn::Princ),
    print_fn("PRINT", Pkg::Cl, 1, 2, PrintFn::Print),
    print_fn("WRITE", Pkg::Cl, 1, MANY, PrintFn::Write),
    print_fn("WRITE-TO-STRING", Pkg::Cl, 1, MANY, PrintFn::WriteToString),
    print_fn("PRIN1-TO-STRING", Pkg::Cl, 1, 1, PrintFn::Prin1ToString),
    print_fn("PRINC-TO-STRING", Pkg::Cl, 1, 1, PrintFn::PrincToString),
    BuiltinDef { name: "FORMAT", package: Pkg::Cl, min: 2, max: MANY, kind: Kind::Special(Special::Format) },
];

const fn print_fn(name: &'static str, package: Pkg, min: u16, max: u16, f: PrintFn) -> BuiltinDef {
    BuiltinDef { name, package, min, max, kind: Kind::Special(Special::Print(f)) }
}

/// Every builtin, in id order.
pub fn table() -> &'static [BuiltinDef] {
    static TABLE: OnceLock<Vec<BuiltinDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Vec::new();
        t.extend_from_slice(SPECIALS);
        t.extend_from_slice(core::BUILTINS);
        t.extend_from_slice(numbers::BUILTINS);
        t.extend_from_slice(complex::BUILTINS);
        t.extend_from_slice(lists::BUILTINS);
        t.extend_from_slice(sequences::BUILTINS);
        t.extend_from_slice(strings::BUILTINS);
        t.extend_from_slice(chars::BUILTINS);
        t.extend_from_slice(symbols::BUILTINS);
        t.extend_from_slice(hash::BUILTINS);
        t.extend_from_slice(arrays::BUILTINS);
        t.extend_from_slice(bit_vectors::BUILTINS);
        t.extend_from_slice(streams::BUILTINS);
        t.extend_from_slice(system::BUILTINS);
        t.extend_from_slice(profiling::BUILTINS);
        t.extend_from_slice(clos::BUILTINS);
        t.extend_from_slice(devtools::BUILTINS);
        t.extend_from_slice(pretty::BUILTINS);
        t.extend_from_slice(directory::BUILTINS);
        t
    })
}
