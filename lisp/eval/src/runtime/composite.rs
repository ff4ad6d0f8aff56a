//! Composite streams on the output side, and how streams are told apart:
//! which class a stream object belongs to, whether a value is a Gray stream
//! (a CLOS instance of a class under STREAM, `prelude/gray-streams.lisp`),
//! and the streams output to a synonym, two-way, echo or broadcast stream
//! reaches. (Input through composite streams is `builtins/streams.rs`'s.)
//!
//! Invariants:
//! - Every walk is a loop over an explicit stack, never Rust recursion, and
//!   follows at most [`MAX_HOPS`] links: a synonym stream whose variable leads
//!   back to it ends in a `stream-error`, not a hang.
//! - [`check_output`] finds a Gray stream anywhere output would reach before
//!   anything is written, so a builtin either hands its whole call to Lisp
//!   (`Raise::Gray`) or does all of it itself.

use gc_arena::{Gc, RefLock};
use mprof_heap::Value;
use mprof_heap::value::{Ptr, Stream, StreamKind};

use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{ErrorKind, Raise};
use crate::runtime::world::World;

pub type StreamPtr<'gc> = Ptr<'gc, RefLock<Stream<'gc>>>;

/// The most links (synonym targets, components) one operation follows.
pub const MAX_HOPS: usize = 10_000;

/// Whether `v` is a Gray stream: an instance of a class whose precedence
/// list holds STREAM (every subclass of `fundamental-stream`).
pub fn is_gray<'gc>(world: &World<'gc>, v: Value<'gc>) -> bool {
    match v {
        Value::Struct(s) => {
            let stream = world.syms.stream;
            s.stype().precedence.borrow().iter().any(|n| matches!(n, Value::Symbol(p) if Gc::ptr_eq(*p, stream)))
        }
        _ => false,
    }
}

/// The standard class a stream object belongs to (its `type-of` and
/// `class-of`): files and the process's channels are FILE-STREAMs.
pub fn class_name(kind: &StreamKind<'_>) -> &'static str {
    match kind {
        StreamKind::Host { .. } | StreamKind::Bytes { .. } | StreamKind::StringInput { file: true, .. } => "FILE-STREAM",
        StreamKind::StringOutput { .. } | StreamKind::StringInput { .. } => "STRING-STREAM",
        StreamKind::Pretty(_) => "STREAM",
        StreamKind::Synonym { .. } => "SYNONYM-STREAM",
        StreamKind::TwoWay { .. } => "TWO-WAY-STREAM",
        StreamKind::Echo { .. } => "ECHO-STREAM",
        StreamKind::Broadcast { .. } => "BROADCAST-STREAM",
        StreamKind::Concatenated { .. } => "CONCATENATED-STREAM",
    }
}

pub fn too_deep<'gc>(st: &Stream<'gc>) -> Raise<'gc> {
    Raise::simple(
        ErrorKind::Stream,
        format!(
            "the stream {} leads through more than {MAX_HOPS} composite streams (a synonym stream whose variable leads back to it?)",
            st.name
        ),
    )
}

pub fn closed<'gc>(st: &Stream<'gc>) -> Raise<'gc> {
    Raise::simple(ErrorKind::Stream, format!("the stream {} is closed", st.name))
}

/// The current value of a synonym stream's symbol.
pub fn synonym_target<'gc>(symbol: Value<'gc>) -> Result<Value<'gc>, Raise<'gc>> {
    match symbol {
        Value::Symbol(s) => match s.value.get() {
            // Rebuilt from the pointer: see `Next`.
            Value::Stream(p) => Ok(Value::Stream(p)),
            Value::Unbound => Err(Raise::UnboundVariable(symbol)),
            v => Ok(v),
        },
        other => Err(Raise::simple(ErrorKind::Stream, format!("a synonym stream's symbol is {other:?}"))),
    }
}

