//! End-to-end tests of the execution profiles: `--count` (pxp-style annotated listing
//! and call counts), `--time` (gprof-style flat profile and call graph), `--io`, the
//! MPROF package's `:counts`/`:time` reports, and profiles surviving an abnormal end.
//!
//! These tests are declared by lisp/cli/Cargo.toml (they run the `mprof-lisp` binary).
//!
//! Counts are known by construction and pinned exactly (snapshots and assertions).
//! Times are not reproducible: snapshots of time tables mask every decimal number and
//! put rows in name order, so they pin the layout, the call counts, the instruction
//! counts and the shape of the call graph, while assertions check the time arithmetic.

use std::path::Path;

mod support;

use support::run_with_files;
use mprof_engine::Profile;
use mprof_engine::exec::CountKind;

/// A loop of 1000 whose branch is taken 300 times, and a recursion called 2^11 - 1 times.
const BRANCHES: &str = ";;; Counts known by construction.
(defvar *small* 0)
(defvar *large* 0)

(defun classify (i)
  (if (< i 300)
      (incf *small*)
      (incf *large*)))

(defun run ()
  (dotimes (i 1000)
    (classify i))
  (list *small* *large*))

;; Called 2^(n+1) - 1 times for n = 10: 2047.
(defun count-down (n)
  (when (> n 0)
    (count-down (1- n))
    (count-down (1- n))))

(print (run))
(count-down 10)
";

/// Mutual recursion without macros or calls of builtins, so the call graph holds only
/// the program's functions: MY-EVEN-P is called 20 + 100 times, MY-ODD-P 100 times.
const MUTUAL: &str = "(defun my-even-p (n) (if (= n 0) t (my-odd-p (- n 1))))
(defun my-odd-p (n) (if (= n 0) nil (my-even-p (- n 1))))
(defun repeat (k)
  (if (> k 0)
      (progn (my-even-p 10) (repeat (- k 1)))
      nil))
(repeat 20)
";

fn read_profile(path: &Path) -> Profile {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("no profile at {}: {e}", path.display()));
    Profile::read(&bytes).unwrap_or_else(|e| panic!("unreadable profile: {e}"))
}

fn count_of(p: &Profile, kind: CountKind, text: &str, source: &str) -> u64 {
    let start = source.find(text).unwrap_or_else(|| panic!("{text} not in the source")) as u64;
    p.exec
        .counts
        .iter()
        .find(|c| c.kind == kind && c.start == start)
        .unwrap_or_else(|| panic!("no {kind:?} count for {text}"))
        .count
}

