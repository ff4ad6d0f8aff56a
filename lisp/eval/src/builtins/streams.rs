//! Streams and files: `open`/`close`, character and line input (`read-char`,
//! `peek-char`, `unread-char`, `read-line`, `read`) from string streams,
//! files and standard input, output flushing, stream predicates, and the file
//! system operation of reading a file
//! for `load`.
//!
//! Input files are read whole into a string input stream when opened (so
//! reading never does host I/O and `file-position` is exact); output files
//! are host channels (`Host::open_output`) written through
//! `Ctx::write_stream`. Standard input is the host's channel 0, read through
//! its `BufRead` so that `peek-char` needs no buffer of its own; characters
//! given back (`unread-char`, the rest of a line after `read`) go to a
//! [`Pushback`] layer installed once on the channel.
//!
//! Invariants:
//! - No builtin here panics on file contents or names: I/O errors become
//!   `file-error`s (opening) or `stream-error`s (reading and writing).
//! - End of file is the standard `end-of-file` condition, with the stream in
//!   its STREAM slot, unless the caller passed `eof-error-p` NIL.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Read};
use std::rc::{Rc, Weak};

use gc_arena::RefLock;
use mprof_heap::value::{Ptr, Stream, StreamKind};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::capabilities::Capability;
use crate::runtime::ctx::{Ctx, file_name_arg};
use crate::runtime::host::{Channel, Host};
use crate::runtime::raise::{ErrorKind, LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];
type StreamPtr<'gc> = Ptr<'gc, RefLock<Stream>>;

// ---- conditions ----

/// The `end-of-file` condition for a stream.
fn end_of_file<'gc>(ctx: &Ctx<'_, 'gc>, stream: StreamPtr<'gc>) -> Raise<'gc> {
    match ctx.world.find_type(ctx.cl("END-OF-FILE")) {
        Some(t) => Raise::Condition(crate::runtime::conditions::make(ctx.mc, t, &[("STREAM", Value::Stream(stream))])),
        None => Raise::simple(ErrorKind::Stream, format!("end of file on {}", stream.borrow().name)),
    }
}

/// A `file-error` naming the file (its PATHNAME slot holds the name).
fn file_error<'gc>(ctx: &Ctx<'_, 'gc>, path: &str, message: String) -> Raise<'gc> {
    let t = ctx.world.conditions.simple_file_error;
    let name = alloc::string(ctx.mc, path);
    let control = alloc::string(ctx.mc, &message.replace('~', "~~"));
    Raise::Condition(crate::runtime::conditions::make(
        ctx.mc,
        t,
        &[("PATHNAME", name), ("FORMAT-CONTROL", control), ("FORMAT-ARGUMENTS", Value::Nil)],
    ))
}

fn stream_error<'gc>(stream: StreamPtr<'gc>, what: &str) -> Raise<'gc> {
    Raise::simple(ErrorKind::Stream, format!("{what} on the stream {}", stream.borrow().name))
}

// ---- designators ----

fn is_keyword(v: Value<'_>, name: &str) -> bool {
    matches!(v, Value::Symbol(s) if &*s.name == name && s.package.get().is_some_and(|p| &*p.name() == "KEYWORD"))
}

/// An input stream designator: NIL is *standard-input*, T *terminal-io*
/// (each in its current dynamic binding).
fn input_stream<'gc>(ctx: &Ctx<'_, 'gc>, designator: Option<Value<'gc>>) -> Result<StreamPtr<'gc>, Raise<'gc>> {
    let v = match designator {
        None | Some(Value::Nil) => ctx.world.syms.standard_input.value.get(),
        Some(v) if v.eq(ctx.t()) => ctx.world.syms.terminal_io.value.get(),
        Some(v) => v,
    };
    match v {
        Value::Stream(s) => {
            let st = s.borrow();
            if !st.open {
                return Err(Raise::simple(ErrorKind::Stream, format!("the stream {} is closed", st.name)));
            }
            match st.kind {
                StreamKind::StringInput { .. } | StreamKind::Host { input: true, .. } => Ok(s),
                _ => Err(Raise::simple(ErrorKind::Stream, format!("the stream {} is not an input stream", st.name))),
            }
        }
        other => Err(ctx.type_error(other, "STREAM")),
    }
}

fn stream_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<StreamPtr<'gc>, Raise<'gc>> {
    match v {
        Value::Stream(s) => Ok(s),
        other => Err(ctx.type_error(other, "STREAM")),
    }
}

// ---- host input with push-back ----

/// A layer over a host input channel holding bytes given back to it.
struct Pushback {
    pending: Rc<RefCell<VecDeque<u8>>>,
    inner: Box<dyn BufRead>,
    /// `fill_buf` must return a slice that outlives the borrow of `pending`.
    front: Vec<u8>,
}

impl Read for Pushback {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Pushback {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.front.is_empty() {
            let mut p = self.pending.borrow_mut();
            self.front.extend(p.drain(..));
        }
        if !self.front.is_empty() {
            return Ok(&self.front);
        }
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        if !self.front.is_empty() {
            let n = amt.min(self.front.len());
            self.front.drain(..n);
        } else {
            self.inner.consume(amt);
        }
    }
}

