//! The HTML report in a real browser: headless Chromium (driven over the DevTools
//! protocol by `browser/`) opens the page of a Lisp profile and of a C profile and the
//! test checks structure, not pixels: no console error or exception, the memory chart
//! and the flame graph drawn with a size, clicking a frame zooms it to the full width,
//! hovering it shows its details,
//! a search highlights the frames of a known function and none for a nonsense name,
//! clicking a column heading sorts the table, and a function's link leads to its
//! call-graph entry. Without Chromium the test says so and passes, except in CI
//! (`CI` set), where a missing browser fails it: `.ci/run` installs Debian's chromium.

mod browser;
mod common;

use std::path::Path;

use browser::Browser;
use mprof_export::html::{HtmlOptions, html};

/// The browser, or `None` (with a note) when it is absent outside CI.
fn chromium() -> Option<std::path::PathBuf> {
    match browser::find_chromium() {
        Some(exe) => Some(exe),
        None if browser::in_ci() => panic!("chromium is not installed (CI is set, so this fails rather than skips; .ci/run installs Debian's chromium)"),
        None => {
            // Straight to the stream: the test harness would hide an eprintln! of a passing test.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "note: chromium not found on PATH: the HTML report's browser test is skipped (apt-get install chromium)");
            None
        }
    }
}

/// What one page must show.
struct Expect<'a> {
    /// The peak label of the memory chart.
    peak: &'a str,
    /// A frame to click in the flame graph, and a search term that matches frames.
    zoom: &'a str,
    search: &'a str,
    /// The direct table's first row by bytes (largest, then smallest) and by name.
    largest: &'a str,
    smallest: &'a str,
    first_by_name: &'a str,
    /// The first kind of the heap-errors table, when the profile has errors.
    error: Option<&'a str>,
    /// Whether the samples split live bytes by category (the chart then stacks them).
    by_category: bool,
}

fn eval_f64(b: &mut Browser, js: &str) -> f64 {
    b.eval(js).unwrap().as_f64().unwrap_or_else(|| panic!("{js} is not a number"))
}

fn eval_string(b: &mut Browser, js: &str) -> String {
    b.eval(js).unwrap().as_str().unwrap_or_else(|| panic!("{js} is not a string")).to_string()
}

fn no_errors(b: &mut Browser, when: &str) {
    let errors = b.errors();
    assert!(errors.is_empty(), "{when}: {errors:#?}");
}

