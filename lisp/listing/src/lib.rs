//! Lisp source listings for the profiler: pxp's annotated listing of a `--count` run.
//!
//! `pretty` re-lays out Lisp source text (Emacs style, by head symbol) keeping atoms,
//! prefixes and comments as written, so the printed text reads back to the same data;
//! `listing` prints a program that way with its execution counts at the left margin.
//!
//! This is the one place where the profiler's display meets Lisp syntax: it depends on
//! the reader and the engine's profile model, and nothing in the engine, the display
//! crate or libmprof depends on it. The `mprof` command line reaches it for
//! `mprof listing`, the interpreter for `(mprof:report :counts t)`.

pub mod listing;
pub mod pretty;

pub use listing::{ListingOptions, find_source, render_listing, render_listings};
