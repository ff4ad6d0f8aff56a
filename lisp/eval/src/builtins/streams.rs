//! Input streams: character and byte input (`read-char`, `read-byte`,
//! `peek-char`, `unread-char`, `read-line`, `listen`, `read`) from string
//! streams, files, standard input and the composite streams over them
//! (synonym, two-way, echo, concatenated), string input streams, and the
//! reading of a file for `load`. (Files and binary output are `files.rs`'s; the composite
//! streams' constructors and the stream predicates `composite_streams.rs`'s.)
//!
//! Input files are read whole into a string input stream when opened (so
//! reading never does host I/O and `file-position` is exact); binary and
//! `:io` files into a byte buffer. Standard input is the host's channel 0,
//! read through its `BufRead` so that `peek-char` needs no buffer of its own;
//! characters given back (`unread-char`, the rest of a line after `read`) go
//! to a [`Pushback`] layer installed once on the channel.
//!
//! Invariants:
//! - No builtin here panics on file contents or names: I/O errors become
//!   `file-error`s (opening) or `stream-error`s (reading and writing).
//! - End of file is the standard `end-of-file` condition, with the stream in
//!   its STREAM slot, unless the caller passed `eof-error-p` NIL.
//! - Composite streams are followed by loops bounded by
//!   `composite::MAX_HOPS`, never by Rust recursion; a Gray stream anywhere on
//!   the way makes the builtin hand its call to Lisp (`Raise::Gray`) before
//!   it has read anything.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Read};
use std::rc::{Rc, Weak};

use mprof_heap::value::{Element, StreamKind};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, cl, sys};
use crate::runtime::capabilities::Capability;
use crate::runtime::composite::{self, StreamPtr};
use crate::runtime::ctx::{Ctx, file_name_arg};
use crate::runtime::host::{Channel, Host};
use crate::runtime::raise::{ErrorKind, LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

// ---- conditions ----

/// The `end-of-file` condition for a stream.
pub(crate) fn end_of_file<'gc>(ctx: &Ctx<'_, 'gc>, stream: Value<'gc>) -> Raise<'gc> {
    match ctx.world.find_type(ctx.cl("END-OF-FILE")) {
        Some(t) => Raise::Condition(crate::runtime::conditions::make(ctx.mc, t, &[("STREAM", stream)])),
        None => Raise::simple(ErrorKind::Stream, "end of file"),
    }
}

/// A `file-error` naming the file (its PATHNAME slot holds the name).
pub(crate) fn file_error<'gc>(ctx: &Ctx<'_, 'gc>, path: &str, message: String) -> Raise<'gc> {
    let t = ctx.world.conditions.simple_file_error;
    let name = alloc::string(ctx.mc, path);
    let control = alloc::string(ctx.mc, &message.replace('~', "~~"));
    Raise::Condition(crate::runtime::conditions::make(
        ctx.mc,
        t,
        &[("PATHNAME", name), ("FORMAT-CONTROL", control), ("FORMAT-ARGUMENTS", Value::Nil)],
    ))
}

pub(crate) fn stream_error<'gc>(stream: StreamPtr<'gc>, what: &str) -> Raise<'gc> {
    Raise::simple(ErrorKind::Stream, format!("{what} on the stream {}", stream.borrow().name))
}

pub(crate) fn is_keyword(v: Value<'_>, name: &str) -> bool {
    matches!(v, Value::Symbol(s) if &*s.name == name && s.package.get().is_some_and(|p| &*p.name() == "KEYWORD"))
}