fn check_page(b: &mut Browser, page: &Path, e: &Expect) {
    b.open(&format!("file://{}", page.display())).unwrap();
    no_errors(b, "after loading");

    // The memory chart: an SVG with a size, its area and the peak marked.
    let chart = b.eval("(() => { const r = document.querySelector('#chart svg').getBoundingClientRect(); return [r.width, r.height]; })()").unwrap();
    assert!(chart[0].as_f64().unwrap() > 100.0 && chart[1].as_f64().unwrap() > 100.0, "chart size {chart}");
    if e.by_category {
        // One stacked layer per category, drawn first; the total is a choice away.
        assert_eq!(eval_f64(b, "document.querySelectorAll('#chart path.layer').length"), 4.0);
        assert_eq!(eval_string(b, "document.getElementById('chart-series').value"), "cats");
        b.eval("(() => { const s = document.getElementById('chart-series'); s.value = 'live'; s.dispatchEvent(new Event('change')); return 0; })()").unwrap();
    }
    assert_eq!(eval_f64(b, "document.querySelectorAll('#chart path.area').length"), 1.0);
    assert_eq!(eval_string(b, "document.querySelector('#chart .peak text').textContent"), e.peak);

    // The flame graph: frames drawn in a box with a size.
    let frames = eval_f64(b, "document.querySelectorAll('#flame .fr').length");
    assert!(frames >= 4.0, "{frames} frames");
    let full = eval_f64(b, "document.getElementById('flame').clientWidth");
    assert!(full > 500.0 && eval_f64(b, "document.getElementById('flame').clientHeight") > 30.0);

    // Clicking a frame zooms: its width becomes the full width, its callers stay above.
    let node = eval_string(
        b,
        &format!("[...document.querySelectorAll('#flame .fr')].find((d) => d.textContent === {:?}).dataset.node", e.zoom),
    );
    let selector = format!("#flame .fr[data-node=\"{node}\"]");
    let width = |b: &mut Browser| eval_f64(b, &format!("document.querySelector('{selector}').getBoundingClientRect().width"));
    let before = width(b);
    assert!(before < full - 2.0, "{} is narrower than the graph before zooming ({before} of {full})", e.zoom);
    b.click_element(&selector).unwrap();
    let after = width(b);
    assert!((after - full).abs() <= 1.5, "{} zoomed to {after} of {full}", e.zoom);
    assert!(eval_f64(b, "document.querySelectorAll('#flame .fr.anc').length") >= 1.0, "callers above the zoomed frame");
    b.click_element("#flame-reset").unwrap();
    assert!((width(b) - before).abs() <= 0.5, "reset zoom restores the frame");
    // Hovering a frame shows its details.
    b.hover_element(&selector).unwrap();
    assert_eq!(b.eval("document.getElementById('tooltip').hidden").unwrap(), false);
    let tip = eval_string(b, "document.getElementById('tooltip').textContent");
    assert!(tip.starts_with(e.zoom) && tip.contains(" of all") && tip.contains("in the function itself"), "{tip}");

    // Search highlights matching frames, and none for a nonsense name.
    let highlighted = |b: &mut Browser| eval_f64(b, "document.querySelectorAll('#flame .fr.match').length");
    assert_eq!(highlighted(b), 0.0);
    b.eval("document.getElementById('flame-search').focus()").unwrap();
    b.type_text(e.search).unwrap();
    assert!(highlighted(b) > 0.0, "frames matching {}", e.search);
    assert!(eval_string(b, "document.getElementById('flame-matches').textContent").contains("match"));
    b.eval("document.getElementById('flame-search').select()").unwrap();
    b.type_text("zz-no-such-function-zz").unwrap();
    assert_eq!(highlighted(b), 0.0);
    assert_eq!(eval_string(b, "document.getElementById('flame-matches').textContent"), "no frame matches");

    // Sorting: by bytes (largest first), a click on bytes (smallest first), by name.
    let first = |b: &mut Browser| eval_string(b, "document.querySelector('#direct-rows tbody tr td').textContent");
    assert_eq!(first(b), e.largest);
    b.click_element("#direct-rows thead th:nth-child(2)").unwrap();
    assert_eq!(first(b), e.smallest);
    assert_eq!(eval_string(b, "document.querySelector('#direct-rows thead th:nth-child(2)').getAttribute('aria-sort')"), "ascending");
    b.click_element("#direct-rows thead th:nth-child(1)").unwrap();
    assert_eq!(first(b), e.first_by_name);

    // A function's link in the leak/kept table leads to its call-graph entry.
    let entity = eval_string(b, "document.querySelector('#kept-rows a.fn').dataset.entity");
    b.click_element("#kept-rows a.fn").unwrap();
    assert_eq!(eval_string(b, "location.hash"), format!("#cg-{entity}"));
    assert!(b.eval(&format!("document.getElementById('cg-{entity}').classList.contains('flash')")).unwrap().as_bool().unwrap());

    match e.error {
        Some(kind) => {
            assert_eq!(b.eval("document.getElementById('errors').hidden").unwrap(), false);
            assert_eq!(eval_string(b, "document.querySelector('#errors-rows tbody td').textContent"), kind);
        }
        None => assert_eq!(b.eval("document.getElementById('errors').hidden").unwrap(), true),
    }
    no_errors(b, "after the interactions");
}

