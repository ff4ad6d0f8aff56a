//! Snapshot tests of the report: the paper's figures reproduced from monitor events.

mod common;

use mprof_profiler::*;

fn report(p: &Profile, tables: &str) -> String {
    let options = ReportOptions { tables: Tables::parse(tables).unwrap(), ..ReportOptions::default() };
    render_report(p, &options)
}

#[test]
fn paper_example_full_report() {
    let p = common::widgets();
    let text = render_report(&p, &ReportOptions::default());
    // The numbers of Figures 2-5.
    assert!(text.contains("5019 1023876 (99) || > main > make_red_widget > make_widget"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn paper_example_exact_percentages() {
    let p = common::widgets();
    let options = ReportOptions { exact_percentages: true, ..ReportOptions::default() };
    insta::assert_snapshot!(render_report(&p, &options));
}

#[test]
fn figure7_attributes_each_edge_once_per_path() {
    let p = common::figure7();
    let text = report(&p, "graph,direct");
    insta::assert_snapshot!(text);
}

#[test]
fn three_function_cycle_is_shown_as_a_cycle() {
    let p = common::three_cycle();
    let text = render_report(&p, &ReportOptions::default());
    assert!(text.contains("<cycle 1>"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn three_function_cycle_merged() {
    let p = common::three_cycle();
    let options = ReportOptions { merge_cycles: true, tables: Tables::GRAPH, ..ReportOptions::default() };
    insta::assert_snapshot!(render_report(&p, &options));
}
