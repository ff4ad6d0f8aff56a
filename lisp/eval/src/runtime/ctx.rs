//! What a builtin sees: the mutation context, the world, the host, and the
//! values register. Helpers here turn common argument checks into typed
//! errors with messages naming the offending value, and the output side of
//! streams: designators, writing text with the column kept, pretty streams'
//! targets.

use gc_arena::Mutation;
use mprof_heap::printer::{PrintContext, print_to_string};
use mprof_heap::value::{Element, Package, Ptr, StreamKind, UNKNOWN_COLUMN};
use mprof_heap::{Value, alloc};

use crate::runtime::composite;
use crate::runtime::host::Host;
use crate::runtime::raise::{ErrorKind, Raise};
use crate::runtime::world::World;

pub struct Ctx<'a, 'gc> {
    pub mc: &'a Mutation<'gc>,
    pub world: &'a World<'gc>,
    pub host: &'a mut Host,
    /// The values register; set through [`Ctx::set_values`].
    pub values: &'a mut Vec<Value<'gc>>,
    /// True when the builtin set multiple values.
    pub multiple: bool,
}

impl<'a, 'gc> Ctx<'a, 'gc> {
    /// Refuse, with a storage-condition, to make `count` items of `item_bytes`
    /// each when they would take the heap past its limit: one builtin call can
    /// ask for more memory than the machine has, before the driver's check
    /// between slices could see it.
    pub fn reserve(&self, what: &str, count: usize, item_bytes: usize) -> Result<(), Raise<'gc>> {
        let limit = self.host.options.max_heap;
        let live = mprof_heap::live_bytes() as usize;
        match count.checked_mul(item_bytes) {
            // A request under a quarter of the limit passes: the live count may
            // still include garbage no collection has swept (a builtin cannot
            // collect), and the driver's check between slices catches growth.
            Some(bytes) if bytes < limit / 4 || live.saturating_add(bytes) <= limit => Ok(()),
            _ => Err(Raise::simple(
                crate::runtime::raise::ErrorKind::Storage,
                format!(
                    "Heap exhausted: {what} of {count} elements would take the heap past its limit of {} MB (--max-heap).",
                    limit >> 20
                ),
            )),
        }
    }

    pub fn t(&self) -> Value<'gc> {
        self.world.t()
    }

    /// Refuse, with a `capability-denied` error, what the host did not grant.
    pub fn require(&self, cap: crate::runtime::capabilities::Capability) -> Result<(), Raise<'gc>> {
        self.host.options.capabilities.check(cap).map_err(|m| Raise::simple(ErrorKind::Capability, m))
    }

    /// Refuse, with a `capability-denied` error, to read (or write) `path` when the
    /// host did not grant it.
    pub fn require_file(&self, cap: crate::runtime::capabilities::Capability, path: &str) -> Result<(), Raise<'gc>> {
        self.host.options.capabilities.check_file(cap, path).map_err(|m| Raise::simple(ErrorKind::Capability, m))
    }

    pub fn bool(&self, b: bool) -> Value<'gc> {
        if b { self.world.t() } else { Value::Nil }
    }

    /// Return several values: the first is also the builtin's result.
    pub fn set_values(&mut self, vals: &[Value<'gc>]) -> Value<'gc> {
        self.values.clear();
        self.values.extend_from_slice(vals);
        self.multiple = true;
        vals.first().copied().unwrap_or(Value::Nil)
    }

    pub fn cl(&self, name: &str) -> Value<'gc> {
        self.world.intern_cl(self.mc, name)
    }

    pub fn kw(&self, name: &str) -> Value<'gc> {
        self.world.keyword(self.mc, name)
    }

    /// A type error: `datum` is not of the CL type named `expected`.
    pub fn type_error(&self, datum: Value<'gc>, expected: &str) -> Raise<'gc> {
        let expected = if expected.starts_with('(') {
            // A compound type specifier, read from text.
            match mprof_reader::read_one(expected, 0, &Default::default()) {
                Ok(Some((d, _))) => {
                    // Read in MPROF-SYSTEM: the standard type names are
                    // COMMON-LISP's, and COMMON-LISP gains no symbol.
                    mprof_heap::datum::datum_to_value(
                        self.mc,
                        &self.world.packages,
                        self.world.packages.system,
                        &d,
                    )
                    .unwrap_or(Value::Nil)
                }
                _ => Value::Nil,
            }
        } else {
            self.cl(expected)
        };
        Raise::TypeError { datum, expected }
    }

    pub fn current_package(&self) -> Ptr<'gc, Package<'gc>> {
        match self.world.syms.package.value.get() {
            Value::Package(p) => p,
            _ => self.world.packages.user,
        }
    }

    /// The context for text the implementation prints itself (messages):
    /// circular data terminates, print methods are not run.
    pub fn print_context(&self, escape: bool) -> PrintContext<'_, 'gc> {
        PrintContext {
            settings: mprof_heap::printer::Settings::safe(),
            condition_report: Some(crate::runtime::conditions::static_report),
            ..PrintContext::new(&self.world.packages, self.current_package(), escape)
        }
    }

    /// Print a value for a message, as prin1 (escape) or princ would.
    pub fn print(&self, v: Value<'gc>, escape: bool) -> String {
        print_to_string(v, &self.print_context(escape))
    }

    /// Resolve an output stream designator: T is the terminal, NIL standard
    /// output; the stream returned is the one that does the output (see
    /// `output_stream_object`). `Raise::Gray` when output to it reaches a Gray
    /// stream: the builtin's call is then carried out by Lisp (see `vm/call.rs`).
    pub fn output_stream(&self, designator: Value<'gc>) -> Result<Value<'gc>, Raise<'gc>> {
        let v = match designator {
            Value::Stream(s) => return self.output_stream_object(s),
            Value::Nil => self.world.syms.standard_output.value.get(),
            Value::Symbol(s) if gc_arena::Gc::ptr_eq(s, self.world.packages.t) => {
                self.world.syms.terminal_io.value.get()
            }
            other => other,
        };
        if let Value::Stream(s) = v {
            return self.output_stream_object(s);
        }
        Err(composite::Next::not_stream(self, v))
    }

    /// A stream object as an output stream: a chain of synonym, two-way and
    /// echo streams (the standard streams are synonym streams) is followed
    /// once, here, to the stream it reaches, which the caller then writes to;
    /// a broadcast stream is checked and returned as it is.
    #[inline]
    fn output_stream_object(&self, s: composite::StreamPtr<'gc>) -> Result<Value<'gc>, Raise<'gc>> {
        // The common cases, kept small: a stream that does its own output, or
        // a few synonym links to one.
        let mut cur = s;
        for _ in 0..4 {
            match composite::step(cur) {
                composite::Step::Leaf => return Ok(Value::Stream(cur)),
                composite::Step::Next(n) => cur = n,
                composite::Step::Slow => break,
            }
        }
        self.output_stream_slow(s)
    }

    #[cold]
    #[inline(never)]
    fn output_stream_slow(&self, s: composite::StreamPtr<'gc>) -> Result<Value<'gc>, Raise<'gc>> {
        match composite::single_output(self, s)? {
            Some(leaf) => Ok(Value::Stream(leaf)),
            None => {
                composite::check_output(self, Value::Stream(s))?;
                Ok(Value::Stream(s))
            }
        }
    }

    /// Write text to a stream (a stream object), keeping its column. A
    /// composite stream writes to the streams it reaches (which the caller
    /// checked, with [`Ctx::output_stream`], hold no Gray stream).
    pub fn write_stream(&mut self, stream: Value<'gc>, text: &str) -> Result<(), Raise<'gc>> {
        let Value::Stream(s) = stream else {
            return Err(self.type_error(stream, "STREAM"));
        };
        let mut st = alloc::borrow_mut(self.mc, s);
        if st.kind.is_composite() {
            // Rare here: `output_stream` gives the stream a chain of synonym,
            // two-way and echo streams reaches. A broadcast stream writes to
            // each stream it reaches.
            drop(st);
            return match composite::single_output(self, s)? {
                Some(leaf) => self.write_stream(Value::Stream(leaf), text),
                None => composite::write(self, stream, text),
            };
        }
        if !st.open {
            return Err(Raise::simple(ErrorKind::Stream, format!("the stream {} is closed", st.name)));
        }
        if st.element != Element::Character {
            drop(st);
            return Err(self.type_error(Value::Stream(s), "(SATISFIES CHARACTER-OUTPUT-STREAM-P)"));
        }
        match &mut st.kind {
            StreamKind::StringOutput { buffer } => buffer.push_str(text),
            StreamKind::Pretty(engine) => {
                engine.write_str(text);
                st.column = pretty_column(&st);
                drop(st);
                return self.pretty_flush(stream, false);
            }
            StreamKind::Host { channel, output: true, written, .. } => {
                let ch = *channel;
                *written += text.len() as u64;
                self.host.write(ch, text).map_err(|e| Raise::simple(ErrorKind::Stream, e))?;
            }
            StreamKind::Bytes { bytes, pos, output: true, dirty, .. } => {
                write_at(bytes, pos, text.as_bytes());
                *dirty = true;
            }
            _ => {
                drop(st);
                return Err(self.type_error(Value::Stream(s), "(SATISFIES OUTPUT-STREAM-P)"));
            }
        }
        if let Some(i) = text.rfind('\n') {
            st.column = text[i + 1..].chars().count();
        } else if st.column != UNKNOWN_COLUMN {
            st.column += text.chars().count();
        }
        Ok(())
    }

    /// Move the text a pretty stream has decided to its target: all of it
    /// (`all`, at the end of a print) or once it is a few kilobytes, so the
    /// output streams without many small writes.
    pub fn pretty_flush(&mut self, stream: Value<'gc>, all: bool) -> Result<(), Raise<'gc>> {
        let Value::Stream(s) = stream else { return Ok(()) };
        let text = {
            let mut st = alloc::borrow_mut(self.mc, s);
            match &mut st.kind {
                StreamKind::Pretty(engine) if all || engine.ready_len() >= PRETTY_FLUSH_BYTES => engine.take_ready(),
                _ => return Ok(()),
            }
        };
        if text.is_empty() {
            return Ok(());
        }
        let target = self.pretty_target(stream)?;
        self.write_stream(target, &text)
    }

    /// The stream a pretty stream writes to: `SYS::*PRETTY-TARGETS*` is an
    /// alist (pretty stream . target) bound by the Lisp that made it
    /// (`prelude/pprint.lisp`), since a stream object holds no values.
    pub fn pretty_target(&self, stream: Value<'gc>) -> Result<Value<'gc>, Raise<'gc>> {
        let mut l = self.world.syms.pretty_targets.value.get();
        while let Value::Cons(c) = l {
            if let Value::Cons(entry) = c.car.get()
                && entry.car.get().eq(stream)
            {
                return Ok(entry.cdr.get());
            }
            l = c.cdr.get();
        }
        Err(Raise::simple(ErrorKind::Stream, "a pretty-printing stream was used after the print that made it ended"))
    }

    /// Write to a stream designator.
    pub fn write_to(&mut self, designator: Value<'gc>, text: &str) -> Result<(), Raise<'gc>> {
        let s = self.output_stream(designator)?;
        self.write_stream(s, text)
    }

    /// The column output to `stream` starts at (`UNKNOWN_COLUMN` when a
    /// Gray stream said it does not know).
    pub fn stream_column(&self, stream: Value<'gc>) -> usize {
        match stream {
            Value::Stream(s) => {
                let st = s.borrow();
                if st.kind.is_composite() { composite::output_column(stream) } else { st.column }
            }
            _ => 0,
        }
    }

    pub fn string_arg(&self, v: Value<'gc>) -> Result<String, Raise<'gc>> {
        match v {
            Value::String(s) => Ok(s.borrow().to_rust_string()),
            other => match mprof_heap::spec::displaced_string(other) {
                Some(chars) => Ok(chars.into_iter().collect()),
                None => Err(self.type_error(other, "STRING")),
            },
        }
    }

    pub fn fixnum_arg(&self, v: Value<'gc>) -> Result<i64, Raise<'gc>> {
        match v {
            Value::Fixnum(i) => Ok(i),
            other => Err(self.type_error(other, "INTEGER")),
        }
    }

    /// A non-negative index argument.
    pub fn index_arg(&self, v: Value<'gc>) -> Result<usize, Raise<'gc>> {
        match v {
            Value::Fixnum(i) if i >= 0 => Ok(i as usize),
            other => Err(self.type_error(other, "(INTEGER 0)")),
        }
    }
}

/// Write `data` into a file held in memory at `pos`, over what is there and
/// past its end; `pos` moves past it.
pub fn write_at(bytes: &mut Vec<u8>, pos: &mut usize, data: &[u8]) {
    let end = *pos + data.len();
    if bytes.len() < end {
        bytes.resize(end, 0);
    }
    bytes[*pos..end].copy_from_slice(data);
    *pos = end;
}

/// Decided text a pretty stream keeps before handing it to its target.
const PRETTY_FLUSH_BYTES: usize = 4096;

/// A pretty stream's column (where its next character goes, after layout).
pub fn pretty_column(st: &mprof_heap::value::Stream) -> usize {
    match &st.kind {
        StreamKind::Pretty(engine) => engine.column(),
        _ => st.column,
    }
}

/// Parse `&key` arguments: one slot per allowed keyword name (without the
/// colon), the first occurrence wins; unknown keywords are an error unless
/// `:allow-other-keys t` is given.
pub(crate) fn keyword_args<'gc>(ctx: &Ctx<'_, 'gc>, a: &[Value<'gc>], allowed: &[&str]) -> Result<Vec<Option<Value<'gc>>>, Raise<'gc>> {
    if !a.len().is_multiple_of(2) {
        return Err(Raise::program("odd number of keyword arguments"));
    }
    let mut out = vec![None; allowed.len()];
    let allow_other = a.chunks(2).any(|p| matches!(p[0], Value::Symbol(s) if &*s.name == "ALLOW-OTHER-KEYS") && p[1].truthy());
    for pair in a.chunks(2) {
        let name = match pair[0] {
            Value::Symbol(s) if s.package.get().is_some_and(|p| gc_arena::Gc::ptr_eq(p, ctx.world.packages.keyword)) => s.name.clone(),
            other => return Err(Raise::program(format!("{} is not a keyword argument name", ctx.print(other, true)))),
        };
        match allowed.iter().position(|k| **k == *name) {
            Some(i) => {
                if out[i].is_none() {
                    out[i] = Some(pair[1]);
                }
            }
            None if allow_other || &*name == "ALLOW-OTHER-KEYS" => {}
            None => {
                return Err(Raise::program(format!("unknown keyword argument :{name}; expected one of {}",
                    allowed.iter().map(|k| format!(":{k}")).collect::<Vec<_>>().join(" "))));
            }
        }
    }
    Ok(out)
}

/// The name a string designator (string, symbol or character) stands for.
pub(crate) fn string_designator<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<String, Raise<'gc>> {
    match v {
        Value::String(s) => Ok(s.borrow().to_rust_string()),
        Value::Symbol(s) => Ok(s.name.to_string()),
        Value::Nil => Ok("NIL".to_string()),
        Value::Char(c) => Ok(c.to_string()),
        other => match mprof_heap::spec::displaced_string(other) {
            Some(chars) => Ok(chars.into_iter().collect()),
            None => Err(ctx.type_error(other, "(OR STRING SYMBOL CHARACTER)")),
        },
    }
}

/// The native file name a pathname designator stands for: a string as it is,
/// a file stream's name, a pathname's native namestring (see
/// `runtime::pathnames`). Every builtin that takes a file goes through here,
/// so pathname objects are accepted wherever a file is.
pub(crate) fn file_name_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<String, Raise<'gc>> {
    match v {
        Value::String(s) => {
            let name = s.borrow().to_rust_string();
            match crate::runtime::pathnames::logical_host_of(ctx.world, &name) {
                None => Ok(name),
                Some(host) => Err(file_error(
                    ctx,
                    v,
                    format!(
                        "{name:?} names a file on the logical host {host}: this function takes a logical \
                         pathname as a pathname object, (pathname {name:?}), or translated, \
                         (translate-logical-pathname {name:?})"
                    ),
                )),
            }
        }
        Value::Stream(s) => Ok(s.borrow().name.clone()),
        Value::Struct(s) if crate::runtime::pathnames::is_pathname(s) => {
            match crate::runtime::pathnames::native_namestring(v) {
                Some(name) => Ok(name),
                None => Err(file_error(
                    ctx,
                    v,
                    format!(
                        "the logical pathname {} has no physical name here: its host had no translations when it was made; \
                         use (translate-logical-pathname pathname)",
                        ctx.print(v, true)
                    ),
                )),
            }
        }
        other => Err(ctx.type_error(other, "(OR STRING PATHNAME STREAM)")),
    }
}

/// A `file-error` about `pathname` (a string or pathname: FILE-ERROR-PATHNAME
/// returns it) with a message.
pub(crate) fn file_error<'gc>(ctx: &Ctx<'_, 'gc>, pathname: Value<'gc>, message: String) -> Raise<'gc> {
    let t = ctx.world.conditions.simple_file_error;
    let control = alloc::string(ctx.mc, &message.replace('~', "~~"));
    Raise::Condition(crate::runtime::conditions::make(
        ctx.mc,
        t,
        &[("PATHNAME", pathname), ("FORMAT-CONTROL", control), ("FORMAT-ARGUMENTS", Value::Nil)],
    ))
}