pub(crate) fn stream_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<StreamPtr<'gc>, Raise<'gc>> {
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

// ---- input through any stream ----

/// Where the next element of an input stream comes from, once synonym,
/// two-way, echo and concatenated streams are followed.
enum Leaf<'gc> {
    /// A string input stream (input files are read whole into one).
    Text(StreamPtr<'gc>),
    /// A host input channel.
    Host(StreamPtr<'gc>, u32),
    /// A file held in memory.
    Bytes(StreamPtr<'gc>),
    /// An echo stream's characters given back by `unread-char`.
    Unread(StreamPtr<'gc>),
    /// A concatenated stream with no component left.
    Empty,
}

/// The links a read went through: echo streams (whose output gets what is
/// read) and concatenated streams (whose next component takes over at the end
/// of the current one, with the number of echo streams above it), outermost first.
#[derive(Default)]
struct Path<'gc> {
    echoes: Vec<StreamPtr<'gc>>,
    concats: Vec<(usize, StreamPtr<'gc>)>,
}

/// An element read: a character, or an integer of a binary stream.
#[derive(Clone, Copy)]
enum Elem<'gc> {
    Char(char),
    Int(Value<'gc>),
}

/// The stream an input designator stands for: NIL is *standard-input*, T
/// *terminal-io* (each in its current dynamic binding).
pub(crate) fn input_designator<'gc>(ctx: &Ctx<'_, 'gc>, designator: Option<Value<'gc>>) -> Value<'gc> {
    match designator {
        // Rebuilt from the pointer, not copied: copying the whole value
        // through memory costs a store-forwarding stall on this hot path.
        Some(Value::Stream(s)) => Value::Stream(s),
        None | Some(Value::Nil) => ctx.world.syms.standard_input.value.get(),
        Some(v) if v.eq(ctx.t()) => ctx.world.syms.terminal_io.value.get(),
        Some(v) => v,
    }
}

/// The type-error for a stream that is not an input stream (SBCL's).
fn not_input<'gc>(ctx: &Ctx<'_, 'gc>, s: StreamPtr<'gc>) -> Raise<'gc> {
    ctx.type_error(Value::Stream(s), "(SATISFIES INPUT-STREAM-P)")
}

/// Follow `v` to the stream its next element comes from, noting echo and
/// concatenated streams on the way in `path`. `Raise::Gray` for a Gray stream
/// (or an echo stream echoing to one), before anything is read.
fn walk_input<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>, path: &mut Path<'gc>) -> Result<Leaf<'gc>, Raise<'gc>> {
    let mut cur = v;
    for _ in 0..composite::MAX_HOPS {
        let s = match cur {
            Value::Stream(s) => s,
            other if composite::is_gray(ctx.world, other) => return Err(Raise::Gray),
            other => return Err(ctx.type_error(other, "STREAM")),
        };
        let st = s.borrow();
        if !st.open {
            return Err(composite::closed(&st));
        }
        cur = match &st.kind {
            StreamKind::Synonym { symbol } => composite::synonym_target(*symbol)?,
            StreamKind::TwoWay { input, .. } => *input,
            StreamKind::Echo { input, output, unread } => {
                if !unread.is_empty() {
                    return Ok(Leaf::Unread(s));
                }
                composite::check_output(ctx, *output)?;
                path.echoes.push(s);
                *input
            }
            StreamKind::Concatenated { streams } => match streams.first() {
                Some(first) => {
                    path.concats.push((path.echoes.len(), s));
                    *first
                }
                None => return Ok(Leaf::Empty),
            },
            StreamKind::StringInput { .. } => return Ok(Leaf::Text(s)),
            StreamKind::Host { channel, input: true, .. } => return Ok(Leaf::Host(s, *channel)),
            StreamKind::Bytes { input: true, .. } => return Ok(Leaf::Bytes(s)),
            _ => return Err(not_input(ctx, s)),
        };
    }
    Err(match v {
        Value::Stream(s) => composite::too_deep(&s.borrow()),
        _ => Raise::error("too many composite streams"),
    })
}

/// The character at `pos` of UTF-8 `bytes` and its length in bytes.
fn utf8_at(bytes: &[u8], pos: usize) -> Option<(char, usize)> {
    let first = *bytes.get(pos)?;
    let n = utf8_len(first).min(bytes.len() - pos);
    let c = std::str::from_utf8(&bytes[pos..pos + n]).ok().and_then(|t| t.chars().next()).unwrap_or('\u{FFFD}');
    Some((c, n))
}

fn not_binary<'gc>(ctx: &Ctx<'_, 'gc>, s: StreamPtr<'gc>, binary: bool) -> Raise<'gc> {
    let expected = if binary { "(SATISFIES BINARY-INPUT-STREAM-P)" } else { "(SATISFIES CHARACTER-INPUT-STREAM-P)" };
    ctx.type_error(Value::Stream(s), expected)
}