thread_local! {
    /// The push-back queue of each channel reader wrapped in a [`Pushback`],
    /// keyed by the reader's address; a dead weak pointer means that reader
    /// is gone (another interpreter may reuse the address).
    static PUSHBACK: RefCell<HashMap<usize, Weak<RefCell<VecDeque<u8>>>>> = RefCell::new(HashMap::new());
}

fn reader_address(r: &dyn BufRead) -> usize {
    r as *const dyn BufRead as *const () as usize
}

/// Give bytes back to a host input channel: they are read before anything else.
fn push_back(host: &mut Host, channel: u32, bytes: &[u8]) {
    let Some(Channel::Input(r)) = host.channels.get_mut(channel as usize) else { return };
    let existing = PUSHBACK.with(|m| m.borrow().get(&reader_address(&**r)).and_then(Weak::upgrade));
    let queue = match existing {
        Some(q) => q,
        None => {
            let queue = Rc::new(RefCell::new(VecDeque::new()));
            let inner = std::mem::replace(r, Box::new(std::io::empty()));
            *r = Box::new(Pushback { pending: queue.clone(), inner, front: Vec::new() });
            let key = reader_address(&**r);
            PUSHBACK.with(|m| {
                let mut m = m.borrow_mut();
                m.retain(|_, w| w.strong_count() > 0);
                m.insert(key, Rc::downgrade(&queue));
            });
            queue
        }
    };
    // Before whatever was pushed back earlier: the bytes came after it was read.
    let mut q = queue.borrow_mut();
    for &b in bytes.iter().rev() {
        q.push_front(b);
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Read (or only look at) the next character of a host input channel.
fn host_char(host: &mut Host, channel: u32, consume: bool) -> Result<Option<char>, String> {
    let started = host.io.as_ref().map(|_| std::time::Instant::now());
    let r = host_char_inner(host, channel, consume);
    if let (Some(io), Some(t), Ok(Some(c))) = (host.io.as_mut(), started, &r)
        && consume
    {
        io.read_channel(channel, c.len_utf8() as u64, t.elapsed().as_nanos() as u64);
    }
    r
}

fn host_char_inner(host: &mut Host, channel: u32, consume: bool) -> Result<Option<char>, String> {
    let Some(Channel::Input(r)) = host.channels.get_mut(channel as usize) else {
        return Err("the stream is not open for input".to_string());
    };
    let (c, need, complete) = {
        let buf = r.fill_buf().map_err(|e| e.to_string())?;
        let Some(&first) = buf.first() else { return Ok(None) };
        let need = utf8_len(first);
        if buf.len() >= need {
            let c = std::str::from_utf8(&buf[..need]).ok().and_then(|s| s.chars().next()).unwrap_or('\u{FFFD}');
            (c, need, true)
        } else {
            ('\u{FFFD}', need, false)
        }
    };
    if complete {
        if consume {
            r.consume(need);
        }
        return Ok(Some(c));
    }
    // A character split across the reader's buffer: read its bytes one by one.
    let mut bytes = Vec::with_capacity(need);
    let mut one = [0u8; 1];
    while bytes.len() < need {
        match r.read(&mut one).map_err(|e| e.to_string())? {
            0 => break,
            _ => bytes.push(one[0]),
        }
    }
    let c = std::str::from_utf8(&bytes).ok().and_then(|s| s.chars().next()).unwrap_or('\u{FFFD}');
    if !consume {
        push_back(host, channel, &bytes);
    }
    Ok(Some(c))
}

/// Read a line from a host input channel: (text, whether it ended with a newline).
fn host_line(host: &mut Host, channel: u32) -> Result<Option<(String, bool)>, String> {
    let started = host.io.as_ref().map(|_| std::time::Instant::now());
    let r = host_line_inner(host, channel);
    if let (Some(io), Some(t), Ok(Some((line, newline)))) = (host.io.as_mut(), started, &r) {
        io.read_channel(channel, line.len() as u64 + *newline as u64, t.elapsed().as_nanos() as u64);
    }
    r
}

fn host_line_inner(host: &mut Host, channel: u32) -> Result<Option<(String, bool)>, String> {
    let Some(Channel::Input(r)) = host.channels.get_mut(channel as usize) else {
        return Err("the stream is not open for input".to_string());
    };
    let mut bytes = Vec::new();
    if r.read_until(b'\n', &mut bytes).map_err(|e| e.to_string())? == 0 {
        return Ok(None);
    }
    let newline = bytes.last() == Some(&b'\n');
    if newline {
        bytes.pop();
    }
    Ok(Some((String::from_utf8_lossy(&bytes).into_owned(), newline)))
}

// ---- character input on any input stream ----

enum Source {
    Text,
    Host(u32),
}

fn source(s: StreamPtr<'_>) -> Source {
    match s.borrow().kind {
        // The terminal (*terminal-io*, *query-io*, *debug-io*) is one stream both
        // ways: it writes to standard output and reads from standard input.
        StreamKind::Host { input: true, output: true, .. } => Source::Host(crate::runtime::host::STDIN),
        StreamKind::Host { channel, .. } => Source::Host(channel),
        _ => Source::Text,
    }
}

/// The next character of an input stream, consumed or only looked at.
fn next_char<'gc>(ctx: &mut Ctx<'_, 'gc>, s: StreamPtr<'gc>, consume: bool) -> Result<Option<char>, Raise<'gc>> {
    match source(s) {
        Source::Host(ch) => host_char(ctx.host, ch, consume).map_err(|e| stream_error(s, &e)),
        Source::Text => {
            let mut st = alloc::borrow_mut(ctx.mc, s);
            if let StreamKind::StringInput { text, pos } = &mut st.kind {
                let c = text.get(*pos).copied();
                if consume && c.is_some() {
                    *pos += 1;
                }
                return Ok(c);
            }
            Ok(None)
        }
    }
}

