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
        StreamKind::Host { .. } | StreamKind::Bytes { .. } => "FILE-STREAM",
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
            Value::Unbound => Err(Raise::UnboundVariable(symbol)),
            v => Ok(v),
        },
        other => Err(Raise::simple(ErrorKind::Stream, format!("a synonym stream's symbol is {other:?}"))),
    }
}

/// What output to `v` reaches one link down: `Ok(None)` for a stream that
/// does its own output (a leaf), the next streams otherwise (a broadcast
/// stream's components, in order).
fn output_next<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>, next: &mut Vec<Value<'gc>>) -> Result<Option<StreamPtr<'gc>>, Raise<'gc>> {
    match v {
        Value::Stream(s) => {
            let st = s.borrow();
            match &st.kind {
                k if k.is_composite() && !st.open => Err(closed(&st)),
                StreamKind::Synonym { symbol } => {
                    next.push(synonym_target(*symbol)?);
                    Ok(None)
                }
                StreamKind::TwoWay { output, .. } | StreamKind::Echo { output, .. } => {
                    next.push(*output);
                    Ok(None)
                }
                StreamKind::Broadcast { streams } => {
                    next.extend(streams.iter().rev());
                    Ok(None)
                }
                StreamKind::Concatenated { .. } => Err(ctx.type_error(v, "(SATISFIES OUTPUT-STREAM-P)")),
                _ => Ok(Some(s)),
            }
        }
        other if is_gray(ctx.world, other) => Err(Raise::Gray),
        other => Err(ctx.type_error(other, "STREAM")),
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
            return Err(match v {
                Value::Stream(s) => too_deep(&s.borrow()),
                _ => Raise::error("too many composite streams"),
            });
        }
        if let Some(leaf) = output_next(ctx, x, &mut stack)? {
            leaves.push(leaf);
        }
    }
    Ok(())
}

/// Follow a chain of links without a broadcast stream: the one stream that
/// does the output, or None when a broadcast stream is on the way.
fn single_output<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Option<StreamPtr<'gc>>, Raise<'gc>> {
    let mut cur = v;
    let mut next = Vec::new();
    for _ in 0..MAX_HOPS {
        if let Value::Stream(s) = cur
            && matches!(s.borrow().kind, StreamKind::Broadcast { .. })
        {
            return Ok(None);
        }
        if let Some(leaf) = output_next(ctx, cur, &mut next)? {
            return Ok(Some(leaf));
        }
        match next.pop() {
            Some(n) => cur = n,
            None => return Ok(None),
        }
    }
    Err(match v {
        Value::Stream(s) => too_deep(&s.borrow()),
        _ => Raise::error("too many composite streams"),
    })
}

/// Check that output to the composite stream `v` can be done here:
/// `Raise::Gray` when it reaches a Gray stream, an error for a closed or
/// input-only stream on the way.
pub fn check_output<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<(), Raise<'gc>> {
    if single_output(ctx, v)?.is_some() {
        return Ok(());
    }
    output_leaves(ctx, v, &mut Vec::new())
}

/// Write `text` to every stream output to the composite stream `v` reaches.
pub fn write<'gc>(ctx: &mut Ctx<'_, 'gc>, v: Value<'gc>, text: &str) -> Result<(), Raise<'gc>> {
    if let Some(leaf) = single_output(ctx, v)? {
        return ctx.write_stream(Value::Stream(leaf), text);
    }
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