/// Read (or, `consume` false, look at) the next element of a leaf. Binary
/// elements are always read (nothing looks at them without reading).
fn leaf_read<'gc>(ctx: &mut Ctx<'_, 'gc>, leaf: &Leaf<'gc>, consume: bool, binary: bool) -> Result<Option<Elem<'gc>>, Raise<'gc>> {
    match *leaf {
        Leaf::Empty => Ok(None),
        Leaf::Host(s, ch) => {
            if binary {
                let element = s.borrow().element;
                let mut bytes = Vec::with_capacity(element.bytes());
                while bytes.len() < element.bytes() {
                    match ctx.host.read_byte(ch).map_err(|e| stream_error(s, &e))? {
                        Some(b) => bytes.push(b),
                        None => return Ok(None),
                    }
                }
                return Ok(Some(Elem::Int(super::files::decode_int(ctx.mc, element, &bytes))));
            }
            Ok(host_char(ctx.host, ch, consume).map_err(|e| stream_error(s, &e))?.map(Elem::Char))
        }
        Leaf::Text(s) => {
            if binary {
                return Err(not_binary(ctx, s, true));
            }
            let mut st = alloc::borrow_mut(ctx.mc, s);
            let StreamKind::StringInput { text, pos, .. } = &mut st.kind else { return Ok(None) };
            let c = text.get(*pos).copied();
            if consume && c.is_some() {
                *pos += 1;
            }
            Ok(c.map(Elem::Char))
        }
        Leaf::Bytes(s) => {
            let element = s.borrow().element;
            if binary == (element == Element::Character) {
                return Err(not_binary(ctx, s, binary));
            }
            let mut st = alloc::borrow_mut(ctx.mc, s);
            let StreamKind::Bytes { bytes, pos, .. } = &mut st.kind else { return Ok(None) };
            if binary {
                let size = element.bytes();
                let Some(chunk) = bytes.get(*pos..*pos + size) else { return Ok(None) };
                let v = super::files::decode_int(ctx.mc, element, chunk);
                *pos += size;
                return Ok(Some(Elem::Int(v)));
            }
            match utf8_at(bytes, *pos) {
                Some((c, n)) => {
                    if consume {
                        *pos += n;
                    }
                    Ok(Some(Elem::Char(c)))
                }
                None => Ok(None),
            }
        }
        Leaf::Unread(s) => {
            let mut st = alloc::borrow_mut(ctx.mc, s);
            let StreamKind::Echo { unread, .. } = &mut st.kind else { return Ok(None) };
            let c = if consume { unread.pop() } else { unread.last().copied() };
            Ok(c.map(Elem::Char))
        }
    }
}

/// Send what was read through an echo stream to its output stream.
fn echo_out<'gc>(ctx: &mut Ctx<'_, 'gc>, echo: StreamPtr<'gc>, e: Elem<'gc>) -> Result<(), Raise<'gc>> {
    let output = match &echo.borrow().kind {
        StreamKind::Echo { output, .. } => *output,
        _ => return Ok(()),
    };
    match e {
        Elem::Char(c) => ctx.write_stream(output, c.encode_utf8(&mut [0u8; 4])),
        Elem::Int(b) => super::files::write_byte_to(ctx, output, b),
    }
}

/// The next element of stream `v` (a stream object): read (`consume`) or
/// looked at. What is read through an echo stream is echoed to its output,
/// what is only looked at is not (SBCL's PEEK-CHAR echoes nothing); at the end
/// of a concatenated stream's component the next one takes over.
fn read_elem<'gc>(ctx: &mut Ctx<'_, 'gc>, v: Value<'gc>, consume: bool, binary: bool) -> Result<Option<Elem<'gc>>, Raise<'gc>> {
    let mut path = Path::default();
    let mut from = v;
    loop {
        let leaf = walk_input(ctx, from, &mut path)?;
        match leaf_read(ctx, &leaf, consume, binary)? {
            Some(e) => {
                if consume {
                    for echo in path.echoes.iter().rev() {
                        echo_out(ctx, *echo, e)?;
                    }
                }
                return Ok(Some(e));
            }
            None => match path.concats.pop() {
                Some((echoes, c)) => {
                    if let StreamKind::Concatenated { streams } = &mut alloc::borrow_mut(ctx.mc, c).kind
                        && !streams.is_empty()
                    {
                        streams.remove(0);
                    }
                    path.echoes.truncate(echoes);
                    from = Value::Stream(c);
                }
                None => return Ok(None),
            },
        }
    }
}

