//! Builtins: symbols and packages (finding, exporting, importing, using,
//! shadowing, listing), on top of `mprof_heap::packages`.
//!
//! Invariants: a package's map holds its present symbols; inherited ones are
//! reached through its use list, so `use-package` never copies symbols.
//! Name conflicts that CL reports as package errors are errors here too,
//! checked before anything is changed.

use gc_arena::Gc;
use mprof_heap::value::{Package, Ptr, Symbol};
use mprof_heap::{FindStatus, Value, alloc};

use crate::runtime::ctx::{Ctx, keyword_args, string_designator};
use crate::runtime::builtin::{BuiltinDef, MANY, cl, ext, sys};
use crate::runtime::raise::{ErrorKind, LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];
type Pkg<'gc> = Ptr<'gc, Package<'gc>>;

fn package_error<'gc>(message: String) -> Raise<'gc> {
    Raise::simple(ErrorKind::Package, message)
}

/// A package designator (package, string, symbol or character) to a package.
fn package_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Pkg<'gc>, Raise<'gc>> {
    if let Value::Package(p) = v {
        return Ok(p);
    }
    let name = string_designator(ctx, v)?;
    ctx.world
        .packages
        .find_package_from(ctx.current_package(), &name)
        .ok_or_else(|| package_error(format!("The package {name:?} does not exist.")))
}

/// The optional package argument at `i` (default: the current package).
fn opt_package<'gc>(ctx: &Ctx<'_, 'gc>, a: A<'_, 'gc>, i: usize) -> Result<Pkg<'gc>, Raise<'gc>> {
    match a.get(i) {
        None => Ok(ctx.current_package()),
        Some(&v) => package_arg(ctx, v),
    }
}

/// A symbol or a list of symbols (NIL is the symbol NIL only when given alone as a list element).
fn symbols_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Vec<Value<'gc>>, Raise<'gc>> {
    match v {
        Value::Symbol(_) => Ok(vec![v]),
        Value::Nil | Value::Cons(_) => alloc::list_to_vec(v).ok_or_else(|| ctx.type_error(v, "LIST")),
        other => Err(ctx.type_error(other, "(OR SYMBOL LIST)")),
    }
}

fn status_keyword<'gc>(ctx: &Ctx<'_, 'gc>, st: FindStatus) -> Value<'gc> {
    ctx.kw(match st {
        FindStatus::Internal => "INTERNAL",
        FindStatus::External => "EXTERNAL",
        FindStatus::Inherited => "INHERITED",
    })
}

fn same<'gc>(a: Value<'gc>, b: Value<'gc>) -> bool {
    a.eq(b)
}

fn symbol_name_of(v: Value<'_>) -> String {
    match v {
        Value::Symbol(s) => s.name.to_string(),
        _ => "NIL".to_string(),
    }
}

fn symbol_package<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    match a[0] {
        Value::Nil => Ok(Value::Package(ctx.world.packages.common_lisp)),
        Value::Symbol(s) => Ok(s.package.get().map(Value::Package).unwrap_or(Value::Nil)),
        other => Err(ctx.type_error(other, "SYMBOL")),
    }
}

fn find_symbol<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = ctx.string_arg(a[0])?;
    let p = opt_package(ctx, a, 1)?;
    match ctx.world.packages.find_symbol(p, &name) {
        Some((v, st)) => {
            let k = status_keyword(ctx, st);
            Ok(ctx.set_values(&[v, k]))
        }
        None => Ok(ctx.set_values(&[Value::Nil, Value::Nil])),
    }
}

fn find_package<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if let Value::Package(_) = a[0] {
        return Ok(a[0]);
    }
    let name = string_designator(ctx, a[0])?;
    Ok(ctx.world.packages.find_package_from(ctx.current_package(), &name).map(Value::Package).unwrap_or(Value::Nil))
}

fn package_name<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    // A deleted package has no name.
    if !registered(ctx, p) {
        return Ok(Value::Nil);
    }
    Ok(alloc::string(ctx.mc, &p.name()))
}

fn registered<'gc>(ctx: &Ctx<'_, 'gc>, p: Pkg<'gc>) -> bool {
    ctx.world.packages.by_name.borrow().values().any(|q| Gc::ptr_eq(*q, p))
}

