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
//! register host functions, profile and report), [`Options`] (limits, capabilities
//! and streams), [`HostValue`], [`Handle`], the conversion traits [`IntoLisp`] and
//! [`FromLisp`], and [`LispError`] with its [`ErrorKind`]. Everything else is private
//! to the crate, and the crate pulls in no command-line, line-editing, signal or
//! allocator crate: those are the binary's (crate `mprof-lisp-cli`).
//!
//! # Evaluating and calling
//!
//! ```
//! use mprof_lisp::{Interpreter, HostValue, Options};
//! let mut lisp = Interpreter::with_io(
//!     Box::new(std::io::sink()), Box::new(std::io::sink()),
//!     Box::new(std::io::empty()), Options::default()).unwrap();
//! lisp.eval("(defun square (x) (* x x))").unwrap();
//! assert_eq!(lisp.call("square", &[HostValue::Integer(7)]).unwrap(), HostValue::Integer(49));
//! // Every value of the last form, printed as PRIN1 prints them:
//! assert_eq!(lisp.eval_source("(floor 17 5)", None).unwrap(), vec!["3", "2"]);
//! ```
//!
//! # Conversions
//!
//! [`IntoLisp`] and [`FromLisp`] convert integers of every width, floats, `bool`,
//! `char`, strings, `Vec<T>`, tuples, `Option<T>` and `HashMap`s; a value of another
//! shape is an [`ErrorKind::Conversion`] error, never a silent NIL.
//!
//! ```
//! # use mprof_lisp::{Interpreter, Options, ErrorKind};
//! # let mut lisp = Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), Options::default()).unwrap();
//! lisp.eval("(defun pair-sum (p) (+ (first p) (second p)))").unwrap();
//! let sum: i64 = lisp.call_as("pair-sum", ((3u8, 4i32),)).unwrap();
//! assert_eq!(sum, 7);
//! let words: Vec<String> = lisp.eval_as(r#"(list "a" "b")"#).unwrap();
//! assert_eq!(words, ["a", "b"]);
//! assert_eq!(lisp.eval_as::<u8>("300").unwrap_err().kind, ErrorKind::Conversion);
//! ```
//!
//! # Natives
//!
//! A Rust function with typed arguments becomes a Lisp function; a call with the
//! wrong number or types of arguments, an `Err`, or a panic is a Lisp error the
//! program can handle.
//!
//! ```
//! # use mprof_lisp::{Interpreter, Options, HostValue};
//! # let mut lisp = Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), Options::default()).unwrap();
//! let mut calls = 0;
//! lisp.register_fn("host-greeting", move |(name,): (String,)| {
//!     calls += 1;
//!     Ok(format!("hello, {name} ({calls})"))
//! }).unwrap();
//! assert_eq!(lisp.eval(r#"(host-greeting "lisp")"#).unwrap(), HostValue::String("hello, lisp (1)".into()));
//! assert!(lisp.eval("(host-greeting 1 2)").is_err());
//! ```
//!
//! # Handles
//!
//! A [`Handle`] holds any Lisp object (a closure, a hash table, an instance) for the
//! host: valid across collections, released when the last clone is dropped.
//!
//! ```
//! # use mprof_lisp::{Interpreter, Options, HostValue};
//! # let mut lisp = Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), Options::default()).unwrap();
//! let counter = lisp.eval_handle("(let ((n 0)) (lambda () (incf n)))").unwrap();
//! lisp.full_collection();
//! lisp.call_value(&counter, &[]).unwrap();
//! assert_eq!(lisp.call_value(&counter, &[]).unwrap(), HostValue::Integer(2));
//! ```
//!
//! # Userdata
//!
//! Not yet: a Rust object cannot live in the Lisp heap. Keep it on the host side,
//! reach it from natives that capture it (as `calls` above), and give Lisp a key
//! (an integer or a symbol) to name it.
//!
//! # Sandboxing
//!
//! [`Options::sandboxed`] grants no file system, environment, process or socket
//! access ([`Capabilities`]); each attempt is a `MPROF-EXT:CAPABILITY-DENIED` error
//! naming the capability. The heap, fuel and frame limits are soft once (the
//! program gets a storage-condition and a reserve of an eighth of the limit to
//! recover in) and then hard: the run ends with [`ErrorKind::Heap`],
//! [`ErrorKind::Fuel`] or [`ErrorKind::Frames`] however the program handles
//! conditions. A [`Terminator`] ends a run from any thread, and
//! `Options::max_run_time` bounds its wall-clock time, with
//! [`ErrorKind::Terminated`], which no Lisp handler sees.
//!
//! ```
//! # use mprof_lisp::{Interpreter, Options, ErrorKind};
//! let options = Options { max_fuel: Some(1_000_000), ..Options::sandboxed() };
//! let mut lisp = Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), options).unwrap();
//! let e = lisp.eval(r#"(open "/etc/passwd")"#).unwrap_err();
//! assert!(e.message.contains(":file-read"));
//! let e = lisp.eval("(loop (handler-case (loop) (condition () nil)))").unwrap_err();
//! assert_eq!(e.kind, ErrorKind::Fuel { limit: 1_000_000 });
//! ```
//!
//! # Profiling
//!
//! The allocation profiler records every object the program makes, by Lisp type and
//! calling context; [`Interpreter::profiler`] starts, stops and reports it.
//!
//! ```
//! # use mprof_lisp::{Interpreter, Options, ReportOptions};
//! # let mut lisp = Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), Options::default()).unwrap();
//! lisp.eval("(defun make-pairs (n) (loop repeat n collect (cons 1 2)))").unwrap();
//! lisp.profiler().start(None, false);
//! lisp.eval("(length (make-pairs 1000))").unwrap();
//! lisp.profiler().stop();
//! let totals = lisp.profiler().memory_totals();
//! assert!(totals.overall.bytes > 0);
//! let report = lisp.profiler().report(&ReportOptions::default());
//! assert!(report.contains("MAKE-PAIRS"));
//! ```
//!
//! # Threads
//!
//! An [`Interpreter`] stays on the thread that made it (its values are not `Send`);
//! run one interpreter per thread. A [`Terminator`] and the interrupt flag are
//! `Send` and reach a running interpreter from another thread.
//!
//! ```
//! # use mprof_lisp::{Interpreter, Options, HostValue};
//! let workers: Vec<_> = (0..2).map(|i| std::thread::spawn(move || {
//!     let mut lisp = Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), Options::default()).unwrap();
//!     lisp.eval(&format!("(* {i} 10)")).unwrap()
//! })).collect();
//! let results: Vec<HostValue> = workers.into_iter().map(|w| w.join().unwrap()).collect();
//! assert_eq!(results, [HostValue::Integer(0), HostValue::Integer(10)]);
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
/// The profiler's types a host meets through [`Profiler`]: report options, the
/// recorded profile and its totals, the calling-context tree's options.
pub use mprof_display::report::ReportOptions;
pub use mprof_engine::Profile;
pub use mprof_engine::monitor::{MonitorOptions, Totals};
pub use runtime::raise::ProfileKinds;