/// The eof-error-p / eof-value convention: signal, or return eof-value.
fn at_eof<'gc>(ctx: &mut Ctx<'_, 'gc>, s: StreamPtr<'gc>, eof_error_p: Option<Value<'gc>>, eof_value: Option<Value<'gc>>) -> LResult<'gc> {
    if eof_error_p.is_none_or(|v| v.truthy()) {
        return Err(end_of_file(ctx, s));
    }
    Ok(eof_value.unwrap_or(Value::Nil))
}

/// The host channel of a file stream for READ-BYTE (input) or WRITE-BYTE
/// (output). Every stream is a character stream, but a file's bytes can be read
/// and written as they are; string streams have no bytes.
fn byte_channel<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>, input: bool) -> Result<(StreamPtr<'gc>, u32), Raise<'gc>> {
    let Value::Stream(s) = v else {
        return Err(ctx.type_error(v, "STREAM"));
    };
    let st = s.borrow();
    if !st.open {
        return Err(Raise::simple(ErrorKind::Stream, format!("the stream {} is closed", st.name)));
    }
    match st.kind {
        StreamKind::Host { channel, input: i, output: o } if (input && i && !o) || (!input && o && !i) => Ok((s, channel)),
        _ => Err(Raise::simple(
            ErrorKind::Stream,
            format!("the stream {} is not a binary {} stream", st.name, if input { "input" } else { "output" }),
        )),
    }
}

/// Whether an element type names integers (a binary stream): (UNSIGNED-BYTE 8),
/// (SIGNED-BYTE 8), BIT, (MOD n), INTEGER...
fn is_byte_type<'gc>(ctx: &Ctx<'_, 'gc>, t: Value<'gc>) -> bool {
    let head = match t {
        Value::Cons(c) => c.car.get(),
        other => other,
    };
    let cl = |n: &str| ctx.world.packages.find_symbol(ctx.world.packages.common_lisp, n).map(|(v, _)| v);
    ["UNSIGNED-BYTE", "SIGNED-BYTE", "BIT", "MOD", "INTEGER", "FIXNUM"].iter().any(|n| cl(n).is_some_and(|v| v.eq(head)))
}

/// (read-byte stream &optional eof-error-p eof-value)
fn read_byte<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if let Value::Stream(s) = a[0]
        && matches!(s.borrow().kind, StreamKind::BytesInput { .. })
    {
        let next = {
            let mut st = alloc::borrow_mut(ctx.mc, s);
            if !st.open {
                return Err(Raise::simple(ErrorKind::Stream, format!("the stream {} is closed", st.name)));
            }
            match &mut st.kind {
                StreamKind::BytesInput { bytes, pos } => {
                    let b = bytes.get(*pos).copied();
                    *pos += usize::from(b.is_some());
                    b
                }
                _ => None,
            }
        };
        return match next {
            Some(b) => Ok(Value::Fixnum(i64::from(b))),
            None => at_eof(ctx, s, a.get(1).copied(), a.get(2).copied()),
        };
    }
    let (s, channel) = byte_channel(ctx, a[0], true)?;
    match ctx.host.read_byte(channel).map_err(|e| stream_error(s, &e))? {
        Some(b) => Ok(Value::Fixnum(i64::from(b))),
        None => at_eof(ctx, s, a.get(1).copied(), a.get(2).copied()),
    }
}

/// (write-byte byte stream)
fn write_byte<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Value::Fixnum(b @ 0..=255) = a[0] else {
        return Err(ctx.type_error(a[0], "(UNSIGNED-BYTE 8)"));
    };
    let (s, channel) = byte_channel(ctx, a[1], false)?;
    ctx.host.write_bytes(channel, &[b as u8]).map_err(|e| stream_error(s, &e))?;
    Ok(a[0])
}

/// (read-char &optional stream eof-error-p eof-value recursive-p)
fn read_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = input_stream(ctx, a.first().copied())?;
    match next_char(ctx, s, true)? {
        Some(c) => Ok(Value::Char(c)),
        None => at_eof(ctx, s, a.get(1).copied(), a.get(2).copied()),
    }
}

