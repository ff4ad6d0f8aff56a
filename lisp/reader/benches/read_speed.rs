//! Reading speed on about 1 MB of typical Lisp source, reported as time, MB/s, and as a
//! ratio to a baseline that only walks the bytes counting parentheses (the floor any
//! reader pays). Run with `cargo bench -p mprof-reader --bench read_speed`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use mprof_reader::{Position, ReadOptions, read_all, read_one, read_one_at};

/// Deterministic "typical" source: definitions with nested forms, docstrings, comments,
/// keywords, quoted data, numbers of every kind and character literals.
fn typical_source(target_bytes: usize) -> String {
    let mut src = String::with_capacity(target_bytes + 1024);
    let mut i = 0u64;
    while src.len() < target_bytes {
        i += 1;
        src.push_str(&format!(
            ";;; Function number {i}: computes something plausible.\n\
             (defun compute-{i} (items &key (scale 1.5d0) (limit {i}))\n\
             \x20 \"Return the scaled sum of ITEMS below LIMIT; see also COMPUTE-{j}.\"\n\
             \x20 (let ((total 0) (count 0) (ratio 1/3))\n\
             \x20   (dolist (item items (values total count))\n\
             \x20     (when (and (numberp item) (< item limit))\n\
             \x20       (incf total (* item scale ratio))\n\
             \x20       (incf count))\n\
             \x20     #| a block comment |# (push '(:key #\\a \"text\" -.5e3 #x{i:X}) *log*)\n\
             \x20     (format t \"~a: ~d~%\" 'compute-{i} `(,item ,@items)))))\n\n",
            j = i / 2
        ));
    }
    src
}

/// Best time of `runs` calls of `f`, not counting the drop of its result.
fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let result = black_box(f());
            let elapsed = start.elapsed();
            drop(result);
            elapsed
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let src = typical_source(1 << 20);
    let options = ReadOptions::default();
    let forms = read_all(&src, &options).map(|f| f.len()).unwrap_or(0);
    let read = best_of(20, || read_all(black_box(&src), &options));
    let read_and_drop = best_of(20, || drop(read_all(black_box(&src), &options)));
    // How the evaluator's stream `read` steps through a file: one `read_one` per form.
    let read_one_loop = best_of(5, || {
        let (mut offset, mut forms) = (0, 0);
        while let Ok(Some((_, end))) = read_one(black_box(&src), offset, &options) {
            offset = end;
            forms += 1;
        }
        forms
    });
    let read_one_at_loop = best_of(5, || {
        let (mut at, mut forms) = (Position::START, 0);
        while let Ok(Some((_, next))) = read_one_at(black_box(&src), at, &options) {
            at = next;
            forms += 1;
        }
        forms
    });
    let scan = best_of(20, || {
        let mut depth = 0i64;
        for &b in black_box(src.as_bytes()) {
            depth += i64::from(b == b'(') - i64::from(b == b')');
        }
        depth
    });
    let mb = src.len() as f64 / 1e6;
    println!("input: {} bytes, {forms} top-level forms", src.len());
    println!(
        "read_all: {:.2} ms ({:.0} MB/s)",
        read.as_secs_f64() * 1e3,
        mb / read.as_secs_f64()
    );
    println!(
        "read_all + drop of the result: {:.2} ms",
        read_and_drop.as_secs_f64() * 1e3
    );
    println!(
        "read_one per form over the file: {:.2} ms",
        read_one_loop.as_secs_f64() * 1e3
    );
    println!(
        "read_one_at per form over the file: {:.2} ms",
        read_one_at_loop.as_secs_f64() * 1e3
    );
    println!("byte scan baseline: {:.3} ms", scan.as_secs_f64() * 1e3);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    println!("ratio read_all / byte scan: {:.1}x", ratio(read, scan));
    println!(
        "ratio read_one loop / read_all: {:.1}x",
        ratio(read_one_loop, read)
    );
    println!(
        "ratio read_one_at loop / read_all: {:.2}x",
        ratio(read_one_at_loop, read)
    );
}
