//! The printer fuzz harness, shared by the cargo-fuzz target
//! (`fuzz_targets/print.rs`) and the corpus replay test in `cargo test`
//! (`src/printer/tests.rs`).
//!
//! The input is a little program building a graph of values — atoms, conses,
//! vectors, arrays, structures, uninterned symbols, and mutations that make it
//! shared or circular — then settings for one print. Checked for every input:
//! printing ends (with `*print-circle*`, or a sink that stops at a byte
//! budget), the Rust stack never grows with the data (the graph may be deep),
//! every `#n#` follows its `#n=`, and, escaping without limits or circularity
//! labels, what was printed reads back.

use gc_arena::{Arena, Mutation, Rootable};
use mprof_heap::alloc;
use mprof_heap::printer::{Case, PrintContext, Settings, Sink, Stop, print_into};
use mprof_heap::{Packages, Value};

/// Output allowed before a print of possibly circular data is cut off.
const BUDGET: usize = 1 << 20;

struct Budget {
    text: String,
}

impl Sink for Budget {
    fn write(&mut self, t: &str) -> Result<(), String> {
        if self.text.len() + t.len() > BUDGET {
            return Err("budget".into());
        }
        self.text.push_str(t);
        Ok(())
    }
}

/// Build a graph from `data` and print it; panics when a property fails.
pub fn run(data: &[u8]) {
    let arena: Arena<Rootable![()]> = Arena::new(|_| ());
    arena.mutate(|mc, _| check(mc, &Packages::new(mc), data));
}

fn check<'gc>(mc: &Mutation<'gc>, p: &Packages<'gc>, data: &[u8]) {
    let (settings_bytes, program) = data.split_at(data.len().min(4));
    let mut nodes: Vec<Value<'gc>> = vec![Value::Nil];
    let mut circular = false;
    let mut unreadable = false;
    let stype = alloc::struct_type(mc, p.intern(mc, p.user, "S"), vec![], vec![p.intern(mc, p.user, "A"), p.intern(mc, p.user, "B")], false);
    let mut bytes = program.iter().copied();
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0) as usize;
        let pick = |nodes: &Vec<Value<'gc>>, k: usize| nodes[nodes.len() - 1 - k % nodes.len()];
        let v = match op % 12 {
            0 => Value::Fixnum(arg as i64 - 100),
            1 => p.intern(mc, p.user, ["FOO", "bar", "1+", "A B", "", "|", "NIL-X"][arg % 7]),
            2 => alloc::string(mc, ["", "a\"b", "x\\y", "plain"][arg % 4]),
            3 => Value::Char(char::from(arg as u8)),
            4 | 5 => {
                let (a, b) = (pick(&nodes, arg), pick(&nodes, arg / 16));
                alloc::cons(mc, a, b)
            }
            6 => {
                let items: Vec<Value<'gc>> = (0..arg % 5).map(|k| pick(&nodes, arg + k)).collect();
                alloc::vector(mc, items)
            }
            7 => {
                // The reader does not read #S(...) yet.
                unreadable = true;
                let (a, b) = (pick(&nodes, arg), pick(&nodes, arg / 8));
                alloc::structure(mc, stype, "s", vec![a, b])
            }
            8 => {
                // Make the graph shared or circular: point an earlier cons or vector at another node.
                let target = pick(&nodes, arg / 4);
                match pick(&nodes, arg) {
                    Value::Cons(c) if arg.is_multiple_of(2) => alloc::set_car(mc, c, target),
                    Value::Cons(c) => alloc::set_cdr(mc, c, target),
                    Value::Vector(vec) if !vec.borrow().items.is_empty() => {
                        alloc::borrow_mut(mc, vec).items[0] = target
                    }
                    _ => {}
                }
                circular = true;
                continue;
            }
            9 => Value::Symbol(alloc::make_symbol(mc, "G")),
            10 => {
                unreadable = true;
                alloc::float(mc, f64::from(arg as u8) / 3.0)
            }
            _ => {
                // A chain `arg * 64` deep, for depth without a long input.
                let mut x = pick(&nodes, 0);
                for _ in 0..arg * 64 {
                    x = alloc::cons(mc, x, Value::Nil);
                }
                x
            }
        };
        nodes.push(v);
    }
    let top = nodes[nodes.len() - 1];
    let b = |i: usize| settings_bytes.get(i).copied().unwrap_or(0);
    let settings = Settings {
        readably: b(0) & 1 != 0,
        circle: b(0) & 2 != 0,
        length: (b(0) & 4 != 0).then_some(b(1) as usize % 8),
        level: (b(0) & 8 != 0).then_some(b(2) as usize % 8),
        base: [10, 2, 8, 16, 36][b(3) as usize % 5],
        radix: b(3) & 0x10 != 0,
        case: [Case::Upcase, Case::Downcase, Case::Capitalize][b(3) as usize / 32 % 3],
        array: b(0) & 0x10 == 0,
        gensym: b(0) & 0x20 == 0,
        ..Settings::default()
    };
    let escape = b(0) & 0x40 == 0;
    let ctx = PrintContext { settings, ..PrintContext::new(p, p.user, escape) };
    let mut sink = Budget { text: String::new() };
    let r = print_into(&mut sink, top, &ctx);
    let text = sink.text;
    match r {
        Ok(()) => {}
        Err(Stop::Failed(_)) => {
            assert!(!settings.circle || text.len() > BUDGET / 2, "a print with *print-circle* is cut short");
            return;
        }
        Err(Stop::NotReadable(_)) => {
            assert!(settings.readably, "only *print-readably* refuses objects");
            return;
        }
        Err(Stop::Interrupted) => panic!("no interrupt flag was given"),
    }
    // Every #n# refers to a label defined before it.
    let mut defined = std::collections::HashSet::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            // Skip strings, whose contents may look like labels.
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
        } else if bytes[i] == b'#' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            let n = &text[start..j];
            match bytes.get(j) {
                Some(b'=') => assert!(defined.insert(n.to_string()), "#{n}= twice in {text}"),
                Some(b'#') => assert!(defined.contains(n), "#{n}# before #{n}= in {text}"),
                _ => {}
            }
            i = j;
            continue;
        }
        i += 1;
    }
    // Escaped output without cuts reads back (floats are left out: their
    // digits are the float module's business; structures: the reader has no #S).
    let cut = settings.length.is_some() || settings.level.is_some();
    if (escape || settings.readably) && !cut && !unreadable && (settings.circle || !circular) && settings.array && settings.gensym && settings.base == 10 {
        let options = mprof_reader::ReadOptions { max_depth: usize::MAX, ..Default::default() };
        match mprof_reader::read_one(&text, 0, &options) {
            // However deep, the datum drops without recursion.
            Ok(Some(_)) => {}
            Ok(None) => panic!("{text:?} reads as nothing"),
            Err(e) => panic!("{text:?} does not read back: {e}"),
        }
    }
}
