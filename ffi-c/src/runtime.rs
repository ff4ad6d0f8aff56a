//! The recording runtime behind the hooks: start-up, per-thread state, the
//! allocation and free paths, heap errors, reset, fork and exit. It reaches the
//! writer only through `endings` (at exit, on a pending dump request, before an
//! abort), and keeps what it shares with them in `state`.
//!
//! Invariants:
//! - Every block handed out while the runtime is active carries a header and a
//!   live bit (see `live`), whether or not it was profiled, so `free` needs no
//!   other bookkeeping. If start-up cannot reserve the bitmap, the runtime
//!   passes everything straight to glibc forever, before any header exists.
//! - A per-thread reentrancy guard (`state::TLS`, a const thread-local also
//!   holding the thread's state: no lazy allocation, one access) is set while the library runs its own code; hooks entered under it hand
//!   out blocks without recording, and frees under it count on the shared
//!   orphan block, so nothing the library does shows in the data.
//! - The allocation path takes no lock: stack walk, a per-thread cache of tree
//!   edges, per-thread counters. Locks guard only node creation, heap errors,
//!   threads whose state is gone, and dumps.
//! - Counts belong to an epoch: `reset` and `fork` start a new one, and a free
//!   of a block from an older epoch is not counted, so the file never shows
//!   more frees than allocations and a forked child counts only its own work.

use crate::cct::{self, CounterBlock, ROOT};
use crate::config::{Config, OnError, Unwind};
use crate::live::{self, HEADER_SIZE, Header, NO_NODE};
use crate::real;
use crate::stack::{self, StackBounds};
use crate::state::{
    BASELINE, CONFIG, DUMP_LOCK, EPOCH, ERRORS, ErrorKind, ErrorRecord, FORKED_CHILD, SILENT, TLS, Tls, config,
    epoch, with_guard,
};
use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicUsize, Ordering};

const UNINIT: u8 = 0;
const INITIALIZING: u8 = 1;
const ACTIVE: u8 = 2;
const PASSTHROUGH: u8 = 3;

static STATE: AtomicU8 = AtomicU8::new(UNINIT);
/// Whether new allocations are attributed (mprof_start / mprof_stop).
pub static ENABLED: AtomicBool = AtomicBool::new(true);
static DEPTH: AtomicUsize = AtomicUsize::new(crate::config::DEFAULT_DEPTH);
/// The capture in use: one of the `UNWIND_*` values.
static UNWIND: AtomicU8 = AtomicU8::new(UNWIND_AUTO);
const UNWIND_AUTO: u8 = 0;
const UNWIND_FP: u8 = 1;
const UNWIND_DWARF: u8 = 2;
static THREAD_KEY: AtomicU32 = AtomicU32::new(u32::MAX);

// ---- per-thread state (held in `state::TLS` beside the reentrancy guard)

/// Marks a thread whose exit destructor already ran.
const DEAD: *mut ThreadState = core::ptr::dangling_mut::<ThreadState>();
const EDGE_CACHE: usize = 1024;

#[derive(Clone, Copy)]
struct Edge {
    parent: u32,
    child: u32,
    address: u64,
}

/// What one thread keeps between allocations: its stack bounds, the previous
/// capture and its node path (so only the changed part is looked up), a
/// cache of tree edges, and its counter block. The fields every allocation and free
/// update come first, in one cache line.
#[repr(C, align(64))]
pub struct ThreadState {
    /// The block this thread allocated last, until it allocates another:
    /// freeing it then makes it a temporary allocation.
    last_alloc: usize,
    /// Its unflushed changes of live bytes (the true peak: `peak`).
    peak: crate::peak::Deltas,
    block: &'static CounterBlock,
    bounds: StackBounds,
    previous_len: usize,
    /// Two capture buffers (innermost first): the previous one and the next.
    frames: [Box<[u64]>; 2],
    previous: usize,
    /// Node of each prefix of the previous capture, outermost first.
    path_nodes: Box<[u32]>,
    edges: Box<[Edge]>,
    unwind: crate::unwind::ThreadUnwind,
}

