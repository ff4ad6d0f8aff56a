//! What a builtin returns instead of a value when it cannot go on: a Lisp
//! error to signal (turned into a condition object and passed to ERROR by the
//! VM), or a request the VM must hand to the driver (which alone can collect
//! garbage or do host I/O outside the arena), or a hand-over of the whole
//! call to a Lisp function (`Gray`).

use mprof_heap::Value;

/// The standard error types a builtin signals directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// `simple-error`
    Simple,
    /// `simple-program-error` (wrong argument counts, malformed forms)
    Program,
    /// `simple-control-error`
    Control,
    /// `simple-arithmetic-error` (overflow, domain errors)
    Arithmetic,
    /// `simple-stream-error` (end of file, closed streams)
    Stream,
    /// `simple-package-error`
    Package,
    /// `simple-reader-error`
    Reader,
    /// `stack-exhausted` (a storage-condition, as SBCL's control stack exhaustion)
    StackExhausted,
    /// `simple-storage-condition` (a storage-condition with a message: data nested
    /// past a walk's depth limit, the heap limit reached)
    Storage,
    /// `interactive-interrupt` (Ctrl-C)
    Interrupt,
    /// `mprof-ext:capability-denied`: the host did not grant what the program tried
    /// (files, environment, processes; `runtime/capabilities.rs`).
    Capability,
}

/// A request only the driver (outside `mutate`) can carry out.
#[derive(Clone, Debug, PartialEq)]
pub enum HostRequest {
    /// Run a full collection, then resume with NIL.
    FullGc,
    /// Print `room` (live objects and bytes per category) after a full collection;
    /// resume with NIL.
    Room,
    /// A profiler operation (mprof:start, mprof:report...).
    Profile(ProfileRequest),
    /// Stop the program with this exit code.
    Exit(i32),
    /// End the run: calls nested past the frame limit and the margin given to
    /// the handlers of the first stack-exhausted error.
    FramesExhausted(usize),
}

/// Which profiles a start or a report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ProfileKinds {
    /// Allocations (the mprof tables).
    pub memory: bool,
    /// Time per calling context (flat profile and call graph).
    pub time: bool,
    /// Execution counts (call counts and annotated listings).
    pub counts: bool,
    /// Reads and writes per stream.
    pub io: bool,
}

/// What the MPROF package asks of the driver.
#[derive(Clone, Debug, PartialEq)]
pub enum ProfileRequest {
    /// Start recording the kinds asked for (resume with T).
    Start { primitives_to_caller: bool, kinds: ProfileKinds },
    /// Stop recording (resume with NIL).
    Stop,
    /// Forget what was recorded (resume with NIL).
    Reset,
    /// Collect, then resume with the report text of the kinds asked for.
    Report(mprof_display::report::ReportOptions, ProfileKinds),
    /// Collect, then write the profile file; resume with T, or with a string
    /// saying why it could not be written.
    Write(String),
}

/// Why a builtin did not return a value.
pub enum Raise<'gc> {
    /// Signal an error of a standard type with a preformatted message.
    Error { kind: ErrorKind, message: String, irritants: Vec<Value<'gc>> },
    /// Signal a `type-error`: `datum` is not of type `expected` (a type specifier).
    TypeError { datum: Value<'gc>, expected: Value<'gc> },
    /// Signal an `unbound-variable` error for this symbol.
    UnboundVariable(Value<'gc>),
    /// Signal an `undefined-function` error for this name.
    UndefinedFunction(Value<'gc>),
    /// Signal `division-by-zero` for this operation and operands.
    DivisionByZero { operation: Value<'gc>, operands: Vec<Value<'gc>> },
    /// Signal this condition object with ERROR.
    Condition(Value<'gc>),
    /// Stop and hand this to the driver.
    Request(HostRequest),
    /// The call needs Lisp code: a stream it reaches is a Gray stream (or a
    /// composite stream the builtin does not walk itself). Raised before the
    /// builtin has any effect; the VM then calls `SYS::%GRAY-<builtin name>`
    /// with the same arguments in its place (`vm/call.rs`).
    Gray,
    /// The call names a type the program defined with DEFTYPE where the
    /// builtin needs a standard one (an array's element type). Raised before
    /// the builtin has any effect; the VM then calls `SYS::%USER-TYPE-<builtin
    /// name>` with the same arguments, which expands the type and calls again.
    UserType,
}

impl<'gc> Raise<'gc> {
    pub fn simple(kind: ErrorKind, message: impl Into<String>) -> Self {
        Raise::Error { kind, message: message.into(), irritants: vec![] }
    }
    pub fn program(message: impl Into<String>) -> Self {
        Raise::simple(ErrorKind::Program, message)
    }
    pub fn error(message: impl Into<String>) -> Self {
        Raise::simple(ErrorKind::Simple, message)
    }
}

pub type LResult<'gc> = Result<Value<'gc>, Raise<'gc>>;
