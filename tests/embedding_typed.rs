//! The typed embedding API as a host uses it: conversions that round-trip or
//! fail with a `Conversion` error (never a silent NIL), handles to closures and
//! hash tables kept valid across collections and released when dropped, and
//! natives with typed, arity-checked arguments whose panics become Lisp errors.

use std::collections::HashMap;

use mprof_lisp::{ErrorKind, HostValue, Interpreter, Options};

fn lisp() -> Interpreter {
    Interpreter::with_io(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()), Options::default())
        .expect("interpreter starts")
}

#[test]
fn conversions_round_trip_through_lisp() {
    let mut lisp = lisp();
    lisp.eval("(defun same (x) x)").unwrap();
    assert_eq!(lisp.call_as::<u8>("same", (200u8,)), Ok(200));
    assert_eq!(lisp.call_as::<i128>("same", (i128::MAX,)), Ok(i128::MAX));
    assert_eq!(lisp.call_as::<u64>("same", (u64::MAX,)), Ok(u64::MAX));
    assert_eq!(lisp.call_as::<f64>("same", (0.25f64,)), Ok(0.25));
    assert_eq!(lisp.call_as::<bool>("same", (true,)), Ok(true));
    assert_eq!(lisp.call_as::<char>("same", ('é',)), Ok('é'));
    assert_eq!(lisp.call_as::<String>("same", ("text",)), Ok("text".to_string()));
    assert_eq!(lisp.call_as::<Vec<i32>>("same", (vec![1, 2, 3],)), Ok(vec![1, 2, 3]));
    assert_eq!(lisp.call_as::<(i32, String)>("same", ((7, "x"),)), Ok((7, "x".to_string())));
    assert_eq!(lisp.call_as::<Option<i32>>("same", (None::<i32>,)), Ok(None));
    let map = HashMap::from([("a".to_string(), 1i64), ("b".to_string(), 2)]);
    assert_eq!(lisp.call_as::<HashMap<String, i64>>("same", (map.clone(),)), Ok(map));
    assert_eq!(lisp.eval_as::<Vec<u16>>("(list 1 2 (+ 1 2))"), Ok(vec![1, 2, 3]));
}

#[test]
fn mismatches_are_conversion_errors_not_nil() {
    let mut lisp = lisp();
    let e = lisp.eval_as::<u8>("300").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conversion);
    assert!(e.message.contains("u8"), "{}", e.message);
    assert_eq!(lisp.eval_as::<String>("'sym").unwrap_err().kind, ErrorKind::Conversion);
    lisp.eval("(defun same (x) x)").unwrap();
    for bad in [
        HostValue::Other("#<HASH-TABLE>".into()),
        HostValue::Symbol("hello world".into()),
        HostValue::BigInteger("12x".into()),
    ] {
        let e = lisp.call("same", std::slice::from_ref(&bad)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conversion, "{bad:?}: {e}");
    }
    assert_eq!(lisp.call("same", &[HostValue::Symbol("|hello world|".into())]), Ok(HostValue::Symbol("|hello world|".into())));
}

#[test]
fn a_closure_held_by_the_host_is_called_after_collections() {
    let mut lisp = lisp();
    let counter = lisp.eval_handle("(let ((n 0)) (lambda (k) (incf n k)))").unwrap();
    // Garbage and full collections in between: the closure and its state survive.
    lisp.eval("(dotimes (i 200000) (make-list 10))").unwrap();
    lisp.full_collection();
    assert_eq!(lisp.call_value(&counter, &[HostValue::Integer(5)]), Ok(HostValue::Integer(5)));
    lisp.full_collection();
    assert_eq!(lisp.call_value(&counter, &[HostValue::Integer(2)]), Ok(HostValue::Integer(7)));
    // A handle passed back to Lisp is the object itself.
    let table = lisp.eval_handle("(let ((h (make-hash-table))) (setf (gethash :k h) 42) h)").unwrap();
    lisp.eval("(defun lookup (h k) (gethash k h))").unwrap();
    assert_eq!(
        lisp.call("lookup", &[HostValue::Handle(table.clone()), HostValue::Symbol(":k".into())]),
        Ok(HostValue::Integer(42))
    );
    let before = lisp.held_handles();
    drop(table);
    assert_eq!(lisp.held_handles(), before - 1, "a dropped handle releases its object");
}

#[test]
fn a_handle_of_another_interpreter_is_refused() {
    let mut a = lisp();
    let mut b = lisp();
    let f = a.eval_handle("#'car").unwrap();
    let e = b.call_value(&f, &[HostValue::List(vec![HostValue::Integer(1)])]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conversion);
}

#[test]
fn typed_natives_check_arity_and_types_and_catch_panics() {
    let mut lisp = lisp();
    lisp.register_fn("host-scale", |(x, k): (f64, u32)| Ok(x * f64::from(k))).unwrap();
    lisp.register_fn("host-panic", |(): ()| -> Result<i32, String> { panic!("boom") }).unwrap();
    assert_eq!(lisp.eval("(host-scale 1.5 4)"), Ok(HostValue::Float(6.0)));
    let arity = lisp.eval("(host-scale 1.5)").unwrap_err();
    assert!(arity.message.contains("takes 2 argument(s), got 1"), "{}", arity.message);
    let types = lisp.eval("(host-scale 1.5 \"four\")").unwrap_err();
    assert!(types.message.contains("argument 2"), "{}", types.message);
    let panicked = lisp.eval("(host-panic)").unwrap_err();
    assert!(panicked.message.contains("panicked: boom"), "{}", panicked.message);
    // The errors are Lisp errors: a handler catches them, and the interpreter goes on.
    assert_eq!(lisp.eval("(handler-case (host-panic) (error () :caught))"), Ok(HostValue::Symbol(":CAUGHT".into())));
}

#[test]
fn errors_say_their_kind_exit_and_reader_position_included() {
    let mut lisp = lisp();
    assert_eq!(lisp.eval("(list 1\n  (+ 2").unwrap_err().kind, ErrorKind::Reader { line: 2, column: 7 });
    let exit = lisp.eval("(mprof-ext:exit :code 3)").unwrap_err();
    assert_eq!((exit.kind.clone(), exit.exit_code()), (ErrorKind::Exit { code: 3 }, Some(3)));
    assert_eq!(lisp.eval("(car 1)").unwrap_err().kind, ErrorKind::Condition);
}
