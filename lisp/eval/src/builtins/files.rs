//! File streams and binary output: `open` (character and binary files, for
//! input, output or both), `close`, `file-length`, `file-position`,
//! `write-byte` and the byte-vector fast paths of `read-sequence` and
//! `write-sequence`, `finish-output` and its kin, and what a stream's
//! elements are (`stream-element-type`, `stream-external-format`,
//! `file-string-length`).
//!
//! A file opened for input is read whole when opened (a character file into a
//! string input stream, a binary one into a byte buffer); a file opened for
//! output is a host channel; a file opened `:direction :io` is held in memory
//! (`StreamKind::Bytes`) and written back at `finish-output`, `force-output`
//! and `close`. Binary streams hold bytes: element types of at most 8 bits
//! (`(unsigned-byte 8)`, `(signed-byte 8)`, `bit`, `(mod 256)`...), which
//! `stream-element-type` reports as SBCL upgrades them.
//!
//! Invariants: no builtin here panics on file contents or names (I/O errors
//! are `file-error`s or `stream-error`s); a Gray stream met on the way makes
//! the builtin hand its call to Lisp (`Raise::Gray`) before it writes anything.

use mprof_heap::value::{Element, StreamKind};
use mprof_heap::{Value, alloc};

use super::streams::{file_error, is_keyword, stream_arg, stream_error};
use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::capabilities::Capability;
use crate::runtime::composite::{self, StreamPtr};
use crate::runtime::ctx::{Ctx, file_name_arg, write_at};
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

// ---- element types ----

fn symbol_name(v: Value<'_>) -> Option<&str> {
    match v {
        Value::Symbol(s) => Some(&gc_arena::Gc::as_ref(s).val.name),
        _ => None,
    }
}

/// The number of bits of two's complement an integer needs, sign excluded
/// (CL's INTEGER-LENGTH).
fn integer_length(n: i64) -> u32 {
    if n < 0 { 64 - (!n).leading_zeros() } else { 64 - n.leading_zeros() }
}

/// The largest element type OPEN takes, in bits.
const MAX_ELEMENT_BITS: i64 = 4096;

/// The element type OPEN was given (DEFTYPE names expanded by the Lisp
/// caller), as this interpreter stores it: characters, or integers of n bits
/// in `ceil(n/8)` bytes each; up to 8 bits they are SBCL's upgraded
/// `(unsigned-byte 8)` and `(signed-byte 8)`.
fn element_of<'gc>(ctx: &Ctx<'_, 'gc>, t: Option<Value<'gc>>) -> Result<Element, Raise<'gc>> {
    element_at_depth(ctx, t, 0)
}

fn element_at_depth<'gc>(ctx: &Ctx<'_, 'gc>, t: Option<Value<'gc>>, depth: usize) -> Result<Element, Raise<'gc>> {
    let Some(t) = t else { return Ok(Element::Character) };
    let unsupported = || {
        Raise::error(format!(
            "OPEN: the element type {} is not supported (characters, and integers of at most {MAX_ELEMENT_BITS} bits, are)",
            ctx.print(t, true)
        ))
    };
    let unsigned = |bits: i64| Element::Unsigned(bits.max(8) as u16);
    let signed = |bits: i64| Element::Signed(bits.max(8) as u16);
    if let Some(name) = symbol_name(t) {
        return match name {
            "CHARACTER" | "BASE-CHAR" | "STANDARD-CHAR" | "EXTENDED-CHAR" | "DEFAULT" => Ok(Element::Character),
            "BIT" => Ok(unsigned(8)),
            "SIGNED-BYTE" | "FIXNUM" => Ok(signed(64)),
            "UNSIGNED-BYTE" => Ok(unsigned(64)),
            _ => Err(unsupported()),
        };
    }
    let Value::Cons(c) = t else { return Err(unsupported()) };
    let arg = |i: usize| alloc::list_iter(c.cdr.get()).nth(i);
    let int = |v: Option<Value<'gc>>| match v {
        Some(Value::Fixnum(n)) => Some(n),
        _ => None,
    };
    let bits_ok = |n: i64| (1..=MAX_ELEMENT_BITS).contains(&n);
    match symbol_name(c.car.get()) {
        // A union of integer types: bits enough for each (nested at most 16 deep).
        Some("OR") if depth < 16 => {
            let mut merged: Option<Element> = None;
            for member in alloc::list_iter(c.cdr.get()) {
                let e = element_at_depth(ctx, Some(member), depth + 1)?;
                merged = Some(match (merged, e) {
                    (_, Element::Character) | (Some(Element::Character), _) => return Err(unsupported()),
                    (None, e) => e,
                    (Some(Element::Unsigned(a)), Element::Unsigned(b)) => Element::Unsigned(a.max(b)),
                    (Some(Element::Signed(a) | Element::Unsigned(a)), Element::Signed(b) | Element::Unsigned(b)) => {
                        Element::Signed(a.max(b).saturating_add(1))
                    }
                });
            }
            merged.ok_or_else(unsupported)
        }
        Some("UNSIGNED-BYTE") => match int(arg(0)) {
            Some(n) if bits_ok(n) => Ok(unsigned(n)),
            _ => Err(unsupported()),
        },
        Some("SIGNED-BYTE") => match int(arg(0)) {
            Some(n) if bits_ok(n) => Ok(signed(n)),
            _ => Err(unsupported()),
        },
        Some("MOD") => match int(arg(0)) {
            Some(n) if n >= 1 => Ok(unsigned(i64::from(integer_length(n - 1)))),
            _ => Err(unsupported()),
        },
        Some("INTEGER") => match (int(arg(0)), int(arg(1))) {
            (Some(lo), Some(hi)) if lo >= 0 => Ok(unsigned(i64::from(integer_length(hi)))),
            (Some(lo), Some(hi)) => Ok(signed(i64::from(integer_length(lo).max(integer_length(hi))) + 1)),
            _ => Err(unsupported()),
        },
        _ => Err(unsupported()),
    }
}

