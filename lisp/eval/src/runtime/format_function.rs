//! The FORMAT function as the VM runs it (`Special::Format`): the
//! destination (NIL, a string with a fill pointer, a stream or T), the column
//! it starts at, objects whose printing needs Lisp (their texts come from the
//! VM), and the pretty-printing directives laid out by a pretty stream.

use mprof_heap::{Value, alloc};

use crate::runtime::ctx::Ctx;
use crate::runtime::raise::Raise;

/// (format destination control &rest args), run by the VM (Special::Format):
/// objects printed by Lisp methods take their text from `lisp_printed`; when
/// some have none yet, nothing is written and None returned, and the VM
/// computes their texts with Lisp and runs this again.
pub(crate) fn format_run<'gc>(
    ctx: &mut Ctx<'_, 'gc>,
    a: &[Value<'gc>],
    lisp_printed: &mprof_heap::printer::LispPrinted<'gc>,
) -> Result<Option<Value<'gc>>, Raise<'gc>> {
    let control = ctx.string_arg(a[1])?;
    // FORMAT's destination T is *standard-output* (not *terminal-io*, as for PRINT).
    let dest = match a[0] {
        Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, ctx.world.packages.t) => ctx.world.syms.standard_output.value.get(),
        d => d,
    };
    let column = match dest {
        // NIL and strings with fill pointers start a fresh string.
        Value::Nil | Value::String(_) => 0,
        d => {
            let s = ctx.output_stream(d)?;
            ctx.stream_column(s)
        }
    };
    let text = {
        let world = ctx.world;
        let method_of = |v: Value<'gc>, e: bool| crate::runtime::printing::method(world, v, e);
        let flag = ctx.host.interrupt.clone();
        let pctx = mprof_heap::printer::PrintContext {
            settings: crate::runtime::printing::settings(world),
            method: Some(&method_of),
            lisp_printed: Some(lisp_printed),
            interrupt: Some(&flag),
            max_output: ctx.host.options.max_heap,
            ..ctx.print_context(false)
        };
        let pctx = mprof_heap::printer::PrintContext { pretty: crate::runtime::printing::pretty_hook(world), ..pctx };
        let escape = world.syms.print_escape.value.get().truthy();
        let text = crate::runtime::format::format_with_column(&pctx, &control, &a[2..], column, escape);
        // A print inside stopped at Ctrl-C (circular data): signal it now.
        if flag.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return Err(Raise::simple(crate::runtime::raise::ErrorKind::Interrupt, "interrupted"));
        }
        text
    }
    .map_err(|m| match m.strip_prefix(crate::runtime::format::HEAP_EXHAUSTED) {
        Some(why) => Raise::simple(
            crate::runtime::raise::ErrorKind::Storage,
            format!("Heap exhausted in FORMAT: {why} (--max-heap {} MB)", ctx.host.options.max_heap >> 20),
        ),
        None => Raise::error(format!("error in FORMAT: {m} in the control string {}", quoted_head(&control))),
    })?;
    if !lisp_printed.missing.borrow().is_empty() {
        return Ok(None);
    }
    ctx.host.format_consumed = text.consumed;
    // Pretty-printing directives: laid out by the destination's pretty
    // stream, or by one made for this call.
    let text = if text.ops.is_empty() {
        text.text
    } else {
        let stream = match dest {
            Value::Nil | Value::String(_) => None,
            d => Some(ctx.output_stream(d)?),
        };
        match stream {
            Some(s) if crate::runtime::pretty_streams::replay_into(ctx, s, &text)? => return Ok(Some(Value::Nil)),
            _ => crate::runtime::pretty_streams::lay_out(ctx, &text, column),
        }
    };
    Ok(Some(match dest {
        Value::Nil => alloc::string(ctx.mc, &text),
        Value::String(s) => {
            // A string with a fill pointer: append.
            let mut st = alloc::borrow_mut(ctx.mc, s);
            let fp = st.fill_pointer.unwrap_or(st.chars.len());
            st.chars.truncate(fp);
            st.chars.extend(text.chars());
            if st.fill_pointer.is_some() {
                st.fill_pointer = Some(st.chars.len());
            }
            Value::Nil
        }
        d => {
            ctx.write_to(d, &text)?;
            Value::Nil
        }
    }))
}

/// A control string quoted for an error message, cut after 200 characters.
fn quoted_head(control: &str) -> String {
    match control.char_indices().nth(200) {
        Some((cut, _)) => format!("{:?}... ({} characters)", &control[..cut], control.chars().count()),
        None => format!("{control:?}"),
    }
}
