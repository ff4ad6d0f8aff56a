//! The profile file: a versioned, self-describing, compact binary format.
//!
//! This is the contract between the monitor phase and the display phase (profiler/FORMAT.md
//! is the same description for readers of the repository). It is written from `Profile`
//! field by field, never by serializing internal types, so either side can change its
//! structures freely.
//!
//! Wire format. `varint` is unsigned LEB128 (7 bits per byte, low group first); `str` is
//! a varint byte length followed by UTF-8.
//!
//! ```text
//! file     := MAGIC version:varint section* end
//! MAGIC    := 89 4D 50 52 4F 46 0D 0A              ("\x89MPROF\r\n")
//! section  := tag:varint length:varint payload[length]
//! end      := 00 00                                (tag 0, length 0)
//! tag 1 HEADER    language:varint (0 Lisp, 1 C)
//! tag 2 SCHEME    n:varint (letter:varint(code point) name:str)*n           n in 1..=64
//! tag 3 METADATA  n:varint (key:str value:str)*n
//! tag 4 FUNCTIONS n:varint (name:str flags:varint [file:str] [line:varint] [module:str])*n
//!                 flags bit 0: file present, bit 1: line, bit 2: module
//! tag 5 TYPES     n:varint (name:str)*n
//! tag 6 NODES     n:varint node*n, node 0 first (the root)
//!                 node := parent_gap:varint func:varint call_site:varint recursion:varint
//!                         mask:varint (allocs bytes frees freed_bytes : varint)* per set bit
//!                 parent_gap is 0 for the root, else index - parent index (>= 1);
//!                 func is 0 for the root, else function index + 1;
//!                 mask bit k set = counters of category k follow (all-zero ones are omitted)
//! tag 7 BINS      n:varint (kind:varint [key:varint] allocs bytes frees freed_bytes
//!                 nlabels:varint label:str*nlabels)*n
//!                 kind 0: size = key (0..=1024); 1: larger than 1024 (no key); 2: type = key
//! tag 8 ERRORS    n:varint (kind:varint node:varint address:varint count:varint)*n
//!                 kind 0 double free, 1 invalid free, 2 realloc of freed
//! tag 9 SAMPLES   n:varint (time_ns live_bytes allocated_bytes : varint)*n
//! tag 10 TIME     clock:str resolution_ps read_cost_ps compensation_ps elapsed_ns
//!                 n:varint tnode*n, node 0 first (the root)
//!                 tnode := parent_gap func calls recursion self_ns instructions : varint
//!                 (parent_gap and func as in NODES; functions from FUNCTIONS)
//! tag 11 SOURCES  n:varint (path:str bytes:varint hash:varint)*n     hash: FNV-1a 64
//! tag 12 COUNTS   n:varint (source start length line column kind:varint function:str
//!                 depth count:varint)*n
//!                 kind 0 function entry, 1 branch, 2 body form, 3 top-level form
//! tag 13 IO       n:varint (stream:str opens reads writes bytes_read bytes_written
//!                 time_ns : varint)*n
//! tag 14 FIGURES  n:varint (name:str nrows:varint (node count bytes : varint)*nrows)*n
//!                 named per-node figures; names distinct, nodes below the NODES count,
//!                 each node at most once per figure
//! tag 15 SAMPLE_CATEGORIES  n:varint (live:varint * 4)*n   live bytes per category of
//!                 each sample of SAMPLES (same n, same order); absent when not split
//! tag 16 MODULES  n:varint (path:str flags:varint build_id:bytes bias:varint
//!                 [debug_link:str])*n      (version 2) a raw profile's modules
//!                 flags bit 0: the main program, bit 1: debug_link present;
//!                 bytes := length:varint byte*length
//! tag 17 ADDRESSES n:varint (func:varint module:varint address:varint)*n  (version 2)
//!                 the return address each function of a raw profile stands for;
//!                 func is a function index (each at most once), module 0 for none
//!                 else module index + 1, address relative to the module's load bias
//! ```
//!
//! Version 2 added MODULES and ADDRESSES: libmprof writes return addresses and the
//! modules they lie in, and `mprof` symbolizes them when it reads the file. A version-1
//! reader refuses such a file naming both versions; this reader reads both.
//!
//! HEADER, SCHEME, FUNCTIONS and NODES are required, and a section may only refer to
//! sections before it (SCHEME and FUNCTIONS before NODES, TYPES before BINS, NODES before
//! ERRORS, FUNCTIONS before TIME, SOURCES before COUNTS, NODES before FIGURES, SAMPLES
//! before SAMPLE_CATEGORIES). Sections 10-15 were added in version 1 without a bump: older readers skip them. Sections with unknown tags are skipped, so a later version may add sections
//! without breaking older readers; changing the layout of a known section bumps
//! `FORMAT_VERSION`, and readers refuse versions newer than theirs, naming both.
//! A known section must be consumed exactly by its payload; anything else is corruption,
//! reported with the byte offset and what was expected there. The reader never panics and
//! never allocates more than the input's size justifies.

use std::fmt;

use crate::exec::{ClockInfo, CountKind, CountPoint, Exec, IoRow, SourceFile, TimeNode, TimeProfile};
use crate::model::{FuncId, FunctionInfo, HeapErrorKind, ModuleInfo, NodeId, RawAddress, Sample, TypeId};
use crate::profile::{BinKey, BinRow, Counters, Figure, HeapError, Node, Profile};
use crate::scheme::{Category, CategoryScheme, Language, LARGEST_SIZE_BIN};

