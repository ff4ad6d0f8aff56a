//! List builtins that take no function arguments: the `c[ad]{2,4}r`
//! accessors, `first`..`tenth`, tails (`nthcdr last butlast ldiff tailp`),
//! construction and copying (`make-list copy-list copy-tree pairlis`...),
//! property lists (`getf get-properties`), and the `sys::%...` fast paths the
//! prelude's keyword-taking functions (member, assoc, union...) use when the
//! test is one of the standard equality predicates and there is no `:key`.
//!
//! Invariants: loops over cdr chains are iterative (long lists never deepen
//! the Rust stack); a dotted or circular list where a proper one is needed
//! is a `type-error`, never a hang, except where CL itself loops (callers of
//! the fast paths pass lists CL requires to be proper, and every walk here
//! stops at the first non-cons); recursion into cars (`copy-tree`) is bounded.

use crate::runtime::cycle::CycleCheck;
use gc_arena::Gc;
use mprof_heap::value::Cons;
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

/// Equality tests the fast paths understand, by the code the prelude's
/// `sys::%test-code` returns: 0 eq, 1 eql, 2 equal, 3 equalp.
#[derive(Clone, Copy)]
pub enum Test {
    Eq,
    Eql,
    Equal,
    Equalp,
}

impl Test {
    pub fn from_code<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Test, Raise<'gc>> {
        match v {
            Value::Fixnum(0) => Ok(Test::Eq),
            Value::Fixnum(1) | Value::Nil => Ok(Test::Eql),
            Value::Fixnum(2) => Ok(Test::Equal),
            Value::Fixnum(3) => Ok(Test::Equalp),
            other => Err(ctx.type_error(other, "(INTEGER 0 3)")),
        }
    }

    #[inline]
    pub fn test<'gc>(self, a: Value<'gc>, b: Value<'gc>) -> bool {
        match self {
            Test::Eq => a.eq(b),
            Test::Eql => crate::runtime::equal::eql(a, b),
            Test::Equal => crate::runtime::equal::equal(a, b),
            Test::Equalp => crate::runtime::equal::equalp(a, b),
        }
    }

    pub fn hash_test(self) -> mprof_heap::value::HashTest {
        use mprof_heap::value::HashTest;
        match self {
            Test::Eq => HashTest::Eq,
            Test::Eql => HashTest::Eql,
            Test::Equal => HashTest::Equal,
            Test::Equalp => HashTest::Equalp,
        }
    }
}

fn list_error<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Raise<'gc> {
    ctx.type_error(v, "LIST")
}

/// car of a list designator, type-checked (CAR of NIL is NIL).
#[inline]
fn car_of<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Value<'gc>, Raise<'gc>> {
    match v {
        Value::Cons(c) => Ok(c.car.get()),
        Value::Nil => Ok(Value::Nil),
        other => Err(list_error(ctx, other)),
    }
}

#[inline]
fn cdr_of<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Value<'gc>, Raise<'gc>> {
    match v {
        Value::Cons(c) => Ok(c.cdr.get()),
        Value::Nil => Ok(Value::Nil),
        other => Err(list_error(ctx, other)),
    }
}

/// Apply a c[ad]+r path, written as in the name (applied right to left).
fn cxr<'gc>(ctx: &Ctx<'_, 'gc>, path: &[u8], v: Value<'gc>) -> LResult<'gc> {
    let mut cur = v;
    for op in path.iter().rev() {
        cur = if *op == b'a' { car_of(ctx, cur)? } else { cdr_of(ctx, cur)? };
    }
    Ok(cur)
}

macro_rules! cxr_fns {
    ($($f:ident $path:literal),* $(,)?) => {
        $(fn $f<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> { cxr(ctx, $path, a[0]) })*
    };
}

