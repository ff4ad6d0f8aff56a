//! The composite streams' constructors and accessors (`make-synonym-stream`,
//! `make-two-way-stream`, `make-echo-stream`, `make-broadcast-stream`,
//! `make-concatenated-stream`, `synonym-stream-symbol`...), `streamp` and the
//! implementation's side of the stream predicates (`input-stream-p` and the
//! others are generic functions in `prelude/gray-streams.lisp`, whose method
//! on STREAM calls these), and the small operations the Lisp side of Gray and
//! composite streams builds on (`SYS::%STREAM-KIND`, an echo stream's given-back
//! characters, a stream's column).
//!
//! Invariants: a composite stream's components are streams (or Gray streams)
//! of the right direction when it is made; walks through composite streams
//! are loops bounded by `composite::MAX_HOPS`.

use mprof_heap::value::{StreamKind, UNKNOWN_COLUMN};
use mprof_heap::{Value, alloc};

use super::streams::stream_arg;
use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::composite;
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

/// Whether a stream is an input stream and whether an output stream
/// (synonym streams followed). A Gray stream answers by its class (the
/// generic functions' default methods); `Raise::Gray` when a synonym
/// stream's target is one, for the Lisp side to ask it.
fn direction<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>, follow_gray: bool) -> Result<(bool, bool), Raise<'gc>> {
    let mut cur = v;
    for _ in 0..composite::MAX_HOPS {
        let s = match cur {
            Value::Stream(s) => s,
            Value::Struct(s) if composite::is_gray(ctx.world, cur) => {
                if !follow_gray {
                    return Err(Raise::Gray);
                }
                let stype = s.stype();
                let prec = stype.precedence.borrow();
                let has = |name: &str| prec.iter().any(|n| matches!(n, Value::Symbol(p) if &*p.name == name));
                return Ok((has("FUNDAMENTAL-INPUT-STREAM"), has("FUNDAMENTAL-OUTPUT-STREAM")));
            }
            other => return Err(ctx.type_error(other, "STREAM")),
        };
        cur = match &s.borrow().kind {
            StreamKind::Synonym { symbol } => composite::synonym_target(*symbol)?,
            StreamKind::Host { input, output, .. } | StreamKind::Bytes { input, output, .. } => return Ok((*input, *output)),
            StreamKind::StringInput { .. } => return Ok((true, false)),
            StreamKind::StringOutput { .. } | StreamKind::Pretty(_) => return Ok((false, true)),
            StreamKind::TwoWay { .. } | StreamKind::Echo { .. } => return Ok((true, true)),
            StreamKind::Broadcast { .. } => return Ok((false, true)),
            StreamKind::Concatenated { .. } => return Ok((true, false)),
        };
    }
    Err(Raise::error("too many composite streams"))
}

/// `v` as a component stream of direction `input` (else output), or a type-error.
fn component<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>, input: bool) -> Result<Value<'gc>, Raise<'gc>> {
    let (i, o) = direction(ctx, v, true)?;
    if (input && i) || (!input && o) {
        Ok(v)
    } else {
        Err(ctx.type_error(v, if input { "(SATISFIES INPUT-STREAM-P)" } else { "(SATISFIES OUTPUT-STREAM-P)" }))
    }
}

/// (make-synonym-stream symbol)
fn make_synonym_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !matches!(a[0], Value::Symbol(_)) {
        return Err(ctx.type_error(a[0], "SYMBOL"));
    }
    let name = format!("SYNONYM-STREAM :SYMBOL {}", ctx.print(a[0], true));
    Ok(alloc::stream(ctx.mc, &name, StreamKind::Synonym { symbol: a[0] }))
}

/// (make-two-way-stream input-stream output-stream)
fn make_two_way_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let input = component(ctx, a[0], true)?;
    let output = component(ctx, a[1], false)?;
    Ok(alloc::stream(ctx.mc, "TWO-WAY-STREAM", StreamKind::TwoWay { input, output }))
}

