//! The interpreter's global heap state that is not the VM: packages, the
//! well-known symbols, the standard condition types and the builtin
//! function objects. It lives in the arena root beside the VM.
//!
//! Invariant: after start-up the `World` itself is never replaced; its
//! mutable parts (packages, symbol cells) change through write barriers.

use gc_arena::{Collect, Mutation};
use mprof_heap::value::{Ptr, SYM_MACRO, StructType, Symbol, Value};
use mprof_heap::{Packages, alloc};

use crate::runtime::syms::Syms;

/// The standard condition types, by role.
#[derive(Collect, Clone, Copy)]
#[collect(no_drop)]
pub struct ConditionTypes<'gc> {
    pub condition: Ptr<'gc, StructType<'gc>>,
    pub simple_error: Ptr<'gc, StructType<'gc>>,
    pub simple_program_error: Ptr<'gc, StructType<'gc>>,
    pub simple_control_error: Ptr<'gc, StructType<'gc>>,
    pub simple_arithmetic_error: Ptr<'gc, StructType<'gc>>,
    pub simple_file_error: Ptr<'gc, StructType<'gc>>,
    pub simple_stream_error: Ptr<'gc, StructType<'gc>>,
    pub simple_package_error: Ptr<'gc, StructType<'gc>>,
    pub simple_reader_error: Ptr<'gc, StructType<'gc>>,
    pub type_error: Ptr<'gc, StructType<'gc>>,
    pub unbound_variable: Ptr<'gc, StructType<'gc>>,
    pub undefined_function: Ptr<'gc, StructType<'gc>>,
    pub division_by_zero: Ptr<'gc, StructType<'gc>>,
    pub stack_exhausted: Ptr<'gc, StructType<'gc>>,
    /// Data or code too deep or too large to handle (a tree walk's depth limit, the heap limit).
    pub simple_storage_condition: Ptr<'gc, StructType<'gc>>,
    pub interactive_interrupt: Ptr<'gc, StructType<'gc>>,
    /// `MPROF-EXT:CAPABILITY-DENIED`, a simple error: the sandbox refused a file,
    /// the environment or a process.
    pub capability_denied: Ptr<'gc, StructType<'gc>>,
}

#[derive(Collect)]
#[collect(no_drop)]
pub struct World<'gc> {
    pub packages: Ptr<'gc, Packages<'gc>>,
    pub syms: Syms<'gc>,
    pub conditions: ConditionTypes<'gc>,
    /// The property under which a symbol's structure/condition type is kept.
    pub type_key: Value<'gc>,
}

