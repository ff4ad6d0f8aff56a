//! libmprof: profile every malloc and free of a C program with the mprof engine.
//!
//! Preload it (`LD_PRELOAD=libmprof.so ./prog`) or link `libmprof.a`; the
//! program's allocator entry points become the hooks of [`hooks`], which charge
//! each allocation to its calling context (by default each module's CFI or
//! frame pointers, validated frame by frame: `unwind`; or a bare frame-pointer
//! walk or libgcc's unwinder: `stack`) and write a profile file at exit for
//! `mprof report`. The real allocator is glibc's, entered through its
//! `__libc_*` names; the library's own Rust allocations use the same functions
//! through [`real::RealAlloc`], so they never reach the hooks.
//!
//! Layers, from the hot path out: `hooks` (exported trampolines) -> `runtime`
//! (guard, thread state, alloc/free/realloc bodies, errors, fork, exit) ->
//! `unwind`/`stack` (capture), `cct` (tree and counters), `live` (headers and the live
//! bitmap) -> `dump` + `symbolize` + `debuginfo` (writing the file). `endings` writes the
//! file however the process ends (signals, `_exit`, crashes) through a helper
//! thread, which also samples memory over time (`samples`). `children` names each
//! process's file apart. `leaks` classifies never-freed blocks at exit. `api`
//! is `mprof.h`.
//! The hooks are compiled out of this crate's unit tests, which therefore run
//! on the normal allocator; the end-to-end tests in tests/ffi_c.rs run real C
//! programs under the built library.

pub mod api;
pub mod cct;
pub mod children;
pub mod config;
pub mod debuginfo;
pub mod dump;
pub mod endings;
#[cfg(all(not(test), target_arch = "x86_64", target_os = "linux"))]
pub mod hooks;
pub mod leaks;
pub mod live;
pub mod lock;
pub mod real;
pub mod runtime;
pub mod samples;
pub mod segvec;
pub mod stack;
pub mod symbolize;
pub mod unwind;

#[cfg(not(test))]
#[global_allocator]
static ALLOCATOR: real::RealAlloc = real::RealAlloc;
