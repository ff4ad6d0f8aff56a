//! Printer tests on values built directly in an arena: the print control
//! settings, circular and deep data, streaming into a sink, interruption.

use std::sync::atomic::AtomicBool;

use gc_arena::{Arena, Mutation, Rootable};

use super::*;
use crate::alloc;

/// Run `f` with a fresh package system.
fn with_heap(f: impl for<'gc> FnOnce(&Mutation<'gc>, &Packages<'gc>)) {
    let arena: Arena<Rootable![()]> = Arena::new(|_| ());
    arena.mutate(|mc, _| {
        let packages = Packages::new(mc);
        f(mc, &packages);
    });
}

fn print_with<'gc>(v: Value<'gc>, p: &Packages<'gc>, escape: bool, settings: Settings) -> String {
    let ctx = PrintContext { settings, ..PrintContext::new(p, p.user, escape) };
    print_to_string(v, &ctx)
}

fn ints<'gc>(mc: &Mutation<'gc>, n: i64) -> Value<'gc> {
    let items: Vec<Value<'gc>> = (1..=n).map(Value::Fixnum).collect();
    alloc::list(mc, &items)
}

/// A proper list of `n` conses whose last cdr points back to the first.
fn circular<'gc>(mc: &Mutation<'gc>, n: i64) -> Value<'gc> {
    let l = ints(mc, n);
    let mut last = l.as_cons().unwrap();
    while let Value::Cons(next) = last.cdr.get() {
        last = next;
    }
    alloc::set_cdr(mc, last, l);
    l
}

#[test]
fn length_and_level_cut_lists_vectors_and_structures() {
    with_heap(|mc, p| {
        let s = Settings::default;
        let l = ints(mc, 5);
        assert_eq!(print_with(l, p, true, Settings { length: Some(3), ..s() }), "(1 2 3 ...)");
        assert_eq!(print_with(l, p, true, Settings { length: Some(0), ..s() }), "(...)");
        assert_eq!(print_with(l, p, true, Settings { length: Some(5), ..s() }), "(1 2 3 4 5)");
        let nested = alloc::list(mc, &[Value::Fixnum(1), alloc::list(mc, &[Value::Fixnum(2), ints(mc, 1)])]);
        assert_eq!(print_with(nested, p, true, Settings { level: Some(1), ..s() }), "(1 #)");
        assert_eq!(print_with(nested, p, true, Settings { level: Some(2), ..s() }), "(1 (2 #))");
        assert_eq!(print_with(nested, p, true, Settings { level: Some(0), ..s() }), "#");
        let v = alloc::vector(mc, (1..=4).map(Value::Fixnum).collect());
        assert_eq!(print_with(v, p, true, Settings { length: Some(2), ..s() }), "#(1 2 ...)");
        // Readably, the limits do not apply.
        assert_eq!(print_with(l, p, true, Settings { length: Some(1), readably: true, ..s() }), "(1 2 3 4 5)");
    });
}

#[test]
fn circular_lists_print_with_labels() {
    with_heap(|mc, p| {
        let c = circular(mc, 3);
        let settings = Settings { circle: true, ..Settings::default() };
        assert_eq!(print_with(c, p, true, settings), "#1=(1 2 3 . #1#)");
        // A shared sublist and a list containing itself.
        let x = ints(mc, 2);
        let both = alloc::list(mc, &[x, x]);
        assert_eq!(print_with(both, p, true, settings), "(#1=(1 2) #1#)");
        let selfish = ints(mc, 2);
        alloc::set_car(mc, selfish.as_cons().unwrap(), selfish);
        assert_eq!(print_with(selfish, p, true, settings), "#1=(#1# 2)");
        // A tail shared with another element: the spine prints `. #1=`.
        let tail_shared = alloc::list(mc, &[x, x.as_cons().unwrap().cdr.get()]);
        assert_eq!(print_with(tail_shared, p, true, settings), "((1 . #1=(2)) #1#)");
        // Without *print-circle*, *print-length* keeps a circular list finite.
        let limited = Settings { length: Some(5), ..Settings::default() };
        assert_eq!(print_with(c, p, true, limited), "(1 2 3 1 2 ...)");
    });
}

#[test]
fn a_million_deep_list_prints_without_recursion() {
    with_heap(|mc, p| {
        let n = 1_000_000;
        let mut v = Value::Nil;
        for _ in 0..n {
            v = alloc::cons(mc, v, Value::Nil);
        }
        let text = print_with(v, p, true, Settings::default());
        assert!(text == format!("{}NIL{}", "(".repeat(n), ")".repeat(n)), "{} bytes", text.len());
        let circled = print_with(v, p, true, Settings { circle: true, ..Settings::default() });
        assert_eq!(circled, text, "nothing is shared, so no labels");
        let cut = print_with(v, p, true, Settings { level: Some(3), ..Settings::default() });
        assert_eq!(cut, "(((#)))");
    });
}