/// Masks every decimal number (times, percentages) with `#`, the time unit (chosen by
/// the magnitude of the total) with `<unit>`, and collapses runs of spaces (column widths
/// follow the masked numbers' lengths).
fn mask_times(text: &str) -> String {
    let masked = mask_decimals(&text.replace("(times in us)", "(times in <unit>)").replace("(times in ms)", "(times in <unit>)"));
    let masked = masked.replace("# us", "# <unit>").replace("# ms", "# <unit>");
    masked
        .lines()
        // The clock depends on the machine (invariant TSC or not).
        .map(|l| match (l.strip_prefix("clock: "), l.find(';')) {
            (Some(_), Some(semi)) => format!("clock: <source>{}", &l[semi..]),
            _ => l.to_string(),
        })
        .map(|l| if !l.is_empty() && l.chars().all(|c| c == '-') { "-----".to_string() } else { l.to_string() })
        .map(|l| l.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Masks every decimal number (times, percentages) with `#`.
fn mask_decimals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let mut j = i;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            if j + 1 < chars.len() && chars[j] == '.' && chars[j + 1].is_ascii_digit() {
                j += 1;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
                out.push('#');
            } else {
                out.extend(&chars[i..j]);
            }
            i = j;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Masks `[index]` numbers of the call graph (they follow the time order).
fn mask_indexes(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        match rest[open..].find(']') {
            Some(close) if rest[open + 1..open + close].chars().all(|c| c.is_ascii_digit()) => {
                out.push_str("[#]");
                rest = &rest[open + close + 1..];
            }
            _ => {
                out.push('[');
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The time tables in a reproducible form: decimals masked, flat-profile rows and
/// call-graph entries (and the parent and child lines inside each) in name order.
/// The function name of a flat-profile row: the words from the first that is not a number
/// (or a masked one).
fn row_name(row: &str) -> String {
    let words: Vec<&str> = row.split_whitespace().collect();
    let first = words.iter().position(|w| !w.chars().all(|c| c.is_ascii_digit() || c == '#' || c == '.')).unwrap_or(words.len());
    words[first..].join(" ")
}

fn normalize_time_report(text: &str) -> String {
    let masked = mask_times(text);
    let mut out: Vec<String> = Vec::new();
    let mut lines = masked.lines().peekable();
    while let Some(line) = lines.next() {
        out.push(line.to_string());
        if line.starts_with("%time") {
            // Flat profile: rule, rows up to <TOTAL>.
            if let Some(rule) = lines.next() {
                out.push(rule.to_string());
            }
            let mut rows = Vec::new();
            while let Some(l) = lines.peek() {
                if l.contains("<TOTAL>") {
                    break;
                }
                rows.push(lines.next().unwrap_or_default().to_string());
            }
            // By the last word, then the whole name: two members of one cycle end alike
            // ("<cycle 1>") and must not keep the order their measured times gave them.
            rows.sort_by_key(|r| (r.split_whitespace().last().map(String::from), row_name(r)));
            out.extend(rows);
        }
        if line.starts_with("index") {
            // Call graph: entries separated by rules, until a line that is not part of it.
            if let Some(l) = lines.next() {
                out.push(l.to_string());
            }
            let mut entries: Vec<Vec<String>> = Vec::new();
            let mut current: Vec<String> = Vec::new();
            while let Some(l) = lines.peek() {
                if l.trim().is_empty() {
                    break;
                }
                let l = lines.next().unwrap_or_default();
                if l.starts_with("----") {
                    if !current.is_empty() {
                        entries.push(std::mem::take(&mut current));
                    }
                    continue;
                }
                current.push(mask_indexes(l));
            }
            let mut sorted: Vec<String> = Vec::new();
            for entry in &mut entries {
                let primary = entry.iter().position(|l| l.starts_with('[')).unwrap_or(0);
                let (parents, rest) = entry.split_at_mut(primary);
                parents.sort();
                if let Some((_, children)) = rest.split_first_mut() {
                    children.sort();
                }
            }
            entries.sort_by_key(|e| e.iter().find(|l| l.starts_with('[')).cloned());
            for e in entries {
                sorted.push("-----".into());
                sorted.extend(e);
            }
            out.extend(sorted);
        }
    }
    out.join("\n")
}

#[test]
fn count_listing_shows_counts_known_by_construction() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let r = run_with_files(
        dir.path(),
        &[("branches.lisp", BRANCHES)],
        &["--count", "--report", "report.txt", "--profile-out", "counts.mprof", "branches.lisp"],
        "",
    );
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "\n(300 700) ", ""));
    let report = std::fs::read_to_string(dir.path().join("report.txt")).unwrap_or_default();
    insta::assert_snapshot!("branches_listing", report);

    let p = read_profile(&dir.path().join("counts.mprof"));
    let defun_classify = &BRANCHES[BRANCHES.find("(defun classify").unwrap_or(0)..];
    let classify = &defun_classify[..defun_classify.find("\n\n").unwrap_or(0)];
    assert_eq!(count_of(&p, CountKind::Entry, classify, BRANCHES), 1000);
    assert_eq!(count_of(&p, CountKind::Branch, "(incf *small*)", BRANCHES), 300);
    assert_eq!(count_of(&p, CountKind::Branch, "(incf *large*)", BRANCHES), 700);
    assert_eq!(count_of(&p, CountKind::Statement, "(classify i)", BRANCHES), 1000);
    let entries: Vec<(&str, u64)> =
        p.exec.counts.iter().filter(|c| c.kind == CountKind::Entry).map(|c| (c.function.as_str(), c.count)).collect();
    assert!(entries.contains(&("COUNT-DOWN", 2047)), "{entries:?}");
    assert!(entries.contains(&("RUN", 1)), "{entries:?}");

    // The listing printed later from the file and the source (what `mprof listing` does;
    // the command itself is tested with the `mprof` binary in tools/mprof/tests).
    let source = mprof_listing::find_source(&p, "branches.lisp").expect("source recorded");
    let options = mprof_listing::ListingOptions::default();
    let listing = mprof_listing::render_listing(&p, source, BRANCHES, &options).expect("listing");
    assert!(listing.contains("700.---|") && report.contains(listing.as_str()), "{listing}");
    // A changed source is refused rather than mislabelled.
    let err = mprof_listing::render_listing(&p, source, &BRANCHES.replace("300", "301"), &options).unwrap_err();
    assert!(err.contains("changed since the run"), "{err}");
}

#[test]
fn only_restricts_the_listing_to_named_functions() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let r = run_with_files(
        dir.path(),
        &[("branches.lisp", BRANCHES)],
        &["--count", "--only", "classify", "--profile-out", "p.mprof", "branches.lisp"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listing = &r.stderr[r.stderr.find("Execution counts:").unwrap_or(0)..];
    assert!(listing.contains("(defun classify (i)"), "{listing}");
    assert!(!listing.contains("count-down") && !listing.contains("defvar"), "{listing}");
}

#[test]
fn time_call_graph_of_mutual_recursion() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let r = run_with_files(
        dir.path(),
        &[("mutual.lisp", MUTUAL)],
        &["--time", "--report", "report.txt", "--profile-out", "time.mprof", "mutual.lisp"],
        "",
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let report = std::fs::read_to_string(dir.path().join("report.txt")).unwrap_or_default();
    insta::assert_snapshot!("mutual_time", normalize_time_report(&report));

    let p = read_profile(&dir.path().join("time.mprof"));
    let Some(t) = &p.exec.time else { panic!("no time profile in the file") };
    let name = |n: &mprof_engine::exec::TimeNode| p.functions.get(n.func.0 as usize).map(|f| f.name.as_str());
    let calls = |f: &str| t.nodes.iter().filter(|n| name(n) == Some(f)).map(|n| n.calls).sum::<u64>();
    assert_eq!(calls("MY-EVEN-P"), 120);
    assert_eq!(calls("MY-ODD-P"), 100);
    assert_eq!(calls("REPEAT"), 21);
    // Self times partition the run: none exceeds the elapsed time, and they add up to
    // at most the elapsed time (compensation only ever subtracts).
    let total: u64 = t.nodes.iter().map(|n| n.self_ns).sum();
    assert!(total > 0 && total <= t.clock.elapsed_ns, "self {total} ns, elapsed {} ns", t.clock.elapsed_ns);
    assert!(t.clock.read_cost_ps > 0 && t.clock.resolution_ps > 0);
}

#[test]
fn instructions_are_counted_per_function() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let program = "(defun fib (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))\n(fib 15)\n";
    let run_once = |out: &str| {
        let r = run_with_files(dir.path(), &[("fib.lisp", program)], &["--time", "--profile-out", out, "fib.lisp"], "");
        assert_eq!(r.code, 0, "{}", r.stderr);
        let p = read_profile(&dir.path().join(out));
        let t = p.exec.time.clone().unwrap_or_default();
        let fib = p.functions.iter().position(|f| f.name == "FIB").unwrap_or(usize::MAX);
        let nodes: Vec<_> = t.nodes.iter().filter(|n| n.func.0 as usize == fib).copied().collect();
        assert_eq!(nodes.len(), 1, "self-recursion is folded into one context");
        (nodes[0].calls, nodes[0].recursion, nodes[0].instructions)
    };
    let (calls, recursion, instructions) = run_once("a.mprof");
    // fib(15) makes 2 * fib(16) - 1 = 1973 calls, all but the first from itself.
    assert_eq!((calls, recursion), (1973, 1972));
    assert!(instructions > calls * 5, "{instructions} instructions for {calls} calls");
    assert_eq!(run_once("b.mprof").2, instructions, "instruction counts are deterministic");
}

#[test]
fn io_summary_counts_opens_reads_writes_and_bytes() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let program = "(with-open-file (out \"data.txt\" :direction :output :if-exists :supersede)
  (dotimes (i 100) (write-line \"0123456789\" out)))
(with-open-file (in \"data.txt\") (read-line in))
(write-string \"done\")
";
    let r = run_with_files(
        dir.path(),
        &[("io.lisp", program)],
        &["--io", "--report", "report.txt", "--profile-out", "io.mprof", "io.lisp"],
        "",
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, "done"), "{}", r.stderr);
    let p = read_profile(&dir.path().join("io.mprof"));
    let row = p.exec.io.iter().find(|r| r.stream == "data.txt").cloned().unwrap_or_default();
    // 100 WRITE-LINE calls: the text and the newline are written separately or together;
    // the bytes are exact either way.
    assert_eq!((row.opens, row.reads, row.bytes_read, row.bytes_written), (2, 1, 1100, 1100));
    assert!(row.writes >= 100, "{row:?}");
    let out = p.exec.io.iter().find(|r| r.stream == "*standard-output*").cloned().unwrap_or_default();
    assert_eq!((out.writes, out.bytes_written), (1, 4));
    let report = std::fs::read_to_string(dir.path().join("report.txt")).unwrap_or_default();
    insta::assert_snapshot!("io_summary", mask_times(&report));
}

#[test]
fn an_unhandled_error_still_reports_and_writes_the_profile() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let program = "(defun step1 (i) (* i 2))\n(dotimes (i 50) (step1 i))\n(error \"stopped here\")\n(step1 0)\n";
    let r = run_with_files(
        dir.path(),
        &[("dies.lisp", program)],
        &["--count", "--time", "--profile-out", "dies.mprof", "dies.lisp"],
        "",
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("stopped here"), "{}", r.stderr);
    assert!(r.stderr.contains("50.---|(defun step1 (i) (* i 2))"), "{}", r.stderr);
    assert!(r.stderr.contains("Flat profile"), "{}", r.stderr);
    let p = read_profile(&dir.path().join("dies.mprof"));
    assert_eq!(count_of(&p, CountKind::Entry, "(defun step1 (i) (* i 2))", program), 50);
    // The load stopped at the error: the last form was never read, so it has no count.
    let last = r.stderr.lines().find(|l| l.ends_with("|(step1 0)")).unwrap_or_default();
    assert!(!last.contains(".---"), "{last}");
    assert!(p.exec.time.is_some());
}

/// Runs a program that never ends under --count --time, sends it `signal` once it runs,
/// and checks that it ends with an interrupt error having printed and written its profile.
#[cfg(unix)]
fn interrupted_run_keeps_the_profile(signal: &str) {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().expect("temporary directory");
    let program = "(defvar *n* 0)\n(defun spin () (loop (incf *n*)))\n(spin)\n";
    std::fs::write(dir.path().join("spin.lisp"), program).expect("write program");
    let child = Command::new(support::binary())
        .args(["--count", "--time", "--profile-out", "spin.mprof", "spin.lisp"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mprof-lisp");
    // Give the interpreter time to start and install its handlers.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let sent = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
    assert!(sent.is_ok_and(|s| s.success()), "kill -{signal} failed");
    let out = child.wait_with_output().expect("wait for mprof-lisp");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("interrupt"), "{stderr}");
    assert!(stderr.contains("(defun spin ()"), "the listing is printed: {stderr}");
    let p = read_profile(&dir.path().join("spin.mprof"));
    assert_eq!(count_of(&p, CountKind::Entry, "(defun spin () (loop (incf *n*)))", program), 1);
    assert!(count_of(&p, CountKind::Statement, "(incf *n*)", program) > 0);
}

#[cfg(unix)]
#[test]
fn an_interrupted_program_still_reports_and_writes_the_profile() {
    interrupted_run_keeps_the_profile("INT");
}

#[cfg(unix)]
#[test]
fn a_terminated_program_still_reports_and_writes_the_profile() {
    interrupted_run_keeps_the_profile("TERM");
}

#[test]
fn the_repl_reports_counts_and_time() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let input = "(mprof:start :counts t :time t :memory nil)
(load \"branches.lisp\")
(mprof:stop)
(mprof:report :counts t)
(mprof:report :time t)
";
    let r = run_with_files(dir.path(), &[("branches.lisp", BRANCHES)], &[], input);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("300.---|      (incf *small*)"), "{}", r.stdout);
    assert!(r.stdout.contains("COUNT-DOWN"), "{}", r.stdout);
    assert!(r.stdout.contains("Flat profile"), "{}", r.stdout);
    assert!(r.stdout.contains("Call graph"), "{}", r.stdout);
}

/// Branches that are atoms (`n`, `:zero`) have no identity of their own; they are
/// counted at their place in the list, and a LOOP clause's form shows its own count.
const ATOMS: &str = "(defun fib (n)
  (if (< n 2)
      n
      (+ (fib (- n 1)) (fib (- n 2)))))

(defun kind (k)
  (case (mod k 3)
    (0 :zero)
    (1 :one)
    (t :other)))

(defun evens (n)
  (let ((acc 0))
    (loop for i below n
          do (when (evenp i) (incf acc)))
    acc))

(fib 10)
(dotimes (i 10) (kind i))
(evens 10)
";

#[test]
fn atoms_and_loop_clauses_are_counted_in_place() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let r = run_with_files(
        dir.path(),
        &[("atoms.lisp", ATOMS)],
        &["--count", "--report", "report.txt", "--profile-out", "atoms.mprof", "atoms.lisp"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = std::fs::read_to_string(dir.path().join("report.txt")).unwrap_or_default();
    let listing = &report[report.find("Execution counts:").unwrap_or(0)..];
    insta::assert_snapshot!("atoms_listing", listing);
    // fib(10): 177 calls, 89 leaves (n < 2) and 88 inner calls.
    for line in ["177.---|(defun fib (n)", "89.---|      n", "88.---|      (+ (fib", "4.---|    (0 :zero)", "3.---|    (1 :one)"] {
        assert!(listing.contains(line), "{line} missing from\n{listing}");
    }
    assert!(listing.contains("10.---|") && listing.contains("5.---|"), "loop body 10, branch 5:\n{listing}");
}

/// Every branch body with its own count: over i = 0..9, COND's clauses run 3, 4 and 3
/// times, OR's middle operand 9 times (i <= 8) and its last 4 (odd i below 9), CASE's
/// clauses 4, 3 and 3 times, LOOP's ELSE clause 5 times.
const BRANCH_BODIES: &str = "(defun classify (i)
  (cond ((< i 3) 'small)
        ((< i 7) 'mid)
        (t 'big)))
(defun test-or (i)
  (or (> i 8)
      (evenp i)
      (< i 5)))
(defun test-and (i)
  (and (> i 2)
       (oddp i)
       (list i)))
(defun test-case (i)
  (case (mod i 3)
    (0 (list 'zero))
    (1 'one)
    (t 'other)))
(dotimes (i 10) (classify i) (test-or i) (test-and i) (test-case i))
(print (loop for i from 0 below 10 when (evenp i) collect i else collect (- i)))
";

#[test]
fn every_branch_body_has_its_own_count() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let r = run_with_files(
        dir.path(),
        &[("branches.lisp", BRANCH_BODIES)],
        &["--count", "--report", "report.txt", "--profile-out", "b.mprof", "branches.lisp"],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let p = read_profile(&dir.path().join("b.mprof"));
    let count = |text: &str, kind| count_of(&p, kind, text, BRANCH_BODIES);
    assert_eq!(count("'small", CountKind::Statement), 3, "first COND clause body");
    assert_eq!(count("'mid", CountKind::Statement), 4);
    assert_eq!(count("'big", CountKind::Statement), 3);
    assert_eq!(count("(evenp i)\n", CountKind::Branch), 9, "middle operand of OR");
    assert_eq!(count("(< i 5)", CountKind::Branch), 4, "last operand of OR");
    // i > 2: 7 times; then odd: 3, 5, 7, 9.
    assert_eq!(count("(oddp i)", CountKind::Branch), 7, "middle operand of AND");
    assert_eq!(count("(list i)", CountKind::Branch), 4, "last operand of AND");
    assert_eq!(count("(list 'zero)", CountKind::Statement), 4);
    assert_eq!(count("'one", CountKind::Statement), 3);
    assert_eq!(count("'other", CountKind::Statement), 3, "CASE's otherwise clause");
    assert_eq!(count("(- i)", CountKind::Branch), 5, "LOOP's ELSE clause");
    // The listing shows the first COND clause on a line of its own, with its count.
    let listing = std::fs::read_to_string(dir.path().join("report.txt")).unwrap_or_default();
    for line in ["3.---|        ((< i 3) 'small)", "4.---|        ((< i 7) 'mid)", "9.---|      (evenp i)", "7.---|       (oddp i)"] {
        assert!(listing.contains(line), "{line} missing from\n{listing}");
    }
}