#[test]
fn the_report_works_in_headless_chromium_for_a_lisp_and_a_c_profile() {
    let Some(exe) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut b = Browser::launch(&exe).unwrap();

    let lisp = dir.path().join("lisp.html");
    std::fs::write(&lisp, html(&common::lisp_rich(), &HtmlOptions::default()).unwrap()).unwrap();
    check_page(
        &mut b,
        &lisp,
        &Expect {
            peak: "peak 29.3 KiB at 2.000 ms",
            zoom: "build-tree",
            search: "RUN",
            largest: "run",
            smallest: "tiny",
            first_by_name: "build-tree",
            error: None,
            by_category: false,
        },
    );
    // The time profile is a choice of the flame graph, drawn from its own tree.
    let drawn = b
        .eval("(() => { const s = document.getElementById('flame-value'); s.value = String(window.mprofReport.values.indexOf('time (self)')); s.dispatchEvent(new Event('change')); return document.querySelectorAll('#flame .fr').length; })()")
        .unwrap();
    assert!(drawn.as_f64().unwrap() >= 4.0, "time frames: {drawn}");
    assert!(eval_string(&mut b, "document.getElementById('exec-text').textContent").contains("build-tree"));
    no_errors(&mut b, "after switching to time");

    let profile = common::c_profile(dir.path(), "report_mix");
    let c = dir.path().join("c.html");
    let (code, _, err) = common::mprof(&["html", &profile.to_string_lossy(), "-o", &c.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    check_page(
        &mut b,
        &c,
        &Expect {
            peak: &eval_peak(&profile),
            zoom: "make_node",
            search: "make_",
            largest: "make_buffer",
            smallest: "make_label",
            first_by_name: "free_twice",
            error: Some("double free"),
            by_category: true,
        },
    );
}

/// The chart's peak label for a profile, computed as the page does (KiB with one
/// decimal, milliseconds below a second), from the highest, earliest sample. Sizes
/// are rounded half up as JavaScript's `toFixed` does (Rust's `{:.1}` rounds an exact
/// tie such as 23.25 to even); bytes over a power of two are exact binary fractions.
fn eval_peak(profile: &Path) -> String {
    let p = mprof_engine::Profile::read(&std::fs::read(profile).unwrap()).unwrap();
    let peak = p.samples.iter().max_by_key(|s| (s.live_bytes, std::cmp::Reverse(s.time_ns))).expect("libmprof samples memory");
    let tenths = |v: f64| (v * 10.0).round() / 10.0;
    let size = if peak.live_bytes < 1024 {
        format!("{} B", peak.live_bytes)
    } else if peak.live_bytes < 1 << 20 {
        format!("{:.1} KiB", tenths(peak.live_bytes as f64 / 1024.0))
    } else {
        format!("{:.1} MiB", tenths(peak.live_bytes as f64 / 1048576.0))
    };
    let s = peak.time_ns as f64 / 1e9;
    let time = if s >= 1.0 { format!("{s:.3} s") } else { format!("{:.3} ms", s * 1e3) };
    format!("peak {size} at {time}")
}

#[test]
fn pages_with_parts_missing_open_without_error() {
    let Some(exe) = chromium() else { return };
    use mprof_engine::*;
    // Execution only (a --time run): no memory tables, the time flame graph.
    let mut timed = common::lisp_rich();
    for n in &mut timed.nodes {
        n.counters.iter_mut().for_each(|c| *c = Counters::default());
    }
    timed.bins.clear();
    timed.samples.clear();
    // Nothing recorded at all.
    let empty = Profile::empty(Language::C, CategoryScheme::c_sizes());
    let dir = tempfile::tempdir().unwrap();
    let mut b = Browser::launch(&exe).unwrap();
    for (name, p, frames) in [("timed", timed, 4.0), ("empty", empty, 0.0)] {
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(&page, html(&p, &HtmlOptions::default()).unwrap()).unwrap();
        b.open(&format!("file://{}", page.display())).unwrap();
        no_errors(&mut b, name);
        assert!(eval_f64(&mut b, "document.querySelectorAll('#flame .fr').length") >= frames, "{name}");
        assert!(eval_string(&mut b, "document.getElementById('chart-note').textContent").contains("no memory samples"), "{name}");
    }
}

#[test]
fn a_100000_deep_tree_opens_without_error_and_draws_a_bounded_number_of_rows() {
    let Some(exe) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("deep.html");
    std::fs::write(&page, html(&common::deep_profile(), &HtmlOptions::default()).unwrap()).unwrap();
    let mut b = Browser::launch(&exe).unwrap();
    b.open(&format!("file://{}", page.display())).unwrap();
    no_errors(&mut b, "the deep page");
    let rows = eval_f64(&mut b, "new Set([...document.querySelectorAll('#flame .fr')].map((d) => d.style.top)).size");
    assert!((100.0..=401.0).contains(&rows), "{rows} rows drawn");
    assert!(eval_string(&mut b, "document.getElementById('flame-note').textContent").contains("left out"));
    // Zooming into the deepest frame drawn folds its many callers into one row.
    b.eval("(() => { const f = [...document.querySelectorAll('#flame .fr')]; f[f.length - 1].click(); })()").unwrap();
    let text = eval_string(&mut b, "[...document.querySelectorAll('#flame .fr.anc')].map((d) => d.textContent).join('|')");
    assert!(text.contains("more callers"), "{text}");
    no_errors(&mut b, "after zooming deep");
}
