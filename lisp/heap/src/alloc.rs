//! Typed constructors over [`alloc_object`]: one function per kind of object,
//! each passing the object's category, bin type name and out-of-line bytes.
//! Also the write-barriered mutators of heap objects.
//!
//! Invariant: these are the only places that decide an object's category:
//! conses c, floats f, strings/vectors/arrays/structures s, everything else o.

use gc_arena::barrier::{field, unlock};
use gc_arena::{Gc, Lock, Mutation, RefLock};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::code::Proto;
use crate::footprint::{Footprint, Resizing, SymbolsResizing};
use crate::kind::Kind;
use crate::object::{Obj, alloc_cons, alloc_object};
use crate::spec::{Bits, ElementType, SpecArray, Store};
use crate::value::*;

#[inline]
pub fn cons<'gc>(mc: &Mutation<'gc>, car: Value<'gc>, cdr: Value<'gc>) -> Value<'gc> {
    Value::Cons(alloc_cons(mc, car, cdr))
}

pub fn float<'gc>(mc: &Mutation<'gc>, x: f64) -> Value<'gc> {
    Value::Float(alloc_object(mc, Kind::Float, "double-float", 0, x))
}

/// Allocate an object that owns a growable buffer, at its real size.
fn sized<'gc, T: Footprint + gc_arena::Collect<'gc> + 'gc>(mc: &Mutation<'gc>, val: T) -> Ptr<'gc, RefLock<T>> {
    let (name, owned) = (val.type_name(), val.owned_bytes());
    alloc_object(mc, T::KIND, name, owned, RefLock::new(val))
}

pub fn string_from_chars<'gc>(mc: &Mutation<'gc>, s: LString) -> Value<'gc> {
    Value::String(sized(mc, s))
}

pub fn string<'gc>(mc: &Mutation<'gc>, s: &str) -> Value<'gc> {
    string_from_chars(mc, LString::new(s))
}

pub fn vector_from<'gc>(
    mc: &Mutation<'gc>,
    items: Vec<Value<'gc>>,
    fill_pointer: Option<usize>,
    adjustable: bool,
    element_type: Value<'gc>,
) -> Value<'gc> {
    Value::Vector(sized(mc, LVector { items, fill_pointer, adjustable, element_type }))
}

pub fn vector<'gc>(mc: &Mutation<'gc>, items: Vec<Value<'gc>>) -> Value<'gc> {
    vector_from(mc, items, None, false, Value::Nil)
}

pub fn array<'gc>(
    mc: &Mutation<'gc>,
    dims: Vec<usize>,
    items: Vec<Value<'gc>>,
    element_type: Value<'gc>,
) -> Value<'gc> {
    Value::Array(sized(mc, LArray { dims, items, element_type, adjustable: false }))
}

/// A specialized or displaced array (see `crate::spec`); category s, under a
/// bin type name saying how its elements are stored.
pub fn spec_array<'gc>(
    mc: &Mutation<'gc>,
    dims: Vec<usize>,
    store: Store<'gc>,
    fill_pointer: Option<usize>,
    adjustable: bool,
    element_type: ElementType,
) -> Value<'gc> {
    Value::SpecArray(sized(mc, SpecArray { dims, store, fill_pointer, adjustable, element_type }))
}

/// A simple bit vector holding `bits`.
pub fn bit_vector<'gc>(mc: &Mutation<'gc>, bits: Bits) -> Value<'gc> {
    spec_array(mc, vec![bits.len], Store::Bits(bits), None, false, ElementType::Bit)
}

/// A complex number from two reals of the same kind (both doubles or both
/// rationals); a rational one with a zero imaginary part is that rational.
/// Category o, like the other numbers that are not floats.
pub fn complex<'gc>(mc: &Mutation<'gc>, c: Complex<'gc>) -> Value<'gc> {
    if let Complex::Rational(re, Value::Fixnum(0)) = c {
        return re;
    }
    Value::Complex(alloc_object(mc, Kind::Complex, "complex", 0, c))
}

/// An integer: a fixnum when it fits in an i64, else a bignum.
pub fn integer<'gc>(mc: &Mutation<'gc>, n: BigInt) -> Value<'gc> {
    match n.to_i64() {
        Some(i) => Value::Fixnum(i),
        None => {
            let extra = (n.bits() as usize).div_ceil(64) * 8;
            Value::BigInt(alloc_object(mc, Kind::Bignum, "bignum", extra, Big(n)))
        }
    }
}

