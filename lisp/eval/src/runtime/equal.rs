//! The equality predicates `eql`, `equal` and `equalp`, and the hash codes
//! that agree with them (for hash tables).
//!
//! Invariant: `a` equal under a test implies equal hash codes under it.
//! Comparison never recurses in Rust: pairs still to compare wait on an
//! explicit stack (cars are compared before cdrs, so a long list keeps it
//! short), so data of any depth is compared correctly up to
//! [`MAX_PENDING`] pairs waiting at once, past which the checked forms
//! answer None (the builtins signal a storage-condition), as they do after
//! comparing more cons pairs than the heap holds (two circular lists). The one recursion
//! left is equalp looking up a hash table's key in another table, which nests
//! only as deep as hash tables used as keys of hash tables, bounded by
//! [`MAX_KEY_NESTING`].

use mprof_heap::Value;
use mprof_heap::spec::{self, Elem, ElementType};
use mprof_heap::value::{Complex, HashTest};

use crate::runtime::pathnames;

/// Most pairs waiting to be compared at once (32 bytes each): 4,000,000
/// levels of nesting, four times the depth the tests build.
pub const MAX_PENDING: usize = 4_000_000;

/// How deep equalp follows hash tables used as keys of hash tables.
const MAX_KEY_NESTING: usize = 100;

pub fn eql<'gc>(a: Value<'gc>, b: Value<'gc>) -> bool {
    if a.eq(b) {
        return true;
    }
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.val.to_bits() == y.val.to_bits(),
        (Value::BigInt(x), Value::BigInt(y)) => x.0 == y.0,
        (Value::Ratio(x), Value::Ratio(y)) => x.num == y.num && x.den == y.den,
        (Value::Complex(x), Value::Complex(y)) => match (x.val, y.val) {
            (Complex::Double(a, b), Complex::Double(c, d)) => a.to_bits() == c.to_bits() && b.to_bits() == d.to_bits(),
            (Complex::Rational(a, b), Complex::Rational(c, d)) => eql(a, c) && eql(b, d),
            _ => false,
        },
        _ => false,
    }
}

/// The active elements of a rank-one array of any representation, or None
/// (not a vector, or displaced to an array that shrank).
fn vector_elems<'gc>(v: Value<'gc>) -> Option<Vec<Elem<'gc>>> {
    let n = match v {
        Value::String(s) => s.borrow().active().len(),
        Value::Vector(x) => x.borrow().active().len(),
        Value::SpecArray(a) if a.borrow().dims.len() == 1 => a.borrow().active_len(),
        _ => return None,
    };
    (0..n).map(|i| spec::get(v, i)).collect()
}

/// Two elements under equalp: characters ignoring case, numbers with `=`,
/// anything else queued for the walk.
fn elems_equalp<'gc>(x: Elem<'gc>, y: Elem<'gc>, pending: &mut Pending<'gc>) -> bool {
    match (x, y) {
        (Elem::Double(p), Elem::Double(q)) => p == q,
        (Elem::Double(p), Elem::Value(v)) | (Elem::Value(v), Elem::Double(p)) => {
            // Only integers and doubles are stored in arrays with doubles: exact.
            crate::runtime::numbers::to_f64(v).is_some_and(|q| q == p)
        }
        (Elem::Value(Value::Char(c)), Elem::Value(Value::Char(d))) => chars_equal_ignoring_case(c, d),
        (Elem::Value(a), Elem::Value(b)) => {
            pending.push((a, b));
            true
        }
    }
}

/// `equal`; data too large to compare (see [`MAX_PENDING`]) counts as different.
pub fn equal<'gc>(a: Value<'gc>, b: Value<'gc>) -> bool {
    equal_checked(a, b).unwrap_or(false)
}

