//! The array view that types and the array builtins share: any array as one
//! `Arr` of its three representations (strings, general vectors and arrays,
//! specialized or displaced `SpecArray`s), and its upgraded element type
//! (`Elt`, SBCL's upgrading for the specializations this interpreter has).
//!
//! Invariant: an `Elt` decides what a store into the array admits; element
//! access here never allocates (but boxing a specialized double).

use gc_arena::RefLock;
use mprof_heap::spec::{self, Elem, ElementType, SpecArray};
use mprof_heap::value::{LArray, LString, LVector, Ptr};
use mprof_heap::{Value, alloc};

use crate::runtime::ctx::Ctx;
use crate::runtime::raise::{LResult, Raise};

/// An array of one of the three representations.
#[derive(Clone, Copy)]
pub(crate) enum Arr<'gc> {
    Str(Ptr<'gc, RefLock<LString>>),
    Vec(Ptr<'gc, RefLock<LVector<'gc>>>),
    Multi(Ptr<'gc, RefLock<LArray<'gc>>>),
    /// Specialized (unboxed) or displaced, of any rank.
    Spec(Ptr<'gc, RefLock<SpecArray<'gc>>>),
}

/// The upgraded element type of an array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Elt {
    T,
    Char,
    Bit,
    Byte8,
    Fixnum,
    Double,
    Single,
}

impl Elt {
    /// The upgraded type of an `:element-type` specifier (SBCL's upgrading, for
    /// the specialisations this interpreter distinguishes).
    pub(crate) fn of_spec(spec: Value<'_>) -> Elt {
        match spec {
            Value::Symbol(s) => match &*s.name {
                "CHARACTER" | "BASE-CHAR" | "STANDARD-CHAR" => Elt::Char,
                "BIT" => Elt::Bit,
                "FIXNUM" => Elt::Fixnum,
                "DOUBLE-FLOAT" | "LONG-FLOAT" => Elt::Double,
                "SINGLE-FLOAT" | "SHORT-FLOAT" => Elt::Single,
                _ => Elt::T,
            },
            Value::Cons(c) => match (c.car.get(), alloc::car(c.cdr.get()), alloc::car(alloc::cdr(c.cdr.get()))) {
                (Value::Symbol(s), Value::Fixnum(n), _) if &*s.name == "UNSIGNED-BYTE" => match n {
                    1 => Elt::Bit,
                    2..=8 => Elt::Byte8,
                    9..=61 => Elt::Fixnum,
                    _ => Elt::T,
                },
                (Value::Symbol(s), Value::Fixnum(n), _) if &*s.name == "SIGNED-BYTE" && (1..=62).contains(&n) => Elt::Fixnum,
                (Value::Symbol(s), Value::Fixnum(n), _) if &*s.name == "MOD" => match n {
                    1..=2 => Elt::Bit,
                    3..=256 => Elt::Byte8,
                    _ if n <= 1 << 61 => Elt::Fixnum,
                    _ => Elt::T,
                },
                (Value::Symbol(s), Value::Fixnum(lo), Value::Fixnum(hi)) if &*s.name == "INTEGER" => {
                    if lo >= 0 && hi <= 1 {
                        Elt::Bit
                    } else if lo >= 0 && hi <= 255 {
                        Elt::Byte8
                    } else if lo >= -(1 << 62) && hi < 1 << 62 {
                        Elt::Fixnum
                    } else {
                        Elt::T
                    }
                }
                (Value::Symbol(s), _, _) if matches!(&*s.name, "DOUBLE-FLOAT" | "LONG-FLOAT") => Elt::Double,
                (Value::Symbol(s), _, _) if matches!(&*s.name, "SINGLE-FLOAT" | "SHORT-FLOAT") => Elt::Single,
                _ => Elt::T,
            },
            _ => Elt::T,
        }
    }

    /// The element type recorded in a vector or array object.
    pub(crate) fn of_stored(v: Value<'_>) -> Elt {
        match v {
            Value::Nil => Elt::T,
            other => Elt::of_spec(other),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Elt::T => "T",
            Elt::Char => "CHARACTER",
            Elt::Bit => "BIT",
            Elt::Byte8 => "(UNSIGNED-BYTE 8)",
            Elt::Fixnum => "FIXNUM",
            Elt::Double => "DOUBLE-FLOAT",
            Elt::Single => "SINGLE-FLOAT",
        }
    }

