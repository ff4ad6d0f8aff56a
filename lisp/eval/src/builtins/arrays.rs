//! Arrays: `make-array` of any rank (specialized and displaced ones too),
//! element access (`aref`, `svref`, `row-major-aref` and their setters),
//! dimensions, fill pointers, `vector-push[-extend]`, `vector-pop`,
//! `adjust-array`, `array-displacement` and `upgraded-array-element-type`.
//!
//! Representation (see `mprof_heap::value` and `mprof_heap::spec`): rank-1
//! arrays of characters are strings (`LString`), other rank-1 arrays of
//! element type T general vectors (`LVector`), other arrays of element type T
//! `LArray`s stored in row-major order; arrays of BIT, (UNSIGNED-BYTE 8),
//! FIXNUM and DOUBLE-FLOAT elements, and every displaced array, `SpecArray`s.
//!
//! Invariants:
//! - An array's total size is the number of elements it stores (or, displaced,
//!   reaches in its target); a fill pointer, when present, is never above it.
//! - Every store is type-checked against the upgraded element type (`Elt`),
//!   as SBCL's specialised arrays are; `SINGLE-FLOAT` arrays are general
//!   vectors that check their elements are floats.
//! - Element access never allocates: `aref`/`(setf aref)` are hot in
//!   array-heavy programs.

use gc_arena::RefLock;
use mprof_heap::spec::{self, Bits, ElementType, SpecArray, Store};
use mprof_heap::value::{LString, LVector, Ptr};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};
use crate::runtime::arrays::{Arr, Elt, arr_arg, check_element, displaced_too_small};
use crate::runtime::types::names_user_type;

type A<'a, 'gc> = &'a [Value<'gc>];

/// The largest number of elements one array may hold (a guard against
/// allocation failures that would abort the process).
const MAX_TOTAL_SIZE: usize = 1 << 27;

/// (upgraded-array-element-type typespec &optional environment)
fn upgraded_array_element_type<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if names_user_type(ctx, a[0]) {
        return Err(Raise::UserType);
    }
    Ok(Elt::of_spec(a[0]).type_value(ctx))
}

/// A `type-error` for an out-of-range index, worded as SBCL words it.
fn index_error<'gc>(ctx: &mut Ctx<'_, 'gc>, array: Value<'gc>, index: Value<'gc>, bound: usize) -> Raise<'gc> {
    let type_name = crate::runtime::types::type_of(ctx, array);
    let message = format!(
        "Invalid index {} for {}, should be a non-negative integer below {}.",
        ctx.print(index, true),
        ctx.print(type_name, true),
        bound
    );
    let upper = alloc::list(ctx.mc, &[Value::Fixnum(bound as i64)]);
    let expected = alloc::list(ctx.mc, &[ctx.cl("INTEGER"), Value::Fixnum(0), upper]);
    simple_type_error(ctx, index, expected, message)
}

/// A `type-error` (SBCL's simple-type-error) with its own message.
fn simple_type_error<'gc>(ctx: &Ctx<'_, 'gc>, datum: Value<'gc>, expected: Value<'gc>, message: String) -> Raise<'gc> {
    let stype = ctx.world.find_type(ctx.world.intern_sys(ctx.mc, "SIMPLE-TYPE-ERROR"));
    let Some(stype) = stype else {
        return Raise::error(message);
    };
    let control = alloc::string(ctx.mc, &message.replace('~', "~~"));
    Raise::Condition(crate::runtime::conditions::make(
        ctx.mc,
        stype,
        &[("DATUM", datum), ("EXPECTED-TYPE", expected), ("FORMAT-CONTROL", control), ("FORMAT-ARGUMENTS", Value::Nil)],
    ))
}