pub const MAGIC: &[u8; 8] = b"\x89MPROF\r\n";
pub const FORMAT_VERSION: u64 = 2;

/// Counter slots (nodes times categories) a NODES section may claim beyond one per byte
/// left in the file: room for a small tree of a many-category scheme.
const MIN_COUNTER_SLOTS: u64 = 4096;

const TAG_END: u64 = 0;
const TAG_HEADER: u64 = 1;
const TAG_SCHEME: u64 = 2;
const TAG_METADATA: u64 = 3;
const TAG_FUNCTIONS: u64 = 4;
const TAG_TYPES: u64 = 5;
const TAG_NODES: u64 = 6;
const TAG_BINS: u64 = 7;
const TAG_ERRORS: u64 = 8;
const TAG_SAMPLES: u64 = 9;
const TAG_TIME: u64 = 10;
const TAG_SOURCES: u64 = 11;
const TAG_COUNTS: u64 = 12;
const TAG_IO: u64 = 13;
const TAG_FIGURES: u64 = 14;
const TAG_SAMPLE_CATEGORIES: u64 = 15;
const TAG_MODULES: u64 = 16;
const TAG_ADDRESSES: u64 = 17;
const LAST_KNOWN_TAG: u64 = TAG_ADDRESSES;

fn section_name(tag: u64) -> &'static str {
    match tag {
        TAG_HEADER => "HEADER",
        TAG_SCHEME => "SCHEME",
        TAG_METADATA => "METADATA",
        TAG_FUNCTIONS => "FUNCTIONS",
        TAG_TYPES => "TYPES",
        TAG_NODES => "NODES",
        TAG_BINS => "BINS",
        TAG_ERRORS => "ERRORS",
        TAG_SAMPLES => "SAMPLES",
        TAG_TIME => "TIME",
        TAG_SOURCES => "SOURCES",
        TAG_COUNTS => "COUNTS",
        TAG_IO => "IO",
        TAG_FIGURES => "FIGURES",
        TAG_SAMPLE_CATEGORIES => "SAMPLE_CATEGORIES",
        TAG_MODULES => "MODULES",
        TAG_ADDRESSES => "ADDRESSES",
        _ => "unknown",
    }
}

/// Why a file could not be read. Every variant says where and what was expected.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum FormatError {
    /// The first bytes are not the magic number.
    NotAProfile { found: Vec<u8> },
    /// The file was written by a newer mprof.
    NewerVersion { found: u64, supported: u64 },
    /// The file ends where more was expected.
    Truncated { offset: usize, expected: String },
    /// A value is out of range or inconsistent.
    Invalid { offset: usize, expected: String, found: String },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::NotAProfile { found } => {
                write!(f, "not an mprof profile: at offset 0, expected the magic bytes 89 4D 50 52 4F 46 0D 0A, found")?;
                if found.is_empty() {
                    return write!(f, " an empty file");
                }
                for b in found {
                    write!(f, " {b:02X}")?;
                }
                Ok(())
            }
            FormatError::NewerVersion { found, supported } => write!(
                f,
                "profile format version {found} is newer than this mprof reads (version {supported}); read it with a newer mprof"
            ),
            FormatError::Truncated { offset, expected } => {
                write!(f, "truncated profile: at offset {offset}, expected {expected}, found the end of the file")
            }
            FormatError::Invalid { offset, expected, found } => {
                write!(f, "corrupt profile: at offset {offset}, expected {expected}, found {found}")
            }
        }
    }
}

impl std::error::Error for FormatError {}