/// A rational num/den in lowest terms: an integer when the denominator divides.
/// The caller guarantees `den` is not zero.
pub fn rational<'gc>(mc: &Mutation<'gc>, num: BigInt, den: BigInt) -> Value<'gc> {
    let (mut num, mut den) = (num, den);
    if den.is_negative() {
        num = -num;
        den = -den;
    }
    let g = num.gcd(&den);
    if !g.is_zero() && !g.is_one() {
        num /= &g;
        den /= &g;
    }
    if den.is_one() {
        return integer(mc, num);
    }
    let extra = ((num.bits() + den.bits()) as usize).div_ceil(64) * 8;
    Value::Ratio(alloc_object(mc, Kind::Ratio, "ratio", extra, Ratio { num, den }))
}

pub fn make_symbol<'gc>(mc: &Mutation<'gc>, name: &str) -> Ptr<'gc, Symbol<'gc>> {
    alloc_object(
        mc,
        Kind::Symbol,
        "symbol",
        name.len(),
        Symbol {
            name: name.into(),
            package: Lock::new(None),
            value: Lock::new(Value::Unbound),
            function: Lock::new(Value::Unbound),
            plist: Lock::new(Value::Nil),
            flags: std::cell::Cell::new(0),
            setf_function: Lock::new(Value::Unbound),
        },
    )
}

pub fn closure<'gc>(
    mc: &Mutation<'gc>,
    proto: Ptr<'gc, Proto<'gc>>,
    captured: Box<[Value<'gc>]>,
) -> Value<'gc> {
    let extra = captured.len() * std::mem::size_of::<Value>();
    Value::Function(alloc_object(
        mc,
        Kind::Function,
        "function",
        extra,
        Function::Closure(Closure { proto, captured }),
    ))
}

pub fn builtin<'gc>(mc: &Mutation<'gc>, name: Value<'gc>, id: u32) -> Value<'gc> {
    Value::Function(alloc_object(mc, Kind::Function, "function", 0, Function::Builtin(Builtin { name, id })))
}

pub fn proto<'gc>(mc: &Mutation<'gc>, p: Proto<'gc>) -> Ptr<'gc, Proto<'gc>> {
    let extra = p.code.len() * std::mem::size_of::<crate::code::Op>()
        + p.consts.len() * std::mem::size_of::<Value>();
    alloc_object(mc, Kind::Code, "code", extra, p)
}

pub fn cell<'gc>(mc: &Mutation<'gc>, v: Value<'gc>) -> Value<'gc> {
    Value::Cell(alloc_object(mc, Kind::ValueCell, "value-cell", 0, Lock::new(v)))
}

/// A structure, instance or condition of type `stype`, allocated under its
/// type's name: the name symbol's own string (a stable pointer, so the
/// profiler's per-frame site caches recognize the type, and no string is made
/// per object), or `unnamed` for a type without one.
pub fn structure<'gc>(
    mc: &Mutation<'gc>,
    stype: Ptr<'gc, StructType<'gc>>,
    unnamed: &'static str,
    slots: Vec<Value<'gc>>,
) -> Value<'gc> {
    let type_name: &str = match stype.name {
        Value::Symbol(s) => &Gc::as_ref(s).name,
        _ => unnamed,
    };
    let extra = slots.capacity() * std::mem::size_of::<Value>();
    Value::Struct(alloc_object(
        mc,
        Kind::Structure,
        type_name,
        extra,
        Structure { stype: Lock::new(stype), slots: RefLock::new(slots) },
    ))
}

pub fn struct_type<'gc>(
    mc: &Mutation<'gc>,
    name: Value<'gc>,
    precedence: Vec<Value<'gc>>,
    slot_names: Vec<Value<'gc>>,
    is_condition: bool,
) -> Ptr<'gc, StructType<'gc>> {
    alloc_object(
        mc,
        Kind::StructureType,
        "structure-type",
        0,
        StructType {
            name,
            precedence: RefLock::new(precedence),
            slot_names: RefLock::new(slot_names),
            is_condition,
            report: Lock::new(Value::Nil),
            extra: Lock::new(Value::Nil),
        },
    )
}

pub fn hash_table<'gc>(mc: &Mutation<'gc>, test: HashTest) -> Value<'gc> {
    Value::HashTable(sized(mc, HashTable::new(test)))
}

pub fn package<'gc>(mc: &Mutation<'gc>, name: &str) -> Ptr<'gc, Package<'gc>> {
    alloc_object(
        mc,
        Kind::Package,
        "package",
        name.len(),
        Package::new(name),
    )
}

/// A character stream.
pub fn stream<'gc>(mc: &Mutation<'gc>, name: &str, kind: StreamKind<'gc>) -> Value<'gc> {
    stream_of(mc, name, kind, Element::Character)
}

/// A stream of the given element type.
pub fn stream_of<'gc>(mc: &Mutation<'gc>, name: &str, kind: StreamKind<'gc>, element: Element) -> Value<'gc> {
    Value::Stream(sized(mc, Stream { kind, column: 0, open: true, name: name.to_string(), element }))
}

