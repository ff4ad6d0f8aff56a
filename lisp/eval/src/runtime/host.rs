//! The host side of the interpreter: what lives outside the GC arena and is
//! reached by builtins through [`crate::runtime::ctx::Ctx`]: output channels (standard
//! output, standard error, open files), standard input, the clock, and the
//! run options.
//!
//! Invariant: no `Gc` pointer is ever stored here; stream objects in the heap
//! refer to channels by index.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Channel 0 is standard input, 1 standard output, 2 standard error.
/// The channel of standard input.
pub const STDIN: u32 = 0;
/// The channel of standard output.
pub const STDOUT: u32 = 1;
/// The channel of standard error.
pub const STDERR: u32 = 2;

pub enum Channel {
    Input(Box<dyn BufRead>),
    Output(Box<dyn Write>),
    Closed,
}

/// Options a host sets when creating an interpreter.
#[derive(Clone, Debug)]
pub struct Options {
    /// The deepest Lisp call nesting before a `stack-exhausted` error.
    pub max_frames: usize,
    /// Instructions per VM slice between collections.
    pub slice_fuel: u32,
    /// Bytes of heap objects (mprof_heap::live_bytes, after a full collection) past
    /// which the program gets a `storage-condition`.
    pub max_heap: usize,
    /// VM instructions one run (an `eval`, `call` or file load) may execute
    /// before it gets a `storage-condition` (None: no limit). A handler then
    /// has an eighth of this more to finish; past that the run ends with an
    /// error returned to the host.
    pub max_fuel: Option<u64>,
    /// What the program may reach outside the interpreter (files, environment,
    /// processes, sockets). Default: everything.
    pub capabilities: crate::runtime::capabilities::Capabilities,
    /// Wall-clock time one run may take before it is terminated (None: no
    /// limit). Checked between slices, like a host's `Terminator`.
    pub max_run_time: Option<std::time::Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_frames: 1_000_000,
            slice_fuel: 4096,
            max_heap: default_max_heap(),
            max_fuel: None,
            capabilities: Default::default(),
            max_run_time: None,
        }
    }
}

impl Options {
    /// Options for untrusted code: no files, environment, processes or sockets
    /// (`Capabilities::none`), and limits a host is expected to tighten: 256 MB
    /// of heap, 10,000 frames, 100 million instructions per run.
    pub fn sandboxed() -> Self {
        Options {
            max_frames: 10_000,
            max_heap: 256 << 20,
            max_fuel: Some(100_000_000),
            capabilities: crate::runtime::capabilities::Capabilities::none(),
            ..Options::default()
        }
    }
}

/// The default heap limit: three quarters of physical memory (8 GiB when it
/// cannot be read), so that a runaway program gets a Lisp condition before
/// the system kills it or an allocation fails.
pub fn default_max_heap() -> usize {
    const FALLBACK: usize = 8 << 30;
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else { return FALLBACK };
    let kib = info
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<usize>().ok());
    match kib {
        Some(k) => k.saturating_mul(1024) / 4 * 3,
        None => FALLBACK,
    }
}

/// A function the embedding host registered, callable from Lisp.
pub type NativeFn = Box<dyn FnMut(&[crate::runtime::host_value::HostValue]) -> Result<crate::runtime::host_value::HostValue, String>>;

/// What the interpreter reaches outside the heap: its streams, host functions, options,
/// the interrupt flag, the program's arguments and I/O statistics.
pub struct Host {
    /// Open streams by channel number (`STDIN`, `STDOUT`, `STDERR`, then files).
    pub channels: Vec<Channel>,
    /// Host functions registered with `Interpreter::register_native`, by
    /// builtin id minus the number of builtins.
    pub natives: Vec<(String, NativeFn)>,
    /// The options the interpreter was made with.
    pub options: Options,
    /// When the interpreter started (`get-internal-real-time` counts from here).
    pub start: Instant,
    /// Set from a signal handler (Ctrl-C); checked between slices.
    pub interrupt: Arc<AtomicBool>,
    /// Set by the host to end the run (uncatchable); checked between slices
    /// and by builtins that block (`sleep`).
    pub terminate: Arc<AtomicBool>,
    /// Arguments after the program file on the command line.
    pub argv: Vec<String>,
    /// Input/output statistics, when being recorded (`--time`, `--io`).
    pub io: Option<IoStats>,
    /// How many of its arguments the last FORMAT consumed (FORMATTER's
    /// functions return the rest).
    pub format_consumed: usize,
    /// `*print-circle*` label tables of the prints in progress, by the id
    /// `SYS::*CIRCLE-TABLE*` is bound to while they run Lisp code: weak for
    /// print tasks (their frame owns the table), strong for the tables a
    /// top-level `pprint-logical-block` starts (released when it ends).
    pub circle_tables: Vec<(i64, std::rc::Weak<std::cell::RefCell<mprof_heap::printer::CircleState>>)>,
    /// The tables the host keeps alive (see `circle_tables`).
    pub circle_owned: Vec<(i64, mprof_heap::printer::SharedCircle)>,
    /// The next id of a label table.
    pub next_circle_id: i64,
}