cxr_fns!(
    caar b"aa", cadr b"ad", cdar b"da", cddr b"dd",
    caaar b"aaa", caadr b"aad", cadar b"ada", caddr b"add",
    cdaar b"daa", cdadr b"dad", cddar b"dda", cdddr b"ddd",
    caaaar b"aaaa", caaadr b"aaad", caadar b"aada", caaddr b"aadd",
    cadaar b"adaa", cadadr b"adad", caddar b"adda", cadddr b"addd",
    cdaaar b"daaa", cdaadr b"daad", cdadar b"dada", cdaddr b"dadd",
    cddaar b"ddaa", cddadr b"ddad", cdddar b"ddda", cddddr b"dddd",
    first_ b"a", rest_ b"d",
);

/// The nth cdr of a list (n may run off the end: NIL).
fn nthcdr_of<'gc>(ctx: &Ctx<'_, 'gc>, n: usize, list: Value<'gc>) -> LResult<'gc> {
    let mut cur = list;
    for _ in 0..n {
        match cur {
            Value::Cons(c) => cur = c.cdr.get(),
            Value::Nil => return Ok(Value::Nil),
            other => return Err(list_error(ctx, other)),
        }
    }
    Ok(cur)
}

macro_rules! nth_fns {
    ($($f:ident $n:literal),* $(,)?) => {
        $(fn $f<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
            let tail = nthcdr_of(ctx, $n, a[0])?;
            car_of(ctx, tail)
        })*
    };
}

nth_fns!(second 1, third 2, fourth 3, fifth 4, sixth 5, seventh 6, eighth 7, ninth 8, tenth 9);

fn nthcdr<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[0])?;
    nthcdr_of(ctx, n, a[1])
}

/// (sys:%set-car cons value) -> value: the update function of CAR places.
fn set_car<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Cons(c) => {
            alloc::set_car(ctx.mc, c, a[1]);
            Ok(a[1])
        }
        other => Err(ctx.type_error(other, "CONS")),
    }
}

fn set_cdr<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Cons(c) => {
            alloc::set_cdr(ctx.mc, c, a[1]);
            Ok(a[1])
        }
        other => Err(ctx.type_error(other, "CONS")),
    }
}

/// (sys:%set-nth n list value) -> value
fn set_nth<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[0])?;
    let tail = nthcdr_of(ctx, n, a[1])?;
    match tail {
        Value::Cons(c) => {
            alloc::set_car(ctx.mc, c, a[2]);
            Ok(a[2])
        }
        // As (rplaca (nthcdr n list) value): the tail is not a cons.
        other => Err(ctx.type_error(other, "CONS")),
    }
}

/// The number of conses in a list, stopping at a dotted tail; a circular list is a
/// type error (it has no end to stop at).
fn conses<'gc>(ctx: &Ctx<'_, 'gc>, list: Value<'gc>) -> Result<usize, Raise<'gc>> {
    let mut n = 0;
    let mut cur = list;
    let mut check = CycleCheck::new(cur);
    while let Value::Cons(c) = cur {
        n += 1;
        cur = c.cdr.get();
        if check.looped(cur) {
            return Err(list_error(ctx, list));
        }
    }
    Ok(n)
}

fn count_arg<'gc>(ctx: &Ctx<'_, 'gc>, a: A<'_, 'gc>, i: usize) -> Result<usize, Raise<'gc>> {
    match a.get(i) {
        None => Ok(1),
        // A bignum count is larger than any list.
        Some(Value::BigInt(b)) if b.0.sign() != num_bigint::Sign::Minus => Ok(usize::MAX),
        Some(&v) => ctx.index_arg(v),
    }
}

fn last<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = count_arg(ctx, a, 1)?;
    let list = a[0];
    if !list.is_list() {
        return Err(list_error(ctx, list));
    }
    if n == 1 {
        let mut cur = list;
        let mut check = CycleCheck::new(cur);
        while let Value::Cons(c) = cur {
            match c.cdr.get() {
                next @ Value::Cons(_) => cur = next,
                _ => break,
            }
            if check.looped(cur) {
                return Err(list_error(ctx, list));
            }
        }
        return Ok(cur);
    }
    // Two pointers n apart: one pass, no length.
    let mut lead = list;
    for _ in 0..n {
        match lead {
            Value::Cons(c) => lead = c.cdr.get(),
            _ => return Ok(list),
        }
    }
    let mut trail = list;
    let mut check = CycleCheck::new(lead);
    while let Value::Cons(c) = lead {
        lead = c.cdr.get();
        trail = alloc::cdr(trail);
        if check.looped(lead) {
            return Err(list_error(ctx, list));
        }
    }
    Ok(trail)
}

