//! Embedding mprof-lisp in a Rust program: create an interpreter with a
//! frame limit, evaluate strings, load a Lisp file, call Lisp functions with
//! host values and convert the results back, capture the program's output,
//! and handle Lisp errors as ordinary Rust values.
//!
//! Run it with `cargo run -p mprof-lisp --example embed`.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use mprof_lisp::{HostValue, Interpreter, LispError, Options};

/// A writer the host keeps a handle on, to read what Lisp printed.
#[derive(Clone, Default)]
struct Captured(Rc<RefCell<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() -> Result<(), LispError> {
    // 1. An interpreter whose Lisp call depth is bounded: deeper recursion
    //    is a STACK-EXHAUSTED error, never a crash of the host.
    let options = Options { max_frames: 10_000, ..Options::default() };
    let output = Captured::default();
    let mut lisp = Interpreter::with_io(
        Box::new(output.clone()),
        Box::new(std::io::stderr()),
        Box::new(std::io::empty()),
        options,
    )?;

    // 2. Evaluate a string; the result arrives as a HostValue.
    let sum = lisp.eval("(+ 1 2 3)")?;
    println!("(+ 1 2 3) => {sum:?}");
    // eval_source returns every value of the last form, printed as prin1 would.
    let values = lisp.eval_source("(floor 17 5)", None)?;
    println!("(floor 17 5) => {}", values.join(" "));

    // 3. Load a file of definitions.
    let library = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/shapes.lisp");
    lisp.load_file(library)?;

    // 4. Call a Lisp function with arguments built on the host side.
    let shapes = HostValue::List(vec![
        HostValue::List(vec![HostValue::Symbol(":rect".into()), HostValue::Integer(3), HostValue::Integer(4)]),
        HostValue::List(vec![HostValue::Symbol(":circle".into()), HostValue::Float(1.0)]),
    ]);
    let total = lisp.call("total-area", &[shapes])?;

    // 5. Convert the result to a Rust type.
    let total: f64 = match total {
        HostValue::Integer(i) => i as f64,
        HostValue::Float(x) => x,
        other => {
            eprintln!("unexpected result {other:?}");
            f64::NAN
        }
    };
    println!("total area = {total:.4}");
    let text = lisp.call("describe-shape", &[HostValue::List(vec![HostValue::Symbol(":circle".into()), HostValue::Integer(2)])])?;
    if let HostValue::String(s) = text {
        println!("described: {s}");
    }

    // What the Lisp side printed went to our writer.
    lisp.eval("(format t \"hello from Lisp~%\")")?;
    print!("captured output: {}", String::from_utf8_lossy(&output.0.borrow()));

    // 6. Errors are values: the condition type, its report and a backtrace.
    match lisp.call("area", &[HostValue::List(vec![HostValue::Symbol(":hexagon".into())])]) {
        Ok(v) => println!("unexpectedly got {v:?}"),
        Err(e) => println!("error {}: {} (backtrace: {})", e.condition_type, e.message, e.backtrace.join(" < ")),
    }

    // 7. The frame limit set in step 1 stops runaway recursion.
    lisp.eval("(defun forever (n) (1+ (forever (1+ n))))")?;
    match lisp.call("forever", &[HostValue::Integer(0)]) {
        Ok(v) => println!("unexpectedly got {v:?}"),
        Err(e) => println!("runaway recursion stopped: {}", e.condition_type),
    }

    // The interpreter is still usable after errors.
    println!("(area '(:rect 2 5)) => {:?}", lisp.eval("(area '(:rect 2 5))")?);
    Ok(())
}