/// A stream's element type as a type specifier.
fn element_type_value<'gc>(ctx: &Ctx<'_, 'gc>, e: Element) -> Value<'gc> {
    match e {
        Element::Character => ctx.cl("CHARACTER"),
        Element::Unsigned(n) => alloc::list(ctx.mc, &[ctx.cl("UNSIGNED-BYTE"), Value::Fixnum(i64::from(n))]),
        Element::Signed(n) => alloc::list(ctx.mc, &[ctx.cl("SIGNED-BYTE"), Value::Fixnum(i64::from(n))]),
    }
}

/// The integer element a file's bytes hold (little-endian; two's complement
/// for signed elements; a character stream's bytes are unsigned).
pub(crate) fn decode_int<'gc>(mc: &gc_arena::Mutation<'gc>, e: Element, bytes: &[u8]) -> Value<'gc> {
    if let [b] = bytes {
        return Value::Fixnum(if matches!(e, Element::Signed(_)) { i64::from(*b as i8) } else { i64::from(*b) });
    }
    let n = match e {
        Element::Signed(_) => num_bigint::BigInt::from_signed_bytes_le(bytes),
        _ => num_bigint::BigInt::from_bytes_le(num_bigint::Sign::Plus, bytes),
    };
    alloc::integer(mc, n)
}

/// The bytes an integer element is stored as, or the type-error when the
/// element type does not admit it.
fn encode_int<'gc>(ctx: &Ctx<'_, 'gc>, e: Element, v: Value<'gc>) -> Result<Vec<u8>, Raise<'gc>> {
    let expected = || ctx.type_error(v, "INTEGER");
    let n: num_bigint::BigInt = match v {
        Value::Fixnum(i) => i.into(),
        Value::BigInt(b) => b.0.clone(),
        _ => return Err(expected()),
    };
    let (lo, hi): (num_bigint::BigInt, num_bigint::BigInt) = match e {
        Element::Signed(bits) => {
            let half = num_bigint::BigInt::from(1) << (usize::from(bits) - 1);
            (-half.clone(), half - 1)
        }
        Element::Unsigned(bits) => (0.into(), (num_bigint::BigInt::from(1) << usize::from(bits)) - 1),
        // The process's standard channels take bytes as they are.
        Element::Character => (0.into(), 255.into()),
    };
    if n < lo || n > hi {
        let spec = if e == Element::Character { Element::Unsigned(8) } else { e };
        return Err(Raise::TypeError { datum: v, expected: element_type_value(ctx, spec) });
    }
    let width = e.bytes();
    let mut bytes = n.to_signed_bytes_le();
    let fill = if n.sign() == num_bigint::Sign::Minus { 0xFF } else { 0 };
    bytes.resize(width.max(bytes.len()), fill);
    bytes.truncate(width);
    Ok(bytes)
}