fn butlast<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = count_arg(ctx, a, 1)?;
    if !a[0].is_list() {
        return Err(list_error(ctx, a[0]));
    }
    let len = conses(ctx, a[0])?;
    if n >= len {
        return Ok(Value::Nil);
    }
    let items: Vec<Value<'gc>> = alloc::list_iter(a[0]).take(len - n).collect();
    Ok(alloc::list(ctx.mc, &items))
}

fn nbutlast<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = count_arg(ctx, a, 1)?;
    if !a[0].is_list() {
        return Err(list_error(ctx, a[0]));
    }
    let len = conses(ctx, a[0])?;
    if n >= len {
        return Ok(Value::Nil);
    }
    if let Value::Cons(c) = nthcdr_of(ctx, len - n - 1, a[0])? {
        alloc::set_cdr(ctx.mc, c, Value::Nil);
    }
    Ok(a[0])
}

/// Parse `&key` arguments in Rust: returns the value of each wanted keyword
/// (first occurrence wins, as in CL), rejecting unknown keywords.
pub fn keys<'gc, const N: usize>(
    ctx: &Ctx<'_, 'gc>,
    fname: &str,
    args: A<'_, 'gc>,
    names: [&str; N],
) -> Result<[Option<Value<'gc>>; N], Raise<'gc>> {
    if !args.len().is_multiple_of(2) {
        return Err(Raise::program(format!("odd number of keyword arguments to {fname}")));
    }
    let mut out = [None; N];
    let allow_other = args
        .chunks(2)
        .any(|p| matches!(p[0], Value::Symbol(s) if &*s.name == "ALLOW-OTHER-KEYS") && p[1].truthy());
    for pair in args.chunks(2) {
        let name: String = match pair[0] {
            Value::Symbol(s) if ctx.kw(&s.name).eq(pair[0]) => s.name.to_string(),
            other => return Err(Raise::program(format!("{} is not a keyword argument of {fname}", ctx.print(other, true)))),
        };
        let name = name.as_str();
        match names.iter().position(|n| *n == name) {
            Some(i) => {
                if out[i].is_none() {
                    out[i] = Some(pair[1]);
                }
            }
            None if allow_other || name == "ALLOW-OTHER-KEYS" => {}
            None => return Err(Raise::program(format!("unknown keyword :{name} for {fname}"))),
        }
    }
    Ok(out)
}

fn make_list<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[0])?;
    let [init] = keys(ctx, "MAKE-LIST", &a[1..], ["INITIAL-ELEMENT"])?;
    let init = init.unwrap_or(Value::Nil);
    ctx.reserve("MAKE-LIST: a list", n, mprof_heap::object::CONS_BYTES)?;
    let mut out = Value::Nil;
    for _ in 0..n {
        out = alloc::cons(ctx.mc, init, out);
    }
    Ok(out)
}

fn revappend<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut out = a[1];
    let mut cur = a[0];
    let mut check = CycleCheck::new(cur);
    while let Value::Cons(c) = cur {
        out = alloc::cons(ctx.mc, c.car.get(), out);
        cur = c.cdr.get();
        if check.looped(cur) {
            return Err(list_error(ctx, a[0]));
        }
    }
    if !cur.is_nil() {
        return Err(list_error(ctx, a[0]));
    }
    Ok(out)
}