/// The row-major index of `subs` in an array, checking rank and bounds.
fn row_major_index<'gc>(ctx: &mut Ctx<'_, 'gc>, arr: Arr<'gc>, subs: &[Value<'gc>]) -> Result<usize, Raise<'gc>> {
    if let (Arr::Vec(_) | Arr::Str(_), [sub]) = (arr, subs) {
        let n = arr.total_size();
        return match *sub {
            Value::Fixnum(i) if i >= 0 && (i as usize) < n => Ok(i as usize),
            Value::Fixnum(_) | Value::BigInt(_) => Err(index_error(ctx, arr.value(), *sub, n)),
            other => Err(ctx.type_error(other, "(INTEGER 0)")),
        };
    }
    let dims = arr.dims();
    if dims.len() != subs.len() {
        return Err(Raise::error(format!(
            "Wrong number of subscripts, {}, for array of rank {}.",
            subs.len(),
            dims.len()
        )));
    }
    let mut index = 0usize;
    for (&d, &sub) in dims.iter().zip(subs) {
        let i = match sub {
            Value::Fixnum(i) if i >= 0 && (i as usize) < d => i as usize,
            Value::Fixnum(_) | Value::BigInt(_) => return Err(index_error(ctx, arr.value(), sub, d)),
            other => return Err(ctx.type_error(other, "(INTEGER 0)")),
        };
        index = index * d + i;
    }
    Ok(index)
}

// ---- construction ----

/// Parse a dimension designator: an index or a list of indexes.
fn dims_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Vec<usize>, Raise<'gc>> {
    let dims = match v {
        Value::Fixnum(_) => vec![ctx.index_arg(v)?],
        Value::Nil | Value::Cons(_) => {
            let items = alloc::list_to_vec(v).ok_or_else(|| ctx.type_error(v, "LIST"))?;
            items.into_iter().map(|d| ctx.index_arg(d)).collect::<Result<Vec<_>, _>>()?
        }
        other => return Err(ctx.type_error(other, "(OR (INTEGER 0) LIST)")),
    };
    let total = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    match total {
        Some(t) if t <= MAX_TOTAL_SIZE => Ok(dims),
        _ => Err(Raise::error(format!(
            "The array dimensions {} ask for more than {MAX_TOTAL_SIZE} elements.",
            ctx.print(v, true)
        ))),
    }
}

/// The elements of a sequence (list, vector or string).
fn sequence_items<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Vec<Value<'gc>>, Raise<'gc>> {
    match v {
        Value::Nil | Value::Cons(_) => alloc::list_to_vec(v).ok_or_else(|| ctx.type_error(v, "LIST")),
        Value::Vector(x) => Ok(x.borrow().active().to_vec()),
        Value::String(s) => Ok(s.borrow().active().iter().map(|&c| Value::Char(c)).collect()),
        Value::SpecArray(_) => super::sequences::seq_items(ctx, v),
        other => Err(ctx.type_error(other, "SEQUENCE")),
    }
}

/// Flatten nested `:initial-contents` to row-major order, checking its shape.
fn flatten_contents<'gc>(
    ctx: &Ctx<'_, 'gc>,
    contents: Value<'gc>,
    dims: &[usize],
    out: &mut Vec<Value<'gc>>,
) -> Result<(), Raise<'gc>> {
    let Some((&d, rest)) = dims.split_first() else {
        out.push(contents);
        return Ok(());
    };
    let items = sequence_items(ctx, contents)?;
    if items.len() != d {
        return Err(Raise::error(format!(
            "The :INITIAL-CONTENTS {} has {} elements where the array dimension is {}.",
            ctx.print(contents, true),
            items.len(),
            d
        )));
    }
    for item in items {
        flatten_contents(ctx, item, rest, out)?;
    }
    Ok(())
}

/// Keyword arguments of make-array and adjust-array.
#[derive(Default)]
struct ArrayKeys<'gc> {
    element_type: Option<Value<'gc>>,
    initial_element: Option<Value<'gc>>,
    initial_contents: Option<Value<'gc>>,
    adjustable: bool,
    fill_pointer: Option<Value<'gc>>,
    displaced_to: Option<Value<'gc>>,
    displaced_index_offset: Option<Value<'gc>>,
}