/// The eof-error-p / eof-value convention: signal, or return eof-value.
fn at_eof<'gc>(ctx: &mut Ctx<'_, 'gc>, s: Value<'gc>, eof_error_p: Option<Value<'gc>>, eof_value: Option<Value<'gc>>) -> LResult<'gc> {
    if eof_error_p.is_none_or(|v| v.truthy()) {
        return Err(end_of_file(ctx, s));
    }
    Ok(eof_value.unwrap_or(Value::Nil))
}

/// The next character of an open string input stream, read: the common case
/// of READ-CHAR, without the walk through composite streams (None: not one).
fn string_input_char<'gc>(ctx: &Ctx<'_, 'gc>, s: StreamPtr<'gc>) -> Option<Option<char>> {
    if !matches!(s.borrow().kind, StreamKind::StringInput { .. }) {
        return None;
    }
    let mut st = alloc::borrow_mut(ctx.mc, s);
    if !st.open {
        return None;
    }
    let StreamKind::StringInput { text, pos, .. } = &mut st.kind else { return None };
    let c = text.get(*pos).copied();
    *pos += usize::from(c.is_some());
    Some(c)
}

/// (read-char &optional stream eof-error-p eof-value recursive-p)
fn read_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if let Some(Value::Stream(p)) = a.first()
        && let Some(c) = string_input_char(ctx, *p)
    {
        return match c {
            Some(c) => Ok(Value::Char(c)),
            None => at_eof(ctx, Value::Stream(*p), a.get(1).copied(), a.get(2).copied()),
        };
    }
    let s = input_designator(ctx, a.first().copied());
    match read_elem(ctx, s, true, false)? {
        Some(Elem::Char(c)) => Ok(Value::Char(c)),
        Some(Elem::Int(b)) => Ok(b),
        None => at_eof(ctx, s, a.get(1).copied(), a.get(2).copied()),
    }
}

/// (read-byte stream &optional eof-error-p eof-value)
fn read_byte<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match read_elem(ctx, a[0], true, true)? {
        Some(Elem::Int(b)) => Ok(b),
        Some(Elem::Char(c)) => Ok(Value::Char(c)),
        None => at_eof(ctx, a[0], a.get(1).copied(), a.get(2).copied()),
    }
}

/// (sys:%read-bytes stream vector start end): read bytes of a binary stream
/// into a vector of integers; the index after the last one filled (less than
/// END only at the end of the stream). NIL when the stream is not one whose
/// bytes are read here (the Lisp caller then reads byte by byte).
fn read_bytes<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (start, end) = (ctx.index_arg(a[2])?, ctx.index_arg(a[3])?);
    let mut path = Path::default();
    let leaf = match walk_input(ctx, a[0], &mut path) {
        Ok(l) if path.echoes.is_empty() && path.concats.is_empty() => l,
        Ok(_) | Err(Raise::Gray) => return Ok(Value::Nil),
        Err(e) => return Err(e),
    };
    if !matches!(leaf, Leaf::Bytes(_) | Leaf::Host(..)) {
        return Ok(Value::Nil);
    }
    let mut i = start;
    while i < end {
        let Some(e) = leaf_read(ctx, &leaf, true, true)? else { break };
        let v = match e {
            Elem::Int(b) => b,
            Elem::Char(c) => Value::Char(c),
        };
        super::files::store_element(ctx, a[1], i, v)?;
        i += 1;
    }
    Ok(Value::Fixnum(i as i64))
}

/// (peek-char &optional peek-type stream eof-error-p eof-value recursive-p)
fn peek_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let peek_type = a.first().copied().unwrap_or(Value::Nil);
    let s = input_designator(ctx, a.get(1).copied());
    loop {
        let c = match read_elem(ctx, s, false, false)? {
            Some(Elem::Char(c)) => c,
            Some(Elem::Int(_)) => return Err(Raise::simple(ErrorKind::Stream, "PEEK-CHAR on a binary stream")),
            None => return at_eof(ctx, s, a.get(2).copied(), a.get(3).copied()),
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
        read_elem(ctx, s, true, false)?;
    }
}

