//! The printing functions (`prin1`, `princ`, `print`, `write`, `*-to-string`)
//! as VM operations over the heap's resumable printer, and what the printer
//! needs from the evaluator: the print control variables' current values,
//! which Lisp function prints an object, and a sink writing to a Lisp stream.
//!
//! A print starts as a [`PrintTask`]; the VM runs it, and when the printer
//! meets an object printed by Lisp code it keeps the task in a native frame,
//! binds the print variables to the task's settings and calls the method;
//! the method's return resumes the task. So a builtin never runs Lisp code,
//! and a print method may itself print (a new task) or exit non-locally (the
//! frame and its bindings are unwound like any other).
//!
//! The one hook for user-defined printing is the type's print method: the
//! `report` field of a structure or condition type, a function, found along
//! the type's precedence list. `defstruct` stores `:print-function` and
//! `:print-object` there, `define-condition` its `:report` (used when not
//! escaping); CLOS stores its `print-object` dispatcher there (see
//! `prelude/clos-standard.lisp`).

use gc_arena::Collect;
use mprof_heap::printer::{Case, Job, LimitedString, Outcome, PrintContext, Settings, SharedCircle, Sink, Stop};
use mprof_heap::value::{Ptr, StreamKind, Symbol};
use mprof_heap::{Value, alloc};

use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{ErrorKind, Raise};
use crate::runtime::world::World;

/// Which printing function is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintFn {
    Prin1,
    Princ,
    /// Newline, prin1, space.
    Print,
    /// `write` with its keywords.
    Write,
    WriteToString,
    Prin1ToString,
    PrincToString,
    /// FORMAT's `~a`/`~s` of an object printed by Lisp: to a string, with the
    /// escape given as the second argument.
    ForFormat,
}

/// A print in progress (kept in a native frame while a method runs).
#[derive(Collect)]
#[collect(no_drop)]
pub struct PrintTask<'gc> {
    pub job: Job<'gc>,
    pub object: Value<'gc>,
    /// The stream written to; NIL for a print to a string that has not needed
    /// a stream yet (its text is in `text`; a method gets a string stream).
    pub stream: Value<'gc>,
    #[collect(require_static)]
    pub text: String,
    #[collect(require_static)]
    pub kind: PrintFn,
    #[collect(require_static)]
    pub escape: bool,
    #[collect(require_static)]
    pub settings: Settings,
    /// Dynamic stack height below the bindings made for methods.
    #[collect(require_static)]
    pub dyn_mark: u32,
}

/// What the printer asked for: call `method` with these arguments.
pub struct MethodCall<'gc> {
    pub method: Value<'gc>,
    pub args: Vec<Value<'gc>>,
}

/// The print control variables' current values.
pub fn settings<'gc>(world: &World<'gc>) -> Settings {
    let s = &world.syms;
    let limit = |sym: Ptr<'gc, Symbol<'gc>>| match sym.value.get() {
        Value::Fixnum(n) if n >= 0 => Some(n as usize),
        _ => None,
    };
    Settings {
        readably: s.print_readably.value.get().truthy(),
        pretty: s.print_pretty.value.get().truthy(),
        circle: s.print_circle.value.get().truthy(),
        length: limit(s.print_length),
        level: limit(s.print_level),
        lines: limit(s.print_lines),
        right_margin: limit(s.print_right_margin),
        base: match s.print_base.value.get() {
            Value::Fixnum(b @ 2..=36) => b as u32,
            _ => 10,
        },
        radix: s.print_radix.value.get().truthy(),
        case: case_of(s.print_case.value.get()),
        read_case: world.read_case(),
        array: s.print_array.value.get().truthy(),
        gensym: s.print_gensym.value.get().truthy(),
    }
}

fn case_of(v: Value<'_>) -> Case {
    match v {
        Value::Symbol(s) if &*s.name == "DOWNCASE" => Case::Downcase,
        Value::Symbol(s) if &*s.name == "CAPITALIZE" => Case::Capitalize,
        _ => Case::Upcase,
    }
}

