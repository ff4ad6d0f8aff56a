//! The pretty printer as the profiler's listing uses it: layout snapshots of typical code,
//! the `first_offset` contract checked line by line, and the proof that printing never
//! changes meaning (every example program in the repository reads back to the same
//! datums, at several widths and with every list forced to break).

use std::path::{Path, PathBuf};

use mprof_listing::pretty::{
    Block, LineKind, PrettyLine, PrettyOptions, pretty_source, render_blocks,
};
use mprof_reader::{DEFAULT_MAX_DEPTH, ReadErrorKind, ReadOptions, read_all};

fn never(_: usize, _: usize) -> bool {
    false
}

fn always(_: usize, _: usize) -> bool {
    true
}

fn pretty(src: &str, width: usize, must_break: &dyn Fn(usize, usize) -> bool) -> Vec<Block> {
    let options = PrettyOptions {
        width,
        ..PrettyOptions::default()
    };
    match pretty_source(src, &options, &ReadOptions::default(), must_break) {
        Ok(blocks) => blocks,
        Err(e) => panic!("read error in test input: {e}"),
    }
}

/// One row per line: the first datum's offset, the kind (C code, T text, blank), then the
/// line as printed. Blocks are introduced by a `--` row.
fn table(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        let lines = match block {
            Block::Form {
                span,
                definition,
                lines,
            } => {
                let what = definition
                    .as_ref()
                    .map(|(head, name)| format!(" {head} {name}"))
                    .unwrap_or_default();
                out.push_str(&format!("-- form {}..{}{what}\n", span.start, span.end));
                lines
            }
            Block::Text { lines } => {
                out.push_str("-- text\n");
                lines
            }
        };
        for line in lines {
            let offset = line.first_offset.map(|o| o.to_string()).unwrap_or_default();
            let kind = match line.kind {
                LineKind::Code => 'C',
                LineKind::Text => 'T',
                LineKind::Blank => ' ',
            };
            out.push_str(&format!(
                "{offset:>5} {kind} |{}{}\n",
                " ".repeat(line.indent),
                line.text
            ));
        }
    }
    out
}

fn lines_of(blocks: &[Block]) -> impl Iterator<Item = &PrettyLine> {
    blocks.iter().flat_map(|block| match block {
        Block::Form { lines, .. } | Block::Text { lines } => lines.iter(),
    })
}

/// Every line that names a first datum starts with that datum's text, and no line exceeds
/// the width unless a single unbreakable piece forces it.
fn check_first_offsets(src: &str, blocks: &[Block]) {
    for line in lines_of(blocks) {
        match (line.kind, line.first_offset) {
            (LineKind::Code, Some(offset)) => {
                let text = line.text.strip_prefix(". ").unwrap_or(&line.text);
                // The printer may drop whitespace after a prefix (`'  x` prints `'x`).
                let token: String = text
                    .chars()
                    .take_while(|&c| c != ' ' && c != ')')
                    .filter(|c| !c.is_whitespace())
                    .collect();
                assert!(!token.is_empty(), "empty first token on line {line:?}");
                let source: String = src[offset..]
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .take(token.chars().count())
                    .collect();
                assert!(
                    source == token,
                    "line {:?} names offset {offset}, where the source has {:?}",
                    line.text,
                    &src[offset..(offset + 20).min(src.len())]
                );
            }
            (LineKind::Code, None) => assert!(
                line.indent == 0 || line.text.starts_with(')'),
                "a Code line without first_offset that is neither a string continuation nor closing parens: {line:?}"
            ),
            (_, offset) => assert_eq!(offset, None, "{line:?}"),
        }
    }
}

/// Printing then reading gives the same forms as reading the source.
fn check_round_trip(name: &str, src: &str, blocks: &[Block]) {
    let read = |text: &str| -> Vec<String> {
        match read_all(text, &ReadOptions::default()) {
            Ok(forms) => forms.iter().map(|f| f.to_string()).collect(),
            Err(e) => panic!("{name}: reading the printed text failed: {e}\n{text}"),
        }
    };
    let printed = render_blocks(blocks);
    let original = read(src);
    let again = read(&printed);
    assert_eq!(original.len(), again.len(), "{name}: form count\n{printed}");
    for (a, b) in original.iter().zip(&again) {
        assert_eq!(a, b, "{name}: a form changed meaning\n{printed}");
    }
}

