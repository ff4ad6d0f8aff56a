//! The printer: values to text, as SBCL prints them with `*print-pretty*` NIL
//! and `*read-default-float-format*` DOUBLE-FLOAT, under the print control
//! variables ([`Settings`]).
//!
//! A print is a [`Job`]: an explicit work stack of what is left to print, so
//! the Rust stack never grows with the depth of the data, and a job can stop
//! and resume. It writes to a [`Sink`] as it goes (never building the whole
//! text first), asks the sink every few thousand steps whether to stop (the
//! evaluator's interrupt flag), and stops where printing needs Lisp code: an
//! object whose type has a print method (a structure's `:print-function` or
//! `:print-object`, a condition's `:report` function, later a CLOS
//! `print-object` method — the evaluator's `PrintContext::method` says which)
//! makes [`Job::run`] return [`Outcome::NeedsLisp`]; the evaluator calls the
//! method (in a VM frame: the printer never runs Lisp code) and resumes the
//! job. Printing that cannot stop, such as [`print_to_string`] for a message,
//! takes the text of such objects from [`LispPrinted`] (computed earlier by
//! Lisp) or records them there as missing and prints them as if they had no
//! method.
//!
//! Invariants: the Rust stack depth of printing is constant; with
//! `*print-circle*` the circularity scan ([`circle`]) is iterative too; a
//! job holds only values reachable from the object it prints.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use gc_arena::{Collect, Gc};

use crate::packages::Packages;
use crate::spec::{self, Elem, ElementType};
use crate::value::*;

mod atoms;
pub mod circle;

pub use atoms::{char_name, format_float, needs_bars, symbol_name_cased, write_symbol_name};

/// `*print-case*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    Upcase,
    Downcase,
    Capitalize,
}

/// The print control variables other than `*print-escape*` (which printing
/// functions override one by one, so it lives in [`PrintContext`]).
/// `lines`, `right_margin` and `miser_width` only shape pretty printing,
/// which the evaluator's pretty streams do; they are kept here so `write`'s
/// keywords reach the print methods it calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub readably: bool,
    /// `*print-pretty*`: lists and arrays are printed by the Lisp pretty
    /// printer ([`PrintContext::pretty`]).
    pub pretty: bool,
    pub circle: bool,
    pub length: Option<usize>,
    pub level: Option<usize>,
    pub lines: Option<usize>,
    pub right_margin: Option<usize>,
    pub base: u32,
    pub radix: bool,
    pub case: Case,
    /// The current readtable's case: which letters a symbol name must escape, and
    /// how `case` applies (CLHS 22.1.3.3.2).
    pub read_case: mprof_reader::ReadCase,
    pub array: bool,
    pub gensym: bool,
}

impl Default for Settings {
    /// The variables' initial values.
    fn default() -> Self {
        Settings {
            readably: false,
            pretty: false,
            circle: false,
            length: None,
            level: None,
            lines: None,
            right_margin: None,
            base: 10,
            radix: false,
            case: Case::Upcase,
            read_case: mprof_reader::ReadCase::Upcase,
            array: true,
            gensym: true,
        }
    }
}

impl Settings {
    /// For text the implementation prints on its own (error messages, values
    /// handed to the host): circular data terminates.
    pub fn safe() -> Settings {
        Settings { circle: true, pretty: false, ..Settings::default() }
    }
}

/// Texts of objects printed by Lisp methods, computed before a print that
/// cannot stop for Lisp code (FORMAT's), and the objects such a print met
/// without a text. Keyed by identity and `*print-escape*`.
#[derive(Default)]
pub struct LispPrinted<'gc> {
    pub texts: Vec<(Value<'gc>, bool, String)>,
    pub missing: RefCell<Vec<(Value<'gc>, bool)>>,
}

impl<'gc> LispPrinted<'gc> {
    fn text(&self, v: Value<'gc>, escape: bool) -> Option<&str> {
        self.texts.iter().find(|(o, e, _)| o.eq(v) && *e == escape).map(|(_, _, t)| t.as_str())
    }
    fn note_missing(&self, v: Value<'gc>, escape: bool) {
        let mut m = self.missing.borrow_mut();
        if !m.iter().any(|(o, e)| o.eq(v) && *e == escape) {
            m.push((v, escape));
        }
    }
}

/// Which Lisp function prints an object, if any (supplied by the evaluator);
/// for a condition it may be its report string instead.
pub type MethodFn<'a, 'gc> = &'a dyn Fn(Value<'gc>, bool) -> Option<Value<'gc>>;

/// The Lisp pretty printer, called as a print method (object, stream, depth)
/// for the objects it lays out when `*print-pretty*` is true.
#[derive(Clone, Copy)]
pub struct PrettyHook<'gc> {
    pub function: Value<'gc>,
    /// The pprint-dispatch table in use has entries for types other than
    /// conses and arrays, so every object goes to it.
    pub all: bool,
}

