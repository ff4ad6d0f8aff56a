//! The exported allocator entry points (cdylib and staticlib builds only; unit
//! tests of this crate keep the system allocator).
//!
//! Each hook that may need a stack is a naked trampoline: it pushes a frame
//! (`push rbp; mov rbp, rsp`) and passes that frame's address as an extra last
//! argument. `[frame+8]` is then exactly the return address into the caller of
//! malloc and `[frame]` the caller's frame pointer, whatever the Rust code of
//! the library was compiled with; the stack walk starts from there. The frame
//! also keeps the stack 16-byte aligned for the call.
//!
//! calloc and reallocarray check their multiplication for overflow; the
//! aligned family validates alignments the way glibc does.
//!
//! `_exit` and `_Exit` are interposed too, so a process leaving without `exit`
//! still writes its file (glibc's own internal calls, as in a failed
//! `posix_spawn` child, bind to its hidden alias and never come here). The
//! library's constructor starts the runtime and its helper thread before
//! `main`, at a point where creating a thread is safe.

use crate::runtime::{allocate, reallocate, release, usable_size};
use core::ffi::{c_int, c_void};

/// Define a naked exported hook that forwards its arguments plus its own frame
/// address (in the register of argument `$fp_reg`) to `$imp`.
macro_rules! trampoline {
    ($name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty, $fp_reg:literal, $imp:path) => {
        /// # Safety
        /// The C library's contract for this function.
        #[unsafe(naked)]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            // The CFI lets DWARF unwinders (MPROF_UNWIND=dwarf, debuggers,
            // C++ exceptions thrown through a hook) step through this frame.
            core::arch::naked_asm!(
                ".cfi_startproc",
                "push rbp",
                ".cfi_def_cfa_offset 16",
                ".cfi_offset rbp, -16",
                "mov rbp, rsp",
                ".cfi_def_cfa_register rbp",
                concat!("mov ", $fp_reg, ", rbp"),
                "call {imp}",
                "pop rbp",
                ".cfi_def_cfa rsp, 8",
                "ret",
                ".cfi_endproc",
                imp = sym $imp,
            )
        }
    };
}

trampoline!(malloc(size: usize) -> *mut c_void, "rsi", malloc_impl);
trampoline!(calloc(n: usize, size: usize) -> *mut c_void, "rdx", calloc_impl);
trampoline!(realloc(ptr: *mut c_void, size: usize) -> *mut c_void, "rdx", realloc_impl);
trampoline!(reallocarray(ptr: *mut c_void, n: usize, size: usize) -> *mut c_void, "rcx", reallocarray_impl);
trampoline!(free(ptr: *mut c_void) -> (), "rsi", free_impl);
trampoline!(posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int, "rcx", posix_memalign_impl);
trampoline!(aligned_alloc(align: usize, size: usize) -> *mut c_void, "rdx", memalign_impl);
trampoline!(memalign(align: usize, size: usize) -> *mut c_void, "rdx", memalign_impl);
trampoline!(valloc(size: usize) -> *mut c_void, "rsi", valloc_impl);
trampoline!(pvalloc(size: usize) -> *mut c_void, "rsi", pvalloc_impl);

/// # Safety
/// The C library's contract: never returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _exit(status: c_int) -> ! {
    crate::endings::exit_now(status)
}

/// # Safety
/// The C library's contract: never returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _Exit(status: c_int) -> ! {
    crate::endings::exit_now(status)
}

/// Runs before `main` (after the C library's own constructors): the runtime
/// may already have started on an earlier malloc; the environment children
/// inherit is set and the helper thread started here.
extern "C" fn constructor() {
    if crate::runtime::ensure_started() {
        crate::state::with_guard(|| {
            if let Some(cfg) = crate::state::config() {
                crate::children::prepare_environment(cfg);
            }
            crate::endings::start_helper();
        });
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static CONSTRUCTOR: extern "C" fn() = constructor;

/// Not a trampoline: it records nothing, so it needs no stack.
///
/// # Safety
/// The C library's contract: `ptr` is NULL or a block from this allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc_usable_size(ptr: *mut c_void) -> usize {
    unsafe { usable_size(ptr) }
}

extern "C" fn malloc_impl(size: usize, fp: usize) -> *mut c_void {
    unsafe { allocate(size, 4, false, fp) }
}

extern "C" fn calloc_impl(n: usize, size: usize, fp: usize) -> *mut c_void {
    match n.checked_mul(size) {
        Some(total) => unsafe { allocate(total, 4, true, fp) },
        None => {
            set_errno(libc::ENOMEM);
            core::ptr::null_mut()
        }
    }
}

extern "C" fn realloc_impl(ptr: *mut c_void, size: usize, fp: usize) -> *mut c_void {
    unsafe { reallocate(ptr, size, fp) }
}

extern "C" fn reallocarray_impl(ptr: *mut c_void, n: usize, size: usize, fp: usize) -> *mut c_void {
    match n.checked_mul(size) {
        Some(total) => unsafe { reallocate(ptr, total, fp) },
        None => {
            set_errno(libc::ENOMEM);
            core::ptr::null_mut()
        }
    }
}

extern "C" fn free_impl(ptr: *mut c_void, fp: usize) {
    unsafe { release(ptr, fp) }
}

/// log2 of the alignment to use (at least 16), or None when glibc would refuse it.
fn align_shift(align: usize) -> Option<u8> {
    if align <= 16 {
        return Some(4);
    }
    let a = align.checked_next_power_of_two()?;
    if a > (usize::MAX >> 1) + 1 || a > 1 << 40 {
        return None;
    }
    Some(a.trailing_zeros() as u8)
}

extern "C" fn posix_memalign_impl(
    out: *mut *mut c_void,
    align: usize,
    size: usize,
    fp: usize,
) -> c_int {
    if align == 0
        || !align.is_power_of_two()
        || !align.is_multiple_of(core::mem::size_of::<*mut c_void>())
    {
        return libc::EINVAL;
    }
    let Some(shift) = align_shift(align) else {
        return libc::EINVAL;
    };
    let p = unsafe { allocate(size, shift, false, fp) };
    if p.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: the caller passes a valid out-pointer, as posix_memalign requires.
    unsafe { *out = p };
    0
}

extern "C" fn memalign_impl(align: usize, size: usize, fp: usize) -> *mut c_void {
    match align_shift(align) {
        Some(shift) => unsafe { allocate(size, shift, false, fp) },
        None => {
            set_errno(libc::EINVAL);
            core::ptr::null_mut()
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

extern "C" fn valloc_impl(size: usize, fp: usize) -> *mut c_void {
    let page = page_size();
    unsafe { allocate(size, page.trailing_zeros() as u8, false, fp) }
}

extern "C" fn pvalloc_impl(size: usize, fp: usize) -> *mut c_void {
    let page = page_size();
    match size.checked_add(page - 1) {
        Some(s) => unsafe {
            allocate(
                (s & !(page - 1)).max(page),
                page.trailing_zeros() as u8,
                false,
                fp,
            )
        },
        None => {
            set_errno(libc::ENOMEM);
            core::ptr::null_mut()
        }
    }
}

fn set_errno(e: c_int) {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() = e };
}
