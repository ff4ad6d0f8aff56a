//! What each object that owns a growable buffer really takes, and the write
//! guard that keeps its recorded size true as it grows and shrinks.
//!
//! Invariants:
//! - For every type implementing [`Footprint`], the size recorded in an
//!   object's tag is `object_bytes::<T>(value.owned_bytes())`: the
//!   constructors in `alloc` allocate with it, and [`Resizing`] re-measures it
//!   whenever the object was borrowed mutably, reporting any change through
//!   `resize_object` (a realloc to the profiler, charged to the current
//!   context).
//! - `owned_bytes` is O(1): it reads buffer capacities, never walks elements,
//!   because it runs on every mutable borrow.

use std::cell::RefMut;
use std::ops::{Deref, DerefMut};

use gc_arena::{Gc, Mutation, RefLock};

use crate::object::{Category, GC_HEADER_BYTES, Obj, SiteTag, resize_object};
use crate::value::{HashTable, LArray, LString, LVector, Stream, StreamKind, Value};

/// A heap object type that owns memory out of line.
pub trait Footprint {
    /// The profiler category of every object of this type.
    const CATEGORY: Category;
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
    const CATEGORY: Category = Category::StructureVector;
    fn type_name(&self) -> &'static str {
        "string"
    }
    fn owned_bytes(&self) -> usize {
        self.chars.capacity() * std::mem::size_of::<char>()
    }
}

impl Footprint for LVector<'_> {
    const CATEGORY: Category = Category::StructureVector;
    fn type_name(&self) -> &'static str {
        if self.adjustable || self.fill_pointer.is_some() { "vector" } else { "simple-vector" }
    }
    fn owned_bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<Value>()
    }
}

impl Footprint for LArray<'_> {
    const CATEGORY: Category = Category::StructureVector;
    fn type_name(&self) -> &'static str {
        "array"
    }
    fn owned_bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<Value>() + self.dims.capacity() * std::mem::size_of::<usize>()
    }
}

impl Footprint for HashTable<'_> {
    const CATEGORY: Category = Category::Other;
    fn type_name(&self) -> &'static str {
        "hash-table"
    }
    fn owned_bytes(&self) -> usize {
        HashTable::owned_bytes(self)
    }
}

impl Footprint for Stream {
    const CATEGORY: Category = Category::Other;
    fn type_name(&self) -> &'static str {
        "stream"
    }
    fn owned_bytes(&self) -> usize {
        self.name.capacity()
            + match &self.kind {
                StreamKind::Host { .. } => 0,
                StreamKind::StringOutput { buffer } => buffer.capacity(),
                StreamKind::StringInput { text, .. } => text.capacity() * std::mem::size_of::<char>(),
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
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else { return };
        let bytes = object_bytes::<T>(inner.owned_bytes());
        let name = inner.type_name();
        // Release the borrow first: the profiler's hooks never touch the object,
        // but nothing should run while it is mutably borrowed.
        drop(inner);
        resize_object(self.mc, self.tag, T::CATEGORY, name, bytes);
    }
}
