//! Nothing lost: the profile is written however the process ends, and the
//! dump signal takes effect at once.
//!
//! A helper thread (all signals blocked, reentrancy guard always set) sleeps in
//! `poll` on a pipe, waking every few milliseconds to sample memory (`samples`). Signal handlers only do async-signal-safe work: they write
//! one byte to the pipe and, for an ending signal, wait (polling a counter,
//! bounded by [`FINAL_WAIT_MS`]) until the helper has written the file. So the
//! file is written in an ordinary thread even when every other thread is
//! blocked (the dump signal during `sleep` or a deadlock), and a thread that
//! crashed while holding a lock the dump needs delays its death by the bound,
//! never forever.
//!
//! It sits above the writer (`dump`), which it calls, and below the runtime, which
//! calls it at start-up, fork and exit: the hot path never calls the writer itself.
//!
//! Ends covered: `exit` (the `atexit` handler in `runtime`), `_exit`/`_Exit`
//! (interposed in `hooks`), every signal whose default action ends the process
//! (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1/2, SIGXCPU, ...),
//! `abort` (SIGABRT) and crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
//! SIGSYS). A handler is installed only over the default disposition, so a
//! program's own handlers and ignored signals are left alone; after the dump
//! the default is restored and the signal raised again, so the process dies by
//! the same signal with the same status (and core dump) as without the library.
//!
//! Invariants:
//! - The final file is written at most once per process ([`FINAL`]).
//! - Nothing is written from a process that is not the one the runtime belongs
//!   to (a `vfork` or `posix_spawn` child shares our memory: its pid differs
//!   from [`PID`], which `fork` children update in their fork handler).
//! - A file is complete or absent: `dump` writes a temporary file and renames
//!   it (noting its name in `state`); if an ending signal gives up waiting, the
//!   temporary file is removed.

use crate::state::{note_exit_point, remove_temporary};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

/// How long an ending signal waits for the helper's dump before the process dies anyway.
pub const FINAL_WAIT_MS: u64 = 10_000;

/// The process the runtime's data belongs to (updated in a forked child).
pub static PID: AtomicI32 = AtomicI32::new(0);
/// Set once the final file has been (or is being) written.
static FINAL: AtomicBool = AtomicBool::new(false);
/// Write end of the helper's pipe, or -1 when there is no helper.
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// Thread id of the helper (0 when none).
static HELPER_TID: AtomicI32 = AtomicI32::new(0);
/// Requests the helper has finished (each byte read is one request).
static DONE: AtomicU32 = AtomicU32::new(0);
/// Requests sent to the helper.
static SENT: AtomicU32 = AtomicU32::new(0);
/// A forked child has no helper yet: the next hook outside the library starts one.
pub static HELPER_NEEDED: AtomicBool = AtomicBool::new(false);
/// Set by the dump signal's handler when there is no helper thread; the next
/// hook outside the library writes the file (`write_if_requested`).
pub static DUMP_REQUESTED: AtomicBool = AtomicBool::new(false);

/// Write the file if the dump signal asked for it while no helper could: called by
/// the hooks outside the library (which then hold none of its locks).
#[inline]
pub fn write_if_requested() {
    if DUMP_REQUESTED.load(Ordering::Relaxed) && DUMP_REQUESTED.swap(false, Ordering::AcqRel) {
        crate::dump::write_default_file();
    }
}

const REQUEST_DUMP: u8 = b'd';
const REQUEST_FINAL: u8 = b'f';

/// Signals whose default action ends the process (SIGKILL and SIGSTOP cannot be caught).
const ENDING_SIGNALS: &[i32] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGUSR1,
    libc::SIGSEGV,
    libc::SIGUSR2,
    libc::SIGPIPE,
    libc::SIGALRM,
    libc::SIGTERM,
    libc::SIGSTKFLT,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGPWR,
    libc::SIGSYS,
];

// ---- start-up