impl ThreadState {
    fn new() -> Option<Box<ThreadState>> {
        let depth = DEPTH.load(Ordering::Relaxed);
        let block = cct::acquire_block()?;
        Some(Box::new(ThreadState {
            bounds: stack::current_bounds(),
            frames: [
                vec![0; depth].into_boxed_slice(),
                vec![0; depth].into_boxed_slice(),
            ],
            previous: 0,
            previous_len: 0,
            path_nodes: vec![ROOT; depth].into_boxed_slice(),
            edges: vec![
                Edge {
                    parent: u32::MAX,
                    child: 0,
                    address: 0
                };
                EDGE_CACHE
            ]
            .into_boxed_slice(),
            block,
            unwind: crate::unwind::ThreadUnwind::new(depth),
            last_alloc: 0,
            peak: crate::peak::Deltas::new(),
        }))
    }

    #[inline]
    fn child(edges: &mut [Edge], parent: u32, address: u64) -> u32 {
        let h = ((address ^ (parent as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> 54) as usize;
        let e = &mut edges[h & (EDGE_CACHE - 1)];
        if e.parent == parent && e.address == address {
            return e.child;
        }
        let c = cct::child(parent, address);
        *e = Edge {
            parent,
            child: c,
            address,
        };
        c
    }

    /// The tree node of the current call stack, from the hook trampoline's frame.
    #[inline]
    fn current_node(&mut self, fp: usize) -> u32 {
        let old = self.previous_len;
        // Frames are innermost first; the path is outermost first. Keep the
        // unchanged outer part of the previous path, look up only the rest; the
        // same stack as last time (the common case) is the same node.
        let (n, same) = match UNWIND.load(Ordering::Relaxed) {
            // SAFETY: fp is the trampoline frame of the hook being run.
            UNWIND_AUTO => unsafe { crate::unwind::walk(fp, self.bounds, &mut self.unwind) },
            mode => {
                let [a, b] = &mut self.frames;
                let (cur, prev) = if self.previous == 0 { (b, &*a) } else { (a, &*b) };
                let prev = &prev[..old];
                // SAFETY: as above.
                let n = unsafe {
                    if mode == UNWIND_DWARF {
                        stack::walk_dwarf(fp, cur)
                    } else {
                        stack::walk_frame_pointers(fp, self.bounds, cur, &[]).0
                    }
                };
                let mut same = 0;
                while same < n && same < old && cur[n - 1 - same] == prev[old - 1 - same] {
                    same += 1;
                }
                self.previous ^= 1;
                (n, same)
            }
        };
        if same == n && n == old {
            return if n == 0 { ROOT } else { self.path_nodes[n - 1] };
        }
        self.previous_len = n;
        let mut node = if same == 0 { ROOT } else { self.path_nodes[same - 1] };
        for i in same..n {
            let ra = if UNWIND.load(Ordering::Relaxed) == UNWIND_AUTO {
                self.unwind.captured()[n - 1 - i].ra
            } else {
                self.frames[self.previous][n - 1 - i]
            };
            node = Self::child(&mut self.edges, node, ra);
            self.path_nodes[i] = node;
        }
        node
    }
}

extern "C" fn thread_exit(p: *mut c_void) {
    let _ = TLS.try_with(|tls| {
        let was = tls.guard.replace(true);
        if !p.is_null() && p != DEAD as *mut c_void {
            // SAFETY: p is the Box we leaked in `thread_state`.
            let mut ts = unsafe { Box::from_raw(p as *mut ThreadState) };
            crate::peak::flush(&mut ts.peak, false);
            cct::release_block(ts.block);
            drop(ts);
        }
        tls.state.set(DEAD as *mut c_void);
        tls.guard.set(was);
    });
}

/// This thread's state, created on first use. None for a thread that has
/// ended (its destructor ran) or when no memory is left.
#[inline(always)]
fn thread_state(tls: &Tls) -> Option<&'static mut ThreadState> {
    let p = tls.state.get() as *mut ThreadState;
    if !p.is_null() && p != DEAD {
        // SAFETY: p is this thread's leaked Box; the guard makes this the only user.
        return Some(unsafe { &mut *p });
    }
    if p == DEAD {
        return None;
    }
    let ts = Box::into_raw(ThreadState::new()?);
    tls.state.set(ts as *mut c_void);
    let key = THREAD_KEY.load(Ordering::Relaxed);
    if key != u32::MAX {
        // SAFETY: the key was created at start-up with `thread_exit` as destructor.
        unsafe { libc::pthread_setspecific(key, ts as *const c_void) };
    }
    // SAFETY: just created, owned by this thread.
    Some(unsafe { &mut *ts })
}

// ---- start-up

#[inline]
fn mode(tls: &Tls) -> u8 {
    let s = STATE.load(Ordering::Acquire);
    if s >= ACTIVE {
        return s;
    }
    start(tls)
}

#[cold]
fn start(tls: &Tls) -> u8 {
    loop {
        match STATE.compare_exchange(UNINIT, INITIALIZING, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break,
            Err(INITIALIZING) => {
                // The initializing thread re-entering through its own allocations.
                if tls.guard.get() {
                    return ACTIVE;
                }
                std::thread::yield_now();
            }
            Err(s) => return s,
        }
    }
    if !live::init() {
        STATE.store(PASSTHROUGH, Ordering::Release);
        return PASSTHROUGH;
    }
    let was = tls.guard.replace(true);
    if !cct::init() {
        ENABLED.store(false, Ordering::Relaxed);
    }
    let (cfg, warnings) = Config::parse(|k| std::env::var(k).ok());
    for w in warnings {
        eprintln!("mprof: {w}");
    }
    DEPTH.store(cfg.depth, Ordering::Relaxed);
    let unwind = match cfg.unwind {
        Unwind::Auto => UNWIND_AUTO,
        Unwind::FramePointers => UNWIND_FP,
        Unwind::Dwarf => UNWIND_DWARF,
    };
    UNWIND.store(unwind, Ordering::Relaxed);
    let signal = cfg.dump_signal;
    let _ = CONFIG.set(cfg);
    // SAFETY: plain libc registration calls with functions of the right types.
    unsafe {
        let mut key: libc::pthread_key_t = 0;
        if libc::pthread_key_create(&mut key, Some(thread_exit)) == 0 {
            THREAD_KEY.store(key, Ordering::Relaxed);
        }
        libc::atexit(at_exit);
        libc::pthread_atfork(
            Some(before_fork),
            Some(after_fork_parent),
            Some(after_fork_child),
        );
    }
    crate::endings::install(signal);
    crate::samples::restart();
    crate::peak::restart();
    tls.guard.set(was);
    STATE.store(ACTIVE, Ordering::Release);
    ACTIVE
}

extern "C" fn at_exit() {
    if !crate::endings::own_process() {
        return;
    }
    crate::state::note_exit_point();
    let _ = TLS.try_with(|tls| {
        let was = tls.guard.replace(true);
        crate::endings::final_dump_here();
        tls.guard.set(was);
    });
    if let Some(status) = crate::gate::status() {
        // The leak gate: end with its status, as LeakSanitizer does from its own
        // exit handler; stdio is flushed first, as exit would have.
        // SAFETY: fflush(NULL) flushes every stream; exit_group does not return.
        unsafe {
            libc::fflush(core::ptr::null_mut());
            libc::syscall(libc::SYS_exit_group, status);
        }
    }
}

extern "C" fn before_fork() {
    DUMP_LOCK.lock();
    crate::unwind::MODULES_LOCK.lock();
    cct::TREE_LOCK.lock();
    cct::ORPHAN_LOCK.lock();
    ERRORS.raw().lock();
    BASELINE.raw().lock();
    crate::samples::lock_for_fork();
    crate::peak::lock_for_fork();
}

extern "C" fn after_fork_parent() {
    crate::peak::unlock_after_fork();
    crate::samples::unlock_after_fork();
    BASELINE.raw().unlock();
    ERRORS.raw().unlock();
    cct::ORPHAN_LOCK.unlock();
    cct::TREE_LOCK.unlock();
    crate::unwind::MODULES_LOCK.unlock();
    DUMP_LOCK.unlock();
}

extern "C" fn after_fork_child() {
    after_fork_parent();
    // The child is alone: start its own counts so nothing is counted twice.
    FORKED_CHILD.store(true, Ordering::Relaxed);
    if config().is_some_and(|c| c.children == crate::config::Children::Ignore) {
        ENABLED.store(false, Ordering::Relaxed);
        SILENT.store(true, Ordering::Relaxed);
    }
    EPOCH.fetch_add(1, Ordering::AcqRel);
    cct::clear_all();
    BASELINE.with(|b| *b = None);
    ERRORS.with(Vec::clear);
    let _ = TLS.try_with(|tls| {
        let was = tls.guard.replace(true);
        cct::release_all_but(thread_state(tls).map(|ts| ts.block));
        crate::samples::restart();
        crate::peak::restart();
        tls.guard.set(was);
    });
    crate::endings::after_fork_child();
}

/// Start a new epoch and remember the current counts as the zero point.
pub fn reset() {
    with_guard(|| {
        EPOCH.fetch_add(1, Ordering::AcqRel);
        let snapshot = cct::snapshot();
        BASELINE.with(|b| *b = Some(snapshot));
        ERRORS.with(Vec::clear);
        crate::samples::restart();
        crate::peak::restart();
    });
}

/// Make sure the runtime has started (for the API, which may run before any malloc).
pub fn ensure_started() -> bool {
    TLS.try_with(|tls| mode(tls) == ACTIVE).unwrap_or(false)
}

// ---- the hook bodies

fn set_errno(e: i32) {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() = e };
}

