//! `mprof listing`: the annotated listing printed later from a profile file and the
//! program's source, with counts known by construction (the profile is built here with
//! the engine), and the refusals a user meets: a changed source, a profile without
//! counts, a source the profile does not know.

use std::process::Command;

use mprof_engine::exec::{CountKind, CountPoint, SourceFile, source_hash};
use mprof_engine::{CategoryScheme, Language, Profile};

const TEXT: &str = "(defun f (x)\n  (if x\n      (g)\n      (h)))\n";

fn mprof(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mprof")).args(args).current_dir(dir).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// F entered 7 times, its first branch taken 3 times and its second 4 times.
fn write_profile(dir: &std::path::Path, counted: bool) {
    let mut p = Profile::empty(Language::Lisp, CategoryScheme::lisp());
    if counted {
        p.exec.sources.push(SourceFile { path: "f.lisp".into(), bytes: TEXT.len() as u64, hash: source_hash(TEXT.as_bytes()) });
        let at = |s: &str| TEXT.find(s).unwrap() as u64;
        for (start, end, line, kind, count) in [
            (0, TEXT.trim_end().len() as u64, 1, CountKind::Entry, 7u64),
            (at("(g)"), at("(g)") + 3, 3, CountKind::Branch, 3),
            (at("(h)"), at("(h)") + 3, 4, CountKind::Branch, 4),
        ] {
            p.exec.counts.push(CountPoint { source: 0, start, end, line, column: 1, kind, function: "F".into(), depth: 0, count });
        }
    }
    let mut bytes = Vec::new();
    p.write(&mut bytes).unwrap();
    std::fs::write(dir.join("f.mprof"), bytes).unwrap();
}

#[test]
fn the_listing_shows_each_branch_with_its_own_count() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.lisp"), TEXT).unwrap();
    write_profile(dir.path(), true);
    for args in [&["listing", "f.mprof", "f.lisp"][..], &["listing", "f.mprof"][..]] {
        let (code, out, err) = mprof(dir.path(), args);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("7.---|(defun f (x)"), "{out}");
        assert!(out.contains("3.---|      (g)"), "{out}");
        assert!(out.contains("4.---|      (h)"), "{out}");
    }
}

#[test]
fn a_changed_source_a_profile_without_counts_and_an_unknown_source_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_profile(dir.path(), true);
    std::fs::write(dir.path().join("f.lisp"), TEXT.replace("(g)", "(k)")).unwrap();
    let (code, out, err) = mprof(dir.path(), &["listing", "f.mprof", "f.lisp"]);
    assert_ne!(code, 0);
    assert!(out.is_empty() && err.contains("changed since the run"), "{err}");

    std::fs::write(dir.path().join("other.lisp"), TEXT).unwrap();
    let (code, _, err) = mprof(dir.path(), &["listing", "f.mprof", "other.lisp"]);
    assert_ne!(code, 0);
    assert!(err.starts_with("mprof: "), "{err}");

    write_profile(dir.path(), false);
    let (code, _, err) = mprof(dir.path(), &["listing", "f.mprof"]);
    assert_ne!(code, 0);
    assert!(err.contains("holds no execution counts"), "{err}");
}
