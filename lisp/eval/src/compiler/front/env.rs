//! The front end's lexical environment: the entries in scope, innermost last,
//! with an index from names to their entries, so that looking a variable or a
//! function up costs the same however many bindings enclose the form.
//!
//! A scan from the innermost entry outwards is what the language asks for, but
//! it made compiling forms nested N bindings deep O(N²): every free or special
//! variable and every global function call scanned all N entries (100,000
//! nested LETs took seconds). The index maps a variable's name (its heap
//! address) and a function's name (the symbol, or the symbol X of `(SETF X)`)
//! to the positions of the entries binding it, innermost last.
//!
//! Invariants: `vars[k]` and `funs[k]` list, in increasing order, exactly the
//! positions of the entries whose names have key `k`; `truncate` removes the
//! last position of each entry it drops, which is that entry's own.
//!
//! Tests: the compiler's behaviour tests (lisp-tests/, tests/deep_data.rs, whose
//! 100,000 nested LETs would time out with a scan).

use std::collections::HashMap;

use mprof_heap::Value;
use mprof_heap::alloc::{car, cdr};

use super::{EnvEntry, FunKind, VarKind};

#[derive(Default)]
pub(super) struct Env<'gc> {
    entries: Vec<EnvEntry<'gc>>,
    vars: HashMap<usize, Vec<usize>>,
    funs: HashMap<usize, Vec<usize>>,
}

/// The index key of a variable name: its address (NIL, which cannot be bound,
/// and other immediate values share key 0 and are compared one by one).
fn var_key(name: Value<'_>) -> usize {
    name.heap_address().unwrap_or(0)
}

/// The index key of a function name: the symbol's address, for `(SETF X)` that of X.
fn fun_key(name: Value<'_>) -> usize {
    match name {
        Value::Cons(_) => car(cdr(name)).heap_address().unwrap_or(0),
        _ => name.heap_address().unwrap_or(0),
    }
}

impl<'gc> Env<'gc> {
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, EnvEntry<'gc>> {
        self.entries.iter()
    }

    pub(super) fn push(&mut self, entry: EnvEntry<'gc>) {
        let at = self.entries.len();
        match &entry {
            EnvEntry::Var { name, .. } => self.vars.entry(var_key(*name)).or_default().push(at),
            EnvEntry::Fun { name, .. } => self.funs.entry(fun_key(*name)).or_default().push(at),
            EnvEntry::Block { .. } | EnvEntry::Tags { .. } => {}
        }
        self.entries.push(entry);
    }

    pub(super) fn truncate(&mut self, mark: usize) {
        while self.entries.len() > mark {
            let Some(entry) = self.entries.pop() else { break };
            let (index, key) = match &entry {
                EnvEntry::Var { name, .. } => (&mut self.vars, var_key(*name)),
                EnvEntry::Fun { name, .. } => (&mut self.funs, fun_key(*name)),
                EnvEntry::Block { .. } | EnvEntry::Tags { .. } => continue,
            };
            if let Some(positions) = index.get_mut(&key) {
                positions.pop();
                if positions.is_empty() {
                    index.remove(&key);
                }
            }
        }
    }

    pub(super) fn clear(&mut self) {
        self.truncate(0);
    }

    /// The innermost binding of variable `name`; special when none.
    pub(super) fn lookup_var(&self, name: Value<'gc>) -> VarKind<'gc> {
        let positions = self.vars.get(&var_key(name)).map_or(&[][..], |p| p.as_slice());
        for &i in positions.iter().rev() {
            if let Some(EnvEntry::Var { name: n, kind }) = self.entries.get(i)
                && n.eq(name)
            {
                return *kind;
            }
        }
        VarKind::Special
    }

    /// The innermost local function or macro named `name`.
    pub(super) fn lookup_fun(&self, name: Value<'gc>) -> Option<FunKind<'gc>> {
        let positions = self.funs.get(&fun_key(name)).map_or(&[][..], |p| p.as_slice());
        for &i in positions.iter().rev() {
            if let Some(EnvEntry::Fun { name: n, kind }) = self.entries.get(i)
                && crate::runtime::equal::equal(*n, name)
            {
                return Some(*kind);
            }
        }
        None
    }
}
