//! The real allocator, reached without recursion, and the library's own memory.
//!
//! glibc exports its allocator under `__libc_*` names beside the interposable
//! `malloc` family, so the hooks call those directly: no `dlsym` bootstrap and
//! no way to re-enter a hook. The Rust side of the library allocates through
//! [`RealAlloc`], a `#[global_allocator]` built on the same functions, so the
//! library's own allocations never reach the hooks and never show in the data.
//! Large zero-filled tables (node arrays, counters, the live-block bitmap) come
//! from anonymous `mmap` instead, so they can be reserved lazily and are valid
//! when all-zero.

use core::ffi::c_void;
use std::alloc::{GlobalAlloc, Layout};

unsafe extern "C" {
    pub fn __libc_malloc(size: usize) -> *mut c_void;
    pub fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    pub fn __libc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    pub fn __libc_free(ptr: *mut c_void);
    pub fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
}

/// glibc's `malloc_usable_size`, found once with `dlsym(RTLD_NEXT)`: glibc
/// exports no `__libc_` alias for it. Looked up under the reentrancy guard.
///
/// # Safety
/// `ptr` must be NULL or a block of glibc's allocator.
pub unsafe fn real_usable_size(ptr: *mut c_void) -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static REAL: AtomicUsize = AtomicUsize::new(0);
    let mut f = REAL.load(Ordering::Acquire);
    if f == 0 {
        // SAFETY: dlsym with a NUL-terminated name; RTLD_NEXT skips our own definition.
        f = unsafe { libc::dlsym(libc::RTLD_NEXT, c"malloc_usable_size".as_ptr()) } as usize;
        if f == 0 {
            return 0;
        }
        REAL.store(f, Ordering::Release);
    }
    // SAFETY: f is glibc's malloc_usable_size, whose signature this is.
    let f: unsafe extern "C" fn(*mut c_void) -> usize = unsafe { core::mem::transmute(f) };
    unsafe { f(ptr) }
}

/// The global allocator of the library's Rust code: glibc's allocator entered
/// below the hooks.
pub struct RealAlloc;

// SAFETY: forwards to glibc's allocator, which satisfies the GlobalAlloc contract
// for the alignments requested (memalign for anything above malloc's 16).
unsafe impl GlobalAlloc for RealAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if layout.align() <= 16 {
                __libc_malloc(layout.size()) as *mut u8
            } else {
                __libc_memalign(layout.align(), layout.size()) as *mut u8
            }
        }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if layout.align() <= 16 {
                __libc_calloc(1, layout.size()) as *mut u8
            } else {
                let p = __libc_memalign(layout.align(), layout.size()) as *mut u8;
                if !p.is_null() {
                    core::ptr::write_bytes(p, 0, layout.size());
                }
                p
            }
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Cleared, so the program's blocks that reuse this memory never hold the
        // library's stale pointers for the leak scan to follow.
        unsafe {
            core::ptr::write_bytes(ptr, 0, layout.size());
            __libc_free(ptr as *mut c_void)
        }
    }
    /// A new block, the contents copied, the old block cleared and freed (never
    /// glibc's realloc, which would leave the old contents behind when it moves).
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            let new = Layout::from_size_align_unchecked(new_size, layout.align());
            let p = self.alloc(new);
            if !p.is_null() {
                core::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            p
        }
    }
}

/// Reserve `len` bytes of zero-filled memory outside the heap. Pages are only
/// backed when touched (MAP_NORESERVE), so large reservations are cheap.
pub fn map_zeroed(len: usize) -> *mut u8 {
    // SAFETY: anonymous private mapping; no file, no fixed address.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        core::ptr::null_mut()
    } else {
        p as *mut u8
    }
}

/// Give back a mapping made by [`map_zeroed`] (used when losing a publication race).
pub fn unmap(p: *mut u8, len: usize) {
    // SAFETY: p/len came from map_zeroed and nothing else refers to them.
    unsafe {
        libc::munmap(p as *mut c_void, len);
    }
}