/// The node to charge an allocation to, with the guard set by the caller.
#[inline]
fn node_here(tls: &Tls, guarded: bool, fp: usize) -> (u32, Option<&'static mut ThreadState>) {
    if guarded {
        return (NO_NODE, None);
    }
    crate::endings::write_if_requested();
    if crate::endings::HELPER_NEEDED.load(Ordering::Relaxed) {
        crate::endings::start_helper();
    }
    if !ENABLED.load(Ordering::Relaxed) {
        return (NO_NODE, None);
    }
    match thread_state(tls) {
        Some(ts) => (ts.current_node(fp), Some(ts)),
        None => (ROOT, None),
    }
}

#[inline]
fn count_alloc(ts: Option<&mut ThreadState>, node: u32, size: u64, user: usize) {
    if node == NO_NODE {
        return;
    }
    match ts {
        Some(ts) => {
            ts.block.record_alloc(node, size);
            ts.last_alloc = user;
            if ts.peak.alloc(size) {
                crate::peak::flush(&mut ts.peak, false);
            }
        }
        None => {
            cct::with_orphan_block(|b| b.record_alloc(node, size));
            crate::peak::count_orphan(size, true);
        }
    }
}

#[inline]
fn count_free(tls: &Tls, guarded: bool, h: &Header, user: usize) {
    if h.node == NO_NODE || h.epoch != epoch() || h.node >= cct::node_count() {
        return;
    }
    if !guarded && let Some(ts) = thread_state(tls) {
        if ts.peak.before_free() {
            // Maybe just after a new peak: flushed (and the contexts snapshotted)
            // before this free is counted.
            crate::peak::flush(&mut ts.peak, true);
        }
        ts.block.record_free(h.node, h.size);
        if ts.peak.free(h.size) {
            crate::peak::flush(&mut ts.peak, false);
        }
        if ts.last_alloc == user {
            ts.block.record_temporary(h.node, h.size);
            ts.last_alloc = 0;
        }
        return;
    }
    cct::with_orphan_block(|b| b.record_free(h.node, h.size));
    crate::peak::count_orphan(h.size, false);
}