/// Reverse a proper list in place onto `tail`.
pub fn nreverse_list_onto<'gc>(ctx: &Ctx<'_, 'gc>, list: Value<'gc>, tail: Value<'gc>) -> LResult<'gc> {
    // Check first so an error leaves the list intact.
    let mut cur = list;
    let mut check = CycleCheck::new(cur);
    while let Value::Cons(c) = cur {
        cur = c.cdr.get();
        if check.looped(cur) {
            return Err(list_error(ctx, list));
        }
    }
    if !cur.is_nil() {
        return Err(list_error(ctx, list));
    }
    let mut prev = tail;
    let mut cur = list;
    while let Value::Cons(c) = cur {
        let next = c.cdr.get();
        alloc::set_cdr(ctx.mc, c, prev);
        prev = cur;
        cur = next;
    }
    Ok(prev)
}

fn nreconc<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    nreverse_list_onto(ctx, a[0], a[1])
}

fn list_length<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut n = 0i64;
    let mut fast = a[0];
    let mut slow = a[0];
    loop {
        match fast {
            Value::Nil => return Ok(Value::Fixnum(n)),
            Value::Cons(c) => {
                fast = c.cdr.get();
                n += 1;
            }
            _ => return Err(list_error(ctx, a[0])),
        }
        match fast {
            Value::Nil => return Ok(Value::Fixnum(n)),
            Value::Cons(c) => {
                fast = c.cdr.get();
                n += 1;
            }
            _ => return Err(list_error(ctx, a[0])),
        }
        slow = alloc::cdr(slow);
        if fast.eq(slow) {
            return Ok(Value::Nil);
        }
    }
}

/// (sys:%check-cycle list n): for a Lisp loop that has walked n conses of `list`
/// looking for its end, how many of its conses it may walk before it asks again:
/// the list's length, or a milestone max(1024, 2n) when it is longer. A type-error
/// when those conses close a cycle. Asking at n = 0, 1024, 2048... costs the loop at
/// most four cons steps per element, and lets it compare an index instead of testing
/// each tail.
fn check_cycle<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let n = ctx.index_arg(a[1])?;
    let milestone = n.saturating_mul(2).clamp(1024, i64::MAX as usize);
    let mut cur = a[0];
    let mut check = CycleCheck::new(cur);
    let mut walked = 0;
    while walked < milestone {
        let Value::Cons(c) = cur else { break };
        cur = c.cdr.get();
        walked += 1;
        if check.looped(cur) {
            return Err(list_error(ctx, a[0]));
        }
    }
    Ok(Value::Fixnum(walked as i64))
}

fn endp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Nil => Ok(ctx.t()),
        Value::Cons(_) => Ok(Value::Nil),
        other => Err(list_error(ctx, other)),
    }
}

/// Copy the conses of a list (keeping a dotted tail), mapping each car.
fn copy_spine<'gc>(ctx: &Ctx<'_, 'gc>, list: Value<'gc>, mut f: impl FnMut(Value<'gc>) -> Value<'gc>) -> LResult<'gc> {
    let Value::Cons(first) = list else { return Ok(list) };
    let head = alloc::cons(ctx.mc, f(first.car.get()), Value::Nil);
    let Value::Cons(mut tail) = head else { return Ok(head) };
    let mut cur = first.cdr.get();
    let mut check = CycleCheck::new(list);
    while let Value::Cons(c) = cur {
        if check.looped(cur) {
            return Err(list_error(ctx, list));
        }
        let cell = alloc::cons(ctx.mc, f(c.car.get()), Value::Nil);
        alloc::set_cdr(ctx.mc, tail, cell);
        if let Value::Cons(t) = cell {
            tail = t;
        }
        cur = c.cdr.get();
    }
    alloc::set_cdr(ctx.mc, tail, cur);
    Ok(head)
}

fn copy_list<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !a[0].is_list() {
        return Err(list_error(ctx, a[0]));
    }
    copy_spine(ctx, a[0], |x| x)
}

fn copy_alist<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !a[0].is_list() {
        return Err(list_error(ctx, a[0]));
    }
    let mc = ctx.mc;
    copy_spine(ctx, a[0], |x| match x {
        Value::Cons(c) => alloc::cons(mc, c.car.get(), c.cdr.get()),
        other => other,
    })
}

