//! The Lisp profile against the process: a program dominated by a hash table
//! and a vector grown one element at a time must show as kept what the
//! allocator really holds for them, charged to the functions that grew them.
//!
//! The test binary counts every byte through its own global allocator, so
//! "what the process holds" is measured, not estimated. It holds one test:
//! the counter is process-wide and other tests would disturb it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

use mprof_engine::monitor::MonitorOptions;
use mprof_engine::profile::{BinKey, Profile};
use mprof_lisp::{Interpreter, Options};

struct Counting;

static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const N: usize = 300_000;

fn eval(lisp: &mut Interpreter, src: &str) {
    if let Err(e) = lisp.eval_source(src, Some("test")) {
        panic!("evaluation failed: {e}");
    }
}

/// Kept bytes in the bin of this type.
fn kept_of_type(p: &Profile, name: &str) -> u64 {
    p.bins
        .iter()
        .filter(|b| matches!(b.key, BinKey::Type(t) if p.types.get(t.0 as usize).is_some_and(|n| n == name)))
        .map(|b| b.counters.kept_bytes())
        .sum()
}

/// Kept bytes allocated directly by the function of this name.
fn kept_by_function(p: &Profile, name: &str) -> u64 {
    p.nodes
        .iter()
        .filter(|n| p.functions.get(n.func.0 as usize).is_some_and(|f| f.name == name))
        .flat_map(|n| n.counters.iter())
        .map(|c| c.kept_bytes())
        .sum()
}

#[test]
fn kept_bytes_of_grown_containers_match_the_allocator() {
    let mut lisp = match Interpreter::with_io(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
        Options::default(),
    ) {
        Ok(l) => l,
        Err(e) => panic!("the interpreter did not start: {e}"),
    };
    eval(
        &mut lisp,
        "(defvar *table* nil) (defvar *vec* nil)
         (defun build-table (n)
           (let ((h (make-hash-table))) (dotimes (i n) (setf (gethash i h) i)) h))
         (defun grow-vector (v n) (dotimes (i n) (vector-push-extend i v)) v)
         (defun build-vector (n) (grow-vector (make-array 0 :adjustable t :fill-pointer 0) n))",
    );
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    lisp.full_collection();
    let before = LIVE.load(Ordering::Relaxed);
    eval(&mut lisp, &format!("(setf *table* (build-table {N}) *vec* (build-vector {N})) nil"));
    lisp.full_collection();
    let held = LIVE.load(Ordering::Relaxed) - before;
    let p = lisp.profiler().full_profile();

    let table = kept_of_type(&p, "hash-table");
    let vector = kept_of_type(&p, "vector");
    // By construction: each entry is a hash and two 16-byte values inline, plus an
    // index slot; each element one 16-byte value. Growth by doubling leaves at most
    // as much slack again.
    assert!(table >= (N * 40) as u64 && table <= (N * 2 * 50) as u64, "hash table kept {table}");
    assert!(vector >= (N * 16) as u64 && vector <= (N * 2 * 16 + 1024) as u64, "vector kept {vector}");
    // Charged to the functions that grew them: the whole table to BUILD-TABLE, the
    // vector's buffer to GROW-VECTOR (the last to reallocate it), nothing to BUILD-VECTOR.
    assert!(kept_by_function(&p, "BUILD-TABLE") >= table, "{}", kept_by_function(&p, "BUILD-TABLE"));
    assert!(kept_by_function(&p, "VECTOR-PUSH-EXTEND") + kept_by_function(&p, "GROW-VECTOR") >= vector);
    assert!(kept_by_function(&p, "BUILD-VECTOR") < 1024);
    // Against the process: what the allocator holds for the run is what the profile keeps,
    // within 5% (the rest is the interpreter's own bookkeeping and compiled code).
    let kept = p.nodes.iter().flat_map(|n| n.counters.iter()).map(|c| c.kept_bytes()).sum::<u64>();
    let ratio = kept as f64 / held as f64;
    eprintln!("hash table {table} B, vector {vector} B, profile keeps {kept} B, allocator holds {held} B");
    assert!((0.95..=1.05).contains(&ratio), "profile keeps {kept} bytes, allocator holds {held} ({ratio:.3})");
}