/// The Lisp function that prints `v`, if its type has one (see the module
/// doc), or a condition type's report string.
pub fn method<'gc>(world: &World<'gc>, v: Value<'gc>, escape: bool) -> Option<Value<'gc>> {
    let Value::Struct(s) = v else { return None };
    let own = s.stype().report.get();
    // Inherited, as CLOS would: the nearest supertype's method or report string.
    let found = if own.truthy() {
        Some(own)
    } else {
        s.stype().precedence.borrow().iter().skip(1).find_map(|name| world.find_type(*name).map(|t| t.report.get()).filter(|r| r.truthy()))
    };
    // An escaped condition prints as #<TYPE {address}>: its :REPORT is for
    // PRINC. Only a PRINT-OBJECT method (through CLOS's dispatcher) prints it.
    if s.stype().is_condition && escape {
        return found.filter(|f| is_print_object_dispatcher(*f));
    }
    found
}

/// Whether `f` is CLOS's PRINT-OBJECT dispatcher for conditions
/// (`prelude/clos-standard.lisp`), which handles escaped printing itself.
fn is_print_object_dispatcher(f: Value<'_>) -> bool {
    matches!(f, Value::Function(f) if matches!(f.name(), Value::Symbol(n) if &*n.name == "%PRINT-OBJECT-CONDITION-DISPATCHER"))
}

/// A sink writing to a Lisp stream; a stream error is kept to be signalled.
struct StreamSink<'c, 'a, 'gc> {
    ctx: &'c mut Ctx<'a, 'gc>,
    stream: Value<'gc>,
    error: Option<Raise<'gc>>,
}

impl Sink for StreamSink<'_, '_, '_> {
    fn write(&mut self, text: &str) -> Result<(), String> {
        // A print runs within one VM step, so the driver's heap check between slices
        // cannot stop a string stream growing without end (a circular list printed
        // with *print-circle* NIL): bound the stream's text by the heap limit here.
        let limit = self.ctx.host.options.max_heap;
        let held = match self.stream {
            Value::Stream(s) => match &s.borrow().kind {
                StreamKind::StringOutput { buffer } => buffer.len(),
                _ => 0,
            },
            _ => 0,
        };
        if held.saturating_add(text.len()) > limit {
            self.error = Some(heap_exhausted_by_print(limit));
            return Err("heap exhausted".to_string());
        }
        self.ctx.write_stream(self.stream, text).map_err(|r| {
            self.error = Some(r);
            "stream error".to_string()
        })
    }
}

fn heap_exhausted_by_print<'gc>(limit: usize) -> Raise<'gc> {
    Raise::simple(
        ErrorKind::Storage,
        format!(
            "Heap exhausted: the text printed would take the heap past its limit of {} MB (--max-heap); a circular list prints without end unless *print-circle* is true",
            limit >> 20
        ),
    )
}

const WRITE_KEYS: &[&str] = &[
    "STREAM", "ESCAPE", "READABLY", "PRETTY", "BASE", "RADIX", "CASE", "CIRCLE", "GENSYM", "LENGTH", "LEVEL", "LINES",
    "RIGHT-MARGIN", "ARRAY", "MISER-WIDTH", "PPRINT-DISPATCH",
];

