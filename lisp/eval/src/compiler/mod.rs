//! The compiler: forms to compiled code, in two passes. `front` expands
//! macros and resolves names into [`ir::Ir`]; `codegen` turns that into
//! [`mprof_heap::code::Proto`]s.
//!
//! The compiler never runs Lisp code. When it needs macro expansions it has
//! not got, it returns [`CompileError::NeedExpansions`]; the VM runs the
//! expanders, has [`discover`] find the calls inside their expansions (and
//! expands those, until none is left), and compiles again. `expansions` is the
//! VM's table of the expansions made.

pub mod codegen;
pub mod front;
pub mod ir;

use gc_arena::Mutation;
use mprof_heap::Value;
use mprof_heap::code::Proto;
use mprof_heap::value::Ptr;

pub mod expansions;

pub use front::{CompileError, Expansions, Needs, Synthesized};

/// Stack the compiler keeps free before each recursive step: more than one
/// step of the front end or code generator uses (a debug build's frames are large).
const RED_ZONE: usize = 256 * 1024;
/// The size of each stack segment stacker adds when less than RED_ZONE is left.
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// Run one recursive step of the compiler with at least [`RED_ZONE`] bytes of
/// stack, on a new heap-allocated segment if the thread's is running out: the
/// compiler's recursion over nested forms is bounded by `MAX_FORM_DEPTH`, not
/// by the stack of whichever thread embeds the interpreter.
pub(crate) fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, f)
}

use crate::runtime::world::World;

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
    counting: Option<crate::profile::counting::CountCtx<'_>>,
) -> Result<Ptr<'gc, Proto<'gc>>, CompileError<'gc>> {
    let Origin { file, line } = origin;
    let mut front = front::Front::new(mc, &world.packages, &world.syms, expansions, synthesized);
    front.line = line;
    front.counting = counting;
    let lam = front.toplevel(form);
    // A pass that met unexpanded macro calls compiled stand-ins for them: its
    // result, or an error a stand-in may have caused, is discarded. (A MACROLET
    // expander to make comes first; the calls are found again next pass.)
    if !front.needs.is_empty() && !matches!(lam, Err(CompileError::NeedMacroFunction { .. })) {
        return Err(CompileError::NeedExpansions(std::mem::take(&mut front.needs)));
    }
    let lam = lam?;
    let unit = front.unit;
    let mut cg = codegen::Codegen::new(mc, &world.syms, &unit, file.map(String::from));
    cg.toplevel = true;
    Ok(cg.function(&lam))
}

/// The macro calls inside the expansions of `expanded` (a round of calls whose
/// expansions `expansions` now holds) that have no expansion yet, each in its
/// scope: the next round for the VM to expand. Each expansion is walked in its
/// call's scope, so the calls found are the ones a whole pass would meet.
pub fn discover<'gc>(
    mc: &Mutation<'gc>,
    world: &World<'gc>,
    expansions: &Expansions<'gc>,
    synthesized: &mut Synthesized<'gc>,
    expanded: &Needs<'gc>,
) -> Needs<'gc> {
    let mut front = front::Front::new(mc, &world.packages, &world.syms, expansions, synthesized);
    for (i, scope) in expanded.scopes.iter().enumerate() {
        let expansion = expanded
            .pair(i)
            .and_then(|(expander, call)| expansions::key(call, expander))
            .and_then(|k| expansions.get(&k).copied());
        if let Some(expansion) = expansion {
            front.discover(expansion, scope);
        }
    }
    front.needs
}