/// (delete-package package): unregister its names; its symbols lose their home.
fn delete_package<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    if !registered(ctx, p) {
        return Ok(Value::Nil);
    }
    let pk = &ctx.world.packages;
    if [pk.common_lisp, pk.keyword, pk.user, pk.system, pk.extensions, pk.mprof].iter().any(|q| Gc::ptr_eq(*q, p)) {
        return Err(package_error(format!("The standard package {} cannot be deleted.", p.name())));
    }
    let users: Vec<String> = all_packages(ctx)
        .into_iter()
        .filter(|q| q.uses.borrow().iter().any(|u| Gc::ptr_eq(*u, p)))
        .map(|q| q.name().to_string())
        .collect();
    if !users.is_empty() {
        return Err(package_error(format!("The package {} is used by {}.", p.name(), users.join(", "))));
    }
    {
        let w = Gc::write(ctx.mc, ctx.world.packages);
        let inner = gc_arena::barrier::field!(w, mprof_heap::Obj, val);
        let mut map = gc_arena::barrier::unlock!(inner, mprof_heap::Packages, by_name).borrow_mut();
        map.retain(|_, q| !Gc::ptr_eq(*q, p));
    }
    let homed: Vec<Ptr<'gc, Symbol<'gc>>> = p
        .symbols
        .borrow()
        .values()
        .filter(|e| e.0.package.get().is_some_and(|h| Gc::ptr_eq(h, p)))
        .map(|e| e.0)
        .collect();
    for s in homed {
        alloc::symbol_set_package(ctx.mc, s, None);
    }
    Ok(ctx.t())
}

fn package_nicknames<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    let names: Vec<Value<'gc>> = p.nicknames.borrow().iter().map(|n| alloc::string(ctx.mc, n)).collect();
    Ok(alloc::list(ctx.mc, &names))
}

fn packagep<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::Package(_))))
}

/// Every package once, in creation order.
fn all_packages<'gc>(ctx: &Ctx<'_, 'gc>) -> Vec<Pkg<'gc>> {
    let mut out: Vec<Pkg<'gc>> = Vec::new();
    for p in ctx.world.packages.by_name.borrow().values() {
        if !out.iter().any(|q| Gc::ptr_eq(*q, *p)) {
            out.push(*p);
        }
    }
    out
}

fn list_all_packages<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    let ps: Vec<Value<'gc>> = all_packages(ctx).into_iter().map(Value::Package).collect();
    Ok(alloc::list(ctx.mc, &ps))
}

fn package_use_list<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    let ps: Vec<Value<'gc>> = p.uses.borrow().iter().map(|u| Value::Package(*u)).collect();
    Ok(alloc::list(ctx.mc, &ps))
}

fn package_used_by_list<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    let ps: Vec<Value<'gc>> = all_packages(ctx)
        .into_iter()
        .filter(|q| q.uses.borrow().iter().any(|u| Gc::ptr_eq(*u, p)))
        .map(Value::Package)
        .collect();
    Ok(alloc::list(ctx.mc, &ps))
}

/// (make-package name &key nicknames use)
fn make_package<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = string_designator(ctx, a[0])?;
    let k = keyword_args(ctx, &a[1..], &["NICKNAMES", "USE", "INTERNAL-SYMBOLS", "EXTERNAL-SYMBOLS"])?;
    let mut nicknames = Vec::new();
    for n in alloc::list_iter(k[0].unwrap_or(Value::Nil)) {
        nicknames.push(string_designator(ctx, n)?);
    }
    for n in std::iter::once(&name).chain(nicknames.iter()) {
        if ctx.world.packages.find_package(n).is_some() {
            return Err(package_error(format!("A package named {n:?} already exists.")));
        }
    }
    let mut uses = Vec::new();
    for u in alloc::list_iter(k[1].unwrap_or(Value::Nil)) {
        uses.push(package_arg(ctx, u)?);
    }
    let p = mprof_heap::Packages::make_package(ctx.mc, ctx.world.packages, &name, &nicknames);
    alloc::package_uses_mut(ctx.mc, p).extend(uses);
    Ok(Value::Package(p))
}

