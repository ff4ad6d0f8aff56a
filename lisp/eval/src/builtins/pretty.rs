//! The pretty printer's stream operations: making a pretty stream over a
//! target, logical blocks, and the standard `pprint-newline`, `pprint-indent`
//! and `pprint-tab`. The layout is `mprof_heap::pretty`'s; the Lisp side
//! (`prelude/pprint.lisp`: `pprint-logical-block`, the dispatch tables, the
//! layouts of code) calls these.
//!
//! Invariants: a pretty stream's text reaches its target only through
//! `Ctx::pretty_flush` (so a target never sees text out of order); the
//! standard functions do nothing on a stream that is not a pretty stream or
//! when `*print-pretty*` is NIL, as the standard says.

use mprof_heap::pretty::{Engine, IndentKind, NewlineKind, TabKind};
use mprof_heap::value::StreamKind;
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, cl, sys};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};
use crate::runtime::pretty_streams::{config, is_pretty, with_engine};

type A<'a, 'gc> = &'a [Value<'gc>];

/// (sys:%make-pretty-stream target): a pretty stream writing to `target`,
/// laid out under the print variables' current values.
fn make_pretty_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let target = ctx.output_stream(a[0])?;
    let cfg = config(ctx, ctx.stream_column(target));
    let stream = alloc::stream(ctx.mc, "pretty stream", StreamKind::Pretty(Box::new(Engine::new(cfg))));
    if let Value::Stream(st) = stream {
        alloc::borrow_mut(ctx.mc, st).column = cfg.start_column;
    }
    Ok(stream)
}

/// (sys:%pretty-start-block stream prefix per-line-p suffix)
fn start_block<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let prefix = ctx.string_arg(a[1])?;
    let suffix = ctx.string_arg(a[3])?;
    let per_line = a[2].truthy();
    with_engine(ctx, a[0], |e| e.start_block(&prefix, per_line, &suffix))?;
    Ok(Value::Nil)
}

/// (sys:%pretty-end-block stream)
fn end_block<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    with_engine(ctx, a[0], |e| e.end_block())?;
    Ok(Value::Nil)
}

/// (sys:%pretty-finish stream): the print is over; everything goes out.
fn finish<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    with_engine(ctx, a[0], |e| {
        while e.open_blocks() > 0 {
            e.end_block();
        }
        e.finish()
    })?;
    ctx.pretty_flush(a[0], true)?;
    Ok(Value::Nil)
}

/// (sys:%pretty-stream-p object)
fn pretty_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(is_pretty(a[0])))
}

/// (sys:%pretty-abbreviated-p stream): `*print-lines*` ended the output.
fn abbreviated_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let cut = match a[0] {
        Value::Stream(s) => matches!(&s.borrow().kind, StreamKind::Pretty(e) if e.abbreviated()),
        _ => false,
    };
    Ok(ctx.bool(cut))
}

/// The stream of the standard functions' optional argument, when it is a
/// pretty stream and `*print-pretty*` is true.
fn pretty_designator<'gc>(ctx: &Ctx<'_, 'gc>, a: A<'_, 'gc>, i: usize) -> Result<Option<Value<'gc>>, Raise<'gc>> {
    let stream = ctx.output_stream(a.get(i).copied().unwrap_or(Value::Nil))?;
    Ok((is_pretty(stream) && ctx.world.syms.print_pretty.value.get().truthy()).then_some(stream))
}

fn keyword_name<'gc>(v: Value<'gc>) -> Option<String> {
    match v {
        Value::Symbol(s) if s.package.get().is_some_and(|p| &*p.name() == "KEYWORD") => Some(s.name.to_string()),
        _ => None,
    }
}

/// (pprint-newline kind &optional stream)
fn pprint_newline<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let kind = match keyword_name(a[0]).as_deref() {
        Some("LINEAR") => NewlineKind::Linear,
        Some("FILL") => NewlineKind::Fill,
        Some("MISER") => NewlineKind::Miser,
        Some("MANDATORY") => NewlineKind::Mandatory,
        _ => return Err(ctx.type_error(a[0], "(MEMBER :LINEAR :FILL :MISER :MANDATORY)")),
    };
    if let Some(stream) = pretty_designator(ctx, a, 1)? {
        with_engine(ctx, stream, |e| e.newline(kind))?;
    }
    Ok(Value::Nil)
}

/// A real number of columns, rounded as SBCL does.
fn columns<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<i64, Raise<'gc>> {
    match v {
        Value::Fixnum(n) => Ok(n),
        Value::Float(f) if f.val.is_finite() && f.val.abs() < 1e15 => Ok(f.val.round() as i64),
        Value::Ratio(r) => {
            use num_traits::ToPrimitive;
            let x = r.num.to_f64().unwrap_or(0.0) / r.den.to_f64().unwrap_or(1.0);
            Ok(x.round() as i64)
        }
        other => Err(ctx.type_error(other, "REAL")),
    }
}

