//! What `mprof` says when it is used wrongly: clap's whole message on one line (the
//! missing arguments themselves, and the usage), and a kind of data asked for by name
//! that the file does not hold is an error rather than a blank report.

use mprof_engine::*;

mod common;

#[test]
fn missing_arguments_are_named_with_the_usage() {
    let (code, out, err) = common::mprof(&["report"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(err, "mprof: the following required arguments were not provided: <FILES>... (usage: mprof report <FILES>...)\n");
    let (code, _, err) = common::mprof(&["export"]);
    assert_eq!(code, 2);
    assert!(err.contains("--format <FORMAT> <FILE>"), "{err}");
}

#[test]
fn showing_a_kind_the_file_lacks_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.mprof");
    let mut bytes = Vec::new();
    common::widgets().write(&mut bytes).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let file = path.to_string_lossy().into_owned();
    let (code, out, err) = common::mprof(&["report", &file, "--show", "time,io"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("holds no time (record it with mprof-lisp --time), no I/O"), "{err}");
    // What it holds prints; `all` asks for whatever is there.
    let (code, out, _) = common::mprof(&["report", &file, "--show", "memory"]);
    assert_eq!(code, 0);
    assert!(out.contains("make_red_widget"));
    let (code, _, _) = common::mprof(&["report", &file, "--show", "all"]);
    assert_eq!(code, 0);
    let empty = Profile::empty(Language::C, CategoryScheme::c_sizes());
    let mut bytes = Vec::new();
    empty.write(&mut bytes).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let (code, _, err) = common::mprof(&["report", &file, "--show", "memory"]);
    assert_eq!(code, 1);
    assert!(err.contains("holds no memory"), "{err}");
}

#[test]
fn dash_as_the_output_writes_to_standard_output_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.mprof");
    let mut bytes = Vec::new();
    common::widgets().write(&mut bytes).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let file = path.to_string_lossy().into_owned();
    let cwd = std::env::current_dir().unwrap();
    for args in [
        vec!["export", "--format", "json", "-o", "-", &file],
        vec!["export", "--format", "folded", "-o", "-", &file],
        vec!["flamegraph", &file, "-o", "-"],
        vec!["merge", &file, &file, "-o", "-"],
    ] {
        let (code, out, err) = common::mprof(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(!out.is_empty(), "{args:?} wrote nothing to standard output");
        assert!(!cwd.join("-").exists(), "{args:?} wrote a file named -");
    }
}
