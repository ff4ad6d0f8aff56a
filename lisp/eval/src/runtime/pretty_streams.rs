//! Pretty streams as the runtime drives them: the layout settings of a new
//! stream (from the print variables), running an operation on a stream's
//! engine and passing its decided text on, and FORMAT's recorded text and
//! operations replayed into a pretty stream or laid out on their own.
//!
//! Invariant: a pretty stream's text reaches its target only through
//! `Ctx::pretty_flush`, so a target never sees text out of order.

use mprof_heap::pretty::{Config, Engine};
use mprof_heap::value::StreamKind;
use mprof_heap::{Value, alloc};

use crate::runtime::ctx::Ctx;
use crate::runtime::format::{Formatted, PrettyOp};
use crate::runtime::raise::Raise;

/// The line length when `*print-right-margin*` is NIL (SBCL's default).
pub(crate) const DEFAULT_LINE_LENGTH: usize = 80;

pub(crate) fn is_pretty(v: Value<'_>) -> bool {
    matches!(v, Value::Stream(s) if matches!(s.borrow().kind, StreamKind::Pretty(_)))
}

pub(crate) fn limit<'gc>(v: Value<'gc>) -> Option<usize> {
    match v {
        Value::Fixnum(n) if n >= 0 => Some(n as usize),
        _ => None,
    }
}

/// The layout settings of a pretty stream made now, starting at `start_column`.
pub(crate) fn config(ctx: &Ctx<'_, '_>, start_column: usize) -> Config {
    let s = &ctx.world.syms;
    Config {
        line_length: limit(s.print_right_margin.value.get()).unwrap_or(DEFAULT_LINE_LENGTH),
        miser_width: limit(s.print_miser_width.value.get()),
        lines: limit(s.print_lines.value.get()),
        readably: s.print_readably.value.get().truthy(),
        // A column nobody knows (a Gray stream's) lays out as if at the line's start.
        start_column: if start_column == mprof_heap::value::UNKNOWN_COLUMN { 0 } else { start_column },
    }
}

/// Run `f` on a pretty stream's engine, then keep its column and pass on
/// decided text. A stream that is not a pretty stream is left alone.
pub(crate) fn with_engine<'gc>(ctx: &mut Ctx<'_, 'gc>, stream: Value<'gc>, f: impl FnOnce(&mut Engine)) -> Result<(), Raise<'gc>> {
    let Value::Stream(s) = stream else { return Ok(()) };
    {
        let mut st = alloc::borrow_mut(ctx.mc, s);
        let StreamKind::Pretty(engine) = &mut st.kind else { return Ok(()) };
        f(engine);
        st.column = crate::runtime::ctx::pretty_column(&st);
    }
    ctx.pretty_flush(stream, false)
}

/// Feed FORMAT's text and operations to an engine; without `*print-pretty*`
/// only the blocks' prefixes and suffixes act, and outside every block
/// (`outside`: false for an engine made for this FORMAT, whose destination
/// is not a pretty stream) newlines, indentations and tabs do nothing.
pub(crate) fn replay(engine: &mut Engine, f: &Formatted, pretty: bool, outside: bool) {
    let mut depth = 0usize;
    let mut at = 0;
    for (pos, op) in &f.ops {
        let mut pos = (*pos).clamp(at, f.text.len());
        while !f.text.is_char_boundary(pos) {
            pos -= 1;
        }
        engine.write_str(&f.text[at..pos]);
        at = pos;
        let acts = pretty && (outside || depth > 0);
        match op {
            PrettyOp::Start { prefix, per_line, suffix } => {
                depth += 1;
                engine.start_block(prefix, *per_line, suffix)
            }
            PrettyOp::End => {
                depth = depth.saturating_sub(1);
                engine.end_block()
            }
            PrettyOp::Newline(kind) if acts => engine.newline(*kind),
            PrettyOp::Indent(kind, n) if acts => engine.indent(*kind, *n),
            PrettyOp::Tab(kind, colnum, colinc) if acts => engine.tab(*kind, *colnum, *colinc),
            _ => {}
        }
    }
    engine.write_str(&f.text[at..]);
}

/// FORMAT's output to a pretty stream: its engine lays it out (false when
/// `stream` is not a pretty stream).
pub(crate) fn replay_into<'gc>(ctx: &mut Ctx<'_, 'gc>, stream: Value<'gc>, f: &Formatted) -> Result<bool, Raise<'gc>> {
    if !is_pretty(stream) {
        return Ok(false);
    }
    let pretty = ctx.world.syms.print_pretty.value.get().truthy();
    with_engine(ctx, stream, |e| replay(e, f, pretty, true))?;
    Ok(true)
}

/// FORMAT's output laid out on its own, from `column`: the text to write.
pub(crate) fn lay_out(ctx: &Ctx<'_, '_>, f: &Formatted, column: usize) -> String {
    let pretty = ctx.world.syms.print_pretty.value.get().truthy();
    let mut engine = Engine::new(config(ctx, column));
    replay(&mut engine, f, pretty, false);
    while engine.open_blocks() > 0 {
        engine.end_block();
    }
    engine.finish();
    engine.take_ready()
}
