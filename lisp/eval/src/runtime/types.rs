//! Type specifiers: `typep` over the standard atomic and compound types and
//! structure/condition types, and `type-of` as SBCL answers it.
//!
//! `satisfies` and `deftype` types need Lisp calls; the prelude's `typep`
//! expands those before calling the builtin, which rejects what is left.

use mprof_heap::spec::ElementType;
use mprof_heap::value::{Ptr, Symbol};
use mprof_heap::{Value, alloc};

use crate::runtime::numbers::{Num, compare};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::Raise;

fn name_of<'gc>(v: Value<'gc>) -> Option<&'gc str> {
    match v {
        Value::Symbol(s) => Some(&gc_arena::Gc::as_ref(s).val.name),
        Value::Nil => Some("NIL"),
        _ => None,
    }
}

/// Whether `spec` is, or has as an array's element type, a type the program
/// defined with DEFTYPE (a symbol outside COMMON-LISP with a
/// `SYS::DEFTYPE-EXPANDER` property), which a builtin cannot expand itself
/// (`Raise::UserType` hands such a call to Lisp).
pub fn names_user_type<'gc>(ctx: &Ctx<'_, 'gc>, spec: Value<'gc>) -> bool {
    let Some((head, args)) = type_head(spec) else { return false };
    if head.package.get().is_some_and(|p| gc_arena::Gc::ptr_eq(p, ctx.world.packages.common_lisp)) {
        // (vector x), (array x ...), (simple-array x ...): x may be one.
        return matches!(&*head.name, "VECTOR" | "ARRAY" | "SIMPLE-ARRAY")
            && type_head(alloc::car(args)).is_some_and(|(element, _)| has_deftype_expander(ctx, element));
    }
    has_deftype_expander(ctx, head)
}

/// A type specifier's head symbol and its arguments (NIL for a bare symbol).
fn type_head<'gc>(spec: Value<'gc>) -> Option<(Ptr<'gc, Symbol<'gc>>, Value<'gc>)> {
    match spec {
        Value::Symbol(s) => Some((s, Value::Nil)),
        Value::Cons(c) => match c.car.get() {
            Value::Symbol(s) => Some((s, c.cdr.get())),
            _ => None,
        },
        _ => None,
    }
}

/// Whether DEFTYPE gave `name` an expander (a property of its plist, which
/// is walked a bounded number of steps, as a plist may be circular).
fn has_deftype_expander<'gc>(ctx: &Ctx<'_, 'gc>, name: Ptr<'gc, Symbol<'gc>>) -> bool {
    let Some((key, _)) = ctx.world.packages.find_symbol(ctx.world.packages.system, "DEFTYPE-EXPANDER") else { return false };
    let mut plist = name.plist.get();
    for _ in 0..10_000 {
        let Value::Cons(c) = plist else { return false };
        if c.car.get().eq(key) {
            return true;
        }
        plist = alloc::cdr(c.cdr.get());
    }
    false
}

/// SBCL's most-positive-fixnum (62-bit fixnums), used for type names.
pub const SBCL_MOST_POSITIVE_FIXNUM: i64 = 4611686018427387903;

pub fn typep<'gc>(ctx: &mut Ctx<'_, 'gc>, obj: Value<'gc>, spec: Value<'gc>) -> Result<bool, Raise<'gc>> {
    match spec {
        Value::Cons(_) => compound_typep(ctx, obj, spec),
        Value::StructType(t) => Ok(matches!(obj, Value::Struct(s) if s.stype().precedence.borrow().iter().any(|n| n.eq(t.name)))),
        _ => {
            let Some(name) = name_of(spec) else {
                return Err(Raise::error(format!("{} is not a type specifier", ctx.print(spec, true))));
            };
            atomic_typep(ctx, obj, spec, name)
        }
    }
}