// ---- opening and closing ----

/// (sys:%open filename &key direction element-type if-exists if-does-not-exist
/// external-format): OPEN, whose Lisp wrapper expands DEFTYPE names in the element type.
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
        } else if is_keyword(k, "DIRECTION") {
            direction = direction.or(Some(v));
        } else if is_keyword(k, "IF-EXISTS") {
            if_exists = if_exists.or(Some(v));
        } else if is_keyword(k, "IF-DOES-NOT-EXIST") {
            if_does_not_exist = if_does_not_exist.or(Some(v));
        } else if !is_keyword(k, "EXTERNAL-FORMAT") {
            return Err(Raise::program(format!("{} is not a keyword argument of OPEN", ctx.print(k, true))));
        }
    }
    let element = element_of(ctx, element_type)?;
    let direction = direction.unwrap_or_else(|| ctx.kw("INPUT"));
    let reading = is_keyword(direction, "INPUT") || is_keyword(direction, "PROBE");
    ctx.require_file(if reading { Capability::FileRead } else { Capability::FileWrite }, &path)?;
    let exists = std::path::Path::new(&path).exists();
    if is_keyword(direction, "INPUT") || is_keyword(direction, "PROBE") {
        let probe = is_keyword(direction, "PROBE");
        if !exists {
            match if_does_not_exist {
                // :probe's default is NIL (CLHS OPEN).
                None if probe => return Ok(Value::Nil),
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
            let bytes = read_whole(ctx, &path)?;
            if element != Element::Character {
                let kind = StreamKind::Bytes { bytes, pos: 0, input: true, output: false, dirty: false, fresh: false };
                return Ok(alloc::stream_of(ctx.mc, &path, kind, element));
            }
            String::from_utf8_lossy(&bytes).chars().collect()
        };
        let s = alloc::stream(ctx.mc, &path, StreamKind::StringInput { text, pos: 0, file: true });
        if probe && let Value::Stream(p) = s {
            alloc::borrow_mut(ctx.mc, p).open = false;
        }
        return Ok(s);
    }
    let io = is_keyword(direction, "IO");
    if !io && !is_keyword(direction, "OUTPUT") {
        return Err(Raise::error(format!(
            "OPEN: the direction {} is not one of :INPUT, :OUTPUT, :IO and :PROBE",
            ctx.print(direction, true)
        )));
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    let mut append = false;
    // Made by this OPEN (new, or superseding the file): CLOSE :ABORT T deletes it.
    let mut fresh = !exists;
    if exists {
        match if_exists {
            Some(Value::Nil) => return Ok(Value::Nil),
            Some(v) if is_keyword(v, "APPEND") => {
                append = true;
                if !io {
                    options.append(true);
                }
            }
            Some(v) if is_keyword(v, "OVERWRITE") => {}
            Some(v)
                if is_keyword(v, "SUPERSEDE")
                    || is_keyword(v, "NEW-VERSION")
                    || is_keyword(v, "RENAME")
                    || is_keyword(v, "RENAME-AND-DELETE") =>
            {
                options.truncate(true);
                fresh = true;
            }
            _ => return Err(file_error(ctx, &path, format!("The file {path:?} already exists."))),
        }
    } else {
        // The default is :create, but :error with :if-exists :overwrite or :append (CLHS OPEN).
        let keep = if_exists.is_some_and(|v| is_keyword(v, "OVERWRITE") || is_keyword(v, "APPEND"));
        match if_does_not_exist {
            Some(Value::Nil) => return Ok(Value::Nil),
            Some(v) if is_keyword(v, "ERROR") => {
                return Err(file_error(ctx, &path, format!("The file {path:?} does not exist.")));
            }
            None if keep => return Err(file_error(ctx, &path, format!("The file {path:?} does not exist."))),
            _ => _ = options.create(true),
        }
    }
    let file = options.open(&path).map_err(|e| file_error(ctx, &path, format!("cannot open the file {path:?}: {e}")))?;
    if io {
        drop(file);
        let bytes = read_whole(ctx, &path)?;
        let pos = if append { bytes.len() } else { 0 };
        let kind = StreamKind::Bytes { bytes, pos, input: true, output: true, dirty: false, fresh };
        return Ok(alloc::stream_of(ctx.mc, &path, kind, element));
    }
    let written = if append { file.metadata().map(|m| m.len()).unwrap_or(0) } else { 0 };
    let channel = ctx.host.open_output(Box::new(std::io::BufWriter::new(file)));
    if let Some(io) = ctx.host.io.as_mut() {
        io.opened(&path, Some(channel));
    }
    Ok(alloc::stream_of(ctx.mc, &path, StreamKind::Host { channel, input: false, output: true, written, fresh }, element))
}

/// A file's bytes, counted in the I/O statistics.
fn read_whole<'gc>(ctx: &mut Ctx<'_, 'gc>, path: &str) -> Result<Vec<u8>, Raise<'gc>> {
    let started = std::time::Instant::now();
    let bytes = std::fs::read(path).map_err(|e| file_error(ctx, path, format!("cannot read the file {path:?}: {e}")))?;
    if let Some(io) = ctx.host.io.as_mut() {
        io.opened(path, None);
        io.read_file(path, bytes.len() as u64, started.elapsed().as_nanos() as u64);
    }
    Ok(bytes)
}

/// Write a file held in memory back to its file, if it changed.
fn write_back<'gc>(ctx: &mut Ctx<'_, 'gc>, s: StreamPtr<'gc>) -> Result<(), Raise<'gc>> {
    let mut st = alloc::borrow_mut(ctx.mc, s);
    let name = st.name.clone();
    if let StreamKind::Bytes { bytes, dirty, .. } = &mut st.kind
        && *dirty
    {
        let started = std::time::Instant::now();
        std::fs::write(&name, &bytes[..]).map_err(|e| stream_error(s, &format!("cannot write the file {name:?}: {e}")))?;
        if let Some(io) = ctx.host.io.as_mut() {
            io.write_file(&name, bytes.len() as u64, started.elapsed().as_nanos() as u64);
        }
        *dirty = false;
    }
    Ok(())
}