/// Where a link of a composite stream leads. Stream objects travel as
/// pointers on the hot paths (the standard streams are synonym streams): a
/// `Value` copied through memory in pieces and read back whole costs a
/// store-forwarding stall, measured at a tenth of a WRITE-CHAR.
pub enum Next<'gc> {
    Stream(StreamPtr<'gc>),
    /// Anything else: a Gray stream, or not a stream at all.
    Other(Value<'gc>),
}

impl<'gc> Next<'gc> {
    pub fn of(v: Value<'gc>) -> Next<'gc> {
        match v {
            Value::Stream(p) => Next::Stream(p),
            other => Next::Other(other),
        }
    }

    /// The error (or hand-over to Lisp) for something that is not a stream object.
    pub fn not_stream(ctx: &Ctx<'_, 'gc>, other: Value<'gc>) -> Raise<'gc> {
        if is_gray(ctx.world, other) { Raise::Gray } else { ctx.type_error(other, "STREAM") }
    }
}

/// Where a synonym stream's symbol leads.
pub fn synonym_next<'gc>(symbol: Value<'gc>) -> Result<Next<'gc>, Raise<'gc>> {
    match symbol {
        Value::Symbol(s) => match s.value.get() {
            Value::Stream(p) => Ok(Next::Stream(p)),
            Value::Unbound => Err(Raise::UnboundVariable(symbol)),
            v => Ok(Next::Other(v)),
        },
        other => Err(Raise::simple(ErrorKind::Stream, format!("a synonym stream's symbol is {other:?}"))),
    }
}

/// One link of an output path.
enum Link<'gc> {
    /// A stream that does its own output.
    Leaf(StreamPtr<'gc>),
    /// A synonym, two-way or echo stream: output goes on to this.
    Next(Next<'gc>),
    /// A broadcast stream: output goes to each of these, in order.
    Fan(Vec<Value<'gc>>),
}

/// What output to the stream `s` reaches one link down.
fn output_link<'gc>(ctx: &Ctx<'_, 'gc>, s: StreamPtr<'gc>) -> Result<Link<'gc>, Raise<'gc>> {
    let st = s.borrow();
    match &st.kind {
        k if k.is_composite() && !st.open => Err(closed(&st)),
        StreamKind::Synonym { symbol } => Ok(Link::Next(synonym_next(*symbol)?)),
        StreamKind::TwoWay { output, .. } | StreamKind::Echo { output, .. } => Ok(Link::Next(Next::of(*output))),
        StreamKind::Broadcast { streams } => Ok(Link::Fan(streams.clone())),
        StreamKind::Concatenated { .. } => Err(ctx.type_error(Value::Stream(s), "(SATISFIES OUTPUT-STREAM-P)")),
        _ => Ok(Link::Leaf(s)),
    }
}

fn too_many<'gc>(v: Value<'gc>) -> Raise<'gc> {
    match v {
        Value::Stream(s) => too_deep(&s.borrow()),
        _ => Raise::error("too many composite streams"),
    }
}

/// The streams that do the output written to `v`, in order (`leaves`), or
/// `Raise::Gray` when a Gray stream is among them.
pub fn output_leaves<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>, leaves: &mut Vec<StreamPtr<'gc>>) -> Result<(), Raise<'gc>> {
    let mut stack = vec![v];
    let mut hops = 0;
    while let Some(x) = stack.pop() {
        hops += 1;
        if hops > MAX_HOPS {
            return Err(too_many(v));
        }
        let s = match Next::of(x) {
            Next::Stream(s) => s,
            Next::Other(o) => return Err(Next::not_stream(ctx, o)),
        };
        match output_link(ctx, s)? {
            Link::Leaf(leaf) => leaves.push(leaf),
            Link::Next(Next::Stream(n)) => stack.push(Value::Stream(n)),
            Link::Next(Next::Other(o)) => return Err(Next::not_stream(ctx, o)),
            Link::Fan(streams) => stack.extend(streams.into_iter().rev()),
        }
    }
    Ok(())
}

/// One step along a chain of output links, for the common case only.
pub enum Step<'gc> {
    /// `s` does its own output.
    Leaf,
    /// An open synonym, two-way or echo stream leading to this stream object.
    Next(StreamPtr<'gc>),
    /// Anything else (a broadcast stream, a closed stream, a Gray stream...):
    /// see `output_link`.
    Slow,
}

/// One step from `s`, reading only the tags and pointers it needs (see
/// `Next`), in one dispatch on the stream's kind.
#[inline]
pub fn step<'gc>(s: StreamPtr<'gc>) -> Step<'gc> {
    let st = s.borrow();
    match &st.kind {
        StreamKind::Synonym { symbol: Value::Symbol(sym) } if st.open => match sym.value.get() {
            Value::Stream(p) => Step::Next(p),
            _ => Step::Slow,
        },
        StreamKind::TwoWay { output: Value::Stream(p), .. } | StreamKind::Echo { output: Value::Stream(p), .. }
            if st.open =>
        {
            Step::Next(*p)
        }
        StreamKind::Synonym { .. }
        | StreamKind::TwoWay { .. }
        | StreamKind::Echo { .. }
        | StreamKind::Broadcast { .. }
        | StreamKind::Concatenated { .. } => Step::Slow,
        StreamKind::Host { .. }
        | StreamKind::StringOutput { .. }
        | StreamKind::StringInput { .. }
        | StreamKind::Pretty(_)
        | StreamKind::Bytes { .. } => Step::Leaf,
    }
}