/// A fresh copy of every cons of the tree (no Rust recursion: see tree_walk).
fn copy_tree<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    crate::runtime::tree_walk::rebuild(ctx.mc, a[0], false, "COPY-TREE", |_| None)
}

fn acons<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let pair = alloc::cons(ctx.mc, a[0], a[1]);
    Ok(alloc::cons(ctx.mc, pair, a[2]))
}

/// As SBCL: the pairs in reverse order of the keys, in front of the alist.
fn pairlis<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let mut out = a.get(2).copied().unwrap_or(Value::Nil);
    let (mut k, mut d) = (a[0], a[1]);
    let mut check = CycleCheck::new(k);
    loop {
        match (k, d) {
            (Value::Cons(kc), Value::Cons(dc)) => {
                let pair = alloc::cons(ctx.mc, kc.car.get(), dc.car.get());
                out = alloc::cons(ctx.mc, pair, out);
                k = kc.cdr.get();
                d = dc.cdr.get();
                if check.looped(k) {
                    return Err(list_error(ctx, a[0]));
                }
            }
            (Value::Nil, Value::Nil) => return Ok(out),
            (Value::Nil | Value::Cons(_), Value::Nil | Value::Cons(_)) => {
                return Err(Raise::error("PAIRLIS: the lists of keys and data have different lengths"));
            }
            (Value::Nil | Value::Cons(_), other) | (other, _) => return Err(list_error(ctx, other)),
        }
    }
}

fn ldiff<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !a[0].is_list() {
        return Err(list_error(ctx, a[0]));
    }
    let mut items = Vec::new();
    let mut cur = a[0];
    let mut check = CycleCheck::new(cur);
    loop {
        if crate::runtime::equal::eql(cur, a[1]) {
            return Ok(alloc::list(ctx.mc, &items));
        }
        match cur {
            Value::Cons(c) => {
                items.push(c.car.get());
                cur = c.cdr.get();
                if check.looped(cur) {
                    return Err(list_error(ctx, a[0]));
                }
            }
            tail => return Ok(alloc::list_with_tail(ctx.mc, &items, tail)),
        }
    }
}

fn tailp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !a[1].is_list() {
        return Err(list_error(ctx, a[1]));
    }
    let mut cur = a[1];
    let mut check = CycleCheck::new(cur);
    loop {
        if crate::runtime::equal::eql(cur, a[0]) {
            return Ok(ctx.t());
        }
        match cur {
            Value::Cons(c) => cur = c.cdr.get(),
            _ => return Ok(Value::Nil),
        }
        if check.looped(cur) {
            return Err(list_error(ctx, a[1]));
        }
    }
}

/// A malformed (odd-length or dotted) property list is a type-error, as in SBCL.
fn plist_error<'gc>(ctx: &Ctx<'_, 'gc>, plist: Value<'gc>) -> Raise<'gc> {
    ctx.type_error(plist, "LIST")
}

/// The cons holding the indicator, or None.
fn plist_find<'gc>(ctx: &Ctx<'_, 'gc>, plist: Value<'gc>, ind: Value<'gc>) -> Result<Option<Gc<'gc, Cons<'gc>>>, Raise<'gc>> {
    let mut cur = plist;
    let mut check = CycleCheck::new(cur);
    loop {
        match cur {
            Value::Nil => return Ok(None),
            Value::Cons(c) => {
                let Value::Cons(v) = c.cdr.get() else { return Err(plist_error(ctx, plist)) };
                if c.car.get().eq(ind) {
                    return Ok(Some(c));
                }
                cur = v.cdr.get();
                if check.looped(cur) {
                    return Err(plist_error(ctx, plist));
                }
            }
            _ => return Err(plist_error(ctx, plist)),
        }
    }
}

fn getf<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match plist_find(ctx, a[0], a[1])? {
        Some(c) => Ok(alloc::car(c.cdr.get())),
        None => Ok(a.get(2).copied().unwrap_or(Value::Nil)),
    }
}