    /// What the array object stores: NIL for T, else the type's symbol.
    pub(crate) fn stored<'gc>(self, ctx: &Ctx<'_, 'gc>) -> Value<'gc> {
        match self {
            Elt::T => Value::Nil,
            other => other.type_value(ctx),
        }
    }

    /// The type specifier, as `array-element-type` returns it.
    pub(crate) fn type_value<'gc>(self, ctx: &Ctx<'_, 'gc>) -> Value<'gc> {
        match self {
            Elt::Byte8 => alloc::list(ctx.mc, &[ctx.cl("UNSIGNED-BYTE"), Value::Fixnum(8)]),
            other => ctx.cl(other.name()),
        }
    }

    /// How arrays of this type store their elements (None: boxed values).
    pub(crate) fn unboxed(self) -> Option<ElementType> {
        Some(match self {
            Elt::Bit => ElementType::Bit,
            Elt::Byte8 => ElementType::Byte8,
            Elt::Fixnum => ElementType::Fixnum,
            Elt::Double => ElementType::Double,
            _ => return None,
        })
    }

    pub(crate) fn of_heap(e: ElementType) -> Elt {
        match e {
            ElementType::T => Elt::T,
            ElementType::Character => Elt::Char,
            ElementType::Bit => Elt::Bit,
            ElementType::Byte8 => Elt::Byte8,
            ElementType::Fixnum => Elt::Fixnum,
            ElementType::Double => Elt::Double,
        }
    }

    pub(crate) fn to_heap(self) -> ElementType {
        match self {
            Elt::Char => ElementType::Character,
            Elt::T | Elt::Single => ElementType::T,
            other => other.unboxed().unwrap_or(ElementType::T),
        }
    }

    /// The element of a fresh array when no initial element is given (SBCL's zero).
    pub(crate) fn default_value<'gc>(self, ctx: &Ctx<'_, 'gc>) -> Value<'gc> {
        match self {
            Elt::Char => Value::Char('\0'),
            Elt::Double | Elt::Single => alloc::float(ctx.mc, 0.0),
            _ => Value::Fixnum(0),
        }
    }

    pub(crate) fn admits(self, v: Value<'_>) -> bool {
        match self {
            Elt::T => true,
            Elt::Char => matches!(v, Value::Char(_)),
            Elt::Bit | Elt::Byte8 | Elt::Fixnum => self.to_heap().admits(v),
            Elt::Double | Elt::Single => matches!(v, Value::Float(_)),
        }
    }
}

pub(crate) fn check_element<'gc>(ctx: &Ctx<'_, 'gc>, elt: Elt, v: Value<'gc>) -> Result<(), Raise<'gc>> {
    if elt.admits(v) { Ok(()) } else { Err(ctx.type_error(v, elt.name())) }
}

pub(crate) fn arr_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Arr<'gc>, Raise<'gc>> {
    match v {
        Value::String(s) => Ok(Arr::Str(s)),
        Value::Vector(x) => Ok(Arr::Vec(x)),
        Value::Array(x) => Ok(Arr::Multi(x)),
        Value::SpecArray(x) => Ok(Arr::Spec(x)),
        other => Err(ctx.type_error(other, "ARRAY")),
    }
}

