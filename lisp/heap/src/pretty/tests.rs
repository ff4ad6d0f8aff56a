//! The engine's layouts against SBCL's (expected texts printed by SBCL 2.x
//! for the same sequence of operations).

use super::*;

fn engine(margin: usize) -> Engine {
    Engine::new(Config { line_length: margin, miser_width: None, lines: None, readably: false, start_column: 0 })
}

fn done(mut e: Engine) -> String {
    e.finish();
    e.take_ready()
}

/// `pprint-fill` / `pprint-linear` of a list of symbols, as SBCL lays them out.
fn list(e: &mut Engine, items: &[&str], kind: NewlineKind) {
    e.start_block("(", false, ")");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            e.write_str(" ");
            e.newline(kind);
        }
        e.write_str(item);
    }
    e.end_block();
}

#[test]
fn fill_packs_lines_and_linear_breaks_all() {
    let items = ["AAAA"; 8];
    let mut e = engine(20);
    list(&mut e, &items, NewlineKind::Fill);
    assert_eq!(done(e), "(AAAA AAAA AAAA\n AAAA AAAA AAAA\n AAAA AAAA)");
    let mut e = engine(20);
    list(&mut e, &items, NewlineKind::Linear);
    assert_eq!(done(e), "(AAAA\n AAAA\n AAAA\n AAAA\n AAAA\n AAAA\n AAAA\n AAAA)");
    let mut e = engine(20);
    list(&mut e, &items[..2], NewlineKind::Linear);
    assert_eq!(done(e), "(AAAA AAAA)");
}

#[test]
fn print_lines_cuts_with_the_suffixes() {
    let items = ["AAAA"; 17];
    let mut e = Engine::new(Config { line_length: 20, miser_width: None, lines: Some(2), readably: false, start_column: 0 });
    list(&mut e, &items, NewlineKind::Fill);
    assert!(e.abbreviated());
    assert_eq!(done(e), "(AAAA AAAA AAAA\n AAAA AAAA AAAA ..)");
}

#[test]
fn literal_newlines_take_only_the_per_line_prefix() {
    let mut e = engine(80);
    e.start_block("(", false, "");
    e.indent(IndentKind::Block, 3);
    e.write_str("ab");
    e.newline(NewlineKind::Mandatory);
    e.write_str("cd\nef");
    e.end_block();
    assert_eq!(done(e), "(ab\n    cd\nef");
    let mut e = engine(80);
    e.start_block(";; ", true, "");
    e.write_str("ab");
    e.indent(IndentKind::Block, 2);
    e.newline(NewlineKind::Mandatory);
    e.write_str("cd\nef");
    e.end_block();
    assert_eq!(done(e), ";; ab\n;;   cd\n;; ef");
}

#[test]
fn tabs_as_sbcl() {
    // (kind, colnum, colinc, spaces SBCL inserts after "[abcdef")
    let cases = [
        (TabKind::Line, 0, 1, 1),
        (TabKind::Line, 1, 4, 2),
        (TabKind::Line, 3, 4, 4),
        (TabKind::Line, 5, 0, 0),
        // At the column already: one colinc further (CLHS 22.3.6.1).
        (TabKind::Line, 7, 3, 3),
        (TabKind::Section, 0, 4, 2),
        (TabKind::Section, 5, 4, 3),
        (TabKind::LineRelative, 3, 4, 5),
        (TabKind::LineRelative, 1, 0, 1),
        (TabKind::SectionRelative, 0, 4, 2),
        (TabKind::SectionRelative, 3, 4, 6),
    ];
    for (kind, colnum, colinc, spaces) in cases {
        let mut e = engine(80);
        e.start_block("[", false, "");
        e.write_str("abcdef");
        e.tab(kind, colnum, colinc);
        e.write_str("|");
        e.end_block();
        assert_eq!(done(e), format!("[abcdef{}|", " ".repeat(spaces)), "{kind:?} {colnum} {colinc}");
    }
}

#[test]
fn long_output_streams_in_pieces() {
    // A 100,000-item fill list: the engine never holds more than a few lines.
    let mut e = engine(80);
    e.start_block("(", false, ")");
    let mut out = String::new();
    let mut most = 0;
    for i in 0..100_000 {
        if i > 0 {
            e.write_str(" ");
            e.newline(NewlineKind::Fill);
        }
        e.write_str("ITEM");
        most = most.max(e.buffer.len());
        out.push_str(&e.take_ready());
    }
    e.end_block();
    out.push_str(&done(e));
    assert!(most < 200, "undecided text grew to {most}");
    assert_eq!(out.lines().count(), 100_000usize.div_ceil(15));
    assert!(out.lines().all(|l| l.len() <= 80));
}

#[test]
fn blanks_before_a_break_are_dropped_even_past_the_margin() {
    // SBCL: (format nil "~:@<~@{~A~^ ~_~}~:>" 1 2 3) with a margin of 2.
    let mut e = engine(2);
    e.start_block("(", false, ")");
    for (i, item) in ["1", "2", "3"].iter().enumerate() {
        if i > 0 {
            e.newline(NewlineKind::Linear);
        }
        e.write_str(item);
        if i < 2 {
            e.write_str(" ");
        }
    }
    e.end_block();
    assert_eq!(done(e), "(1\n 2\n 3)");
}