/// Apply `write`'s keyword arguments (in [`WRITE_KEYS`] order) to the settings.
fn apply_write_keys<'gc>(keys: &[Option<Value<'gc>>], escape: &mut bool, s: &mut Settings) {
    let limit = |v: Value<'gc>| match v {
        Value::Fixnum(n) if n >= 0 => Some(n as usize),
        _ => None,
    };
    let get = |i: usize| keys.get(i).copied().flatten();
    if let Some(v) = get(1) {
        *escape = v.truthy();
    }
    if let Some(v) = get(2) {
        s.readably = v.truthy();
    }
    if let Some(v) = get(3) {
        s.pretty = v.truthy();
    }
    if let Some(v) = get(4) {
        s.base = match v {
            Value::Fixnum(b @ 2..=36) => b as u32,
            _ => 10,
        };
    }
    if let Some(v) = get(5) {
        s.radix = v.truthy();
    }
    if let Some(v) = get(6) {
        s.case = case_of(v);
    }
    if let Some(v) = get(7) {
        s.circle = v.truthy();
    }
    if let Some(v) = get(8) {
        s.gensym = v.truthy();
    }
    if let Some(v) = get(9) {
        s.length = limit(v);
    }
    if let Some(v) = get(10) {
        s.level = limit(v);
    }
    if let Some(v) = get(11) {
        s.lines = limit(v);
    }
    if let Some(v) = get(12) {
        s.right_margin = limit(v);
    }
    if let Some(v) = get(13) {
        s.array = v.truthy();
    }
}

/// Start a print: check the arguments, resolve the stream, fix the settings.
pub fn start<'gc>(ctx: &mut Ctx<'_, 'gc>, kind: PrintFn, a: &[Value<'gc>]) -> Result<PrintTask<'gc>, Raise<'gc>> {
    let object = a.first().copied().unwrap_or(Value::Nil);
    let mut settings = settings(ctx.world);
    let mut escape = ctx.world.syms.print_escape.value.get().truthy();
    let stream = match kind {
        PrintFn::Prin1 | PrintFn::Print => {
            escape = true;
            ctx.output_stream(a.get(1).copied().unwrap_or(Value::Nil))?
        }
        PrintFn::Princ => {
            escape = false;
            settings.readably = false;
            ctx.output_stream(a.get(1).copied().unwrap_or(Value::Nil))?
        }
        PrintFn::Write => {
            let keys = crate::runtime::ctx::keyword_args(ctx, &a[1..], WRITE_KEYS)?;
            apply_write_keys(&keys, &mut escape, &mut settings);
            ctx.output_stream(keys[0].unwrap_or(Value::Nil))?
        }
        PrintFn::WriteToString => {
            let keys = crate::runtime::ctx::keyword_args(ctx, &a[1..], &WRITE_KEYS[1..])?;
            let mut full = vec![None];
            full.extend(keys);
            apply_write_keys(&full, &mut escape, &mut settings);
            Value::Nil
        }
        PrintFn::Prin1ToString => {
            escape = true;
            Value::Nil
        }
        PrintFn::PrincToString => {
            escape = false;
            settings.readably = false;
            Value::Nil
        }
        PrintFn::ForFormat => {
            escape = a.get(1).is_some_and(|v| v.truthy());
            Value::Nil
        }
    };
    if kind == PrintFn::Print {
        ctx.write_stream(stream, "\n")?;
    }
    let job = {
        let world = ctx.world;
        let method_of = |v: Value<'gc>, e: bool| method(world, v, e);
        let pctx = context(world, escape, settings, &method_of);
        // Within a print (a method's or the pretty printer's), *print-level*
        // counts from the level reached, and *print-circle*'s labels are the
        // outer print's.
        let depth = match world.syms.print_current_level.value.get() {
            Value::Fixnum(n) if n > 0 => n as usize,
            _ => 0,
        };
        match current_circle(world, ctx.host).filter(|_| settings.circle) {
            Some(circle) => Job::within(object, depth, circle),
            None => Job::at_depth(object, &pctx, depth),
        }
    };
    Ok(PrintTask { job, object, stream, text: String::new(), kind, escape, settings, dyn_mark: 0 })
}

fn context<'a, 'gc>(
    world: &'a World<'gc>,
    escape: bool,
    settings: Settings,
    method_of: mprof_heap::printer::MethodFn<'a, 'gc>,
) -> PrintContext<'a, 'gc> {
    PrintContext {
        settings,
        condition_report: Some(crate::runtime::conditions::static_report),
        method: Some(method_of),
        pretty: pretty_hook(world),
        ..PrintContext::new(&world.packages, current_package(world), escape)
    }
}