/// Per-stream input/output counts and times, ATOM's io tool for Lisp streams. Rows are
/// per file name (a file opened twice is one row) and per standard stream; string
/// streams do no I/O and have none. Invariant: `by_channel[c]`, when set, indexes `rows`.
#[derive(Default, Debug)]
pub struct IoStats {
    rows: Vec<mprof_engine::exec::IoRow>,
    by_name: std::collections::HashMap<String, usize>,
    by_channel: Vec<Option<usize>>,
}

impl IoStats {
    fn row(&mut self, name: &str) -> usize {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        self.rows.push(mprof_engine::exec::IoRow { stream: name.to_string(), ..Default::default() });
        self.by_name.insert(name.to_string(), self.rows.len() - 1);
        self.rows.len() - 1
    }

    fn channel_row(&mut self, channel: u32) -> usize {
        if let Some(Some(i)) = self.by_channel.get(channel as usize) {
            return *i;
        }
        let name = match channel {
            STDIN => "*standard-input*",
            STDOUT => "*standard-output*",
            STDERR => "*error-output*",
            _ => "(unnamed stream)",
        };
        let i = self.row(name);
        self.bind(channel, i);
        i
    }

    fn bind(&mut self, channel: u32, row: usize) {
        let c = channel as usize;
        if self.by_channel.len() <= c {
            self.by_channel.resize(c + 1, None);
        }
        self.by_channel[c] = Some(row);
    }

    /// A file was opened (on `channel` when it stays open for output).
    pub fn opened(&mut self, name: &str, channel: Option<u32>) {
        let i = self.row(name);
        self.rows[i].opens += 1;
        if let Some(c) = channel {
            self.bind(c, i);
        }
    }

    /// A read of `bytes` from the file `name` (whole-file reads: OPEN, LOAD).
    pub fn read_file(&mut self, name: &str, bytes: u64, ns: u64) {
        let i = self.row(name);
        self.add(i, false, bytes, ns);
    }

    /// A write of `bytes` to the file `name` (files held in memory, written back whole).
    pub fn write_file(&mut self, name: &str, bytes: u64, ns: u64) {
        let i = self.row(name);
        self.add(i, true, bytes, ns);
    }

    /// A read of `bytes` from a host channel.
    pub fn read_channel(&mut self, channel: u32, bytes: u64, ns: u64) {
        let i = self.channel_row(channel);
        self.add(i, false, bytes, ns);
    }

    /// A write of `bytes` to a host channel.
    pub fn write_channel(&mut self, channel: u32, bytes: u64, ns: u64) {
        let i = self.channel_row(channel);
        self.add(i, true, bytes, ns);
    }

    fn add(&mut self, row: usize, write: bool, bytes: u64, ns: u64) {
        let r = &mut self.rows[row];
        if write {
            r.writes += 1;
            r.bytes_written += bytes;
        } else {
            r.reads += 1;
            r.bytes_read += bytes;
        }
        r.time_ns += ns;
    }

    /// The rows of the I/O summary, in the order the streams were first used.
    pub fn rows(&self) -> Vec<mprof_engine::exec::IoRow> {
        self.rows.clone()
    }
}

