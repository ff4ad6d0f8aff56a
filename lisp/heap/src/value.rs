//! The value representation: one 16-byte [`Value`] enum whose immediates are
//! fixnums and characters and whose other variants point to [`Obj`] heap
//! objects made by `alloc_object`.
//!
//! Invariants:
//! - `Value` is `Copy` and 16 bytes (a test pins it).
//! - `Value::Nil` is the symbol NIL and the empty list; there is no NIL symbol object.
//! - `Value::Unbound` never escapes to Lisp code: it marks an unbound variable,
//!   an undefined function cell or a missing optional argument.
//! - Identity (`eq`) of heap values is pointer identity (`Gc::ptr_eq`), never
//!   `Gc`'s content comparison.

use std::cell::{Cell, RefCell};

use gc_arena::{Collect, Gc, Lock, RefLock};
use indexmap::IndexMap;
use num_bigint::BigInt;

use crate::code::Proto;
use crate::object::{ConsMark, Obj};
use crate::packed::ConsField;
pub use crate::spec::SpecArray;

/// A pointer to a heap object.
pub type Ptr<'gc, T> = Gc<'gc, Obj<T>>;

/// A Lisp value.
#[derive(Copy, Clone, Collect)]
#[collect(no_drop)]
// A defined layout (the same as Rust's own choice for this enum, measured no
// slower; `repr(u8)` was 5% slower) that `packed::Word` copies to and from:
// keep the variants in this order.
#[repr(u32)]
pub enum Value<'gc> {
    Nil,
    /// Internal marker; see the module invariants.
    Unbound,
    Fixnum(i64),
    Char(char),
    Cons(Gc<'gc, Cons<'gc>>),
    Float(Ptr<'gc, f64>),
    Symbol(Ptr<'gc, Symbol<'gc>>),
    String(Ptr<'gc, RefLock<LString>>),
    Vector(Ptr<'gc, RefLock<LVector<'gc>>>),
    Array(Ptr<'gc, RefLock<LArray<'gc>>>),
    /// A specialized (unboxed) or displaced array of any rank (`crate::spec`).
    SpecArray(Ptr<'gc, RefLock<SpecArray<'gc>>>),
    /// A complex number (never a rational one with a zero imaginary part).
    Complex(Ptr<'gc, Complex<'gc>>),
    BigInt(Ptr<'gc, Big>),
    Ratio(Ptr<'gc, Ratio>),
    Function(Ptr<'gc, Function<'gc>>),
    Struct(Ptr<'gc, Structure<'gc>>),
    HashTable(Ptr<'gc, RefLock<HashTable<'gc>>>),
    Package(Ptr<'gc, Package<'gc>>),
    Stream(Ptr<'gc, RefLock<Stream<'gc>>>),
    RandomState(Ptr<'gc, RandomState>),
    /// A structure or condition type descriptor.
    StructType(Ptr<'gc, StructType<'gc>>),
    /// Internal: a mutable variable captured by a closure.
    Cell(Ptr<'gc, Lock<Value<'gc>>>),
    /// Internal: compiled code, a constant of the enclosing function.
    Proto(Ptr<'gc, Proto<'gc>>),
}

impl<'gc> Value<'gc> {
    pub fn is_nil(self) -> bool {
        matches!(self, Value::Nil)
    }

    pub fn truthy(self) -> bool {
        !matches!(self, Value::Nil)
    }

    pub fn bool(b: bool, t: Value<'gc>) -> Value<'gc> {
        if b { t } else { Value::Nil }
    }

    pub fn as_cons(self) -> Option<Gc<'gc, Cons<'gc>>> {
        match self {
            Value::Cons(c) => Some(c),
            _ => None,
        }
    }

    pub fn as_symbol(self) -> Option<Ptr<'gc, Symbol<'gc>>> {
        match self {
            Value::Symbol(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_list(self) -> bool {
        matches!(self, Value::Nil | Value::Cons(_))
    }

    /// The `eq` identity: immediates by value, heap objects by address. Named after
    /// Lisp's EQ on purpose; `PartialEq` would suggest EQL or EQUAL.
    #[allow(clippy::should_implement_trait)]
    pub fn eq(self, other: Value<'gc>) -> bool {
        use Value::*;
        match (self, other) {
            (Nil, Nil) | (Unbound, Unbound) => true,
            (Fixnum(a), Fixnum(b)) => a == b,
            (Char(a), Char(b)) => a == b,
            _ => match (self.heap_address(), other.heap_address()) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
        }
    }

    /// The address of a heap object, for identity and EQ hashing.
    /// gc-arena never moves objects, so the address is stable for its lifetime.
    pub fn heap_address(self) -> Option<usize> {
        use Value::*;
        Some(match self {
            Nil | Unbound | Fixnum(_) | Char(_) => return None,
            Cons(p) => Gc::as_ptr(p) as usize,
            Float(p) => Gc::as_ptr(p) as usize,
            Symbol(p) => Gc::as_ptr(p) as usize,
            String(p) => Gc::as_ptr(p) as usize,
            Vector(p) => Gc::as_ptr(p) as usize,
            Array(p) => Gc::as_ptr(p) as usize,
            SpecArray(p) => Gc::as_ptr(p) as usize,
            Complex(p) => Gc::as_ptr(p) as usize,
            BigInt(p) => Gc::as_ptr(p) as usize,
            Ratio(p) => Gc::as_ptr(p) as usize,
            Function(p) => Gc::as_ptr(p) as usize,
            Struct(p) => Gc::as_ptr(p) as usize,
            HashTable(p) => Gc::as_ptr(p) as usize,
            Package(p) => Gc::as_ptr(p) as usize,
            Stream(p) => Gc::as_ptr(p) as usize,
            RandomState(p) => Gc::as_ptr(p) as usize,
            StructType(p) => Gc::as_ptr(p) as usize,
            Cell(p) => Gc::as_ptr(p) as usize,
            Proto(p) => Gc::as_ptr(p) as usize,
        })
    }
}

/// A cons cell: gc-arena's header and two [`ConsField`]s (each one packed
/// word), 32 bytes in all (48 with the feature `wide-conses`).
/// Unlike every other heap object it carries no [`SiteTag`]: conses are most
/// of a Lisp heap, and the tag's 8 bytes would cost a cons a quarter more. Its
/// [`ConsMark`] does the tag's work from the cons's address.
///
/// [`SiteTag`]: crate::object::SiteTag
#[derive(Collect)]
#[collect(no_drop)]
#[repr(C)]
pub struct Cons<'gc> {
    /// First, so its address is the cons's own.
    #[collect(require_static)]
    pub mark: ConsMark,
    pub car: ConsField<'gc>,
    pub cdr: ConsField<'gc>,
}

/// Symbol flag: proclaimed special (dynamic).
pub const SYM_SPECIAL: u8 = 1;
/// Symbol flag: a constant (defconstant, keywords, T).
pub const SYM_CONSTANT: u8 = 2;
/// Symbol flag: the function cell holds a macro expander.
pub const SYM_MACRO: u8 = 4;
/// Symbol flag: names a special operator.
pub const SYM_SPECIAL_OPERATOR: u8 = 8;

/// A symbol. Values live in the symbol (shallow binding): a dynamic binding
/// saves the old value on the VM's dynamic stack.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Symbol<'gc> {
    #[collect(require_static)]
    pub name: Box<str>,
    pub package: Lock<Option<Ptr<'gc, Package<'gc>>>>,
    pub value: Lock<Value<'gc>>,
    pub function: Lock<Value<'gc>>,
    pub plist: Lock<Value<'gc>>,
    #[collect(require_static)]
    pub flags: Cell<u8>,
    /// The setf expander name for (setf NAME) functions: the function cell of (SETF NAME).
    pub setf_function: Lock<Value<'gc>>,
}

impl<'gc> Symbol<'gc> {
    pub fn has_flag(&self, flag: u8) -> bool {
        self.flags.get() & flag != 0
    }
    pub fn set_flag(&self, flag: u8, on: bool) {
        let f = self.flags.get();
        self.flags.set(if on { f | flag } else { f & !flag });
    }
}

/// A string: a vector of characters (category s), optionally with a fill pointer.
#[derive(Clone, Debug, Default)]
pub struct LString {
    pub chars: Vec<char>,
    pub fill_pointer: Option<usize>,
    pub adjustable: bool,
}

impl LString {
    pub fn new(s: &str) -> Self {
        LString { chars: s.chars().collect(), fill_pointer: None, adjustable: false }
    }
    /// The active characters (up to the fill pointer).
    pub fn active(&self) -> &[char] {
        match self.fill_pointer {
            Some(fp) => &self.chars[..fp.min(self.chars.len())],
            None => &self.chars,
        }
    }
    pub fn to_rust_string(&self) -> String {
        self.active().iter().collect()
    }
}

// SAFETY-free: LString owns no Gc pointers.
gc_arena::static_collect!(LString);

/// A one-dimensional general vector.
#[derive(Collect)]
#[collect(no_drop)]
pub struct LVector<'gc> {
    pub items: Vec<Value<'gc>>,
    #[collect(require_static)]
    pub fill_pointer: Option<usize>,
    #[collect(require_static)]
    pub adjustable: bool,
    /// The declared element type, as a symbol (T when none was given).
    pub element_type: Value<'gc>,
}

impl<'gc> LVector<'gc> {
    pub fn active(&self) -> &[Value<'gc>] {
        match self.fill_pointer {
            Some(fp) => &self.items[..fp.min(self.items.len())],
            None => &self.items,
        }
    }
}

/// An array of rank other than one, stored in row-major order.
#[derive(Collect)]
#[collect(no_drop)]
pub struct LArray<'gc> {
    #[collect(require_static)]
    pub dims: Vec<usize>,
    pub items: Vec<Value<'gc>>,
    pub element_type: Value<'gc>,
    /// Made with `:adjustable t` (`adjust-array` then changes it in place).
    #[collect(require_static)]
    pub adjustable: bool,
}

/// A bignum: an integer outside the fixnum range.
#[derive(Collect, Debug)]
#[collect(require_static)]
pub struct Big(pub BigInt);

/// An exact ratio in lowest terms with a positive denominator greater than one.
#[derive(Collect, Debug, Clone)]
#[collect(require_static)]
pub struct Ratio {
    pub num: BigInt,
    pub den: BigInt,
}

/// A complex number. Its parts are both doubles or both rationals; a rational
/// complex never has a zero imaginary part (it would be that rational).
#[derive(Collect, Clone, Copy, Debug)]
#[collect(no_drop)]
pub enum Complex<'gc> {
    /// Real and imaginary parts stored unboxed.
    Double(#[collect(require_static)] f64, #[collect(require_static)] f64),
    /// Real and imaginary parts: fixnums, bignums or ratios.
    Rational(Value<'gc>, Value<'gc>),
}

/// A function object.
#[derive(Collect)]
#[collect(no_drop)]
pub enum Function<'gc> {
    Closure(Closure<'gc>),
    Builtin(Builtin<'gc>),
}

impl<'gc> Function<'gc> {
    /// The function's name (a symbol, a `(SETF name)` list, or NIL for anonymous ones).
    pub fn name(&self) -> Value<'gc> {
        match self {
            Function::Closure(c) => c.proto.name,
            Function::Builtin(b) => b.name,
        }
    }
}

/// A compiled Lisp function with the variables it captured.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Closure<'gc> {
    pub proto: Ptr<'gc, Proto<'gc>>,
    pub captured: Box<[Value<'gc>]>,
}

/// A function written in Rust; `id` indexes the evaluator's builtin table.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Builtin<'gc> {
    pub name: Value<'gc>,
    #[collect(require_static)]
    pub id: u32,
}

/// A structure (or condition) instance.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Structure<'gc> {
    /// The type; CLOS's CHANGE-CLASS replaces it (`alloc::struct_set_type`).
    pub stype: Lock<Ptr<'gc, StructType<'gc>>>,
    pub slots: RefLock<Vec<Value<'gc>>>,
}

impl<'gc> Structure<'gc> {
    /// The structure's type.
    pub fn stype(&self) -> Ptr<'gc, StructType<'gc>> {
        self.stype.get()
    }
}

/// A structure or condition type: its name, its supertypes and its slots.
#[derive(Collect)]
#[collect(no_drop)]
pub struct StructType<'gc> {
    pub name: Value<'gc>,
    /// This type's name followed by every supertype's name, most specific first.
    pub precedence: RefLock<Vec<Value<'gc>>>,
    /// Slot names (symbols), in storage order.
    pub slot_names: RefLock<Vec<Value<'gc>>>,
    #[collect(require_static)]
    pub is_condition: bool,
    /// For conditions: the :report function or string (NIL when none).
    pub report: Lock<Value<'gc>>,
    /// Extra per-type data the evaluator keeps (e.g. slot initforms, readers).
    pub extra: Lock<Value<'gc>>,
}

/// The four hash table tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashTest {
    Eq,
    Eql,
    Equal,
    Equalp,
}