fn check(src: &str, width: usize, must_break: &dyn Fn(usize, usize) -> bool) -> String {
    let blocks = pretty(src, width, must_break);
    check_first_offsets(src, &blocks);
    check_round_trip("example", src, &blocks);
    table(&blocks)
}

#[test]
fn a_short_defun_stays_on_one_line() {
    let out = check("(defun add1 (x)\n   (+ x 1))", 72, &never);
    assert_eq!(
        out,
        "-- form 0..27 DEFUN ADD1\n    0 C |(defun add1 (x) (+ x 1))\n"
    );
}

const LONG_DEFUN: &str = r#"(defun summarize-scores (table &key (threshold 10) (report-stream *standard-output*))
  "Prints every entry above THRESHOLD and returns their count."
  (let ((count 0) (total 0) (names (sort (copy-list (hash-table-keys table)) #'string< :key #'symbol-name)))
    (dolist (name names)
      (let ((score (gethash name table)))
        (cond ((null score) (warn "no score for ~a" name))
              ((> score threshold) (incf count) (incf total score)
               (format report-stream "~&~20a ~8d ~5,1f%~%" name score (* 100.0 (/ score (max 1 total)))))
              (t nil))))
    (when (> count 0) (format report-stream "~&~d entries above ~d, ~d points in all~%" count threshold total))
    (loop for name in names for score = (gethash name table 0) when (> score threshold) collect name into winners finally (return (values count winners)))))
"#;

#[test]
fn a_long_defun_breaks_like_hand_written_code() {
    insta::assert_snapshot!(check(LONG_DEFUN, 72, &never));
}

const COMMENTED: &str = r#";;; A file header.
;;; Second line of the header.

(defvar *limit* 10)  ; the largest input


;; Fibonacci, the slow way.
(defun fib (n)
  ;; base case first
  (if (< n 2)
      n ; small
      (+ (fib (- n 1))
         #| the second call |# (fib (- n 2)))))

(defun tail (x)
  (list x
        ;; trailing comment
        ))
;; end of file
"#;

#[test]
fn comments_are_kept_between_and_inside_forms() {
    insta::assert_snapshot!(check(COMMENTED, 72, &never));
}

const READER_MACROS: &str = r#"(defmacro with-logging ((var stream) &body body)
  `(let ((,var ,stream)) (format ,var "; entering (~a)~%" ',(car body)) ,@body (force-output ,var)))
(defparameter *table* '(a b c))
(mapcar #'car '((a . 1) (b . 2) (c . 3)))
(list #\( #\) #\; "a string; with (parens" '#(1 2 3) #+sbcl (sbcl-only) #-sbcl :not-sbcl)
#|block
  comment|# (print #'(lambda (x) x))
#+sbcl (skipped at top level)
"#;

#[test]
fn reader_macros_strings_and_characters_print_as_written() {
    insta::assert_snapshot!(check(READER_MACROS, 72, &never));
}

#[test]
fn atoms_keep_their_spelling() {
    let src = "(List 1.5d0 #x1F 1/2 |Mixed Case| cl:car :Key \"tab\tin string\")";
    let out = check(src, 72, &never);
    assert!(out.contains(src), "{out}");
    // Narrow: the call breaks, and the pieces are still as written.
    insta::assert_snapshot!(check(src, 20, &never));
}

#[test]
fn must_break_puts_branches_on_lines_of_their_own() {
    let src = "(defun f (a) (if a (b) (c)))";
    assert_eq!(
        check(src, 72, &never),
        "-- form 0..28 DEFUN F\n    0 C |(defun f (a) (if a (b) (c)))\n"
    );
    let if_start = src.find("(if").unwrap_or_default();
    let out = check(src, 72, &|start, _| start == if_start);
    insta::assert_snapshot!(out);
    assert_eq!(
        out.lines().filter(|l| l.contains(" C |")).count(),
        4,
        "{out}"
    );
}

#[test]
fn a_narrow_width_fills_quoted_data() {
    let src = "(setq *primes* '(2 3 5 7 11 13 17 19 23 29 31 37 41 43 47 53 59 61 67 71))";
    insta::assert_snapshot!(check(src, 20, &never));
}

#[test]
fn multi_line_strings_and_dotted_lists() {
    let src = "(defun doc ()\n  \"First line.\n  Second line, indented in the source.\"\n  (cons 'head . (tail)))\n(quote (a b . c))\n(list '(1 . 2) '(x y . z))\n(f x . 'y)\n";
    insta::assert_snapshot!(check(src, 72, &never));
    insta::assert_snapshot!(
        "multi_line_strings_and_dotted_lists_broken",
        check(src, 72, &always)
    );
}

#[test]
fn special_forms_layouts() {
    let src = r#"(defun layouts (x y)
  (flet ((double (n) (* n 2)) (triple (n) (* n 3))) (list (double x) (triple y) (double (triple (+ x y)))))
  (case x ((1 2 3) (print "small") (print "really small")) (otherwise (print "some other number, a larger one")))
  (handler-case (parse-integer y) (parse-error (c) (format t "could not parse ~a: ~a~%" y c) nil))
  (do ((i 0 (1+ i)) (acc nil (cons i acc))) ((>= i x) (nreverse acc)) (print i) (print acc))
  (multiple-value-bind (quotient remainder) (floor x y) (list quotient remainder quotient remainder))
  (tagbody start (incf x) (when (< x 100000000) (go start)) done (print "finished the loop, all done")))
(defmethod area :around ((shape circle) &optional (scale 1)) (* scale pi (radius shape) (radius shape) (call-next-method)))
"#;
    insta::assert_snapshot!(check(src, 72, &never));
    // Narrower, so that the definitions, clauses and bindings themselves break.
    insta::assert_snapshot!("special_forms_layouts_narrow", check(src, 44, &never));
}

#[test]
fn loop_clauses_get_lines_of_their_own() {
    let src = "(loop named outer for i from 1 to 3 do (loop for j from 1 to 3 when (= (* i j) 4) do (return-from outer (list i j))))\n(loop for x in xs if (evenp x) do (print (list 'even x)) and collect x else do (print (list 'odd x)) end finally (return t))\n";
    insta::assert_snapshot!(check(src, 50, &never));
}

#[test]
fn read_errors_are_returned() {
    let options = ReadOptions {
        file: Some("broken.lisp".into()),
        ..ReadOptions::default()
    };
    for (src, kind) in [
        ("(defun f (x)", ReadErrorKind::Incomplete),
        ("(a))", ReadErrorKind::Malformed),
        ("#z", ReadErrorKind::Malformed),
    ] {
        match pretty_source(src, &PrettyOptions::default(), &options, &never) {
            Ok(blocks) => panic!("{src:?} printed as {blocks:?}"),
            Err(e) => {
                assert_eq!(e.kind, kind, "{src:?}");
                assert_eq!(e.file.as_deref(), Some("broken.lisp"));
            }
        }
    }
}

#[test]
fn deep_nesting_prints_without_overflowing_the_stack() {
    for depth in [300, DEFAULT_MAX_DEPTH] {
        let src = format!(
            "(defun deep () {}x{})",
            "(f ".repeat(depth - 1),
            ")".repeat(depth - 1)
        );
        for must_break in [&never as &dyn Fn(usize, usize) -> bool, &always] {
            let blocks = pretty(&src, 72, must_break);
            check_first_offsets(&src, &blocks);
            check_round_trip("deep", &src, &blocks);
        }
    }
}

/// A small deterministic generator (no dependency needed for this).
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize % n.max(1)
    }
}

#[test]
fn garbage_never_panics() {
    let pieces = [
        "(", ")", "'", "`", ",", ",@", "#'", "#(", "\"s\"", "\"a\nb\"", ";c\n", "#|x|#", "#+sbcl",
        "#-sbcl", " . ", "a", "12", "#\\(", "\n", "  ", "|p q|",
    ];
    let mut random = Random(12345);
    let mut readable = 0;
    for _ in 0..3000 {
        let mut src = String::new();
        for _ in 0..random.below(24) {
            src.push_str(pieces[random.below(pieces.len())]);
        }
        let options = PrettyOptions {
            width: random.below(30),
            indent: 2,
        };
        if let Ok(blocks) = pretty_source(&src, &options, &ReadOptions::default(), &always) {
            check_first_offsets(&src, &blocks);
            check_round_trip(&src, &src, &blocks);
            readable += 1;
        }
    }
    assert!(readable > 20, "only {readable} inputs were readable");
}

/// A random readable form with comments, skipped forms, prefixes, multi-line strings and
/// dotted tails in every position the reader allows them.
fn random_form(random: &mut Random, depth: usize, backquotes: usize) -> String {
    // Operator names too, so that every layout meets odd shapes (dotted tails,
    // comments, missing arguments).
    const ATOMS: [&str; 21] = [
        "a",
        "12",
        "\"s\"",
        "\"a\n  b\"",
        "#\\(",
        "|p q|",
        ":k",
        "1.5d0",
        "nil",
        "let",
        "if",
        "cond",
        "defun",
        "loop",
        "for",
        "do",
        "setq",
        "flet",
        "case",
        "defmethod",
        "handler-case",
    ];
    const SEPARATORS: [&str; 7] = [
        " ",
        "\n  ",
        " ; c\n",
        " #|x|# ",
        " #+sbcl (z . y) ",
        " #-sbcl ",
        "\n\n",
    ];
    let choice = if depth > 4 { 0 } else { random.below(6) };
    match choice {
        0 | 1 => ATOMS[random.below(ATOMS.len())].to_string(),
        2 => {
            let prefix = match random.below(4) {
                0 => "'",
                1 => "#'",
                2 if backquotes > 0 => ",",
                _ => "`",
            };
            let backquotes = match prefix {
                "`" => backquotes + 1,
                "," => backquotes - 1,
                _ => backquotes,
            };
            let inner = random_form(random, depth + 1, backquotes);
            format!("{prefix}{inner}")
        }
        3 => {
            let items: Vec<String> = (0..random.below(5))
                .map(|_| random_form(random, depth + 1, backquotes))
                .collect();
            format!("#({})", items.join(" "))
        }
        _ => {
            let mut text = String::from("(");
            let count = random.below(6);
            for i in 0..count {
                if i > 0 {
                    text.push_str(SEPARATORS[random.below(SEPARATORS.len())]);
                }
                text.push_str(&random_form(random, depth + 1, backquotes));
            }
            if count > 0 && random.below(4) == 0 {
                text.push_str(" . ");
                text.push_str(&random_form(random, depth + 1, backquotes));
            }
            if random.below(4) == 0 {
                // Not `#-sbcl`, which needs a form after it.
                text.push_str(SEPARATORS[random.below(5)]);
            }
            text.push(')');
            text
        }
    }
}

#[test]
fn random_forms_read_back_the_same() {
    let mut random = Random(777);
    for _ in 0..1000 {
        let src: Vec<String> = (0..3).map(|_| random_form(&mut random, 0, 0)).collect();
        let src = src.join(" ;; between\n");
        for (width, must_break) in [
            (random.below(40), &never as &dyn Fn(usize, usize) -> bool),
            (72, &always),
        ] {
            let blocks = pretty(&src, width, must_break);
            check_first_offsets(&src, &blocks);
            check_round_trip(&src, &src, &blocks);
        }
    }
}

/// The example programs: the Lisp test suite, benchmarks, examples and the prelude.
fn example_programs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    let mut pending: Vec<PathBuf> = ["lisp-tests", "bench", "examples", "lisp/eval"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "lisp") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_example_program_reads_back_the_same() {
    let programs = example_programs();
    let mut checked = 0;
    for path in &programs {
        let Ok(src) = std::fs::read_to_string(path) else {
            continue;
        };
        if read_all(&src, &ReadOptions::default()).is_err() {
            continue;
        }
        let name = path.display().to_string();
        for (width, must_break) in [
            (72, &never as &dyn Fn(usize, usize) -> bool),
            (30, &never),
            (72, &always),
        ] {
            let blocks = pretty(&src, width, must_break);
            check_first_offsets(&src, &blocks);
            check_round_trip(&name, &src, &blocks);
        }
        checked += 1;
    }
    assert!(
        checked >= 40,
        "only {checked} of {} example programs were checked",
        programs.len()
    );
}