/// (peek-char &optional peek-type stream eof-error-p eof-value recursive-p)
fn peek_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let peek_type = a.first().copied().unwrap_or(Value::Nil);
    let s = input_stream(ctx, a.get(1).copied())?;
    loop {
        let Some(c) = next_char(ctx, s, false)? else {
            return at_eof(ctx, s, a.get(2).copied(), a.get(3).copied());
        };
        let wanted = match peek_type {
            Value::Nil => true,
            Value::Char(p) => c == p,
            // T: skip whitespace.
            _ => !matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}'),
        };
        if wanted {
            return Ok(Value::Char(c));
        }
        next_char(ctx, s, true)?;
    }
}

/// (unread-char character &optional stream)
fn unread_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Value::Char(c) = a[0] else {
        return Err(ctx.type_error(a[0], "CHARACTER"));
    };
    let s = input_stream(ctx, a.get(1).copied())?;
    match source(s) {
        Source::Host(ch) => {
            let mut buf = [0u8; 4];
            push_back(ctx.host, ch, c.encode_utf8(&mut buf).as_bytes());
        }
        Source::Text => {
            let mut st = alloc::borrow_mut(ctx.mc, s);
            if let StreamKind::StringInput { pos, .. } = &mut st.kind
                && *pos > 0
            {
                *pos -= 1;
            }
        }
    }
    Ok(Value::Nil)
}

/// (read-line &optional stream eof-error-p eof-value recursive-p) => line, missing-newline-p
fn read_line<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = input_stream(ctx, a.first().copied())?;
    let line = match source(s) {
        Source::Host(ch) => host_line(ctx.host, ch).map_err(|e| stream_error(s, &e))?,
        Source::Text => {
            let mut st = alloc::borrow_mut(ctx.mc, s);
            match &mut st.kind {
                StreamKind::StringInput { text, pos } if *pos < text.len() => {
                    let rest = &text[*pos..];
                    let (line, newline) = match rest.iter().position(|&c| c == '\n') {
                        Some(i) => (rest[..i].iter().collect::<String>(), true),
                        None => (rest.iter().collect::<String>(), false),
                    };
                    *pos += line.chars().count() + usize::from(newline);
                    Some((line, newline))
                }
                _ => None,
            }
        }
    };
    match line {
        Some((text, newline)) => {
            let v = alloc::string(ctx.mc, &text);
            let missing = ctx.bool(!newline);
            Ok(ctx.set_values(&[v, missing]))
        }
        None => {
            let v = at_eof(ctx, s, a.get(1).copied(), a.get(2).copied())?;
            let t = ctx.t();
            Ok(ctx.set_values(&[v, t]))
        }
    }
}

// ---- READ ----

/// What reading one datum from a text gave.
enum ReadResult {
    /// The datum and the number of characters it used (with its terminating whitespace).
    Datum(mprof_reader::Datum, usize),
    /// Only whitespace and comments.
    Nothing,
    /// The text ends inside a datum.
    Incomplete,
    Error(String),
}

/// Read one datum from the start of `text`. A token that touches the end of
/// `text` is reported incomplete unless `all` says no more text follows.
fn read_text(text: &str, all: bool, preserve_whitespace: bool, opts: &mprof_reader::ReadOptions) -> ReadResult {
    match mprof_reader::read_one(text, 0, opts) {
        Ok(Some((datum, end))) => {
            if end >= text.len() && !all {
                return ReadResult::Incomplete;
            }
            let mut used = text[..end].chars().count();
            // READ consumes one whitespace character after the object (SBCL
            // does so after lists and strings too, not only after tokens).
            let next = text[end..].chars().next();
            if !preserve_whitespace && matches!(next, Some(' ' | '\t' | '\n' | '\r' | '\u{c}')) {
                used += 1;
            }
            ReadResult::Datum(datum, used)
        }
        Ok(None) => ReadResult::Nothing,
        Err(e) if e.kind == mprof_reader::ReadErrorKind::Incomplete => ReadResult::Incomplete,
        Err(e) => {
            if all {
                ReadResult::Error(e.to_string())
            } else {
                ReadResult::Incomplete
            }
        }
    }
}

fn datum_value<'gc>(ctx: &Ctx<'_, 'gc>, datum: &mprof_reader::Datum) -> LResult<'gc> {
    let package = ctx.current_package();
    let v = mprof_heap::datum::datum_to_value(ctx.mc, &ctx.world.packages, package, datum)
        .map_err(|e| Raise::simple(ErrorKind::Package, e.error.to_string()))?;
    if crate::runtime::read_time::datum_needs_read_time(datum) {
        crate::runtime::read_time::set_pending(ctx.mc, ctx.world);
    }
    if crate::runtime::labels::datum_has_labels(datum) { crate::runtime::labels::resolve(ctx.mc, ctx.world, v) } else { Ok(v) }
}