/// What the printer needs to know of the environment.
#[derive(Clone, Copy)]
pub struct PrintContext<'a, 'gc> {
    pub packages: &'a Packages<'gc>,
    pub current_package: Ptr<'gc, Package<'gc>>,
    /// `*print-escape*`: true for `prin1`/`print`/`~s`, false for `princ`/`~a`.
    pub escape: bool,
    pub settings: Settings,
    /// Report strings for conditions without a Lisp report function, supplied
    /// by the evaluator; when None, conditions print unreadably.
    pub condition_report: Option<fn(Value<'gc>, &PrintContext<'_, 'gc>) -> Option<String>>,
    /// The Lisp function printing an object (given `escape`), if any.
    pub method: Option<MethodFn<'a, 'gc>>,
    /// Texts of Lisp-printed objects, for prints that cannot stop.
    pub lisp_printed: Option<&'a LispPrinted<'gc>>,
    /// The Lisp pretty printer, when the evaluator has one.
    pub pretty: Option<PrettyHook<'gc>>,
    /// Stop printing when this is set (the evaluator's interrupt flag).
    pub interrupt: Option<&'a AtomicBool>,
    /// The most bytes [`print_to_limited_string`] produces (the evaluator's heap
    /// limit, so that a circular list printed into a string ends).
    pub max_output: usize,
}

impl<'a, 'gc> PrintContext<'a, 'gc> {
    /// Default settings, no Lisp methods.
    pub fn new(packages: &'a Packages<'gc>, current_package: Ptr<'gc, Package<'gc>>, escape: bool) -> Self {
        PrintContext {
            packages,
            current_package,
            escape,
            settings: Settings::default(),
            condition_report: None,
            method: None,
            lisp_printed: None,
            pretty: None,
            interrupt: None,
            max_output: usize::MAX,
        }
    }

    /// Escaping is on for `*print-escape*` or `*print-readably*`.
    pub fn escaping(&self) -> bool {
        self.escape || self.settings.readably
    }

    /// `*print-level*` and `*print-length*` are ignored when printing readably.
    pub fn level(&self) -> Option<usize> {
        self.settings.level.filter(|_| !self.settings.readably)
    }
    pub fn length(&self) -> Option<usize> {
        self.settings.length.filter(|_| !self.settings.readably)
    }

    /// Whether vectors and arrays other than strings print their elements.
    pub fn prints_arrays(&self) -> bool {
        self.settings.array || self.settings.readably
    }

    pub fn lisp_method(&self, v: Value<'gc>) -> Option<Value<'gc>> {
        self.method.and_then(|m| m(v, self.escaping()))
    }

    /// The pretty printer's function when it prints `v`: with
    /// `*print-pretty*`, conses and arrays other than strings and bit
    /// vectors (and everything, under a dispatch table with other entries).
    pub fn pretty_printer(&self, v: Value<'gc>) -> Option<Value<'gc>> {
        let hook = self.pretty.filter(|_| self.settings.pretty)?;
        let laid_out = match v {
            Value::Cons(_) | Value::Vector(_) | Value::Array(_) => true,
            Value::SpecArray(a) => {
                let a = a.borrow();
                a.dims.len() != 1 || !matches!(a.element_type, ElementType::Character | ElementType::Bit)
            }
            Value::Unbound => false,
            _ => hook.all,
        };
        (laid_out && (hook.all || !matches!(v, Value::Vector(_) | Value::Array(_) | Value::SpecArray(_)) || self.prints_arrays()))
            .then_some(hook.function)
    }
}

/// Where printed text goes.
pub trait Sink {
    /// Write `text`; an error (a closed stream, a broken pipe) stops the print.
    fn write(&mut self, text: &str) -> Result<(), String>;

    /// Write and empty `chunk` (a sink may take the allocation instead of copying).
    fn write_chunk(&mut self, chunk: &mut String) -> Result<(), String> {
        let r = self.write(chunk);
        chunk.clear();
        r
    }
}

impl Sink for String {
    fn write(&mut self, text: &str) -> Result<(), String> {
        self.push_str(text);
        Ok(())
    }

    fn write_chunk(&mut self, chunk: &mut String) -> Result<(), String> {
        // Most prints fit one chunk: take it whole.
        if self.is_empty() {
            std::mem::swap(self, chunk);
        } else {
            self.push_str(chunk);
            chunk.clear();
        }
        Ok(())
    }
}

/// Why a print stopped before the end.
pub enum Stop<'gc> {
    /// The interrupt flag was set (it is left set, for the evaluator to act on).
    Interrupted,
    /// The sink failed.
    Failed(String),
    /// `*print-readably*` is true and this object has no readable syntax.
    NotReadable(Value<'gc>),
}

/// How [`Job::run`] ended.
pub enum Outcome<'gc> {
    Done,
    /// Call `method` on `object` (with the stream, and `depth` for a
    /// `:print-function`), then run the job again.
    NeedsLisp { object: Value<'gc>, method: Value<'gc>, depth: usize },
}

/// One piece of work left.
#[derive(Collect)]
#[collect(no_drop)]
enum Work<'gc> {
    /// Print an object at a nesting depth.
    Object {
        value: Value<'gc>,
        #[collect(require_static)]
        depth: u32,
    },
    Text(#[collect(require_static)] &'static str),
    /// The rest of a list after `count` elements.
    ListRest {
        rest: Value<'gc>,
        #[collect(require_static)]
        depth: u32,
        #[collect(require_static)]
        count: usize,
    },
    /// A vector's elements from `index`.
    VectorRest {
        vector: Value<'gc>,
        #[collect(require_static)]
        index: usize,
        #[collect(require_static)]
        depth: u32,
    },
    /// One parenthesized level of an array: elements (or sub-levels) `index..`
    /// of the level along `axis` starting at row-major `offset`.
    ArrayLevel {
        array: Value<'gc>,
        #[collect(require_static)]
        axis: usize,
        #[collect(require_static)]
        offset: usize,
        #[collect(require_static)]
        index: usize,
        #[collect(require_static)]
        depth: u32,
    },
    /// A structure's slots from `index`.
    SlotsRest {
        object: Value<'gc>,
        #[collect(require_static)]
        index: usize,
        #[collect(require_static)]
        depth: u32,
    },
}

/// Steps between two looks at the interrupt flag.
const POLL_EVERY: u32 = 4096;

/// `*print-circle*`'s labels of one print, shared with the prints made
/// within it (by print methods and the pretty printer), so labels are
/// numbered and `#n#` references resolved across all of them.
#[derive(Default, Debug)]
pub struct CircleState {
    labels: circle::Labels,
    next_label: u32,
}

pub type SharedCircle = Rc<RefCell<CircleState>>;

impl CircleState {
    /// A table for printing `v`: its shared objects, none labeled yet.
    pub fn scan<'gc>(v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> SharedCircle {
        Rc::new(RefCell::new(CircleState { labels: circle::shared_objects(v, ctx), next_label: 1 }))
    }