fn parse_keys<'gc>(ctx: &Ctx<'_, 'gc>, who: &str, a: A<'_, 'gc>) -> Result<ArrayKeys<'gc>, Raise<'gc>> {
    if !a.len().is_multiple_of(2) {
        return Err(Raise::program(format!("odd number of &KEY arguments to {who}")));
    }
    let mut keys = ArrayKeys::default();
    let mut seen_adjustable = false;
    // :allow-other-keys t anywhere (its leftmost occurrence) admits unknown keywords.
    let allow_other = a
        .chunks(2)
        .find(|p| matches!(p[0], Value::Symbol(s) if &*s.name == "ALLOW-OTHER-KEYS"))
        .is_some_and(|p| p[1].truthy());
    for pair in a.chunks(2) {
        let (k, v) = (pair[0], pair[1]);
        let Value::Symbol(s) = k else {
            return Err(Raise::program(format!("{} is not a keyword argument of {who}", ctx.print(k, true))));
        };
        // The leftmost occurrence of a keyword wins, hence get_or_insert.
        match &*s.name {
            "ELEMENT-TYPE" => _ = keys.element_type.get_or_insert(v),
            "INITIAL-ELEMENT" => _ = keys.initial_element.get_or_insert(v),
            "INITIAL-CONTENTS" => _ = keys.initial_contents.get_or_insert(v),
            "FILL-POINTER" => _ = keys.fill_pointer.get_or_insert(v),
            "ADJUSTABLE" if !seen_adjustable => {
                keys.adjustable = v.truthy();
                seen_adjustable = true;
            }
            "ADJUSTABLE" => {}
            "DISPLACED-TO" => _ = keys.displaced_to.get_or_insert(v),
            "DISPLACED-INDEX-OFFSET" => _ = keys.displaced_index_offset.get_or_insert(v),
            "ALLOW-OTHER-KEYS" => {}
            _ if allow_other => {}
            _ => {
                return Err(Raise::program(format!("{} is not a keyword argument of {who}", ctx.print(k, true))));
            }
        }
    }
    if keys.element_type.is_some_and(|t| names_user_type(ctx, t)) {
        return Err(Raise::UserType);
    }
    if keys.initial_element.is_some() && keys.initial_contents.is_some() {
        return Err(Raise::error(format!("{who}: :INITIAL-ELEMENT and :INITIAL-CONTENTS are mutually exclusive")));
    }
    if keys.displaced_to.is_some_and(|d| d.truthy()) && (keys.initial_element.is_some() || keys.initial_contents.is_some()) {
        return Err(Raise::error(format!(
            "{who}: a displaced array takes its elements from the array it is displaced to: \
             give neither :INITIAL-ELEMENT nor :INITIAL-CONTENTS with :DISPLACED-TO"
        )));
    }
    if keys.displaced_to.is_none_or(|d| d.is_nil()) && keys.displaced_index_offset.is_some_and(|o| o.truthy()) {
        return Err(Raise::error(format!("{who}: :DISPLACED-INDEX-OFFSET is given without :DISPLACED-TO")));
    }
    Ok(keys)
}

/// The fill pointer a `:fill-pointer` argument asks for, for a vector of `size`.
fn fill_pointer_of<'gc>(ctx: &Ctx<'_, 'gc>, v: Option<Value<'gc>>, size: usize, rank: usize) -> Result<Option<usize>, Raise<'gc>> {
    let fp = match v {
        None | Some(Value::Nil) => return Ok(None),
        Some(Value::Fixnum(i)) if i >= 0 && (i as usize) <= size => i as usize,
        Some(Value::Fixnum(i)) => {
            return Err(Raise::error(format!(
                "The fill pointer {i} is not an integer between 0 and the array's size {size}."
            )));
        }
        Some(v) if v.eq(ctx.t()) => size,
        Some(other) => return Err(ctx.type_error(other, "(OR BOOLEAN (INTEGER 0))")),
    };
    if rank != 1 {
        return Err(Raise::error(format!("Only vectors can have fill pointers, not arrays of rank {rank}.")));
    }
    Ok(Some(fp))
}

/// The number of elements of an array of `dims`, if the heap has room for them.
fn total_size<'gc>(ctx: &Ctx<'_, 'gc>, dims: &[usize]) -> Result<usize, Raise<'gc>> {
    let total = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).unwrap_or(usize::MAX);
    ctx.reserve("an array", total, std::mem::size_of::<Value<'gc>>())?;
    Ok(total)
}

/// The row-major items of a new array of `dims` from the keyword arguments.
fn initial_items<'gc>(ctx: &Ctx<'_, 'gc>, keys: &ArrayKeys<'gc>, elt: Elt, dims: &[usize]) -> Result<Vec<Value<'gc>>, Raise<'gc>> {
    let total = total_size(ctx, dims)?;
    let items = if let Some(contents) = keys.initial_contents {
        let mut out = Vec::with_capacity(total);
        flatten_contents(ctx, contents, dims, &mut out)?;
        out
    } else {
        let init = keys.initial_element.unwrap_or_else(|| elt.default_value(ctx));
        vec![init; total]
    };
    for &v in &items {
        check_element(ctx, elt, v)?;
    }
    Ok(items)
}

fn build_array<'gc>(
    ctx: &Ctx<'_, 'gc>,
    dims: Vec<usize>,
    items: Vec<Value<'gc>>,
    elt: Elt,
    fill_pointer: Option<usize>,
    adjustable: bool,
) -> Value<'gc> {
    if let Some(et) = elt.unboxed() {
        return alloc::spec_array(ctx.mc, dims, unboxed_store(et, &items), fill_pointer, adjustable, et);
    }
    if dims.len() != 1 {
        let array = alloc::array(ctx.mc, dims, items, elt.stored(ctx));
        if let Value::Array(a) = array {
            alloc::borrow_mut(ctx.mc, a).adjustable = adjustable;
        }
        return array;
    }
    if elt == Elt::Char {
        let chars = items.iter().map(|v| if let Value::Char(c) = v { *c } else { '\0' }).collect();
        return alloc::string_from_chars(ctx.mc, LString { chars, fill_pointer, adjustable });
    }
    alloc::vector_from(ctx.mc, items, fill_pointer, adjustable, elt.stored(ctx))
}

