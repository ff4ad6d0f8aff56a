//! The compiler: forms to compiled code, in two passes. `front` expands
//! macros and resolves names into [`ir::Ir`]; `codegen` turns that into
//! [`mprof_heap::code::Proto`]s.
//!
//! The compiler never runs Lisp code. When it needs a macro expansion it has
//! not got, it returns [`CompileError::NeedExpansion`] and the VM runs the
//! expander and compiles again.

pub mod codegen;
pub mod front;
pub mod ir;

use gc_arena::Mutation;
use mprof_heap::Value;
use mprof_heap::code::Proto;
use mprof_heap::value::Ptr;

pub use front::{CompileError, Expansions, Synthesized};

use crate::world::World;

/// Where a top-level form comes from: its file (None for the REPL, `-e`, `eval`) and line.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'s> {
    pub file: Option<&'s str>,
    pub line: u32,
}

/// Compile a top-level form into a function of no arguments that evaluates it.
pub fn compile_toplevel<'gc>(
    mc: &Mutation<'gc>,
    world: &World<'gc>,
    expansions: &Expansions<'gc>,
    synthesized: &mut Synthesized<'gc>,
    form: Value<'gc>,
    origin: Origin<'_>,
    counting: Option<crate::counting::CountCtx<'_>>,
) -> Result<Ptr<'gc, Proto<'gc>>, CompileError<'gc>> {
    let Origin { file, line } = origin;
    let mut front = front::Front::new(mc, &world.packages, &world.syms, expansions, synthesized);
    front.line = line;
    front.counting = counting;
    let lam = front.toplevel(form)?;
    let unit = front.unit;
    let mut cg = codegen::Codegen::new(mc, &world.syms, &unit, file.map(String::from));
    cg.toplevel = true;
    Ok(cg.function(&lam))
}
