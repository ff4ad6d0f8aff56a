//! The builtin function table: every function written in Rust, with its
//! name, package and argument counts. Builtins never run Lisp code: those
//! that must call a Lisp function (`funcall`, `apply`, `eval`...) are
//! special kinds the VM carries out itself, and higher-order library
//! functions are written in Lisp in the prelude.
//!
//! Invariant: a builtin's id is its index in [`table`], the same for every
//! interpreter in the process.

use std::sync::OnceLock;

use crate::runtime::builtin::{BuiltinDef, Kind, MANY, Pkg, Special};
use crate::runtime::printing::PrintFn;

pub mod arrays;
pub mod bit_vectors;
pub mod chars;
pub mod clos;
pub mod complex;
pub mod composite_streams;
pub mod core;
pub mod devtools;
pub mod directory;
pub mod files;
pub mod hash;
pub mod integers;
pub mod lists;
pub mod modules;
pub mod numbers;
pub mod pretty;
pub mod profiling;
pub mod sequences;
pub mod streams;
pub mod strings;
pub mod symbols;
pub mod system;

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
        t.extend_from_slice(integers::BUILTINS);
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
        t.extend_from_slice(files::BUILTINS);
        t.extend_from_slice(composite_streams::BUILTINS);
        t.extend_from_slice(system::BUILTINS);
        t.extend_from_slice(profiling::BUILTINS);
        t.extend_from_slice(clos::BUILTINS);
        t.extend_from_slice(devtools::BUILTINS);
        t.extend_from_slice(pretty::BUILTINS);
        t.extend_from_slice(directory::BUILTINS);
        t.extend_from_slice(modules::BUILTINS);
        t
    })
}