/// `equal`, or None when more than [`MAX_PENDING`] pairs had to wait.
pub fn equal_checked<'gc>(a: Value<'gc>, b: Value<'gc>) -> Option<bool> {
    compare_pairs(a, b, |a, b, _| {
        Some(match (a, b) {
            (Value::String(x), Value::String(y)) => x.borrow().active() == y.borrow().active(),
            (Value::Struct(_), Value::Struct(_)) => pathnames_equal(a, b),
            // Bit vectors and strings of any representation compare by content.
            (Value::String(_) | Value::SpecArray(_), Value::String(_) | Value::SpecArray(_))
                if text_or_bits(a) && text_or_bits(b) =>
            {
                match (vector_elems(a), vector_elems(b)) {
                    (Some(x), Some(y)) => {
                        x.len() == y.len()
                            && x.iter().zip(&y).all(|(p, q)| match (p, q) {
                                (Elem::Value(p), Elem::Value(q)) => eql(*p, *q),
                                _ => false,
                            })
                    }
                    _ => false,
                }
            }
            _ => false,
        })
    })
}

/// Two structures under `equal` (and `equalp`, which treats pathnames the
/// same way, as SBCL does): pathnames of the same type compare their
/// components (queued), anything else only when eq (decided before).
/// Components are compared with `equal` even under `equalp` (strings with
/// case), each in a comparison of its own: they are a few short strings and
/// lists.
fn pathnames_equal<'gc>(a: Value<'gc>, b: Value<'gc>) -> bool {
    let (Value::Struct(x), Value::Struct(y)) = (a, b) else { return false };
    if !gc_arena::Gc::ptr_eq(x.stype(), y.stype()) {
        return false;
    }
    match (pathnames::components(a), pathnames::components(b)) {
        (Some((xc, xv)), Some((yc, yv))) => xc.into_iter().zip(yc).all(|(p, q)| equal(p, q)) && equal(xv, yv),
        _ => false,
    }
}

/// Strings and bit vectors, the arrays `equal` compares by content.
fn text_or_bits(v: Value<'_>) -> bool {
    match v {
        Value::String(_) => true,
        Value::SpecArray(a) => {
            let a = a.borrow();
            a.dims.len() == 1 && matches!(a.element_type, ElementType::Bit | ElementType::Character)
        }
        _ => false,
    }
}

/// Cons pairs compared between two checks of a comparison's budget.
const BUDGET_CHECK_EVERY: usize = 1 << 20;
/// What every cons takes of the heap (its two fields and gc-arena's header).
const MIN_CONS_BYTES: u64 = mprof_heap::object::CONS_BYTES as u64;

/// Whether a comparison that has compared `steps` cons pairs has gone past what
/// any comparison of finite data needs: twice as many pairs as the heap could
/// hold conses (a cdr-circular list never ends, and its pending pairs stay
/// few, so `MAX_PENDING` alone would not stop it). Checked every
/// `BUDGET_CHECK_EVERY` pairs, so the cost on ordinary data is a counter.
fn over_budget(steps: usize) -> bool {
    steps.is_multiple_of(BUDGET_CHECK_EVERY) && pair_budget_exceeded(steps)
}

/// Whether `steps` cons pairs are more than a comparison of finite data needs (the
/// rule of `over_budget`, for TREE-EQUAL's Lisp loop as well).
pub fn pair_budget_exceeded(steps: usize) -> bool {
    steps as u64 > 2 * (mprof_heap::live_bytes() / MIN_CONS_BYTES) + BUDGET_CHECK_EVERY as u64
}

/// Pending pairs of one comparison.
type Pending<'gc> = Vec<(Value<'gc>, Value<'gc>)>;

/// The walk `equal` and `equalp` share: eql values are the same, conses are compared
/// car first while their cdrs wait on the stack, and any other pair is decided by
/// `other`, which may push pairs of parts still to compare. None when more than
/// [`MAX_PENDING`] pairs wait, when more cons pairs were compared than the heap
/// holds (circular lists: see `over_budget`), or when `other` gives up.
fn compare_pairs<'gc>(
    a: Value<'gc>,
    b: Value<'gc>,
    mut other: impl FnMut(Value<'gc>, Value<'gc>, &mut Pending<'gc>) -> Option<bool>,
) -> Option<bool> {
    let mut pending: Pending<'gc> = Vec::new();
    let (mut a, mut b) = (a, b);
    let mut steps = 0usize;
    loop {
        // `other` may have pushed many pairs at once (a vector's elements).
        if pending.len() >= MAX_PENDING {
            return None;
        }
        let same = loop {
            if eql(a, b) {
                break true;
            }
            match (a, b) {
                (Value::Cons(x), Value::Cons(y)) => {
                    steps += 1;
                    if pending.len() >= MAX_PENDING || over_budget(steps) {
                        return None;
                    }
                    pending.push((x.cdr.get(), y.cdr.get()));
                    a = x.car.get();
                    b = y.car.get();
                }
                _ => break other(a, b, &mut pending)?,
            }
        };
        if !same {
            return Some(false);
        }
        match pending.pop() {
            Some((x, y)) => (a, b) = (x, y),
            None => return Some(true),
        }
    }
}