/// (unread-char character &optional stream)
fn unread_char<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Value::Char(c) = a[0] else {
        return Err(ctx.type_error(a[0], "CHARACTER"));
    };
    let mut cur = input_designator(ctx, a.get(1).copied());
    for _ in 0..composite::MAX_HOPS {
        let s = match cur {
            Value::Stream(s) => s,
            other if composite::is_gray(ctx.world, other) => return Err(Raise::Gray),
            other => return Err(ctx.type_error(other, "STREAM")),
        };
        let mut st = alloc::borrow_mut(ctx.mc, s);
        cur = match &mut st.kind {
            StreamKind::Synonym { symbol } => composite::synonym_target(*symbol)?,
            StreamKind::TwoWay { input, .. } => *input,
            StreamKind::Echo { unread, .. } => {
                unread.push(c);
                return Ok(Value::Nil);
            }
            StreamKind::Concatenated { streams } => match streams.first() {
                Some(first) => *first,
                None => return Ok(Value::Nil),
            },
            StreamKind::Host { channel, input: true, .. } => {
                let ch = *channel;
                drop(st);
                let mut buf = [0u8; 4];
                push_back(ctx.host, ch, c.encode_utf8(&mut buf).as_bytes());
                return Ok(Value::Nil);
            }
            StreamKind::StringInput { pos, .. } => {
                *pos = pos.saturating_sub(1);
                return Ok(Value::Nil);
            }
            StreamKind::Bytes { pos, .. } => {
                *pos = pos.saturating_sub(c.len_utf8());
                return Ok(Value::Nil);
            }
            _ => return Err(not_input(ctx, s)),
        };
    }
    Err(Raise::error("UNREAD-CHAR: too many composite streams"))
}