impl<'gc> World<'gc> {
    pub fn t(&self) -> Value<'gc> {
        Value::Symbol(self.packages.t)
    }

    /// The standard symbol `name` of COMMON-LISP. COMMON-LISP holds the standard's
    /// symbols and nothing else, so a name that is not one of them (a slip in
    /// the implementation) is interned in MPROF-SYSTEM instead of growing it.
    pub fn intern_cl(&self, mc: &Mutation<'gc>, name: &str) -> Value<'gc> {
        let p = &self.packages;
        match p.find_symbol(p.common_lisp, name) {
            Some((v, _)) => v,
            None => p.intern_external(mc, p.system, name),
        }
    }

    /// The value of `*read-base*` when it is a radix (2 to 36), else 10.
    pub fn read_base(&self) -> u32 {
        let p = &self.packages;
        match p.find_symbol(p.common_lisp, "*READ-BASE*") {
            Some((Value::Symbol(s), _)) => match s.value.get() {
                Value::Fixnum(b @ 2..=36) => b as u32,
                _ => 10,
            },
            _ => 10,
        }
    }

    /// The case of the current `*readtable*` (its first slot, `%CASE`; see
    /// prelude/readtable.lisp), `:upcase` if it is anything else.
    pub fn read_case(&self) -> mprof_reader::ReadCase {
        use mprof_reader::ReadCase;
        let p = &self.packages;
        let Some((Value::Symbol(s), _)) = p.find_symbol(p.common_lisp, "*READTABLE*") else { return ReadCase::Upcase };
        let Value::Struct(rt) = s.value.get() else { return ReadCase::Upcase };
        let case = rt.slots.borrow().first().copied();
        match case {
            Some(Value::Symbol(k)) => match &*k.name {
                "DOWNCASE" => ReadCase::Downcase,
                "PRESERVE" => ReadCase::Preserve,
                "INVERT" => ReadCase::Invert,
                _ => ReadCase::Upcase,
            },
            _ => ReadCase::Upcase,
        }
    }

    /// Whether the current `*readtable*` has the standard syntax (no macro
    /// character of the program's: its MACROS and DISPATCH tables, slots 1 and 2,
    /// are empty; see prelude/readtable.lisp), so the Rust reader reads as it would.
    pub fn standard_syntax(&self) -> bool {
        let p = &self.packages;
        let Some((Value::Symbol(s), _)) = p.find_symbol(p.common_lisp, "*READTABLE*") else { return true };
        let Value::Struct(rt) = s.value.get() else { return true };
        let slots = rt.slots.borrow();
        slots.iter().skip(1).take(2).all(|t| match t {
            Value::HashTable(h) => h.borrow().len() == 0,
            _ => true,
        })
    }

    /// Options for reading text the way the current `*read-base*` and `*readtable*` say.
    pub fn read_options(&self) -> mprof_reader::ReadOptions {
        mprof_reader::ReadOptions {
            read_base: self.read_base(),
            case: self.read_case(),
            suppress: self.read_suppress(),
            ..Default::default()
        }
    }

    /// Whether `*READ-SUPPRESS*` is true: every datum then reads as NIL.
    pub fn read_suppress(&self) -> bool {
        let p = &self.packages;
        matches!(p.find_symbol(p.common_lisp, "*READ-SUPPRESS*"), Some((Value::Symbol(s), _)) if !matches!(s.value.get(), Value::Nil | Value::Unbound))
    }

    pub fn intern_sys(&self, mc: &Mutation<'gc>, name: &str) -> Value<'gc> {
        self.packages.intern_external(mc, self.packages.system, name)
    }

    pub fn keyword(&self, mc: &Mutation<'gc>, name: &str) -> Value<'gc> {
        self.packages.keyword(mc, name)
    }

    /// The structure or condition type named by `name`, if any.
    pub fn find_type(&self, name: Value<'gc>) -> Option<Ptr<'gc, StructType<'gc>>> {
        let Value::Symbol(s) = name else { return None };
        let mut plist = s.plist.get();
        while let Value::Cons(c) = plist {
            let rest = c.cdr.get();
            if c.car.get().eq(self.type_key) {
                return match alloc::car(rest) {
                    Value::StructType(t) => Some(t),
                    _ => None,
                };
            }
            plist = alloc::cdr(rest);
        }
        None
    }

    /// Record `t` as the type named `name` (on the symbol's property list).
    pub fn set_type(&self, mc: &Mutation<'gc>, name: Ptr<'gc, Symbol<'gc>>, t: Ptr<'gc, StructType<'gc>>) {
        let mut plist = name.plist.get();
        while let Value::Cons(c) = plist {
            let rest = c.cdr.get();
            if c.car.get().eq(self.type_key) {
                if let Value::Cons(r) = rest {
                    alloc::set_car(mc, r, Value::StructType(t));
                }
                return;
            }
            plist = alloc::cdr(rest);
        }
        let new = alloc::cons(mc, self.type_key, alloc::cons(mc, Value::StructType(t), name.plist.get()));
        alloc::symbol_set_plist(mc, name, new);
    }
}

/// Make the standard condition hierarchy. Slots are inherited by position:
/// a subtype's slot list starts with its first parent's.
pub fn make_condition_types<'gc>(
    mc: &Mutation<'gc>,
    packages: &Packages<'gc>,
    type_key: Value<'gc>,
) -> ConditionTypes<'gc> {
    // Every name here is standard, so this finds the symbol `Packages::new` made.
    let cl = |n: &str| packages.intern_external(mc, packages.common_lisp, n);
    let sys = |n: &str| packages.intern_external(mc, packages.system, n);
    let world_set = |name: Value<'gc>, t: Ptr<'gc, StructType<'gc>>| {
        if let Value::Symbol(s) = name {
            let new = alloc::cons(mc, type_key, alloc::cons(mc, Value::StructType(t), s.plist.get()));
            alloc::symbol_set_plist(mc, s, new);
        }
    };
    // (name, supertypes in precedence order after itself, slots)
    let def = |name: Value<'gc>, supers: &[Value<'gc>], slots: &[&str]| {
        let mut prec = vec![name];
        prec.extend_from_slice(supers);
        let slots: Vec<Value<'gc>> = slots.iter().map(|s| packages.intern_external(mc, packages.system, s)).collect();
        let t = alloc::struct_type(mc, name, prec, slots, true);
        world_set(name, t);
        t
    };
    let condition = cl("CONDITION");
    let serious = cl("SERIOUS-CONDITION");
    let error = cl("ERROR");
    let warning = cl("WARNING");
    let simple_condition = cl("SIMPLE-CONDITION");
    let storage = cl("STORAGE-CONDITION");
    let t_condition = def(condition, &[], &[]);
    def(serious, &[condition], &[]);
    def(error, &[serious, condition], &[]);
    def(warning, &[condition], &[]);
    def(storage, &[serious, condition], &[]);
    let fc = ["FORMAT-CONTROL", "FORMAT-ARGUMENTS"];
    def(simple_condition, &[condition], &fc);
    let simple_error = def(cl("SIMPLE-ERROR"), &[simple_condition, error, serious, condition], &fc);
    def(cl("SIMPLE-WARNING"), &[simple_condition, warning, condition], &fc);
    def(cl("STYLE-WARNING"), &[warning, condition], &[]);
    let program_error = cl("PROGRAM-ERROR");
    def(program_error, &[error, serious, condition], &[]);
    let simple_program_error =
        def(sys("SIMPLE-PROGRAM-ERROR"), &[program_error, simple_condition, error, serious, condition], &fc);
    let control_error = cl("CONTROL-ERROR");
    def(control_error, &[error, serious, condition], &[]);
    let simple_control_error =
        def(sys("SIMPLE-CONTROL-ERROR"), &[control_error, simple_condition, error, serious, condition], &fc);
    let arithmetic_error = cl("ARITHMETIC-ERROR");
    def(arithmetic_error, &[error, serious, condition], &["OPERATION", "OPERANDS"]);
    let simple_arithmetic_error = def(
        sys("SIMPLE-ARITHMETIC-ERROR"),
        &[arithmetic_error, simple_condition, error, serious, condition],
        &["OPERATION", "OPERANDS", "FORMAT-CONTROL", "FORMAT-ARGUMENTS"],
    );
    let division_by_zero =
        def(cl("DIVISION-BY-ZERO"), &[arithmetic_error, error, serious, condition], &["OPERATION", "OPERANDS"]);
    def(cl("FLOATING-POINT-OVERFLOW"), &[arithmetic_error, error, serious, condition], &["OPERATION", "OPERANDS"]);
    let type_error = def(cl("TYPE-ERROR"), &[error, serious, condition], &["DATUM", "EXPECTED-TYPE"]);
    def(
        sys("SIMPLE-TYPE-ERROR"),
        &[type_error.name, simple_condition, error, serious, condition],
        &["DATUM", "EXPECTED-TYPE", "FORMAT-CONTROL", "FORMAT-ARGUMENTS"],
    );
    let cell_error = cl("CELL-ERROR");
    def(cell_error, &[error, serious, condition], &["NAME"]);
    let unbound_variable = def(cl("UNBOUND-VARIABLE"), &[cell_error, error, serious, condition], &["NAME"]);
    let undefined_function = def(cl("UNDEFINED-FUNCTION"), &[cell_error, error, serious, condition], &["NAME"]);
    def(cl("UNBOUND-SLOT"), &[cell_error, error, serious, condition], &["NAME"]);
    let file_error = cl("FILE-ERROR");
    def(file_error, &[error, serious, condition], &["PATHNAME"]);
    let simple_file_error = def(
        sys("SIMPLE-FILE-ERROR"),
        &[file_error, simple_condition, error, serious, condition],
        &["PATHNAME", "FORMAT-CONTROL", "FORMAT-ARGUMENTS"],
    );
    let stream_error = cl("STREAM-ERROR");
    def(stream_error, &[error, serious, condition], &["STREAM"]);
    def(cl("END-OF-FILE"), &[stream_error, error, serious, condition], &["STREAM"]);
    let simple_stream_error = def(
        sys("SIMPLE-STREAM-ERROR"),
        &[stream_error, simple_condition, error, serious, condition],
        &["STREAM", "FORMAT-CONTROL", "FORMAT-ARGUMENTS"],
    );
    let reader_error = cl("READER-ERROR");
    def(cl("PARSE-ERROR"), &[error, serious, condition], &[]);
    def(reader_error, &[cl("PARSE-ERROR"), stream_error, error, serious, condition], &["STREAM"]);
    let simple_reader_error = def(
        sys("SIMPLE-READER-ERROR"),
        &[reader_error, cl("PARSE-ERROR"), stream_error, simple_condition, error, serious, condition],
        &["STREAM", "FORMAT-CONTROL", "FORMAT-ARGUMENTS"],
    );
    let package_error = cl("PACKAGE-ERROR");
    def(package_error, &[error, serious, condition], &["PACKAGE"]);
    let simple_package_error = def(
        sys("SIMPLE-PACKAGE-ERROR"),
        &[package_error, simple_condition, error, serious, condition],
        &["PACKAGE", "FORMAT-CONTROL", "FORMAT-ARGUMENTS"],
    );
    let stack_exhausted = def(sys("STACK-EXHAUSTED"), &[storage, serious, condition], &[]);
    let simple_storage_condition =
        def(sys("SIMPLE-STORAGE-CONDITION"), &[storage, simple_condition, serious, condition], &fc);
    let interactive_interrupt = def(sys("INTERACTIVE-INTERRUPT"), &[serious, condition], &[]);
    let capability_denied = def(
        packages.intern_external(mc, packages.extensions, "CAPABILITY-DENIED"),
        &[cl("SIMPLE-ERROR"), simple_condition, error, serious, condition],
        &fc,
    );
    ConditionTypes {
        condition: t_condition,
        simple_error,
        simple_program_error,
        simple_control_error,
        simple_arithmetic_error,
        simple_file_error,
        simple_stream_error,
        simple_package_error,
        simple_reader_error,
        type_error,
        unbound_variable,
        undefined_function,
        division_by_zero,
        stack_exhausted,
        simple_storage_condition,
        interactive_interrupt,
        capability_denied,
    }
}

/// The global function named by `name` (a symbol or `(setf symbol)`), if defined.
pub(crate) fn function_of<'gc>(name: Value<'gc>) -> Option<Value<'gc>> {
    match name {
        Value::Symbol(s) => {
            let f = s.function.get();
            if matches!(f, Value::Unbound) || s.has_flag(SYM_MACRO) { None } else { Some(f) }
        }
        Value::Cons(_) => match alloc::car(alloc::cdr(name)) {
            Value::Symbol(s) => {
                let f = s.setf_function.get();
                if matches!(f, Value::Unbound) { None } else { Some(f) }
            }
            _ => None,
        },
        _ => None,
    }
}