    /// Whether `v` is printed more than once (it gets a label).
    pub fn is_shared(&self, v: Value<'_>) -> bool {
        v.heap_address().is_some_and(|a| self.labels.contains_key(&a))
    }

    /// `#n#` when `v` was printed already, `#n=` (and the label assigned)
    /// before its first printing, None when it is not shared.
    pub fn mark(&mut self, v: Value<'_>) -> Option<String> {
        let addr = v.heap_address()?;
        let n = self.labels.get_mut(&addr)?;
        if *n != 0 {
            return Some(format!("#{n}#"));
        }
        *n = self.next_label;
        self.next_label += 1;
        Some(format!("#{n}="))
    }
}

/// A print in progress.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Job<'gc> {
    work: Vec<Work<'gc>>,
    #[collect(require_static)]
    circle: SharedCircle,
    /// Whether `circle` has any label (fixed once scanned): the fast paths skip it otherwise.
    #[collect(require_static)]
    has_labels: bool,
    #[collect(require_static)]
    steps: u32,
    /// Text not yet handed to the sink (written in chunks).
    #[collect(require_static)]
    buffer: String,
}

impl<'gc> Job<'gc> {
    /// A job printing `v`; with `*print-circle*` this scans `v` first.
    pub fn new(v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> Job<'gc> {
        Job::at_depth(v, ctx, 0)
    }

    /// A job printing `v` as an element `depth` levels down (a print made by
    /// a print method or the pretty printer, within an outer print).
    pub fn at_depth(v: Value<'gc>, ctx: &PrintContext<'_, 'gc>, depth: usize) -> Job<'gc> {
        let circle = if ctx.settings.circle { CircleState::scan(v, ctx) } else { SharedCircle::default() };
        Job::within(v, depth, circle)
    }

    /// A job printing `v` within an outer print whose labels it shares.
    pub fn within(v: Value<'gc>, depth: usize, circle: SharedCircle) -> Job<'gc> {
        let depth = depth.min(u32::MAX as usize) as u32;
        let has_labels = !circle.borrow().labels.is_empty();
        Job { work: vec![Work::Object { value: v, depth }], circle, has_labels, steps: 0, buffer: String::new() }
    }

    /// The labels this job prints with, for the prints made within it.
    pub fn circle(&self) -> SharedCircle {
        self.circle.clone()
    }

    /// Print until done, until Lisp code is needed (only when `can_yield`;
    /// otherwise such objects come from `ctx.lisp_printed` or print as if
    /// they had no method), or until stopped.
    pub fn run(
        &mut self,
        ctx: &PrintContext<'_, 'gc>,
        sink: &mut dyn Sink,
        can_yield: bool,
    ) -> Result<Outcome<'gc>, Stop<'gc>> {
        let r = self.run_inner(ctx, sink, can_yield);
        let flushed = self.flush(sink);
        let outcome = r?;
        flushed?;
        Ok(outcome)
    }

    fn flush(&mut self, sink: &mut dyn Sink) -> Result<(), Stop<'gc>> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        sink.write_chunk(&mut self.buffer).map_err(Stop::Failed)
    }

    fn run_inner(
        &mut self,
        ctx: &PrintContext<'_, 'gc>,
        sink: &mut dyn Sink,
        can_yield: bool,
    ) -> Result<Outcome<'gc>, Stop<'gc>> {
        while let Some(w) = self.work.pop() {
            self.steps += 1;
            if self.steps >= POLL_EVERY || self.buffer.len() >= 8192 {
                self.steps = 0;
                if ctx.interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
                    return Err(Stop::Interrupted);
                }
                self.flush(sink)?;
            }
            match w {
                Work::Text(t) => self.buffer.push_str(t),
                Work::Object { value, depth } => {
                    if let Some(need) = self.object(value, depth, ctx, can_yield)? {
                        return Ok(need);
                    }
                }
                Work::ListRest { rest, depth, count } => self.list_rest(rest, depth, count, ctx),
                Work::VectorRest { vector, index, depth } => self.vector_rest(vector, index, depth, ctx),
                Work::ArrayLevel { array, axis, offset, index, depth } => {
                    self.array_level(array, axis, offset, index, depth, ctx)
                }
                Work::SlotsRest { object, index, depth } => self.slots_rest(object, index, depth, ctx),
            }
        }
        Ok(Outcome::Done)
    }