/// The unboxed store of `items` (already checked to be of type `et`).
fn unboxed_store<'gc>(et: ElementType, items: &[Value<'gc>]) -> Store<'gc> {
    let fix = |v: &Value<'gc>| if let Value::Fixnum(i) = v { *i } else { 0 };
    match et {
        ElementType::Bit => Store::Bits(Bits::from_bools(items.iter().map(|v| fix(v) != 0))),
        ElementType::Byte8 => Store::Bytes(items.iter().map(|v| fix(v) as u8).collect()),
        ElementType::Fixnum => Store::Fixnums(items.iter().map(fix).collect()),
        _ => Store::Doubles(items.iter().map(|v| if let Value::Float(f) = v { f.val } else { 0.0 }).collect()),
    }
}

/// The displacement `:displaced-to` and `:displaced-index-offset` ask for, for
/// an array of `size` elements of type `elt` (None when not displaced).
fn displacement_of<'gc>(
    ctx: &Ctx<'_, 'gc>,
    who: &str,
    keys: &ArrayKeys<'gc>,
    elt: Elt,
    size: usize,
) -> Result<Option<(Value<'gc>, usize)>, Raise<'gc>> {
    let target = match keys.displaced_to {
        None | Some(Value::Nil) => return Ok(None),
        Some(t) => arr_arg(ctx, t)?,
    };
    if target.elt().to_heap() != elt.to_heap() {
        return Err(Raise::error(format!(
            "{who}: an array of element type {} cannot be displaced to {}, whose element type is {}.",
            elt.name(),
            ctx.print(target.value(), true),
            target.elt().name()
        )));
    }
    let offset = match keys.displaced_index_offset {
        None => 0,
        Some(o) => ctx.index_arg(o)?,
    };
    let available = target.total_size();
    if offset.checked_add(size).is_none_or(|end| end > available) {
        return Err(Raise::error(format!(
            "{who}: {size} elements from index {offset} do not fit in the {available} elements of {}.",
            ctx.print(target.value(), true)
        )));
    }
    Ok(Some((target.value(), offset)))
}

/// A new array displaced to `target` from `offset`.
fn displaced_array<'gc>(
    ctx: &Ctx<'_, 'gc>,
    dims: Vec<usize>,
    (target, offset): (Value<'gc>, usize),
    fill_pointer: Option<usize>,
    adjustable: bool,
) -> Value<'gc> {
    let et = spec::element_type(target).unwrap_or(ElementType::T);
    alloc::spec_array(ctx.mc, dims, Store::Displaced { target, offset }, fill_pointer, adjustable, et)
}

/// (make-array dimensions &key element-type initial-element initial-contents
///  adjustable fill-pointer displaced-to displaced-index-offset)
fn make_array<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let dims = dims_arg(ctx, a[0])?;
    let keys = parse_keys(ctx, "MAKE-ARRAY", &a[1..])?;
    let elt = keys.element_type.map(Elt::of_spec).unwrap_or(Elt::T);
    let size = total_size(ctx, &dims)?;
    let fill_pointer = fill_pointer_of(ctx, keys.fill_pointer, size, dims.len())?;
    if let Some(d) = displacement_of(ctx, "MAKE-ARRAY", &keys, elt, size)? {
        return Ok(displaced_array(ctx, dims, d, fill_pointer, keys.adjustable));
    }
    if let (Some(et), None, None) = (elt.unboxed(), keys.initial_contents, keys.initial_element) {
        // Zero-filled without a temporary vector of values.
        let store = Store::zeros(et, size).unwrap_or(Store::Fixnums(Vec::new()));
        return Ok(alloc::spec_array(ctx.mc, dims, store, fill_pointer, keys.adjustable, et));
    }
    let items = initial_items(ctx, &keys, elt, &dims)?;
    Ok(build_array(ctx, dims, items, elt, fill_pointer, keys.adjustable))
}

fn vector<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(alloc::vector(ctx.mc, a.to_vec()))
}

// ---- access ----

pub(crate) fn aref<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    // The common case first: a general vector and one fixnum index.
    if let (Value::Vector(v), [Value::Fixnum(i)]) = (a[0], &a[1..]) {
        let b = v.borrow();
        if *i >= 0 && (*i as usize) < b.items.len() {
            return Ok(b.items[*i as usize]);
        }
    }
    let arr = arr_arg(ctx, a[0])?;
    let i = row_major_index(ctx, arr, &a[1..])?;
    arr.get(ctx, i)
}

