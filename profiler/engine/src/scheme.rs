//! Category schemes: the columns that break allocations down (Lisp types or C sizes).
//!
//! A scheme is data handed to the profiler, never code inside it: the profiler only
//! knows that a category is an index into `CategoryScheme::categories`, with a letter
//! for column headings and a name for documentation. Invariant: a scheme has at least
//! one category; the last category is where out-of-range category indices are counted.
//!
//! Sizes have one rule each, here, for every recorder (the monitor and libmprof): the
//! size bin of an object (`size_bin`) and the C size class of a size or of a bin.

/// Which kind of program produced a profile. It only changes wording in the report
/// (C "leak" table versus Lisp "kept" table), never the arithmetic.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Language {
    Lisp,
    C,
}

impl Language {
    /// The name used in headers, JSON and the file's documentation.
    pub fn name(self) -> &'static str {
        match self {
            Language::Lisp => "lisp",
            Language::C => "c",
        }
    }
}

/// One column of a breakdown: `letter` heads the column, `name` says what it holds.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Category {
    pub letter: char,
    pub name: String,
}

/// The ordered list of categories; a category index (`u8`) indexes this list.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct CategoryScheme {
    pub categories: Vec<Category>,
}

/// The largest object size (bytes) that has a bin of its own in the C bin table;
/// every larger size shares one "> 1024" bin, as in the paper.
pub const LARGEST_SIZE_BIN: u64 = 1024;

/// How many size bins a recorder counts in (`size_bin`).
pub const SIZE_BINS: usize = LARGEST_SIZE_BIN as usize + 3;

/// The size bin of an object of `size` bytes: the one size-bin rule. Sizes up to
/// `LARGEST_SIZE_BIN` have a bin each; above it there is one bin per C size class
/// (1025-2048 bytes, then larger), so that every bin lies within one class and the live
/// bytes of each class can be told from the bins alone. The bin table shows every bin
/// above `LARGEST_SIZE_BIN` as its one shared row (`BinKey::of_bin`).
#[inline]
pub const fn size_bin(size: u64) -> usize {
    if size <= LARGEST_SIZE_BIN {
        size as usize
    } else if size <= 2048 {
        LARGEST_SIZE_BIN as usize + 1
    } else {
        LARGEST_SIZE_BIN as usize + 2
    }
}

fn category(letter: char, name: &str) -> Category {
    Category { letter, name: name.to_string() }
}

impl CategoryScheme {
    /// The Lisp scheme of the paper: cons (c), float (f), structure/vector (s), other (o).
    pub fn lisp() -> Self {
        CategoryScheme {
            categories: vec![
                category('c', "cons"),
                category('f', "float"),
                category('s', "structure/vector"),
                category('o', "other"),
            ],
        }
    }

    /// The C scheme of the paper: small 0-32, medium 33-256, large 257-2048,
    /// extra large above 2048 bytes.
    pub fn c_sizes() -> Self {
        CategoryScheme {
            categories: vec![
                category('s', "0-32 bytes"),
                category('m', "33-256 bytes"),
                category('l', "257-2048 bytes"),
                category('x', ">2048 bytes"),
            ],
        }
    }

    /// The index in `c_sizes()` of an object of `size` bytes.
    #[inline]
    pub const fn c_category_of_size(size: u64) -> u8 {
        match size {
            0..=32 => 0,
            33..=256 => 1,
            257..=2048 => 2,
            _ => 3,
        }
    }

    /// The index in `c_sizes()` of the objects of size bin `bin` (`size_bin`).
    #[inline]
    pub const fn c_category_of_bin(bin: usize) -> u8 {
        if bin <= LARGEST_SIZE_BIN as usize + 1 { Self::c_category_of_size(bin as u64) } else { 3 }
    }

    /// Number of categories (at least 1 for every scheme this crate builds or reads).
    pub fn len(&self) -> usize {
        self.categories.len()
    }

    /// True when the scheme has no category (only possible for hand-built schemes,
    /// which the monitor and the reader reject).
    pub fn is_empty(&self) -> bool {
        self.categories.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_size_boundaries_follow_the_paper() {
        let cases = [(0, 0), (32, 0), (33, 1), (256, 1), (257, 2), (2048, 2), (2049, 3)];
        for (size, cat) in cases {
            assert_eq!(CategoryScheme::c_category_of_size(size), cat, "size {size}");
        }
        let letters: String = CategoryScheme::c_sizes().categories.iter().map(|c| c.letter).collect();
        assert_eq!(letters, "smlx");
        let letters: String = CategoryScheme::lisp().categories.iter().map(|c| c.letter).collect();
        assert_eq!(letters, "cfso");
    }

    #[test]
    fn every_size_bin_lies_in_one_size_class() {
        assert_eq!(size_bin(1024), 1024);
        assert_eq!(size_bin(1025), 1025);
        assert_eq!(size_bin(2048), 1025);
        assert_eq!(size_bin(2049), 1026);
        assert_eq!(size_bin(u64::MAX), SIZE_BINS - 1);
        for size in [0u64, 1, 32, 33, 256, 257, 1024, 1025, 2048, 2049, 1 << 40] {
            assert_eq!(
                CategoryScheme::c_category_of_bin(size_bin(size)),
                CategoryScheme::c_category_of_size(size),
                "size {size}"
            );
        }
    }
}