/// Read a datum from a string input stream: a growing window of its
/// remaining text, so a long file is not copied once per form.
fn read_from_text<'gc>(ctx: &mut Ctx<'_, 'gc>, s: StreamPtr<'gc>, preserve: bool) -> Result<Option<Value<'gc>>, Raise<'gc>> {
    let (remaining, start) = match &s.borrow().kind {
        StreamKind::StringInput { text, pos } => (text.len().saturating_sub(*pos), *pos),
        _ => (0, 0),
    };
    // Most forms are short: start small, grow fast.
    let mut window = 256usize;
    loop {
        let all = window >= remaining;
        let text: String = match &s.borrow().kind {
            StreamKind::StringInput { text, .. } => text[start..start + window.min(remaining)].iter().collect(),
            _ => String::new(),
        };
        match read_text(&text, all, preserve, &ctx.world.read_options()) {
            ReadResult::Datum(datum, used) => {
                let v = datum_value(ctx, &datum)?;
                if let StreamKind::StringInput { pos, .. } = &mut alloc::borrow_mut(ctx.mc, s).kind {
                    *pos = start + used;
                }
                return Ok(Some(v));
            }
            ReadResult::Nothing if all => {
                if let StreamKind::StringInput { pos, .. } = &mut alloc::borrow_mut(ctx.mc, s).kind {
                    *pos = start + remaining;
                }
                return Ok(None);
            }
            ReadResult::Incomplete if all => {
                if let StreamKind::StringInput { pos, .. } = &mut alloc::borrow_mut(ctx.mc, s).kind {
                    *pos = start + remaining;
                }
                return Err(end_of_file(ctx, s));
            }
            ReadResult::Error(message) => return Err(Raise::simple(ErrorKind::Reader, message)),
            _ => window *= 4,
        }
    }
}

/// Read a datum from a host input channel, a line at a time; what follows
/// the datum on its last line is given back to the channel.
fn read_from_host<'gc>(ctx: &mut Ctx<'_, 'gc>, s: StreamPtr<'gc>, ch: u32, preserve: bool) -> Result<Option<Value<'gc>>, Raise<'gc>> {
    let mut text = String::new();
    loop {
        let line = host_line(ctx.host, ch).map_err(|e| stream_error(s, &e))?;
        let all = line.is_none();
        if let Some((l, newline)) = line {
            text.push_str(&l);
            if newline {
                text.push('\n');
            }
        }
        match read_text(&text, all, preserve, &ctx.world.read_options()) {
            ReadResult::Datum(datum, used) => {
                let v = datum_value(ctx, &datum)?;
                let rest: String = text.chars().skip(used).collect();
                if !rest.is_empty() {
                    push_back(ctx.host, ch, rest.as_bytes());
                }
                return Ok(Some(v));
            }
            ReadResult::Nothing if all => return Ok(None),
            ReadResult::Incomplete if all => return Err(end_of_file(ctx, s)),
            ReadResult::Error(message) => return Err(Raise::simple(ErrorKind::Reader, message)),
            // Only whitespace so far: forget it.
            ReadResult::Nothing => text.clear(),
            ReadResult::Incomplete => {}
        }
    }
}

fn read_common<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, preserve: bool) -> LResult<'gc> {
    let s = input_stream(ctx, a.first().copied())?;
    let v = match source(s) {
        Source::Host(ch) => read_from_host(ctx, s, ch, preserve)?,
        Source::Text => read_from_text(ctx, s, preserve)?,
    };
    match v {
        Some(v) => Ok(v),
        None => at_eof(ctx, s, a.get(1).copied(), a.get(2).copied()),
    }
}

/// (read &optional stream eof-error-p eof-value recursive-p)
fn read<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    read_common(ctx, a, false)
}

fn read_preserving_whitespace<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    read_common(ctx, a, true)
}

// ---- string streams ----

/// (make-string-input-stream string &optional start end)
fn make_string_input_stream<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    // Any string, displaced ones included.
    let chars: Vec<char> = ctx.string_arg(a[0])?.chars().collect();
    let start = match a.get(1) {
        Some(&v) => ctx.index_arg(v)?,
        None => 0,
    };
    let end = match a.get(2) {
        None | Some(Value::Nil) => chars.len(),
        Some(&v) => ctx.index_arg(v)?,
    };
    if start > end || end > chars.len() {
        return Err(Raise::error(format!(
            "The bounding indices {start} and {end} are bad for a string of length {}.",
            chars.len()
        )));
    }
    let text = chars[start..end].to_vec();
    Ok(alloc::stream(ctx.mc, "string-input", StreamKind::StringInput { text, pos: 0 }))
}

/// (sys:%string-input-position stream): characters read so far (for
/// with-input-from-string's :index), counted from the string's start.
fn string_input_position<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    match s.borrow().kind {
        StreamKind::StringInput { pos, .. } => Ok(Value::Fixnum(pos as i64)),
        _ => Err(ctx.type_error(a[0], "STRING-STREAM")),
    }
}

// ---- files ----