/// (make-echo-stream input-stream output-stream)
fn make_echo_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let input = component(ctx, a[0], true)?;
    let output = component(ctx, a[1], false)?;
    Ok(alloc::stream(ctx.mc, "ECHO-STREAM", StreamKind::Echo { input, output, unread: Vec::new() }))
}

/// (make-broadcast-stream &rest streams)
fn make_broadcast_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let streams = a.iter().map(|v| component(ctx, *v, false)).collect::<Result<Vec<_>, _>>()?;
    Ok(alloc::stream(ctx.mc, "BROADCAST-STREAM", StreamKind::Broadcast { streams }))
}

/// (make-concatenated-stream &rest input-streams)
fn make_concatenated_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let streams = a.iter().map(|v| component(ctx, *v, true)).collect::<Result<Vec<_>, _>>()?;
    Ok(alloc::stream(ctx.mc, "CONCATENATED-STREAM", StreamKind::Concatenated { streams }))
}

/// The composite stream `v` is, for an accessor of streams of type `expected`.
fn kind_of<'gc, T>(
    ctx: &Ctx<'_, 'gc>,
    v: Value<'gc>,
    expected: &str,
    f: impl FnOnce(&StreamKind<'gc>) -> Option<T>,
) -> Result<T, Raise<'gc>> {
    match v {
        Value::Stream(s) => f(&s.borrow().kind).ok_or_else(|| ctx.type_error(v, expected)),
        other => Err(ctx.type_error(other, expected)),
    }
}

fn synonym_stream_symbol<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    kind_of(ctx, a[0], "SYNONYM-STREAM", |k| match k {
        StreamKind::Synonym { symbol } => Some(*symbol),
        _ => None,
    })
}

fn two_way_stream_input_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    kind_of(ctx, a[0], "TWO-WAY-STREAM", |k| match k {
        StreamKind::TwoWay { input, .. } => Some(*input),
        _ => None,
    })
}

fn two_way_stream_output_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    kind_of(ctx, a[0], "TWO-WAY-STREAM", |k| match k {
        StreamKind::TwoWay { output, .. } => Some(*output),
        _ => None,
    })
}

fn echo_stream_input_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    kind_of(ctx, a[0], "ECHO-STREAM", |k| match k {
        StreamKind::Echo { input, .. } => Some(*input),
        _ => None,
    })
}

fn echo_stream_output_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    kind_of(ctx, a[0], "ECHO-STREAM", |k| match k {
        StreamKind::Echo { output, .. } => Some(*output),
        _ => None,
    })
}

fn broadcast_stream_streams<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let streams = kind_of(ctx, a[0], "BROADCAST-STREAM", |k| match k {
        StreamKind::Broadcast { streams } => Some(streams.clone()),
        _ => None,
    })?;
    Ok(alloc::list(ctx.mc, &streams))
}

fn concatenated_stream_streams<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let streams = kind_of(ctx, a[0], "CONCATENATED-STREAM", |k| match k {
        StreamKind::Concatenated { streams } => Some(streams.clone()),
        _ => None,
    })?;
    Ok(alloc::list(ctx.mc, &streams))
}

// ---- predicates ----

fn streamp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Stream(_)) || composite::is_gray(ctx.world, a[0])))
}

/// (sys:%input-stream-p stream): INPUT-STREAM-P's method for the
/// implementation's streams (`Raise::Gray` through a synonym stream to a Gray one).
fn input_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (input, _) = direction(ctx, a[0], false)?;
    Ok(ctx.bool(input))
}

fn output_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (_, output) = direction(ctx, a[0], false)?;
    Ok(ctx.bool(output))
}

fn open_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let open = s.borrow().open;
    Ok(ctx.bool(open))
}

/// Nothing here is interactive: the REPL reads its own lines.
fn interactive_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    stream_arg(ctx, a[0])?;
    Ok(Value::Nil)
}

// ---- for the Lisp side ----