/// Whether `s` is one of the streams the interpreter made for the process's
/// standard streams, which stay open (later output must still appear, as at
/// the REPL): its channels, and synonym streams to them.
fn standard_stream<'gc>(ctx: &Ctx<'_, 'gc>, s: StreamPtr<'gc>) -> bool {
    let syms = &ctx.world.syms;
    match &s.borrow().kind {
        StreamKind::Host { channel, .. } => *channel <= crate::runtime::host::STDERR,
        StreamKind::Synonym { symbol: Value::Symbol(sym) } => {
            [syms.stdin, syms.stdout, syms.stderr, syms.tty, syms.terminal_io].iter().any(|x| gc_arena::Gc::ptr_eq(*x, *sym))
        }
        _ => false,
    }
}

/// (sys:%close stream &key abort): CLOSE's method for the implementation's
/// streams. Closing a composite stream leaves its components open.
fn close<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    if a.len() == 2 || (a.len() == 3 && !is_keyword(a[1], "ABORT")) {
        return Err(Raise::program(format!(
            "CLOSE takes a stream and the keyword argument :ABORT, not {}",
            a[1..].iter().map(|v| ctx.print(*v, true)).collect::<Vec<_>>().join(" ")
        )));
    }
    let abort = a.get(2).is_some_and(|v| v.truthy());
    if standard_stream(ctx, s) {
        return Ok(ctx.t());
    }
    if !s.borrow().open {
        return Ok(ctx.t());
    }
    if !abort {
        write_back(ctx, s)?;
    }
    let mut st = alloc::borrow_mut(ctx.mc, s);
    st.open = false;
    let name = st.name.clone();
    match &mut st.kind {
        StreamKind::Host { channel, fresh, .. } => {
            ctx.host.close(*channel);
            if abort && *fresh {
                // CLHS CLOSE: the file the stream created is deleted.
                let _ = std::fs::remove_file(&name);
            }
        }
        StreamKind::StringInput { text, pos, .. } => {
            // The text is no longer reachable: give its memory back.
            *text = Vec::new();
            *pos = 0;
        }
        StreamKind::Bytes { bytes, pos, fresh, .. } => {
            *bytes = Vec::new();
            *pos = 0;
            if abort && *fresh {
                let _ = std::fs::remove_file(&name);
            }
        }
        _ => {}
    }
    Ok(ctx.t())
}

// ---- lengths and positions ----