/// (sys:%aset array subscript... value): the update function of `(setf aref)`.
pub(crate) fn aset<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (value, rest) = (a[a.len() - 1], &a[..a.len() - 1]);
    let arr = arr_arg(ctx, rest[0])?;
    let i = row_major_index(ctx, arr, &rest[1..])?;
    check_element(ctx, arr.elt(), value)?;
    arr.set(ctx, i, value)?;
    Ok(value)
}

fn simple_vector_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Ptr<'gc, RefLock<LVector<'gc>>>, Raise<'gc>> {
    match v {
        Value::Vector(x) if is_simple_vector(x) => Ok(x),
        other => Err(ctx.type_error(other, "SIMPLE-VECTOR")),
    }
}

fn is_simple_vector(v: Ptr<'_, RefLock<LVector<'_>>>) -> bool {
    let b = v.borrow();
    b.fill_pointer.is_none() && !b.adjustable
}

fn svref<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let v = simple_vector_arg(ctx, a[0])?;
    let i = row_major_index(ctx, Arr::Vec(v), &a[1..2])?;
    Ok(v.borrow().items[i])
}

/// (sys:%svset vector index value): the update function of `(setf svref)`.
fn svset<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let v = simple_vector_arg(ctx, a[0])?;
    let i = row_major_index(ctx, Arr::Vec(v), &a[1..2])?;
    alloc::borrow_mut(ctx.mc, v).items[i] = a[2];
    Ok(a[2])
}

fn row_major_bound<'gc>(ctx: &mut Ctx<'_, 'gc>, arr: Arr<'gc>, index: Value<'gc>) -> Result<usize, Raise<'gc>> {
    let n = arr.total_size();
    match index {
        Value::Fixnum(i) if i >= 0 && (i as usize) < n => Ok(i as usize),
        Value::Fixnum(_) | Value::BigInt(_) => Err(index_error(ctx, arr.value(), index, n)),
        other => Err(ctx.type_error(other, "(INTEGER 0)")),
    }
}

fn row_major_aref<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    let i = row_major_bound(ctx, arr, a[1])?;
    arr.get(ctx, i)
}

/// (sys:%row-major-aset array index value)
fn row_major_aset<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    let i = row_major_bound(ctx, arr, a[1])?;
    check_element(ctx, arr.elt(), a[2])?;
    arr.set(ctx, i, a[2])?;
    Ok(a[2])
}

fn array_row_major_index<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    Ok(Value::Fixnum(row_major_index(ctx, arr, &a[1..])? as i64))
}

fn array_in_bounds_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    let dims = arr.dims();
    if dims.len() != a.len() - 1 {
        return Err(Raise::error(format!(
            "Wrong number of subscripts, {}, for array of rank {}.",
            a.len() - 1,
            dims.len()
        )));
    }
    let mut ok = true;
    for (&d, &sub) in dims.iter().zip(&a[1..]) {
        match sub {
            Value::Fixnum(i) => ok &= i >= 0 && (i as usize) < d,
            Value::BigInt(_) => ok = false,
            other => return Err(ctx.type_error(other, "INTEGER")),
        }
    }
    Ok(ctx.bool(ok))
}

// ---- attributes ----

fn array_dimension<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    let dims = arr.dims();
    match a[1] {
        Value::Fixnum(i) if i >= 0 && (i as usize) < dims.len() => Ok(Value::Fixnum(dims[i as usize] as i64)),
        Value::Fixnum(i) => Err(Raise::error(format!(
            "Axis number {i} is too big; {} only has {} dimension{}.",
            ctx.print(a[0], true),
            dims.len(),
            if dims.len() == 1 { "" } else { "s" }
        ))),
        other => Err(ctx.type_error(other, "(INTEGER 0)")),
    }
}

fn array_dimensions<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    let dims: Vec<Value<'gc>> = arr.dims().iter().map(|&d| Value::Fixnum(d as i64)).collect();
    Ok(alloc::list(ctx.mc, &dims))
}

fn array_rank<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    Ok(Value::Fixnum(arr.rank() as i64))
}

fn array_total_size<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    Ok(Value::Fixnum(arr.total_size() as i64))
}

fn array_element_type<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    Ok(arr.elt().type_value(ctx))
}

fn arrayp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::String(_) | Value::Vector(_) | Value::Array(_) | Value::SpecArray(_))))
}

fn vectorp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(match a[0] {
        Value::String(_) | Value::Vector(_) => true,
        Value::SpecArray(x) => x.borrow().dims.len() == 1,
        _ => false,
    }))
}

fn simple_vector_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Vector(v) if is_simple_vector(v))))
}