/// Whether making `sym` accessible in `p` under its name clashes with another symbol.
fn conflicts<'gc>(ctx: &Ctx<'_, 'gc>, p: Pkg<'gc>, sym: Value<'gc>) -> Option<Value<'gc>> {
    match ctx.world.packages.find_symbol(p, &symbol_name_of(sym)) {
        Some((other, _)) if !same(other, sym) => Some(other),
        _ => None,
    }
}

fn export<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let syms = symbols_arg(ctx, a[0])?;
    let p = opt_package(ctx, a, 1)?;
    let mut todo = Vec::new();
    for &s in &syms {
        let name = symbol_name_of(s);
        match ctx.world.packages.find_symbol(p, &name) {
            Some((found, _)) if same(found, s) => {}
            _ => {
                return Err(package_error(format!(
                    "The symbol {} is not accessible in the package {}.",
                    ctx.print(s, true),
                    p.name()
                )));
            }
        }
        // Exporting must not clash with symbols of the packages using this one.
        for q in all_packages(ctx) {
            if q.uses.borrow().iter().any(|u| Gc::ptr_eq(*u, p))
                && let Some(other) = conflicts(ctx, q, s)
            {
                return Err(package_error(format!(
                    "Exporting {} from {} conflicts with {} in {}.",
                    ctx.print(s, true),
                    p.name(),
                    ctx.print(other, true),
                    q.name()
                )));
            }
        }
        todo.push(s);
    }
    for s in todo {
        match s {
            Value::Symbol(sym) => ctx.world.packages.export(ctx.mc, p, sym),
            // NIL (Value::Nil) has no table entry: its presence is the package's nil_entry.
            _ if !Gc::ptr_eq(p, ctx.world.packages.common_lisp) => p.nil_entry.set(2),
            _ => {}
        }
    }
    Ok(ctx.t())
}

fn unexport<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let syms = symbols_arg(ctx, a[0])?;
    let p = opt_package(ctx, a, 1)?;
    for &s in &syms {
        if s.is_nil() && p.nil_entry.get() == 2 {
            p.nil_entry.set(1);
            continue;
        }
        let name = symbol_name_of(s);
        let mut map = alloc::package_symbols_mut(ctx.mc, p);
        if let Some(entry) = map.get_mut(name.as_str())
            && same(Value::Symbol(entry.0), s)
        {
            entry.1 = false;
        }
    }
    Ok(ctx.t())
}

fn import<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let syms = symbols_arg(ctx, a[0])?;
    let p = opt_package(ctx, a, 1)?;
    for &s in &syms {
        if !matches!(s, Value::Symbol(_) | Value::Nil) {
            return Err(ctx.type_error(s, "SYMBOL"));
        }
        // Any distinct accessible symbol of the same name conflicts, inherited ones too.
        if let Some(other) = conflicts(ctx, p, s) {
            return Err(package_error(format!(
                "Importing {} into {} conflicts with {}.",
                ctx.print(s, true),
                p.name(),
                ctx.print(other, true)
            )));
        }
    }
    for s in syms {
        make_present(ctx, p, s);
    }
    Ok(ctx.t())
}

/// Make `s` present in `p` (keeping it external if it was), homing it there if
/// it has no home package.
fn make_present<'gc>(ctx: &mut Ctx<'_, 'gc>, p: Pkg<'gc>, s: Value<'gc>) {
    match s {
        Value::Symbol(sym) => {
            ctx.world.packages.import(ctx.mc, p, sym);
            if sym.package.get().is_none() {
                alloc::symbol_set_package(ctx.mc, sym, Some(p));
            }
        }
        _ => {
            if !Gc::ptr_eq(p, ctx.world.packages.common_lisp) && p.nil_entry.get() == 0 {
                p.nil_entry.set(1);
            }
        }
    }
}

/// Remove the symbol present in `p` under `name`, if any (SHADOWING-IMPORT's
/// displacement, UNINTERN): it loses its home when `p` was it.
fn remove_present<'gc>(ctx: &mut Ctx<'_, 'gc>, p: Pkg<'gc>, name: &str) -> bool {
    if name == "NIL" && p.nil_entry.get() != 0 {
        p.nil_entry.set(0);
        return true;
    }
    let removed = alloc::package_symbols_mut(ctx.mc, p).shift_remove(name);
    match removed {
        Some((sym, _)) => {
            if sym.package.get().is_some_and(|h| Gc::ptr_eq(h, p)) {
                alloc::symbol_set_package(ctx.mc, sym, None);
            }
            true
        }
        None => false,
    }
}