pub use crate::hash_table::{HashEntry, HashTable};

/// A package's symbols by name, each with whether it is external.
pub type SymbolTable<'gc> = IndexMap<Box<str>, (Ptr<'gc, Symbol<'gc>>, bool)>;

/// A package: a name space of symbols.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Package<'gc> {
    /// Its name (RENAME-PACKAGE changes it); read it with [`Package::name`].
    #[collect(require_static)]
    name: RefCell<std::rc::Rc<str>>,
    #[collect(require_static)]
    pub nicknames: RefCell<Vec<String>>,
    /// Every symbol accessible as present in this package, with whether it is external.
    pub symbols: RefLock<SymbolTable<'gc>>,
    pub uses: RefLock<Vec<Ptr<'gc, Package<'gc>>>>,
    /// The bytes of the symbol table's keys (each an owned copy of a name), kept
    /// by `footprint::SymbolsResizing` so the package's size is known in O(1).
    #[collect(require_static)]
    pub key_bytes: Cell<usize>,
    /// Whether the symbol NIL (which is `Value::Nil`, not a table entry) is present
    /// in this package, imported: 0 no, 1 internal, 2 external. COMMON-LISP's NIL
    /// is external there without an entry.
    #[collect(require_static)]
    pub nil_entry: Cell<u8>,
    /// The names of its shadowing symbols (PACKAGE-SHADOWING-SYMBOLS).
    #[collect(require_static)]
    pub shadowing: RefCell<Vec<Box<str>>>,
    /// Package-local nicknames: names that designate another package while this
    /// one is current.
    pub local_nicknames: RefLock<Vec<LocalNickname<'gc>>>,
}