/// Whether `v` is a bit vector (packed or displaced to bits).
pub(crate) fn is_bit_vector(v: Value<'_>) -> bool {
    matches!(v, Value::SpecArray(x) if x.borrow().dims.len() == 1 && x.borrow().element_type == ElementType::Bit)
}

/// (array-displacement array) => the displaced-to array and offset, or NIL and 0.
fn array_displacement<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    let (target, offset) = match arr {
        Arr::Spec(x) => spec::displacement(x).unwrap_or((Value::Nil, 0)),
        _ => (Value::Nil, 0),
    };
    Ok(ctx.set_values(&[target, Value::Fixnum(offset as i64)]))
}

fn adjustable_array_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    Ok(ctx.bool(arr.adjusts_in_place()))
}

fn array_has_fill_pointer_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    Ok(ctx.bool(arr.fill_pointer().is_some()))
}

// ---- fill pointers ----

fn no_fill_pointer<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Raise<'gc> {
    ctx.type_error(v, "(AND VECTOR (SATISFIES ARRAY-HAS-FILL-POINTER-P))")
}

/// A vector with a fill pointer: (the vector, its fill pointer).
fn fill_pointer_vector<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<(Arr<'gc>, usize), Raise<'gc>> {
    let arr = match v {
        Value::String(s) => Arr::Str(s),
        Value::Vector(x) => Arr::Vec(x),
        Value::SpecArray(x) if x.borrow().dims.len() == 1 => Arr::Spec(x),
        other => return Err(no_fill_pointer(ctx, other)),
    };
    match arr.fill_pointer() {
        Some(fp) => Ok((arr, fp)),
        None => Err(no_fill_pointer(ctx, v)),
    }
}

fn set_fp<'gc>(ctx: &Ctx<'_, 'gc>, arr: Arr<'gc>, fp: usize) {
    match arr {
        Arr::Str(s) => alloc::borrow_mut(ctx.mc, s).fill_pointer = Some(fp),
        Arr::Vec(v) => alloc::borrow_mut(ctx.mc, v).fill_pointer = Some(fp),
        Arr::Spec(a) => alloc::borrow_mut(ctx.mc, a).fill_pointer = Some(fp),
        Arr::Multi(_) => {}
    }
}

fn fill_pointer<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (_, fp) = fill_pointer_vector(ctx, a[0])?;
    Ok(Value::Fixnum(fp as i64))
}

/// (sys:%set-fill-pointer vector new): the update function of `(setf fill-pointer)`.
fn set_fill_pointer<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (arr, _) = fill_pointer_vector(ctx, a[0])?;
    let n = arr.total_size();
    let fp = ctx.index_arg(a[1])?;
    if fp > n {
        let upper = Value::Fixnum(n as i64);
        let expected = alloc::list(ctx.mc, &[ctx.cl("INTEGER"), Value::Fixnum(0), upper]);
        let message = format!("The new fill pointer, {fp}, is larger than the length of the vector ({n}.)");
        return Err(simple_type_error(ctx, a[1], expected, message));
    }
    set_fp(ctx, arr, fp);
    Ok(a[1])
}

/// (vector-push new-element vector) => the index stored at, or NIL when full.
fn vector_push<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (arr, fp) = fill_pointer_vector(ctx, a[1])?;
    if fp >= arr.total_size() {
        return Ok(Value::Nil);
    }
    check_element(ctx, arr.elt(), a[0])?;
    arr.set(ctx, fp, a[0])?;
    set_fp(ctx, arr, fp + 1);
    Ok(Value::Fixnum(fp as i64))
}

/// (vector-push-extend new-element vector &optional min-extension)
fn vector_push_extend<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (arr, fp) = fill_pointer_vector(ctx, a[1])?;
    check_element(ctx, arr.elt(), a[0])?;
    let n = arr.total_size();
    if fp >= n {
        let extension = match a.get(2) {
            Some(&v) => ctx.index_arg(v)?.max(1),
            None => 1,
        };
        // Grow geometrically (as SBCL does) so N pushes cost O(N).
        let new_size = n + extension.max(n).max(1);
        if new_size > MAX_TOTAL_SIZE {
            return Err(Raise::error(format!("VECTOR-PUSH-EXTEND: the vector would exceed {MAX_TOTAL_SIZE} elements")));
        }
        match arr {
            Arr::Str(s) => alloc::borrow_mut(ctx.mc, s).chars.resize(new_size, '\0'),
            Arr::Vec(v) => {
                let fill = arr.elt().default_value(ctx);
                alloc::borrow_mut(ctx.mc, v).items.resize(new_size, fill)
            }
            Arr::Spec(x) => grow_spec(ctx, x, new_size)?,
            Arr::Multi(_) => {}
        }
    }
    arr.set(ctx, fp, a[0])?;
    set_fp(ctx, arr, fp + 1);
    Ok(Value::Fixnum(fp as i64))
}

