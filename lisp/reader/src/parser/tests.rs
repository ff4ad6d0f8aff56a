//! The parser's tests: data-driven `check` on the printed result, spans,
//! feature conditionals, and error kinds and positions.

use super::*;

/// Reads `src` and renders each datum with `Display`, separated by spaces; an error
/// renders as `<kind> <line>:<column>: <message>` after the datums read before it.
fn render(src: &str, options: &ReadOptions) -> String {
    let mut out = Vec::new();
    for result in Reader::new(src, options) {
        match result {
            Ok(datum) => out.push(datum.to_string()),
            Err(e) => out.push(format!(
                "{:?} {}:{}: {}",
                e.kind, e.line, e.column, e.message
            )),
        }
    }
    out.join(" ")
}

fn check(src: &str, expected: &str) {
    assert_eq!(
        render(src, &ReadOptions::default()),
        expected,
        "reading {src:?}"
    );
}

#[test]
fn labels_read_as_label_forms_for_the_evaluator() {
    check(
        "#1=(a . #1#)",
        "(MPROF-SYSTEM:%LABEL 1 (A MPROF-SYSTEM:%LABEL-REF 1))",
    );
    check(
        "(#12=x #12# #3=#(#3#))",
        "((MPROF-SYSTEM:%LABEL 12 X) (MPROF-SYSTEM:%LABEL-REF 12) (MPROF-SYSTEM:%LABEL 3 #((MPROF-SYSTEM:%LABEL-REF 3))))",
    );
    check("'#1=a", "(COMMON-LISP:QUOTE (MPROF-SYSTEM:%LABEL 1 A))");
    check("#1=", "Incomplete 1:4: end of input: expected a form after #n= at 1:1");
    // Suppressed by #-, labels are skipped like any other syntax.
    check("(#-mprof-lisp #1=(a) b)", "(B)");
}

fn check_features(src: &str, features: &[&str], expected: &str) {
    let options = ReadOptions {
        features: features.iter().map(|f| f.to_string()).collect(),
        ..ReadOptions::default()
    };
    assert_eq!(
        render(src, &options),
        expected,
        "reading {src:?} with {features:?}"
    );
}

fn read1(src: &str) -> Datum {
    match read_all_default(src) {
        Ok(mut forms) if forms.len() == 1 => forms.remove(0),
        other => panic!("expected one datum from {src:?}, got {other:?}"),
    }
}

fn read_all_default(src: &str) -> Result<Vec<Datum>, ReadError> {
    Reader::new(src, &ReadOptions::default()).collect()
}

#[test]
fn bit_vectors_and_complex_numbers() {
    check("#*0110 #* #3*1 #4*01", "#*0110 #* #*111 #*0111");
    check("(a #*1)", "(A #*1)");
    check("#C(1 2) #c(1/2 -3.5) #C(0 0)", "#C(1 2) #C(1/2 -3.5) #C(0 0)");
    check("'#C(1 2)", "(COMMON-LISP:QUOTE #C(1 2))");
    check_features("#+nope #C(1 2) #+nope #*12 x", &[], "X");
    check(
        "#*012",
        "Malformed 1:1: #*012: a bit vector may hold only the digits 0 and 1, not '2'",
    );
    check("#2*101", "Malformed 1:1: #2*101: 3 bits given for a bit vector of length 2");
    check("#2*", "Malformed 1:1: #2*: a bit vector of length 2 needs at least one bit");
    check(
        "#C(1 a)",
        "Malformed 1:1: #C(1 A): expected a list of two real numbers, as in #C(1 2)",
    );
    check(
        "#C(1 2 3)",
        "Malformed 1:1: #C(1 2 3): expected a list of two real numbers, as in #C(1 2)",
    );
    check("#C", "Incomplete 1:3: end of input: expected a form after #C at 1:1");
}

#[test]
fn array_literals() {
    check("#2A((1 2) (3 4))", "#2A((1 2) (3 4))");
    check("#1A(a b) #0A x #2a(\"ab\" \"cd\")", "#1A(A B) #0AX #2A((#\\a #\\b) (#\\c #\\d))");
    check("#3A(((1) (2)) ((3) (4)))", "#3A(((1) (2)) ((3) (4)))");
    check("#2A(() ())", "#2A()");
    check("#2A((1 2) (3))", "Malformed 1:1: #2A: a sequence of 1 elements where dimension 1 is 2");
    check("#2A(1 2)", "Malformed 1:1: #2A: the contents must be nested sequences 2 deep");
    check("#999A()", "Malformed 1:1: #999A: an array's rank may be at most 129");
    check_features("#+nope #2A((1) (2)) y", &[], "Y");
}