/// (sys:%stream-kind object): :GRAY, :SYNONYM, :TWO-WAY, :ECHO, :BROADCAST,
/// :CONCATENATED, :FILE, :STRING or :PRETTY; NIL for anything else.
fn stream_kind<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = match a[0] {
        Value::Stream(s) => match &s.borrow().kind {
            StreamKind::Synonym { .. } => "SYNONYM",
            StreamKind::TwoWay { .. } => "TWO-WAY",
            StreamKind::Echo { .. } => "ECHO",
            StreamKind::Broadcast { .. } => "BROADCAST",
            StreamKind::Concatenated { .. } => "CONCATENATED",
            StreamKind::Host { .. } | StreamKind::Bytes { .. } => "FILE",
            StreamKind::StringInput { .. } | StreamKind::StringOutput { .. } => "STRING",
            StreamKind::Pretty(_) => "PRETTY",
        },
        v if composite::is_gray(ctx.world, v) => "GRAY",
        _ => return Ok(Value::Nil),
    };
    Ok(ctx.kw(name))
}

/// (sys:%echo-pop-unread echo-stream): the last character given back to it, or NIL.
fn echo_pop_unread<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let c = match &mut alloc::borrow_mut(ctx.mc, s).kind {
        StreamKind::Echo { unread, .. } => unread.pop(),
        _ => None,
    };
    Ok(c.map_or(Value::Nil, Value::Char))
}

/// (sys:%echo-push-unread echo-stream character)
fn echo_push_unread<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let Value::Char(c) = a[1] else { return Err(ctx.type_error(a[1], "CHARACTER")) };
    if let StreamKind::Echo { unread, .. } = &mut alloc::borrow_mut(ctx.mc, s).kind {
        unread.push(c);
    }
    Ok(Value::Nil)
}

/// (sys:%concatenated-pop stream): drop the component read to its end.
fn concatenated_pop<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    if let StreamKind::Concatenated { streams } = &mut alloc::borrow_mut(ctx.mc, s).kind
        && !streams.is_empty()
    {
        streams.remove(0);
    }
    Ok(Value::Nil)
}

/// (sys:%set-stream-column stream column): where output to a string stream
/// starts (NIL: unknown, see `UNKNOWN_COLUMN`).
fn set_stream_column<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let column = match a[1] {
        Value::Nil => UNKNOWN_COLUMN,
        v => ctx.index_arg(v)?,
    };
    alloc::borrow_mut(ctx.mc, s).column = column;
    Ok(a[1])
}

/// (sys:%stream-column stream): the column output to the stream starts at (NIL: unknown).
fn stream_column<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    stream_arg(ctx, a[0])?;
    Ok(match ctx.stream_column(a[0]) {
        UNKNOWN_COLUMN => Value::Nil,
        n => Value::Fixnum(n as i64),
    })
}

/// (sys:%lisp-output-p stream-designator): whether output to it reaches a
/// Gray stream (so Lisp code must do it).
fn lisp_output_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match ctx.output_stream(a[0]) {
        Ok(_) => Ok(Value::Nil),
        Err(Raise::Gray) => Ok(ctx.t()),
        Err(e) => Err(e),
    }
}

