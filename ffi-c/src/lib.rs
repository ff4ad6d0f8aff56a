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
//! Layers, from the top: `hooks` (exported trampolines) and `api` (`mprof.h`) ->
//! `runtime` (thread state, alloc/free/realloc bodies, errors, start-up, fork, exit)
//! -> `endings` (the file written however the process ends: signals, `_exit`,
//! crashes, through a helper thread that also samples memory over time) -> `dump` +
//! `modules` + `leaks` + `gate` (writing the raw file: return addresses and the
//! module table, symbolized by its reader; `leaks` classifies never-freed blocks at
//! exit, `gate` turns definitely lost bytes into an exit status) -> `samples` (memory
//! over time) -> `peak` (the true peak and its contexts) -> `state` (what the
//! runtime, the writer and the endings share: the reentrancy guard, settings, epoch,
//! baseline, errors, the dump lock) -> `unwind`/`stack` (capture), `cct` (tree and
//! counters), `live` (headers and the live bitmap), `children`, `config`, `lock`,
//! `segvec`, `real`. No module imports one above it: the hot path never reaches the
//! writer but through `endings`.
//! The hooks are compiled out of this crate's unit tests, which therefore run
//! on the normal allocator; the end-to-end tests in tests/ffi_c.rs run real C
//! programs under the built library.

pub mod api;
pub mod cct;
pub mod children;
pub mod config;
pub mod dump;
pub mod endings;
pub mod gate;
#[cfg(all(not(test), target_arch = "x86_64", target_os = "linux"))]
pub mod hooks;
pub mod leaks;
pub mod live;
pub mod lock;
pub mod modules;
pub mod peak;
pub mod real;
pub mod runtime;
pub mod samples;
pub mod segvec;
pub mod stack;
pub mod state;
pub mod unwind;

#[cfg(not(test))]
#[global_allocator]
static ALLOCATOR: real::RealAlloc = real::RealAlloc;