/// glibc block for `size` user bytes at alignment `1 << shift` (shift >= 4).
#[inline]
unsafe fn real_block(size: usize, shift: u8, zero: bool) -> Option<(usize, usize)> {
    let offset = 1usize << shift;
    let total = size.checked_add(offset)?;
    // SAFETY: plain calls into glibc's allocator.
    let p = unsafe {
        if shift == 4 {
            if zero {
                real::__libc_calloc(1, total)
            } else {
                real::__libc_malloc(total)
            }
        } else {
            let p = real::__libc_memalign(offset, total);
            if zero && !p.is_null() {
                core::ptr::write_bytes(p as *mut u8, 0, total);
            }
            p
        }
    };
    if p.is_null() {
        None
    } else {
        Some((p as usize, p as usize + offset))
    }
}

/// Hand out `user`: write its header and live bit, or give the block back. The
/// block's first 16 bytes are cleared: where glibc keeps the `fd_nextsize` and
/// `bk_nextsize` links of a free large chunk, which would otherwise read as pointers
/// to the leak scan in a block the program never wrote (memcheck knows them undefined).
#[inline]
fn publish(real_start: usize, user: usize, size: usize, node: u32, shift: u8) -> bool {
    if size >= 16 {
        // SAFETY: the block holds at least 16 bytes from `user`.
        unsafe { (user as *mut [u64; 2]).write([0, 0]) };
    }
    // SAFETY: user - 16 .. user lies inside the block just allocated.
    unsafe {
        Header {
            size: size as u64,
            node,
            epoch: epoch(),
            offset_shift: shift,
            flags: 0,
        }
        .write(user)
    };
    if live::mark_live(user) {
        return true;
    }
    // SAFETY: real_start came from glibc and was never handed out.
    unsafe { real::__libc_free(real_start as *mut c_void) };
    false
}