/// (open filename &key direction element-type if-exists if-does-not-exist external-format)
fn open<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    let keys = &a[1..];
    if !keys.len().is_multiple_of(2) {
        return Err(Raise::program("odd number of &KEY arguments to OPEN"));
    }
    let (mut direction, mut if_exists, mut if_does_not_exist, mut element_type) = (None, None, None, None);
    for pair in keys.chunks(2) {
        let (k, v) = (pair[0], pair[1]);
        if is_keyword(k, "ELEMENT-TYPE") {
            element_type = element_type.or(Some(v));
        }
        if is_keyword(k, "DIRECTION") {
            direction = direction.or(Some(v));
        } else if is_keyword(k, "IF-EXISTS") {
            if_exists = if_exists.or(Some(v));
        } else if is_keyword(k, "IF-DOES-NOT-EXIST") {
            if_does_not_exist = if_does_not_exist.or(Some(v));
        } else if !(is_keyword(k, "ELEMENT-TYPE") || is_keyword(k, "EXTERNAL-FORMAT")) {
            return Err(Raise::program(format!("{} is not a keyword argument of OPEN", ctx.print(k, true))));
        }
    }
    let direction = direction.unwrap_or_else(|| ctx.kw("INPUT"));
    let reading = is_keyword(direction, "INPUT") || is_keyword(direction, "PROBE");
    ctx.require_file(if reading { Capability::FileRead } else { Capability::FileWrite }, &path)?;
    let exists = std::path::Path::new(&path).exists();
    if is_keyword(direction, "INPUT") || is_keyword(direction, "PROBE") {
        let probe = is_keyword(direction, "PROBE");
        if !exists {
            match if_does_not_exist {
                Some(Value::Nil) => return Ok(Value::Nil),
                Some(v) if is_keyword(v, "CREATE") => {
                    ctx.require_file(Capability::FileWrite, &path)?;
                    std::fs::File::create(&path).map_err(|e| file_error(ctx, &path, format!("cannot create the file {path:?}: {e}")))?;
                }
                _ => return Err(file_error(ctx, &path, format!("The file {path:?} does not exist."))),
            }
        }
        let text = if probe {
            Vec::new()
        } else {
            let started = std::time::Instant::now();
            let bytes = std::fs::read(&path).map_err(|e| file_error(ctx, &path, format!("cannot read the file {path:?}: {e}")))?;
            if let Some(io) = ctx.host.io.as_mut() {
                io.opened(&path, None);
                io.read_file(&path, bytes.len() as u64, started.elapsed().as_nanos() as u64);
            }
            if !probe && element_type.is_some_and(|t| is_byte_type(ctx, t)) {
                return Ok(alloc::stream(ctx.mc, &path, StreamKind::BytesInput { bytes, pos: 0 }));
            }
            String::from_utf8_lossy(&bytes).chars().collect()
        };
        let s = alloc::stream(ctx.mc, &path, StreamKind::StringInput { text, pos: 0 });
        if probe && let Value::Stream(p) = s {
            alloc::borrow_mut(ctx.mc, p).open = false;
        }
        return Ok(s);
    }
    if !is_keyword(direction, "OUTPUT") {
        return Err(Raise::error(format!(
            "OPEN: the direction {} is not supported (use :INPUT or :OUTPUT)",
            ctx.print(direction, true)
        )));
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if exists {
        match if_exists {
            Some(Value::Nil) => return Ok(Value::Nil),
            Some(v) if is_keyword(v, "APPEND") => _ = options.append(true),
            Some(v) if is_keyword(v, "OVERWRITE") => {}
            Some(v)
                if is_keyword(v, "SUPERSEDE")
                    || is_keyword(v, "NEW-VERSION")
                    || is_keyword(v, "RENAME")
                    || is_keyword(v, "RENAME-AND-DELETE") =>
            {
                _ = options.truncate(true)
            }
            _ => return Err(file_error(ctx, &path, format!("The file {path:?} already exists."))),
        }
    } else {
        match if_does_not_exist {
            Some(Value::Nil) => return Ok(Value::Nil),
            Some(v) if is_keyword(v, "ERROR") => {
                return Err(file_error(ctx, &path, format!("The file {path:?} does not exist.")));
            }
            // :create is the default for output, even with :if-exists :append.
            _ => _ = options.create(true),
        }
    }
    let file = options.open(&path).map_err(|e| file_error(ctx, &path, format!("cannot open the file {path:?}: {e}")))?;
    let channel = ctx.host.open_output(Box::new(std::io::BufWriter::new(file)));
    if let Some(io) = ctx.host.io.as_mut() {
        io.opened(&path, Some(channel));
    }
    Ok(alloc::stream(ctx.mc, &path, StreamKind::Host { channel, input: false, output: true }))
}

