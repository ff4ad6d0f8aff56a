//! What each object that owns a growable buffer really takes, and the write
//! guard that keeps its recorded size true as it grows and shrinks.
//!
//! Invariants:
//! - For every type implementing [`Footprint`], the size recorded in an
//!   object's tag is `object_bytes::<T>(value.owned_bytes())`: the
//!   constructors in `alloc` allocate with it, and [`Resizing`] re-measures it
//!   whenever the object was borrowed mutably, reporting any change through
//!   `resize_object` (a realloc to the profiler, charged to the current
//!   context). Packages, whose growable table is one field among others, get
//!   the same from [`SymbolsResizing`].
//! - `owned_bytes` is O(1): it reads buffer capacities, never walks elements,
//!   because it runs on every mutable borrow.

use std::cell::RefMut;
use std::ops::{Deref, DerefMut};

use gc_arena::{Gc, Mutation, RefLock};

use crate::kind::Kind;
use crate::object::{GC_HEADER_BYTES, Obj, SiteTag, resize_object};
use crate::hash_table::index_bytes;
use crate::spec::{SpecArray, Store};
use crate::value::{HashTable, LArray, LString, LVector, Package, Ptr, Stream, StreamKind, SymbolTable, Value};

/// A heap object type that owns memory out of line.
pub trait Footprint {
    /// What objects of this type are (which fixes their profile category).
    const KIND: Kind;
    /// The type name shown in the allocation bin table.
    fn type_name(&self) -> &'static str;
    /// The bytes owned out of line (buffer capacities, not lengths).
    fn owned_bytes(&self) -> usize;
}

/// The total size of a `RefLock<T>` heap object owning `owned` bytes out of line.
pub fn object_bytes<T>(owned: usize) -> usize {
    GC_HEADER_BYTES + std::mem::size_of::<Obj<RefLock<T>>>() + owned
}

impl Footprint for LString {
    const KIND: Kind = Kind::Array;
    fn type_name(&self) -> &'static str {
        "string"
    }
    fn owned_bytes(&self) -> usize {
        self.chars.capacity() * std::mem::size_of::<char>()
    }
}

impl Footprint for LVector<'_> {
    const KIND: Kind = Kind::Array;
    fn type_name(&self) -> &'static str {
        if self.adjustable || self.fill_pointer.is_some() { "vector" } else { "simple-vector" }
    }
    fn owned_bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<Value>()
    }
}

impl Footprint for LArray<'_> {
    const KIND: Kind = Kind::Array;
    fn type_name(&self) -> &'static str {
        "array"
    }
    fn owned_bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<Value>() + self.dims.capacity() * std::mem::size_of::<usize>()
    }
}

impl Footprint for SpecArray<'_> {
    const KIND: Kind = Kind::Array;
    fn type_name(&self) -> &'static str {
        match (&self.store, self.dims.len()) {
            (Store::Bits(_), 1) => "bit-vector",
            (Store::Bits(_), _) => "bit-array",
            (Store::Bytes(_), _) => "(unsigned-byte 8) array",
            (Store::Fixnums(_), _) => "fixnum array",
            (Store::Doubles(_), _) => "double-float array",
            (Store::Values(_), _) => "array",
            (Store::Displaced { .. }, _) => "displaced array",
        }
    }
    fn owned_bytes(&self) -> usize {
        self.store.heap_bytes() + self.dims.capacity() * std::mem::size_of::<usize>()
    }
}

impl Footprint for HashTable<'_> {
    const KIND: Kind = Kind::HashTable;
    fn type_name(&self) -> &'static str {
        "hash-table"
    }
    fn owned_bytes(&self) -> usize {
        HashTable::owned_bytes(self)
    }
}

impl Footprint for Stream<'_> {
    const KIND: Kind = Kind::Stream;
    fn type_name(&self) -> &'static str {
        "stream"
    }
    fn owned_bytes(&self) -> usize {
        self.name.capacity()
            + match &self.kind {
                StreamKind::Host { .. } => 0,
                StreamKind::StringOutput { buffer } => buffer.capacity(),
                StreamKind::StringInput { text, .. } => text.capacity() * std::mem::size_of::<char>(),
                StreamKind::Pretty(engine) => std::mem::size_of::<crate::pretty::Engine>() + engine.heap_bytes(),
                StreamKind::Bytes { bytes, .. } => bytes.capacity(),
                StreamKind::Echo { unread, .. } => unread.capacity() * std::mem::size_of::<char>(),
                StreamKind::Broadcast { streams } | StreamKind::Concatenated { streams } => {
                    streams.capacity() * std::mem::size_of::<Value<'_>>()
                }
                StreamKind::Synonym { .. } | StreamKind::TwoWay { .. } => 0,
            }
    }
}