    /// `#n#` when `v` was printed already, `#n=` before its first printing.
    /// True when the object is done (a reference was printed).
    fn label(&mut self, v: Value<'gc>) -> bool {
        let Some(mark) = self.circle.borrow_mut().mark(v) else { return false };
        self.buffer.push_str(&mark);
        mark.ends_with('#')
    }

    fn is_labeled(&self, v: Value<'gc>) -> bool {
        self.has_labels && self.circle.borrow().is_shared(v)
    }

    /// Print `v` at once when it is an atom that needs no label; false otherwise.
    /// Elements go through here before being queued: most elements are atoms.
    fn atom(&mut self, v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> bool {
        let s = &ctx.settings;
        let out = &mut self.buffer;
        match v {
            Value::Nil => atoms::symbol_name_cased(out, "NIL", false, s.case, s.read_case),
            Value::Fixnum(i) => atoms::fixnum(out, i, s.base, s.radix),
            Value::Float(f) => out.push_str(&format_float(f.val)),
            Value::Char(c) => atoms::character(out, c, ctx.escaping()),
            Value::String(st) => atoms::string(out, &st.borrow(), ctx.escaping()),
            Value::Symbol(sym) if !self.has_labels => atoms::symbol(out, sym, ctx),
            _ => return false,
        }
        true
    }

    /// Print an element at `depth`: atoms at once, the rest queued.
    fn element(&mut self, v: Value<'gc>, depth: u32, ctx: &PrintContext<'_, 'gc>) {
        let all = ctx.pretty.is_some_and(|h| h.all && ctx.settings.pretty);
        if all || !self.atom(v, ctx) {
            self.work.push(Work::Object { value: v, depth });
        }
    }

    fn object(
        &mut self,
        v: Value<'gc>,
        depth: u32,
        ctx: &PrintContext<'_, 'gc>,
        can_yield: bool,
    ) -> Result<Option<Outcome<'gc>>, Stop<'gc>> {
        let escape = ctx.escaping();
        if let Some(printer) = ctx.pretty_printer(v) {
            let compound = matches!(v, Value::Cons(_) | Value::Vector(_) | Value::Array(_) | Value::SpecArray(_));
            if compound && self.cut(depth, ctx) {
                return Ok(None);
            }
            if can_yield && ctx.lisp_printed.is_none() {
                // The label goes before the layout; the Lisp side knows the
                // object it is called for is labeled already.
                if self.has_labels && self.label(v) {
                    return Ok(None);
                }
                return Ok(Some(Outcome::NeedsLisp { object: v, method: printer, depth: depth as usize }));
            }
            if let Some(done) = self.by_lisp(v, printer, depth, ctx, can_yield) {
                return Ok(done);
            }
        }
        let s = &ctx.settings;
        let out = &mut self.buffer;
        match v {
            Value::Nil => atoms::symbol_name_cased(out, "NIL", false, s.case, s.read_case),
            Value::Unbound => return self.unreadable(v, ctx, "#<unbound>"),
            Value::Fixnum(i) => atoms::fixnum(out, i, s.base, s.radix),
            Value::BigInt(b) => atoms::integer(out, &b.0, s.base, s.radix),
            Value::Ratio(r) => atoms::ratio(out, &r.num, &r.den, s.base, s.radix),
            Value::Float(f) => out.push_str(&format_float(f.val)),
            Value::Char(c) => atoms::character(out, c, escape),
            Value::String(st) => atoms::string(out, &st.borrow(), escape),
            Value::Symbol(sym) => {
                if self.has_labels && self.label(v) {
                    return Ok(None);
                }
                atoms::symbol(&mut self.buffer, sym, ctx)
            }
            Value::Cons(c) => {
                if self.cut(depth, ctx) || (self.has_labels && self.label(v)) {
                    return Ok(None);
                }
                self.buffer.push('(');
                if ctx.length() == Some(0) {
                    self.buffer.push_str("...)");
                    return Ok(None);
                }
                self.work.push(Work::ListRest { rest: c.cdr.get(), depth, count: 1 });
                self.element(c.car.get(), depth + 1, ctx);
            }
            Value::Complex(c) => atoms::complex(out, &c, s.base, s.radix),
            Value::SpecArray(a) if a.borrow().dims.len() == 1 && a.borrow().element_type == ElementType::Character => {
                let chars = spec_chars(v, a.borrow().active_len());
                atoms::string(out, &LString { chars, fill_pointer: None, adjustable: false }, escape);
            }
            Value::Vector(_) | Value::Array(_) | Value::SpecArray(_) if !ctx.prints_arrays() => {
                let text = format!("#<{} {{{:X}}}>", array_type_text(v), v.heap_address().unwrap_or(0));
                self.buffer.push_str(&text);
            }
            Value::Vector(_) => {
                if self.cut(depth, ctx) || (self.has_labels && self.label(v)) {
                    return Ok(None);
                }
                self.buffer.push_str("#(");
                self.work.push(Work::VectorRest { vector: v, index: 0, depth });
            }
            Value::SpecArray(a) if a.borrow().dims.len() == 1 && a.borrow().element_type == ElementType::Bit => {
                self.buffer.push_str("#*");
                for i in 0..a.borrow().active_len() {
                    let bit = matches!(spec::get(v, i), Some(Elem::Value(Value::Fixnum(1))));
                    self.buffer.push(if bit { '1' } else { '0' });
                }
            }
            Value::SpecArray(a) if a.borrow().dims.len() == 1 => {
                if self.cut(depth, ctx) || (self.has_labels && self.label(v)) {
                    return Ok(None);
                }
                self.buffer.push_str("#(");
                self.work.push(Work::VectorRest { vector: v, index: 0, depth });
            }
            Value::Array(_) | Value::SpecArray(_) => {
                if self.cut(depth, ctx) || (self.has_labels && self.label(v)) {
                    return Ok(None);
                }
                let rank = array_dims(v).len();
                self.buffer.push('#');
                self.buffer.push_str(&rank.to_string());
                self.buffer.push('A');
                if rank == 0 {
                    self.array_item(v, 0, depth + 1);
                } else {
                    self.work.push(Work::ArrayLevel { array: v, axis: 0, offset: 0, index: 0, depth });
                }
            }
            Value::Function(f) => {
                if s.readably {
                    return Err(Stop::NotReadable(v));
                }
                self.buffer.push_str("#<");
                self.buffer.push_str(&cased("FUNCTION", ctx));
                self.buffer.push(' ');
                match f.name() {
                    Value::Nil => self.buffer.push_str("(LAMBDA)"),
                    name => {
                        // Names are printed escaped whatever *print-escape* is; a
                        // name is a symbol or (SETF symbol), so this nests once.
                        let ectx = PrintContext { escape: true, settings: Settings::safe(), ..*ctx };
                        let mut text = String::new();
                        let _ = print_into(&mut text, name, &ectx);
                        self.buffer.push_str(&text);
                    }
                }
                self.buffer.push('>');
            }
            Value::Struct(st) => {
                if self.cut(depth, ctx) || (self.has_labels && self.label(v)) {
                    return Ok(None);
                }
                if let Some(Value::String(text)) = ctx.lisp_method(v) {
                    // A condition's report string.
                    atoms::string(&mut self.buffer, &text.borrow(), false);
                    return Ok(None);
                }
                if let Some(method) = ctx.lisp_method(v) {
                    match ctx.lisp_printed.and_then(|p| p.text(v, escape)) {
                        Some(text) => {
                            self.buffer.push_str(text);
                            return Ok(None);
                        }
                        None if can_yield => {
                            return Ok(Some(Outcome::NeedsLisp { object: v, method, depth: depth as usize }));
                        }
                        None => {
                            if let Some(p) = ctx.lisp_printed {
                                // This pass's text is thrown away once an object is
                                // missing, so the slots are not printed: they may
                                // lead back to the object (circular structure).
                                p.note_missing(v, escape);
                                return Ok(None);
                            }
                        }
                    }
                }
                if st.stype().is_condition {
                    if !escape
                        && let Some(report) = ctx.condition_report
                        && let Some(text) = report(v, ctx)
                    {
                        self.buffer.push_str(&text);
                        return Ok(None);
                    }
                    if s.readably {
                        return Err(Stop::NotReadable(v));
                    }
                    self.buffer.push_str("#<");
                    self.symbol_text(st.stype().name, ctx);
                    self.buffer.push_str(&format!(" {{{:X}}}>", Gc::as_ptr(st) as usize));
                    return Ok(None);
                }
                // A CLOS instance whose PRINT-OBJECT cannot be called from here
                // prints as the default method would: its slots are not for
                // display (a layout token first; metaobjects are circular).
                if st.stype().precedence.borrow().iter().any(|n| matches!(n, Value::Symbol(s) if &*s.name == "STANDARD-OBJECT")) {
                    if s.readably {
                        return Err(Stop::NotReadable(v));
                    }
                    self.buffer.push_str("#<");
                    self.symbol_text(st.stype().name, ctx);
                    self.buffer.push_str(&format!(" {{{:X}}}>", Gc::as_ptr(st) as usize));
                    return Ok(None);
                }
                // A structure the evaluator prints itself when no Lisp can run
                // (a pathname in a message prints as #P"...").
                if !can_yield
                    && let Some(report) = ctx.condition_report
                    && let Some(text) = report(v, ctx)
                {
                    self.buffer.push_str(&text);
                    return Ok(None);
                }
                // With *print-pretty*, the pretty printer lays the slots out.
                if can_yield
                    && ctx.lisp_printed.is_none()
                    && let Some(hook) = ctx.pretty.filter(|_| ctx.settings.pretty)
                {
                    return Ok(Some(Outcome::NeedsLisp { object: v, method: hook.function, depth: depth as usize }));
                }
                self.buffer.push_str("#S(");
                self.symbol_text(st.stype().name, ctx);
                self.work.push(Work::SlotsRest { object: v, index: 0, depth });
            }
            Value::HashTable(h) => {
                let h = h.borrow();
                let test = match h.test {
                    HashTest::Eq => "EQ",
                    HashTest::Eql => "EQL",
                    HashTest::Equal => "EQUAL",
                    HashTest::Equalp => "EQUALP",
                };
                let text = format!("#<HASH-TABLE :TEST {test} :COUNT {}>", h.len());
                return self.unreadable(v, ctx, &text);
            }
            Value::Package(p) => {
                return self.unreadable(v, ctx, &format!("#<{} \"{}\">", cased("PACKAGE", ctx), p.name()));
            }
            Value::Stream(st) => {
                let st = st.borrow();
                let text = match &st.kind {
                    StreamKind::Host { .. } | StreamKind::Bytes { .. } | StreamKind::StringInput { file: true, .. } => {
                        format!("#<FILE-STREAM for {:?}>", st.name)
                    }
                    StreamKind::StringInput { .. } | StreamKind::StringOutput { .. } => "#<STRING-STREAM>".to_string(),
                    StreamKind::Pretty(_) => "#<PRETTY-STREAM>".to_string(),
                    // A composite stream's name says what it is (SYNONYM-STREAM :SYMBOL X...).
                    _ => format!("#<{}>", st.name),
                };
                return self.unreadable(v, ctx, &text);
            }
            Value::RandomState(_) => return self.unreadable(v, ctx, "#<RANDOM-STATE>"),
            Value::StructType(t) => {
                if s.readably {
                    return Err(Stop::NotReadable(v));
                }
                self.buffer.push_str("#<");
                self.buffer.push_str(&cased("STRUCTURE-CLASS", ctx));
                self.buffer.push(' ');
                self.symbol_text(t.name, ctx);
                self.buffer.push('>');
            }
            Value::Cell(_) => return self.unreadable(v, ctx, "#<value-cell>"),
            Value::Proto(_) => return self.unreadable(v, ctx, "#<code>"),
        }
        Ok(None)
    }

    /// Have `method` print `v`: its text when a print that cannot stop has
    /// it already, a stop for Lisp when this one can, or nothing (None: the
    /// printer prints it itself; a pass collecting texts notes it missing).
    fn by_lisp(
        &mut self,
        v: Value<'gc>,
        method: Value<'gc>,
        depth: u32,
        ctx: &PrintContext<'_, 'gc>,
        can_yield: bool,
    ) -> Option<Option<Outcome<'gc>>> {
        let escape = ctx.escaping();
        if let Some(text) = ctx.lisp_printed.and_then(|p| p.text(v, escape)) {
            self.buffer.push_str(text);
            return Some(None);
        }
        if can_yield {
            return Some(Some(Outcome::NeedsLisp { object: v, method, depth: depth as usize }));
        }
        if let Some(p) = ctx.lisp_printed {
            p.note_missing(v, escape);
            return Some(None);
        }
        None
    }

