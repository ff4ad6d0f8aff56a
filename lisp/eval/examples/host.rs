//! A host that runs untrusted Lisp: a sandboxed interpreter (no files,
//! environment or processes; heap, fuel and frame limits that hold), typed
//! natives, conversions, a closure held through a handle, a termination from
//! a watchdog, and typed errors the host matches on.
//!
//! Run it with `cargo run -p mprof-lisp --example host`.

use std::collections::HashMap;

use mprof_lisp::{ErrorKind, HostValue, Interpreter, LispError, Options};

fn main() -> Result<(), LispError> {
    // 1. A sandbox: no capabilities, 64 MB of heap, 50 million instructions a run.
    let options = Options { max_heap: 64 << 20, max_fuel: Some(50_000_000), ..Options::sandboxed() };
    let mut lisp = Interpreter::new(options)?;

    // 2. A native with typed arguments; the host's state is captured by the closure.
    let prices = HashMap::from([("apple".to_string(), 3u32), ("pear".to_string(), 5)]);
    lisp.register_fn("price-of", move |(item,): (String,)| {
        prices.get(&item).copied().ok_or_else(|| format!("no price for {item}"))
    })?;

    // 3. Conversions both ways.
    lisp.eval("(defun basket-total (items) (reduce #'+ (mapcar #'price-of items)))")?;
    let total: u64 = lisp.call_as("basket-total", (vec!["apple", "pear", "apple"],))?;
    println!("basket total = {total}");

    // 4. A closure held by the host and called later, after collections.
    let next_id = lisp.eval_handle("(let ((n 0)) (lambda () (incf n)))")?;
    lisp.full_collection();
    for _ in 0..3 {
        println!("next id = {:?}", lisp.call_value(&next_id, &[])?);
    }

    // 5. Typed errors: the host tells the causes apart without reading messages.
    let hostile = [
        ("read a file", r#"(with-open-file (s "/etc/passwd") (read-line s))"#),
        ("read the environment", r#"(mprof-ext:getenv "HOME")"#),
        ("spin forever", "(loop (handler-case (loop) (condition () nil)))"),
        // Last: what it keeps stays live until the host clears it below.
        ("catch every storage-condition", "(defvar *keep* nil) (loop (handler-case (loop (push (make-string 10000) *keep*)) (storage-condition () nil)))"),
        ("bad native argument", "(price-of 42)"),
        ("unreadable", "(+ 1 2"),
    ];
    for (what, program) in hostile {
        match lisp.eval(program) {
            Ok(v) => println!("{what}: unexpectedly {v:?}"),
            Err(e) => match &e.kind {
                ErrorKind::Heap { used, limit } => println!("{what}: heap limit ({} MB of {} MB)", used >> 20, limit >> 20),
                ErrorKind::Fuel { limit } => println!("{what}: fuel limit of {limit} instructions"),
                ErrorKind::Reader { line, column, .. } => println!("{what}: reader error at {line}:{column}"),
                ErrorKind::Condition => println!("{what}: {} — {}", e.condition_type, e.message),
                other => println!("{what}: {other:?}"),
            },
        }
    }
    lisp.eval("(setq *keep* nil)")?;

    // 6. A watchdog ends a run no handler can keep alive (here from a native; a
    //    real host would call `terminate` from another thread on a timer).
    let terminator = lisp.terminator();
    lisp.register_fn("watchdog-fires", move |(): ()| {
        terminator.terminate();
        Ok(HostValue::Nil)
    })?;
    let e = lisp.eval("(handler-case (progn (watchdog-fires) (loop)) (condition () :survived))").unwrap_err();
    println!("watchdog: {:?}", e.kind);

    // The interpreter goes on after every one of these.
    println!("still alive: {:?}", lisp.eval("(+ 1 2)")?);
    Ok(())
}
