//! Writes the mprof paper's producer/consumer example (Figure 1) as a profile file, by
//! feeding the monitor the events the C program would cause: 10,000 widgets of 204
//! bytes, 5,019 red ones never freed and 4,981 blue ones freed.
//!
//! `cargo run -p mprof-engine --example paper_example -- widgets.mprof`
//! then `mprof report widgets.mprof` prints the tables of the paper's Figures 2-5.

use mprof_engine::*;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: paper_example OUTPUT.mprof");
        std::process::exit(2);
    };
    let mut m = Monitor::new(Language::C, CategoryScheme::c_sizes(), MonitorOptions::default());
    m.set_metadata("program", "widgets (mprof paper, Figure 1)");
    m.label_size(204, "widget");
    let main = m.function(FunctionInfo::named("main"));
    let red = m.function(FunctionInfo::named("make_red_widget"));
    let blue = m.function(FunctionInfo::named("make_blue_widget"));
    let make = m.function(FunctionInfo::named("make_widget"));
    let red_node = m.path(&[main, red, make]);
    let blue_node = m.path(&[main, blue, make]);
    let medium = CategoryScheme::c_category_of_size(204);
    for i in 0..10_000 {
        let node = if i < 5019 { red_node } else { blue_node };
        m.record_alloc(node, medium, 204, Bin::Size(204));
    }
    for _ in 0..4981 {
        m.record_free(blue_node, medium, 204, Bin::Size(204));
    }
    let mut bytes = Vec::new();
    if let Err(e) = m.to_profile().write(&mut bytes).and_then(|_| std::fs::write(&path, &bytes)) {
        eprintln!("paper_example: cannot write {path}: {e}");
        std::process::exit(1);
    }
}