/// (close stream &key abort)
/// (close stream &key abort)
fn close<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    if a.len() == 2 || (a.len() == 3 && !is_keyword(a[1], "ABORT")) {
        return Err(Raise::program(format!(
            "CLOSE takes a stream and the keyword argument :ABORT, not {}",
            a[1..].iter().map(|v| ctx.print(*v, true)).collect::<Vec<_>>().join(" ")
        )));
    }
    // The process's standard streams stay open, as closing SBCL's *STANDARD-OUTPUT*
    // (a synonym stream) leaves the terminal open: later output must still appear.
    if matches!(s.borrow().kind, StreamKind::Host { channel, .. } if channel <= crate::runtime::host::STDERR) {
        return Ok(ctx.t());
    }
    let mut st = alloc::borrow_mut(ctx.mc, s);
    if st.open {
        st.open = false;
        match &mut st.kind {
            StreamKind::Host { channel, .. } => ctx.host.close(*channel),
            StreamKind::StringInput { text, pos } => {
                // The text is no longer reachable: give its memory back.
                *text = Vec::new();
                *pos = 0;
            }
            StreamKind::BytesInput { bytes, pos } => {
                *bytes = Vec::new();
                *pos = 0;
            }
            StreamKind::StringOutput { .. } | StreamKind::Pretty(_) => {}
        }
    }
    Ok(ctx.t())
}

/// (sys:%read-file filename if-does-not-exist-nil-p) => the file's text, or
/// NIL when it is missing and the caller asked for NIL.
fn read_file<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    ctx.require_file(Capability::FileRead, &path)?;
    let started = std::time::Instant::now();
    match std::fs::read(&path) {
        Ok(bytes) => {
            if let Some(io) = ctx.host.io.as_mut() {
                io.opened(&path, None);
                io.read_file(&path, bytes.len() as u64, started.elapsed().as_nanos() as u64);
            }
            Ok(alloc::string(ctx.mc, &String::from_utf8_lossy(&bytes)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if a.get(1).is_some_and(|v| v.truthy()) {
                Ok(Value::Nil)
            } else {
                Err(file_error(ctx, &path, format!("The file {path:?} does not exist.")))
            }
        }
        Err(e) => Err(file_error(ctx, &path, format!("cannot read the file {path:?}: {e}"))),
    }
}

/// (sys::%stream-name stream): the namestring of a file stream (its name).
fn stream_name<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    Ok(alloc::string(ctx.mc, &path))
}

/// (file-length stream): the length of an input file in characters.
fn file_length<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    match &s.borrow().kind {
        StreamKind::StringInput { text, .. } => Ok(Value::Fixnum(text.len() as i64)),
        _ => Ok(Value::Nil),
    }
}

/// (file-position stream &optional position) for input streams read from text.
fn file_position<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let target = match a.get(1) {
        None => None,
        Some(v) if is_keyword(*v, "START") => Some(0),
        Some(v) if is_keyword(*v, "END") => Some(usize::MAX),
        Some(&v) => Some(ctx.index_arg(v)?),
    };
    let mut st = alloc::borrow_mut(ctx.mc, s);
    match (&mut st.kind, target) {
        (StreamKind::StringInput { pos, .. }, None) => Ok(Value::Fixnum(*pos as i64)),
        (StreamKind::StringInput { text, pos }, Some(t)) => {
            if t != usize::MAX && t > text.len() {
                return Ok(Value::Nil);
            }
            *pos = t.min(text.len());
            Ok(ctx.t())
        }
        (StreamKind::StringOutput { buffer }, None) => Ok(Value::Fixnum(buffer.chars().count() as i64)),
        _ => Ok(Value::Nil),
    }
}

// ---- output control and predicates ----

/// finish-output, force-output and clear-output: flush a host channel.
fn finish_output<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = ctx.output_stream(a.first().copied().unwrap_or(Value::Nil))?;
    if let Value::Stream(p) = s
        && let StreamKind::Host { channel, .. } = p.borrow().kind
    {
        ctx.host.flush(channel);
    }
    Ok(Value::Nil)
}

fn clear_input<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    input_stream(ctx, a.first().copied())?;
    Ok(Value::Nil)
}

fn streamp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Stream(_))))
}

fn input_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let b = matches!(
        s.borrow().kind,
        StreamKind::StringInput { .. } | StreamKind::BytesInput { .. } | StreamKind::Host { input: true, .. }
    );
    Ok(ctx.bool(b))
}

fn output_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let b = matches!(s.borrow().kind, StreamKind::StringOutput { .. } | StreamKind::Host { output: true, .. });
    Ok(ctx.bool(b))
}

fn open_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let open = s.borrow().open;
    Ok(ctx.bool(open))
}

fn interactive_stream_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    stream_arg(ctx, a[0])?;
    Ok(Value::Nil)
}

