//! The state the recording runtime, the writer and the process endings share, at the
//! bottom of the library so that none of them imports another to reach it.
//!
//! Layers, from the bottom: this module; `samples` (memory over time); `dump` (the
//! writer); `endings` (the file written however the process ends; it calls the
//! writer); `runtime` (the hot path, start-up, fork and exit; it calls `endings`,
//! never the writer itself); `hooks` and `api` on top.
//!
//! Held here: each thread's reentrancy guard and recording-state slot (one const
//! thread-local, so the hot path reads both with one access); the settings read at
//! start-up; the epoch; the counts at the last reset and the heap errors; the
//! process's flags (forked child, silent); the dump lock; where the exiting thread's
//! stack and registers were (for the leak scan); and the name of the temporary file
//! being written (so a dying process removes it).
//!
//! Invariants: the guard is set while the library runs its own code on that thread;
//! the slot is null, a live state owned by `runtime`, or `runtime`'s dead marker;
//! the temporary file's name is written only under [`DUMP_LOCK`].

use crate::cct::Totals;
use crate::config::Config;
use crate::lock::{Locked, SpinLock};
use core::cell::{Cell, UnsafeCell};
use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::path::Path;
use std::sync::OnceLock;

// ---- per-thread: the reentrancy guard and the recording state

/// What a thread keeps: its reentrancy guard, and its recording state (a
/// `runtime::ThreadState`, opaque here). All-zero is the initial value.
#[repr(C, align(16))]
pub struct Tls {
    pub guard: Cell<bool>,
    pub state: Cell<*mut c_void>,
}

// The thread's `Tls`, in the initial-exec TLS model: one `.tbss` block whose offset
// from the thread pointer the dynamic linker fixes at load (libmprof is loaded with
// the program, preloaded or linked in), so reaching it is two instructions, where
// Rust's `thread_local!` in a shared library calls `__tls_get_addr`. A hidden
// symbol: shared by the crate's code units, never exported.
core::arch::global_asm!(
    ".section .tbss,\"awT\",@nobits",
    ".p2align 4",
    ".globl mprof_thread_slot",
    ".hidden mprof_thread_slot",
    ".type mprof_thread_slot, @object",
    ".size mprof_thread_slot, 16",
    "mprof_thread_slot:",
    ".zero 16",
    ".text",
);

/// This thread's `Tls`. Static TLS lives as long as its thread, so it is reachable
/// from every hook, even during the thread's last destructors.
#[inline(always)]
pub fn tls() -> &'static Tls {
    let p: usize;
    // SAFETY: reads the GOT entry holding the block's offset from the thread pointer,
    // and the thread pointer itself (fs:0 holds its own address on x86_64 glibc).
    unsafe {
        core::arch::asm!(
            "mov {p}, qword ptr [rip + mprof_thread_slot@GOTTPOFF]",
            "add {p}, qword ptr fs:[0]",
            p = out(reg) p,
            options(pure, readonly, nostack, preserves_flags),
        )
    };
    // SAFETY: a zero-initialized, 16-byte aligned block of this thread: a valid Tls.
    unsafe { &*(p as *const Tls) }
}

/// The handle the code uses for its thread's `Tls` (`TLS.try_with(|tls| ...)`, which
/// never fails: static TLS is never destroyed while its thread runs).
pub struct ThreadSlot;

impl ThreadSlot {
    #[inline(always)]
    pub fn try_with<R>(&self, f: impl FnOnce(&Tls) -> R) -> Result<R, core::convert::Infallible> {
        Ok(f(tls()))
    }
}

pub static TLS: ThreadSlot = ThreadSlot;

/// Whether this thread is running library code (for signal handlers: a
/// thread outside it holds none of the library's or the allocator's locks).
pub fn guard_is_set() -> bool {
    TLS.try_with(|tls| tls.guard.get()).unwrap_or(true)
}

/// Set this thread's guard for good (the helper thread: nothing it does is the program's).
pub fn set_guard_forever() {
    let _ = TLS.try_with(|tls| tls.guard.set(true));
}

/// Run library code with this thread's reentrancy guard set.
pub fn with_guard<R>(f: impl FnOnce() -> R) -> R {
    match TLS.try_with(|tls| tls.guard.replace(true)) {
        Ok(was) => {
            let r = f();
            let _ = TLS.try_with(|tls| tls.guard.set(was));
            r
        }
        Err(_) => f(),
    }
}

// ---- settings and epoch

/// The settings, read from the environment when the hooks first run.
pub static CONFIG: OnceLock<Config> = OnceLock::new();

pub fn config() -> Option<&'static Config> {
    CONFIG.get()
}

/// The current epoch: `reset` and `fork` start a new one.
pub static EPOCH: AtomicU32 = AtomicU32::new(0);