#[test]
fn lists_and_dotted_pairs() {
    check("()", "()");
    check("(a b c)", "(A B C)");
    check("(a . b)", "(A . B)");
    check("(a b . c)", "(A B . C)");
    check("(a . (b c))", "(A B C)");
    check("(a . ())", "(A)");
    check("(a .b)", "(A .B)");
    check("(a . #(1))", "(A . #(1))");
    check("((a) (b (c)))", "((A) (B (C)))");
    check(
        "(a . b c)",
        "Malformed 1:8: expected a closing ')' after the element that follows the dot in the list opened at 1:1: a dot may only appear before the last element of a list",
    );
    check(
        "(. a)",
        "Malformed 1:2: misplaced dot: nothing precedes it in the list opened at 1:1 (a dot may only appear before the last element of a list, as in (a . b))",
    );
    check(
        "(a . . b)",
        "Malformed 1:6: misplaced dot: a dot may only appear before the last element of a list",
    );
    check(
        "(a . b . c)",
        "Malformed 1:8: misplaced dot: a dot may only appear before the last element of a list",
    );
    check(
        "(a .)",
        "Malformed 1:5: expected a form after the dot at 1:4, found ')'",
    );
    check(
        ".",
        "Malformed 1:1: a dot is only allowed inside a list, before its last element, as in (a . b)",
    );
    check(
        "#(a . b)",
        "Malformed 1:5: a dot is only allowed inside a list, before its last element, as in (a . b)",
    );
    check(
        "'.",
        "Malformed 1:2: a dot is only allowed inside a list, before its last element, as in (a . b)",
    );
}

#[test]
fn reader_macros() {
    check("'a", "(COMMON-LISP:QUOTE A)");
    check("#'car", "(COMMON-LISP:FUNCTION CAR)");
    check("''a", "(COMMON-LISP:QUOTE (COMMON-LISP:QUOTE A))");
    check(
        "`(a ,b ,@c ,.d)",
        "(MPROF-SYSTEM:BACKQUOTE (A (MPROF-SYSTEM:UNQUOTE B) (MPROF-SYSTEM:UNQUOTE-SPLICING C) (MPROF-SYSTEM:UNQUOTE-SPLICING D)))",
    );
    check(
        "``(a ,,b)",
        "(MPROF-SYSTEM:BACKQUOTE (MPROF-SYSTEM:BACKQUOTE (A (MPROF-SYSTEM:UNQUOTE (MPROF-SYSTEM:UNQUOTE B)))))",
    );
    check(
        "`#(a ,b)",
        "(MPROF-SYSTEM:BACKQUOTE #(A (MPROF-SYSTEM:UNQUOTE B)))",
    );
    check(
        "`(a . ,b)",
        "(MPROF-SYSTEM:BACKQUOTE (A MPROF-SYSTEM:UNQUOTE B))",
    );
    check("'(a . b)", "(COMMON-LISP:QUOTE (A . B))");
    check(
        ",a",
        "Malformed 1:1: , outside a backquote: commas may only appear inside a backquoted form such as `(a ,b)",
    );
    check(
        "`(a ,b) ,@c",
        "(MPROF-SYSTEM:BACKQUOTE (A (MPROF-SYSTEM:UNQUOTE B))) Malformed 1:9: ,@ outside a backquote: commas may only appear inside a backquoted form such as `(a ,b)",
    );
    check(
        "`(,,a)",
        "Malformed 1:4: , outside a backquote: commas may only appear inside a backquoted form such as `(a ,b)",
    );
    check(
        "`,@a",
        "Malformed 1:2: `,@ is not allowed: ,@ splices into an enclosing list, so it must appear inside a list within the backquote",
    );
    check(
        "`(a . ,@b)",
        "Malformed 1:7: ,@ is not allowed right after a dot: write (a . ,b) or (a ,@b)",
    );
    check(
        "(')",
        "Malformed 1:3: expected a form after ' at 1:2, found ')'",
    );
}