/// Follow a chain of links without a broadcast stream (no allocation): the
/// one stream that does the output, or None when a broadcast stream is on the way.
#[inline]
pub fn single_output<'gc>(ctx: &Ctx<'_, 'gc>, s: StreamPtr<'gc>) -> Result<Option<StreamPtr<'gc>>, Raise<'gc>> {
    let mut cur = s;
    for _ in 0..MAX_HOPS {
        match step(cur) {
            Step::Leaf => return Ok(Some(cur)),
            Step::Next(n) => cur = n,
            Step::Slow => return single_output_slow(ctx, s, cur),
        }
    }
    Err(too_many(Value::Stream(s)))
}

/// `single_output` from `cur` on, for any link (kept out of the hot path).
#[cold]
#[inline(never)]
fn single_output_slow<'gc>(ctx: &Ctx<'_, 'gc>, s: StreamPtr<'gc>, mut cur: StreamPtr<'gc>) -> Result<Option<StreamPtr<'gc>>, Raise<'gc>> {
    for _ in 0..MAX_HOPS {
        match output_link(ctx, cur)? {
            Link::Leaf(leaf) => return Ok(Some(leaf)),
            Link::Next(Next::Stream(n)) => cur = n,
            Link::Next(Next::Other(o)) => return Err(Next::not_stream(ctx, o)),
            Link::Fan(_) => return Ok(None),
        }
    }
    Err(too_many(Value::Stream(s)))
}

/// Check that output to the composite stream `v` can be done here:
/// `Raise::Gray` when it reaches a Gray stream, an error for a closed or
/// input-only stream on the way.
pub fn check_output<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<(), Raise<'gc>> {
    let s = match Next::of(v) {
        Next::Stream(s) => s,
        Next::Other(o) => return Err(Next::not_stream(ctx, o)),
    };
    if single_output(ctx, s)?.is_some() {
        return Ok(());
    }
    output_leaves(ctx, v, &mut Vec::new())
}

/// Write `text` to every stream output to the composite stream `v` reaches
/// (a broadcast stream on the way: `Ctx::write_stream` follows plain chains).
pub fn write<'gc>(ctx: &mut Ctx<'_, 'gc>, v: Value<'gc>, text: &str) -> Result<(), Raise<'gc>> {
    let mut leaves = Vec::new();
    output_leaves(ctx, v, &mut leaves)?;
    for leaf in leaves {
        ctx.write_stream(Value::Stream(leaf), text)?;
    }
    Ok(())
}

/// The column output to `v` starts at: that of the stream it reaches; for a
/// broadcast stream its first component's (0 without any), as SBCL's.
pub fn output_column<'gc>(v: Value<'gc>) -> usize {
    let mut cur = v;
    for _ in 0..MAX_HOPS {
        let Value::Stream(s) = cur else { return 0 };
        let st = s.borrow();
        cur = match &st.kind {
            StreamKind::Synonym { symbol } => match synonym_target(*symbol) {
                Ok(t) => t,
                Err(_) => return 0,
            },
            StreamKind::TwoWay { output, .. } | StreamKind::Echo { output, .. } => *output,
            StreamKind::Broadcast { streams } => match streams.first() {
                Some(first) => *first,
                None => return 0,
            },
            StreamKind::Concatenated { .. } => return 0,
            _ => return crate::runtime::ctx::pretty_column(&st),
        };
    }
    0
}