pub fn epoch() -> u16 {
    EPOCH.load(Ordering::Acquire) as u16
}

// ---- what the counters cannot hold

/// Counter values at the last `reset`, subtracted when writing.
pub static BASELINE: Locked<Option<Totals>> = Locked::new(None);

/// One heap error kind on one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    DoubleFree,
    InvalidFree,
    ReallocOfFreed,
}

#[derive(Clone, Copy, Debug)]
pub struct ErrorRecord {
    pub kind: ErrorKind,
    pub node: u32,
    pub address: u64,
    pub count: u64,
}

pub static ERRORS: Locked<Vec<ErrorRecord>> = Locked::new(Vec::new());

// ---- the process

/// Set in a forked child, so its default file name gets its pid.
pub static FORKED_CHILD: AtomicBool = AtomicBool::new(false);
/// Set in a forked child when children are not followed: no file is written.
pub static SILENT: AtomicBool = AtomicBool::new(false);
/// Held while a profile is built and written (and across `fork`).
pub static DUMP_LOCK: SpinLock = SpinLock::new();

// ---- the exit point, for the leak scan of the final dump

/// Where the leak check's stack scan starts (0: no check), and the
/// callee-saved registers at that point: set by `exit` and `_exit` only.
static EXIT_STACK: AtomicUsize = AtomicUsize::new(0);
static EXIT_REGISTERS: [AtomicUsize; 6] = [const { AtomicUsize::new(0) }; 6];

/// Record the exiting thread's stack position and registers, so the final
/// dump classifies leaks. Inlined into its caller, so the scan starts at the
/// caller's frame, above the library's own frames of the dump.
#[inline(always)]
pub fn note_exit_point() {
    let marker = 0u8;
    let here = core::hint::black_box(&marker) as *const u8 as usize;
    let (rbx, rbp, r12, r13, r14, r15): (usize, usize, usize, usize, usize, usize);
    // SAFETY: reads registers into outputs; no memory, no flags.
    unsafe {
        core::arch::asm!(
            "mov {0}, rbx", "mov {1}, rbp", "mov {2}, r12", "mov {3}, r13", "mov {4}, r14", "mov {5}, r15",
            out(reg) rbx, out(reg) rbp, out(reg) r12, out(reg) r13, out(reg) r14, out(reg) r15,
            options(nomem, nostack, preserves_flags),
        )
    };
    for (slot, v) in EXIT_REGISTERS.iter().zip([rbx, rbp, r12, r13, r14, r15]) {
        slot.store(v, Ordering::Relaxed);
    }
    EXIT_STACK.store(here, Ordering::Release);
}

/// The exit point noted by [`note_exit_point`], if this is the final dump at exit.
pub fn exit_point() -> Option<(usize, [usize; 6])> {
    let at = EXIT_STACK.load(Ordering::Acquire);
    (at != 0).then(|| {
        (
            at,
            core::array::from_fn(|i| EXIT_REGISTERS[i].load(Ordering::Relaxed)),
        )
    })
}

// ---- the temporary file's name, for removal from a signal handler

const TMP_CAP: usize = 4096;

/// The temporary file being written, NUL-terminated (empty when none). Written
/// only under the dump lock, read by an ending signal's handler that gave up.
struct TmpName(UnsafeCell<[u8; TMP_CAP]>);
// SAFETY: writers hold the dump lock; the one reader (a dying process's
// handler) only passes the bytes to unlink, and `TMP_SET` orders the accesses.
unsafe impl Sync for TmpName {}
static TMP_NAME: TmpName = TmpName(UnsafeCell::new([0; TMP_CAP]));
static TMP_SET: AtomicBool = AtomicBool::new(false);

/// Remember the temporary file being written (None once renamed). Called with the dump lock held.
pub fn set_temporary(path: Option<&Path>) {
    use std::os::unix::ffi::OsStrExt;
    TMP_SET.store(false, Ordering::Release);
    if let Some(p) = path.map(|p| p.as_os_str().as_bytes())
        && p.len() < TMP_CAP
        && !p.contains(&0)
    {
        // SAFETY: the dump lock is held; a handler reads only while TMP_SET is true.
        let buf = unsafe { &mut *TMP_NAME.0.get() };
        buf[..p.len()].copy_from_slice(p);
        buf[p.len()] = 0;
        TMP_SET.store(true, Ordering::Release);
    }
}

/// Remove the temporary file being written, if any (async-signal-safe).
pub fn remove_temporary() {
    if TMP_SET.load(Ordering::Acquire) {
        // SAFETY: NUL-terminated by set_temporary; unlink is async-signal-safe.
        unsafe { libc::unlink(TMP_NAME.0.get() as *const libc::c_char) };
    }
}