/// A package-local nickname (`:local-nicknames` of DEFPACKAGE).
#[derive(Collect, Clone)]
#[collect(no_drop)]
pub struct LocalNickname<'gc> {
    #[collect(require_static)]
    pub nickname: Box<str>,
    pub package: Ptr<'gc, Package<'gc>>,
}

impl<'gc> Package<'gc> {
    /// A new package of this name, with no symbols.
    pub fn new(name: &str) -> Package<'gc> {
        Package {
            name: RefCell::new(std::rc::Rc::from(name)),
            nicknames: Default::default(),
            symbols: RefLock::new(Default::default()),
            uses: RefLock::new(Vec::new()),
            key_bytes: Cell::new(0),
            nil_entry: Cell::new(0),
            shadowing: RefCell::new(Vec::new()),
            local_nicknames: RefLock::new(Vec::new()),
        }
    }

    /// Its current name.
    pub fn name(&self) -> std::rc::Rc<str> {
        self.name.borrow().clone()
    }

    /// Give it another name (RENAME-PACKAGE; the registry is updated by the caller).
    pub fn set_name(&self, name: &str) {
        *self.name.borrow_mut() = std::rc::Rc::from(name);
    }

    /// The package a local nickname of this one designates.
    pub fn local_nickname(&self, name: &str) -> Option<Ptr<'gc, Package<'gc>>> {
        self.local_nicknames.borrow().iter().find(|l| &*l.nickname == name).map(|l| l.package)
    }
}