/// (shadowing-import symbols &optional package): make each present, displacing
/// a present symbol of the same name, and a shadowing symbol of the package.
fn shadowing_import<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let syms = symbols_arg(ctx, a[0])?;
    let p = opt_package(ctx, a, 1)?;
    for s in syms {
        if !matches!(s, Value::Symbol(_) | Value::Nil) {
            return Err(ctx.type_error(s, "SYMBOL"));
        }
        let name = symbol_name_of(s);
        let present_already = matches!(ctx.world.packages.find_symbol(p, &name),
            Some((v, FindStatus::Internal | FindStatus::External)) if same(v, s));
        if !present_already {
            remove_present(ctx, p, &name);
            make_present(ctx, p, s);
        }
        note_shadowing(p, &name);
    }
    Ok(ctx.t())
}

fn note_shadowing(p: Pkg<'_>, name: &str) {
    let mut names = p.shadowing.borrow_mut();
    if !names.iter().any(|n| &**n == name) {
        names.push(name.into());
    }
}

/// (package-shadowing-symbols package)
fn package_shadowing_symbols<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    let names: Vec<Box<str>> = p.shadowing.borrow().clone();
    let syms: Vec<Value<'gc>> = names
        .iter()
        .filter_map(|n| match ctx.world.packages.find_symbol(p, n) {
            Some((v, FindStatus::Internal | FindStatus::External)) => Some(v),
            _ => None,
        })
        .collect();
    Ok(alloc::list(ctx.mc, &syms))
}

/// (rename-package package new-name &optional new-nicknames)
fn rename_package<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    let name = string_designator(ctx, a[1])?;
    let mut nicknames = Vec::new();
    for n in alloc::list_iter(a.get(2).copied().unwrap_or(Value::Nil)) {
        nicknames.push(string_designator(ctx, n)?);
    }
    for n in std::iter::once(&name).chain(nicknames.iter()) {
        if let Some(q) = ctx.world.packages.find_package(n)
            && !Gc::ptr_eq(q, p)
        {
            return Err(package_error(format!("Renaming {} to {name}: a package named {n:?} already exists.", p.name())));
        }
    }
    {
        let w = Gc::write(ctx.mc, ctx.world.packages);
        let inner = gc_arena::barrier::field!(w, mprof_heap::Obj, val);
        let mut map = gc_arena::barrier::unlock!(inner, mprof_heap::Packages, by_name).borrow_mut();
        map.retain(|_, q| !Gc::ptr_eq(*q, p));
        map.insert(name.clone(), p);
        for n in &nicknames {
            map.insert(n.clone(), p);
        }
    }
    p.set_name(&name);
    *p.nicknames.borrow_mut() = nicknames;
    Ok(Value::Package(p))
}

/// (find-all-symbols name): every symbol of that name present in some package.
fn find_all_symbols<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let name = string_designator(ctx, a[0])?;
    let mut out: Vec<Value<'gc>> = Vec::new();
    for p in all_packages(ctx) {
        if let Some((v, FindStatus::Internal | FindStatus::External)) = ctx.world.packages.find_symbol(p, &name)
            && !out.iter().any(|o| same(*o, v))
        {
            out.push(v);
        }
    }
    Ok(alloc::list(ctx.mc, &out))
}

/// (mprof-ext:add-package-local-nickname nickname actual &optional package), as SBCL's:
/// while PACKAGE is current, NICKNAME designates ACTUAL.
fn add_local_nickname<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let nickname = string_designator(ctx, a[0])?;
    let actual = package_arg(ctx, a[1])?;
    let p = opt_package(ctx, a, 2)?;
    if let Some(existing) = p.local_nickname(&nickname) {
        if Gc::ptr_eq(existing, actual) {
            return Ok(Value::Package(p));
        }
        return Err(package_error(format!(
            "{nickname} is already a local nickname for {} in {}.",
            existing.name(),
            p.name()
        )));
    }
    if matches!(nickname.as_str(), "COMMON-LISP" | "CL" | "KEYWORD" | "") {
        return Err(package_error(format!("{nickname:?} cannot be a package-local nickname.")));
    }
    alloc::package_local_nicknames_mut(ctx.mc, p)
        .push(mprof_heap::value::LocalNickname { nickname: nickname.into(), package: actual });
    Ok(Value::Package(p))
}

