//! Packages and symbol interning.
//!
//! Invariants:
//! - The symbol named "NIL" in COMMON-LISP is `Value::Nil`, which has no entry in
//!   any symbol map: it is external in COMMON-LISP, present in another package
//!   when its `nil_entry` says so (imported, exported), and inherited from either.
//!   A symbol named "NIL" in a map (a shadowing one) comes first.
//! - Keywords are constants whose value is themselves.
//! - COMMON-LISP holds exactly the standard's 978 external symbols
//!   (`cl_symbols`), made at creation; the implementation's names live in
//!   MPROF-SYSTEM (internals), MPROF-EXT (extensions programs may use, such as
//!   `gc` and `exit`; COMMON-LISP-USER uses it, as SBCL's uses SB-EXT) and MPROF.
//! - A package's symbol map holds every symbol *present* in it (with its
//!   external flag); inherited symbols are found through `uses`.

use gc_arena::{Collect, Mutation, RefLock};
use indexmap::IndexMap;

use crate::alloc;
use crate::cl_symbols::COMMON_LISP_SYMBOLS;
use crate::value::*;

/// The registry of packages and the handful every part of the system needs.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Packages<'gc> {
    /// By name and by nickname.
    pub by_name: RefLock<IndexMap<String, Ptr<'gc, Package<'gc>>>>,
    pub common_lisp: Ptr<'gc, Package<'gc>>,
    pub keyword: Ptr<'gc, Package<'gc>>,
    pub user: Ptr<'gc, Package<'gc>>,
    pub system: Ptr<'gc, Package<'gc>>,
    /// MPROF-EXT: the implementation's extensions (GC, EXIT, QUIT).
    pub extensions: Ptr<'gc, Package<'gc>>,
    pub mprof: Ptr<'gc, Package<'gc>>,
    /// The symbol T.
    pub t: Ptr<'gc, Symbol<'gc>>,
}

/// Why a symbol could not be found or made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageError {
    NoSuchPackage(String),
    NotExternal { package: String, name: String },
}

impl std::fmt::Display for PackageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackageError::NoSuchPackage(p) => write!(f, "package {p} does not exist"),
            PackageError::NotExternal { package, name } => {
                write!(f, "the symbol {name} is not external in the {package} package")
            }
        }
    }
}