/// `equalp`; data too large to compare (see [`MAX_PENDING`]) counts as different.
pub fn equalp<'gc>(a: Value<'gc>, b: Value<'gc>) -> bool {
    equalp_checked(a, b).unwrap_or(false)
}

/// `equalp`, or None when more than [`MAX_PENDING`] pairs had to wait.
pub fn equalp_checked<'gc>(a: Value<'gc>, b: Value<'gc>) -> Option<bool> {
    equalp_nested(a, b, 0)
}

fn equalp_nested<'gc>(a: Value<'gc>, b: Value<'gc>, key_nesting: usize) -> Option<bool> {
    compare_pairs(a, b, |a, b, pending| {
        Some(match (a, b) {
            (Value::Char(x), Value::Char(y)) => chars_equal_ignoring_case(x, y),
            (Value::String(x), Value::String(y)) => {
                let (x, y) = (x.borrow(), y.borrow());
                let (x, y) = (x.active(), y.active());
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| chars_equal_ignoring_case(*p, *q))
            }
            (Value::Vector(x), Value::Vector(y)) => {
                let (x, y) = (x.borrow(), y.borrow());
                let (x, y) = (x.active(), y.active());
                if x.len() != y.len() {
                    return Some(false);
                }
                pending.extend(x.iter().copied().zip(y.iter().copied()));
                true
            }
            (Value::String(s), Value::Vector(v)) | (Value::Vector(v), Value::String(s)) => {
                let (s, v) = (s.borrow(), v.borrow());
                let (s, v) = (s.active(), v.active());
                s.len() == v.len()
                    && s.iter().zip(v).all(|(c, x)| matches!(x, Value::Char(d) if chars_equal_ignoring_case(*c, *d)))
            }
            (Value::Array(x), Value::Array(y)) => {
                let (x, y) = (x.borrow(), y.borrow());
                if x.dims != y.dims {
                    return Some(false);
                }
                pending.extend(x.items.iter().copied().zip(y.items.iter().copied()));
                true
            }
            // A specialized or displaced array against any array of the same shape.
            (Value::SpecArray(_), Value::String(_) | Value::Vector(_) | Value::Array(_) | Value::SpecArray(_))
            | (Value::String(_) | Value::Vector(_) | Value::Array(_), Value::SpecArray(_)) => {
                let (dx, dy) = (shape(a), shape(b));
                if dx != dy {
                    return Some(false);
                }
                let n: usize = if dx.len() == 1 { vector_elems(a)?.len() } else { dx.iter().product() };
                if dx.len() == 1 && vector_elems(b)?.len() != n {
                    return Some(false);
                }
                for i in 0..n {
                    if !elems_equalp(spec::get(a, i)?, spec::get(b, i)?, pending) {
                        return Some(false);
                    }
                }
                true
            }
            (Value::Struct(x), Value::Struct(_)) if pathnames::is_pathname(x) => pathnames_equal(a, b),
            (Value::Struct(x), Value::Struct(y)) => {
                if !gc_arena::Gc::ptr_eq(x.stype(), y.stype()) {
                    return Some(false);
                }
                let (xs, ys) = (x.slots.borrow(), y.slots.borrow());
                if xs.len() != ys.len() {
                    return Some(false);
                }
                pending.extend(xs.iter().copied().zip(ys.iter().copied()));
                true
            }
            (Value::HashTable(x), Value::HashTable(y)) => {
                let (xh, yh) = (x.borrow(), y.borrow());
                if xh.len() != yh.len() || xh.test != yh.test {
                    return Some(false);
                }
                if key_nesting >= MAX_KEY_NESTING {
                    return None;
                }
                let mut all = true;
                for e in xh.entries() {
                    match lookup_nested(&yh, e.key, key_nesting + 1)? {
                        Some(w) => pending.push((e.value, w)),
                        None => {
                            all = false;
                            break;
                        }
                    }
                }
                all
            }
            _ => crate::runtime::numbers::numbers_equal(a, b).unwrap_or(false),
        })
    })
}