/// The Lisp pretty printer (`SYS::%PPRINT-OBJECT`, `prelude/pprint.lisp`),
/// once the prelude has defined it; `all` when the current dispatch table
/// has entries for types other than conses and arrays (its slot OTHERS-P).
pub fn pretty_hook<'gc>(world: &World<'gc>) -> Option<mprof_heap::printer::PrettyHook<'gc>> {
    let function = world.syms.pprint_object.function.get();
    if !matches!(function, Value::Function(_)) {
        return None;
    }
    let all = match world.syms.print_pprint_dispatch.value.get() {
        Value::Struct(t) => {
            let stype = t.stype();
            let names = stype.slot_names.borrow();
            let slots = t.slots.borrow();
            names.iter().position(|n| matches!(n, Value::Symbol(s) if &*s.name == "OTHERS-P")).is_some_and(|i| slots.get(i).is_some_and(|v| v.truthy()))
        }
        _ => false,
    };
    Some(mprof_heap::printer::PrettyHook { function, all })
}

fn current_package<'gc>(world: &World<'gc>) -> Ptr<'gc, mprof_heap::value::Package<'gc>> {
    match world.syms.package.value.get() {
        Value::Package(p) => p,
        _ => world.packages.user,
    }
}

/// Run a task until it ends (its result) or needs a method called.
pub fn step<'gc>(ctx: &mut Ctx<'_, 'gc>, task: &mut PrintTask<'gc>) -> Result<Result<Value<'gc>, MethodCall<'gc>>, Raise<'gc>> {
    let world = ctx.world;
    let method_of = |v: Value<'gc>, e: bool| method(world, v, e);
    let (outcome, error) = if task.stream.is_nil() {
        let pctx = PrintContext { interrupt: Some(&ctx.host.interrupt), ..context(world, task.escape, task.settings, &method_of) };
        let limit = ctx.host.options.max_heap;
        let mut text = LimitedString::new(&mut task.text, limit);
        let outcome = task.job.run(&pctx, &mut text, true);
        (outcome, text.exceeded.then(|| heap_exhausted_by_print(limit)))
    } else {
        // The sink holds the host: the context gets its own handle on the flag.
        let flag = ctx.host.interrupt.clone();
        let pctx = PrintContext { interrupt: Some(&flag), ..context(world, task.escape, task.settings, &method_of) };
        let mut sink = StreamSink { ctx, stream: task.stream, error: None };
        let outcome = task.job.run(&pctx, &mut sink, true);
        (outcome, sink.error.take())
    };
    match outcome {
        Ok(Outcome::Done) => {}
        Ok(Outcome::NeedsLisp { object, method, depth }) => {
            if task.stream.is_nil() {
                // The method writes to a stream: from now on, a string stream.
                let text = std::mem::take(&mut task.text);
                task.stream = alloc::stream(ctx.mc, "string-output", StreamKind::StringOutput { buffer: text });
            }
            let mut args = vec![object, task.stream];
            let condition = matches!(object, Value::Struct(s) if s.stype().is_condition);
            if !condition {
                args.push(Value::Fixnum(depth as i64));
            }
            return Ok(Err(MethodCall { method, args }));
        }
        // Signalled here, at the print, rather than after the slice: the run may
        // end first, and the interrupt would then go unreported.
        Err(Stop::Interrupted) => {
            ctx.host.interrupt.store(false, std::sync::atomic::Ordering::SeqCst);
            return Err(Raise::simple(ErrorKind::Interrupt, "interrupted"));
        }
        Err(Stop::Failed(m)) => return Err(error.unwrap_or_else(|| Raise::simple(ErrorKind::Stream, m))),
        Err(Stop::NotReadable(v)) => return Err(not_readable(ctx, v)),
    }
    if task.kind == PrintFn::Print {
        ctx.write_stream(task.stream, " ")?;
    }
    Ok(Ok(match task.kind {
        PrintFn::WriteToString | PrintFn::Prin1ToString | PrintFn::PrincToString | PrintFn::ForFormat => {
            match task.stream {
                Value::Stream(s) => match &s.borrow().kind {
                    StreamKind::StringOutput { buffer } => alloc::string(ctx.mc, buffer),
                    _ => alloc::string(ctx.mc, ""),
                },
                _ => alloc::string(ctx.mc, &task.text),
            }
        }
        _ => task.object,
    }))
}

