//! The public entry points as the evaluator and the REPL use them: `read_one` to step
//! through a stream, `read_all` for files, `completeness` for the line editor.

use mprof_reader::{
    Completeness, DatumKind, PackagePrefix, ReadErrorKind, ReadOptions, SymbolName, completeness,
    read_all, read_one,
};

#[test]
fn read_one_steps_through_a_source() {
    let options = ReadOptions::default();
    let src = "(a 1) ; first\n  \"two\" #| c |#  ";
    let Ok(Some((first, end))) = read_one(src, 0, &options) else {
        panic!("no first datum")
    };
    assert_eq!((first.to_string(), end), ("(A 1)".to_string(), 5));
    let Ok(Some((second, end))) = read_one(src, end, &options) else {
        panic!("no second datum")
    };
    assert_eq!(second.kind, DatumKind::String("two".to_string()));
    assert_eq!((second.span.line, second.span.column, end), (2, 3, 21));
    assert_eq!(read_one(src, end, &options), Ok(None));
    assert_eq!(read_one(src, src.len(), &options), Ok(None));
    let past_end = read_one(src, src.len() + 1, &options).unwrap_err();
    assert_eq!(past_end.kind, ReadErrorKind::Malformed);
}

#[test]
fn read_one_skips_conditionalized_forms() {
    let options = ReadOptions {
        features: vec!["MPROF-LISP".into()],
        ..ReadOptions::default()
    };
    let src = "#+sbcl (sb-only) #-mprof-lisp x";
    assert_eq!(read_one(src, 0, &options), Ok(None));
}

#[test]
fn read_all_reads_a_file() {
    let src =
        "(in-package :cl-user)\n(defun square (x) (* x x))\n#+mprof-lisp (print (square 3))\n";
    let options = ReadOptions {
        file: Some("sq.lisp".into()),
        ..ReadOptions::default()
    };
    let forms = read_all(src, &options).unwrap();
    let printed: Vec<String> = forms.iter().map(|f| f.to_string()).collect();
    assert_eq!(
        printed,
        [
            "(IN-PACKAGE :CL-USER)",
            "(DEFUN SQUARE (X) (* X X))",
            "(PRINT (SQUARE 3))"
        ]
    );
    assert_eq!(forms[2].span.line, 3);
    assert_eq!(forms[2].span.column, 14);
    let e = read_all("(ok)\n(bad", &options).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sq.lisp:2:5: end of input: expected a closing ')' for the list opened at 2:1"
    );
}

#[test]
fn reader_macros_expand_to_the_contract_symbols() {
    let forms = read_all("'x #'f `(a ,b ,@c)", &ReadOptions::default()).unwrap();
    let head = |i: usize| match &forms[i].kind {
        DatumKind::List(items, None) => items[0].as_symbol().cloned(),
        _ => None,
    };
    assert_eq!(
        head(0),
        Some(SymbolName::new(
            PackagePrefix::External("COMMON-LISP".into()),
            "QUOTE"
        ))
    );
    assert_eq!(
        head(1),
        Some(SymbolName::new(
            PackagePrefix::External("COMMON-LISP".into()),
            "FUNCTION"
        ))
    );
    assert_eq!(
        head(2),
        Some(SymbolName::new(
            PackagePrefix::External("MPROF-SYSTEM".into()),
            "BACKQUOTE"
        ))
    );
    assert_eq!(
        forms[2].to_string(),
        "(MPROF-SYSTEM:BACKQUOTE (A (MPROF-SYSTEM:UNQUOTE B) (MPROF-SYSTEM:UNQUOTE-SPLICING C)))"
    );
}

#[test]
fn completeness_for_the_repl() {
    fn kind(src: &str) -> &'static str {
        match completeness(src) {
            Completeness::Complete => "complete",
            Completeness::Incomplete => "incomplete",
            Completeness::Malformed(_) => "malformed",
        }
    }
    let cases = [
        ("", "complete"),
        ("   ; just a comment", "complete"),
        ("(+ 1 2)", "complete"),
        ("(+ 1 2) (car", "incomplete"),
        ("(defun f (x)\n", "incomplete"),
        ("(format t \"a ) b", "incomplete"),
        ("(list #\\) 1", "incomplete"),
        ("#| comment", "incomplete"),
        ("'", "incomplete"),
        ("`(a ,", "incomplete"),
        ("#'", "incomplete"),
        ("#+mprof-lisp", "incomplete"),
        ("#-mprof-lisp (a", "incomplete"),
        ("|sym", "incomplete"),
        ("(a))", "malformed"),
        (")", "malformed"),
        ("#\\Nonsense", "malformed"),
        ("(a . b c", "malformed"),
        ("#.(x)", "complete"),
        ("#.(x", "incomplete"),
        ("#P(x)", "malformed"),
    ];
    for (src, expected) in cases {
        assert_eq!(kind(src), expected, "completeness of {src:?}");
    }
    let Completeness::Malformed(e) = completeness("(a\n  ))") else {
        panic!("expected malformed")
    };
    assert_eq!((e.line, e.column, e.offset), (2, 4, 6));
}

#[test]
fn read_one_at_resumes_with_known_positions() {
    use mprof_reader::{Position, read_one_at};
    let options = ReadOptions::default();
    let src = "(a)\n  (b\n c) ; x\n\"λ\" d";
    let mut at = Position::START;
    let mut seen = Vec::new();
    while let Ok(Some((datum, next))) = read_one_at(src, at, &options) {
        // Same spans as reading the whole text at once.
        let (whole, _) = read_one(src, at.offset, &options).unwrap().unwrap();
        assert_eq!(datum, whole);
        seen.push(format!(
            "{} {}:{}",
            datum, datum.span.line, datum.span.column
        ));
        at = next;
    }
    assert_eq!(seen, ["(A) 1:1", "(B C) 2:3", "\"λ\" 4:1", "D 4:5"]);
    assert_eq!(
        at,
        Position {
            offset: src.len(),
            line: 4,
            column: 6
        }
    );
    assert_eq!(read_one_at(src, at, &options), Ok(None));
}

#[test]
fn spans_count_characters_and_lines_across_crlf_and_unicode() {
    let src = "(α\r\n  \"ü\" β)\r\n\t:γ";
    let forms = read_all(src, &ReadOptions::default()).unwrap();
    let DatumKind::List(items, None) = &forms[0].kind else {
        panic!("not a list: {:?}", forms[0])
    };
    let at = |d: &mprof_reader::Datum| (d.span.line, d.span.column, &src[d.span.start..d.span.end]);
    assert_eq!(at(&items[0]), (1, 2, "α"));
    assert_eq!(at(&items[1]), (2, 3, "\"ü\""));
    assert_eq!(at(&items[2]), (2, 7, "β"));
    assert_eq!(at(&forms[1]), (3, 2, ":γ"));
    assert_eq!(forms[1].to_string(), ":Γ");
}