    fn unreadable(
        &mut self,
        v: Value<'gc>,
        ctx: &PrintContext<'_, 'gc>,
        text: &str,
    ) -> Result<Option<Outcome<'gc>>, Stop<'gc>> {
        if ctx.settings.readably {
            return Err(Stop::NotReadable(v));
        }
        self.buffer.push_str(text);
        Ok(None)
    }

    /// A type's name inside `#<...>` or `#S(`: always escaped.
    fn symbol_text(&mut self, name: Value<'gc>, ctx: &PrintContext<'_, 'gc>) {
        match name {
            Value::Symbol(sym) => atoms::symbol(&mut self.buffer, sym, &PrintContext { escape: true, ..*ctx }),
            Value::Nil => self.buffer.push_str("NIL"),
            _ => self.buffer.push('?'),
        }
    }

    /// `*print-level*`: a compound object this deep prints as `#`.
    fn cut(&mut self, depth: u32, ctx: &PrintContext<'_, 'gc>) -> bool {
        if ctx.level().is_some_and(|l| depth as usize >= l) {
            self.buffer.push('#');
            return true;
        }
        false
    }

    fn list_rest(&mut self, rest: Value<'gc>, depth: u32, count: usize, ctx: &PrintContext<'_, 'gc>) {
        match rest {
            Value::Nil => self.buffer.push(')'),
            Value::Cons(c) if !self.is_labeled(rest) => {
                if ctx.length().is_some_and(|n| count >= n) {
                    self.buffer.push_str(" ...)");
                    return;
                }
                self.buffer.push(' ');
                self.work.push(Work::ListRest { rest: c.cdr.get(), depth, count: count + 1 });
                self.element(c.car.get(), depth + 1, ctx);
            }
            tail => {
                // A dotted tail, or a shared cdr: `. #n#` / `. #n=(...)`.
                self.buffer.push_str(" . ");
                self.work.push(Work::Text(")"));
                self.work.push(Work::Object { value: tail, depth: depth + 1 });
            }
        }
    }