// ---------------------------------------------------------------- writing

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_section(out: &mut Vec<u8>, tag: u64, payload: &[u8]) {
    put_varint(out, tag);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

fn put_counters(out: &mut Vec<u8>, c: &Counters) {
    put_varint(out, c.allocs);
    put_varint(out, c.bytes);
    put_varint(out, c.frees);
    put_varint(out, c.freed_bytes);
}

/// A tree node's link: its parent as a gap back from its own index (0 for the root) and
/// its function as index + 1 (0 for the root). Shared by NODES and TIME.
fn put_tree_link(out: &mut Vec<u8>, index: usize, parent: Option<NodeId>, func: FuncId) {
    let gap = match parent {
        Some(parent) => (index as u64).wrapping_sub(parent.0 as u64),
        None => 0,
    };
    put_varint(out, gap);
    put_varint(out, if func == FuncId::NONE { 0 } else { func.0 as u64 + 1 });
}

fn error_kind_code(kind: HeapErrorKind) -> u64 {
    match kind {
        HeapErrorKind::DoubleFree => 0,
        HeapErrorKind::InvalidFree => 1,
        HeapErrorKind::ReallocOfFreed => 2,
    }
}

impl Profile {
    /// Writes the profile file (format described above and in profiler/FORMAT.md).
    pub fn write(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        w.write_all(&encode(self))
    }

    /// Reads a profile file; errors name the offset and what was expected.
    pub fn read(bytes: &[u8]) -> Result<Profile, FormatError> {
        decode(bytes)
    }
}

/// Encodes a profile. A profile that breaks the invariants of `Profile::validate` is
/// still written faithfully; the reader will then reject it with a precise message.
pub fn encode(p: &Profile) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + p.nodes.len() * 12);
    out.extend_from_slice(MAGIC);
    put_varint(&mut out, FORMAT_VERSION);
    let mut s = Vec::new();

    put_varint(&mut s, if p.language == Language::Lisp { 0 } else { 1 });
    put_section(&mut out, TAG_HEADER, &s);

    s.clear();
    put_varint(&mut s, p.scheme.categories.len() as u64);
    for c in &p.scheme.categories {
        put_varint(&mut s, c.letter as u64);
        put_str(&mut s, &c.name);
    }
    put_section(&mut out, TAG_SCHEME, &s);

    if !p.metadata.is_empty() {
        s.clear();
        put_varint(&mut s, p.metadata.len() as u64);
        for (k, v) in &p.metadata {
            put_str(&mut s, k);
            put_str(&mut s, v);
        }
        put_section(&mut out, TAG_METADATA, &s);
    }

    s.clear();
    put_varint(&mut s, p.functions.len() as u64);
    for f in &p.functions {
        put_str(&mut s, &f.name);
        let flags = f.file.is_some() as u64 | (f.line.is_some() as u64) << 1 | (f.module.is_some() as u64) << 2;
        put_varint(&mut s, flags);
        if let Some(file) = &f.file {
            put_str(&mut s, file);
        }
        if let Some(line) = f.line {
            put_varint(&mut s, line as u64);
        }
        if let Some(module) = &f.module {
            put_str(&mut s, module);
        }
    }
    put_section(&mut out, TAG_FUNCTIONS, &s);

    if !p.types.is_empty() {
        s.clear();
        put_varint(&mut s, p.types.len() as u64);
        for t in &p.types {
            put_str(&mut s, t);
        }
        put_section(&mut out, TAG_TYPES, &s);
    }

    s.clear();
    put_varint(&mut s, p.nodes.len() as u64);
    for (i, n) in p.nodes.iter().enumerate() {
        put_tree_link(&mut s, i, n.parent, n.func);
        put_varint(&mut s, n.call_site);
        put_varint(&mut s, n.recursion);
        let mask = n
            .counters
            .iter()
            .enumerate()
            .take(64)
            .filter(|(_, c)| !c.is_zero())
            .fold(0u64, |m, (k, _)| m | 1 << k);
        put_varint(&mut s, mask);
        for c in n.counters.iter().take(64).filter(|c| !c.is_zero()) {
            put_counters(&mut s, c);
        }
    }
    put_section(&mut out, TAG_NODES, &s);

    if !p.bins.is_empty() {
        s.clear();
        put_varint(&mut s, p.bins.len() as u64);
        for b in &p.bins {
            match b.key {
                BinKey::Size(size) => {
                    put_varint(&mut s, 0);
                    put_varint(&mut s, size);
                }
                BinKey::Larger => put_varint(&mut s, 1),
                BinKey::Type(t) => {
                    put_varint(&mut s, 2);
                    put_varint(&mut s, t.0 as u64);
                }
            }
            put_counters(&mut s, &b.counters);
            put_varint(&mut s, b.labels.len() as u64);
            for l in &b.labels {
                put_str(&mut s, l);
            }
        }
        put_section(&mut out, TAG_BINS, &s);
    }

    if !p.errors.is_empty() {
        s.clear();
        put_varint(&mut s, p.errors.len() as u64);
        for e in &p.errors {
            put_varint(&mut s, error_kind_code(e.kind));
            put_varint(&mut s, e.node.0 as u64);
            put_varint(&mut s, e.address);
            put_varint(&mut s, e.count);
        }
        put_section(&mut out, TAG_ERRORS, &s);
    }

    if !p.samples.is_empty() {
        s.clear();
        put_varint(&mut s, p.samples.len() as u64);
        for x in &p.samples {
            put_varint(&mut s, x.time_ns);
            put_varint(&mut s, x.live_bytes);
            put_varint(&mut s, x.allocated_bytes);
        }
        put_section(&mut out, TAG_SAMPLES, &s);
        if p.samples.iter().any(|x| x.live_by_category.iter().any(|&b| b != 0)) {
            s.clear();
            put_varint(&mut s, p.samples.len() as u64);
            for x in &p.samples {
                for &b in &x.live_by_category {
                    put_varint(&mut s, b);
                }
            }
            put_section(&mut out, TAG_SAMPLE_CATEGORIES, &s);
        }
    }

    encode_exec(&mut out, &p.exec);

    if !p.figures.is_empty() {
        s.clear();
        put_varint(&mut s, p.figures.len() as u64);
        for f in &p.figures {
            put_str(&mut s, &f.name);
            put_varint(&mut s, f.rows.len() as u64);
            for &(node, count, bytes) in &f.rows {
                put_varint(&mut s, node.0 as u64);
                put_varint(&mut s, count);
                put_varint(&mut s, bytes);
            }
        }
        put_section(&mut out, TAG_FIGURES, &s);
    }
    if !p.modules.is_empty() {
        s.clear();
        put_varint(&mut s, p.modules.len() as u64);
        for m in &p.modules {
            put_str(&mut s, &m.path);
            put_varint(&mut s, m.executable as u64 | (m.debug_link.is_some() as u64) << 1);
            put_varint(&mut s, m.build_id.len() as u64);
            s.extend_from_slice(&m.build_id);
            put_varint(&mut s, m.bias);
            if let Some(link) = &m.debug_link {
                put_str(&mut s, link);
            }
        }
        put_section(&mut out, TAG_MODULES, &s);
    }
    if !p.addresses.is_empty() {
        s.clear();
        put_varint(&mut s, p.addresses.len() as u64);
        for a in &p.addresses {
            put_varint(&mut s, a.func.0 as u64);
            put_varint(&mut s, a.module.map_or(0, |m| m as u64 + 1));
            put_varint(&mut s, a.address);
        }
        put_section(&mut out, TAG_ADDRESSES, &s);
    }
    put_varint(&mut out, TAG_END);
    put_varint(&mut out, 0);
    out
}

