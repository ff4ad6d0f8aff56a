//! The runtime: what both the VM and the builtins compute with. Errors as
//! values (`raise`), the world of packages and well-known symbols, the
//! builtins' context (`ctx`) and the host side of I/O (`host`), the numeric
//! tower, types, equality, conditions, and the printing and FORMAT engines.
//!
//! Invariant: nothing here imports the compiler, the VM, the builtins or the
//! interpreter driver (`tests/layers.rs`); they all build on this layer.

pub(crate) mod arrays;
pub(crate) mod builtin;
pub(crate) mod capabilities;
pub(crate) mod chars;
pub(crate) mod composite;
pub(crate) mod conditions;
pub(crate) mod convert;
pub(crate) mod ctx;
pub(crate) mod cycle;
pub(crate) mod equal;
pub(crate) mod format;
pub(crate) mod format_function;
pub(crate) mod handles;
pub(crate) mod host;
pub(crate) mod host_value;
pub(crate) mod labels;
pub(crate) mod numbers;
pub(crate) mod pathnames;
pub(crate) mod pretty_streams;
pub(crate) mod printing;
pub(crate) mod raise;
pub(crate) mod read_time;
pub(crate) mod syms;
pub(crate) mod tree_walk;
pub(crate) mod types;
pub(crate) mod world;