pub fn random_state<'gc>(mc: &Mutation<'gc>, seed: u64) -> Value<'gc> {
    Value::RandomState(alloc_object(
        mc,
        Kind::RandomState,
        "random-state",
        0,
        RandomState { state: std::cell::Cell::new(seed.max(1)) },
    ))
}

// ---- mutators (write barriers) ----

pub fn set_car<'gc>(mc: &Mutation<'gc>, c: Gc<'gc, Cons<'gc>>, v: Value<'gc>) {
    Gc::write(mc, c);
    c.car.set(mc, v);
}

pub fn set_cdr<'gc>(mc: &Mutation<'gc>, c: Gc<'gc, Cons<'gc>>, v: Value<'gc>) {
    Gc::write(mc, c);
    c.cdr.set(mc, v);
}

/// Mutable access to a RefLock'd object (vectors, strings, hash tables, arrays,
/// streams); when the access ends, a change of the object's size is recorded.
pub fn borrow_mut<'a, 'gc, T: Footprint + 'gc>(mc: &'a Mutation<'gc>, p: Ptr<'gc, RefLock<T>>) -> Resizing<'a, 'gc, T> {
    let w = Gc::write(mc, p);
    Resizing::new(mc, p, field!(w, Obj, val).unlock().borrow_mut())
}

pub fn set_lock<'gc>(mc: &Mutation<'gc>, p: Ptr<'gc, Lock<Value<'gc>>>, v: Value<'gc>) {
    let w = Gc::write(mc, p);
    field!(w, Obj, val).unlock().set(v);
}

pub fn struct_slots_mut<'gc>(
    mc: &Mutation<'gc>,
    s: Ptr<'gc, Structure<'gc>>,
) -> std::cell::RefMut<'gc, Vec<Value<'gc>>> {
    let w = Gc::write(mc, s);
    let inner = field!(w, Obj, val);
    unlock!(inner, Structure, slots).borrow_mut()
}

/// Give a structure another type (CLOS's CHANGE-CLASS; the caller sets the slots).
pub fn struct_set_type<'gc>(mc: &Mutation<'gc>, s: Ptr<'gc, Structure<'gc>>, t: Ptr<'gc, StructType<'gc>>) {
    let w = Gc::write(mc, s);
    let inner = field!(w, Obj, val);
    unlock!(inner, Structure, stype).set(t);
}

pub fn struct_type_set_report<'gc>(mc: &Mutation<'gc>, t: Ptr<'gc, StructType<'gc>>, v: Value<'gc>) {
    let w = Gc::write(mc, t);
    let inner = field!(w, Obj, val);
    unlock!(inner, StructType, report).set(v);
}

pub fn struct_type_set_extra<'gc>(mc: &Mutation<'gc>, t: Ptr<'gc, StructType<'gc>>, v: Value<'gc>) {
    let w = Gc::write(mc, t);
    let inner = field!(w, Obj, val);
    unlock!(inner, StructType, extra).set(v);
}

pub fn struct_type_precedence_mut<'gc>(
    mc: &Mutation<'gc>,
    t: Ptr<'gc, StructType<'gc>>,
) -> std::cell::RefMut<'gc, Vec<Value<'gc>>> {
    let w = Gc::write(mc, t);
    let inner = field!(w, Obj, val);
    unlock!(inner, StructType, precedence).borrow_mut()
}

pub fn struct_type_slots_mut<'gc>(
    mc: &Mutation<'gc>,
    t: Ptr<'gc, StructType<'gc>>,
) -> std::cell::RefMut<'gc, Vec<Value<'gc>>> {
    let w = Gc::write(mc, t);
    let inner = field!(w, Obj, val);
    unlock!(inner, StructType, slot_names).borrow_mut()
}

pub fn symbol_set_value<'gc>(mc: &Mutation<'gc>, s: Ptr<'gc, Symbol<'gc>>, v: Value<'gc>) {
    let w = Gc::write(mc, s);
    let inner = field!(w, Obj, val);
    unlock!(inner, Symbol, value).set(v);
}

pub fn symbol_set_function<'gc>(mc: &Mutation<'gc>, s: Ptr<'gc, Symbol<'gc>>, v: Value<'gc>) {
    let w = Gc::write(mc, s);
    let inner = field!(w, Obj, val);
    unlock!(inner, Symbol, function).set(v);
}

pub fn symbol_set_setf_function<'gc>(mc: &Mutation<'gc>, s: Ptr<'gc, Symbol<'gc>>, v: Value<'gc>) {
    let w = Gc::write(mc, s);
    let inner = field!(w, Obj, val);
    unlock!(inner, Symbol, setf_function).set(v);
}

