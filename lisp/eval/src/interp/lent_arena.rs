//! The interpreter's arena together with the per-thread state it lends to its
//! thread while it runs: the profiler's state and the heap's hooks and live
//! bytes. Both must be thread-local while the arena runs (the heap's hooks are
//! plain functions, and frees happen inside the collector), yet belong to one
//! interpreter, so that two interpreters on one thread profile independently.
//!
//! Invariants:
//! - Every entry into the arena (mutation, collection, dropping it) goes
//!   through this type, with the interpreter's state lent for exactly that
//!   long and the thread's previous state restored after, so nesting (a host
//!   callback of one interpreter driving another) works.
//! - Outside those calls the state is here, not in the thread: code that reads
//!   or configures the profiler from the interpreter's side does it inside
//!   [`LentArena::lend`].

use gc_arena::{Arena, Collect, Mutation, Rootable, metrics::Metrics};
use mprof_heap::ThreadHeapState;

use crate::runtime::world::World;
use crate::vm::Vm;
use crate::profile::ProfState;

/// What the arena holds: the world, the VM, and the values the host keeps.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Root<'gc> {
    pub world: World<'gc>,
    pub vm: Vm<'gc>,
    pub held: crate::runtime::handles::HeldValues<'gc>,
}

type RootArena = Arena<Rootable![Root<'_>]>;

/// The state lent while the arena runs.
struct Lent {
    profiler: Option<ProfState>,
    heap: ThreadHeapState,
    /// Set while dropping: the state is in the thread, to be taken back when this drops.
    out: bool,
}

impl Lent {
    fn swap(&mut self) {
        // The heap first: it hands the frees it gathered to the outgoing
        // hooks, which count them in the outgoing profiler state.
        mprof_heap::swap_thread_state(&mut self.heap);
        crate::profile::swap_state(&mut self.profiler);
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        // Runs after the arena (declared before it) was dropped with the state lent.
        if self.out {
            self.swap();
        }
    }
}

/// Lends the state for as long as it lives.
struct Lending<'a>(&'a mut Lent);

impl<'a> Lending<'a> {
    fn new(lent: &'a mut Lent) -> Lending<'a> {
        lent.swap();
        Lending(lent)
    }
}

impl Drop for Lending<'_> {
    fn drop(&mut self) {
        self.0.swap();
    }
}

/// An arena whose every use runs with its interpreter's state lent to the thread.
pub(crate) struct LentArena {
    arena: RootArena,
    lent: Lent,
}

impl LentArena {
    /// Make the arena with fresh state lent while the root is built.
    pub fn new(f: impl for<'gc> FnOnce(&'gc Mutation<'gc>) -> Root<'gc>) -> Self {
        let mut lent = Lent { profiler: Some(ProfState::new()), heap: ThreadHeapState::default(), out: false };
        let arena = {
            let _lending = Lending::new(&mut lent);
            RootArena::new(f)
        };
        LentArena { arena, lent }
    }

    /// Run `f` with the state lent (for the profiler functions that read the thread's state).
    pub fn lend<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let _lending = Lending::new(&mut self.lent);
        f()
    }

    /// The arena's metrics (no state is needed to read them).
    pub fn metrics(&self) -> &Metrics {
        self.arena.metrics()
    }

    pub fn mutate<T>(&mut self, f: impl for<'gc> FnOnce(&'gc Mutation<'gc>, &'gc Root<'gc>) -> T) -> T {
        let _lending = Lending::new(&mut self.lent);
        self.arena.mutate(f)
    }

    pub fn mutate_root<T>(
        &mut self,
        f: impl for<'gc> FnOnce(&'gc Mutation<'gc>, &'gc mut Root<'gc>) -> T,
    ) -> T {
        let _lending = Lending::new(&mut self.lent);
        self.arena.mutate_root(f)
    }

    pub fn collect_debt(&mut self) {
        let _lending = Lending::new(&mut self.lent);
        self.arena.collect_debt()
    }

    pub fn finish_cycle(&mut self) {
        let _lending = Lending::new(&mut self.lent);
        self.arena.finish_cycle()
    }
}

impl Drop for LentArena {
    fn drop(&mut self) {
        // The arena is dropped after this, freeing every object: lend the state
        // until `lent` (dropped after the arena) takes it back.
        self.lent.swap();
        self.lent.out = true;
    }
}