fn encode_exec(out: &mut Vec<u8>, e: &Exec) {
    let mut s = Vec::new();
    if let Some(t) = &e.time {
        put_str(&mut s, &t.clock.source);
        for v in [t.clock.resolution_ps, t.clock.read_cost_ps, t.clock.compensation_ps, t.clock.elapsed_ns] {
            put_varint(&mut s, v);
        }
        put_varint(&mut s, t.nodes.len() as u64);
        for (i, n) in t.nodes.iter().enumerate() {
            put_tree_link(&mut s, i, n.parent, n.func);
            for v in [n.calls, n.recursion, n.self_ns, n.instructions] {
                put_varint(&mut s, v);
            }
        }
        put_section(out, TAG_TIME, &s);
    }
    if !e.sources.is_empty() || !e.counts.is_empty() {
        s.clear();
        put_varint(&mut s, e.sources.len() as u64);
        for f in &e.sources {
            put_str(&mut s, &f.path);
            put_varint(&mut s, f.bytes);
            put_varint(&mut s, f.hash);
        }
        put_section(out, TAG_SOURCES, &s);
        s.clear();
        put_varint(&mut s, e.counts.len() as u64);
        for c in &e.counts {
            put_varint(&mut s, c.source as u64);
            put_varint(&mut s, c.start);
            put_varint(&mut s, c.end.saturating_sub(c.start));
            put_varint(&mut s, c.line as u64);
            put_varint(&mut s, c.column as u64);
            put_varint(&mut s, c.kind.code());
            put_str(&mut s, &c.function);
            put_varint(&mut s, c.depth as u64);
            put_varint(&mut s, c.count);
        }
        put_section(out, TAG_COUNTS, &s);
    }
    if !e.io.is_empty() {
        s.clear();
        put_varint(&mut s, e.io.len() as u64);
        for r in &e.io {
            put_str(&mut s, &r.stream);
            for v in [r.opens, r.reads, r.writes, r.bytes_read, r.bytes_written, r.time_ns] {
                put_varint(&mut s, v);
            }
        }
        put_section(out, TAG_IO, &s);
    }
}

// ---------------------------------------------------------------- reading

fn more_bytes(n: usize) -> String {
    if n == 1 { "1 more byte".into() } else { format!("{n} more bytes") }
}

/// A description of what is being read, built only when an error needs it (reading
/// must not format a string per field).
trait What {
    fn text(self) -> String;
}

impl What for &str {
    fn text(self) -> String {
        self.to_string()
    }
}

impl What for &String {
    fn text(self) -> String {
        self.clone()
    }
}

impl<F: FnOnce() -> String> What for F {
    fn text(self) -> String {
        self()
    }
}