pub fn symbol_set_plist<'gc>(mc: &Mutation<'gc>, s: Ptr<'gc, Symbol<'gc>>, v: Value<'gc>) {
    let w = Gc::write(mc, s);
    let inner = field!(w, Obj, val);
    unlock!(inner, Symbol, plist).set(v);
}

pub fn symbol_set_package<'gc>(
    mc: &Mutation<'gc>,
    s: Ptr<'gc, Symbol<'gc>>,
    p: Option<Ptr<'gc, Package<'gc>>>,
) {
    let w = Gc::write(mc, s);
    let inner = field!(w, Obj, val);
    unlock!(inner, Symbol, package).set(p);
}

/// Mutable access to a package's symbols; when it ends, the package's growth
/// is recorded like any container's.
pub fn package_symbols_mut<'a, 'gc>(mc: &'a Mutation<'gc>, p: Ptr<'gc, Package<'gc>>) -> SymbolsResizing<'a, 'gc> {
    let w = Gc::write(mc, p);
    let inner = field!(w, Obj, val);
    SymbolsResizing::new(mc, p, unlock!(inner, Package, symbols).borrow_mut())
}

pub fn package_local_nicknames_mut<'gc>(
    mc: &Mutation<'gc>,
    p: Ptr<'gc, Package<'gc>>,
) -> std::cell::RefMut<'gc, Vec<LocalNickname<'gc>>> {
    let w = Gc::write(mc, p);
    let inner = field!(w, Obj, val);
    unlock!(inner, Package, local_nicknames).borrow_mut()
}

pub fn package_uses_mut<'gc>(
    mc: &Mutation<'gc>,
    p: Ptr<'gc, Package<'gc>>,
) -> std::cell::RefMut<'gc, Vec<Ptr<'gc, Package<'gc>>>> {
    let w = Gc::write(mc, p);
    let inner = field!(w, Obj, val);
    unlock!(inner, Package, uses).borrow_mut()
}

// ---- list helpers ----

/// A proper list of the given items.
pub fn list<'gc>(mc: &Mutation<'gc>, items: &[Value<'gc>]) -> Value<'gc> {
    list_with_tail(mc, items, Value::Nil)
}

pub fn list_with_tail<'gc>(mc: &Mutation<'gc>, items: &[Value<'gc>], tail: Value<'gc>) -> Value<'gc> {
    let mut acc = tail;
    for &v in items.iter().rev() {
        acc = cons(mc, v, acc);
    }
    acc
}

pub fn car<'gc>(v: Value<'gc>) -> Value<'gc> {
    match v {
        Value::Cons(c) => c.car.get(),
        _ => Value::Nil,
    }
}

pub fn cdr<'gc>(v: Value<'gc>) -> Value<'gc> {
    match v {
        Value::Cons(c) => c.cdr.get(),
        _ => Value::Nil,
    }
}

/// Iterate over the elements of a list; stops at the first non-cons tail.
pub fn list_iter<'gc>(v: Value<'gc>) -> ListIter<'gc> {
    ListIter { cur: v }
}

pub struct ListIter<'gc> {
    cur: Value<'gc>,
}

impl<'gc> ListIter<'gc> {
    /// What remains: NIL after a proper list, the dotted tail otherwise.
    pub fn rest(&self) -> Value<'gc> {
        self.cur
    }
}

impl<'gc> Iterator for ListIter<'gc> {
    type Item = Value<'gc>;
    fn next(&mut self) -> Option<Value<'gc>> {
        match self.cur {
            Value::Cons(c) => {
                self.cur = c.cdr.get();
                Some(c.car.get())
            }
            _ => None,
        }
    }
}

/// The elements of a proper list, or None if it is dotted or circular
/// (circularity detected with a tortoise and hare).
pub fn list_to_vec<'gc>(v: Value<'gc>) -> Option<Vec<Value<'gc>>> {
    let mut out = Vec::new();
    let mut slow = v;
    let mut cur = v;
    loop {
        match cur {
            Value::Nil => return Some(out),
            Value::Cons(c) => {
                out.push(c.car.get());
                cur = c.cdr.get();
                if out.len() % 2 == 0 {
                    slow = cdr(slow);
                    if slow.eq(cur) && cur.truthy() {
                        return None;
                    }
                }
            }
            _ => return None,
        }
    }
}

/// The package registry, allocated once per interpreter.
pub fn packages<'gc>(mc: &Mutation<'gc>) -> Ptr<'gc, crate::packages::Packages<'gc>> {
    let p = crate::packages::Packages::new(mc);
    alloc_object(mc, Kind::PackageRegistry, "package-registry", 0, p)
}
