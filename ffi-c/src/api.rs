//! The optional C API of `mprof.h`: start, stop, reset and dump.
//!
//! Every function may be called at any time, from any thread, before or
//! after the first malloc; none of them panics or aborts.

use crate::runtime;
use core::ffi::{CStr, c_char, c_int};
use core::sync::atomic::Ordering;

/// Attribute new allocations again (the default at start).
#[unsafe(no_mangle)]
pub extern "C" fn mprof_start() {
    runtime::ensure_started();
    runtime::ENABLED.store(true, Ordering::Relaxed);
}

/// Stop attributing new allocations; frees of blocks already recorded still count.
#[unsafe(no_mangle)]
pub extern "C" fn mprof_stop() {
    runtime::ensure_started();
    runtime::ENABLED.store(false, Ordering::Relaxed);
}

/// Forget everything counted so far; blocks allocated before are no longer counted when freed.
#[unsafe(no_mangle)]
pub extern "C" fn mprof_reset() {
    if runtime::ensure_started() {
        runtime::reset();
    }
}

/// Write the profile now, to `path` or (when NULL) to MPROF_OUT. Returns 0 on
/// success, -1 on failure (the reason is printed on stderr).
///
/// # Safety
/// `path` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mprof_dump(path: *const c_char) -> c_int {
    if !runtime::ensure_started() {
        return -1;
    }
    let result = if path.is_null() {
        let Some(cfg) = crate::state::config() else {
            return -1;
        };
        let forked = crate::state::FORKED_CHILD.load(Ordering::Relaxed);
        crate::dump::write_to(&cfg.path_for(std::process::id(), forked))
    } else {
        // SAFETY: the caller passes a NUL-terminated string.
        let p = unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned();
        crate::dump::write_to(&p)
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            crate::state::with_guard(|| eprintln!("mprof: {e}"));
            -1
        }
    }
}