#[test]
fn prefix_spans() {
    let datum = read1("  'foo");
    assert_eq!(
        datum.span,
        Span {
            start: 2,
            end: 6,
            line: 1,
            column: 3
        }
    );
    let DatumKind::List(items, None) = &datum.kind else {
        panic!("not a list: {datum:?}")
    };
    assert_eq!(
        items[0].span,
        Span {
            start: 2,
            end: 3,
            line: 1,
            column: 3
        }
    );
    assert_eq!(
        items[1].span,
        Span {
            start: 3,
            end: 6,
            line: 1,
            column: 4
        }
    );
    let datum = read1("#'f");
    let DatumKind::List(items, None) = &datum.kind else {
        panic!("not a list: {datum:?}")
    };
    assert_eq!((items[0].span.start, items[0].span.end), (0, 2));
}

#[test]
fn spans_of_nested_forms() {
    let datum = read1("(a\n  (b \"x\")\n\tc)");
    assert_eq!(
        datum.span,
        Span {
            start: 0,
            end: 16,
            line: 1,
            column: 1
        }
    );
    let DatumKind::List(items, None) = &datum.kind else {
        panic!("not a list: {datum:?}")
    };
    assert_eq!(
        items[1].span,
        Span {
            start: 5,
            end: 12,
            line: 2,
            column: 3
        }
    );
    let DatumKind::List(inner, None) = &items[1].kind else {
        panic!("not a list")
    };
    assert_eq!(
        inner[1].span,
        Span {
            start: 8,
            end: 11,
            line: 2,
            column: 6
        }
    );
    assert_eq!(
        items[2].span,
        Span {
            start: 14,
            end: 15,
            line: 3,
            column: 2
        }
    );
}

#[test]
fn atoms() {
    check("foo Foo |Foo| f\\oo", "FOO FOO |Foo| |FoO|");
    check(
        "1 -5 +5 1. 1/3 4/2 1.5 -.5e3 1e10",
        "1 -5 5 1 1/3 2 1.5 -500.0 1.0e10",
    );
    check("1+ 1- + - ...", "1+ 1- + - ...");
    check(
        "123456789012345678901234567890",
        "123456789012345678901234567890",
    );
    check("#xFF #b101 #o17 #36rZ #x-1/2", "255 5 15 35 -1/2");
    check(
        ":key cl:car cl-user::foo #:gensym",
        ":KEY CL:CAR CL-USER::FOO #:GENSYM",
    );
    check("\"a\\\"b\\\\c\\d\"", "\"a\\\"b\\\\cd\"");
    check("\"multi\nline\"", "\"multi\nline\"");
    check("#(1 \"two\" (3))", "#(1 \"two\" (3))");
    check("#()", "#()");
}

#[test]
fn characters() {
    check(
        "#\\a #\\A #\\Space #\\space #\\NEWLINE #\\Tab #\\(",
        "#\\a #\\A #\\Space #\\Space #\\Newline #\\Tab #\\(",
    );
    check("(#\\) #\\; #\\\" #\\\\)", "(#\\) #\\; #\\\" #\\\\)");
    check(
        "#\\é #\\λ #\\  #\\Rubout #\\Nul #\\Null #\\Page #\\Linefeed #\\Escape #\\Return #\\Backspace",
        "#\\é #\\λ #\\Space #\\Rubout #\\Nul #\\Nul #\\Page #\\Newline #\\Escape #\\Return #\\Backspace",
    );
    check("(#\\a)", "(#\\a)");
    check(
        "#\\λλ",
        "Malformed 1:1: unknown character name #\\λλ: expected a single character or one of Space, Newline, Tab, Return, Linefeed, Page, Backspace, Rubout, Nul, Escape, Bell, U+XXXX",
    );
    check("(#\\λ)", "(#\\λ)");
    check("#\\U+3BB #\\u+41", "#\\λ #\\A");
    check(
        "#\\Foo",
        "Malformed 1:1: unknown character name #\\Foo: expected a single character or one of Space, Newline, Tab, Return, Linefeed, Page, Backspace, Rubout, Nul, Escape, Bell, U+XXXX",
    );
}

