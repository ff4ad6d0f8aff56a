//! The one place where an object's profile category is decided: every heap
//! object is made as a [`Kind`], and its kind alone fixes its category in the
//! mprof paper's Lisp scheme (c conses, f boxed floats, s structures, vectors,
//! strings and arrays, o everything else).
//!
//! Invariant: no other module names a `Category` variant to classify an object
//! (`tests/layers.rs` checks it); `alloc_object`, `resize_object` and the cons
//! funnel take a `Kind`.

/// The four type categories of the mprof paper's Lisp variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Category {
    /// Conses.
    Cons = 0,
    /// Boxed double floats.
    Float = 1,
    /// Structures, vectors, strings and arrays.
    StructureVector = 2,
    /// Everything else: symbols, closures, bignums, ratios, hash tables, packages, streams...
    Other = 3,
}

impl Category {
    /// The index of this category in the profiler's Lisp category scheme (c, f, s, o).
    #[inline]
    pub fn index(self) -> u8 {
        self as u8
    }
}

/// What a heap object is, as far as the profile's categories are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Cons,
    Float,
    /// Strings, general vectors and arrays, specialized and displaced arrays.
    Array,
    /// Structures, conditions and CLOS instances.
    Structure,
    Complex,
    Bignum,
    Ratio,
    /// A fixnum outside 63 bits, boxed to fit a packed cons field.
    BoxedFixnum,
    Symbol,
    Function,
    Code,
    ValueCell,
    StructureType,
    Package,
    PackageRegistry,
    RandomState,
    HashTable,
    Stream,
}

impl Kind {
    /// The profile category of objects of this kind.
    #[inline]
    pub const fn category(self) -> Category {
        match self {
            Kind::Cons => Category::Cons,
            Kind::Float => Category::Float,
            Kind::Array | Kind::Structure => Category::StructureVector,
            Kind::Complex
            | Kind::Bignum
            | Kind::Ratio
            | Kind::BoxedFixnum
            | Kind::Symbol
            | Kind::Function
            | Kind::Code
            | Kind::ValueCell
            | Kind::StructureType
            | Kind::Package
            | Kind::PackageRegistry
            | Kind::RandomState
            | Kind::HashTable
            | Kind::Stream => Category::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_follow_the_paper() {
        assert_eq!(Kind::Cons.category(), Category::Cons);
        assert_eq!(Kind::Float.category(), Category::Float);
        assert_eq!(Kind::Array.category(), Category::StructureVector);
        assert_eq!(Kind::Structure.category(), Category::StructureVector);
        // Numbers that are not floats, like every other object, are "other".
        for k in [Kind::Complex, Kind::Bignum, Kind::Ratio, Kind::HashTable, Kind::Symbol, Kind::Function] {
            assert_eq!(k.category(), Category::Other, "{k:?}");
        }
    }
}