/// A cursor over one slice whose offsets are reported relative to the whole file.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    fn offset(&self) -> usize {
        self.base + self.pos
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn truncated(&self, expected: &str) -> FormatError {
        FormatError::Truncated { offset: self.offset(), expected: expected.to_string() }
    }

    fn invalid(&self, at: usize, expected: &str, found: String) -> FormatError {
        FormatError::Invalid { offset: at, expected: expected.to_string(), found }
    }

    fn varint(&mut self, what: impl What) -> Result<u64, FormatError> {
        let start = self.offset();
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.truncated(&what.text()));
            };
            self.pos += 1;
            let low = (b & 0x7f) as u64;
            if shift == 63 && low > 1 {
                return Err(self.invalid(start, &what.text(), "a varint larger than 64 bits".into()));
            }
            value |= low << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.invalid(start, &what.text(), "a varint longer than 10 bytes".into()))
    }

    /// A varint that must be at most `max`.
    fn bounded(&mut self, what: impl What + Copy, max: u64) -> Result<u64, FormatError> {
        let at = self.offset();
        let v = self.varint(what)?;
        if v > max {
            return Err(self.invalid(at, &format!("{} (at most {max})", what.text()), v.to_string()));
        }
        Ok(v)
    }

    /// An element count: each element takes at least one byte, so a count larger than
    /// what is left is corruption (and must not drive an allocation).
    fn count(&mut self, what: &str) -> Result<usize, FormatError> {
        let at = self.offset();
        let n = self.varint(what)?;
        if n > self.remaining() as u64 {
            return Err(self.invalid(
                at,
                &format!("{what} (at most {} with {} bytes left)", self.remaining(), self.remaining()),
                n.to_string(),
            ));
        }
        Ok(n as usize)
    }

    fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], FormatError> {
        if n > self.remaining() {
            return Err(self.truncated(&format!("{n} bytes of {what}")));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn string(&mut self, what: impl Fn() -> String) -> Result<String, FormatError> {
        let n = self.varint(|| format!("the length of {}", what()))?;
        let at = self.offset();
        if n > self.remaining() as u64 {
            return Err(self.truncated(&format!("{n} bytes of {}", what())));
        }
        let raw = self.bytes(n as usize, "a string")?;
        String::from_utf8(raw.to_vec()).map_err(|e| {
            self.invalid(at + e.utf8_error().valid_up_to(), &format!("UTF-8 text in {}", what()), "an invalid byte".into())
        })
    }

    /// Reads the link written by `put_tree_link` for node `i` of a tree whose nodes are
    /// called `kind` in messages ("node", "time node"), checking it against the nodes
    /// before it and the `nfunc` functions.
    fn tree_link(&mut self, i: usize, nfunc: u64, kind: &str) -> Result<(Option<NodeId>, FuncId), FormatError> {
        let at = self.offset();
        let gap = self.varint(|| format!("the parent gap of {kind} {i}"))?;
        let parent = match (i, gap) {
            (0, 0) => None,
            (0, _) => return Err(self.invalid(at, &format!("parent gap 0 for the root ({kind} 0)"), gap.to_string())),
            (_, g) if g >= 1 && g <= i as u64 => Some(NodeId((i as u64 - g) as u32)),
            _ => return Err(self.invalid(at, &format!("a parent gap between 1 and {i} for {kind} {i}"), gap.to_string())),
        };
        let at = self.offset();
        let func = self.varint(|| format!("the function of {kind} {i}"))?;
        let func = match (i, func) {
            (0, 0) => FuncId::NONE,
            (0, _) => return Err(self.invalid(at, "function 0 (none) for the root", func.to_string())),
            (_, f) if f >= 1 && f <= nfunc => FuncId((f - 1) as u32),
            _ => {
                let expected = format!("a function number between 1 and {nfunc} for {kind} {i}");
                return Err(self.invalid(at, &expected, func.to_string()));
            }
        };
        Ok((parent, func))
    }

    fn counters(&mut self, what: impl Fn() -> String) -> Result<Counters, FormatError> {
        Ok(Counters {
            allocs: self.varint(|| format!("the allocation count of {}", what()))?,
            bytes: self.varint(|| format!("the byte count of {}", what()))?,
            frees: self.varint(|| format!("the free count of {}", what()))?,
            freed_bytes: self.varint(|| format!("the freed byte count of {}", what()))?,
        })
    }
}

/// Decodes a profile file (see the module comment for the format).
pub fn decode(bytes: &[u8]) -> Result<Profile, FormatError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(FormatError::NotAProfile { found: bytes[..bytes.len().min(MAGIC.len())].to_vec() });
    }
    let mut r = Reader { bytes, pos: MAGIC.len(), base: 0 };
    let version = r.varint("the format version")?;
    if version > FORMAT_VERSION {
        return Err(FormatError::NewerVersion { found: version, supported: FORMAT_VERSION });
    }
    if version == 0 {
        return Err(r.invalid(MAGIC.len(), "a format version of at least 1", "0".into()));
    }
    let mut d = Decoded::default();
    loop {
        let tag_at = r.offset();
        let tag = r.varint("a section tag (or the end marker 00 00)")?;
        let len = r.varint(|| format!("the length of section {} ({})", tag, section_name(tag)))?;
        if tag == TAG_END {
            if len != 0 {
                return Err(r.invalid(tag_at + 1, "length 0 after the end marker", len.to_string()));
            }
            break;
        }
        if len > r.remaining() as u64 {
            return Err(r.truncated(&format!("{len} bytes of section {} ({})", tag, section_name(tag))));
        }
        let payload_at = r.offset();
        let payload = r.bytes(len as usize, "a section")?;
        let mut s = Reader { bytes: payload, pos: 0, base: payload_at };
        if (TAG_HEADER..=LAST_KNOWN_TAG).contains(&tag) {
            if d.seen & (1 << tag) != 0 {
                return Err(s.invalid(tag_at, "each section at most once", format!("a second {} section", section_name(tag))));
            }
            d.seen |= 1 << tag;
            d.section(tag, &mut s, tag_at)?;
            if s.remaining() != 0 {
                return Err(s.invalid(
                    s.offset(),
                    &format!("the end of section {}", section_name(tag)),
                    more_bytes(s.remaining()),
                ));
            }
        }
        // Unknown sections are skipped: they belong to a newer writer of the same version.
    }
    if r.remaining() != 0 {
        return Err(r.invalid(r.offset(), "the end of the file after the end marker", more_bytes(r.remaining())));
    }
    d.finish(r.offset())
}

#[derive(Default)]
struct Decoded {
    seen: u64,
    language: Option<Language>,
    scheme: Option<CategoryScheme>,
    metadata: Vec<(String, String)>,
    functions: Option<Vec<FunctionInfo>>,
    types: Vec<String>,
    nodes: Option<Vec<Node>>,
    bins: Vec<BinRow>,
    errors: Vec<HeapError>,
    samples: Vec<Sample>,
    figures: Vec<Figure>,
    exec: Exec,
    modules: Vec<ModuleInfo>,
    addresses: Vec<RawAddress>,
}