fn atomic_typep<'gc>(ctx: &mut Ctx<'_, 'gc>, obj: Value<'gc>, spec: Value<'gc>, name: &str) -> Result<bool, Raise<'gc>> {
    use Value::*;
    Ok(match name {
        "T" => true,
        "NIL" => false,
        "NULL" => obj.is_nil(),
        "LIST" => obj.is_list(),
        "CONS" => matches!(obj, Cons(_)),
        "ATOM" => !matches!(obj, Cons(_)),
        "SYMBOL" => matches!(obj, Symbol(_) | Nil),
        "KEYWORD" => matches!(obj, Symbol(s) if matches!(s.package.get(), Some(p) if gc_arena::Gc::ptr_eq(p, ctx.world.packages.keyword))),
        "BOOLEAN" => obj.is_nil() || obj.eq(ctx.t()),
        "NUMBER" => matches!(obj, Fixnum(_) | BigInt(_) | Ratio(_) | Float(_) | Complex(_)),
        "REAL" => matches!(obj, Fixnum(_) | BigInt(_) | Ratio(_) | Float(_)),
        "COMPLEX" => matches!(obj, Complex(_)),
        "RATIONAL" => matches!(obj, Fixnum(_) | BigInt(_) | Ratio(_)),
        "INTEGER" => matches!(obj, Fixnum(_) | BigInt(_)),
        // SBCL's 62-bit fixnums, so FIXNUM agrees with MOST-POSITIVE-FIXNUM.
        "FIXNUM" => matches!(obj, Fixnum(i) if (-SBCL_MOST_POSITIVE_FIXNUM - 1..=SBCL_MOST_POSITIVE_FIXNUM).contains(&i)),
        "BIGNUM" => match obj {
            Fixnum(i) => !(-SBCL_MOST_POSITIVE_FIXNUM - 1..=SBCL_MOST_POSITIVE_FIXNUM).contains(&i),
            BigInt(_) => true,
            _ => false,
        },
        "BIT" => matches!(obj, Fixnum(0) | Fixnum(1)),
        "UNSIGNED-BYTE" => match obj {
            Fixnum(i) => i >= 0,
            BigInt(b) => b.0.sign() != num_bigint::Sign::Minus,
            _ => false,
        },
        "RATIO" => matches!(obj, Ratio(_)),
        "FLOAT" | "DOUBLE-FLOAT" | "SINGLE-FLOAT" | "SHORT-FLOAT" | "LONG-FLOAT" => matches!(obj, Float(_)),
        "CHARACTER" | "BASE-CHAR" => matches!(obj, Char(_)),
        "STANDARD-CHAR" => matches!(obj, Char(c) if c == '\n' || (' '..='~').contains(&c)),
        "STRING" | "BASE-STRING" => {
            matches!(obj, String(_)) || spec_vector_of(obj, |e| e == ElementType::Character)
        }
        "SIMPLE-STRING" | "SIMPLE-BASE-STRING" => matches!(obj, String(x) if x.borrow().fill_pointer.is_none() && !x.borrow().adjustable),
        "VECTOR" => matches!(obj, Vector(_) | String(_)) || spec_vector_of(obj, |_| true),
        "SIMPLE-VECTOR" => matches!(obj, Vector(v) if v.borrow().fill_pointer.is_none() && !v.borrow().adjustable),
        "BIT-VECTOR" => spec_vector_of(obj, |e| e == ElementType::Bit),
        "SIMPLE-BIT-VECTOR" => {
            spec_vector_of(obj, |e| e == ElementType::Bit) && matches!(obj, SpecArray(a) if a.borrow().is_simple())
        }
        "ARRAY" => matches!(obj, Vector(_) | String(_) | Array(_) | SpecArray(_)),
        "SIMPLE-ARRAY" => {
            matches!(obj, Vector(v) if v.borrow().fill_pointer.is_none() && !v.borrow().adjustable)
                || matches!(obj, String(x) if x.borrow().fill_pointer.is_none() && !x.borrow().adjustable)
                || matches!(obj, Array(a) if !a.borrow().adjustable)
                || matches!(obj, SpecArray(a) if a.borrow().is_simple())
        }
        "SEQUENCE" => obj.is_list() || matches!(obj, Vector(_) | String(_)) || spec_vector_of(obj, |_| true),
        "FUNCTION" | "COMPILED-FUNCTION" => matches!(obj, Function(_)),
        "HASH-TABLE" => matches!(obj, HashTable(_)),
        "PACKAGE" => matches!(obj, Package(_)),
        // Gray streams are instances of classes under STREAM.
        "STREAM" => matches!(obj, Stream(_)) || crate::runtime::composite::is_gray(ctx.world, obj),
        "STRING-STREAM" | "FILE-STREAM" | "SYNONYM-STREAM" | "TWO-WAY-STREAM" | "ECHO-STREAM" | "BROADCAST-STREAM"
        | "CONCATENATED-STREAM" => {
            matches!(obj, Stream(s) if crate::runtime::composite::class_name(&s.borrow().kind) == name)
        }
        "RANDOM-STATE" => matches!(obj, RandomState(_)),
        // CLOS instances are structures whose types descend from STANDARD-OBJECT.
        "STRUCTURE-OBJECT" => matches!(obj, Struct(s) if !s.stype().is_condition && !s.stype().precedence.borrow().iter().any(|n| n.eq(spec_standard_object(ctx)))),
        "STANDARD-OBJECT" => matches!(obj, Struct(s) if s.stype().precedence.borrow().iter().any(|n| n.eq(spec))),
        _ => {
            if let Struct(s) = obj
                && s.stype().precedence.borrow().iter().any(|n| n.eq(spec))
            {
                return Ok(true);
            }
            if ctx.world.find_type(spec).is_some() {
                return Ok(false);
            }
            return Err(Raise::error(format!("unknown type specifier: {}", ctx.print(spec, true))));
        }
    })
}

