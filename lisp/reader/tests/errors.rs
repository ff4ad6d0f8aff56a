//! Snapshots of every reader error message, as a user sees it (`file:line:column: message`),
//! with its kind. The inputs cover each message the reader can produce; reading the
//! snapshot is the review of the wording.

use mprof_reader::{ReadOptions, read_all};

fn table(cases: &[&str]) -> String {
    let options = ReadOptions {
        file: Some("example.lisp".to_string()),
        ..ReadOptions::default()
    };
    let mut out = String::new();
    for src in cases {
        let outcome = match read_all(src, &options) {
            Ok(forms) => format!("ok, {} form(s)", forms.len()),
            Err(e) => format!("{:?}: {e}", e.kind),
        };
        out.push_str(&format!("{src:?}\n    {outcome}\n"));
    }
    out
}

#[test]
fn incomplete_messages() {
    insta::assert_snapshot!(table(&[
        "(defun f (x)\n  (+ x 1)",
        "#(1 2",
        "(a .",
        "\"unterminated\nstring",
        "#| never #| closed |#",
        "'",
        "`(a ,",
        "`(a ,@",
        "#'",
        "|Mixed",
        "foo\\",
        "#",
        "#12",
        "#\\",
        "#x",
        "#+",
        "#+mprof-lisp",
        "#-(or sbcl ccl)",
    ]));
}

#[test]
fn malformed_messages() {
    insta::assert_snapshot!(table(&[
        ")",
        "(a))",
        "(a . b c)",
        "(. a)",
        "(a . . b)",
        ". a",
        "(a .)",
        "(')",
        "(#+mprof-lisp)",
        "(#+)",
        "#\\Foo",
        "#\\U+D800",
        "#xZZ",
        "#b102",
        "#x1.5",
        "#x)",
        "#37r1",
        "#x1/0",
        "1/0",
        "1e999",
        "a:b:c",
        "pkg:",
        "#:a:b",
        "a\u{7}b",
        ",x",
        "`,@x",
        "`(a . ,@b)",
        "#S(point :x 1)",
        "(#.)",
        "#C(1 a)",
        "#*102",
        "#p(a)",
        "#A((1))",
        "#2A((1) 2)",
        "(#1=)",
        "#<FUNCTION>",
        "#z",
        "# a",
        "#+1 a",
        "#+\"x\" a",
        "#+(xor a) b",
        "#+(not) b",
    ]));
}

#[test]
fn nesting_limit_message() {
    let options = ReadOptions {
        max_depth: 3,
        ..ReadOptions::default()
    };
    let e = read_all("(a (b (c (d))))", &options).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"1:10: forms nested more than 3 levels deep (the reader's limit, ReadOptions::max_depth)");
}

#[test]
fn long_tokens_are_shortened_in_messages() {
    let long_name = format!("#\\{}", "x".repeat(100_000));
    let colons = format!("{}:b:c", "a".repeat(100));
    insta::assert_snapshot!(table(&[&long_name[..60], &colons]));
    let e = read_all(&long_name, &ReadOptions::default()).unwrap_err();
    assert!(
        e.message.len() < 300,
        "message of {} bytes",
        e.message.len()
    );
}
