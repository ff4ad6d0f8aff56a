//! Typed conversions between Rust values and [`HostValue`]s, the currency of
//! the embedding API: [`IntoLisp`] for arguments and results going in,
//! [`FromLisp`] for values coming out, [`FromArgs`] for a native's argument
//! list. A mismatch is a [`ConversionError`] naming what was expected and what
//! came, never a silent default.
//!
//! Mapping: integers of every width ↔ `Integer` (or `BigInteger` past i64),
//! floats ↔ `Float` (an integer converts to a float, not the reverse), `bool`
//! ↔ T/NIL, `char`, `String`/`&str` ↔ `String`, `Vec<T>` and tuples ↔ proper
//! lists, `Option<T>` ↔ NIL or the value, `HashMap<K, V>` ↔ a list of
//! `(key value)` lists, `()` ↔ NIL, [`Handle`] ↔ the object it holds.

use std::collections::HashMap;
use std::hash::Hash;

use crate::runtime::handles::Handle;
use crate::runtime::host_value::HostValue;

/// A value that did not have the shape a conversion wanted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionError {
    /// What the conversion wanted, e.g. "an integer in the range of u8".
    pub expected: String,
    /// The value it got, as the host sees it.
    pub found: String,
}

impl std::fmt::Display for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected {}, got {}", self.expected, self.found)
    }
}

impl std::error::Error for ConversionError {}

fn mismatch<T>(expected: impl Into<String>, found: &HostValue) -> Result<T, ConversionError> {
    Err(ConversionError { expected: expected.into(), found: format!("{found:?}") })
}

/// A Rust value that can be handed to Lisp.
pub trait IntoLisp {
    /// The value as the host hands it to Lisp.
    fn into_lisp(self) -> HostValue;
}

/// A Rust value that can be made from a Lisp value.
pub trait FromLisp: Sized {
    /// The value, or an error naming the mismatch.
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError>;
}

impl IntoLisp for HostValue {
    fn into_lisp(self) -> HostValue {
        self
    }
}

impl FromLisp for HostValue {
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        Ok(v)
    }
}

impl IntoLisp for Handle {
    fn into_lisp(self) -> HostValue {
        HostValue::Handle(self)
    }
}

impl FromLisp for Handle {
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        match v {
            HostValue::Handle(h) => Ok(h),
            other => mismatch("a handle (use Interpreter::eval_handle)", &other),
        }
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl IntoLisp for $t {
            fn into_lisp(self) -> HostValue {
                match i64::try_from(self) {
                    Ok(i) => HostValue::Integer(i),
                    #[allow(unreachable_patterns)]
                    Err(_) => HostValue::BigInteger(self.to_string()),
                }
            }
        }
        impl FromLisp for $t {
            fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
                let wanted = concat!("an integer in the range of ", stringify!($t));
                match &v {
                    HostValue::Integer(i) => <$t>::try_from(*i).or_else(|_| mismatch(wanted, &v)),
                    HostValue::BigInteger(s) => s.parse::<$t>().or_else(|_| mismatch(wanted, &v)),
                    _ => mismatch(wanted, &v),
                }
            }
        }
    )*};
}
integers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

impl IntoLisp for f64 {
    fn into_lisp(self) -> HostValue {
        HostValue::Float(self)
    }
}

impl IntoLisp for f32 {
    fn into_lisp(self) -> HostValue {
        HostValue::Float(f64::from(self))
    }
}

impl FromLisp for f64 {
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        match v {
            HostValue::Float(x) => Ok(x),
            HostValue::Integer(i) => Ok(i as f64),
            other => mismatch("a real number", &other),
        }
    }
}

impl FromLisp for f32 {
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        f64::from_lisp(v).map(|x| x as f32)
    }
}

impl IntoLisp for bool {
    fn into_lisp(self) -> HostValue {
        if self { HostValue::T } else { HostValue::Nil }
    }
}

impl FromLisp for bool {
    /// Strict: T or NIL (a generalized boolean is a Lisp idea; ask for
    /// `HostValue` to take any value).
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        match v {
            HostValue::T => Ok(true),
            HostValue::Nil => Ok(false),
            other => mismatch("T or NIL", &other),
        }
    }
}

impl IntoLisp for char {
    fn into_lisp(self) -> HostValue {
        HostValue::Char(self)
    }
}

impl FromLisp for char {
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        match v {
            HostValue::Char(c) => Ok(c),
            other => mismatch("a character", &other),
        }
    }
}

impl IntoLisp for String {
    fn into_lisp(self) -> HostValue {
        HostValue::String(self)
    }
}

impl IntoLisp for &str {
    fn into_lisp(self) -> HostValue {
        HostValue::String(self.to_string())
    }
}

impl FromLisp for String {
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        match v {
            HostValue::String(s) => Ok(s),
            other => mismatch("a string", &other),
        }
    }
}

impl IntoLisp for () {
    fn into_lisp(self) -> HostValue {
        HostValue::Nil
    }
}

impl FromLisp for () {
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        match v {
            HostValue::Nil => Ok(()),
            other => mismatch("NIL", &other),
        }
    }
}