/// (mprof-ext:remove-package-local-nickname nickname &optional package): T if it was one.
fn remove_local_nickname<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let nickname = string_designator(ctx, a[0])?;
    let p = opt_package(ctx, a, 1)?;
    let mut list = alloc::package_local_nicknames_mut(ctx.mc, p);
    let before = list.len();
    list.retain(|l| &*l.nickname != nickname.as_str());
    let removed = list.len() != before;
    drop(list);
    Ok(ctx.bool(removed))
}

/// (mprof-ext:package-local-nicknames package): ((nickname . package) ...).
fn package_local_nicknames<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    let pairs: Vec<Value<'gc>> = p
        .local_nicknames
        .borrow()
        .iter()
        .map(|l| alloc::cons(ctx.mc, alloc::string(ctx.mc, &l.nickname), Value::Package(l.package)))
        .collect();
    Ok(alloc::list(ctx.mc, &pairs))
}

fn shadow<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let names = match a[0] {
        Value::Cons(_) => alloc::list_to_vec(a[0]).ok_or_else(|| ctx.type_error(a[0], "LIST"))?,
        v => vec![v],
    };
    let p = opt_package(ctx, a, 1)?;
    for n in names {
        let name = string_designator(ctx, n)?;
        note_shadowing(p, &name);
        if p.symbols.borrow().contains_key(name.as_str()) {
            continue;
        }
        let s = alloc::make_symbol(ctx.mc, &name);
        alloc::symbol_set_package(ctx.mc, s, Some(p));
        alloc::package_symbols_mut(ctx.mc, p).insert(name.into(), (s, false));
    }
    Ok(ctx.t())
}

fn unintern<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = opt_package(ctx, a, 1)?;
    let Value::Symbol(sym) = a[0] else {
        let removed = a[0].is_nil() && p.nil_entry.get() != 0;
        if removed {
            p.nil_entry.set(0);
            p.shadowing.borrow_mut().retain(|n| &**n != "NIL");
        }
        return Ok(ctx.bool(removed));
    };
    let removed = {
        let mut map = alloc::package_symbols_mut(ctx.mc, p);
        match map.get(&*sym.name) {
            Some(&(present, _)) if Gc::ptr_eq(present, sym) => {
                map.shift_remove(&*sym.name);
                true
            }
            _ => false,
        }
    };
    if removed && sym.package.get().is_some_and(|h| Gc::ptr_eq(h, p)) {
        alloc::symbol_set_package(ctx.mc, sym, None);
    }
    if removed {
        p.shadowing.borrow_mut().retain(|n| **n != *sym.name);
    }
    Ok(ctx.bool(removed))
}

fn use_package<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = opt_package(ctx, a, 1)?;
    let designators = match a[0] {
        Value::Nil | Value::Cons(_) => alloc::list_to_vec(a[0]).ok_or_else(|| ctx.type_error(a[0], "LIST"))?,
        v => vec![v],
    };
    for d in designators {
        let used = package_arg(ctx, d)?;
        if Gc::ptr_eq(used, p) || p.uses.borrow().iter().any(|u| Gc::ptr_eq(*u, used)) {
            continue;
        }
        // Each external symbol of the used package must not clash with one accessible in p.
        let externals: Vec<(Box<str>, Ptr<'gc, Symbol<'gc>>)> =
            used.symbols.borrow().iter().filter(|(_, e)| e.1).map(|(n, e)| (n.clone(), e.0)).collect();
        for (name, s) in externals {
            if let Some((other, _)) = ctx.world.packages.find_symbol(p, &name)
                && !same(other, Value::Symbol(s))
                && !p.symbols.borrow().contains_key(&*name)
            {
                return Err(package_error(format!(
                    "Using {} in {} makes {} conflict with {}.",
                    used.name(),
                    p.name(),
                    ctx.print(Value::Symbol(s), true),
                    ctx.print(other, true)
                )));
            }
        }
        alloc::package_uses_mut(ctx.mc, p).push(used);
    }
    Ok(ctx.t())
}