    /// Before element `index` of `len` of a vector or an array row: the closing
    /// parenthesis after the last one, the separator, and `...)` past `*print-length*`.
    /// False when nothing more is printed.
    fn next_element(&mut self, index: usize, len: usize, ctx: &PrintContext<'_, 'gc>) -> bool {
        if index >= len {
            self.buffer.push(')');
            return false;
        }
        if index > 0 {
            self.buffer.push(' ');
        }
        if ctx.length().is_some_and(|n| index >= n) {
            self.buffer.push_str("...)");
            return false;
        }
        true
    }

    /// Element `i` (row-major) of an array: queued, or a double printed at once.
    fn array_item(&mut self, array: Value<'gc>, i: usize, depth: u32) {
        match spec::get(array, i) {
            Some(Elem::Double(x)) => self.buffer.push_str(&format_float(x)),
            Some(Elem::Value(item)) => self.work.push(Work::Object { value: item, depth }),
            // A displaced array whose target shrank.
            None => self.buffer.push_str("#<missing element>"),
        }
    }

    fn vector_rest(&mut self, vector: Value<'gc>, index: usize, depth: u32, ctx: &PrintContext<'_, 'gc>) {
        if let Value::SpecArray(a) = vector {
            let len = a.borrow().active_len();
            if !self.next_element(index, len, ctx) {
                return;
            }
            self.work.push(Work::VectorRest { vector, index: index + 1, depth });
            self.array_item(vector, index, depth + 1);
            return;
        }
        let Value::Vector(vec) = vector else { return };
        let vec = vec.borrow();
        let items = vec.active();
        if !self.next_element(index, items.len(), ctx) {
            return;
        }
        self.work.push(Work::VectorRest { vector, index: index + 1, depth });
        let item = items[index];
        drop(vec);
        self.element(item, depth + 1, ctx);
    }

