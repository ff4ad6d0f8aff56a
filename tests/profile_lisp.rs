//! End-to-end tests of Lisp memory profiling: the mprof tables for known
//! programs (insta snapshots), and exact allocation and kept counts.
//!
//! Each test runs its own interpreter; profiling state belongs to the
//! interpreter (two on one thread profile independently, tested below).

use std::path::Path;

use mprof_lisp::{Interpreter, Options};
use mprof_engine::monitor::MonitorOptions;
use mprof_display::report::ReportOptions;

fn interpreter() -> Interpreter {
    match Interpreter::with_io(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
        Options::default(),
    ) {
        Ok(l) => l,
        Err(e) => panic!("the interpreter did not start: {e}"),
    }
}

fn eval(lisp: &mut Interpreter, src: &str) -> Vec<String> {
    match lisp.eval_source(src, Some("test")) {
        Ok(v) => v,
        Err(e) => panic!("evaluation failed: {e} (backtrace {:?})", e.backtrace),
    }
}

/// Run `setup` unprofiled, then `profiled` under a fresh profile; return the report.
fn report(setup: &str, profiled: &str, options: &ReportOptions) -> String {
    let mut lisp = interpreter();
    eval(&mut lisp, setup);
    // Configure a fresh monitor, then record only inside WITH-PROFILING so the
    // compilation of the test's own top-level forms is not in the profile.
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    lisp.profiler().stop();
    eval(&mut lisp, &format!("(mprof:reset) (mprof:with-profiling () {profiled})"));
    let text = lisp.profiler().report(options);
    // The time series line carries wall-clock times; it is not reproducible.
    text.lines().filter(|l| !l.starts_with("memory over time")).collect::<Vec<_>>().join("\n")
}

fn widgets_source() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/widgets.lisp");
    let src = std::fs::read_to_string(&path).unwrap_or_default();
    // The example ends by running 10000 widgets; the test runs them itself.
    src.replace("(run 10000)", "")
}

#[test]
fn memory_samples_follow_allocation_so_a_short_run_has_a_shape() {
    let mut lisp = interpreter();
    eval(&mut lisp, &widgets_source());
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    eval(&mut lisp, "(run 10000)");
    let p = lisp.profiler().full_profile();
    // 3.6 MB allocated at a 64 KiB step: over fifty points (after-collection ones aside).
    assert!(p.samples.len() >= 50, "{} samples", p.samples.len());
    assert!(p.samples.windows(2).all(|w| w[0].allocated_bytes <= w[1].allocated_bytes));
}

#[test]
fn widgets_tables() {
    let text = report(&widgets_source(), "(run 10000)", &ReportOptions::default());
    // 4917 of 10000 widgets are red with this generator (checked below by the program itself).
    assert!(text.contains("4917"), "{text}");
    insta::assert_snapshot!("widgets", text);
}

#[test]
fn widgets_kept_are_exactly_the_red_widgets() {
    let mut lisp = interpreter();
    eval(&mut lisp, &widgets_source());
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    eval(&mut lisp, "(run 10000)");
    lisp.profiler().stop();
    let red = eval(&mut lisp, "(length *red-widgets*)");
    let _ = lisp.profiler().report(&ReportOptions::default());
    let profile = lisp.profiler().full_profile();
    let widget_type = profile.types.iter().position(|t| t == "WIDGET").expect("a WIDGET bin");
    let row = profile
        .bins
        .iter()
        .find(|b| matches!(b.key, mprof_engine::profile::BinKey::Type(t) if t.0 as usize == widget_type))
        .expect("the WIDGET row");
    assert_eq!(row.counters.allocs, 10000, "one structure per constructor call");
    assert_eq!(red, vec!["4917".to_string()]);
    assert_eq!(row.counters.allocs - row.counters.frees, 4917, "kept widgets = red widgets still referenced");
}

#[test]
fn make_list_records_exactly_its_conses() {
    let mut lisp = profiled_interpreter();
    profile_make_list(&mut lisp, 1000);
    let _ = lisp.profiler().report(&ReportOptions::default());
    let totals = lisp.profiler().memory_totals();
    let cons = &totals.per_category[0];
    assert_eq!(cons.allocs, 1000, "exactly 1000 conses");
    assert_eq!(cons.frees, 0, "all still referenced by *l*");
    assert_eq!(totals.per_category[1].allocs + totals.per_category[2].allocs + totals.per_category[3].allocs, 0);
}

