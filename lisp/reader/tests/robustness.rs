//! Robustness: the reader must turn any text into datums or an error value, never a
//! panic, a hang or a stack overflow. Inputs come from a tiny deterministic LCG (no
//! proptest), half built from Lisp syntax fragments so they reach deep into the parser,
//! half arbitrary characters.
//!
//! For every input we also check the error invariants (line and column >= 1, offset
//! within the text) and that every datum read successfully prints back to itself.

use mprof_reader::{
    Completeness, Datum, DatumKind, ReadError, ReadOptions, Reader, Span, completeness, read_one,
};

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        // Knuth's MMIX constants; the high bits are the good ones.
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const FRAGMENTS: &[&str] = &[
    "(",
    "(",
    "(",
    ")",
    ")",
    ")",
    "'",
    "`",
    ",",
    ",@",
    ",.",
    "#'",
    "#(",
    "#\\",
    "#\\Space",
    "#\\(",
    "#+",
    "#-",
    "#+sbcl ",
    "#-mprof-lisp ",
    "#+(or a b) ",
    "#|",
    "|#",
    "|",
    "\\",
    "\"",
    "\"",
    ";",
    "\n",
    " ",
    " ",
    "\t",
    ".",
    " . ",
    "..",
    "1",
    "12",
    "-",
    "+",
    "/",
    "e",
    "d0",
    "1.5",
    "-.5e3",
    "1/2",
    "3/0",
    "a",
    "Zz",
    "foo",
    ":",
    "::",
    "x",
    "#x",
    "#xFF",
    "#b102",
    "#36r",
    "#1r",
    "#:",
    "#:g",
    "λ",
    "é",
    "\u{0}",
    "\u{7f}",
    "\u{1b}",
    "\u{feff}",
    "#S(",
    "#.",
    "#<",
    "#)",
    "# ",
    "9999999999999999999999",
    "1e999",
    "pkg:",
    "a:b:c",
    "p::q",
    "\r\n",
];

fn random_text(rng: &mut Lcg) -> String {
    let mut text = String::new();
    let pieces = rng.below(40);
    if rng.below(2) == 0 {
        for _ in 0..pieces {
            text.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]);
        }
    } else {
        for _ in 0..pieces {
            let c = match rng.below(4) {
                0 => char::from_u32(rng.below(0x80) as u32),
                1 => char::from_u32(rng.below(0x800) as u32),
                2 => char::from_u32(rng.below(0x11_0000) as u32),
                _ => Some(b"()'`,#\\|\";. \n"[rng.below(13)] as char),
            };
            text.extend(c);
        }
    }
    text
}

fn check_error(src: &str, e: &ReadError) {
    assert!(
        e.line >= 1 && e.column >= 1,
        "bad position in {e:?} for {src:?}"
    );
    assert!(
        e.offset <= src.len(),
        "offset past the end in {e:?} for {src:?}"
    );
    assert!(!e.message.is_empty(), "empty message for {src:?}");
    assert!(
        e.to_string()
            .starts_with(&format!("{}:{}: ", e.line, e.column))
    );
}

/// The datum with every span zeroed, so two reads compare by structure alone.
fn strip_spans(mut datum: Datum) -> Datum {
    let mut pending = vec![&mut datum];
    while let Some(d) = pending.pop() {
        d.span = Span::default();
        match &mut d.kind {
            DatumKind::List(items, tail) => {
                pending.extend(items.iter_mut());
                if let Some(t) = tail {
                    pending.push(&mut **t);
                }
            }
            DatumKind::Vector(items) | DatumKind::Array(_, items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
    datum
}

fn check_input(src: &str, options: &ReadOptions) -> usize {
    let mut read = 0;
    for result in Reader::new(src, options) {
        match result {
            Ok(datum) => {
                read += 1;
                assert!(datum.span.line >= 1 && datum.span.end <= src.len());
                // What the printer writes reads back as the same datum.
                let printed = datum.to_string();
                let again = Reader::new(&printed, options).read();
                match again {
                    Ok(Some(back)) => assert!(
                        strip_spans(datum) == strip_spans(back),
                        "{src:?} printed as {printed:?} read back differently"
                    ),
                    other => panic!("{src:?} printed as {printed:?} does not read back: {other:?}"),
                }
            }
            Err(e) => check_error(src, &e),
        }
    }
    match completeness(src) {
        Completeness::Malformed(e) => check_error(src, &e),
        Completeness::Complete | Completeness::Incomplete => {}
    }
    read
}

#[test]
fn random_inputs_never_panic() {
    let options = ReadOptions::default();
    let mut rng = Lcg(0x5eed);
    let mut datums = 0;
    let mut errors = 0;
    for _ in 0..20_000 {
        let src = random_text(&mut rng);
        datums += check_input(&src, &options);
        // read_one from every character boundary, including inside tokens.
        for (start, _) in src.char_indices().step_by(3) {
            match read_one(&src, start, &options) {
                Ok(Some((datum, end))) => assert!(datum.span.start >= start && end <= src.len()),
                Ok(None) => {}
                Err(e) => {
                    errors += 1;
                    check_error(&src, &e);
                }
            }
        }
    }
    // The generator must actually exercise both outcomes.
    assert!(datums > 5_000, "only {datums} datums read");
    assert!(errors > 5_000, "only {errors} errors");
}

#[test]
fn arbitrary_bytes_never_panic() {
    let options = ReadOptions::default();
    let mut rng = Lcg(42);
    for _ in 0..5_000 {
        let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.below(256) as u8).collect();
        let src = String::from_utf8_lossy(&bytes);
        check_input(&src, &options);
    }
}

#[test]
fn pathological_shapes_are_values_not_crashes() {
    let options = ReadOptions::default();
    let n = 100_000;
    let shapes = [
        "(".repeat(n),
        ")".repeat(n),
        "'".repeat(n),
        "`".repeat(n) + &",".repeat(n) + "x",
        "#(".repeat(n),
        "#+a ".repeat(n),
        "#|".repeat(n),
        "#|".repeat(n) + &"|#".repeat(n) + "ok",
        "\\".repeat(n),
        "|".repeat(n),
        "\"".repeat(n),
        "#\\".repeat(n),
        "1".repeat(n),
        format!("{}x{}", "(".repeat(n), ")".repeat(n)),
        format!("#-a {}x{}", "(".repeat(n), ")".repeat(n)),
        "a ".repeat(n),
    ];
    for src in &shapes {
        for result in Reader::new(src, &options) {
            if let Err(e) = result {
                check_error(src, &e);
            }
        }
    }
    // A long flat list and a huge integer are fine.
    let flat = format!("({})", "x ".repeat(n));
    let forms = Reader::new(&flat, &options)
        .collect::<Result<Vec<_>, _>>()
        .map(|f| f.len());
    assert_eq!(forms, Ok(1));
    let digits = Reader::new(&shapes[12], &options)
        .read()
        .map(|d| d.map(|d| d.to_string().len()));
    assert_eq!(digits, Ok(Some(n)));
}
