//! What surrounds a macro call, kept with the call so that its expansion can be
//! searched for further macro calls on its own, and the calls a pass found.
//!
//! A compile pass notes each macro call it meets unexpanded (`Needs`), with a
//! `Scope`: the lexical names visible there (variables, symbol macros, local
//! functions and macros, blocks, tags) without the pass's numbering of them.
//! Once the VM has run the expanders, `Front::discover` walks each expansion in
//! its call's scope, exactly as a whole pass would reach it, and notes the calls
//! inside it; the VM expands those, and so on. A macro nested D deep in its own
//! expansions thus costs D walks of the new expansions rather than D passes over
//! the whole form, and one final pass compiles it all.
//!
//! Invariants: a scope names what the pass's environment named, innermost last,
//! so a discovered call is one the full pass would expand, with the same
//! expander; discovery compiles nothing (its IR is dropped) and its errors are
//! left for the full pass to report.

use gc_arena::Collect;
use mprof_heap::Value;

use super::{EnvEntry, Front, FunKind, VarKind};
use crate::compiler::ir::{BlockInfo, TagbodyInfo};

/// The lexical names visible at a macro call, outermost first.
#[derive(Collect, Debug, Default)]
#[collect(no_drop)]
pub struct Scope<'gc>(Vec<Entry<'gc>>);

#[derive(Collect, Debug)]
#[collect(no_drop)]
enum Entry<'gc> {
    Lexical(Value<'gc>),
    Special(Value<'gc>),
    SymbolMacro(Value<'gc>, Value<'gc>),
    LocalFunction(Value<'gc>),
    /// A MACROLET's name and its compiled expander.
    LocalMacro(Value<'gc>, Value<'gc>),
    Block(Value<'gc>),
    Tags(Vec<Value<'gc>>),
}

/// The macro calls a pass met unexpanded: `calls` holds (expander, call) pairs
/// flattened, `scopes` the scope of each call.
#[derive(Collect, Debug, Default)]
#[collect(no_drop)]
pub struct Needs<'gc> {
    pub calls: Vec<Value<'gc>>,
    pub scopes: Vec<Scope<'gc>>,
}

impl<'gc> Needs<'gc> {
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The (expander, call) pair `i`.
    pub fn pair(&self, i: usize) -> Option<(Value<'gc>, Value<'gc>)> {
        Some((*self.calls.get(2 * i)?, *self.calls.get(2 * i + 1)?))
    }
}

impl<'gc> Scope<'gc> {
    /// The scope as the environment object a macro function receives (its
    /// `&environment`), which MACROEXPAND-1 and MACRO-FUNCTION consult: a list of
    /// `(:macro name . expander)`, `(:function name)`, `(:symbol-macro name .
    /// expansion)` and `(:variable name)` entries, innermost first. NIL, the
    /// global environment, when nothing local shadows a name.
    pub fn to_environment(&self, mc: &gc_arena::Mutation<'gc>, packages: &mprof_heap::Packages<'gc>) -> Value<'gc> {
        let kw = |name: &str| packages.keyword(mc, name);
        let mut env = Value::Nil;
        for entry in &self.0 {
            let item = match entry {
                Entry::LocalMacro(name, expander) => mprof_heap::alloc::list_with_tail(mc, &[kw("MACRO"), *name], *expander),
                Entry::LocalFunction(name) => mprof_heap::alloc::list(mc, &[kw("FUNCTION"), *name]),
                Entry::SymbolMacro(name, exp) => mprof_heap::alloc::list_with_tail(mc, &[kw("SYMBOL-MACRO"), *name], *exp),
                Entry::Lexical(name) | Entry::Special(name) => mprof_heap::alloc::list(mc, &[kw("VARIABLE"), *name]),
                Entry::Block(_) | Entry::Tags(_) => continue,
            };
            env = mprof_heap::alloc::cons(mc, item, env);
        }
        env
    }
}

impl<'gc> Front<'_, 'gc> {
    /// The scope of the form being compiled.
    pub(super) fn scope(&self) -> Scope<'gc> {
        Scope(
            self.env
                .iter()
                .map(|e| match e {
                    EnvEntry::Var { name, kind: VarKind::Lexical(_) } => Entry::Lexical(*name),
                    EnvEntry::Var { name, kind: VarKind::Special } => Entry::Special(*name),
                    EnvEntry::Var { name, kind: VarKind::SymbolMacro(exp) } => Entry::SymbolMacro(*name, *exp),
                    EnvEntry::Fun { name, kind: FunKind::Local(_) } => Entry::LocalFunction(*name),
                    EnvEntry::Fun { name, kind: FunKind::Macro(expander) } => Entry::LocalMacro(*name, *expander),
                    EnvEntry::Block { name, .. } => Entry::Block(*name),
                    EnvEntry::Tags { tags, .. } => Entry::Tags(tags.clone()),
                })
                .collect(),
        )
    }

    /// Walks `form` as the body of a function whose environment is `scope`, noting
    /// the macro calls in it whose expansions are not yet known (in `needs`, as a
    /// pass does). Whatever it compiles, and any error, is dropped: only the full
    /// pass that follows compiles, and reports errors.
    pub fn discover(&mut self, form: Value<'gc>, scope: &Scope<'gc>) {
        self.env.clear();
        let id = self.new_fn(None);
        self.current_fn = id;
        self.up_depth = 0;
        self.depth = 0;
        self.pending = None;
        self.macro_pending = None;
        self.anchor = None;
        for entry in &scope.0 {
            let entry = match entry {
                Entry::Lexical(name) => EnvEntry::Var { name: *name, kind: VarKind::Lexical(self.new_var(*name)) },
                Entry::Special(name) => EnvEntry::Var { name: *name, kind: VarKind::Special },
                Entry::SymbolMacro(name, exp) => EnvEntry::Var { name: *name, kind: VarKind::SymbolMacro(*exp) },
                Entry::LocalFunction(name) => EnvEntry::Fun { name: *name, kind: FunKind::Local(self.new_var(*name)) },
                Entry::LocalMacro(name, expander) => EnvEntry::Fun { name: *name, kind: FunKind::Macro(*expander) },
                Entry::Block(name) => {
                    let tag_var = self.new_var(Value::Nil);
                    let id = self.unit.blocks.len();
                    self.unit.blocks.push(BlockInfo { nonlocal: false, tag_var });
                    EnvEntry::Block { name: *name, id, fn_id: self.current_fn, up_depth: 0 }
                }
                Entry::Tags(tags) => {
                    let tag_var = self.new_var(Value::Nil);
                    let id = self.unit.tagbodies.len();
                    let nonlocal_tags = vec![false; tags.len()];
                    self.unit.tagbodies.push(TagbodyInfo { nonlocal: false, tag_var, nonlocal_tags });
                    EnvEntry::Tags { tags: tags.clone(), id, fn_id: self.current_fn, up_depth: 0 }
                }
            };
            self.env.push(entry);
        }
        // The IR, or an error (perhaps one a stand-in for an unexpanded call caused),
        // is for the full pass to make and report.
        let _ = self.form(form);
        self.env.clear();
    }
}