/// malloc, calloc and the aligned family. `shift` is log2 of the alignment (>= 4).
///
/// # Safety
/// `fp` is the frame pushed by the hook trampoline (the stack walk starts there).
pub unsafe fn allocate(size: usize, shift: u8, zero: bool, fp: usize) -> *mut c_void {
    let r = TLS.try_with(|tls| {
        match mode(tls) {
            ACTIVE => {}
            _ => return None,
        }
        let guarded = tls.guard.replace(true);
        let (node, ts) = node_here(tls, guarded, fp);
        // SAFETY: glibc allocation.
        let result = match unsafe { real_block(size, shift, zero) } {
            Some((start, user)) if publish(start, user, size, node, shift) => {
                count_alloc(ts, node, size as u64, user);
                user as *mut c_void
            }
            _ => {
                set_errno(libc::ENOMEM);
                core::ptr::null_mut()
            }
        };
        tls.guard.set(guarded);
        Some(result)
    });
    match r {
        Ok(Some(p)) => p,
        // Passthrough (no bitmap) or no TLS: plain glibc, no header anywhere.
        _ => unsafe {
            if shift == 4 {
                if zero {
                    real::__libc_calloc(1, size)
                } else {
                    real::__libc_malloc(size)
                }
            } else {
                real::__libc_memalign(1 << shift, size)
            }
        },
    }
}

/// free.
///
/// # Safety
/// `ptr` is NULL or any pointer: blocks not handed out by the hooks are reported, never touched.
pub unsafe fn release(ptr: *mut c_void, fp: usize) {
    if ptr.is_null() {
        return;
    }
    let user = ptr as usize;
    let r = TLS.try_with(|tls| {
        if mode(tls) != ACTIVE {
            return false;
        }
        let guarded = tls.guard.replace(true);
        if live::take_live(user) {
            // SAFETY: the live bit was ours to clear, so the header is this block's.
            let h = unsafe { Header::read(user) };
            count_free(tls, guarded, &h, user);
            live::remember_freed(user);
            // SAFETY: glibc's own pointer for this block.
            unsafe { real::__libc_free(h.real_start(user) as *mut c_void) };
        } else {
            let kind = if live::recently_freed(user) {
                ErrorKind::DoubleFree
            } else {
                ErrorKind::InvalidFree
            };
            heap_error(tls, guarded, kind, user, fp);
        }
        tls.guard.set(guarded);
        true
    });
    if !matches!(r, Ok(true)) {
        // SAFETY: passthrough mode: every block is glibc's own.
        unsafe { real::__libc_free(ptr) };
    }
}

/// realloc.
///
/// # Safety
/// As for [`release`]; `fp` is the hook trampoline's frame.
pub unsafe fn reallocate(ptr: *mut c_void, size: usize, fp: usize) -> *mut c_void {
    if ptr.is_null() {
        return unsafe { allocate(size, 4, false, fp) };
    }
    if size == 0 {
        // glibc frees and returns NULL.
        unsafe { release(ptr, fp) };
        return core::ptr::null_mut();
    }
    let user = ptr as usize;
    let r = TLS.try_with(|tls| {
        if mode(tls) != ACTIVE {
            return None;
        }
        let guarded = tls.guard.replace(true);
        let result = reallocate_active(tls, guarded, user, size, fp);
        tls.guard.set(guarded);
        Some(result)
    });
    match r {
        Ok(Some(p)) => p,
        // SAFETY: passthrough mode: every block is glibc's own.
        _ => unsafe { real::__libc_realloc(ptr, size) },
    }
}