/// (pprint-indent relative-to n &optional stream)
fn pprint_indent<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let kind = match keyword_name(a[0]).as_deref() {
        Some("BLOCK") => IndentKind::Block,
        Some("CURRENT") => IndentKind::Current,
        _ => return Err(ctx.type_error(a[0], "(MEMBER :BLOCK :CURRENT)")),
    };
    let n = columns(ctx, a[1])?;
    if let Some(stream) = pretty_designator(ctx, a, 2)? {
        with_engine(ctx, stream, |e| e.indent(kind, n))?;
    }
    Ok(Value::Nil)
}

/// (pprint-tab kind colnum colinc &optional stream)
fn pprint_tab<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let kind = match keyword_name(a[0]).as_deref() {
        Some("LINE") => TabKind::Line,
        Some("LINE-RELATIVE") => TabKind::LineRelative,
        Some("SECTION") => TabKind::Section,
        Some("SECTION-RELATIVE") => TabKind::SectionRelative,
        _ => return Err(ctx.type_error(a[0], "(MEMBER :LINE :SECTION :LINE-RELATIVE :SECTION-RELATIVE)")),
    };
    let count = |v: Value<'gc>| match v {
        Value::Fixnum(n) if n >= 0 => Ok(n),
        other => Err(ctx.type_error(other, "UNSIGNED-BYTE")),
    };
    let (colnum, colinc) = (count(a[1])?, count(a[2])?);
    if let Some(stream) = pretty_designator(ctx, a, 3)? {
        with_engine(ctx, stream, |e| e.tab(kind, colnum, colinc))?;
    }
    Ok(Value::Nil)
}

/// (sys:%circle-begin object): with `*print-circle*` and no print in
/// progress, a label table for `object`'s shared parts (an id to bind
/// `SYS::*CIRCLE-TABLE*` to, released by `%circle-end`); otherwise NIL.
fn circle_begin<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let world = ctx.world;
    if !world.syms.print_circle.value.get().truthy() || crate::runtime::printing::current_circle(world, ctx.host).is_some() {
        return Ok(Value::Nil);
    }
    let method_of = |v: Value<'gc>, e: bool| crate::runtime::printing::method(world, v, e);
    let pctx = mprof_heap::printer::PrintContext {
        settings: crate::runtime::printing::settings(world),
        method: Some(&method_of),
        ..ctx.print_context(true)
    };
    let circle = mprof_heap::printer::CircleState::scan(a[0], &pctx);
    Ok(Value::Fixnum(crate::runtime::printing::register_circle(ctx.host, &circle, true)))
}

/// (sys:%circle-end id)
fn circle_end<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if let Value::Fixnum(id) = a[0] {
        crate::runtime::printing::release_circle(ctx.host, id);
    }
    Ok(Value::Nil)
}

/// (sys:%circle-mark object): "#n#" when `object` was printed already in
/// this print, "#n=" (assigning the label) before its first printing, NIL
/// when it is not shared or no labels are in use.
fn circle_mark<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mark = crate::runtime::printing::current_circle(ctx.world, ctx.host).and_then(|c| c.borrow_mut().mark(a[0]));
    Ok(mark.map_or(Value::Nil, |m| alloc::string(ctx.mc, &m)))
}

/// (sys:%circle-shared-p object): whether `object` gets a label in this print.
fn circle_shared_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let shared = crate::runtime::printing::current_circle(ctx.world, ctx.host).is_some_and(|c| c.borrow().is_shared(a[0]));
    Ok(ctx.bool(shared))
}

/// (sys:%format-consumed): how many arguments the last FORMAT consumed.
fn format_consumed<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(Value::Fixnum(ctx.host.format_consumed.min(i64::MAX as usize) as i64))
}

pub const BUILTINS: &[BuiltinDef] = &[
    sys("%FORMAT-CONSUMED", 0, 0, format_consumed),
    sys("%CIRCLE-BEGIN", 1, 1, circle_begin),
    sys("%CIRCLE-END", 1, 1, circle_end),
    sys("%CIRCLE-MARK", 1, 1, circle_mark),
    sys("%CIRCLE-SHARED-P", 1, 1, circle_shared_p),
    sys("%MAKE-PRETTY-STREAM", 1, 1, make_pretty_stream),
    sys("%PRETTY-START-BLOCK", 4, 4, start_block),
    sys("%PRETTY-END-BLOCK", 1, 1, end_block),
    sys("%PRETTY-FINISH", 1, 1, finish),
    sys("%PRETTY-STREAM-P", 1, 1, pretty_stream_p),
    sys("%PRETTY-ABBREVIATED-P", 1, 1, abbreviated_p),
    cl("PPRINT-NEWLINE", 1, 2, pprint_newline),
    cl("PPRINT-INDENT", 2, 3, pprint_indent),
    cl("PPRINT-TAB", 3, 4, pprint_tab),
];