#[test]
fn comments() {
    check("a ; comment (\nb", "A B");
    check("#| block ( |# a #| nested #| inner |# still |# b", "A B");
    check("(a #| x |# b)", "(A B)");
    check("(a ; c\n b)", "(A B)");
    check("#||# x", "X");
    // Whitespace is exactly space, tab, newline, return and page (form feed).
    check("a\u{c}b\tc\r\nd", "A B C D");
    check("#| a |# b #|# |# c", "B C");
}

#[test]
fn feature_conditionals() {
    check_features("#+mprof-lisp a #-mprof-lisp b c", &["MPROF-LISP"], "A C");
    check_features("#+:mprof-lisp a", &["MPROF-LISP"], "A");
    check_features("#+sbcl a", &["MPROF-LISP"], "");
    check_features("(a #+sbcl b c)", &["MPROF-LISP"], "(A C)");
    check_features("(a #-sbcl b c)", &["MPROF-LISP"], "(A B C)");
    check_features("#+(or sbcl mprof-lisp) y", &["MPROF-LISP"], "Y");
    check_features(
        "#+(and common-lisp mprof-lisp) y",
        &["MPROF-LISP", "COMMON-LISP"],
        "Y",
    );
    check_features(
        "#+(and common-lisp sbcl) y n",
        &["MPROF-LISP", "COMMON-LISP"],
        "N",
    );
    check_features("#+(:not sbcl) y", &["MPROF-LISP"], "Y");
    check_features("#+(not mprof-lisp) y n", &["MPROF-LISP"], "N");
    check_features("#+(or) y n", &[], "N");
    check_features("#+(and) y", &[], "Y");
    check_features("#+() y n", &[], "N");
    check_features("#+sbcl #+sbcl a b c", &[], "C");
    check_features("'#+sbcl a b", &[], "(COMMON-LISP:QUOTE B)");
    check_features("(a . #+sbcl b c)", &[], "(A . C)");
    // Skipped forms are read but not interpreted.
    check_features(
        "#-mprof-lisp (sb-ext:foo:bar 1/0 #\\NoSuchChar #xZZ #:a:b #S(x) #.(eval) ,x . .) ok",
        &["MPROF-LISP"],
        "OK",
    );
    // Unsupported dispatch macros: their argument is the skipped form; `#n#` is whole.
    check_features("#+sbcl #.x y", &[], "Y");
    check_features("#+sbcl #S(p :x 1) y", &[], "Y");
    check_features("#+sbcl #1=(a) y", &[], "Y");
    check_features("#+sbcl #1# y", &[], "Y");
    check_features("(#+sbcl #1# y)", &[], "(Y)");
    check_features(
        "#+sbcl (a",
        &[],
        "Incomplete 1:10: end of input: expected a closing ')' for the list opened at 1:8",
    );
    check_features(
        "#+sbcl",
        &[],
        "Incomplete 1:7: end of input: expected a form after #+sbcl at 1:1",
    );
    check_features(
        "#+",
        &[],
        "Incomplete 1:3: end of input: expected a feature expression after #+ at 1:1",
    );
    check_features(
        "(#+sbcl)",
        &[],
        "Malformed 1:8: expected a form after #+sbcl at 1:2, found ')'",
    );
    check_features(
        "#+1 a",
        &[],
        "Malformed 1:3: expected a feature expression (a symbol, or a list starting with :and, :or or :not), found 1",
    );
    check_features(
        "#+(xor a) b",
        &[],
        "Malformed 1:3: unknown feature operator XOR: expected :and, :or or :not",
    );
    check_features(
        "#+(not a b) c",
        &[],
        "Malformed 1:3: (:not ...) in a feature expression takes exactly one feature, found 2",
    );
    check_features(
        "#-sbcl #<foo>",
        &[],
        "Malformed 1:8: #< starts an unreadable object (printed as #<...>): it cannot be read back",
    );
}

