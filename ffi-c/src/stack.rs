//! Capturing the chain of return addresses at an allocation.
//!
//! The default walks frame pointers: each frame holds the caller's frame
//! pointer at `[fp]` and the return address at `[fp+8]`. Every step is
//! validated before it is read: the next frame pointer must be 8-aligned,
//! strictly above the current one (stacks grow down, so callers live higher)
//! and inside the thread's stack, taken once per thread. A broken chain (code
//! without frame pointers, a corrupted stack) therefore ends the walk instead
//! of faulting. The walk allocates nothing and takes no lock.
//!
//! The fallback (`MPROF_UNWIND=dwarf`) is libgcc's `_Unwind_Backtrace`, which
//! reads DWARF CFI (`.eh_frame`) and so sees through frames built without frame
//! pointers. It is chosen over a pure-Rust unwinder because libgcc_s is
//! already loaded by Rust's standard library, finds every loaded module itself
//! (including dlopen'ed ones, via `_dl_find_object`), and needs no module
//! registry of ours; it is slower per call, which is why it is not the default.
//!
//! Both produce innermost-first return addresses starting at the caller of the
//! hook, so the library's own frames never appear.

use core::ffi::{c_int, c_void};

/// The thread's stack, as [low, high) addresses. Frames are searched only inside.
#[derive(Clone, Copy, Debug)]
pub struct StackBounds {
    pub high: usize,
}

unsafe extern "C" {
    static __libc_stack_end: *mut c_void;
}

/// The current thread's stack top. For the main thread, glibc's
/// `__libc_stack_end` (pthread_getattr_np would read /proc and allocate); for
/// others, pthread_getattr_np, which only reads the thread descriptor.
pub fn current_bounds() -> StackBounds {
    // SAFETY: plain syscalls and glibc calls on our own thread.
    unsafe {
        if libc::getpid() == libc::gettid() {
            let end = __libc_stack_end as usize;
            // Round up to the page: frames of _start sit just below the end.
            return StackBounds {
                high: (end | 4095) + 1,
            };
        }
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return StackBounds { high: usize::MAX };
        }
        let mut addr: *mut c_void = core::ptr::null_mut();
        let mut size: usize = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            StackBounds {
                high: addr as usize + size,
            }
        } else {
            StackBounds { high: usize::MAX }
        }
    }
}

/// Walk frame pointers from the hook trampoline's frame `fp` into `out`
/// (innermost first), and count how many leading entries equal `previous`
/// (the thread's last capture) at the same index. Returns (frames, equal).
///
/// `[fp+8]` is the return address into the caller of malloc and is always
/// taken (the trampoline built that frame). Then each saved frame pointer is
/// validated as described in the module comment. The comparison rides along
/// the walk, which is bound by the latency of its dependent loads, so
/// recognising an unchanged stack costs almost nothing.
///
/// # Safety
/// `fp` must be the frame the hook trampoline pushed (readable 16 bytes).
#[inline]
pub unsafe fn walk_frame_pointers(
    fp: usize,
    bounds: StackBounds,
    out: &mut [u64],
    previous: &[u64],
) -> (usize, usize) {
    if out.is_empty() {
        return (0, 0);
    }
    // SAFETY: the trampoline's frame is on our stack.
    let first = unsafe { *((fp + 8) as *const u64) };
    out[0] = first;
    let mut equal_so_far = previous.first() == Some(&first);
    let mut equal = equal_so_far as usize;
    let mut n = 1;
    let mut cur = fp;
    while n < out.len() {
        // SAFETY: cur was validated (or is the trampoline frame).
        let next = unsafe { *(cur as *const usize) };
        if next <= cur || next & 7 != 0 || next.saturating_add(16) > bounds.high {
            break;
        }
        // SAFETY: next is 8-aligned and inside [cur, high - 16].
        let ra = unsafe { *((next + 8) as *const u64) };
        if ra < 4096 {
            break;
        }
        out[n] = ra;
        equal_so_far &= previous.get(n) == Some(&ra);
        equal += equal_so_far as usize;
        n += 1;
        cur = next;
    }
    (n, equal)
}

#[repr(C)]
struct UnwindContext {
    _private: [u8; 0],
}
type UnwindTraceFn = extern "C" fn(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int;
unsafe extern "C" {
    fn _Unwind_Backtrace(trace: UnwindTraceFn, arg: *mut c_void) -> c_int;
    fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
}

struct DwarfWalk<'a> {
    first: u64,
    started: bool,
    out: &'a mut [u64],
    n: usize,
}