impl<'gc> Packages<'gc> {
    pub fn new(mc: &Mutation<'gc>) -> Packages<'gc> {
        let common_lisp = alloc::package(mc, "COMMON-LISP");
        let keyword = alloc::package(mc, "KEYWORD");
        let user = alloc::package(mc, "COMMON-LISP-USER");
        let system = alloc::package(mc, "MPROF-SYSTEM");
        let mprof = alloc::package(mc, "MPROF");
        let extensions = alloc::package(mc, "MPROF-EXT");
        common_lisp.nicknames.borrow_mut().push("CL".into());
        user.nicknames.borrow_mut().push("CL-USER".into());
        system.nicknames.borrow_mut().push("SYS".into());
        alloc::package_uses_mut(mc, user).extend([common_lisp, extensions]);
        alloc::package_uses_mut(mc, system).extend([common_lisp, extensions]);
        alloc::package_uses_mut(mc, extensions).push(common_lisp);
        alloc::package_uses_mut(mc, mprof).push(common_lisp);
        let t = alloc::make_symbol(mc, "T");
        alloc::symbol_set_package(mc, t, Some(common_lisp));
        alloc::symbol_set_value(mc, t, Value::Symbol(t));
        t.set_flag(SYM_CONSTANT, true);
        {
            let mut cl = alloc::package_symbols_mut(mc, common_lisp);
            cl.reserve(COMMON_LISP_SYMBOLS.len());
            cl.insert("T".into(), (t, true));
            // NIL is Value::Nil, found by find_symbol without an entry.
            for name in COMMON_LISP_SYMBOLS.iter().filter(|n| !matches!(**n, "T" | "NIL")) {
                let s = alloc::make_symbol(mc, name);
                alloc::symbol_set_package(mc, s, Some(common_lisp));
                cl.insert((*name).into(), (s, true));
            }
        }
        let mut by_name = IndexMap::new();
        for p in [common_lisp, keyword, user, system, extensions, mprof] {
            by_name.insert(p.name().to_string(), p);
            for n in p.nicknames.borrow().iter() {
                by_name.insert(n.clone(), p);
            }
        }
        Packages {
            by_name: RefLock::new(by_name),
            common_lisp,
            keyword,
            user,
            system,
            extensions,
            mprof,
            t,
        }
    }

    pub fn find_package(&self, name: &str) -> Option<Ptr<'gc, Package<'gc>>> {
        self.by_name.borrow().get(name).copied()
    }

    /// The package `name` designates while `current` is the current package:
    /// one of `current`'s local nicknames first, then a global name or nickname.
    pub fn find_package_from(&self, current: Ptr<'gc, Package<'gc>>, name: &str) -> Option<Ptr<'gc, Package<'gc>>> {
        current.local_nickname(name).or_else(|| self.find_package(name))
    }

    /// Make a new package (or return the existing one of that name).
    pub fn make_package(
        mc: &Mutation<'gc>,
        this: Ptr<'gc, Packages<'gc>>,
        name: &str,
        nicknames: &[String],
    ) -> Ptr<'gc, Package<'gc>> {
        if let Some(p) = this.find_package(name) {
            return p;
        }
        let p = alloc::package(mc, name);
        p.nicknames.borrow_mut().extend(nicknames.iter().cloned());
        let w = gc_arena::Gc::write(mc, this);
        let inner = gc_arena::barrier::field!(w, crate::object::Obj, val);
        let mut map = gc_arena::barrier::unlock!(inner, Packages, by_name).borrow_mut();
        map.insert(name.to_string(), p);
        for n in nicknames {
            map.insert(n.clone(), p);
        }
        p
    }

    /// Look a name up in a package: present symbols first, then the external
    /// symbols of the packages it uses. Returns the symbol and whether it is
    /// external / inherited.
    pub fn find_symbol(
        &self,
        package: Ptr<'gc, Package<'gc>>,
        name: &str,
    ) -> Option<(Value<'gc>, FindStatus)> {
        if let Some(&(s, ext)) = package.symbols.borrow().get(name) {
            return Some((Value::Symbol(s), if ext { FindStatus::External } else { FindStatus::Internal }));
        }
        if name == "NIL" {
            if gc_arena::Gc::ptr_eq(package, self.common_lisp) {
                return Some((Value::Nil, FindStatus::External));
            }
            match package.nil_entry.get() {
                1 => return Some((Value::Nil, FindStatus::Internal)),
                2 => return Some((Value::Nil, FindStatus::External)),
                _ => {}
            }
        }
        for used in package.uses.borrow().iter() {
            if let Some(&(s, true)) = used.symbols.borrow().get(name) {
                return Some((Value::Symbol(s), FindStatus::Inherited));
            }
            if name == "NIL" && (gc_arena::Gc::ptr_eq(*used, self.common_lisp) || used.nil_entry.get() == 2) {
                return Some((Value::Nil, FindStatus::Inherited));
            }
        }
        None
    }

    /// Intern a name in a package, making a new symbol when none is accessible.
    pub fn intern(&self, mc: &Mutation<'gc>, package: Ptr<'gc, Package<'gc>>, name: &str) -> Value<'gc> {
        if let Some((v, _)) = self.find_symbol(package, name) {
            return v;
        }
        let s = alloc::make_symbol(mc, name);
        alloc::symbol_set_package(mc, s, Some(package));
        let is_keyword = gc_arena::Gc::ptr_eq(package, self.keyword);
        if is_keyword {
            alloc::symbol_set_value(mc, s, Value::Symbol(s));
            s.set_flag(SYM_CONSTANT, true);
        }
        alloc::package_symbols_mut(mc, package).insert(name.into(), (s, is_keyword));
        Value::Symbol(s)
    }

    /// Intern and export (used to build the standard packages).
    pub fn intern_external(&self, mc: &Mutation<'gc>, package: Ptr<'gc, Package<'gc>>, name: &str) -> Value<'gc> {
        let v = self.intern(mc, package, name);
        if let Value::Symbol(s) = v {
            self.export(mc, package, s);
        }
        v
    }

    /// Make a symbol external in `package`, importing it first if it is not present.
    pub fn export(&self, mc: &Mutation<'gc>, package: Ptr<'gc, Package<'gc>>, s: Ptr<'gc, Symbol<'gc>>) {
        alloc::package_symbols_mut(mc, package).insert(s.name.clone(), (s, true));
    }

    /// Make a symbol present (internal) in `package`.
    pub fn import(&self, mc: &Mutation<'gc>, package: Ptr<'gc, Package<'gc>>, s: Ptr<'gc, Symbol<'gc>>) {
        let mut map = alloc::package_symbols_mut(mc, package);
        let ext = map.get(&*s.name).map(|e| e.1).unwrap_or(false);
        map.insert(s.name.clone(), (s, ext));
    }

    pub fn keyword(&self, mc: &Mutation<'gc>, name: &str) -> Value<'gc> {
        self.intern(mc, self.keyword, name)
    }

    /// Resolve `pkg:name` (external only) or `pkg::name`, `pkg` being a
    /// package name, nickname or a local nickname of `current`.
    pub fn intern_qualified(
        &self,
        mc: &Mutation<'gc>,
        current: Ptr<'gc, Package<'gc>>,
        package_name: &str,
        name: &str,
        external_only: bool,
    ) -> Result<Value<'gc>, PackageError> {
        let package = self
            .find_package_from(current, package_name)
            .ok_or_else(|| PackageError::NoSuchPackage(package_name.to_string()))?;
        if external_only && !gc_arena::Gc::ptr_eq(package, self.keyword) {
            return match self.find_symbol(package, name) {
                Some((v, FindStatus::External)) => Ok(v),
                // Inherited externals of CL are accessible through a using package too.
                Some((v, FindStatus::Inherited)) => Ok(v),
                _ => Err(PackageError::NotExternal { package: package.name().to_string(), name: name.to_string() }),
            };
        }
        Ok(self.intern(mc, package, name))
    }
}

/// How `find_symbol` found a symbol (CL's second value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindStatus {
    Internal,
    External,
    Inherited,
}