impl Host {
    /// A host over these standard streams.
    /// A host with no channels, for printing outside a run.
    pub fn detached() -> Host {
        Host::new(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), Options::default())
    }

    pub fn new(stdout: Box<dyn Write>, stderr: Box<dyn Write>, stdin: Box<dyn BufRead>, options: Options) -> Host {
        Host {
            channels: vec![Channel::Input(stdin), Channel::Output(stdout), Channel::Output(stderr)],
            natives: Vec::new(),
            options,
            start: Instant::now(),
            interrupt: Arc::new(AtomicBool::new(false)),
            terminate: Arc::new(AtomicBool::new(false)),
            argv: Vec::new(),
            io: None,
            format_consumed: 0,
            circle_tables: Vec::new(),
            circle_owned: Vec::new(),
            next_circle_id: 1,
        }
    }

    /// The I/O summary rows recorded so far (none when not recording).
    pub fn io_rows(&self) -> Vec<mprof_engine::exec::IoRow> {
        self.io.as_ref().map(IoStats::rows).unwrap_or_default()
    }

    /// Write text to an output channel. Errors writing to a closed pipe are
    /// reported to the caller as a message.
    pub fn write(&mut self, channel: u32, text: &str) -> Result<(), String> {
        self.write_bytes(channel, text.as_bytes())
    }

    /// Write raw bytes to an output channel (`write-byte`; `write` for text).
    pub fn write_bytes(&mut self, channel: u32, bytes: &[u8]) -> Result<(), String> {
        let started = self.io.as_ref().map(|_| Instant::now());
        let r = match self.channels.get_mut(channel as usize) {
            Some(Channel::Output(w)) => w.write_all(bytes).map_err(|e| e.to_string()),
            _ => Err("the stream is not open for output".to_string()),
        };
        if let (Some(io), Some(t)) = (self.io.as_mut(), started) {
            io.write_channel(channel, bytes.len() as u64, t.elapsed().as_nanos() as u64);
        }
        r
    }

    /// Read one raw byte from an input channel (`read-byte`); None at end of file.
    pub fn read_byte(&mut self, channel: u32) -> Result<Option<u8>, String> {
        let started = self.io.as_ref().map(|_| Instant::now());
        let r = match self.channels.get_mut(channel as usize) {
            Some(Channel::Input(r)) => match r.fill_buf() {
                Ok(buf) => match buf.first().copied() {
                    Some(b) => {
                        r.consume(1);
                        Ok(Some(b))
                    }
                    None => Ok(None),
                },
                Err(e) => Err(e.to_string()),
            },
            _ => Err("the stream is not open for input".to_string()),
        };
        if let (Some(io), Some(t), Ok(Some(_))) = (self.io.as_mut(), started, &r) {
            io.read_channel(channel, 1, t.elapsed().as_nanos() as u64);
        }
        r
    }

    /// Flush one output channel (errors are ignored: a closed pipe is not a Lisp error).
    pub fn flush(&mut self, channel: u32) {
        if let Some(Channel::Output(w)) = self.channels.get_mut(channel as usize) {
            let _ = w.flush();
        }
    }

    /// Flush every output channel.
    pub fn flush_all(&mut self) {
        for c in self.channels.iter_mut() {
            if let Channel::Output(w) = c {
                let _ = w.flush();
            }
        }
    }

    /// Read one line (without its newline) from an input channel; None at end of file.
    pub fn read_line(&mut self, channel: u32) -> Result<Option<String>, String> {
        match self.channels.get_mut(channel as usize) {
            Some(Channel::Input(r)) => {
                let mut s = String::new();
                match r.read_line(&mut s) {
                    Ok(0) => Ok(None),
                    Ok(_) => {
                        if s.ends_with('\n') {
                            s.pop();
                            if s.ends_with('\r') {
                                s.pop();
                            }
                        }
                        Ok(Some(s))
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
            _ => Err("the stream is not open for input".to_string()),
        }
    }

    /// A new output channel writing to `w`; returns its number.
    pub fn open_output(&mut self, w: Box<dyn Write>) -> u32 {
        self.channels.push(Channel::Output(w));
        (self.channels.len() - 1) as u32
    }

    /// Close a channel (flushing it first); its number is not reused.
    pub fn close(&mut self, channel: u32) {
        if channel > STDERR
            && let Some(c) = self.channels.get_mut(channel as usize)
        {
            if let Channel::Output(w) = c {
                let _ = w.flush();
            }
            *c = Channel::Closed;
        }
    }
}