/// (listen &optional stream): whether a character is available without
/// waiting (string streams only; host input could block).
fn listen<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = input_stream(ctx, a.first().copied())?;
    let b = matches!(&s.borrow().kind, StreamKind::StringInput { text, pos } if *pos < text.len());
    Ok(ctx.bool(b))
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("OPEN", 1, MANY, open),
    cl("CLOSE", 1, 3, close),
    cl("READ-CHAR", 0, 4, read_char),
    cl("READ-BYTE", 1, 3, read_byte),
    cl("WRITE-BYTE", 2, 2, write_byte),
    cl("READ-CHAR-NO-HANG", 0, 4, read_char),
    cl("PEEK-CHAR", 0, 5, peek_char),
    cl("UNREAD-CHAR", 1, 2, unread_char),
    cl("READ-LINE", 0, 4, read_line),
    // READ and READ-PRESERVING-WHITESPACE are Lisp wrappers (prelude/reader.lisp)
    // that finish #. and #nA (see read_time.rs).
    sys("%READ", 0, 4, read),
    sys("%READ-PRESERVING-WHITESPACE", 0, 4, read_preserving_whitespace),
    cl("MAKE-STRING-INPUT-STREAM", 1, 3, make_string_input_stream),
    sys("%STREAM-NAME", 1, 1, stream_name),
    cl("FILE-LENGTH", 1, 1, file_length),
    cl("FILE-POSITION", 1, 2, file_position),
    cl("FINISH-OUTPUT", 0, 1, finish_output),
    cl("FORCE-OUTPUT", 0, 1, finish_output),
    cl("CLEAR-OUTPUT", 0, 1, finish_output),
    cl("CLEAR-INPUT", 0, 1, clear_input),
    cl("STREAMP", 1, 1, streamp),
    cl("INPUT-STREAM-P", 1, 1, input_stream_p),
    cl("OUTPUT-STREAM-P", 1, 1, output_stream_p),
    cl("OPEN-STREAM-P", 1, 1, open_stream_p),
    cl("INTERACTIVE-STREAM-P", 1, 1, interactive_stream_p),
    cl("LISTEN", 0, 1, listen),
    sys("%READ-FILE", 1, 2, read_file),
    sys("%STRING-INPUT-POSITION", 1, 1, string_input_position),
];

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Cursor};

    use crate::runtime::host::Options;
    use crate::interp::Interpreter;

    /// Evaluate `src` with `stdin` as standard input; the printed values of its last form.
    fn run(stdin: Box<dyn BufRead>, src: &str) -> String {
        let mut lisp = Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), stdin, Options::default())
            .expect("the interpreter starts");
        match lisp.eval_source(src, None) {
            Ok(values) => values.join(" "),
            Err(e) => format!("error: {e}"),
        }
    }

    fn stdin(text: &str) -> Box<dyn BufRead> {
        Box::new(Cursor::new(text.as_bytes().to_vec()))
    }

    #[test]
    fn read_line_from_standard_input_reports_the_missing_newline() {
        let out = run(
            stdin("first\nsecond\nlast"),
            "(list (multiple-value-list (read-line)) (multiple-value-list (read-line *standard-input*))
                   (multiple-value-list (read-line t)) (multiple-value-list (read-line nil nil :eof)))",
        );
        assert_eq!(out, r#"(("first" NIL) ("second" NIL) ("last" T) (:EOF T))"#);
    }

    #[test]
    fn characters_from_standard_input_peek_and_unread() {
        let out = run(
            stdin("héllo wörld"),
            "(list (read-char) (peek-char) (read-char) (let ((c (read-char))) (unread-char c) (read-char))
                   (peek-char #\\w) (read-line) (read-char nil nil :end)
                   (handler-case (read-char) (end-of-file () 'eof)))",
        );
        assert_eq!(out, r#"(#\h #\é #\é #\l #\w "wörld" :END EOF)"#);
    }

    #[test]
    fn multibyte_characters_split_across_reads_are_decoded() {
        // A one-byte buffer splits every multibyte character.
        let reader = BufReader::with_capacity(1, Cursor::new("é€x".as_bytes().to_vec()));
        let out = run(Box::new(reader), "(list (peek-char) (read-char) (peek-char) (read-char) (read-char) (read-char nil nil nil))");
        assert_eq!(out, r#"(#\é #\é #\€ #\€ #\x NIL)"#);
    }

    #[test]
    fn read_takes_forms_across_lines_and_gives_back_the_rest() {
        let out = run(
            stdin("(1 2)\n  foo 42\n\"s\" rest of line\n(a\n b\n c) 7"),
            "(list (read) (read) (read) (read) (read-line) (read) (read) (read nil nil :eof))",
        );
        assert_eq!(out, r#"((1 2) FOO 42 "s" "rest of line" (A B C) 7 :EOF)"#);
    }

    #[test]
    fn end_of_input_inside_a_form_is_end_of_file() {
        let out = run(stdin("(1 2"), "(handler-case (read) (end-of-file (c) (streamp (stream-error-stream c))))");
        assert_eq!(out, "T");
        let out = run(stdin("   \n  "), "(read nil nil :nothing)");
        assert_eq!(out, ":NOTHING");
    }

    #[test]
    fn reading_a_long_text_stream_crosses_the_read_window() {
        // Many read windows of forms, and one string longer than several windows.
        let src = "(let* ((text (format nil \"~{~a ~}\\\"~a\\\"\" (loop for i below 3000 collect i) (make-string 9000 :initial-element #\\z)))
                          (s (make-string-input-stream text)) (sum 0))
                     (dotimes (i 3000) (incf sum (read s)))
                     (list sum (length (read s)) (read s nil :eof)))";
        assert_eq!(run(stdin(""), src), "(4498500 9000 :EOF)");
    }
}
