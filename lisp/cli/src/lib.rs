//! The `mprof-lisp` command line and REPL over the interpreter library.
//!
//! Everything a host embedding the interpreter does not want lives here: argument
//! parsing (clap), the line editor (rustyline), signal handling (Ctrl-C and SIGTERM
//! become Lisp interrupts), the profiling options of a file run, and the MPROF
//! package's exports (`exports`: HTML, pprof, folded, JSON, flame graphs, which the
//! library does not link). The binary's allocator is chosen in `main.rs`, not here,
//! so linking this library changes no allocator. Invariant: this crate talks to the interpreter only through
//! `mprof_lisp`'s public embedding API.

pub mod cli;
mod exports;
mod output;
mod profile_cli;
mod repl;

pub use cli::main;