fn spec_standard_object<'gc>(ctx: &Ctx<'_, 'gc>) -> Value<'gc> {
    ctx.cl("STANDARD-OBJECT")
}

/// Whether `obj` is a specialized or displaced vector whose element type passes `ok`.
fn spec_vector_of(obj: Value<'_>, ok: impl Fn(ElementType) -> bool) -> bool {
    matches!(obj, Value::SpecArray(a) if a.borrow().dims.len() == 1 && ok(a.borrow().element_type))
}

/// `(array elt dims)`, `(vector elt size)`, `(bit-vector size)`...: `obj` is of
/// the head type, of the upgraded element type asked for (unless `*`), and of
/// the dimensions asked for (unless `*`).
fn array_typep<'gc>(ctx: &mut Ctx<'_, 'gc>, obj: Value<'gc>, head: Value<'gc>, h: &str, args: &[Value<'gc>]) -> Result<bool, Raise<'gc>> {
    if !atomic_typep(ctx, obj, head, h)? {
        return Ok(false);
    }
    let star = |v: Value<'gc>| matches!(v, Value::Symbol(s) if &*s.name == "*");
    let arg = |i: usize| args.get(i).copied().unwrap_or(ctx.cl("*"));
    // Which argument is the element type and which the dimensions.
    let (elt, dims, rank_one) = match h {
        "ARRAY" | "SIMPLE-ARRAY" => (Some(arg(0)), arg(1), false),
        "VECTOR" => (Some(arg(0)), arg(1), true),
        _ => (None, arg(0), true),
    };
    if let Some(e) = elt
        && !star(e)
        && !crate::runtime::arrays::has_upgraded_element_type(obj, e)
    {
        return Ok(false);
    }
    if star(dims) {
        return Ok(true);
    }
    let actual: Vec<usize> = match obj {
        Value::String(st) => vec![st.borrow().chars.len()],
        Value::Vector(v) => vec![v.borrow().items.len()],
        Value::Array(a) => a.borrow().dims.clone(),
        Value::SpecArray(a) => a.borrow().dims.clone(),
        _ => return Ok(false),
    };
    Ok(match dims {
        Value::Fixnum(n) if rank_one => actual.len() == 1 && actual[0] as i64 == n,
        Value::Fixnum(n) => actual.len() as i64 == n,
        Value::Nil => actual.is_empty(),
        Value::Cons(_) => {
            let want: Vec<Value<'gc>> = alloc::list_iter(dims).collect();
            want.len() == actual.len()
                && want.iter().zip(&actual).all(|(w, &d)| star(*w) || matches!(w, Value::Fixnum(n) if *n == d as i64))
        }
        _ => false,
    })
}