impl<T: IntoLisp> IntoLisp for Option<T> {
    fn into_lisp(self) -> HostValue {
        self.map_or(HostValue::Nil, IntoLisp::into_lisp)
    }
}

impl<T: FromLisp> FromLisp for Option<T> {
    /// NIL is None; anything else must convert to T.
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        match v {
            HostValue::Nil => Ok(None),
            other => T::from_lisp(other).map(Some),
        }
    }
}

impl<T: IntoLisp> IntoLisp for Vec<T> {
    fn into_lisp(self) -> HostValue {
        HostValue::List(self.into_iter().map(IntoLisp::into_lisp).collect())
    }
}

fn items(v: HostValue, expected: &str) -> Result<Vec<HostValue>, ConversionError> {
    match v {
        HostValue::List(items) => Ok(items),
        HostValue::Nil => Ok(Vec::new()),
        other => mismatch(expected, &other),
    }
}

impl<T: FromLisp> FromLisp for Vec<T> {
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        items(v, "a proper list")?.into_iter().map(T::from_lisp).collect()
    }
}

impl<K: IntoLisp, V: IntoLisp, S> IntoLisp for HashMap<K, V, S> {
    fn into_lisp(self) -> HostValue {
        HostValue::List(self.into_iter().map(|(k, v)| HostValue::List(vec![k.into_lisp(), v.into_lisp()])).collect())
    }
}

impl<K: FromLisp + Eq + Hash, V: FromLisp> FromLisp for HashMap<K, V> {
    /// From a list of `(key value)` lists.
    fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
        items(v, "a list of (key value) lists")?.into_iter().map(<(K, V)>::from_lisp).collect()
    }
}

macro_rules! tuples {
    ($(($n:expr; $($t:ident),+)),*) => {$(
        impl<$($t: IntoLisp),+> IntoLisp for ($($t,)+) {
            #[allow(non_snake_case)]
            fn into_lisp(self) -> HostValue {
                let ($($t,)+) = self;
                HostValue::List(vec![$($t.into_lisp()),+])
            }
        }
        impl<$($t: FromLisp),+> FromLisp for ($($t,)+) {
            fn from_lisp(v: HostValue) -> Result<Self, ConversionError> {
                let wanted = concat!("a list of ", stringify!($n), " elements");
                let list = items(v, wanted)?;
                if list.len() != $n {
                    return mismatch(wanted, &HostValue::List(list));
                }
                let mut it = list.into_iter();
                Ok(($($t::from_lisp(it.next().unwrap_or(HostValue::Nil))?,)+))
            }
        }
        impl<$($t: FromLisp),+> FromArgs for ($($t,)+) {
            const ARITY: usize = $n;
            fn from_args(args: &[HostValue]) -> Result<Self, ConversionError> {
                let mut it = args.iter().cloned().enumerate();
                Ok(($({
                    let (i, a) = it.next().unwrap_or((0, HostValue::Nil));
                    $t::from_lisp(a).map_err(|e| ConversionError { expected: format!("{} as argument {}", e.expected, i + 1), found: e.found })?
                },)+))
            }
        }
    )*};
}

/// A native's argument list, converted argument by argument.
pub trait FromArgs: Sized {
    /// How many arguments it takes.
    const ARITY: usize;
    /// The arguments (exactly `ARITY` of them), converted.
    fn from_args(args: &[HostValue]) -> Result<Self, ConversionError>;
}

impl FromArgs for () {
    const ARITY: usize = 0;
    fn from_args(_: &[HostValue]) -> Result<Self, ConversionError> {
        Ok(())
    }
}

tuples!((1; A), (2; A, B), (3; A, B, C), (4; A, B, C, D), (5; A, B, C, D, E), (6; A, B, C, D, E, F));

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: IntoLisp + FromLisp + PartialEq + std::fmt::Debug + Clone>(v: T) {
        assert_eq!(T::from_lisp(v.clone().into_lisp()), Ok(v));
    }

    #[test]
    fn every_listed_type_round_trips() {
        round_trip(-5i8);
        round_trip(300u16);
        round_trip(i64::MIN);
        round_trip(u64::MAX);
        round_trip(i128::MAX);
        round_trip(2.5f64);
        round_trip(true);
        round_trip('λ');
        round_trip("text".to_string());
        round_trip(vec![1u32, 2, 3]);
        round_trip((1i32, "a".to_string(), false));
        round_trip(Some(3usize));
        round_trip(None::<i32>);
        round_trip(HashMap::from([("k".to_string(), 1i64)]));
    }

    #[test]
    fn mismatches_are_errors_never_defaults() {
        assert!(u8::from_lisp(HostValue::Integer(300)).unwrap_err().expected.contains("u8"));
        assert!(bool::from_lisp(HostValue::Integer(0)).is_err());
        assert!(String::from_lisp(HostValue::Symbol("X".into())).is_err());
        assert!(<(i32, i32)>::from_lisp(HostValue::List(vec![HostValue::Integer(1)])).is_err());
        let e = <(i32, String)>::from_args(&[HostValue::Integer(1), HostValue::Integer(2)]).unwrap_err();
        assert!(e.expected.contains("argument 2"), "{e}");
    }
}
