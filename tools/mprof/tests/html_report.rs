//! `mprof html`: the page is one self-contained file whose embedded data carries the
//! profile's trees (parent links), samples and tables with the numbers the text
//! report prints, no profile text can break out of its `<script>` element, and the
//! command line writes files, standard output and one-line errors. (The page's script
//! in a real browser: html_browser.rs.)

mod common;

use common::mprof;
use mprof_export::html::{HtmlOptions, html};
use mprof_engine::*;
use serde_json::Value;

/// The JSON document embedded in a page.
fn data_of(page: &str) -> Value {
    let start = page.find(r#"<script id="mprof-data" type="application/json">"#).expect("data element");
    let rest = &page[start..];
    let open = rest.find('>').unwrap() + 1;
    let close = rest.find("</script>").unwrap();
    serde_json::from_str(&rest[open..close]).expect("the data is JSON")
}

fn numbers(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

#[test]
fn the_page_embeds_the_paper_example_as_trees_and_tables() {
    let page = html(&common::widgets(), &HtmlOptions::default()).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    for external in ["<script src", "<link", "http://", "https://", "@import"] {
        let without_svg_namespace = page.replace("\"http://www.w3.org/2000/svg\"", "");
        assert!(!without_svg_namespace.contains(external), "{external}");
    }
    let d = data_of(&page);
    assert_eq!(d["summary"]["language"], "c");
    assert_eq!(d["summary"]["allocs"], 10_000);
    assert_eq!(d["summary"]["bytes"], 2_040_000);
    // The tree: all > main > {make_blue_widget, make_red_widget} > make_widget, in
    // depth-first order with siblings in name order, each prefix sent once.
    let tree = &d["memory"];
    let names: Vec<&str> = tree["names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    let path: Vec<&str> = numbers(&tree["name"]).iter().map(|&k| names[k as usize]).collect();
    assert_eq!(
        path,
        ["<outside any function>", "main", "make_blue_widget", "make_widget", "make_red_widget", "make_widget"]
    );
    assert_eq!(numbers(&tree["up"]), [0, 1, 1, 1, 3, 1], "parents 0, 0, 1, 2, 1, 4");
    assert_eq!(numbers(&tree["bytes"]), [0, 0, 0, 4981 * 204, 0, 5019 * 204]);
    assert_eq!(numbers(&tree["kept"]), [0, 0, 0, 0, 0, 5019 * 204]);
    assert_eq!(numbers(&tree["allocs"]), [0, 0, 0, 4981, 0, 5019]);
    assert!(d["time"].is_null());
    // The leak table's one path names functions by entity index.
    let t = &d["tables"];
    let entity = |i: &Value| t["entities"]["name"][i.as_u64().unwrap() as usize].as_str().unwrap().to_string();
    let kept = &t["kept"][0];
    assert_eq!((kept[0].as_u64(), kept[1].as_u64()), (Some(5019), Some(5019 * 204)));
    let steps: Vec<String> = kept[2][1].as_array().unwrap().iter().map(entity).collect();
    assert_eq!(steps, ["main", "make_red_widget", "make_widget"]);
    // The call graph in the text report's order: main and make_widget carry all bytes.
    let shown: Vec<String> = t["graph"]["shown"].as_array().unwrap().iter().map(entity).collect();
    assert_eq!(shown, ["main", "make_widget", "make_red_widget", "make_blue_widget"]);
    assert_eq!(numbers(&t["graph"]["total"]), [2_040_000, 2_040_000, 5019 * 204, 4981 * 204]);
    assert_eq!(t["bins"][0][0], "204");
    assert_eq!(t["bins"][0][6], "widget");
    assert!(d["listing"].is_null() && d["exec"].is_null());
}

#[test]
fn a_function_name_cannot_end_the_data_element() {
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    let evil = "</script><script>document.title='owned'</script><!--";
    let f = m.function(FunctionInfo::named(evil));
    let node = m.child(NodeId::ROOT, f, 0);
    m.record_alloc(node, 0, 8, Bin::Size(8));
    m.set_metadata("program", "<b>&amp;</b>");
    let page = html(&m.to_profile(), &HtmlOptions::default()).unwrap();
    assert_eq!(page.matches("</script>").count(), 2, "only the page's own two elements end");
    assert!(!page.contains("<b>"));
    let d = data_of(&page);
    assert_eq!(d["memory"]["names"][1], evil);
    assert_eq!(d["summary"]["program"], "<b>&amp;</b>");
}

#[test]
fn samples_time_and_the_listing_reach_the_page() {
    let options = HtmlOptions { listing: Some("    5   1000.---|(defun f ()".into()), ..HtmlOptions::default() };
    let d = data_of(&html(&common::lisp_rich(), &options).unwrap());
    assert_eq!(numbers(&d["samples"]["t"]), [1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    assert_eq!(numbers(&d["summary"]["peak"]), [30_000, 2_000_000]);
    assert_eq!(d["summary"]["duration_ns"], 4_000_000);
    let time = &d["time"];
    assert_eq!(numbers(&time["ns"]).iter().sum::<u64>(), 4_050_000);
    assert_eq!(numbers(&time["calls"]).iter().sum::<u64>(), 4);
    assert!(d["exec"].as_str().unwrap().contains("run"), "the flat profile's text");
    assert_eq!(d["listing"], "    5   1000.---|(defun f ()");
    // Bins by type, direct rows per function: numbers as the reduction has them.
    let direct = d["tables"]["direct"]["rows"].as_array().unwrap();
    assert_eq!(direct.len(), 4);
    let bins: Vec<&str> = d["tables"]["bins"].as_array().unwrap().iter().map(|b| b[0].as_str().unwrap()).collect();
    assert_eq!(bins.len(), 4, "{bins:?}");
}

#[test]
fn a_long_series_of_samples_is_thinned_keeping_its_shape_and_peak() {
    let mut p = common::widgets();
    // Ten minutes of 10 ms samples, a sawtooth with one highest point at sample 33,333.
    p.samples = (0..60_000u64)
        .map(|i| Sample {
            time_ns: i * 10_000_000,
            live_bytes: if i == 33_333 { 10_000_000 } else { (i % 1000) * 1000 },
            allocated_bytes: i * 1000,
            ..Sample::default()
        })
        .collect();
    let d = data_of(&html(&p, &HtmlOptions::default()).unwrap());
    let t = numbers(&d["samples"]["t"]);
    let live = numbers(&d["samples"]["live"]);
    assert!(t.len() <= mprof_export::html::MAX_SAMPLES && t.len() > 1000, "{} samples", t.len());
    assert!(t.windows(2).all(|w| w[0] < w[1]), "in time order");
    assert_eq!((t[0], *t.last().unwrap()), (0, 59_999 * 10_000_000), "the whole run");
    assert_eq!(live.iter().max(), Some(&10_000_000));
    assert_eq!(t[live.iter().position(|&l| l == 10_000_000).unwrap()], 33_333 * 10_000_000, "the peak stays exact");
    assert_eq!(live.iter().filter(|&&l| l == 999_000).count(), 60, "every tooth's top is kept");
    assert_eq!(d["summary"]["samples"], 60_000);
}

#[test]
fn an_execution_only_profile_has_no_memory_parts() {
    let mut p = common::lisp_rich();
    for n in &mut p.nodes {
        n.counters.iter_mut().for_each(|c| *c = Counters::default());
    }
    p.bins.clear();
    p.samples.clear();
    let d = data_of(&html(&p, &HtmlOptions::default()).unwrap());
    assert!(d["memory"].is_null() && d["tables"].is_null());
    assert!(!d["time"].is_null());
}

#[test]
fn command_line_writes_the_page_and_fails_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let mut bytes = Vec::new();
    common::widgets().write(&mut bytes).unwrap();
    std::fs::write(path("w.mprof"), &bytes).unwrap();
    let (code, out, err) = mprof(&["html", &path("w.mprof"), "-o", &path("w.html")]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    let page = std::fs::read_to_string(path("w.html")).unwrap();
    assert_eq!(page, html(&common::widgets(), &HtmlOptions::default()).unwrap());
    let (code, out, _) = mprof(&["html", &path("w.mprof"), "-o", "-", "--merge-cycles", "--path-depth", "2"]);
    assert_eq!(code, 0);
    assert_eq!(data_of(&out)["pathDepth"], 2);
    std::fs::write(path("cut.mprof"), &bytes[..40]).unwrap();
    let runs = [
        vec!["html".to_string(), path("missing.mprof"), "-o".into(), path("x.html")],
        vec!["html".to_string(), path("cut.mprof"), "-o".into(), path("x.html")],
        vec!["html".to_string(), path("w.mprof"), "-o".into(), path("no/such/dir/x.html")],
        vec!["html".to_string(), path("w.mprof"), "-o".into(), path("x.html"), "--path-depth".into(), "0".into()],
        vec!["html".to_string(), path("w.mprof")],
    ];
    insta::assert_snapshot!(common::one_line_errors(dir.path(), &runs));
    assert!(!dir.path().join("x.html").exists(), "no page after a failure");
}