fn unuse_package<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = opt_package(ctx, a, 1)?;
    let designators = match a[0] {
        Value::Nil | Value::Cons(_) => alloc::list_to_vec(a[0]).ok_or_else(|| ctx.type_error(a[0], "LIST"))?,
        v => vec![v],
    };
    for d in designators {
        let used = package_arg(ctx, d)?;
        alloc::package_uses_mut(ctx.mc, p).retain(|u| !Gc::ptr_eq(*u, used));
    }
    Ok(ctx.t())
}

/// (sys:%package-symbols package external-only): the symbols `do-symbols`
/// (present and inherited) or `do-external-symbols` visits.
fn package_symbols<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let p = package_arg(ctx, a[0])?;
    // T: the external symbols; :PRESENT: those present in the package itself
    // (internal and external); NIL: every accessible symbol (inherited too).
    let present_only = matches!(a[1], Value::Symbol(s) if &*s.name == "PRESENT");
    let external_only = a[1].truthy() && !present_only;
    let mut out: Vec<Value<'gc>> =
        p.symbols.borrow().values().filter(|e| !external_only || e.1).map(|e| Value::Symbol(e.0)).collect();
    // NIL is Value::Nil, which has no entry in COMMON-LISP's map.
    if let Some((Value::Nil, status)) = ctx.world.packages.find_symbol(p, "NIL") {
        let wanted = match status {
            FindStatus::External => true,
            FindStatus::Internal => !external_only,
            FindStatus::Inherited => !external_only && !present_only,
        };
        if wanted {
            out.push(Value::Nil);
        }
    }
    if !external_only && !present_only {
        for u in p.uses.borrow().iter() {
            for (name, e) in u.symbols.borrow().iter() {
                if e.1 && !p.symbols.borrow().contains_key(name) {
                    out.push(Value::Symbol(e.0));
                }
            }
        }
    }
    Ok(alloc::list(ctx.mc, &out))
}

/// (gentemp &optional prefix package): intern a fresh name PREFIXn.
fn gentemp<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let prefix = match a.first() {
        None => "T".to_string(),
        Some(&v) => ctx.string_arg(v)?,
    };
    let p = opt_package(ctx, a, 1)?;
    let counter = ctx.world.intern_sys(ctx.mc, "*GENTEMP-COUNTER*");
    let Value::Symbol(cs) = counter else {
        return Err(Raise::error("the gentemp counter is missing"));
    };
    let mut n = match cs.value.get() {
        Value::Fixnum(n) => n,
        _ => 0,
    };
    loop {
        n += 1;
        let name = format!("{prefix}{n}");
        if ctx.world.packages.find_symbol(p, &name).is_none() {
            alloc::symbol_set_value(ctx.mc, cs, Value::Fixnum(n));
            return Ok(ctx.world.packages.intern(ctx.mc, p, &name));
        }
    }
}

/// (sys:%package-error message): signal a package error (for DEFPACKAGE).
fn signal_package_error<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Err(package_error(ctx.string_arg(a[0])?))
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("SYMBOL-PACKAGE", 1, 1, symbol_package),
    cl("FIND-SYMBOL", 1, 2, find_symbol),
    cl("FIND-PACKAGE", 1, 1, find_package),
    cl("PACKAGE-NAME", 1, 1, package_name),
    cl("PACKAGE-NICKNAMES", 1, 1, package_nicknames),
    cl("PACKAGEP", 1, 1, packagep),
    cl("LIST-ALL-PACKAGES", 0, 0, list_all_packages),
    cl("PACKAGE-USE-LIST", 1, 1, package_use_list),
    cl("PACKAGE-USED-BY-LIST", 1, 1, package_used_by_list),
    cl("MAKE-PACKAGE", 1, MANY, make_package),
    cl("EXPORT", 1, 2, export),
    cl("UNEXPORT", 1, 2, unexport),
    cl("IMPORT", 1, 2, import),
    cl("SHADOW", 1, 2, shadow),
    cl("SHADOWING-IMPORT", 1, 2, shadowing_import),
    cl("PACKAGE-SHADOWING-SYMBOLS", 1, 1, package_shadowing_symbols),
    cl("RENAME-PACKAGE", 2, 3, rename_package),
    cl("FIND-ALL-SYMBOLS", 1, 1, find_all_symbols),
    ext("ADD-PACKAGE-LOCAL-NICKNAME", 2, 3, add_local_nickname),
    ext("REMOVE-PACKAGE-LOCAL-NICKNAME", 1, 2, remove_local_nickname),
    ext("PACKAGE-LOCAL-NICKNAMES", 1, 1, package_local_nicknames),
    cl("UNINTERN", 1, 2, unintern),
    cl("USE-PACKAGE", 1, 2, use_package),
    cl("UNUSE-PACKAGE", 1, 2, unuse_package),
    cl("GENTEMP", 0, 2, gentemp),
    cl("DELETE-PACKAGE", 1, 1, delete_package),
    sys("%PACKAGE-SYMBOLS", 2, 2, package_symbols),
    sys("%PACKAGE-ERROR", 1, 1, signal_package_error),
];

