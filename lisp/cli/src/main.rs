//! The `mprof-lisp` binary: thin glue over the library (command line, REPL).
//!
//! It uses mimalloc as its allocator: gc-arena makes one allocation per heap
//! object, and mimalloc serves these small blocks far faster than glibc's
//! malloc (2.4x on float-heavy code, see bench/lisp). The profiler's sizes are
//! computed by `alloc_object`, not measured from the allocator, so profiles do
//! not change. Hosts embedding the library choose their own allocator.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_arena_eager_commit` (see `mi_option_e` in mimalloc.h).
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Commit arena memory on demand: eager commit costs ~8 MB of resident memory
/// for no speed gain here. This must run before the first allocation, which
/// the Rust runtime makes before `main`, hence a constructor.
extern "C" fn configure_allocator() {
    // SAFETY: setting an option is a plain store in mimalloc's option table.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
}

#[used]
#[unsafe(link_section = ".init_array")]
static CONFIGURE_ALLOCATOR: extern "C" fn() = configure_allocator;

fn main() {
    std::process::exit(mprof_lisp_cli::main());
}