#[test]
fn incomplete_input() {
    check(
        "(a b",
        "Incomplete 1:5: end of input: expected a closing ')' for the list opened at 1:1",
    );
    check(
        "(a\n (b",
        "Incomplete 2:4: end of input: expected a closing ')' for the list opened at 2:2",
    );
    check(
        "#(a",
        "Incomplete 1:4: end of input: expected a closing ')' for the vector opened at 1:1",
    );
    check(
        "(a . ",
        "Incomplete 1:6: end of input: expected a form after the dot at 1:4 and a closing ')' for the list opened at 1:1",
    );
    check(
        "\"abc",
        "Incomplete 1:5: end of input inside a string opened at 1:1: expected a closing '\"'",
    );
    check(
        "#| a #| b |#",
        "Incomplete 1:13: end of input inside a #| comment opened at 1:1: expected a closing '|#'",
    );
    check(
        "'",
        "Incomplete 1:2: end of input: expected a form after ' at 1:1",
    );
    check(
        "`",
        "Incomplete 1:2: end of input: expected a form after ` at 1:1",
    );
    check(
        "`(,",
        "Incomplete 1:4: end of input: expected a form after , at 1:3",
    );
    check(
        "`(,@",
        "Incomplete 1:5: end of input: expected a form after ,@ at 1:3",
    );
    check(
        "#'",
        "Incomplete 1:3: end of input: expected a form after #' at 1:1",
    );
    check(
        "|abc",
        "Incomplete 1:5: end of input inside |...| in the symbol starting at 1:1: expected a closing '|'",
    );
    check(
        "abc\\",
        "Incomplete 1:5: end of input after '\\': expected the character it escapes",
    );
    check(
        "#",
        "Incomplete 1:2: end of input after '#': expected a dispatch character such as ( ' \\ : + - x b o",
    );
    check(
        "#\\",
        "Incomplete 1:3: end of input after #\\: expected a character or character name",
    );
    check(
        "#x",
        "Incomplete 1:3: end of input after #x: expected a number in radix 16",
    );
}

#[test]
fn malformed_input() {
    check(
        ")",
        "Malformed 1:1: unexpected ')': there is no open list to close",
    );
    check(
        "a)",
        "A Malformed 1:2: unexpected ')': there is no open list to close",
    );
    check(
        "#x)",
        "Malformed 1:1: expected a rational number in radix 16 after #x, found nothing",
    );
    check(
        "#37r1",
        "Malformed 1:1: the radix in #37r must be a decimal number from 2 to 36",
    );
    check(
        "#S(point)",
        "Malformed 1:1: structure literals #S(...) are not supported",
    );
    check(
        "#P(a)",
        "Malformed 1:3: #P must be followed by a string (a namestring such as #P\"/tmp/x.lisp\")",
    );
    check("#Ax", "Malformed 1:1: #A needs the array's rank, as in #2A((1 2) (3 4))");
    check("#z", "Malformed 1:1: unknown dispatch macro #z");
    check(
        "# a",
        "Malformed 1:1: '#' followed by #\\Space is not valid syntax: expected a dispatch character such as ( ' \\ : + - x b o",
    );
    check(
        "#:a:b",
        "Malformed 1:1: the symbol after #: cannot have a package prefix, found #:a:b",
    );
    check(
        "1/0",
        "Malformed 1:1: division by zero in the ratio 1/0: the denominator is 0",
    );
    check(
        "(a\n  b:c:d)",
        "Malformed 2:3: too many colons in the symbol b:c:d",
    );
}

#[test]
fn read_eval_and_pathnames_are_prefixes() {
    let options = ReadOptions::default();
    assert_eq!(render("#.(+ 1 2)", &options), "(MPROF-SYSTEM:%READ-EVAL (+ 1 2))");
    // A multi-byte dispatch character is an unknown dispatch, not a panic.
    assert_eq!(render("#〕", &options), "Malformed 1:1: unknown dispatch macro #〕");
    assert_eq!(render("#2〕", &options), "Malformed 1:1: unknown dispatch macro #2〕");
    assert_eq!(
        render("#p\"/tmp/x\"", &options),
        "(MPROF-SYSTEM:%READ-EVAL (MPROF-SYSTEM:%PATHNAME-LITERAL \"/tmp/x\"))"
    );
    // Suppressed by a feature expression, each is skipped with its argument.
    assert_eq!(
        render("(#+nope #.(x) #-nope #P\"y\" #+nope #2A((1)) z)", &options),
        "((MPROF-SYSTEM:%READ-EVAL (MPROF-SYSTEM:%PATHNAME-LITERAL \"y\")) Z)"
    );
}

