//! The mprof-lisp object model on gc-arena 0.7.
//!
//! Everything a Lisp program can touch is a [`Value`]; every heap object is
//! made by `object::alloc_object` (conses by [`object::alloc_cons`]), which knows the object's
//! [`kind::Kind`] (and so its category: cons, float, structure/vector, other) and real size, and tells the profiler through the
//! [`AllocHooks`] installed on this thread. The printer lives here too.
//!
//! This crate knows nothing of the evaluator or the profiler: it depends only
//! on the reader (for converting syntax to values) and gc-arena.

pub mod alloc;
pub mod cl_symbols;
pub mod code;
pub mod datum;
pub mod footprint;
pub mod hash_table;
pub mod kind;
pub mod object;
pub mod packages;
pub mod packed;
pub mod pretty;
pub mod printer;
pub mod spec;
pub mod value;

pub use object::{
    AllocEvent, AllocHooks, SiteFrees, flush_frees, Obj, SiteTag, ThreadHeapState, live_bytes, note_external_bytes,
    set_alloc_hooks, swap_thread_state,
};
pub use kind::Category;
pub use packages::{FindStatus, PackageError, Packages};
pub use value::{Ptr, Value};