/// A mutable borrow of a heap object that, when dropped, re-measures the
/// object and reports a change of size (see the module's invariants).
pub struct Resizing<'a, 'gc, T: Footprint> {
    mc: &'a Mutation<'gc>,
    tag: &'gc SiteTag,
    inner: Option<RefMut<'gc, T>>,
}

impl<'a, 'gc, T: Footprint> Resizing<'a, 'gc, T> {
    /// Borrow `object` mutably (the caller has passed the write barrier).
    pub(crate) fn new(mc: &'a Mutation<'gc>, object: Gc<'gc, Obj<RefLock<T>>>, inner: RefMut<'gc, T>) -> Self {
        Resizing { mc, tag: &Gc::as_ref(object).tag, inner: Some(inner) }
    }
}

impl<T: Footprint> Deref for Resizing<'_, '_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner.as_deref().expect("present until drop")
    }
}

impl<T: Footprint> DerefMut for Resizing<'_, '_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.inner.as_deref_mut().expect("present until drop")
    }
}

impl<T: Footprint> Drop for Resizing<'_, '_, T> {
    #[inline]
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else { return };
        let bytes = object_bytes::<T>(inner.owned_bytes());
        let name = inner.type_name();
        // Release the borrow first: the profiler's hooks never touch the object,
        // but nothing should run while it is mutably borrowed.
        drop(inner);
        resize_object(self.mc, self.tag, T::KIND, name, bytes);
    }
}

/// A mutable borrow of a package's symbol table that, when dropped, records the
/// package's new size: the table's two buffers plus the names it copied as keys
/// (counted as entries are added; recounted after a removal, which is rare).
/// The size is recorded when the table's capacity changes or entries are
/// removed, not at every new name: a realloc per INTERN would make the bytes
/// allocated grow with the square of the package's size.
pub struct SymbolsResizing<'a, 'gc> {
    mc: &'a Mutation<'gc>,
    package: &'gc Obj<Package<'gc>>,
    len_before: usize,
    capacity_before: usize,
    inner: Option<RefMut<'gc, SymbolTable<'gc>>>,
}

impl<'a, 'gc> SymbolsResizing<'a, 'gc> {
    pub(crate) fn new(mc: &'a Mutation<'gc>, package: Ptr<'gc, Package<'gc>>, inner: RefMut<'gc, SymbolTable<'gc>>) -> Self {
        SymbolsResizing {
            mc,
            package: Gc::as_ref(package),
            len_before: inner.len(),
            capacity_before: inner.capacity(),
            inner: Some(inner),
        }
    }
}

impl<'gc> Deref for SymbolsResizing<'_, 'gc> {
    type Target = SymbolTable<'gc>;
    fn deref(&self) -> &SymbolTable<'gc> {
        self.inner.as_deref().expect("present until drop")
    }
}

impl<'gc> DerefMut for SymbolsResizing<'_, 'gc> {
    fn deref_mut(&mut self) -> &mut SymbolTable<'gc> {
        self.inner.as_deref_mut().expect("present until drop")
    }
}

/// One entry of an IndexMap: its hash, the key and the value.
const SYMBOL_ENTRY_BYTES: usize =
    std::mem::size_of::<u64>() + std::mem::size_of::<Box<str>>() + std::mem::size_of::<(Ptr<'static, crate::value::Symbol<'static>>, bool)>();

impl Drop for SymbolsResizing<'_, '_> {
    fn drop(&mut self) {
        let Some(map) = self.inner.take() else { return };
        let p = &self.package.val;
        let len = map.len();
        if len > self.len_before {
            let added: usize = map.keys().skip(self.len_before).map(|k| k.len()).sum();
            p.key_bytes.set(p.key_bytes.get() + added);
        } else if len < self.len_before {
            p.key_bytes.set(map.keys().map(|k| k.len()).sum());
        }
        let cap = map.capacity();
        if cap == self.capacity_before && len >= self.len_before {
            return;
        }
        let owned = p.name().len() + cap * SYMBOL_ENTRY_BYTES + index_bytes(cap, std::mem::size_of::<usize>()) + p.key_bytes.get();
        drop(map);
        let total = GC_HEADER_BYTES + std::mem::size_of::<Obj<Package>>() + owned;
        resize_object(self.mc, &self.package.tag, Kind::Package, "package", total);
    }
}
