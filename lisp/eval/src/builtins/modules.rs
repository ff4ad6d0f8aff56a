//! Builtins: the modules embedded in the binary, which `require` loads
//! before it searches `SYS::*MODULE-DIRECTORIES*` (`prelude/modules.lisp`).
//! Each is a Lisp source file of `lisp/eval/src/modules/`, compiled in with
//! `include_str!`, under the module name `require` takes (upper case), with
//! the ASDF system names it provides: ASDF consults those
//! (`SYS::*BUILTIN-SYSTEMS*`, filled from [`MODULES`]) before its source
//! registry, so `(asdf:load-system "x")` of such a system loads the embedded
//! module rather than a copy found on disk.
//!
//! Invariant: module names are upper case and unique; a module is loaded
//! by `require` from its texts, in order, each with the file name
//! `mprof-lisp:modules/FILE` in its error locations. To add one: put the file in `modules/` and add a
//! line to [`MODULES`].

use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, sys};
use crate::runtime::ctx::{Ctx, string_designator};
use crate::runtime::raise::LResult;

type A<'a, 'gc> = &'a [Value<'gc>];

/// An embedded module: its name for `require`, the ASDF systems it
/// provides, and its source files (file name for messages, text), loaded in
/// order.
pub struct Module {
    pub name: &'static str,
    pub systems: &'static [&'static str],
    pub parts: &'static [(&'static str, &'static str)],
}

/// The embedded modules. UIOP comes before ASDF, which requires it.
pub const MODULES: &[Module] = &[
    Module {
        name: "UIOP",
        systems: &["uiop"],
        parts: &[
            ("modules/uiop.lisp", include_str!("../modules/uiop.lisp")),
            ("modules/uiop-files.lisp", include_str!("../modules/uiop-files.lisp")),
        ],
    },
    Module {
        name: "ASDF",
        systems: &["asdf", "asdf-package-system"],
        parts: &[("modules/asdf.lisp", include_str!("../modules/asdf.lisp"))],
    },
    // The portable library refuses implementations it does not list; this is
    // its package written over MPROF-GRAY, as the library does for each Lisp.
    Module {
        name: "TRIVIAL-GRAY-STREAMS",
        systems: &["trivial-gray-streams"],
        parts: &[("modules/trivial-gray-streams.lisp", include_str!("../modules/trivial-gray-streams.lisp"))],
    },
];

/// The module named `name`, compared without case (`require` takes string designators).
pub fn find(name: &str) -> Option<&'static Module> {
    MODULES.iter().find(|m| m.name.eq_ignore_ascii_case(name))
}

/// (sys::%embedded-module name) => ((source . file-name)...), the module's
/// source files in load order, or NIL when no module of that name is embedded.
fn embedded_module<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = string_designator(ctx, a[0])?;
    match find(&name) {
        Some(m) => {
            let parts: Vec<Value<'gc>> = m
                .parts
                .iter()
                .map(|(file, source)| {
                    let source = alloc::string(ctx.mc, source);
                    let file = alloc::string(ctx.mc, &format!("mprof-lisp:{file}"));
                    alloc::cons(ctx.mc, source, file)
                })
                .collect();
            Ok(alloc::list(ctx.mc, &parts))
        }
        None => Ok(Value::Nil),
    }
}

/// (sys::%embedded-modules) => ((module-name system-name...) ...), every
/// embedded module with the ASDF systems it provides.
fn embedded_modules<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    let entries: Vec<Value<'gc>> = MODULES
        .iter()
        .map(|m| {
            let mut items = vec![alloc::string(ctx.mc, m.name)];
            items.extend(m.systems.iter().map(|s| alloc::string(ctx.mc, s)));
            alloc::list(ctx.mc, &items)
        })
        .collect();
    Ok(alloc::list(ctx.mc, &entries))
}

pub const BUILTINS: &[BuiltinDef] = &[
    sys("%EMBEDDED-MODULE", 1, 1, embedded_module),
    sys("%EMBEDDED-MODULES", 0, 0, embedded_modules),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_are_upper_case_and_unique() {
        for (i, m) in MODULES.iter().enumerate() {
            assert_eq!(m.name, m.name.to_uppercase());
            assert!(MODULES[..i].iter().all(|n| n.name != m.name), "{} twice", m.name);
            assert!(find(&m.name.to_lowercase()).is_some());
        }
    }
}