impl Decoded {
    fn section(&mut self, tag: u64, s: &mut Reader<'_>, tag_at: usize) -> Result<(), FormatError> {
        match tag {
            TAG_HEADER => {
                let at = s.offset();
                self.language = Some(match s.varint("the language")? {
                    0 => Language::Lisp,
                    1 => Language::C,
                    v => return Err(s.invalid(at, "the language (0 Lisp or 1 C)", v.to_string())),
                });
            }
            TAG_SCHEME => {
                let at = s.offset();
                let n = s.count("the number of categories")?;
                if n == 0 || n > 64 {
                    return Err(s.invalid(at, "between 1 and 64 categories", n.to_string()));
                }
                let mut categories = Vec::with_capacity(n);
                for k in 0..n {
                    let at = s.offset();
                    let code = s.varint(|| format!("the letter of category {k}"))?;
                    let letter = u32::try_from(code)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| s.invalid(at, &format!("a character for category {k}"), code.to_string()))?;
                    let name = s.string(|| format!("the name of category {k}"))?;
                    categories.push(Category { letter, name });
                }
                self.scheme = Some(CategoryScheme { categories });
            }
            TAG_METADATA => {
                let n = s.count("the number of metadata entries")?;
                for k in 0..n {
                    let key = s.string(|| format!("the key of metadata entry {k}"))?;
                    let value = s.string(|| format!("the value of metadata entry {k}"))?;
                    self.metadata.push((key, value));
                }
            }
            TAG_FUNCTIONS => {
                let n = s.count("the number of functions")?;
                let mut functions = Vec::with_capacity(n);
                for k in 0..n {
                    let name = s.string(|| format!("the name of function {k}"))?;
                    let flags = s.bounded(&format!("the flags of function {k}"), 7)?;
                    let file = if flags & 1 != 0 { Some(s.string(|| format!("the file of function {k}"))?) } else { None };
                    let line = if flags & 2 != 0 {
                        Some(s.bounded(&format!("the line of function {k}"), u32::MAX as u64)? as u32)
                    } else {
                        None
                    };
                    let module =
                        if flags & 4 != 0 { Some(s.string(|| format!("the module of function {k}"))?) } else { None };
                    functions.push(FunctionInfo { name, file, line, module });
                }
                self.functions = Some(functions);
            }
            TAG_TYPES => {
                let at = s.offset();
                let n = s.count("the number of types")?;
                if n > u16::MAX as usize + 1 {
                    return Err(s.invalid(at, "at most 65536 types", n.to_string()));
                }
                for k in 0..n {
                    self.types.push(s.string(|| format!("the name of type {k}"))?);
                }
            }
            TAG_NODES => {
                let ncat = match &self.scheme {
                    Some(scheme) => scheme.len(),
                    None => return Err(s.invalid(tag_at, "the SCHEME section before NODES", "NODES".into())),
                };
                let nfunc = match &self.functions {
                    Some(f) => f.len() as u64,
                    None => return Err(s.invalid(tag_at, "the FUNCTIONS section before NODES", "NODES".into())),
                };
                let at = s.offset();
                let n = s.count("the number of nodes")?;
                if n == 0 || n > u32::MAX as usize {
                    return Err(s.invalid(at, "at least the root node", n.to_string()));
                }
                // Every node holds `ncat` counters in memory however few bytes it took in
                // the file (a node with no counts is five bytes). Real schemes have four
                // categories, so a real file never needs more than one counter per byte
                // left; a crafted one claiming many nodes of 64 categories would make
                // reading cost hundreds of times its size.
                let slots = (n as u64).saturating_mul(ncat as u64);
                if slots > s.remaining() as u64 + MIN_COUNTER_SLOTS {
                    return Err(s.invalid(
                        at,
                        &format!(
                            "at most {} nodes of {ncat} categories in the {} bytes left",
                            (s.remaining() as u64 + MIN_COUNTER_SLOTS) / ncat as u64,
                            s.remaining()
                        ),
                        n.to_string(),
                    ));
                }
                let mut nodes = Vec::with_capacity(n);
                for i in 0..n {
                    let what = || format!("node {i}");
                    let (parent, func) = s.tree_link(i, nfunc, "node")?;
                    let call_site = s.varint(|| format!("the call site of {}", what()))?;
                    let recursion = s.varint(|| format!("the recursion count of {}", what()))?;
                    let at = s.offset();
                    let mask = s.varint(|| format!("the category mask of {}", what()))?;
                    if ncat < 64 && mask >> ncat != 0 {
                        return Err(s.invalid(
                            at,
                            &format!("a category mask below {} for {}", 1u64 << ncat, what()),
                            mask.to_string(),
                        ));
                    }
                    let mut counters = vec![Counters::default(); ncat];
                    for (k, c) in counters.iter_mut().enumerate() {
                        if mask & (1 << k) != 0 {
                            *c = s.counters(|| format!("{}, category {k}", what()))?;
                        }
                    }
                    nodes.push(Node { parent, func, call_site, recursion, counters });
                }
                self.nodes = Some(nodes);
            }
            TAG_BINS => {
                let n = s.count("the number of bins")?;
                for k in 0..n {
                    let at = s.offset();
                    let key = match s.varint(|| format!("the kind of bin {k}"))? {
                        0 => BinKey::Size(s.bounded(&format!("the size of bin {k}"), LARGEST_SIZE_BIN)?),
                        1 => BinKey::Larger,
                        2 => {
                            let at = s.offset();
                            let t = s.varint(|| format!("the type of bin {k}"))?;
                            if t >= self.types.len() as u64 {
                                return Err(s.invalid(
                                    at,
                                    &format!("a type number below {} (TYPES comes before BINS)", self.types.len()),
                                    t.to_string(),
                                ));
                            }
                            BinKey::Type(TypeId(t as u16))
                        }
                        v => return Err(s.invalid(at, &format!("the kind of bin {k} (0, 1 or 2)"), v.to_string())),
                    };
                    let counters = s.counters(|| format!("bin {k}"))?;
                    let nl = s.count(&format!("the number of labels of bin {k}"))?;
                    let mut labels = Vec::with_capacity(nl);
                    for j in 0..nl {
                        labels.push(s.string(|| format!("label {j} of bin {k}"))?);
                    }
                    self.bins.push(BinRow { key, counters, labels });
                }
            }
            TAG_ERRORS => {
                let Some(nodes) = &self.nodes else {
                    return Err(s.invalid(tag_at, "the NODES section before ERRORS", "ERRORS".into()));
                };
                let nnodes = nodes.len() as u64;
                let n = s.count("the number of heap errors")?;
                for k in 0..n {
                    let at = s.offset();
                    let kind = match s.varint(|| format!("the kind of heap error {k}"))? {
                        0 => HeapErrorKind::DoubleFree,
                        1 => HeapErrorKind::InvalidFree,
                        2 => HeapErrorKind::ReallocOfFreed,
                        v => return Err(s.invalid(at, &format!("the kind of heap error {k} (0, 1 or 2)"), v.to_string())),
                    };
                    let at = s.offset();
                    let node = s.varint(|| format!("the node of heap error {k}"))?;
                    if node >= nnodes {
                        return Err(s.invalid(at, &format!("a node number below {nnodes}"), node.to_string()));
                    }
                    let address = s.varint(|| format!("the address of heap error {k}"))?;
                    let count = s.varint(|| format!("the count of heap error {k}"))?;
                    self.errors.push(HeapError { kind, node: NodeId(node as u32), address, count });
                }
            }
            TAG_SAMPLES => {
                let n = s.count("the number of samples")?;
                for k in 0..n {
                    self.samples.push(Sample {
                        time_ns: s.varint(|| format!("the time of sample {k}"))?,
                        live_bytes: s.varint(|| format!("the live bytes of sample {k}"))?,
                        allocated_bytes: s.varint(|| format!("the allocated bytes of sample {k}"))?,
                        ..Sample::default()
                    });
                }
            }
            TAG_SAMPLE_CATEGORIES => {
                let n = s.count("the number of samples split by category")?;
                if n != self.samples.len() {
                    return Err(s.invalid(
                        tag_at,
                        &format!("as many samples as SAMPLES holds ({})", self.samples.len()),
                        n.to_string(),
                    ));
                }
                for k in 0..n {
                    for c in 0..crate::model::SAMPLE_CATEGORIES {
                        self.samples[k].live_by_category[c] =
                            s.varint(|| format!("the live bytes of category {c} in sample {k}"))?;
                    }
                }
            }
            TAG_TIME => {
                let Some(functions) = &self.functions else {
                    return Err(s.invalid(tag_at, "the FUNCTIONS section before TIME", "TIME".into()));
                };
                let nfunc = functions.len() as u64;
                let source = s.string(|| "the clock's name".into())?;
                let clock = ClockInfo {
                    source,
                    resolution_ps: s.varint("the clock resolution")?,
                    read_cost_ps: s.varint("the clock read cost")?,
                    compensation_ps: s.varint("the clock compensation")?,
                    elapsed_ns: s.varint("the elapsed time")?,
                };
                let at = s.offset();
                let n = s.count("the number of time nodes")?;
                if n == 0 || n > u32::MAX as usize {
                    return Err(s.invalid(at, "at least the root time node", n.to_string()));
                }
                let mut nodes = Vec::with_capacity(n);
                for i in 0..n {
                    let (parent, func) = s.tree_link(i, nfunc, "time node")?;
                    nodes.push(TimeNode {
                        parent,
                        func,
                        calls: s.varint(|| format!("the calls of time node {i}"))?,
                        recursion: s.varint(|| format!("the recursion of time node {i}"))?,
                        self_ns: s.varint(|| format!("the self time of time node {i}"))?,
                        instructions: s.varint(|| format!("the instructions of time node {i}"))?,
                    });
                }
                self.exec.time = Some(TimeProfile { clock, nodes });
            }
            TAG_SOURCES => {
                let n = s.count("the number of sources")?;
                for k in 0..n {
                    let path = s.string(|| format!("the path of source {k}"))?;
                    let bytes = s.varint(|| format!("the size of source {k}"))?;
                    let hash = s.varint(|| format!("the hash of source {k}"))?;
                    self.exec.sources.push(SourceFile { path, bytes, hash });
                }
            }
            TAG_COUNTS => {
                if self.seen & (1 << TAG_SOURCES) == 0 {
                    return Err(s.invalid(tag_at, "the SOURCES section before COUNTS", "COUNTS".into()));
                }
                let nsrc = self.exec.sources.len() as u64;
                let n = s.count("the number of count points")?;
                for k in 0..n {
                    let at = s.offset();
                    let source = s.varint(|| format!("the source of count point {k}"))?;
                    if source >= nsrc {
                        return Err(s.invalid(at, &format!("a source number below {nsrc}"), source.to_string()));
                    }
                    let start = s.varint(|| format!("the start of count point {k}"))?;
                    let length = s.varint(|| format!("the length of count point {k}"))?;
                    let line = s.bounded(&format!("the line of count point {k}"), u32::MAX as u64)? as u32;
                    let column = s.bounded(&format!("the column of count point {k}"), u32::MAX as u64)? as u32;
                    let at = s.offset();
                    let code = s.varint(|| format!("the kind of count point {k}"))?;
                    let kind = CountKind::from_code(code)
                        .ok_or_else(|| s.invalid(at, &format!("the kind of count point {k} (0 to 3)"), code.to_string()))?;
                    let function = s.string(|| format!("the function of count point {k}"))?;
                    let depth = s.bounded(&format!("the depth of count point {k}"), u32::MAX as u64)? as u32;
                    let count = s.varint(|| format!("the count of count point {k}"))?;
                    self.exec.counts.push(CountPoint {
                        source: source as u32,
                        start,
                        end: start.saturating_add(length),
                        line,
                        column,
                        kind,
                        function,
                        depth,
                        count,
                    });
                }
            }
            TAG_IO => {
                let n = s.count("the number of I/O rows")?;
                for k in 0..n {
                    let stream = s.string(|| format!("the stream of I/O row {k}"))?;
                    let mut v = [0u64; 6];
                    for (j, x) in v.iter_mut().enumerate() {
                        *x = s.varint(|| format!("field {j} of I/O row {k}"))?;
                    }
                    self.exec.io.push(IoRow {
                        stream,
                        opens: v[0],
                        reads: v[1],
                        writes: v[2],
                        bytes_read: v[3],
                        bytes_written: v[4],
                        time_ns: v[5],
                    });
                }
            }
            TAG_FIGURES => {
                let Some(nodes) = &self.nodes else {
                    return Err(s.invalid(tag_at, "the NODES section before FIGURES", "FIGURES".into()));
                };
                let nnodes = nodes.len() as u64;
                let n = s.count("the number of figures")?;
                // A set, not a scan of the figures so far: a crafted file with many
                // figures must not cost quadratic time.
                let mut names = std::collections::HashSet::with_capacity(n);
                for k in 0..n {
                    let at = s.offset();
                    let name = s.string(|| format!("the name of figure {k}"))?;
                    if name.is_empty() || !names.insert(name.clone()) {
                        return Err(s.invalid(at, &format!("a new, non-empty name for figure {k}"), format!("{name:?}")));
                    }
                    // Each row takes at least three bytes, so `count` bounds the rows by
                    // what is left and the set below by the file's size.
                    let nrows = s.count(&format!("the number of rows of figure {k}"))?;
                    let mut rows = Vec::with_capacity(nrows);
                    let mut seen = std::collections::HashSet::with_capacity(nrows);
                    for j in 0..nrows {
                        let at = s.offset();
                        let node = s.varint(|| format!("the node of row {j} of figure {k}"))?;
                        if node >= nnodes || !seen.insert(node) {
                            return Err(s.invalid(
                                at,
                                &format!("a node number below {nnodes}, not yet in figure {k}"),
                                node.to_string(),
                            ));
                        }
                        let count = s.varint(|| format!("the count of row {j} of figure {k}"))?;
                        let bytes = s.varint(|| format!("the bytes of row {j} of figure {k}"))?;
                        rows.push((NodeId(node as u32), count, bytes));
                    }
                    self.figures.push(Figure { name, rows });
                }
            }
            TAG_MODULES | TAG_ADDRESSES => self.raw_section(tag, s, tag_at)?,
            _ => {}
        }
        Ok(())
    }

    fn finish(self, end: usize) -> Result<Profile, FormatError> {
        let missing = |name: &str| FormatError::Invalid {
            offset: end,
            expected: format!("a {name} section before the end marker"),
            found: "none".into(),
        };
        Ok(Profile {
            language: self.language.ok_or_else(|| missing("HEADER"))?,
            scheme: self.scheme.ok_or_else(|| missing("SCHEME"))?,
            functions: self.functions.ok_or_else(|| missing("FUNCTIONS"))?,
            nodes: self.nodes.ok_or_else(|| missing("NODES"))?,
            types: self.types,
            bins: self.bins,
            errors: self.errors,
            samples: self.samples,
            figures: self.figures,
            metadata: self.metadata,
            exec: self.exec,
            modules: self.modules,
            addresses: self.addresses,
        })
    }

    /// MODULES and ADDRESSES (version 2): a raw profile's modules and return addresses.
    fn raw_section(&mut self, tag: u64, s: &mut Reader<'_>, tag_at: usize) -> Result<(), FormatError> {
        if tag == TAG_MODULES {
            let n = s.count("the number of modules")?;
            for k in 0..n {
                let path = s.string(|| format!("the path of module {k}"))?;
                let flags = s.bounded(&format!("the flags of module {k}"), 3)?;
                let len = s.count(&format!("the build id length of module {k}"))?;
                let build_id = s.bytes(len, "a build id")?.to_vec();
                let bias = s.varint(|| format!("the load bias of module {k}"))?;
                let debug_link =
                    if flags & 2 != 0 { Some(s.string(|| format!("the debug link of module {k}"))?) } else { None };
                self.modules.push(ModuleInfo { path, build_id, bias, debug_link, executable: flags & 1 != 0 });
            }
            return Ok(());
        }
        let Some(functions) = &self.functions else {
            return Err(s.invalid(tag_at, "the FUNCTIONS section before ADDRESSES", "ADDRESSES".into()));
        };
        let (nfunc, nmod) = (functions.len() as u64, self.modules.len() as u64);
        let n = s.count("the number of addresses")?;
        let mut seen = std::collections::HashSet::with_capacity(n);
        for k in 0..n {
            let at = s.offset();
            let func = s.varint(|| format!("the function of address {k}"))?;
            if func >= nfunc || !seen.insert(func) {
                return Err(s.invalid(at, &format!("a function number below {nfunc}, not yet given an address"), func.to_string()));
            }
            let at = s.offset();
            let module = s.varint(|| format!("the module of address {k}"))?;
            if module > nmod {
                return Err(s.invalid(at, &format!("a module number up to {nmod} (0: none)"), module.to_string()));
            }
            let address = s.varint(|| format!("address {k}"))?;
            let module = module.checked_sub(1).map(|m| m as u32);
            self.addresses.push(RawAddress { func: FuncId(func as u32), module, address });
        }
        Ok(())
    }
}