const URC_NO_REASON: c_int = 0;
const URC_END_OF_STACK: c_int = 5;

extern "C" fn dwarf_step(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int {
    // SAFETY: arg is the DwarfWalk passed to _Unwind_Backtrace below.
    let w = unsafe { &mut *(arg as *mut DwarfWalk) };
    // SAFETY: ctx is the live context libgcc gives the callback.
    let ip = unsafe { _Unwind_GetIP(ctx) } as u64;
    if !w.started {
        // Skip the library's own frames: the walk starts at the caller of the hook.
        if ip != w.first {
            return URC_NO_REASON;
        }
        w.started = true;
    }
    if w.n >= w.out.len() || ip == 0 {
        return URC_END_OF_STACK;
    }
    w.out[w.n] = ip;
    w.n += 1;
    URC_NO_REASON
}

/// Unwind with DWARF CFI. Falls back to the frame-pointer walk's first frame
/// if the unwinder never reaches the caller of the hook.
///
/// # Safety
/// As for [`walk_frame_pointers`].
pub unsafe fn walk_dwarf(fp: usize, out: &mut [u64]) -> usize {
    if out.is_empty() {
        return 0;
    }
    // SAFETY: the trampoline frame is valid.
    let first = unsafe { *((fp + 8) as *const u64) };
    let mut w = DwarfWalk {
        first,
        started: false,
        out,
        n: 0,
    };
    // SAFETY: the callback only touches `w`.
    unsafe { _Unwind_Backtrace(dwarf_step, &mut w as *mut DwarfWalk as *mut c_void) };
    if w.n == 0 {
        w.out[0] = first;
        w.n = 1;
    }
    w.n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forged_chain_stops_at_the_first_bad_link() {
        // Three frames on a fake stack: good, good, then a link pointing downwards.
        let mut stack = [0u64; 16];
        let base = stack.as_mut_ptr() as usize;
        let f0 = base;
        let f1 = base + 32;
        let f2 = base + 64;
        stack[0] = f1 as u64;
        stack[1] = 0x40_1000;
        stack[4] = f2 as u64;
        stack[5] = 0x40_2000;
        stack[8] = base as u64; // goes backwards: must stop here
        stack[9] = 0x40_3000;
        std::hint::black_box(&mut stack);
        let bounds = StackBounds {
            high: base + 16 * 8,
        };
        let mut out = [0u64; 8];
        let (n, equal) = unsafe { walk_frame_pointers(f0, bounds, &mut out, &[]) };
        assert_eq!(&out[..n], &[0x40_1000, 0x40_2000, 0x40_3000]);
        assert_eq!(equal, 0);
        let previous = [0x40_1000, 0x40_2000, 0x40_9999, 0x40_3000];
        let (_, equal) = unsafe { walk_frame_pointers(f0, bounds, &mut out, &previous) };
        assert_eq!(
            equal, 2,
            "equal leading entries stop at the first difference"
        );
    }

    #[test]
    fn a_chain_leaving_the_stack_or_misaligned_stops() {
        for bad in [17usize, 4096] {
            let mut stack = [0u64; 8];
            let base = stack.as_mut_ptr() as usize;
            stack[0] = (base + bad) as u64; // misaligned, then beyond the stack top
            stack[1] = 0x40_1000;
            std::hint::black_box(&mut stack);
            let bounds = StackBounds { high: base + 64 };
            let mut out = [0u64; 8];
            assert_eq!(
                unsafe { walk_frame_pointers(base, bounds, &mut out, &[]) }.0,
                1,
                "link {bad}"
            );
            assert_eq!(out[0], 0x40_1000);
        }
        let stack = [0u64; 2];
        let mut none: [u64; 0] = [];
        let bounds = StackBounds { high: usize::MAX };
        assert_eq!(
            unsafe { walk_frame_pointers(stack.as_ptr() as usize, bounds, &mut none, &[]) },
            (0, 0)
        );
    }

    #[test]
    fn current_bounds_contain_this_frame() {
        let local = 0u8;
        let here = &local as *const u8 as usize;
        let b = current_bounds();
        assert!(here < b.high, "{here:#x} {:#x}", b.high);
    }
}
