//! FORMAT's directives and its float algorithms against SBCL's output.

use num_bigint::BigInt;

use super::floats::*;
use super::*;
use crate::runtime::format::interpret::find_close;
use crate::runtime::format::words::{cardinal, ordinal, roman};

fn fixed(x: f64, w: Option<i64>, d: Option<i64>) -> String {
    let mut s = String::new();
    format_fixed_aux(&mut s, Flo { x, single: false }, w, d, None, None, ' ', false);
    s
}

#[test]
fn fixed_format_rounds_as_sbcl() {
    assert_eq!(fixed(2.675, None, Some(2)), "2.67");
    assert_eq!(fixed(0.125, None, Some(2)), "0.13");
    assert_eq!(fixed(0.015, None, Some(2)), "0.01");
    assert_eq!(fixed(2.5, None, Some(0)), "3.");
    assert_eq!(fixed(1e20, None, None), "100000000000000000000.0");
    assert_eq!(fixed(1e-5, None, None), "0.00001");
    assert_eq!(fixed(5.43216, Some(8), None), " 5.43216");
    assert_eq!(fixed(5.43216, Some(3), None), "5.4");
    assert_eq!(fixed(0.0, None, Some(2)), "0.00");
}

#[test]
fn english_and_roman_numerals() {
    assert_eq!(cardinal(&BigInt::from(1234567)).unwrap_or_default(),
        "one million two hundred thirty-four thousand five hundred sixty-seven");
    assert_eq!(ordinal(&BigInt::from(111)).unwrap_or_default(), "one hundred eleventh");
    assert_eq!(roman(&BigInt::from(1994), false).unwrap_or_default(), "MCMXCIV");
    assert_eq!(roman(&BigInt::from(1994), true).unwrap_or_default(), "MDCCCCLXXXXIIII");
    assert!(roman(&BigInt::from(4000), false).is_err());
}

#[test]
fn malformed_directives_are_errors() {
    for c in ["~", "~'", "~::a", "~@@a", "~1"] {
        assert!(tokenize(c).is_err(), "{c:?} should be rejected");
    }
    assert!(find_close(&tokenize("~{~a~]").unwrap_or_default(), 0, '}').is_err());
    assert!(find_close(&tokenize("~[a~;b").unwrap_or_default(), 0, ']').is_err());
}

/// Every error message a user can get from the engine, with a few
/// successful outputs around them, in one reviewed snapshot.
#[test]
fn messages_and_outputs_snapshot() {
    gc_arena::arena::rootless_mutate(|mc| {
        let pk = mprof_heap::alloc::packages(mc);
        let pctx = PrintContext::new(&pk, pk.user, false);
        let s = |t: &str| mprof_heap::alloc::string(mc, t);
        let n = Value::Fixnum;
        let cases: Vec<(&str, Vec<Value<'_>>)> = vec![
            ("~a ~s ~5d|~:d", vec![s("x"), s("y"), n(42), n(1234567)]),
            ("~{~a~^, ~}", vec![mprof_heap::alloc::list(mc, &[n(1), n(2), n(3)])]),
            ("~r / ~:r / ~@r", vec![n(1234), n(42), n(1994)]),
            ("~,2f ~e ~$", vec![n(3), n(5), n(7)]),
            ("~a", vec![]),
            ("~", vec![]),
            ("~'", vec![]),
            ("~::a", vec![n(1)]),
            ("~:5a", vec![n(1)]),
            ("~99999999999999999999a", vec![n(1)]),
            ("~q", vec![]),
            ("~{~a", vec![mprof_heap::alloc::list(mc, &[])]),
            ("~a~}", vec![n(1)]),
            ("~(~]", vec![]),
            ("~;", vec![]),
            ("~<~>", vec![]),
            ("~<a~:>", vec![]),
            ("~<a~:;b~>", vec![]),
            ("~:^", vec![]),
            ("~c", vec![n(65)]),
            ("~[a~]", vec![s("x")]),
            ("~'x[a~]", vec![]),
            ("~:[a~]", vec![n(1)]),
            ("~@[a~;b~]", vec![n(1)]),
            ("~:@[a~]", vec![n(1)]),
            ("~{~a~}", vec![n(5)]),
            ("~{~}", vec![n(5), mprof_heap::alloc::list(mc, &[])]),
            ("~'x{~a~}", vec![mprof_heap::alloc::list(mc, &[])]),
            ("~?", vec![n(1)]),
            ("~:?", vec![s("a"), mprof_heap::alloc::list(mc, &[])]),
            ("~a~5@*", vec![n(1)]),
            ("~:@*", vec![]),
            ("~:p", vec![]),
            ("~r", vec![s("x")]),
            ("~1r", vec![n(1)]),
            ("~@r", vec![n(0)]),
            ("~:@r", vec![n(5000)]),
            ("~,,,,0:d", vec![n(5)]),
            ("~5,0a", vec![n(1)]),
            ("~'xd", vec![n(1)]),
            ("~5'xd", vec![n(1)]),
            ("~3,4,5,6,7a", vec![n(1)]),
            ("~va", vec![s("x"), n(1)]),
            ("~:f ~:e ~:g", vec![n(1)]),
            ("~*", vec![]),
            ("~100000000%", vec![]),
            ("~{x~}", vec![mprof_heap::alloc::list(mc, &[n(1)])]),
            ("~<a~;b~;c~;d~:>", vec![mprof_heap::alloc::list(mc, &[])]),
            ("~<~a~;b~:>", vec![mprof_heap::alloc::list(mc, &[n(1)])]),
            ("~:<~a~^ ~a~:>", vec![mprof_heap::alloc::list(mc, &[n(1), n(2)])]),
            ("~@<~a ~_~a~:>", vec![n(1), n(2)]),
            ("~<~a~:>", vec![n(7)]),
            ("~3_", vec![]),
            ("~< ~W ~>", vec![n(1)]),
        ];
        let mut out = String::new();
        for (control, args) in &cases {
            let r = match format_to_string(&pctx, control, args) {
                Ok(t) => format!("ok    {t:?}"),
                Err(e) => format!("error {e}"),
            };
            out.push_str(&format!("{control:?} => {r}\n"));
        }
        insta::assert_snapshot!(out);
    });
}