/// Follow synonym streams, and a broadcast stream to its last component
/// (None: a broadcast stream without components).
fn file_target<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Option<StreamPtr<'gc>>, Raise<'gc>> {
    let mut cur = v;
    for _ in 0..composite::MAX_HOPS {
        let s = match cur {
            Value::Stream(s) => s,
            other if composite::is_gray(ctx.world, other) => return Err(Raise::Gray),
            other => return Err(ctx.type_error(other, "STREAM")),
        };
        cur = match &s.borrow().kind {
            StreamKind::Synonym { symbol } => composite::synonym_target(*symbol)?,
            StreamKind::Broadcast { streams } => match streams.last() {
                Some(last) => *last,
                None => return Ok(None),
            },
            _ => return Ok(Some(s)),
        };
    }
    Err(Raise::error("too many composite streams"))
}

/// (file-length stream): the length of a file in elements (characters of a
/// character file read whole, bytes otherwise).
fn file_length<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = match file_target(ctx, a[0]) {
        Ok(Some(s)) => s,
        Ok(None) => return Ok(Value::Fixnum(0)),
        Err(Raise::Gray) => return Err(ctx.type_error(a[0], "FILE-STREAM")),
        Err(e) => return Err(e),
    };
    let (channel, name) = {
        let st = s.borrow();
        match &st.kind {
            StreamKind::StringInput { text, file: true, .. } => return Ok(Value::Fixnum(text.len() as i64)),
            StreamKind::Bytes { bytes, .. } => return Ok(Value::Fixnum((bytes.len() / st.element.bytes()) as i64)),
            StreamKind::Host { channel, .. } if *channel > crate::runtime::host::STDERR => (*channel, st.name.clone()),
            _ => return Err(ctx.type_error(a[0], "FILE-STREAM")),
        }
    };
    ctx.host.flush(channel);
    let size = s.borrow().element.bytes() as u64;
    match std::fs::metadata(&name) {
        Ok(m) => Ok(Value::Fixnum((m.len() / size) as i64)),
        Err(_) => Ok(Value::Nil),
    }
}

/// (file-position stream &optional position)
fn file_position<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let Some(s) = file_target(ctx, a[0])? else {
        return Ok(if a.len() > 1 { Value::Nil } else { Value::Fixnum(0) });
    };
    let target = match a.get(1) {
        None => None,
        Some(v) if is_keyword(*v, "START") => Some(0),
        Some(v) if is_keyword(*v, "END") => Some(usize::MAX),
        Some(&v) => Some(ctx.index_arg(v)?),
    };
    let mut st = alloc::borrow_mut(ctx.mc, s);
    // Files held in memory and output files count elements of `size` bytes.
    let size = st.element.bytes();
    let target = target.map(|t| if t == usize::MAX { t } else { t.saturating_mul(size) });
    match (&mut st.kind, target) {
        (StreamKind::StringInput { pos, .. }, None) => Ok(Value::Fixnum(*pos as i64)),
        (StreamKind::StringInput { text, pos, .. }, Some(t)) => {
            if t != usize::MAX && t > text.len() {
                return Ok(Value::Nil);
            }
            *pos = t.min(text.len());
            Ok(ctx.t())
        }
        (StreamKind::Bytes { pos, .. }, None) => Ok(Value::Fixnum((*pos / size) as i64)),
        (StreamKind::Bytes { bytes, pos, output, .. }, Some(t)) => {
            // Past the end only for output (the gap fills with zeros when written).
            if t == usize::MAX {
                *pos = bytes.len();
            } else if t <= bytes.len() || *output {
                *pos = t;
            } else {
                return Ok(Value::Nil);
            }
            Ok(ctx.t())
        }
        (StreamKind::StringOutput { buffer }, None) => Ok(Value::Fixnum(buffer.chars().count() as i64)),
        (StreamKind::Host { channel, written, .. }, None) if *channel > crate::runtime::host::STDERR => {
            Ok(Value::Fixnum((*written / size as u64) as i64))
        }
        _ => Ok(Value::Nil),
    }
}

// ---- output ----

/// Write one integer element to every stream output to `v` reaches.
pub(crate) fn write_byte_to<'gc>(ctx: &mut Ctx<'_, 'gc>, v: Value<'gc>, b: Value<'gc>) -> Result<(), Raise<'gc>> {
    let mut leaves = Vec::new();
    composite::output_leaves(ctx, v, &mut leaves)?;
    for leaf in leaves {
        write_ints_to_leaf(ctx, leaf, &[b])?;
    }
    Ok(())
}