#[test]
fn depth_limit_and_deep_nesting() {
    let deep = |n: usize| format!("{}x{}", "(".repeat(n), ")".repeat(n));
    let options = ReadOptions {
        max_depth: 10,
        ..ReadOptions::default()
    };
    assert_eq!(render(&deep(10), &options), "((((((((((X))))))))))");
    assert_eq!(
        render(&deep(11), &options),
        "Malformed 1:11: forms nested more than 10 levels deep (the reader's limit, ReadOptions::max_depth)"
    );
    assert_eq!(
        render(&"'".repeat(11), &options).split(':').next(),
        Some("Malformed 1")
    );
    // A million levels read by default, and drop (at the end) without recursion.
    let million = read_all_default(&deep(1_000_000)).unwrap();
    assert_eq!(million[0].span.end, 2_000_001);
    // 100,000 open parentheses: an error value, no stack overflow.
    let e = read_all_default(&"(".repeat(100_000)).unwrap_err();
    assert_eq!(e.kind, ReadErrorKind::Incomplete);
    // Without a limit the reader itself still copes.
    let unlimited = ReadOptions {
        max_depth: usize::MAX,
        ..ReadOptions::default()
    };
    let e = Reader::new(&"(".repeat(100_000), &unlimited)
        .read()
        .unwrap_err();
    assert_eq!(e.kind, ReadErrorKind::Incomplete);
    let datum = Reader::new(&deep(100_000), &unlimited)
        .read()
        .unwrap()
        .unwrap();
    assert_eq!(datum.span.end, 200_001);
    // Skipped forms have no depth limit: nothing of them is kept.
    assert_eq!(render(&format!("#+nope {} y", deep(50)), &options), "Y");
}

#[test]
fn reader_continues_after_each_datum() {
    let options = ReadOptions::default();
    let src = "(a) b ; c\n";
    let mut reader = Reader::new(src, &options);
    assert_eq!(
        reader.read().unwrap().map(|d| d.to_string()),
        Some("(A)".to_string())
    );
    assert_eq!(reader.offset(), 3);
    assert_eq!(
        reader.read().unwrap().map(|d| d.to_string()),
        Some("B".to_string())
    );
    assert_eq!(reader.read().unwrap(), None);
    let mut reader = Reader::starting_at(src, 3, &options).unwrap();
    assert_eq!(
        reader.read().unwrap().map(|d| d.span),
        Some(Span {
            start: 4,
            end: 5,
            line: 1,
            column: 5
        })
    );
    let e = Reader::starting_at("λ", 1, &options)
        .err()
        .map(|e| e.message);
    assert_eq!(
        e.as_deref(),
        Some(
            "cannot start reading at byte 1: it is not the start of a character in the 2-byte source"
        )
    );
}

#[test]
fn errors_name_the_file() {
    let options = ReadOptions {
        file: Some("init.lisp".into()),
        ..ReadOptions::default()
    };
    let e = Reader::new("\n  )", &options).read().unwrap_err();
    assert_eq!(
        e.to_string(),
        "init.lisp:2:3: unexpected ')': there is no open list to close"
    );
    assert_eq!(e.offset, 3);
}

/// Whatever the reader produces, printing it and reading it back gives the same datum
/// (spans aside): the printer and reader agree.
#[test]
fn printed_datums_read_back() {
    let src = r#"(defun f (x &optional (y 1/2)) "doc \"q\"" (list* 'a #'b `(,x ,@y) #(1 2.5 -3e-7) #\Space #\a :k p::q #:g |Mixed Case| |1| \. -0.0 1.0e20 123456789012345678901234567890 (a . b)))"#;
    let first = read1(src);
    let printed = first.to_string();
    let second = read1(&printed);
    assert_eq!(
        strip_spans(first),
        strip_spans(second),
        "printed as {printed}"
    );
}

fn strip_spans(datum: Datum) -> DatumKind {
    fn strip(d: &mut Datum) {
        d.span = Span::default();
        match &mut d.kind {
            DatumKind::List(items, tail) => {
                items.iter_mut().for_each(strip);
                if let Some(t) = tail {
                    strip(t);
                }
            }
            DatumKind::Vector(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut datum = datum;
    strip(&mut datum);
    datum.kind
}
