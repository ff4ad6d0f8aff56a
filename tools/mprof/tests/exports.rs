//! Exports (folded, JSON, pprof, flame graph) and the `mprof` command line.

mod common;

use std::io::Read;

use common::mprof;
use mprof_export::formats::{self, FoldedValue};
use mprof_engine::*;

#[test]
fn folded_stacks_of_the_paper_example() {
    let p = common::widgets();
    let text = format!(
        "bytes:\n{}allocs:\n{}kept:\n{}",
        formats::folded(&p, FoldedValue::Bytes).unwrap(),
        formats::folded(&p, FoldedValue::Allocs).unwrap(),
        formats::folded(&p, FoldedValue::KeptBytes).unwrap()
    );
    insta::assert_snapshot!(text);
}

#[test]
fn json_export_of_the_figure7_case() {
    insta::assert_snapshot!(formats::json(&common::figure7()).unwrap());
}

#[test]
fn pprof_export_is_gzipped_profile_proto_with_the_right_sums() {
    let p = common::widgets();
    let gz = formats::pprof_gz(&p).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip magic");
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).unwrap();
    let decoded: formats::pprof::Profile = prost::Message::decode(&raw[..]).unwrap();
    assert_eq!(decoded, formats::pprof_message(&p).unwrap());
    let names: Vec<&str> = decoded
        .sample_type
        .iter()
        .map(|t| decoded.string_table[t.r#type as usize].as_str())
        .collect();
    assert_eq!(names, ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"]);
    let sum = |k: usize| decoded.sample.iter().map(|s| s.value[k]).sum::<i64>();
    assert_eq!((sum(0), sum(1), sum(2), sum(3)), (10000, 2_040_000, 5019, 1_023_876));
    // Leaf first: every sample's first location is make_widget.
    for s in &decoded.sample {
        let loc = &decoded.location[s.location_id[0] as usize - 1];
        let func = &decoded.function[loc.line[0].function_id as usize - 1];
        assert_eq!(decoded.string_table[func.name as usize], "make_widget");
        assert_eq!(s.location_id.len(), 3);
    }
}

#[test]
fn flamegraph_draws_every_function() {
    let svg = String::from_utf8(formats::flamegraph(&common::widgets(), FoldedValue::Bytes, "t").unwrap()).unwrap();
    assert!(svg.starts_with("<?xml"));
    for name in ["main", "make_red_widget", "make_blue_widget", "make_widget"] {
        assert!(svg.contains(name), "{name} missing");
    }
}

#[test]
fn command_line_report_merge_export_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let mut bytes = Vec::new();
    common::widgets().write(&mut bytes).unwrap();
    std::fs::write(path("w.mprof"), &bytes).unwrap();

    let (code, report, _) = mprof(&["report", &path("w.mprof"), "--tables", "leak,bins"]);
    assert_eq!(code, 0);
    assert!(report.contains("5019 1023876 (99) || > main > make_red_widget > make_widget"));
    assert!(!report.contains("Allocation call graph"));

    let (code, _, err) = mprof(&["merge", &path("w.mprof"), &path("w.mprof"), "-o", &path("m.mprof")]);
    assert_eq!((code, err.as_str()), (0, ""));
    let merged = Profile::read(&std::fs::read(path("m.mprof")).unwrap()).unwrap();
    let mut expected = common::widgets();
    expected.merge(&common::widgets()).unwrap();
    assert_eq!(merged, expected);

    let (code, folded, _) = mprof(&["export", &path("w.mprof"), "--format", "folded"]);
    assert_eq!(code, 0);
    assert_eq!(folded, formats::folded(&common::widgets(), FoldedValue::Bytes).unwrap());
    let (code, _, _) = mprof(&["export", &path("w.mprof"), "--format", "pprof", "-o", &path("w.pb.gz")]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(path("w.pb.gz")).unwrap()[..2], [0x1f, 0x8b]);
    let (code, _, _) = mprof(&["flamegraph", &path("w.mprof"), "-o", &path("w.svg")]);
    assert_eq!(code, 0);
    assert!(std::fs::read_to_string(path("w.svg")).unwrap().contains("make_widget"));

    std::fs::write(path("cut.mprof"), &bytes[..40]).unwrap();
    let runs = [
        vec!["report".to_string(), path("missing.mprof")],
        vec!["report".to_string(), path("cut.mprof")],
        vec!["report".to_string(), path("w.mprof"), "--tables".into(), "leaks".into()],
        vec!["export".to_string(), path("w.mprof"), "--format".into(), "xml".into()],
        vec!["frobnicate".to_string()],
    ];
    insta::assert_snapshot!(common::one_line_errors(dir.path(), &runs));
}

#[test]
fn report_as_json_carries_the_tables_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.mprof");
    let mut bytes = Vec::new();
    common::widgets().write(&mut bytes).unwrap();
    std::fs::write(&file, bytes).unwrap();
    let (code, out, err) = mprof(&["report", &file.to_string_lossy(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["format"], "mprof-report");
    // The paper's example: 10,000 widgets of 204 bytes, the 5,019 red ones kept.
    let kept_total: u64 = doc["kept"].as_array().unwrap().iter().map(|k| k["kept_bytes"].as_u64().unwrap()).sum();
    assert_eq!(kept_total, 5019 * 204);
    let make = doc["functions"].as_array().unwrap().iter().find(|f| f["name"] == "make_widget").expect("make_widget");
    let self_bytes: u64 = make["self"].as_object().unwrap().values().map(|c| c["bytes"].as_u64().unwrap()).sum();
    assert_eq!(self_bytes, 10_000 * 204);
    let callers: Vec<&str> = make["callers"].as_array().unwrap().iter().map(|c| c["function"].as_str().unwrap()).collect();
    assert_eq!(callers.len(), 2, "{callers:?}");
    let (code, _, err) = mprof(&["report", &file.to_string_lossy(), "--format", "yaml"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown report format"), "{err}");
}

#[test]
fn pprof_locations_of_c_frames_carry_their_source_line() {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions { call_sites: true, ..MonitorOptions::default() });
    let main = m.function(FunctionInfo { name: "main".into(), file: Some("/src/prog.c".into()), line: Some(10), module: None });
    let make = m.function(FunctionInfo { name: "make".into(), file: Some("/src/prog.c".into()), line: Some(3), module: None });
    // libmprof records each frame's line as its call site: main called make at line 14,
    // and make called malloc at line 5.
    let top = m.child(NodeId::ROOT, main, 14);
    let node = m.child(top, make, 5);
    m.record_alloc(node, 0, 16, Bin::Size(16));
    let decoded = formats::pprof_message(&m.to_profile()).unwrap();
    let line_of = |name: &str| {
        let f = decoded.function.iter().find(|f| decoded.string_table[f.name as usize] == name).unwrap();
        decoded.location.iter().find(|l| l.line[0].function_id == f.id).map(|l| l.line[0].line).unwrap()
    };
    assert_eq!((line_of("main"), line_of("make")), (14, 5));
    let file = decoded.function.iter().map(|f| decoded.string_table[f.filename as usize].as_str()).find(|f| !f.is_empty());
    assert_eq!(file, Some("/src/prog.c"), "the whole path");
}

#[test]
fn exports_give_relative_source_files_as_full_paths_from_the_run_directory() {
    let mut p = common::widgets();
    p.functions[0].file = Some("src/widgets.lisp".into());
    p.functions[1].file = Some("/abs/other.lisp".into());
    p.metadata.push(("directory".into(), "/home/me/project".into()));
    let json: serde_json::Value = serde_json::from_str(&formats::json(&p).unwrap()).unwrap();
    assert_eq!(json["functions"][0]["file"], "/home/me/project/src/widgets.lisp");
    assert_eq!(json["functions"][1]["file"], "/abs/other.lisp", "absolute paths stay");
    // Without the directory, the file is as recorded.
    p.metadata.retain(|(k, _)| k != "directory");
    let json: serde_json::Value = serde_json::from_str(&formats::json(&p).unwrap()).unwrap();
    assert_eq!(json["functions"][0]["file"], "src/widgets.lisp");
}