/// (sys:%putf plist indicator value) -> the new plist (the same one,
/// updated in place, when the indicator is present).
fn putf<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match plist_find(ctx, a[0], a[1])? {
        Some(c) => {
            if let Value::Cons(v) = c.cdr.get() {
                alloc::set_car(ctx.mc, v, a[2]);
            }
            Ok(a[0])
        }
        None => {
            let rest = alloc::cons(ctx.mc, a[2], a[0]);
            Ok(alloc::cons(ctx.mc, a[1], rest))
        }
    }
}

/// (sys:%remf plist indicator) -> (values new-plist found-p); destructive.
fn remf<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let plist = a[0];
    let mut prev: Option<Gc<'gc, Cons<'gc>>> = None;
    let mut cur = plist;
    let mut check = CycleCheck::new(cur);
    loop {
        match cur {
            Value::Nil => return Ok(ctx.set_values(&[plist, Value::Nil])),
            Value::Cons(c) => {
                let Value::Cons(v) = c.cdr.get() else { return Err(plist_error(ctx, plist)) };
                if c.car.get().eq(a[1]) {
                    let after = v.cdr.get();
                    let t = ctx.t();
                    return Ok(match prev {
                        Some(p) => {
                            alloc::set_cdr(ctx.mc, p, after);
                            ctx.set_values(&[plist, t])
                        }
                        None => ctx.set_values(&[after, t]),
                    });
                }
                prev = Some(v);
                cur = v.cdr.get();
                if check.looped(cur) {
                    return Err(plist_error(ctx, plist));
                }
            }
            _ => return Err(plist_error(ctx, plist)),
        }
    }
}

fn get_properties<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let plist = a[0];
    let indicators = proper_items(ctx, a[1])?;
    let mut cur = plist;
    let mut check = CycleCheck::new(cur);
    loop {
        match cur {
            Value::Nil => return Ok(ctx.set_values(&[Value::Nil, Value::Nil, Value::Nil])),
            Value::Cons(c) => {
                let Value::Cons(v) = c.cdr.get() else { return Err(plist_error(ctx, plist)) };
                let ind = c.car.get();
                if indicators.iter().any(|x| x.eq(ind)) {
                    return Ok(ctx.set_values(&[ind, v.car.get(), cur]));
                }
                cur = v.cdr.get();
                if check.looped(cur) {
                    return Err(plist_error(ctx, plist));
                }
            }
            _ => return Err(plist_error(ctx, plist)),
        }
    }
}

// ---- fast paths for the prelude (standard test, no :key) ----

/// (sys:%member item list test-code)
fn member<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let test = Test::from_code(ctx, a[2])?;
    let item = a[0];
    let mut cur = a[1];
    let mut check = CycleCheck::new(cur);
    loop {
        match cur {
            Value::Cons(c) => {
                if test.test(item, c.car.get()) {
                    return Ok(cur);
                }
                cur = c.cdr.get();
                if check.looped(cur) {
                    return Err(list_error(ctx, a[1]));
                }
            }
            Value::Nil => return Ok(Value::Nil),
            _ => return Err(list_error(ctx, a[1])),
        }
    }
}

/// (sys:%assoc item alist test-code): NIL elements of the alist are skipped.
fn assoc<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    assoc_side(ctx, a, true)
}

/// (sys:%rassoc item alist test-code)
fn rassoc<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    assoc_side(ctx, a, false)
}

fn assoc_side<'gc>(ctx: &Ctx<'_, 'gc>, a: A<'_, 'gc>, by_car: bool) -> LResult<'gc> {
    let test = Test::from_code(ctx, a[2])?;
    let item = a[0];
    let mut cur = a[1];
    let mut check = CycleCheck::new(cur);
    loop {
        match cur {
            Value::Cons(c) => {
                match c.car.get() {
                    pair @ Value::Cons(p) => {
                        let k = if by_car { p.car.get() } else { p.cdr.get() };
                        if test.test(item, k) {
                            return Ok(pair);
                        }
                    }
                    Value::Nil => {}
                    other => return Err(list_error(ctx, other)),
                }
                cur = c.cdr.get();
                if check.looped(cur) {
                    return Err(list_error(ctx, a[1]));
                }
            }
            Value::Nil => return Ok(Value::Nil),
            _ => return Err(list_error(ctx, a[1])),
        }
    }
}

