//! Hash tables: creation, lookup, update, removal, the table's attributes,
//! `sxhash`, and the snapshot that the prelude's `maphash` and
//! `with-hash-table-iterator` walk.
//!
//! Invariants:
//! - A table's entries are found by `equal::hash_key` under the table's test
//!   (the heap's `HashTable` stores them inline, see its invariants).
//! - Iteration follows insertion order; removing an entry moves the most
//!   recently added one into its place (O(1)), so the order after a removal is
//!   unspecified, as it is in CL.
//! - Every change goes through `alloc::borrow_mut`, so the table's growth is
//!   recorded at its real size and charged to the context that grew it.
//! - `gethash` and `sys:%puthash` never allocate Lisp objects: the hot paths
//!   of table-heavy programs must not show up in memory profiles.
//! - Iteration (`sys:%hash-table-next`) is by position and conses nothing;
//!   it tolerates the removal or update of the entry just returned, as CL
//!   allows. LOOP uses a snapshot vector instead (`sys:%hash-table-snapshot`).

use mprof_heap::value::{HashTable, HashTest, Ptr};
use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, MANY, cl, sys};
use crate::runtime::ctx::Ctx;
use crate::runtime::equal::{hash_key, same_key};
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];
type Table<'gc> = Ptr<'gc, gc_arena::RefLock<HashTable<'gc>>>;

fn table_arg<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<Table<'gc>, Raise<'gc>> {
    match v {
        Value::HashTable(h) => Ok(h),
        other => Err(ctx.type_error(other, "HASH-TABLE")),
    }
}

/// The test a `:test` argument names: a symbol or the function object of
/// `eq`, `eql`, `equal` or `equalp`.
fn test_of<'gc>(ctx: &Ctx<'_, 'gc>, v: Value<'gc>) -> Result<HashTest, Raise<'gc>> {
    let name = match v {
        Value::Symbol(s) => Some(s),
        Value::Function(f) => f.name().as_symbol(),
        _ => None,
    };
    let cl_package = ctx.world.packages.common_lisp;
    if let Some(s) = name
        && matches!(s.package.get(), Some(p) if gc_arena::Gc::ptr_eq(p, cl_package))
    {
        match &*s.name {
            "EQ" => return Ok(HashTest::Eq),
            "EQL" => return Ok(HashTest::Eql),
            "EQUAL" => return Ok(HashTest::Equal),
            "EQUALP" => return Ok(HashTest::Equalp),
            _ => {}
        }
    }
    Err(Raise::error(format!(
        "Unknown :TEST for MAKE-HASH-TABLE: {} (the tests are EQ, EQL, EQUAL and EQUALP)",
        ctx.print(v, true)
    )))
}

fn test_name(test: HashTest) -> &'static str {
    match test {
        HashTest::Eq => "EQ",
        HashTest::Eql => "EQL",
        HashTest::Equal => "EQUAL",
        HashTest::Equalp => "EQUALP",
    }
}

/// Is `k` the keyword named `name`?
fn is_keyword(v: Value<'_>, name: &str) -> bool {
    matches!(v, Value::Symbol(s) if &*s.name == name && s.package.get().is_some_and(|p| &*p.name() == "KEYWORD"))
}

/// (make-hash-table &key test size rehash-size rehash-threshold weakness synchronized)
fn make_hash_table<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    if !a.len().is_multiple_of(2) {
        return Err(Raise::program("odd number of &KEY arguments to MAKE-HASH-TABLE"));
    }
    let mut test = None;
    let mut size = 0usize;
    for pair in a.chunks(2) {
        let (k, v) = (pair[0], pair[1]);
        if is_keyword(k, "TEST") {
            // The leftmost occurrence of a keyword wins.
            if test.is_none() {
                test = Some(test_of(ctx, v)?);
            }
        } else if is_keyword(k, "SIZE") {
            size = ctx.index_arg(v)?;
        } else if !matches!(k, Value::Symbol(s) if s.package.get().is_some_and(|p| &*p.name() == "KEYWORD")) {
            return Err(Raise::program(format!("{} is not a keyword argument of MAKE-HASH-TABLE", ctx.print(k, true))));
        }
    }
    let table = alloc::hash_table(ctx.mc, test.unwrap_or(HashTest::Eql));
    if size > 0
        && let Value::HashTable(h) = table
    {
        // A size hint only reserves room; it never limits the table.
        alloc::borrow_mut(ctx.mc, h).reserve(size.min(1 << 20));
    }
    Ok(table)
}

/// (gethash key table &optional default) => value, present-p
fn gethash<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[1])?;
    let found = crate::runtime::equal::lookup(&h.borrow(), a[0]);
    match found {
        Some(v) => {
            let t = ctx.t();
            Ok(ctx.set_values(&[v, t]))
        }
        None => {
            let default = a.get(2).copied().unwrap_or(Value::Nil);
            Ok(ctx.set_values(&[default, Value::Nil]))
        }
    }
}

/// (sys:%puthash key table [default] value): the update function of
/// `(setf gethash)`; the value is always the last argument.
fn puthash<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[1])?;
    let (key, value) = (a[0], a[a.len() - 1]);
    let mut t = alloc::borrow_mut(ctx.mc, h);
    let test = t.test;
    t.insert(hash_key(test, key), key, value, |k| same_key(test, k, key));
    Ok(value)
}