#[cfg(test)]
mod tests {
    use mprof_heap::cl_symbols::{COMMON_LISP_SYMBOLS, is_common_lisp_symbol};

    use crate::builtins::table;
    use crate::runtime::builtin::Pkg;
    use crate::runtime::host::Options;
    use crate::interp::Interpreter;

    fn eval(src: &str) -> String {
        let mut lisp = Interpreter::with_io(
            Box::new(std::io::sink()),
            Box::new(std::io::sink()),
            Box::new(std::io::empty()),
            Options::default(),
        )
        .expect("the interpreter starts");
        match lisp.eval_source(src, None) {
            Ok(values) => values.join(" "),
            Err(e) => format!("error: {e}"),
        }
    }

    /// The symbols present in COMMON-LISP after start-up (the prelude has run)
    /// and after a program defined names of its own, as "NAME HOME STATUS" lines.
    const LIST_COMMON_LISP: &str = r#"
        (defun mapcar-internal (x) x) (defvar table 1) (defmacro with-gensyms () nil)
        (let ((cl (find-package "COMMON-LISP")) (lines nil))
          (dolist (s (sys::%package-symbols cl :present))
            (push (format nil "~a ~a ~a" (symbol-name s) (package-name (symbol-package s))
                          (nth-value 1 (find-symbol (symbol-name s) cl)))
                  lines))
          (format nil "~{~a~%~}" (sort lines #'string<)))"#;

    #[test]
    fn common_lisp_holds_exactly_the_standard_symbols() {
        let printed = eval(LIST_COMMON_LISP);
        let text = printed.trim_matches('"');
        let expected: String = COMMON_LISP_SYMBOLS
            .iter()
            .map(|n| format!("{n} COMMON-LISP EXTERNAL\n"))
            .collect();
        let (got, want): (Vec<&str>, Vec<&str>) =
            (text.lines().collect(), expected.lines().collect());
        let extra: Vec<&&str> = got.iter().filter(|l| !want.contains(l)).collect();
        let missing: Vec<&&str> = want.iter().filter(|l| !got.contains(l)).collect();
        assert!(
            extra.is_empty() && missing.is_empty(),
            "not standard: {extra:?}\nmissing: {missing:?}"
        );
        assert_eq!(got.len(), 978);
    }

    #[test]
    fn builtins_in_common_lisp_are_standard() {
        let strays: Vec<&str> = table()
            .iter()
            .filter(|d| d.package == Pkg::Cl && !is_common_lisp_symbol(d.name))
            .map(|d| d.name)
            .collect();
        assert!(
            strays.is_empty(),
            "builtins in COMMON-LISP with non-standard names: {strays:?}"
        );
    }

    #[test]
    fn common_lisp_user_reaches_the_extensions_and_keeps_its_own_names() {
        let out = eval(
            r#"(list (package-name (symbol-package 'var)) (package-name (symbol-package 'gc))
                     (package-name (symbol-package 'exit)) (mapcar #'package-name (package-use-list "CL-USER"))
                     (package-name (symbol-package 'mprof:report)))"#,
        );
        assert_eq!(
            out,
            r#"("COMMON-LISP-USER" "MPROF-EXT" "MPROF-EXT" ("COMMON-LISP" "MPROF-EXT" "MPROF-GRAY") "MPROF")"#
        );
    }
}