impl<'gc> Arr<'gc> {
    pub(crate) fn value(self) -> Value<'gc> {
        match self {
            Arr::Str(s) => Value::String(s),
            Arr::Vec(v) => Value::Vector(v),
            Arr::Multi(a) => Value::Array(a),
            Arr::Spec(a) => Value::SpecArray(a),
        }
    }

    pub(crate) fn dims(self) -> Vec<usize> {
        match self {
            Arr::Str(s) => vec![s.borrow().chars.len()],
            Arr::Vec(v) => vec![v.borrow().items.len()],
            Arr::Multi(a) => a.borrow().dims.clone(),
            Arr::Spec(a) => a.borrow().dims.clone(),
        }
    }

    pub(crate) fn rank(self) -> usize {
        match self {
            Arr::Multi(a) => a.borrow().dims.len(),
            Arr::Spec(a) => a.borrow().dims.len(),
            _ => 1,
        }
    }

    pub(crate) fn total_size(self) -> usize {
        match self {
            Arr::Str(s) => s.borrow().chars.len(),
            Arr::Vec(v) => v.borrow().items.len(),
            Arr::Multi(a) => a.borrow().items.len(),
            Arr::Spec(a) => a.borrow().total_size(),
        }
    }

    pub(crate) fn elt(self) -> Elt {
        match self {
            Arr::Str(_) => Elt::Char,
            Arr::Vec(v) => Elt::of_stored(v.borrow().element_type),
            Arr::Multi(a) => Elt::of_stored(a.borrow().element_type),
            Arr::Spec(a) => Elt::of_heap(a.borrow().element_type),
        }
    }

    pub(crate) fn fill_pointer(self) -> Option<usize> {
        match self {
            Arr::Str(s) => s.borrow().fill_pointer,
            Arr::Vec(v) => v.borrow().fill_pointer,
            Arr::Multi(_) => None,
            Arr::Spec(a) => a.borrow().fill_pointer,
        }
    }

    /// Whether `adjust-array` changes this array in place (SBCL: every
    /// non-simple vector, i.e. adjustable or with a fill pointer).
    pub(crate) fn adjusts_in_place(self) -> bool {
        match self {
            Arr::Str(s) => s.borrow().adjustable || s.borrow().fill_pointer.is_some(),
            Arr::Vec(v) => v.borrow().adjustable || v.borrow().fill_pointer.is_some(),
            Arr::Multi(a) => a.borrow().adjustable,
            Arr::Spec(a) => !a.borrow().is_simple(),
        }
    }

    /// The element at a row-major index (the caller checked the bound); an
    /// error only when a displaced-to array has shrunk below it.
    pub(crate) fn get(self, ctx: &Ctx<'_, 'gc>, i: usize) -> LResult<'gc> {
        match self {
            Arr::Str(s) => Ok(Value::Char(s.borrow().chars[i])),
            Arr::Vec(v) => Ok(v.borrow().items[i]),
            Arr::Multi(a) => Ok(a.borrow().items[i]),
            Arr::Spec(_) => match spec::get(self.value(), i) {
                Some(e) => Ok(spec::boxed(ctx.mc, e)),
                None => Err(displaced_too_small(ctx, self.value())),
            },
        }
    }

    /// Store at a row-major index (the caller checked the bound and type).
    pub(crate) fn set(self, ctx: &Ctx<'_, 'gc>, i: usize, v: Value<'gc>) -> Result<(), Raise<'gc>> {
        match self {
            Arr::Spec(_) => {
                if !spec::set(ctx.mc, self.value(), i, Elem::Value(v)) {
                    return Err(displaced_too_small(ctx, self.value()));
                }
            }
            Arr::Str(s) => {
                if let Value::Char(c) = v {
                    alloc::borrow_mut(ctx.mc, s).chars[i] = c;
                }
            }
            Arr::Vec(x) => alloc::borrow_mut(ctx.mc, x).items[i] = v,
            Arr::Multi(a) => alloc::borrow_mut(ctx.mc, a).items[i] = v,
        }
        Ok(())
    }
}

/// Whether array `obj`'s element type is the upgraded element type of `spec`
/// (what `(array spec)` type specifiers test).
pub(crate) fn has_upgraded_element_type(obj: Value<'_>, spec: Value<'_>) -> bool {
    let want = Elt::of_spec(spec);
    match arr_of(obj) {
        Some(arr) => arr.elt() == want,
        None => false,
    }
}

pub(crate) fn arr_of(v: Value<'_>) -> Option<Arr<'_>> {
    Some(match v {
        Value::String(s) => Arr::Str(s),
        Value::Vector(x) => Arr::Vec(x),
        Value::Array(x) => Arr::Multi(x),
        Value::SpecArray(x) => Arr::Spec(x),
        _ => return None,
    })
}

/// The upgraded element type as `array-element-type` names it.
pub(crate) fn element_type_value<'gc>(ctx: &Ctx<'_, 'gc>, e: ElementType) -> Value<'gc> {
    Elt::of_heap(e).type_value(ctx)
}

/// The error for an element of a displaced array beyond its target's end
/// (the target was adjusted to a smaller size after the displacement).
pub(crate) fn displaced_too_small<'gc>(ctx: &Ctx<'_, 'gc>, array: Value<'gc>) -> Raise<'gc> {
    Raise::error(format!(
        "{} is displaced to an array that has become too small for it.",
        ctx.print(array, true)
    ))
}