/// (read-line &optional stream eof-error-p eof-value recursive-p) => line, missing-newline-p
fn read_line<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = input_designator(ctx, a.first().copied());
    let mut path = Path::default();
    let leaf = walk_input(ctx, s, &mut path)?;
    let direct = path.echoes.is_empty() && path.concats.is_empty();
    let line = match leaf {
        Leaf::Host(p, ch) if direct => host_line(ctx.host, ch).map_err(|e| stream_error(p, &e))?,
        Leaf::Text(p) if direct => {
            let mut st = alloc::borrow_mut(ctx.mc, p);
            match &mut st.kind {
                StreamKind::StringInput { text, pos, .. } if *pos < text.len() => {
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
        // Element by element: through echo and concatenated streams, and files held in memory.
        _ => {
            let mut line = String::new();
            let mut newline = false;
            let mut any = false;
            while let Some(e) = read_elem(ctx, s, true, false)? {
                any = true;
                match e {
                    Elem::Char('\n') => {
                        newline = true;
                        break;
                    }
                    Elem::Char(c) => line.push(c),
                    Elem::Int(_) => return Err(Raise::simple(ErrorKind::Stream, "READ-LINE on a binary stream")),
                }
            }
            any.then_some((line, newline))
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

/// (listen &optional stream): whether a character is available without
/// waiting (host input could block: never said to be). A concatenated stream
/// listens to each component in turn.
fn listen<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut todo = vec![input_designator(ctx, a.first().copied())];
    let mut hops = 0;
    while let Some(cur) = todo.pop() {
        hops += 1;
        if hops > composite::MAX_HOPS {
            return Err(Raise::error("LISTEN: too many composite streams"));
        }
        let s = match cur {
            Value::Stream(s) => s,
            other if composite::is_gray(ctx.world, other) => return Err(Raise::Gray),
            other => return Err(ctx.type_error(other, "STREAM")),
        };
        let st = s.borrow();
        if !st.open {
            return Err(composite::closed(&st));
        }
        match &st.kind {
            StreamKind::Synonym { symbol } => todo.push(composite::synonym_target(*symbol)?),
            StreamKind::TwoWay { input, .. } => todo.push(*input),
            StreamKind::Echo { input, unread, .. } => {
                if !unread.is_empty() {
                    return Ok(ctx.t());
                }
                todo.push(*input);
            }
            StreamKind::Concatenated { streams } => todo.extend(streams.iter().rev()),
            StreamKind::StringInput { text, pos, .. } => {
                if *pos < text.len() {
                    return Ok(ctx.t());
                }
            }
            StreamKind::Bytes { bytes, pos, input: true, .. } => {
                if *pos < bytes.len() {
                    return Ok(ctx.t());
                }
            }
            StreamKind::Host { input: true, .. } => {}
            _ => return Err(not_input(ctx, s)),
        }
    }
    Ok(Value::Nil)
}

/// (clear-input &optional stream): nothing is buffered apart from what the
/// program gave back.
fn clear_input<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = input_designator(ctx, a.first().copied());
    walk_input(ctx, s, &mut Path::default())?;
    Ok(Value::Nil)
}

/// The stream the Rust reader reads from: synonym and two-way streams
/// followed to a string input stream or a host channel. Anything else (an
/// echo or concatenated stream, a file held in memory, a Gray stream) is read
/// by the Lisp reader through READ-CHAR (`Raise::Gray`).
fn reader_source<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<(StreamPtr<'gc>, Option<u32>), Raise<'gc>> {
    let mut path = Path::default();
    match walk_input(ctx, v, &mut path)? {
        Leaf::Text(s) if path.echoes.is_empty() && path.concats.is_empty() => Ok((s, None)),
        Leaf::Host(s, ch) if path.echoes.is_empty() && path.concats.is_empty() => Ok((s, Some(ch))),
        _ => Err(Raise::Gray),
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
        StreamKind::StringInput { text, pos, .. } => (text.len().saturating_sub(*pos), *pos),
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
                return Err(end_of_file(ctx, Value::Stream(s)));
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
            ReadResult::Incomplete if all => return Err(end_of_file(ctx, Value::Stream(s))),
            ReadResult::Error(message) => return Err(Raise::simple(ErrorKind::Reader, message)),
            // Only whitespace so far: forget it.
            ReadResult::Nothing => text.clear(),
            ReadResult::Incomplete => {}
        }
    }
}

fn read_common<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, preserve: bool) -> LResult<'gc> {
    let s = input_designator(ctx, a.first().copied());
    let v = match reader_source(ctx, s)? {
        (leaf, Some(ch)) => read_from_host(ctx, leaf, ch, preserve)?,
        (leaf, None) => read_from_text(ctx, leaf, preserve)?,
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
    Ok(alloc::stream(ctx.mc, "string-input", StreamKind::StringInput { text, pos: 0, file: false }))
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

pub const BUILTINS: &[BuiltinDef] = &[
    cl("READ-CHAR", 0, 4, read_char),
    cl("READ-BYTE", 1, 3, read_byte),
    sys("%READ-BYTES", 4, 4, read_bytes),
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
    cl("CLEAR-INPUT", 0, 1, clear_input),
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
    fn standard_input_through_the_terminal_and_composite_streams() {
        let out = run(
            stdin("one\ntwo (a b) three\nfour"),
            "(let ((o (make-string-output-stream)))
               (list (read-line *terminal-io*) (read *query-io*)
                     (let ((e (make-echo-stream *standard-input* o))) (list (read e) (read-char e)))
                     (get-output-stream-string o)
                     (read-line (make-concatenated-stream (make-string-input-stream \"x\") *standard-input*))))",
        );
        // As SBCL: READ takes the space after (a b) too.
        assert_eq!(out, r#"("one" TWO ((A B) #\t) "(a b) t" "xhree")"#);
    }

    #[test]
    fn composite_streams_that_lead_back_to_themselves_are_errors() {
        let out = run(
            stdin(""),
            "(defvar *loop*) (setf *loop* (make-synonym-stream '*loop*))
             (list (handler-case (write-char #\\a *loop*) (stream-error () :output))
                   (handler-case (read-char *loop*) (stream-error () :input))
                   (handler-case (let ((s *standard-output*))
                                   (dotimes (i 20000) (setf s (make-two-way-stream *standard-input* s)))
                                   (print 1 s))
                     (stream-error () :deep)))",
        );
        assert_eq!(out, "(:OUTPUT :INPUT :DEEP)");
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