fn in_range<'gc>(obj: Value<'gc>, lo: Value<'gc>, hi: Value<'gc>) -> bool {
    let Some(x) = Num::from_value(obj) else { return false };
    let bound_ok = |b: Value<'gc>, lower: bool| -> bool {
        if matches!(b, Value::Symbol(s) if &*s.name == "*") || b.is_nil() {
            return true;
        }
        // (lo) means exclusive.
        let (b, exclusive) = match b {
            Value::Cons(c) => (c.car.get(), true),
            b => (b, false),
        };
        let Some(y) = Num::from_value(b) else { return true };
        let o = compare(&x, &y);
        match (lower, exclusive) {
            (true, false) => o.is_ge(),
            (true, true) => o.is_gt(),
            (false, false) => o.is_le(),
            (false, true) => o.is_lt(),
        }
    };
    bound_ok(lo, true) && bound_ok(hi, false)
}

fn compound_typep<'gc>(ctx: &mut Ctx<'_, 'gc>, obj: Value<'gc>, spec: Value<'gc>) -> Result<bool, Raise<'gc>> {
    let head = alloc::car(spec);
    let args: Vec<Value<'gc>> = alloc::list_iter(alloc::cdr(spec)).collect();
    let arg = |i: usize| args.get(i).copied().unwrap_or(Value::Nil);
    let Some(h) = name_of(head) else {
        return Err(Raise::error(format!("{} is not a type specifier", ctx.print(spec, true))));
    };
    Ok(match h {
        "OR" => {
            for &a in &args {
                if typep(ctx, obj, a)? {
                    return Ok(true);
                }
            }
            false
        }
        "AND" => {
            for &a in &args {
                if !typep(ctx, obj, a)? {
                    return Ok(false);
                }
            }
            true
        }
        "NOT" => !typep(ctx, obj, arg(0))?,
        "MEMBER" => args.iter().any(|a| crate::runtime::equal::eql(*a, obj)),
        "EQL" => crate::runtime::equal::eql(arg(0), obj),
        "INTEGER" => matches!(obj, Value::Fixnum(_) | Value::BigInt(_)) && in_range(obj, arg(0), arg(1)),
        "RATIONAL" => matches!(obj, Value::Fixnum(_) | Value::BigInt(_) | Value::Ratio(_)) && in_range(obj, arg(0), arg(1)),
        "REAL" => Num::from_value(obj).is_some() && in_range(obj, arg(0), arg(1)),
        "FLOAT" | "DOUBLE-FLOAT" | "SINGLE-FLOAT" | "SHORT-FLOAT" | "LONG-FLOAT" => {
            matches!(obj, Value::Float(_)) && in_range(obj, arg(0), arg(1))
        }
        "MOD" => matches!(obj, Value::Fixnum(_) | Value::BigInt(_)) && in_range(obj, Value::Fixnum(0), alloc::list(ctx.mc, &[arg(0)])),
        "UNSIGNED-BYTE" => {
            let hi = match arg(0) {
                Value::Fixnum(n) if (0..63).contains(&n) => Value::Fixnum((1i64 << n) - 1),
                _ => Value::Nil,
            };
            matches!(obj, Value::Fixnum(_) | Value::BigInt(_)) && in_range(obj, Value::Fixnum(0), hi)
        }
        "SIGNED-BYTE" => match arg(0) {
            Value::Fixnum(n) if (1..64).contains(&n) => {
                matches!(obj, Value::Fixnum(i) if i >= -(1i64 << (n - 1)) && (n == 64 || i < (1i64 << (n - 1))))
            }
            _ => matches!(obj, Value::Fixnum(_) | Value::BigInt(_)),
        },
        "CONS" => match obj {
            Value::Cons(c) => {
                let a0 = arg(0);
                let a1 = arg(1);
                let star = |v: Value<'gc>| v.is_nil() || matches!(v, Value::Symbol(s) if &*s.name == "*");
                (star(a0) || typep(ctx, c.car.get(), a0)?) && (star(a1) || typep(ctx, c.cdr.get(), a1)?)
            }
            _ => false,
        },
        "VECTOR" | "ARRAY" | "SIMPLE-ARRAY" => array_typep(ctx, obj, head, h, &args)?,
        "SIMPLE-VECTOR" | "STRING" | "SIMPLE-STRING" | "BASE-STRING" | "SIMPLE-BASE-STRING" | "BIT-VECTOR"
        | "SIMPLE-BIT-VECTOR" => array_typep(ctx, obj, head, h, &args)?,
        "COMPLEX" => match obj {
            Value::Complex(c) => {
                let part = arg(0);
                let star = part.is_nil() || matches!(part, Value::Symbol(s) if &*s.name == "*");
                star || match c.val {
                    mprof_heap::value::Complex::Double(..) => {
                        let probe = alloc::float(ctx.mc, 0.0);
                        typep(ctx, probe, part)?
                    }
                    mprof_heap::value::Complex::Rational(re, im) => typep(ctx, re, part)? || typep(ctx, im, part)?,
                }
            }
            _ => false,
        },
        "SATISFIES" => {
            return Err(Raise::error("SATISFIES types are checked by the prelude's TYPEP"));
        }
        "FUNCTION" => matches!(obj, Value::Function(_)),
        _ => return Err(Raise::error(format!("unknown type specifier: {}", ctx.print(spec, true)))),
    })
}