fn proper_items<'gc>(ctx: &Ctx<'_, 'gc>, list: Value<'gc>) -> Result<Vec<Value<'gc>>, Raise<'gc>> {
    alloc::list_to_vec(list).ok_or_else(|| ctx.type_error(list, "LIST"))
}

/// A membership test over a set of items: linear for small sets, hashed
/// (with hash codes consistent with the test) for large ones.
struct Set<'gc> {
    test: Test,
    items: Vec<Value<'gc>>,
    hashed: Option<std::collections::HashMap<u64, Vec<Value<'gc>>>>,
}

impl<'gc> Set<'gc> {
    fn new(test: Test, items: Vec<Value<'gc>>) -> Self {
        let hashed = (items.len() > 16).then(|| {
            let mut m: std::collections::HashMap<u64, Vec<Value<'gc>>> = std::collections::HashMap::new();
            for &x in &items {
                m.entry(crate::runtime::equal::hash_key(test.hash_test(), x)).or_default().push(x);
            }
            m
        });
        Set { test, items, hashed }
    }
    fn contains(&self, x: Value<'gc>) -> bool {
        match &self.hashed {
            Some(m) => m
                .get(&crate::runtime::equal::hash_key(self.test.hash_test(), x))
                .is_some_and(|b| b.iter().any(|y| self.test.test(x, *y))),
            None => self.items.iter().any(|y| self.test.test(x, *y)),
        }
    }
}

/// (sys:%set-op op list1 list2 test-code): op 0 union, 1 intersection,
/// 2 set-difference, 3 set-exclusive-or, 4 subsetp. Orders follow SBCL.
fn set_op<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let test = Test::from_code(ctx, a[3])?;
    let l1 = proper_items(ctx, a[1])?;
    let l2 = proper_items(ctx, a[2])?;
    match a[0] {
        Value::Fixnum(0) => {
            // SBCL: the elements of list1 not in list2, consed in front of list2.
            if l1.is_empty() {
                return Ok(a[2]);
            }
            let s2 = Set::new(test, l2);
            let mut out = a[2];
            for &x in &l1 {
                if !s2.contains(x) {
                    out = alloc::cons(ctx.mc, x, out);
                }
            }
            Ok(out)
        }
        Value::Fixnum(1) => {
            let s2 = Set::new(test, l2);
            let mut out = Value::Nil;
            for &x in &l1 {
                if s2.contains(x) {
                    out = alloc::cons(ctx.mc, x, out);
                }
            }
            Ok(out)
        }
        Value::Fixnum(2) => {
            if l2.is_empty() {
                return Ok(a[1]);
            }
            let s2 = Set::new(test, l2);
            let mut out = Value::Nil;
            for &x in &l1 {
                if !s2.contains(x) {
                    out = alloc::cons(ctx.mc, x, out);
                }
            }
            Ok(out)
        }
        Value::Fixnum(3) => {
            let s1 = Set::new(test, l1.clone());
            let s2 = Set::new(test, l2.clone());
            let mut out = Value::Nil;
            for &x in &l1 {
                if !s2.contains(x) {
                    out = alloc::cons(ctx.mc, x, out);
                }
            }
            for &x in &l2 {
                if !s1.contains(x) {
                    out = alloc::cons(ctx.mc, x, out);
                }
            }
            Ok(out)
        }
        Value::Fixnum(4) => {
            let s2 = Set::new(test, l2);
            Ok(ctx.bool(l1.iter().all(|x| s2.contains(*x))))
        }
        other => Err(ctx.type_error(other, "(INTEGER 0 4)")),
    }
}

