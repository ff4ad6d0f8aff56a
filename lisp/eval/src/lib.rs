//! mprof-lisp: an embeddable interpreter for a Kyoto-Common-Lisp-like subset
//! of Common Lisp, built for memory allocation profiling.
//!
//! Forms are compiled ([`compiler`]) to compact code run by a stackless VM
//! ([`vm`]) whose state lives in a gc-arena root; the [`Interpreter`] drives
//! it in fuel slices and collects garbage between them. Every heap object is
//! made by `mprof_heap::alloc_object`, the funnel the profiler listens to.
//!
//! ```
//! use mprof_lisp::{Interpreter, HostValue, Options};
//! let mut lisp = Interpreter::with_io(
//!     Box::new(std::io::sink()), Box::new(std::io::sink()),
//!     Box::new(std::io::empty()), Options::default()).unwrap();
//! lisp.eval("(defun square (x) (* x x))").unwrap();
//! assert_eq!(lisp.call("square", &[HostValue::Integer(7)]).unwrap(), HostValue::Integer(49));
//! // A Rust function callable from Lisp:
//! lisp.register_native("host-greeting", |args| match args {
//!     [HostValue::String(name)] => Ok(HostValue::String(format!("hello, {name}"))),
//!     _ => Err("expected one string".to_string()),
//! }).unwrap();
//! assert_eq!(lisp.eval(r#"(host-greeting "lisp")"#).unwrap(), HostValue::String("hello, lisp".into()));
//! ```

pub mod builtins;
pub mod cli;
pub mod repl;
pub mod compiler;
pub mod conditions;
pub mod counting;
pub mod ctx;
pub mod equal;
pub mod format;
pub mod fuzzing;
pub mod host;
pub mod interp;
pub mod profile;
pub mod profile_cli;
pub mod raise;
pub mod syms;
pub mod tree_walk;
pub mod types;
pub mod vm;
pub mod world;

pub use host::Options;
pub use interp::{HostValue, Interpreter, LispError};