fn gettid() -> i32 {
    // SAFETY: plain syscall.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

fn getpid() -> i32 {
    // SAFETY: plain syscall (glibc caches nothing since 2.25, but be explicit).
    unsafe { libc::syscall(libc::SYS_getpid) as i32 }
}

/// Whether this process is the one whose data the runtime holds (not a vfork child).
pub fn own_process() -> bool {
    getpid() == PID.load(Ordering::Relaxed)
}

/// Size of the alternate signal stack given to the thread that starts the runtime.
const ALT_STACK: usize = 64 * 1024;

/// Give this thread (the one starting the runtime: usually the main thread) an
/// alternate signal stack if it has none, so a stack overflow's SIGSEGV can
/// still run the handler. Other threads keep what they have.
fn ensure_alternate_stack() {
    // SAFETY: sigaltstack queries and sets this thread's stack; the mapping is ours, never freed.
    unsafe {
        let mut current: libc::stack_t = core::mem::zeroed();
        if libc::sigaltstack(core::ptr::null(), &mut current) != 0
            || current.ss_flags & libc::SS_DISABLE == 0
        {
            return;
        }
        let p = crate::real::map_zeroed(ALT_STACK);
        if p.is_null() {
            return;
        }
        let stack = libc::stack_t {
            ss_sp: p as *mut libc::c_void,
            ss_flags: 0,
            ss_size: ALT_STACK,
        };
        libc::sigaltstack(&stack, core::ptr::null_mut());
    }
}

/// Install the handlers: the dump signal (if any) and every ending signal
/// still at its default disposition. Called once, at start-up.
pub fn install(dump_signal: Option<i32>) {
    PID.store(getpid(), Ordering::Relaxed);
    ensure_alternate_stack();
    // SAFETY: sigaction with handlers of the right type and a zeroed, then filled, struct.
    unsafe {
        if let Some(sig) = dump_signal {
            let mut sa: libc::sigaction = core::mem::zeroed();
            sa.sa_sigaction = on_dump_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, core::ptr::null_mut());
        }
        for &sig in ENDING_SIGNALS {
            if Some(sig) == dump_signal {
                continue;
            }
            let mut old: libc::sigaction = core::mem::zeroed();
            if libc::sigaction(sig, core::ptr::null(), &mut old) != 0
                || old.sa_sigaction != libc::SIG_DFL
            {
                continue;
            }
            let mut sa: libc::sigaction = core::mem::zeroed();
            sa.sa_sigaction = on_ending_signal as *const () as usize;
            // SA_ONSTACK: a thread with an alternate stack (a stack overflow) can still run it.
            sa.sa_flags = libc::SA_ONSTACK;
            libc::sigfillset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, core::ptr::null_mut());
        }
    }
}

/// Start the helper thread (once per process; a forked child starts its own).
/// Runs under the reentrancy guard. Without a helper, the handlers fall back
/// to writing in the signalled thread when it is outside the library.
pub fn start_helper() {
    HELPER_NEEDED.store(false, Ordering::Relaxed);
    if WAKE_FD.load(Ordering::Acquire) >= 0 {
        return;
    }
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    // Far from the low numbers a program opens and reuses, so a program that
    // closes every descriptor and opens files again is unlikely to be handed
    // ours (a handler would then write into its file).
    let [read_fd, write_fd] = fds.map(|fd| {
        // SAFETY: plain descriptor calls on our own descriptors.
        unsafe {
            let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 900);
            if high >= 0 {
                libc::close(fd);
                high
            } else {
                fd
            }
        }
    });
    // The helper must never take a signal meant for the program: block them
    // all around the spawn, so it starts with everything blocked. A bare
    // pthread, not std::thread: std's thread start-up registers thread-local
    // destructors (an allocation) before our code could set the guard.
    // SAFETY: sigset manipulation on locals and this thread's mask; the thread
    // function has the signature pthread_create expects.
    let spawned = unsafe {
        let mut all: libc::sigset_t = core::mem::zeroed();
        let mut old: libc::sigset_t = core::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setstacksize(&mut attr, 256 * 1024);
        libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        let mut thread: libc::pthread_t = 0;
        let r = libc::pthread_create(
            &mut thread,
            &attr,
            helper_main,
            read_fd as usize as *mut libc::c_void,
        );
        libc::pthread_attr_destroy(&mut attr);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, core::ptr::null_mut());
        if r == 0 {
            let name = c"mprof-writer";
            libc::pthread_setname_np(thread, name.as_ptr());
        }
        r == 0
    };
    if spawned {
        WAKE_FD.store(write_fd, Ordering::Release);
    } else {
        // SAFETY: our own descriptors.
        unsafe {
            libc::close(read_fd);
            libc::close(write_fd);
        }
    }
}

/// In a forked child: the parent's helper did not come along, and its pipe
/// must not be shared. Called from the fork handler (async-signal-safe calls only).
pub fn after_fork_child() {
    PID.store(getpid(), Ordering::Relaxed);
    HELPER_TID.store(0, Ordering::Relaxed);
    let fd = WAKE_FD.swap(-1, Ordering::AcqRel);
    if fd >= 0 {
        // SAFETY: our descriptor; the read end is closed by the helper's exit in the parent only,
        // so the child closes its inherited copy of the write end here.
        unsafe { libc::close(fd) };
    }
    HELPER_NEEDED.store(true, Ordering::Relaxed);
}

extern "C" fn helper_main(arg: *mut libc::c_void) -> *mut libc::c_void {
    crate::state::set_guard_forever();
    helper(arg as usize as i32);
    core::ptr::null_mut()
}