fn vector_pop<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let (arr, fp) = fill_pointer_vector(ctx, a[0])?;
    if fp == 0 {
        return Err(Raise::error("There is nothing left to pop."));
    }
    let v = arr.get(ctx, fp - 1)?;
    set_fp(ctx, arr, fp - 1);
    Ok(v)
}

/// Give a specialized vector room for `new_size` elements, in place (a
/// displaced one gets storage of its own, holding its current elements).
fn grow_spec<'gc>(ctx: &Ctx<'_, 'gc>, x: Ptr<'gc, RefLock<SpecArray<'gc>>>, new_size: usize) -> Result<(), Raise<'gc>> {
    let et = x.borrow().element_type;
    if x.borrow().is_displaced() {
        let n = x.borrow().total_size();
        let items: Vec<Value<'gc>> = (0..n)
            .map(|i| spec::get(Value::SpecArray(x), i).map(|e| spec::boxed(ctx.mc, e)))
            .collect::<Option<_>>()
            .ok_or_else(|| displaced_too_small(ctx, Value::SpecArray(x)))?;
        let elt = Elt::of_heap(et);
        let mut store = own_store(elt, items);
        pad_store(&mut store, new_size, elt.default_value(ctx));
        let mut b = alloc::borrow_mut(ctx.mc, x);
        b.store = store;
        b.dims = vec![new_size];
        return Ok(());
    }
    let fill = Elt::of_heap(et).default_value(ctx);
    let mut b = alloc::borrow_mut(ctx.mc, x);
    pad_store(&mut b.store, new_size, fill);
    b.dims = vec![new_size];
    Ok(())
}

/// Grow a store with zeros (`fill` for boxed elements; a displaced store
/// stays as it is) or shrink it to `n` elements.
fn pad_store<'gc>(store: &mut Store<'gc>, n: usize, fill: Value<'gc>) {
    match store {
        Store::Bits(b) => b.resize(n, false),
        Store::Bytes(v) => v.resize(n, 0),
        Store::Fixnums(v) => v.resize(n, 0),
        Store::Doubles(v) => v.resize(n, 0.0),
        Store::Values(v) => v.resize(n, fill),
        Store::Displaced { .. } => {}
    }
}

/// Storage of its own holding `items` (type-checked) for an array of element type `elt`.
fn own_store<'gc>(elt: Elt, items: Vec<Value<'gc>>) -> Store<'gc> {
    match elt.unboxed() {
        Some(et) => unboxed_store(et, &items),
        None => Store::Values(items),
    }
}

// ---- adjust-array ----