/// (sys:%subst new old tree test-code): every subtree (each car and each
/// tail of a spine) the test matches against `old` becomes `new`; unchanged
/// suffixes of a spine are shared, as in SBCL.
fn subst<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let test = Test::from_code(ctx, a[3])?;
    let (new, old) = (a[0], a[1]);
    crate::runtime::tree_walk::rebuild(ctx.mc, a[2], true, "SUBST", |x| test.test(old, x).then_some(new))
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("CAAR", 1, 1, caar),
    cl("CADR", 1, 1, cadr),
    cl("CDAR", 1, 1, cdar),
    cl("CDDR", 1, 1, cddr),
    cl("CAAAR", 1, 1, caaar),
    cl("CAADR", 1, 1, caadr),
    cl("CADAR", 1, 1, cadar),
    cl("CADDR", 1, 1, caddr),
    cl("CDAAR", 1, 1, cdaar),
    cl("CDADR", 1, 1, cdadr),
    cl("CDDAR", 1, 1, cddar),
    cl("CDDDR", 1, 1, cdddr),
    cl("CAAAAR", 1, 1, caaaar),
    cl("CAAADR", 1, 1, caaadr),
    cl("CAADAR", 1, 1, caadar),
    cl("CAADDR", 1, 1, caaddr),
    cl("CADAAR", 1, 1, cadaar),
    cl("CADADR", 1, 1, cadadr),
    cl("CADDAR", 1, 1, caddar),
    cl("CADDDR", 1, 1, cadddr),
    cl("CDAAAR", 1, 1, cdaaar),
    cl("CDAADR", 1, 1, cdaadr),
    cl("CDADAR", 1, 1, cdadar),
    cl("CDADDR", 1, 1, cdaddr),
    cl("CDDAAR", 1, 1, cddaar),
    cl("CDDADR", 1, 1, cddadr),
    cl("CDDDAR", 1, 1, cdddar),
    cl("CDDDDR", 1, 1, cddddr),
    cl("FIRST", 1, 1, first_),
    cl("REST", 1, 1, rest_),
    cl("SECOND", 1, 1, second),
    cl("THIRD", 1, 1, third),
    cl("FOURTH", 1, 1, fourth),
    cl("FIFTH", 1, 1, fifth),
    cl("SIXTH", 1, 1, sixth),
    cl("SEVENTH", 1, 1, seventh),
    cl("EIGHTH", 1, 1, eighth),
    cl("NINTH", 1, 1, ninth),
    cl("TENTH", 1, 1, tenth),
    cl("NTHCDR", 2, 2, nthcdr),
    cl("LAST", 1, 2, last),
    cl("BUTLAST", 1, 2, butlast),
    cl("NBUTLAST", 1, 2, nbutlast),
    cl("MAKE-LIST", 1, MANY, make_list),
    cl("REVAPPEND", 2, 2, revappend),
    cl("NRECONC", 2, 2, nreconc),
    cl("LIST-LENGTH", 1, 1, list_length),
    cl("ENDP", 1, 1, endp),
    cl("COPY-LIST", 1, 1, copy_list),
    cl("COPY-ALIST", 1, 1, copy_alist),
    cl("COPY-TREE", 1, 1, copy_tree),
    cl("ACONS", 3, 3, acons),
    cl("PAIRLIS", 2, 3, pairlis),
    cl("LDIFF", 2, 2, ldiff),
    cl("TAILP", 2, 2, tailp),
    cl("GETF", 2, 3, getf),
    cl("GET-PROPERTIES", 2, 2, get_properties),
    sys("%SET-CAR", 2, 2, set_car),
    sys("%SET-CDR", 2, 2, set_cdr),
    sys("%SET-NTH", 3, 3, set_nth),
    sys("%PUTF", 3, 3, putf),
    sys("%REMF", 2, 2, remf),
    sys("%LIST-MEMBER", 3, 3, member),
    sys("%CHECK-CYCLE", 2, 2, check_cycle),
    sys("%LIST-ASSOC", 3, 3, assoc),
    sys("%LIST-RASSOC", 3, 3, rassoc),
    sys("%SET-OP", 4, 4, set_op),
    sys("%LIST-SUBST", 4, 4, subst),
];