/// A sink that counts what it was given and fails after a limit.
struct Counting {
    chunks: usize,
    bytes: usize,
    largest: usize,
    limit: usize,
}

impl Sink for Counting {
    fn write(&mut self, text: &str) -> Result<(), String> {
        self.chunks += 1;
        self.bytes += text.len();
        self.largest = self.largest.max(text.len());
        if self.bytes > self.limit { Err("full".into()) } else { Ok(()) }
    }
}

#[test]
fn output_is_streamed_in_bounded_chunks_and_a_failing_sink_stops_a_circular_print() {
    with_heap(|mc, p| {
        let c = circular(mc, 10);
        let ctx = PrintContext::new(p, p.user, true);
        let mut sink = Counting { chunks: 0, bytes: 0, largest: 0, limit: 10_000_000 };
        let r = print_into(&mut sink, c, &ctx);
        assert!(matches!(r, Err(Stop::Failed(m)) if m == "full"));
        assert!(sink.chunks > 100, "written as it is produced, {} chunks", sink.chunks);
        assert!(sink.largest < 64 * 1024, "chunks stay small: {}", sink.largest);
    });
}

#[test]
fn the_interrupt_flag_stops_a_circular_print() {
    with_heap(|mc, p| {
        let c = circular(mc, 3);
        let flag = AtomicBool::new(true);
        let ctx = PrintContext { interrupt: Some(&flag), ..PrintContext::new(p, p.user, true) };
        let mut out = String::new();
        let r = print_into(&mut out, c, &ctx);
        assert!(matches!(r, Err(Stop::Interrupted)));
        assert!(out.len() < 100_000, "stopped early: {} bytes", out.len());
        assert!(flag.load(Ordering::Relaxed), "the flag is left for the evaluator");
    });
}

#[test]
fn base_radix_case_gensym_and_array_settings() {
    with_heap(|mc, p| {
        let s = Settings::default;
        let l = alloc::list(mc, &[Value::Fixnum(255), Value::Fixnum(-8)]);
        assert_eq!(print_with(l, p, true, Settings { base: 16, ..s() }), "(FF -8)");
        assert_eq!(print_with(l, p, true, Settings { base: 8, radix: true, ..s() }), "(#o377 #o-10)");
        let sym = p.intern(mc, p.user, "FOO-BAR");
        assert_eq!(print_with(sym, p, true, Settings { case: Case::Downcase, ..s() }), "foo-bar");
        assert_eq!(print_with(sym, p, false, Settings { case: Case::Capitalize, ..s() }), "Foo-Bar");
        let g = Value::Symbol(alloc::make_symbol(mc, "G1"));
        assert_eq!(print_with(g, p, true, s()), "#:G1");
        assert_eq!(print_with(g, p, true, Settings { gensym: false, ..s() }), "G1");
        let both = alloc::list(mc, &[g, g]);
        assert_eq!(print_with(both, p, true, Settings { circle: true, ..s() }), "(#1=#:G1 #1#)");
        let v = alloc::vector(mc, vec![Value::Fixnum(1)]);
        let unreadable = print_with(v, p, true, Settings { array: false, ..s() });
        assert!(unreadable.starts_with("#<(SIMPLE-VECTOR 1) {"), "{unreadable}");
        let text = alloc::string(mc, "ab");
        assert_eq!(print_with(text, p, true, Settings { array: false, ..s() }), "\"ab\"");
    });
}

#[test]
fn printing_readably_refuses_unreadable_objects() {
    with_heap(|mc, p| {
        let ctx = PrintContext {
            settings: Settings { readably: true, ..Settings::default() },
            ..PrintContext::new(p, p.user, false)
        };
        let pkg = alloc::list(mc, &[Value::Fixnum(1), Value::Package(p.user)]);
        let mut out = String::new();
        match print_into(&mut out, pkg, &ctx) {
            Err(Stop::NotReadable(v)) => assert!(matches!(v, Value::Package(_))),
            _ => panic!("a package is not readable"),
        }
        // Readably implies escaping.
        let s = alloc::string(mc, "a\"b");
        assert_eq!(print_to_string(s, &ctx), "\"a\\\"b\"");
    });
}

#[test]
fn every_character_prints_as_the_reader_reads_it() {
    with_heap(|_mc, p| {
        for code in (0u32..0x300).chain([0x2028, 0x1F600]) {
            let Some(c) = char::from_u32(code) else { continue };
            let text = print_with(Value::Char(c), p, true, Settings::default());
            let read = mprof_reader::read_one(&text, 0, &Default::default());
            match read {
                Ok(Some((d, _))) => assert_eq!(d.kind, mprof_reader::DatumKind::Char(c), "{text}"),
                other => panic!("{text} reads as {other:?}"),
            }
        }
    });
}