    fn array_level(
        &mut self,
        array: Value<'gc>,
        axis: usize,
        offset: usize,
        index: usize,
        depth: u32,
        ctx: &PrintContext<'_, 'gc>,
    ) {
        let dims = array_dims(array);
        let Some(&len) = dims.get(axis) else { return };
        if index == 0 {
            if ctx.level().is_some_and(|l| depth as usize >= l) && axis > 0 {
                self.buffer.push('#');
                return;
            }
            self.buffer.push('(');
        }
        if !self.next_element(index, len, ctx) {
            return;
        }
        let stride: usize = dims[axis + 1..].iter().product();
        self.work.push(Work::ArrayLevel { array, axis, offset, index: index + 1, depth });
        let start = offset + index * stride;
        if axis + 1 == dims.len() {
            self.array_item(array, start, depth + 1);
        } else {
            self.work.push(Work::ArrayLevel { array, axis: axis + 1, offset: start, index: 0, depth: depth + 1 });
        }
    }

    fn slots_rest(&mut self, object: Value<'gc>, index: usize, depth: u32, ctx: &PrintContext<'_, 'gc>) {
        let Value::Struct(s) = object else { return };
        let stype = s.stype();
        let names = stype.slot_names.borrow();
        let slots = s.slots.borrow();
        if index >= slots.len().min(names.len()) {
            self.buffer.push(')');
            return;
        }
        if ctx.length().is_some_and(|n| index >= n) {
            self.buffer.push_str(" ...)");
            return;
        }
        self.buffer.push_str(" :");
        if let Value::Symbol(sym) = names[index] {
            atoms::symbol_name_cased(&mut self.buffer, &sym.name, ctx.escaping(), ctx.settings.case, ctx.settings.read_case);
        }
        self.buffer.push(' ');
        self.work.push(Work::SlotsRest { object, index: index + 1, depth });
        self.work.push(Work::Object { value: slots[index], depth: depth + 1 });
    }
}

