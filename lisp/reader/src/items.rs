//! `Items`: the elements a list, vector or array datum owns, and the one place where a
//! datum tree is taken apart.
//!
//! Derived drop glue would recurse once per nesting level, and a datum may nest as deep
//! as the reader's `max_depth` (millions of levels), far past what the Rust stack holds.
//! So `Items` owns its elements through a `Drop` that moves every element's own
//! children onto one work list before the element itself is dropped: each element then
//! drops with empty children, and the Rust stack stays a few frames deep whatever the
//! shape of the tree. Every `Datum` drop, explicit or implicit (error paths, temporaries,
//! a `Vec<Datum>` going out of scope), goes through here, because every nested datum
//! sits in some `Items`. A dotted tail (`Box<Datum>`) is taken apart the same way; the
//! parts of a `#C` complex are numbers, never containers, so they need nothing.
//!
//! `Items` dereferences to its `Vec<Datum>`, so code reads and edits it as a vector;
//! `into_vec` takes the elements out (the empty shell then drops for free).
//!
//! Invariants: dropping an `Items` uses constant Rust stack and time linear in the number
//! of datums it owns; no method recurses on the depth of the tree.
//!
//! Tests: the `tests` module below (a 1,000,000-deep tree dropped on a small thread).

use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::datum::{Datum, DatumKind};

/// The elements of a list, vector or array datum. See the module documentation.
#[derive(Default)]
pub struct Items(Vec<Datum>);

impl Items {
    /// No elements.
    pub fn new() -> Items {
        Items(Vec::new())
    }

    /// The elements, as a plain vector (whose drop still takes each element apart through
    /// the element's own `Items`).
    pub fn into_vec(mut self) -> Vec<Datum> {
        std::mem::take(&mut self.0)
    }
}

impl Drop for Items {
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.0);
        while let Some(mut datum) = pending.pop() {
            match &mut datum.kind {
                DatumKind::List(items, tail) => {
                    pending.append(&mut items.0);
                    if let Some(tail) = tail.take() {
                        pending.push(*tail);
                    }
                }
                DatumKind::Vector(items) | DatumKind::Array(_, items) => {
                    pending.append(&mut items.0)
                }
                _ => {}
            }
            // `datum` drops here with no children left.
        }
    }
}

impl From<Vec<Datum>> for Items {
    fn from(items: Vec<Datum>) -> Items {
        Items(items)
    }
}

impl FromIterator<Datum> for Items {
    fn from_iter<I: IntoIterator<Item = Datum>>(iter: I) -> Items {
        Items(iter.into_iter().collect())
    }
}

impl Deref for Items {
    type Target = Vec<Datum>;
    fn deref(&self) -> &Vec<Datum> {
        &self.0
    }
}

impl DerefMut for Items {
    fn deref_mut(&mut self) -> &mut Vec<Datum> {
        &mut self.0
    }
}

impl IntoIterator for Items {
    type Item = Datum;
    type IntoIter = std::vec::IntoIter<Datum>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a Items {
    type Item = &'a Datum;
    type IntoIter = std::slice::Iter<'a, Datum>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Debug for Items {
    /// The elements' `Debug`, which prints each as text without recursing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datum::Span;

    fn deep(levels: usize, vector_every: usize) -> Datum {
        let mut datum = Datum::new(DatumKind::Integer(1), Span::default());
        for level in 0..levels {
            let items = Items::from(vec![datum]);
            let kind = if vector_every > 0 && level % vector_every == 0 {
                DatumKind::Vector(items)
            } else if level % 2 == 0 {
                // A dotted tail holding a vector, so tails are taken apart too.
                let tail = Datum::new(DatumKind::Vector(Items::new()), Span::default());
                DatumKind::List(items, Some(Box::new(tail)))
            } else {
                DatumKind::List(items, None)
            };
            datum = Datum::new(kind, Span::default());
        }
        datum
    }

    #[test]
    fn a_million_levels_drop_on_a_small_stack() {
        // 256 KiB of stack: derived drop glue would need hundreds of bytes per level.
        let worker = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                drop(deep(1_000_000, 7));
                let as_vec = match deep(1_000_000, 0).kind {
                    DatumKind::List(items, _) => items.into_vec(),
                    _ => Vec::new(),
                };
                as_vec.len()
            })
            .expect("spawn a test thread");
        assert_eq!(worker.join().expect("the drops did not overflow"), 1);
    }
}