fn write_ints_to_leaf<'gc>(ctx: &mut Ctx<'_, 'gc>, s: StreamPtr<'gc>, items: &[Value<'gc>]) -> Result<(), Raise<'gc>> {
    let (element, binary) = {
        let st = s.borrow();
        if !st.open {
            return Err(composite::closed(&st));
        }
        let binary = match &st.kind {
            StreamKind::Host { channel, output: true, .. } => {
                st.element != Element::Character || *channel <= crate::runtime::host::STDERR
            }
            StreamKind::Bytes { output: true, .. } => st.element != Element::Character,
            _ => false,
        };
        (st.element, binary)
    };
    if !binary {
        return Err(ctx.type_error(Value::Stream(s), "(SATISFIES BINARY-OUTPUT-STREAM-P)"));
    }
    let mut data = Vec::with_capacity(items.len() * element.bytes());
    for &v in items {
        data.extend(encode_int(ctx, element, v)?);
    }
    let mut st = alloc::borrow_mut(ctx.mc, s);
    match &mut st.kind {
        StreamKind::Host { channel, written, .. } => {
            let ch = *channel;
            *written += data.len() as u64;
            drop(st);
            ctx.host.write_bytes(ch, &data).map_err(|e| stream_error(s, &e))
        }
        StreamKind::Bytes { bytes, pos, dirty, .. } => {
            write_at(bytes, pos, &data);
            *dirty = true;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// (write-byte byte stream): STREAM is a stream (not a designator).
fn write_byte<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !matches!(a[1], Value::Stream(_)) && !composite::is_gray(ctx.world, a[1]) {
        return Err(ctx.type_error(a[1], "STREAM"));
    }
    let s = ctx.output_stream(a[1])?;
    if !matches!(a[0], Value::Fixnum(_) | Value::BigInt(_)) {
        return Err(ctx.type_error(a[0], "INTEGER"));
    }
    write_byte_to(ctx, s, a[0])?;
    Ok(a[0])
}

/// (sys:%write-bytes stream vector start end): write the integers of a vector
/// to a binary stream; T, or NIL when the stream (a Gray stream, or a
/// composite stream reaching one) is left to the Lisp caller.
fn write_bytes<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (start, end) = (ctx.index_arg(a[2])?, ctx.index_arg(a[3])?);
    let mut leaves = Vec::new();
    match composite::output_leaves(ctx, a[0], &mut leaves) {
        Ok(()) => {}
        Err(Raise::Gray) => return Ok(Value::Nil),
        Err(e) => return Err(e),
    }
    let mut items = Vec::with_capacity(end.saturating_sub(start));
    for i in start..end {
        match element_at(a[1], i) {
            Some(v) => items.push(v),
            None => return Err(ctx.type_error(a[1], "VECTOR")),
        }
    }
    for leaf in leaves {
        write_ints_to_leaf(ctx, leaf, &items)?;
    }
    Ok(ctx.t())
}

/// Element `i` of a vector (general or specialized), if it has one.
fn element_at<'gc>(v: Value<'gc>, i: usize) -> Option<Value<'gc>> {
    match v {
        Value::Vector(x) => x.borrow().items.get(i).copied(),
        Value::SpecArray(_) => match mprof_heap::spec::get(v, i)? {
            mprof_heap::spec::Elem::Value(x) => Some(x),
            mprof_heap::spec::Elem::Double(_) => None,
        },
        _ => None,
    }
}

/// Store `x` at index `i` of a vector (general, string or specialized).
pub(crate) fn store_element<'gc>(ctx: &mut Ctx<'_, 'gc>, vector: Value<'gc>, i: usize, x: Value<'gc>) -> Result<(), Raise<'gc>> {
    match vector {
        Value::Vector(v) => {
            let mut b = alloc::borrow_mut(ctx.mc, v);
            match b.items.get_mut(i) {
                Some(slot) => *slot = x,
                None => return Err(ctx.type_error(Value::Fixnum(i as i64), "(INTEGER 0)")),
            }
        }
        Value::String(s) => {
            let Value::Char(c) = x else { return Err(ctx.type_error(x, "CHARACTER")) };
            if let Some(slot) = alloc::borrow_mut(ctx.mc, s).chars.get_mut(i) {
                *slot = c;
            }
        }
        Value::SpecArray(a) => {
            let et = a.borrow().element_type;
            if !et.admits(x) {
                let expected = crate::runtime::arrays::element_type_value(ctx, et);
                return Err(Raise::TypeError { datum: x, expected });
            }
            mprof_heap::spec::set(ctx.mc, vector, i, mprof_heap::spec::Elem::Value(x));
        }
        other => return Err(ctx.type_error(other, "VECTOR")),
    }
    Ok(())
}