fn helper(read_fd: i32) {
    HELPER_TID.store(gettid(), Ordering::Release);
    loop {
        let mut pfd = libc::pollfd {
            fd: read_fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd on the stack.
        let ready = unsafe { libc::poll(&mut pfd, 1, crate::samples::PERIOD_MS as i32) };
        crate::samples::tick();
        if ready == 0
            || (ready < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR))
        {
            continue;
        }
        let mut byte = 0u8;
        // SAFETY: reading one byte into a local.
        let n = unsafe { libc::read(read_fd, &mut byte as *mut u8 as *mut libc::c_void, 1) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if n != 1 {
            // The program closed our descriptors (a daemon closing everything):
            // handlers fall back to flags, and no byte is ever written into
            // whatever file reuses the number.
            WAKE_FD.store(-1, Ordering::Release);
            return;
        }
        // Both requests write the same file; a final one is followed by the
        // process's death, which the signal handler takes care of.
        if matches!(byte, REQUEST_DUMP | REQUEST_FINAL) {
            crate::dump::write_default_file();
        }
        DONE.fetch_add(1, Ordering::Release);
    }
}

// ---- the ends

/// The last write of this process, once: from `exit`, `_exit` or an abort on a
/// heap error. Nothing when it was written already, or in a vfork child.
pub fn final_dump_here() {
    if !own_process() || FINAL.swap(true, Ordering::AcqRel) {
        return;
    }
    crate::dump::write_default_file();
}

/// `_exit` and `_Exit`: write the final file, then end the process as glibc does.
pub fn exit_now(status: i32) -> ! {
    // A vfork child shares our memory: it must not even note its exit point.
    let mut status = status;
    if own_process() {
        note_exit_point();
        crate::state::with_guard(final_dump_here);
        status = crate::gate::status().unwrap_or(status);
    }
    // SAFETY: exit_group ends every thread; it does not return.
    unsafe {
        libc::syscall(libc::SYS_exit_group, status);
        libc::syscall(libc::SYS_exit, status);
    }
    #[allow(clippy::empty_loop)]
    loop {}
}

fn send(request: u8) -> Option<u32> {
    let fd = WAKE_FD.load(Ordering::Acquire);
    if fd < 0 {
        return None;
    }
    let ticket = SENT.fetch_add(1, Ordering::AcqRel) + 1;
    // SAFETY: write is async-signal-safe; a full pipe (many pending requests) loses nothing
    // that matters, since one pending dump writes the same file.
    let n = unsafe { libc::write(fd, &request as *const u8 as *const libc::c_void, 1) };
    (n == 1).then_some(ticket)
}

fn now_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Wait until the helper has served request `ticket`, at most `ms` milliseconds.
fn wait_for(ticket: u32, ms: u64) -> bool {
    let deadline = now_ms() + ms;
    loop {
        if DONE.load(Ordering::Acquire).wrapping_sub(ticket) < u32::MAX / 2 {
            return true;
        }
        if now_ms() >= deadline {
            return false;
        }
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 200_000,
        };
        // SAFETY: nanosleep is async-signal-safe.
        unsafe { libc::nanosleep(&pause, core::ptr::null_mut()) };
    }
}

struct SavedErrno(i32);
impl SavedErrno {
    fn save() -> Self {
        // SAFETY: errno is thread-local.
        SavedErrno(unsafe { *libc::__errno_location() })
    }
}
impl Drop for SavedErrno {
    fn drop(&mut self) {
        // SAFETY: errno is thread-local.
        unsafe { *libc::__errno_location() = self.0 };
    }
}

extern "C" fn on_dump_signal(_: libc::c_int) {
    let _errno = SavedErrno::save();
    if send(REQUEST_DUMP).is_none() {
        // No helper (yet): the next hook outside the library writes it.
        DUMP_REQUESTED.store(true, Ordering::Relaxed);
    }
}

extern "C" fn on_ending_signal(sig: libc::c_int) {
    let _errno = SavedErrno::save();
    let helper = HELPER_TID.load(Ordering::Acquire);
    if own_process() && helper != gettid() && !FINAL.swap(true, Ordering::AcqRel) {
        match send(REQUEST_FINAL) {
            Some(ticket) => {
                if !wait_for(ticket, FINAL_WAIT_MS) {
                    remove_temporary();
                }
            }
            None => {
                // No helper: write here if this thread is outside the library
                // (so it holds none of the library's locks nor the allocator's).
                if !crate::state::guard_is_set() {
                    crate::state::with_guard(crate::dump::write_default_file);
                }
            }
        }
    } else if own_process() {
        // The helper itself crashed while writing, or another thread's final
        // write is under way: the process dies now, leaving no half file.
        remove_temporary();
    }
    die_by(sig);
}

/// Restore the default action and raise `sig` again, so the process ends as
/// it would have without the library (same signal, same core dump).
fn die_by(sig: i32) -> ! {
    // SAFETY: sigaction, sigprocmask and kill calls are async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, core::ptr::null_mut());
        let mut set: libc::sigset_t = core::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::syscall(libc::SYS_tgkill, getpid(), gettid(), sig);
        // The signal is pending and blocked (the handler's mask): unblocking delivers it.
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, core::ptr::null_mut());
        // Only reached if the default action does not end the process.
        libc::syscall(libc::SYS_exit_group, 128 + sig);
    }
    #[allow(clippy::empty_loop)]
    loop {}
}