/// (remhash key table) => true if there was an entry
fn remhash<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[1])?;
    let key = a[0];
    let removed = {
        let mut t = alloc::borrow_mut(ctx.mc, h);
        let test = t.test;
        t.remove(hash_key(test, key), |k| same_key(test, k, key))
    };
    Ok(ctx.bool(removed))
}

fn clrhash<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[0])?;
    alloc::borrow_mut(ctx.mc, h).clear();
    Ok(a[0])
}

fn hash_table_count<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[0])?;
    Ok(Value::Fixnum(h.borrow().len() as i64))
}

fn hash_table_p<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    Ok(ctx.bool(matches!(a[0], Value::HashTable(_))))
}

fn hash_table_test<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[0])?;
    let test = h.borrow().test;
    Ok(ctx.cl(test_name(test)))
}

/// The table's current room: at least SBCL's default of 7, and never less
/// than the number of entries.
fn hash_table_size<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[0])?;
    let t = h.borrow();
    Ok(Value::Fixnum(t.capacity().max(t.len()).max(7) as i64))
}

fn hash_table_rehash_size<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    table_arg(ctx, a[0])?;
    Ok(alloc::float(ctx.mc, 1.5))
}

fn hash_table_rehash_threshold<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    table_arg(ctx, a[0])?;
    Ok(alloc::float(ctx.mc, 1.0))
}

/// (sxhash object): a non-negative fixnum, equal for `equal` objects.
fn sxhash<'gc>(_ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    // 62 bits: a fixnum in SBCL's range too, so programs may store it anywhere.
    Ok(Value::Fixnum((hash_key(HashTest::Equal, a[0]) >> 2) as i64))
}

/// (sys:%hash-table-snapshot table) => #(k0 v0 k1 v1 ...) in iteration order.
fn hash_table_snapshot<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[0])?;
    let items = {
        let t = h.borrow();
        let mut items = Vec::with_capacity(t.len() * 2);
        for e in t.entries() {
            items.push(e.key);
            items.push(e.value);
        }
        items
    };
    Ok(alloc::vector(ctx.mc, items))
}

/// (sys:%hash-table-next table position previous-key) => next-position key
/// value, or NIL at the end. Position -1 starts; otherwise it is where
/// `previous-key` was returned. If that entry is gone (the caller removed
/// it), whatever took its place comes next, so MAPHASH may REMHASH the
/// current entry without skipping another, and no snapshot is consed.
fn hash_table_next<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let h = table_arg(ctx, a[0])?;
    let pos = match a[1] {
        Value::Fixnum(p) => p,
        other => return Err(ctx.type_error(other, "FIXNUM")),
    };
    let found = {
        let t = h.borrow();
        let entries = t.entries();
        let next = if pos < 0 {
            0
        } else {
            let i = pos as usize;
            let still_there = entries.get(i).is_some_and(|e| e.key.eq(a[2]));
            if still_there { i + 1 } else { i }
        };
        entries.get(next).map(|e| (next as i64, e.key, e.value))
    };
    match found {
        Some((p, k, v)) => Ok(ctx.set_values(&[Value::Fixnum(p), k, v])),
        None => Ok(Value::Nil),
    }
}

/// (sys:%hash-table-keys table) and (sys:%hash-table-values table): fresh lists,
/// for LOOP's `being the hash-keys/hash-values of`.
fn hash_table_keys<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    hash_table_column(ctx, a, true)
}

fn hash_table_values<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    hash_table_column(ctx, a, false)
}

fn hash_table_column<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>, keys: bool) -> LResult<'gc> {
    let h = table_arg(ctx, a[0])?;
    let items: Vec<Value<'gc>> = {
        let t = h.borrow();
        t.entries().iter().map(|e| if keys { e.key } else { e.value }).collect()
    };
    Ok(alloc::list(ctx.mc, &items))
}

pub const BUILTINS: &[BuiltinDef] = &[
    cl("MAKE-HASH-TABLE", 0, MANY, make_hash_table),
    cl("GETHASH", 2, 3, gethash),
    cl("REMHASH", 2, 2, remhash),
    cl("CLRHASH", 1, 1, clrhash),
    cl("HASH-TABLE-COUNT", 1, 1, hash_table_count),
    cl("HASH-TABLE-P", 1, 1, hash_table_p),
    cl("HASH-TABLE-TEST", 1, 1, hash_table_test),
    cl("HASH-TABLE-SIZE", 1, 1, hash_table_size),
    cl("HASH-TABLE-REHASH-SIZE", 1, 1, hash_table_rehash_size),
    cl("HASH-TABLE-REHASH-THRESHOLD", 1, 1, hash_table_rehash_threshold),
    cl("SXHASH", 1, 1, sxhash),
    sys("%PUTHASH", 3, 4, puthash),
    sys("%HASH-TABLE-SNAPSHOT", 1, 1, hash_table_snapshot),
    sys("%HASH-TABLE-NEXT", 3, 3, hash_table_next),
    sys("%HASH-TABLE-KEYS", 1, 1, hash_table_keys),
    sys("%HASH-TABLE-VALUES", 1, 1, hash_table_values),
];