/// A type's name inside `#<...>`, under `*print-case*` as SBCL prints it.
fn cased(word: &str, ctx: &PrintContext<'_, '_>) -> String {
    let mut s = String::new();
    atoms::symbol_name_cased(&mut s, word, false, ctx.settings.case, ctx.settings.read_case);
    s
}

/// The dimensions of a multidimensional or specialized array.
fn array_dims(v: Value<'_>) -> Vec<usize> {
    match v {
        Value::Array(a) => a.borrow().dims.clone(),
        Value::SpecArray(a) => a.borrow().dims.clone(),
        _ => Vec::new(),
    }
}

/// The first `len` characters of a displaced string.
fn spec_chars(v: Value<'_>, len: usize) -> Vec<char> {
    (0..len)
        .map_while(|i| match spec::get(v, i) {
            Some(Elem::Value(Value::Char(c))) => Some(c),
            _ => None,
        })
        .collect()
}

/// `(SIMPLE-VECTOR 3)`, `(SIMPLE-ARRAY T (2 2))`: how SBCL names an array's
/// type in its unreadable form.
fn array_type_text(v: Value<'_>) -> String {
    match v {
        Value::SpecArray(a) => {
            let a = a.borrow();
            let elt = match a.element_type {
                ElementType::T => "T",
                ElementType::Character => "CHARACTER",
                ElementType::Bit => "BIT",
                ElementType::Byte8 => "(UNSIGNED-BYTE 8)",
                ElementType::Fixnum => "FIXNUM",
                ElementType::Double => "DOUBLE-FLOAT",
            };
            let dims: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
            match (a.element_type, a.dims.len(), a.is_simple()) {
                (ElementType::Bit, 1, true) => format!("(SIMPLE-BIT-VECTOR {})", a.dims[0]),
                (ElementType::Bit, 1, false) => format!("(BIT-VECTOR {})", a.dims[0]),
                (_, 1, false) => format!("(VECTOR {elt} {})", a.dims[0]),
                (_, _, true) => format!("(SIMPLE-ARRAY {elt} ({}))", dims.join(" ")),
                (_, _, false) => format!("(ARRAY {elt} ({}))", dims.join(" ")),
            }
        }
        Value::Vector(vec) => {
            let vec = vec.borrow();
            if vec.fill_pointer.is_some() || vec.adjustable {
                format!("(VECTOR T {})", vec.items.len())
            } else {
                format!("(SIMPLE-VECTOR {})", vec.items.len())
            }
        }
        Value::Array(a) => {
            let dims: Vec<String> = a.borrow().dims.iter().map(|d| d.to_string()).collect();
            format!("(SIMPLE-ARRAY T ({}))", dims.join(" "))
        }
        _ => String::new(),
    }
}

/// Print `v` into `sink` without stopping for Lisp code.
pub fn print_into<'gc>(sink: &mut dyn Sink, v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> Result<(), Stop<'gc>> {
    let mut job = Job::new(v, ctx);
    job.run(ctx, sink, false).map(|_| ())
}

/// The printed text of `v`. A print stopped by an interrupt or by
/// `*print-readably*` gives the text printed so far.
pub fn print_to_string<'gc>(v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> String {
    let mut out = String::new();
    let _ = print_into(&mut out, v, ctx);
    out
}

/// A string sink that refuses to grow past `limit` bytes (a circular list printed
/// with `*print-circle*` false never ends); `exceeded` tells why a print failed.
pub struct LimitedString<'s> {
    pub out: &'s mut String,
    pub limit: usize,
    pub exceeded: bool,
}

impl<'s> LimitedString<'s> {
    pub fn new(out: &'s mut String, limit: usize) -> LimitedString<'s> {
        LimitedString { out, limit, exceeded: false }
    }
}

impl Sink for LimitedString<'_> {
    fn write(&mut self, text: &str) -> Result<(), String> {
        if self.out.len().saturating_add(text.len()) > self.limit {
            self.exceeded = true;
            return Err(format!("the printed text would pass {} bytes", self.limit));
        }
        self.out.push_str(text);
        Ok(())
    }

    fn write_chunk(&mut self, chunk: &mut String) -> Result<(), String> {
        let r = if self.out.is_empty() && chunk.len() <= self.limit {
            // Most prints fit one chunk: take it whole.
            std::mem::swap(self.out, chunk);
            Ok(())
        } else {
            self.write(chunk)
        };
        chunk.clear();
        r
    }
}

/// The printed text of `v`, or `None` when it would be longer than
/// `ctx.max_output` (a circular list with `*print-circle*` false never ends).
pub fn print_to_limited_string<'gc>(v: Value<'gc>, ctx: &PrintContext<'_, 'gc>) -> Option<String> {
    let mut out = String::new();
    let mut sink = LimitedString::new(&mut out, ctx.max_output);
    let _ = print_into(&mut sink, v, ctx);
    (!sink.exceeded).then_some(out)
}

#[cfg(test)]
mod tests;