#[test]
fn mutual_recursion_is_credited_once() {
    // The paper's Figure 7 shape: MAIN calls F, F and G call each other, and
    // both allocate; each edge is credited once per path.
    let setup = "(defvar *keep* nil)
      (defun f (n) (push (make-array 1) *keep*) (if (> n 0) (g (1- n)) nil))
      (defun g (n) (push (make-array 3) *keep*) (if (> n 0) (f (1- n)) nil))
      (defun main () (f 9))";
    let text = report(setup, "(main)", &ReportOptions::default());
    insta::assert_snapshot!("figure7", text);
}

#[test]
fn every_category_is_counted() {
    let setup = "(defstruct pt x y) (defvar *all* nil)
      (defun conses () (list 1 2 3))
      (defun floats () (* 1.5 (float 2)))
      (defun structures () (make-pt :x 1 :y 2))
      (defun vectors () (make-array 4))
      (defun strings () (make-string 10 :initial-element #\\a))
      (defun symbols () (make-symbol \"FRESH\"))
      (defun all () (dotimes (i 10) (push (list (conses) (floats) (structures) (vectors) (strings) (symbols)) *all*)))";
    let text = report(setup, "(all)", &ReportOptions::default());
    insta::assert_snapshot!("categories", text);
}

#[test]
fn a_reset_forgets_older_objects_so_their_frees_are_not_counted() {
    let mut lisp = interpreter();
    eval(&mut lisp, "(defvar *old* nil) (defvar *new* nil)");
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    // 2,000 conses made before the reset, then dropped and collected after it.
    eval(&mut lisp, "(setq *old* (make-list 2000))");
    eval(&mut lisp, "(mprof:reset)");
    eval(&mut lisp, "(setq *old* nil) (setq *new* (make-list 24))");
    lisp.profiler().stop();
    let _ = lisp.profiler().report(&ReportOptions::default());
    let totals = lisp.profiler().memory_totals();
    let cons = &totals.per_category[0];
    // Only what the new epoch allocated (the 24 conses and whatever evaluating the
    // forms consed), and no frees of the 2,000 older conses.
    assert!(cons.allocs >= 24 && cons.allocs < 2000, "{cons:?}");
    assert!(cons.frees <= cons.allocs, "frees of objects this profile never saw: {cons:?}");
    assert!(cons.bytes >= cons.freed_bytes);
    // The file agrees with the totals: what its tree says was kept is what the header says.
    let p = lisp.profiler().full_profile();
    let kept_in_tree: u64 = p.nodes.iter().flat_map(|n| &n.counters).map(|c| c.bytes - c.freed_bytes.min(c.bytes)).sum();
    let kept_in_totals: u64 = totals.per_category.iter().map(|c| c.bytes.saturating_sub(c.freed_bytes)).sum();
    assert_eq!(kept_in_tree, kept_in_totals);
}

#[test]
fn a_2000_deep_mutual_recursion_keeps_its_innermost_frames() {
    let mut lisp = interpreter();
    eval(
        &mut lisp,
        "(defun ping (n) (if (<= n 0) (make-array 10) (pong (1- n))))
         (defun pong (n) (if (<= n 0) (make-array 10) (ping (1- n))))
         (defvar *kept* nil)",
    );
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    eval(&mut lisp, "(setq *kept* (ping 2000))");
    lisp.profiler().stop();
    let text = lisp.profiler().report(&ReportOptions::default());
    let p = lisp.profiler().full_profile();
    let name = |n: &mprof_engine::Node| p.functions[n.func.0 as usize].name.clone();
    // The vector's node: charged to MAKE-ARRAY, called by PING, under <outer frames>.
    let vector = p
        .nodes
        .iter()
        .position(|n| n.parent.is_some() && name(n) == "MAKE-ARRAY" && n.counters[2].bytes > 0)
        .expect("MAKE-ARRAY allocated the vector");
    let mut path = Vec::new();
    let mut at = Some(mprof_engine::NodeId(vector as u32));
    while let Some(id) = at.filter(|id| id.0 != 0) {
        path.push(name(&p.nodes[id.0 as usize]));
        at = p.nodes[id.0 as usize].parent;
    }
    assert_eq!(path.len(), 512, "the cap's depth, innermost frames kept");
    assert_eq!(path[0], "MAKE-ARRAY");
    assert_eq!(path[1], "PING");
    assert_eq!(path.last().map(String::as_str), Some("<outer frames>"));
    // The report says so, and its direct table charges the allocating function.
    assert!(text.contains("contexts deeper than 512 frames"), "{text}");
    let direct = text.split("Direct allocation table").nth(1).unwrap_or("");
    assert!(direct.contains("MAKE-ARRAY"), "{direct}");
}

/// Profile `(make-list n)` kept in *L*, inside WITH-PROFILING, without reporting.
fn profile_make_list(lisp: &mut Interpreter, n: usize) {
    eval(lisp, &format!("(mprof:with-profiling () (setq *l* (make-list {n})))"));
}

fn profiled_interpreter() -> Interpreter {
    let mut lisp = interpreter();
    eval(&mut lisp, "(defvar *l* nil)");
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    lisp.profiler().stop();
    eval(&mut lisp, "(mprof:reset)");
    lisp
}

#[test]
fn two_interpreters_on_one_thread_profile_independently() {
    let mut a = profiled_interpreter();
    let mut b = profiled_interpreter();
    // Interleaved: each records only its own conses, whatever the other does between.
    profile_make_list(&mut a, 300);
    profile_make_list(&mut b, 500);
    profile_make_list(&mut a, 200);
    // B's list becomes garbage; its frees belong to B's profile alone.
    eval(&mut b, "(setq *l* nil)");
    b.full_collection();
    a.full_collection();
    let (ta, tb) = (a.profiler().memory_totals(), b.profiler().memory_totals());
    assert_eq!(ta.per_category[0].allocs, 500, "A made 300 + 200 conses");
    assert_eq!(ta.per_category[0].frees, 300, "A's first list was replaced, then swept");
    assert_eq!(tb.per_category[0].allocs, 500);
    assert_eq!(tb.per_category[0].frees, 500, "B dropped its whole list");
    // Dropping B (sweeping everything it holds) changes nothing in A's profile.
    drop(b);
    let ta2 = a.profiler().memory_totals();
    assert_eq!(ta2.per_category[0], ta.per_category[0]);
}

#[test]
fn interpreters_on_two_threads_profile_independently() {
    let counts: Vec<u64> = [100usize, 700]
        .into_iter()
        .map(|n| {
            std::thread::spawn(move || {
                let mut lisp = profiled_interpreter();
                profile_make_list(&mut lisp, n);
                lisp.profiler().memory_totals().per_category[0].allocs
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap_or(0))
        .collect();
    assert_eq!(counts, vec![100, 700]);
}

/// The names of the functions that allocated in a profile of a DEFSTRUCT and a LOOP
/// compiled and run while profiling.
fn allocating_functions(show_internals: bool) -> Vec<String> {
    let mut lisp = interpreter();
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    lisp.profiler().show_internals(show_internals);
    eval(&mut lisp, "(defstruct point x y) (defun run () (loop for i below 10 collect (make-point :x i)))");
    eval(&mut lisp, "(run)");
    let p = lisp.profiler().full_profile();
    let mut names: Vec<String> = p
        .nodes
        .iter()
        .filter(|n| n.counters.iter().any(|c| c.allocs > 0))
        .filter_map(|n| p.functions.get(n.func.0 as usize).map(|f| f.name.clone()))
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_systems_own_helpers_are_charged_to_their_users_unless_asked_for() {
    let hidden = allocating_functions(false);
    assert!(hidden.iter().all(|n| !n.starts_with('%')), "internals shown: {hidden:?}");
    assert!(hidden.iter().any(|n| n == "MAKE-POINT"), "{hidden:?}");
    let shown = allocating_functions(true);
    assert!(shown.iter().any(|n| n.starts_with("%DS-") || n.starts_with("%DEFSTRUCT")), "{shown:?}");
}

const CLOS_SHAPES: &str = "
(defclass shape () ((name :initarg :name :reader shape-name)))
(defclass circle (shape) ((radius :initarg :radius :reader radius)))
(defclass rect (shape) ((w :initarg :w :reader rect-w) (h :initarg :h :reader rect-h)))
(defgeneric grow (shape))
(defmethod grow ((c circle)) (make-instance 'circle :radius (+ (radius c) 1)))
(defmethod grow ((r rect)) (make-instance 'rect :w (rect-w r) :h (+ (rect-h r) 1)))
(defgeneric outline (shape))
(defmethod outline ((c circle)) (list :circle (radius c)))
(defmethod outline ((r rect)) (list :rect (rect-w r) (rect-h r)))
(defmethod outline :around ((s shape)) (cons :shape (call-next-method)))
(defun run-shapes (n)
  (let ((kept nil))
    (dotimes (i n)
      (let ((c (grow (make-instance 'circle :radius i)))
            (r (grow (make-instance 'rect :w i :h i))))
        (push (outline c) kept)
        (outline r)))
    (length kept)))
";

#[test]
fn clos_instances_are_binned_by_class_and_charged_to_methods() {
    // Warm the dispatch caches in the setup: the profile shows steady-state calls.
    let text = report(&format!("{CLOS_SHAPES} (run-shapes 2)"), "(run-shapes 100)", &ReportOptions::default());
    for expected in ["CIRCLE", "RECT", "(METHOD GROW (CIRCLE))", "(METHOD OUTLINE (RECT))", "(METHOD OUTLINE :AROUND (SHAPE))"] {
        assert!(text.contains(expected), "{expected} missing from\n{text}");
    }
    insta::assert_snapshot!("clos_shapes", text);
}

#[test]
fn clos_make_instance_allocates_one_object_and_dispatch_allocates_nothing() {
    let mut lisp = interpreter();
    eval(&mut lisp, CLOS_SHAPES);
    // Warm the dispatch caches, so only steady-state calls are counted.
    eval(&mut lisp, "(run-shapes 2)");
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    eval(&mut lisp, "(run-shapes 50)");
    lisp.profiler().stop();
    let _ = lisp.profiler().report(&ReportOptions::default());
    let profile = lisp.profiler().full_profile();
    let allocs_of = |name: &str| {
        let ty = profile.types.iter().position(|t| t == name).expect("a bin for the class");
        profile
            .bins
            .iter()
            .find(|b| matches!(b.key, mprof_engine::profile::BinKey::Type(t) if t.0 as usize == ty))
            .map(|b| b.counters.allocs)
            .unwrap_or(0)
    };
    // Two MAKE-INSTANCEs per class and iteration: one structure each.
    assert_eq!(allocs_of("CIRCLE"), 100);
    assert_eq!(allocs_of("RECT"), 100);
}

/// The totals per category (c, f, s, o) of running `profiled` under a fresh profile.
fn category_totals(setup: &str, profiled: &str) -> (Vec<mprof_engine::profile::Counters>, String) {
    let mut lisp = interpreter();
    eval(&mut lisp, setup);
    lisp.profiler().start(Some(MonitorOptions::default()), false);
    lisp.profiler().stop();
    eval(&mut lisp, &format!("(mprof:reset) (mprof:with-profiling () {profiled})"));
    let text = lisp.profiler().report(&ReportOptions::default());
    (lisp.profiler().memory_totals().per_category, text)
}

#[test]
fn specialized_arrays_store_elements_unboxed_under_their_own_types() {
    // A million doubles: one object of category s holding an 8 MB buffer, no boxed floats.
    let (totals, text) = category_totals(
        "(defvar *d* nil)",
        "(setq *d* (make-array 1000000 :element-type 'double-float :initial-element 1.5d0))",
    );
    assert_eq!(totals[1].allocs, 0, "no boxed floats:\n{text}");
    assert_eq!(totals[2].allocs, 1, "one array:\n{text}");
    assert!((8_000_000..8_001_000).contains(&totals[2].bytes), "{} bytes:\n{text}", totals[2].bytes);
    assert!(text.contains("double-float array"), "{text}");
    // 6400 bits take 800 bytes, packed.
    let (totals, text) = category_totals("(defvar *b* nil)", "(setq *b* (make-array 6400 :element-type 'bit))");
    assert_eq!(totals[2].allocs, 1, "{text}");
    assert!((800..1000).contains(&totals[2].bytes), "{} bytes:\n{text}", totals[2].bytes);
    assert!(text.contains("bit-vector"), "{text}");
    // A complex is one object of category o; its double parts are not boxed floats.
    let (totals, text) = category_totals("(defvar *c* nil)", "(setq *c* (complex 1.5d0 2.5d0))");
    assert_eq!((totals[1].allocs, totals[3].allocs), (0, 1), "{text}");
    assert!(text.contains("complex"), "{text}");
}

/// The cons allocations of each calling-context path (function names from the
/// root, joined by " > ") of running `profiled` under a fresh profile.
fn conses_by_path(setup: &str, profiled: &str, options: MonitorOptions) -> Vec<(String, u64)> {
    let mut lisp = interpreter();
    eval(&mut lisp, setup);
    lisp.profiler().start(Some(options), false);
    eval(&mut lisp, profiled);
    lisp.profiler().stop();
    let profile = lisp.profiler().full_profile();
    let path_of = |mut id: Option<mprof_engine::model::NodeId>| {
        let mut names = Vec::new();
        while let Some(n) = id {
            let node = &profile.nodes[n.0 as usize];
            // The root stands for no function.
            if let Some(f) = profile.functions.get(node.func.0 as usize) {
                names.push(f.name.clone());
            }
            id = node.parent;
        }
        names.reverse();
        names.join(" > ")
    };
    (0..profile.nodes.len())
        .map(|i| (path_of(Some(mprof_engine::model::NodeId(i as u32))), profile.nodes[i].counters[0].allocs))
        .filter(|(_, allocs)| *allocs > 0)
        .collect()
}

/// The conses of each path ending in `suffix`, in node order.
fn conses_of_paths_ending_in(paths: &[(String, u64)], suffix: &str) -> Vec<u64> {
    paths.iter().filter(|(p, _)| p.ends_with(suffix)).map(|(_, a)| *a).collect()
}

/// The conses charged to paths ending in `suffix`, and how many such paths there are.
fn conses_ending_in(paths: &[(String, u64)], suffix: &str) -> (u64, usize) {
    let hits = conses_of_paths_ending_in(paths, suffix);
    (hits.iter().sum(), hits.len())
}

/// The profiler caches a builtin's allocation site by its caller's node and call
/// site: callers interleaved in one loop, one function calling CONS from two
/// places, and the same builtin under two callers must each keep their own counts.
const BUILTIN_CALLERS: &str = "(defvar *keep* nil)
  (defun c (x) (cons x x))
  (defun c2 (x) (cons x (cons x x)))
  (defun a (n) (dotimes (i n) (setq *keep* (c i))))
  (defun b (n) (dotimes (i n) (setq *keep* (c i)) (setq *keep* (c2 i))))
  (defun run () (dotimes (k 10) (a 30) (b 20) (a 1)))";

#[test]
fn a_builtins_allocations_are_charged_to_each_caller_and_call_site() {
    let paths = conses_by_path(BUILTIN_CALLERS, "(run)", MonitorOptions::default());
    assert_eq!(conses_ending_in(&paths, "RUN > A > C > CONS"), (310, 1), "{paths:?}");
    assert_eq!(conses_ending_in(&paths, "RUN > B > C > CONS"), (200, 1), "{paths:?}");
    // Two calls of CONS in C2, one node when call sites are not told apart.
    assert_eq!(conses_ending_in(&paths, "RUN > B > C2 > CONS"), (400, 1), "{paths:?}");

    let split = conses_by_path(BUILTIN_CALLERS, "(run)", MonitorOptions { call_sites: true, ..MonitorOptions::default() });
    // RUN calls A from two places: 300 conses under one, 10 under the other.
    assert_eq!(conses_of_paths_ending_in(&split, "RUN > A > C > CONS"), vec![300, 10], "{split:?}");
    // Told apart: each CONS of C2 has a node of its own, 200 conses each.
    assert_eq!(conses_of_paths_ending_in(&split, "C2 > CONS"), vec![200, 200], "{split:?}");
}