pub const BUILTINS: &[BuiltinDef] = &[
    sys("%LISP-OUTPUT-P", 1, 1, lisp_output_p),
    cl("MAKE-SYNONYM-STREAM", 1, 1, make_synonym_stream),
    cl("MAKE-TWO-WAY-STREAM", 2, 2, make_two_way_stream),
    cl("MAKE-ECHO-STREAM", 2, 2, make_echo_stream),
    cl("MAKE-BROADCAST-STREAM", 0, MANY, make_broadcast_stream),
    cl("MAKE-CONCATENATED-STREAM", 0, MANY, make_concatenated_stream),
    cl("SYNONYM-STREAM-SYMBOL", 1, 1, synonym_stream_symbol),
    cl("TWO-WAY-STREAM-INPUT-STREAM", 1, 1, two_way_stream_input_stream),
    cl("TWO-WAY-STREAM-OUTPUT-STREAM", 1, 1, two_way_stream_output_stream),
    cl("ECHO-STREAM-INPUT-STREAM", 1, 1, echo_stream_input_stream),
    cl("ECHO-STREAM-OUTPUT-STREAM", 1, 1, echo_stream_output_stream),
    cl("BROADCAST-STREAM-STREAMS", 1, 1, broadcast_stream_streams),
    cl("CONCATENATED-STREAM-STREAMS", 1, 1, concatenated_stream_streams),
    cl("STREAMP", 1, 1, streamp),
    sys("%INPUT-STREAM-P", 1, 1, input_stream_p),
    sys("%OUTPUT-STREAM-P", 1, 1, output_stream_p),
    sys("%OPEN-STREAM-P", 1, 1, open_stream_p),
    sys("%INTERACTIVE-STREAM-P", 1, 1, interactive_stream_p),
    sys("%STREAM-KIND", 1, 1, stream_kind),
    sys("%ECHO-POP-UNREAD", 1, 1, echo_pop_unread),
    sys("%ECHO-PUSH-UNREAD", 2, 2, echo_push_unread),
    sys("%CONCATENATED-POP", 1, 1, concatenated_pop),
    sys("%SET-STREAM-COLUMN", 2, 2, set_stream_column),
    sys("%STREAM-COLUMN", 1, 1, stream_column),
];

#[cfg(test)]
mod tests {
    use crate::interp::Interpreter;
    use crate::runtime::host::Options;

    /// The printed values of the last form of `src`, or the error.
    fn eval(src: &str) -> String {
        let mut lisp = Interpreter::with_io(
            Box::new(std::io::sink()),
            Box::new(std::io::sink()),
            Box::new(std::io::empty()),
            Options::default(),
        )
        .expect("the interpreter starts");
        match lisp.eval_source(src, None) {
            Ok(values) => values.join(" "),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn trivial_gray_streams_maps_its_protocol_onto_the_gray_streams() {
        let module = include_str!("../modules/trivial-gray-streams.lisp");
        let program = r#"
            (defpackage "TGS-USER" (:use "COMMON-LISP" "TRIVIAL-GRAY-STREAMS"))
            (in-package "TGS-USER")
            (defclass sink (fundamental-character-output-stream fundamental-binary-output-stream)
              ((items :initform nil :accessor items) (pos :initform 0 :accessor pos)))
            (defmethod stream-write-char ((s sink) c) (push c (items s)) c)
            (defmethod stream-write-sequence ((s sink) seq start end &key)
              (push (list :seq (subseq seq start end)) (items s)) seq)
            (defmethod stream-file-position ((s sink)) (pos s))
            (defmethod (setf stream-file-position) (p (s sink)) (setf (pos s) p))
            (let ((s (make-instance 'sink)))
              (write-string "ab" s)
              (write-sequence #(1 2 3) s :start 1)
              (file-position s 7)
              (list (reverse (items s)) (file-position s) (typep s 'stream)
                    (length (cl-user::list-all-symbols))))
        "#;
        // The package's exports are the portable library's 32 symbols.
        let out = eval(&format!(
            "{module}\n(in-package \"CL-USER\")\n(defun list-all-symbols () (let (l) (do-external-symbols (s \"TRIVIAL-GRAY-STREAMS\") (push s l)) l))\n{program}"
        ));
        assert_eq!(out, r#"((#\a #\b (:SEQ #(2 3))) 7 T 32)"#);
    }

    #[test]
    fn a_gray_method_that_writes_to_its_own_stream_exhausts_the_stack_as_a_condition() {
        let out = eval(
            "(defclass loopy (fundamental-character-output-stream) ())
             (defmethod stream-write-char ((s loopy) c) (format s \"~a\" c))
             (handler-case (print 1 (make-instance 'loopy)) (storage-condition () :exhausted))",
        );
        assert_eq!(out, ":EXHAUSTED");
    }
}