fn reallocate_active(tls: &Tls, guarded: bool, user: usize, size: usize, fp: usize) -> *mut c_void {
    if !live::is_live(user) {
        let kind = if live::recently_freed(user) {
            ErrorKind::ReallocOfFreed
        } else {
            ErrorKind::InvalidFree
        };
        heap_error(tls, guarded, kind, user, fp);
        // The program goes on with a fresh block: the old contents are gone.
        tls.guard.set(guarded);
        let p = unsafe { allocate(size, 4, false, fp) };
        tls.guard.set(true);
        return p;
    }
    // SAFETY: live, so the header is the block's.
    let old = unsafe { Header::read(user) };
    if old.offset_shift != 4 {
        // Aligned blocks move to an ordinary block (glibc's realloc keeps no alignment either).
        tls.guard.set(guarded);
        let p = unsafe { allocate(size, 4, false, fp) };
        if !p.is_null() {
            // SAFETY: both blocks hold at least the bytes copied.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    user as *const u8,
                    p as *mut u8,
                    (old.size as usize).min(size),
                )
            };
            unsafe { release(user as *mut c_void, fp) };
        }
        tls.guard.set(true);
        return p;
    }
    let Some(total) = size.checked_add(HEADER_SIZE) else {
        set_errno(libc::ENOMEM);
        return core::ptr::null_mut();
    };
    if !live::take_live(user) {
        // Freed by another thread meanwhile.
        heap_error(tls, guarded, ErrorKind::ReallocOfFreed, user, fp);
        return core::ptr::null_mut();
    }
    // SAFETY: we own the block (its live bit was ours to clear).
    let q = unsafe { real::__libc_realloc(old.real_start(user) as *mut c_void, total) } as usize;
    if q == 0 {
        live::mark_live(user);
        set_errno(libc::ENOMEM);
        return core::ptr::null_mut();
    }
    count_free(tls, guarded, &old, user);
    let (node, ts) = node_here(tls, guarded, fp);
    let new_user = q + HEADER_SIZE;
    // SAFETY: the header lies inside the block glibc just returned.
    unsafe {
        Header {
            size: size as u64,
            node,
            epoch: epoch(),
            offset_shift: 4,
            flags: 0,
        }
        .write(new_user)
    };
    if live::mark_live(new_user) {
        count_alloc(ts, node, size as u64, new_user);
    }
    // Even if the address cannot be tracked, the old block is gone: hand the
    // new one out (its free will be reported as invalid) rather than fail.
    new_user as *mut c_void
}

/// malloc_usable_size.
///
/// # Safety
/// As for [`release`].
pub unsafe fn usable_size(ptr: *mut c_void) -> usize {
    if ptr.is_null() {
        return 0;
    }
    let user = ptr as usize;
    let r = TLS.try_with(|tls| {
        if mode(tls) != ACTIVE {
            return None;
        }
        if !live::is_live(user) {
            return Some(0);
        }
        let was = tls.guard.replace(true);
        // SAFETY: live block.
        let h = unsafe { Header::read(user) };
        let offset = 1usize << h.offset_shift;
        let n = unsafe { real::real_usable_size(h.real_start(user) as *mut c_void) }
            .saturating_sub(offset);
        tls.guard.set(was);
        Some(n)
    });
    match r {
        Ok(Some(n)) => n,
        _ => unsafe { real::real_usable_size(ptr) },
    }
}

/// Record a heap error on the current path, once per (kind, path), and stop
/// the program if MPROF_ON_ERROR=abort. Never forwards the pointer to glibc.
fn heap_error(tls: &Tls, guarded: bool, kind: ErrorKind, address: usize, fp: usize) {
    let node = if guarded {
        ROOT
    } else {
        match thread_state(tls) {
            Some(ts) => ts.current_node(fp),
            None => ROOT,
        }
    };
    let first = ERRORS.with(|errors| {
        if let Some(e) = errors.iter_mut().find(|e| e.kind == kind && e.node == node) {
            e.count += 1;
            false
        } else {
            errors.push(ErrorRecord {
                kind,
                node,
                address: address as u64,
                count: 1,
            });
            true
        }
    });
    if first {
        let what = match kind {
            ErrorKind::DoubleFree => "double free of",
            ErrorKind::InvalidFree => "free of a pointer never allocated:",
            ErrorKind::ReallocOfFreed => "realloc of freed block",
        };
        eprintln!(
            "mprof: {what} {address:#x} (not passed to the allocator; see the allocation errors table)"
        );
    }
    if config().is_some_and(|c| c.on_error == OnError::Abort) {
        eprintln!("mprof: MPROF_ON_ERROR=abort: writing the profile and aborting");
        crate::endings::final_dump_here();
        // SAFETY: abort never returns.
        unsafe { libc::abort() };
    }
}
