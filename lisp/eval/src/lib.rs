#![warn(missing_docs)]
//! mprof-lisp: an embeddable interpreter for a Kyoto-Common-Lisp-like subset
//! of Common Lisp, built for memory allocation profiling.
//!
//! Forms are compiled (module `compiler`) to compact code run by a stackless VM
//! (module `vm`) whose state lives in a gc-arena root; the [`Interpreter`] drives
//! it in fuel slices and collects garbage between them. Every heap object is
//! made by `mprof_heap::alloc_object`, the funnel the profiler listens to.
//!
//! The public surface is the embedding API: [`Interpreter`] (evaluate, load, call,
//! register host functions, profile and report), [`Options`] (limits and streams),
//! [`HostValue`] and [`LispError`]. Everything else is private to the crate, and the
//! crate pulls in no command-line, line-editing, signal or allocator crate: those are
//! the binary's (crate `mprof-lisp-cli`).
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

pub(crate) mod builtins;
pub(crate) mod compiler;
/// Entry points of the fuzz targets in `lisp/fuzz` (not part of the embedding API).
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod interp;
pub(crate) mod profile;
pub(crate) mod runtime;
pub(crate) mod vm;

pub use interp::Profiler;
pub use runtime::host::{IoStats, Options};
pub use interp::{DEBUGGER_ABORT, ErrorKind, Interpreter, LispError, Terminator, exec_tables};
pub use runtime::capabilities::{Capabilities, Capability, FileAccess};
pub use runtime::host_value::HostValue;
pub use runtime::handles::Handle;
pub use runtime::convert::{ConversionError, FromArgs, FromLisp, IntoLisp};
pub use interp::IntoArgs;
pub use runtime::raise::ProfileKinds;