pub fn type_of<'gc>(ctx: &mut Ctx<'_, 'gc>, obj: Value<'gc>) -> Value<'gc> {
    use Value::*;
    let cl = |ctx: &Ctx<'_, 'gc>, n: &str| ctx.cl(n);
    match obj {
        Nil => cl(ctx, "NULL"),
        Unbound => cl(ctx, "T"),
        Fixnum(0) | Fixnum(1) => cl(ctx, "BIT"),
        Fixnum(i) if i > 0 && i <= SBCL_MOST_POSITIVE_FIXNUM => {
            let items = [cl(ctx, "INTEGER"), Fixnum(0), Fixnum(SBCL_MOST_POSITIVE_FIXNUM)];
            alloc::list(ctx.mc, &items)
        }
        Fixnum(i) if i.unsigned_abs() <= SBCL_MOST_POSITIVE_FIXNUM as u64 + 1 => cl(ctx, "FIXNUM"),
        Fixnum(_) | BigInt(_) => {
            if Num::from_value(obj).map(|n| compare(&n, &Num::I(0)).is_gt()).unwrap_or(false) {
                let items = [cl(ctx, "INTEGER"), alloc::integer(ctx.mc, num_bigint::BigInt::from(SBCL_MOST_POSITIVE_FIXNUM) + 1u32)];
                alloc::list(ctx.mc, &items)
            } else {
                cl(ctx, "BIGNUM")
            }
        }
        Ratio(_) => cl(ctx, "RATIO"),
        Float(_) => cl(ctx, "DOUBLE-FLOAT"),
        Char(c) => {
            if c == '\n' || (' '..='~').contains(&c) {
                cl(ctx, "STANDARD-CHAR")
            } else {
                cl(ctx, "CHARACTER")
            }
        }
        Cons(_) => cl(ctx, "CONS"),
        Symbol(s) => {
            if s.has_flag(mprof_heap::value::SYM_CONSTANT) && obj.eq(ctx.t()) {
                cl(ctx, "BOOLEAN")
            } else if matches!(s.package.get(), Some(p) if gc_arena::Gc::ptr_eq(p, ctx.world.packages.keyword)) {
                cl(ctx, "KEYWORD")
            } else {
                cl(ctx, "SYMBOL")
            }
        }
        String(s) => {
            let n = s.borrow().active().len() as i64;
            let simple = s.borrow().fill_pointer.is_none() && !s.borrow().adjustable;
            let items = [
                cl(ctx, if simple { "SIMPLE-ARRAY" } else { "VECTOR" }),
                cl(ctx, "CHARACTER"),
            ];
            if simple {
                let dims = alloc::list(ctx.mc, &[Fixnum(n)]);
                alloc::list(ctx.mc, &[items[0], items[1], dims])
            } else {
                alloc::list(ctx.mc, &[items[0], items[1], Fixnum(s.borrow().chars.len() as i64)])
            }
        }
        Vector(v) => {
            let (n, simple) = {
                let b = v.borrow();
                (b.items.len() as i64, b.fill_pointer.is_none() && !b.adjustable)
            };
            if simple {
                alloc::list(ctx.mc, &[cl(ctx, "SIMPLE-VECTOR"), Fixnum(n)])
            } else {
                alloc::list(ctx.mc, &[cl(ctx, "VECTOR"), cl(ctx, "T"), Fixnum(n)])
            }
        }
        Array(a) => {
            let dims: Vec<Value<'gc>> = a.borrow().dims.iter().map(|&d| Fixnum(d as i64)).collect();
            let d = alloc::list(ctx.mc, &dims);
            let head = if a.borrow().adjustable { "ARRAY" } else { "SIMPLE-ARRAY" };
            alloc::list(ctx.mc, &[cl(ctx, head), cl(ctx, "T"), d])
        }
        SpecArray(a) => {
            let b = a.borrow();
            let elt = crate::runtime::arrays::element_type_value(ctx, b.element_type);
            let dims: Vec<Value<'gc>> = b.dims.iter().map(|&d| Fixnum(d as i64)).collect();
            let simple = b.is_simple();
            match (b.element_type, dims.as_slice()) {
                (mprof_heap::spec::ElementType::Bit, [n]) => {
                    alloc::list(ctx.mc, &[cl(ctx, if simple { "SIMPLE-BIT-VECTOR" } else { "BIT-VECTOR" }), *n])
                }
                (_, [n]) if !simple => alloc::list(ctx.mc, &[cl(ctx, "VECTOR"), elt, *n]),
                _ => {
                    let d = alloc::list(ctx.mc, &dims);
                    alloc::list(ctx.mc, &[cl(ctx, if simple { "SIMPLE-ARRAY" } else { "ARRAY" }), elt, d])
                }
            }
        }
        Complex(c) => {
            // SBCL's (COMPLEX (INTEGER lo hi)): the parts' type and range.
            let (re, im) = match c.val {
                mprof_heap::value::Complex::Double(re, im) => (alloc::float(ctx.mc, re), alloc::float(ctx.mc, im)),
                mprof_heap::value::Complex::Rational(re, im) => (re, im),
            };
            let kind = match (re, im) {
                (Float(_), _) => "DOUBLE-FLOAT",
                (Fixnum(_) | BigInt(_), Fixnum(_) | BigInt(_)) => "INTEGER",
                _ => "RATIONAL",
            };
            let (lo, hi) = match (Num::from_value(re), Num::from_value(im)) {
                (Some(x), Some(y)) if compare(&x, &y).is_gt() => (im, re),
                _ => (re, im),
            };
            let part = alloc::list(ctx.mc, &[cl(ctx, kind), lo, hi]);
            alloc::list(ctx.mc, &[cl(ctx, "COMPLEX"), part])
        }
        Function(_) => cl(ctx, "COMPILED-FUNCTION"),
        Struct(s) => s.stype().name,
        HashTable(_) => cl(ctx, "HASH-TABLE"),
        Package(_) => cl(ctx, "PACKAGE"),
        Stream(s) => cl(ctx, crate::runtime::composite::class_name(&s.borrow().kind)),
        RandomState(_) => cl(ctx, "RANDOM-STATE"),
        StructType(_) => cl(ctx, "STRUCTURE-CLASS"),
        Cell(_) | Proto(_) => cl(ctx, "T"),
    }
}
