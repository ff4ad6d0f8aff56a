//! `#n=` and `#n#`: the reader reads `#n=x` as `(mprof-system:%label n x)` and
//! `#n#` as `(mprof-system:%label-ref n)` (it knows nothing of the heap); after
//! conversion to values, [`resolve`] replaces both by the object `x`, so the
//! result shares structure, or is circular, exactly as written.
//!
//! Both walks use an explicit stack and a table of visited objects, so deep
//! and circular results are fine. Only data read with labels is walked:
//! [`datum_has_labels`] decides that on the syntax first.

use std::collections::{HashMap, HashSet};

use gc_arena::{Gc, Mutation};
use mprof_heap::{Value, alloc};
use mprof_reader::{Datum, DatumKind, LABEL_SYMBOL};

use crate::runtime::raise::{ErrorKind, Raise};
use crate::runtime::world::World;

/// Whether a datum contains a `#n=` (without one, `#n#` is an error the
/// conversion reports the same way).
pub fn datum_has_labels(d: &Datum) -> bool {
    let mut stack = vec![d];
    while let Some(d) = stack.pop() {
        match &d.kind {
            DatumKind::List(items, tail) => {
                if let Some(Datum { kind: DatumKind::Symbol(s), .. }) = items.first()
                    && (s.name == LABEL_SYMBOL || s.name == mprof_reader::LABEL_REF_SYMBOL)
                {
                    return true;
                }
                stack.extend(items.iter());
                stack.extend(tail.iter().map(|t| &**t));
            }
            DatumKind::Vector(items) | DatumKind::Array(_, items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    false
}

enum Form<'gc> {
    Label(i64, Value<'gc>),
    Ref(i64),
}

fn form<'gc>(world: &World<'gc>, v: Value<'gc>) -> Option<Form<'gc>> {
    let Value::Cons(c) = v else { return None };
    let Value::Symbol(head) = c.car.get() else { return None };
    let is = |s| Gc::ptr_eq(head, s);
    let items = alloc::list_to_vec(c.cdr.get())?;
    match (items.as_slice(), is(world.syms.label), is(world.syms.label_ref)) {
        ([Value::Fixnum(n), x], true, _) => Some(Form::Label(*n, *x)),
        ([Value::Fixnum(n)], _, true) => Some(Form::Ref(*n)),
        _ => None,
    }
}

fn reader_error<'gc>(message: String) -> Raise<'gc> {
    Raise::simple(ErrorKind::Reader, message)
}

/// Replace the label forms of `v` by the objects they label.
pub fn resolve<'gc>(mc: &Mutation<'gc>, world: &World<'gc>, v: Value<'gc>) -> Result<Value<'gc>, Raise<'gc>> {
    // 1. Every definition: label -> the form it labels (possibly another label form).
    let mut defs: HashMap<i64, Value<'gc>> = HashMap::new();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        if let Some(a) = x.heap_address()
            && !seen.insert(a)
        {
            continue;
        }
        match form(world, x) {
            Some(Form::Label(n, y)) => {
                if defs.insert(n, y).is_some() {
                    return Err(reader_error(format!("the label #{n}= is defined twice")));
                }
                stack.push(y);
            }
            Some(Form::Ref(_)) => {}
            None => match x {
                Value::Cons(c) => {
                    stack.push(c.car.get());
                    stack.push(c.cdr.get());
                }
                Value::Vector(vec) => stack.extend(vec.borrow().items.iter().copied()),
                _ => {}
            },
        }
    }
    // 2. What each label stands for, following #1=#2=x and #1=#2# chains.
    let mut targets: HashMap<i64, Value<'gc>> = HashMap::new();
    for &n in defs.keys() {
        let mut y = defs[&n];
        let mut steps = 0;
        loop {
            steps += 1;
            if steps > defs.len() + 1 {
                return Err(reader_error(format!("the label #{n}= stands only for itself")));
            }
            match form(world, y) {
                Some(Form::Label(_, z)) => y = z,
                Some(Form::Ref(m)) => match defs.get(&m) {
                    Some(&z) => y = z,
                    None => return Err(reader_error(format!("#{m}# refers to no label #{m}=")))
                },
                None => break,
            }
        }
        targets.insert(n, y);
    }
    let replacement = |x: Value<'gc>| -> Result<Option<Value<'gc>>, Raise<'gc>> {
        match form(world, x) {
            Some(Form::Label(n, _)) => Ok(targets.get(&n).copied()),
            Some(Form::Ref(n)) => match targets.get(&n) {
                Some(&t) => Ok(Some(t)),
                None => Err(reader_error(format!("#{n}# refers to no label #{n}="))),
            },
            None => Ok(None),
        }
    };
    // 3. Patch every place holding a label form.
    let top = replacement(v)?.unwrap_or(v);
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack = vec![top];
    while let Some(x) = stack.pop() {
        if let Some(a) = x.heap_address()
            && !seen.insert(a)
        {
            continue;
        }
        match x {
            Value::Cons(c) => {
                for (get, is_car) in [(c.car.get(), true), (c.cdr.get(), false)] {
                    let new = replacement(get)?.unwrap_or(get);
                    if !new.eq(get) {
                        if is_car {
                            alloc::set_car(mc, c, new);
                        } else {
                            alloc::set_cdr(mc, c, new);
                        }
                    }
                    stack.push(new);
                }
            }
            Value::Vector(vec) => {
                let items: Vec<Value<'gc>> = vec.borrow().items.clone();
                for (i, item) in items.into_iter().enumerate() {
                    let new = replacement(item)?.unwrap_or(item);
                    if !new.eq(item) {
                        alloc::borrow_mut(mc, vec).items[i] = new;
                    }
                    stack.push(new);
                }
            }
            _ => {}
        }
    }
    Ok(top)
}