/// The `print-not-readable` condition for `object` (defined in the prelude).
fn not_readable<'gc>(ctx: &mut Ctx<'_, 'gc>, object: Value<'gc>) -> Raise<'gc> {
    let name = ctx.cl("PRINT-NOT-READABLE");
    match ctx.world.find_type(name) {
        Some(t) => Raise::Condition(crate::runtime::conditions::make(ctx.mc, t, &[("OBJECT", object)])),
        None => Raise::error("an object cannot be printed readably"),
    }
}

/// The label table of the print in progress (`SYS::*CIRCLE-TABLE*`'s id), if any.
pub fn current_circle<'gc>(world: &World<'gc>, host: &crate::runtime::host::Host) -> Option<SharedCircle> {
    let Value::Fixnum(id) = world.syms.circle_table.value.get() else { return None };
    host.circle_tables
        .iter()
        .find(|(i, _)| *i == id)
        .and_then(|(_, w)| w.upgrade())
        .or_else(|| host.circle_owned.iter().find(|(i, _)| *i == id).map(|(_, c)| c.clone()))
}

/// Give a label table an id for `SYS::*CIRCLE-TABLE*` (`owned`: the host
/// keeps it until [`release_circle`]; otherwise its print task does).
pub fn register_circle(host: &mut crate::runtime::host::Host, circle: &SharedCircle, owned: bool) -> i64 {
    host.circle_tables.retain(|(_, w)| w.strong_count() > 0);
    let id = host.next_circle_id;
    host.next_circle_id += 1;
    if owned {
        host.circle_owned.push((id, circle.clone()));
    } else {
        host.circle_tables.push((id, std::rc::Rc::downgrade(circle)));
    }
    id
}

pub fn release_circle(host: &mut crate::runtime::host::Host, id: i64) {
    host.circle_owned.retain(|(i, _)| *i != id);
}

/// The print variables and their values for a task's settings, bound while
/// one of its methods runs (so a method's own prints follow `write`'s keywords).
pub fn bindings<'gc>(ctx: &mut Ctx<'_, 'gc>, task: &PrintTask<'gc>) -> Vec<(Ptr<'gc, Symbol<'gc>>, Value<'gc>)> {
    let circle = if task.settings.circle {
        Value::Fixnum(register_circle(ctx.host, &task.job.circle(), false))
    } else {
        Value::Nil
    };
    let s = &ctx.world.syms;
    let st = &task.settings;
    let limit = |n: Option<usize>| n.map_or(Value::Nil, |n| Value::Fixnum(n as i64));
    let case = match st.case {
        Case::Upcase => ctx.kw("UPCASE"),
        Case::Downcase => ctx.kw("DOWNCASE"),
        Case::Capitalize => ctx.kw("CAPITALIZE"),
    };
    vec![
        (s.print_escape, ctx.bool(task.escape)),
        (s.print_readably, ctx.bool(st.readably)),
        (s.print_pretty, ctx.bool(st.pretty)),
        (s.print_circle, ctx.bool(st.circle)),
        (s.print_length, limit(st.length)),
        (s.print_level, limit(st.level)),
        (s.print_lines, limit(st.lines)),
        (s.print_right_margin, limit(st.right_margin)),
        (s.print_base, Value::Fixnum(st.base as i64)),
        (s.print_radix, ctx.bool(st.radix)),
        (s.print_case, case),
        (s.print_array, ctx.bool(st.array)),
        (s.print_gensym, ctx.bool(st.gensym)),
        (s.circle_table, circle),
    ]
}