/// A stream's data. Streams that reach the host (standard output, files) hold
/// an index into the evaluator's table of host channels, not a Rust handle.
/// Composite streams (synonym, two-way, echo, broadcast, concatenated) hold
/// their component streams (or, for a synonym stream, its symbol) as values;
/// a component may be any stream, a Gray stream (a CLOS instance) included.
#[derive(Collect, Debug)]
#[collect(no_drop)]
pub enum StreamKind<'gc> {
    /// A host channel: 0 standard input, 1 standard output, 2 standard error,
    /// others files (`written`: bytes written so far, for `file-position`;
    /// `fresh`: OPEN made the file, so `close :abort t` deletes it).
    Host {
        #[collect(require_static)]
        channel: u32,
        #[collect(require_static)]
        input: bool,
        #[collect(require_static)]
        output: bool,
        #[collect(require_static)]
        written: u64,
        #[collect(require_static)]
        fresh: bool,
    },
    StringOutput {
        #[collect(require_static)]
        buffer: String,
    },
    /// A string input stream, or a character file read whole (`file`).
    StringInput {
        #[collect(require_static)]
        text: Vec<char>,
        #[collect(require_static)]
        pos: usize,
        #[collect(require_static)]
        file: bool,
    },
    /// A pretty-printing stream: its layout engine. The text it decides goes
    /// to a target stream the evaluator keeps (a stream holds no values).
    Pretty(#[collect(require_static)] Box<crate::pretty::Engine>),
    /// A file held in memory: read whole when opened (binary input, and
    /// `:direction :io`), written back to the file at `finish-output` and
    /// `close` when `dirty`. Character streams keep UTF-8 here; `pos` counts
    /// bytes.
    Bytes {
        /// OPEN made the file (see `Host`).
        #[collect(require_static)]
        fresh: bool,
        #[collect(require_static)]
        bytes: Vec<u8>,
        #[collect(require_static)]
        pos: usize,
        #[collect(require_static)]
        input: bool,
        #[collect(require_static)]
        output: bool,
        #[collect(require_static)]
        dirty: bool,
    },
    /// `make-synonym-stream`: every operation goes to the symbol's current value.
    Synonym { symbol: Value<'gc> },
    /// `make-two-way-stream`: input from one stream, output to another.
    TwoWay { input: Value<'gc>, output: Value<'gc> },
    /// `make-echo-stream`: input from one stream, echoed to the output
    /// stream; characters given back with `unread-char` are read again
    /// from `unread` (last in, first out) without a second echo.
    Echo {
        input: Value<'gc>,
        output: Value<'gc>,
        #[collect(require_static)]
        unread: Vec<char>,
    },
    /// `make-broadcast-stream`: output to every component, in order.
    Broadcast { streams: Vec<Value<'gc>> },
    /// `make-concatenated-stream`: the components not yet read to their end.
    Concatenated { streams: Vec<Value<'gc>> },
}

impl StreamKind<'_> {
    /// Whether this is a composite stream (its data are other streams).
    pub fn is_composite(&self) -> bool {
        matches!(
            self,
            StreamKind::Synonym { .. }
                | StreamKind::TwoWay { .. }
                | StreamKind::Echo { .. }
                | StreamKind::Broadcast { .. }
                | StreamKind::Concatenated { .. }
        )
    }
}

/// What a stream's elements are (`stream-element-type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    Character,
    /// `(unsigned-byte n)`: `bytes()` bytes each, little-endian.
    Unsigned(u16),
    /// `(signed-byte n)`: `bytes()` bytes each, little-endian two's complement.
    Signed(u16),
}

impl Element {
    /// The bytes an element takes in a file (1 for characters' bytes).
    pub fn bytes(self) -> usize {
        match self {
            Element::Character => 1,
            Element::Unsigned(n) | Element::Signed(n) => usize::from(n).div_ceil(8).max(1),
        }
    }
}

/// The column of a stream whose column is not known (a Gray stream's
/// `stream-line-column` said NIL): FORMAT's `~T` then writes two spaces and
/// `~&` a newline, as SBCL does; the first newline makes it known again.
pub const UNKNOWN_COLUMN: usize = usize::MAX;

/// A stream: its data plus the column (for `fresh-line` and `~&`) and whether it is open.
#[derive(Collect, Debug)]
#[collect(no_drop)]
pub struct Stream<'gc> {
    pub kind: StreamKind<'gc>,
    #[collect(require_static)]
    pub column: usize,
    #[collect(require_static)]
    pub open: bool,
    /// The name shown when printed: a file name, "*STANDARD-OUTPUT*"...
    #[collect(require_static)]
    pub name: String,
    #[collect(require_static)]
    pub element: Element,
}

/// A random state (xorshift64*).
#[derive(Collect, Debug)]
#[collect(require_static)]
pub struct RandomState {
    pub state: Cell<u64>,
}

impl std::fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Nil => write!(f, "NIL"),
            Value::Unbound => write!(f, "#<unbound>"),
            Value::Fixnum(i) => write!(f, "{i}"),
            Value::Char(c) => write!(f, "#\\{c}"),
            Value::Symbol(s) => write!(f, "{}", s.name),
            Value::Float(x) => write!(f, "{}", x.val),
            other => write!(f, "#<object {:x}>", other.heap_address().unwrap_or(0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_two_words() {
        assert_eq!(std::mem::size_of::<Value<'static>>(), 16);
    }

    #[test]
    fn a_cons_object_is_two_fields() {
        // No tag: the mark is a zero-sized type.
        let field = if cfg!(feature = "wide-conses") { 16 } else { 8 };
        assert_eq!(std::mem::size_of::<Cons<'static>>(), 2 * field);
        assert_eq!(crate::object::CONS_BYTES, 16 + 2 * field);
        assert_eq!(crate::object::PROFILED_CONS_BYTES, crate::object::CONS_BYTES + 8);
    }
}