/// An array's dimensions, rank one taken as its active length.
fn shape(v: Value<'_>) -> Vec<usize> {
    match v {
        Value::Array(a) => a.borrow().dims.clone(),
        Value::SpecArray(a) if a.borrow().dims.len() != 1 => a.borrow().dims.clone(),
        other => vec![vector_elems(other).map_or(usize::MAX, |e| e.len())],
    }
}

fn chars_equal_ignoring_case(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// Whether two keys are the same under a hash table test.
pub fn same_key<'gc>(test: HashTest, a: Value<'gc>, b: Value<'gc>) -> bool {
    match test {
        HashTest::Eq => a.eq(b),
        HashTest::Eql => eql(a, b),
        HashTest::Equal => equal(a, b),
        HashTest::Equalp => equalp(a, b),
    }
}

/// A hash code consistent with the test.
pub fn hash_key<'gc>(test: HashTest, v: Value<'gc>) -> u64 {
    let mut h = Hasher::default();
    match test {
        HashTest::Eq => h.identity(v),
        HashTest::Eql => h.eql(v),
        HashTest::Equal => h.equal(v, 0, false),
        HashTest::Equalp => h.equal(v, 0, true),
    }
    h.finish()
}

/// Look a key up in a hash table.
pub fn lookup<'gc>(table: &mprof_heap::value::HashTable<'gc>, key: Value<'gc>) -> Option<Value<'gc>> {
    table.get(hash_key(table.test, key), |k| same_key(table.test, k, key))
}

/// [`lookup`] from inside equalp on hash tables: None when the keys nest too deeply to compare.
fn lookup_nested<'gc>(
    table: &mprof_heap::value::HashTable<'gc>,
    key: Value<'gc>,
    key_nesting: usize,
) -> Option<Option<Value<'gc>>> {
    let found = table.position_with(hash_key(table.test, key), |k| match table.test {
        HashTest::Equalp => equalp_nested(k, key, key_nesting),
        test => Some(same_key(test, k, key)),
    })?;
    Some(found.map(|i| table.entries()[i].value))
}

#[derive(Default)]
struct Hasher(u64);