/// finish-output and force-output: flush what output to the stream reaches
/// (files held in memory are written back).
fn finish_output<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = ctx.output_stream(a.first().copied().unwrap_or(Value::Nil))?;
    let mut leaves = Vec::new();
    composite::output_leaves(ctx, s, &mut leaves)?;
    for leaf in leaves {
        let channel = match leaf.borrow().kind {
            StreamKind::Host { channel, .. } => Some(channel),
            _ => None,
        };
        match channel {
            Some(ch) => ctx.host.flush(ch),
            None => write_back(ctx, leaf)?,
        }
    }
    Ok(Value::Nil)
}

/// clear-output: nothing waits to be discarded.
fn clear_output<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    ctx.output_stream(a.first().copied().unwrap_or(Value::Nil))?;
    Ok(Value::Nil)
}

// ---- what a stream's elements are ----

/// (sys:%stream-element-type stream) for a stream that is not composite.
fn stream_element_type<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let e = s.borrow().element;
    Ok(element_type_value(ctx, e))
}

/// (sys:%stream-external-format stream) for a stream that is not composite:
/// :UTF-8 for character files and the standard streams, :LATIN-1 for binary
/// files, NIL for string streams (as SBCL's).
fn stream_external_format<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = stream_arg(ctx, a[0])?;
    let st = s.borrow();
    Ok(match &st.kind {
        StreamKind::StringOutput { .. } | StreamKind::Pretty(_) => Value::Nil,
        StreamKind::StringInput { .. } if st.name == STRING_INPUT_NAME => Value::Nil,
        _ if st.element != Element::Character => ctx.kw("LATIN-1"),
        _ => ctx.kw("UTF-8"),
    })
}

/// The name of string input streams (input files are named by their file).
pub(crate) const STRING_INPUT_NAME: &str = "string-input";

/// (file-string-length stream object): how many elements writing OBJECT (a
/// string or character) would take in a character file: its UTF-8 bytes.
fn file_string_length<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let s = match file_target(ctx, a[0]) {
        Ok(Some(s)) => s,
        Ok(None) => return Ok(Value::Fixnum(1)),
        Err(Raise::Gray) => return Err(ctx.type_error(a[0], "FILE-STREAM")),
        Err(e) => return Err(e),
    };
    if !matches!(s.borrow().kind, StreamKind::Host { .. } | StreamKind::Bytes { .. } | StreamKind::StringInput { .. }) {
        return Err(ctx.type_error(a[0], "FILE-STREAM"));
    }
    let n = match a[1] {
        Value::Char(c) => c.len_utf8(),
        other => match ctx.string_arg(other) {
            Ok(text) => text.len(),
            Err(_) => return Err(ctx.type_error(other, "(OR STRING CHARACTER)")),
        },
    };
    Ok(Value::Fixnum(n as i64))
}

pub const BUILTINS: &[BuiltinDef] = &[
    sys("%OPEN", 1, MANY, open),
    sys("%CLOSE", 1, 3, close),
    cl("WRITE-BYTE", 2, 2, write_byte),
    sys("%WRITE-BYTES", 4, 4, write_bytes),
    cl("FILE-LENGTH", 1, 1, file_length),
    cl("FILE-POSITION", 1, 2, file_position),
    cl("FINISH-OUTPUT", 0, 1, finish_output),
    cl("FORCE-OUTPUT", 0, 1, finish_output),
    cl("CLEAR-OUTPUT", 0, 1, clear_output),
    sys("%STREAM-ELEMENT-TYPE", 1, 1, stream_element_type),
    sys("%STREAM-EXTERNAL-FORMAT", 1, 1, stream_external_format),
    cl("FILE-STRING-LENGTH", 2, 2, file_string_length),
];