/// (adjust-array array new-dimensions &key element-type initial-element
///  initial-contents fill-pointer)
fn adjust_array<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let arr = arr_arg(ctx, a[0])?;
    let dims = dims_arg(ctx, a[1])?;
    let keys = parse_keys(ctx, "ADJUST-ARRAY", &a[2..])?;
    let old_dims = arr.dims();
    if dims.len() != old_dims.len() {
        return Err(Raise::error(format!(
            "ADJUST-ARRAY: the new dimensions {} do not match the rank {} of the array.",
            ctx.print(a[1], true),
            old_dims.len()
        )));
    }
    let elt = arr.elt();
    let size = total_size(ctx, dims.as_slice())?;
    if let Some(d) = displacement_of(ctx, "ADJUST-ARRAY", &keys, elt, size)? {
        // `:fill-pointer nil` leaves the fill pointer as it is.
        let fill_pointer = match keys.fill_pointer {
            Some(v) if v.truthy() => fill_pointer_of(ctx, keys.fill_pointer, size, dims.len())?,
            _ => arr.fill_pointer().map(|fp| fp.min(size)),
        };
        if spec::would_cycle(arr.value(), d.0) {
            return Err(Raise::error(format!(
                "ADJUST-ARRAY: displacing {} to {} would make a cycle of displaced arrays.",
                ctx.print(arr.value(), true),
                ctx.print(d.0, true)
            )));
        }
        if let Arr::Spec(x) = arr
            && arr.adjusts_in_place()
        {
            let mut b = alloc::borrow_mut(ctx.mc, x);
            b.store = Store::Displaced { target: d.0, offset: d.1 };
            b.dims = dims;
            b.fill_pointer = fill_pointer;
            return Ok(a[0]);
        }
        // Strings, general vectors and arrays are not made displaced in place:
        // the result is a new displaced array.
        return Ok(displaced_array(ctx, dims, d, fill_pointer, keys.adjustable || arr.adjusts_in_place()));
    }
    let items = if keys.initial_contents.is_some() {
        initial_items(ctx, &keys, elt, &dims)?
    } else {
        let init = keys.initial_element.unwrap_or_else(|| elt.default_value(ctx));
        check_element(ctx, elt, init)?;
        // Each element keeps its subscripts if they are still in bounds.
        let mut items = vec![init; size];
        let mut subs = vec![0usize; dims.len()];
        for (i, item) in items.iter_mut().enumerate() {
            let mut rest = i;
            for k in (0..dims.len()).rev() {
                subs[k] = rest % dims[k].max(1);
                rest /= dims[k].max(1);
            }
            if subs.iter().zip(&old_dims).all(|(s, d)| s < d) {
                let old = subs.iter().zip(&old_dims).fold(0, |acc, (s, d)| acc * d + s);
                *item = arr.get(ctx, old)?;
            }
        }
        items
    };
    // `:fill-pointer nil` leaves the fill pointer as it is.
    let fill_pointer = match keys.fill_pointer {
        Some(v) if v.truthy() => fill_pointer_of(ctx, keys.fill_pointer, size, dims.len())?,
        _ => match arr.fill_pointer() {
            Some(fp) if fp > size => {
                return Err(Raise::error(format!(
                    "ADJUST-ARRAY: the fill pointer {fp} is beyond the new size {size}; give :FILL-POINTER."
                )));
            }
            other => other,
        },
    };
    if !arr.adjusts_in_place() {
        return Ok(build_array(ctx, dims, items, elt, fill_pointer, keys.adjustable));
    }
    match arr {
        Arr::Str(s) => {
            let mut b = alloc::borrow_mut(ctx.mc, s);
            b.chars = items.iter().map(|v| if let Value::Char(c) = v { *c } else { '\0' }).collect();
            b.fill_pointer = fill_pointer;
        }
        Arr::Vec(v) => {
            let mut b = alloc::borrow_mut(ctx.mc, v);
            b.items = items;
            b.fill_pointer = fill_pointer;
        }
        Arr::Multi(m) => {
            let mut b = alloc::borrow_mut(ctx.mc, m);
            b.items = items;
            b.dims = dims;
        }
        Arr::Spec(x) => {
            let mut b = alloc::borrow_mut(ctx.mc, x);
            b.store = own_store(elt, items);
            b.dims = dims;
            b.fill_pointer = fill_pointer;
        }
    }
    Ok(a[0])
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("MAKE-ARRAY", 1, MANY, make_array),
    cl("VECTOR", 0, MANY, vector),
    cl("AREF", 1, MANY, aref),
    cl("SVREF", 2, 2, svref),
    cl("ROW-MAJOR-AREF", 2, 2, row_major_aref),
    cl("ARRAY-ROW-MAJOR-INDEX", 1, MANY, array_row_major_index),
    cl("ARRAY-IN-BOUNDS-P", 1, MANY, array_in_bounds_p),
    cl("ARRAY-DIMENSION", 2, 2, array_dimension),
    cl("ARRAY-DIMENSIONS", 1, 1, array_dimensions),
    cl("ARRAY-RANK", 1, 1, array_rank),
    cl("ARRAY-TOTAL-SIZE", 1, 1, array_total_size),
    cl("ARRAY-ELEMENT-TYPE", 1, 1, array_element_type),
    cl("ARRAYP", 1, 1, arrayp),
    cl("VECTORP", 1, 1, vectorp),
    cl("SIMPLE-VECTOR-P", 1, 1, simple_vector_p),
    cl("ADJUSTABLE-ARRAY-P", 1, 1, adjustable_array_p),
    cl("ARRAY-HAS-FILL-POINTER-P", 1, 1, array_has_fill_pointer_p),
    cl("FILL-POINTER", 1, 1, fill_pointer),
    cl("VECTOR-PUSH", 2, 2, vector_push),
    cl("VECTOR-PUSH-EXTEND", 2, 3, vector_push_extend),
    cl("VECTOR-POP", 1, 1, vector_pop),
    cl("ADJUST-ARRAY", 2, MANY, adjust_array),
    cl("ARRAY-DISPLACEMENT", 1, 1, array_displacement),
    cl("UPGRADED-ARRAY-ELEMENT-TYPE", 1, 2, upgraded_array_element_type),
    sys("%ASET", 2, MANY, aset),
    sys("%SVSET", 3, 3, svset),
    sys("%ROW-MAJOR-ASET", 3, 3, row_major_aset),
    sys("%SET-FILL-POINTER", 2, 2, set_fill_pointer),
];