impl Hasher {
    fn mix(&mut self, x: u64) {
        // FxHash-style mixing: fast, and good enough for bucket selection.
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
    fn identity(&mut self, v: Value<'_>) {
        match v {
            Value::Nil => self.mix(1),
            Value::Unbound => self.mix(2),
            Value::Fixnum(i) => {
                self.mix(3);
                self.mix(i as u64)
            }
            Value::Char(c) => {
                self.mix(4);
                self.mix(c as u64)
            }
            other => self.mix(other.heap_address().unwrap_or(0) as u64),
        }
    }
    fn eql(&mut self, v: Value<'_>) {
        match v {
            Value::Float(f) => {
                self.mix(5);
                self.mix(f.val.to_bits())
            }
            Value::BigInt(b) => {
                self.mix(6);
                for d in b.0.iter_u64_digits() {
                    self.mix(d)
                }
            }
            Value::Ratio(r) => {
                self.mix(7);
                for d in r.num.iter_u64_digits().chain(r.den.iter_u64_digits()) {
                    self.mix(d)
                }
            }
            Value::Complex(c) => {
                self.mix(14);
                match c.val {
                    Complex::Double(re, im) => {
                        self.mix(re.to_bits());
                        self.mix(im.to_bits());
                    }
                    Complex::Rational(re, im) => {
                        self.eql(re);
                        self.eql(im);
                    }
                }
            }
            other => self.identity(other),
        }
    }
    fn equal(&mut self, v: Value<'_>, depth: usize, fold: bool) {
        if depth > 4 {
            return;
        }
        match v {
            Value::Cons(_) => {
                self.mix(8);
                let mut cur = v;
                let mut n = 0;
                while let Value::Cons(c) = cur {
                    self.equal(c.car.get(), depth + 1, fold);
                    cur = c.cdr.get();
                    n += 1;
                    if n > 16 {
                        return;
                    }
                }
                self.equal(cur, depth + 1, fold);
            }
            Value::String(s) => {
                self.mix(9);
                for &c in s.borrow().active().iter().take(64) {
                    let c = if fold { c.to_lowercase().next().unwrap_or(c) } else { c };
                    self.mix(c as u64);
                }
            }
            Value::Char(c) if fold => {
                self.mix(4);
                self.mix(c.to_lowercase().next().unwrap_or(c) as u64);
            }
            // Strings, bit vectors and (for equalp) every vector hash by content.
            Value::SpecArray(a) if a.borrow().dims.len() == 1 && (fold || text_or_bits(v)) => {
                self.mix(9);
                // As many elements as a string's (64) or a general vector's (16) hash takes.
                let n = if a.borrow().element_type == ElementType::Character { 64 } else { 16 };
                for e in vector_elems(v).unwrap_or_default().into_iter().take(n) {
                    match e {
                        Elem::Value(Value::Char(c)) if fold => self.mix(c.to_lowercase().next().unwrap_or(c) as u64),
                        Elem::Value(Value::Char(c)) => self.mix(c as u64),
                        Elem::Value(Value::Fixnum(i)) if !fold => self.mix(i as u64),
                        Elem::Value(other) => self.equal(other, depth + 1, fold),
                        Elem::Double(x) => {
                            self.mix(11);
                            self.mix(if x == 0.0 { 0 } else { x.to_bits() });
                        }
                    }
                }
            }
            Value::SpecArray(a) if fold => {
                self.mix(12);
                for &d in a.borrow().dims.iter() {
                    self.mix(d as u64);
                }
            }
            Value::Vector(vec) if fold => {
                self.mix(9);
                for &x in vec.borrow().active().iter().take(16) {
                    match x {
                        Value::Char(c) => self.mix(c.to_lowercase().next().unwrap_or(c) as u64),
                        other => self.equal(other, depth + 1, fold),
                    }
                }
            }
            // equalp compares arrays and hash tables by content: hash only
            // what equalp preserves (dimensions, counts).
            Value::Array(a) if fold => {
                self.mix(12);
                for &d in a.borrow().dims.iter() {
                    self.mix(d as u64);
                }
            }
            Value::HashTable(h) if fold => {
                self.mix(13);
                self.mix(h.borrow().len() as u64);
            }
            Value::Struct(_) if pathnames::components(v).is_some() => {
                // Pathnames are equal (and equalp) by components: hash those
                // (the version is left out: NIL and :NEWEST are the same).
                self.mix(15);
                if let Some((parts, _)) = pathnames::components(v) {
                    for x in parts {
                        self.equal(x, depth + 1, false);
                    }
                }
            }
            Value::Struct(s) if fold => {
                self.mix(10);
                for &x in s.slots.borrow().iter().take(8) {
                    self.equal(x, depth + 1, fold);
                }
            }
            Value::Complex(_) if fold => {
                // equalp: = across rational and double parts.
                if let Some((re, im)) = crate::runtime::numbers::parts(v) {
                    self.mix(14);
                    for x in [re.to_f64(), im.to_f64()] {
                        self.mix(if x == 0.0 { 0 } else { x.to_bits() });
                    }
                }
            }
            Value::Fixnum(_) | Value::Float(_) | Value::BigInt(_) | Value::Ratio(_) if fold => {
                // equalp compares numbers with =: hash their value as a double.
                let x = crate::runtime::numbers::to_f64(v).unwrap_or(0.0);
                self.mix(11);
                self.mix(if x == 0.0 { 0 } else { x.to_bits() });
            }
            other => self.eql(other),
        }
    }
}
