//! Turning the recorded tree into an `mprof_engine::Profile` and writing it.
//!
//! Runs under the reentrancy guard and [`DUMP_LOCK`]: at exit, on the dump
//! signal, on `mprof_dump`, and before aborting on a heap error. Raw nodes
//! (one per distinct return-address path) become profile nodes: each address
//! expands to its function and any functions inlined at it, paths that
//! symbolize alike are unified, and a function calling itself directly folds
//! into one node whose `recursion` counts the folded levels. Only nodes with
//! counts (or errors) below them are written, so the file stays small.
//! The file is written by the engine's `save_file_noting`, to a temporary name
//! renamed when complete, so a reader never sees half a profile; the name is
//! noted in `state` so that a process dying meanwhile removes it.
//!
//! The writer sits above `state` and `samples` and below `endings`, which
//! calls it however the process ends; the hot path (`runtime`) never imports it.

use crate::cct::{self, BINS, ROOT};
use crate::leaks::Verdict;
use crate::state::{self, DUMP_LOCK, ErrorKind};
use crate::symbolize::Symbolizer;
use mprof_engine::{
    BinKey, BinRow, CategoryScheme, Counters, Figure, FunctionInfo, HeapError, HeapErrorKind,
    Language, NodeId, Profile, ProfileBuilder,
};
use std::collections::HashMap;

fn counters(c: [u64; 4]) -> Counters {
    Counters {
        allocs: c[0],
        bytes: c[1],
        frees: c[2],
        freed_bytes: c[3],
    }
}

/// The profile of everything recorded since start, the last reset, or the fork.
pub fn build_profile(symbolizer: &mut Symbolizer) -> Profile {
    let totals = cct::snapshot();
    let totals = match state::BASELINE.with(|b| b.as_ref().map(totals_clone)) {
        Some(base) => totals.minus(&base),
        None => totals,
    };
    let errors = state::ERRORS.with(|e| e.clone());
    let n = totals.nodes.len();

    // Keep a node when it or a descendant has counts or an error.
    let mut keep = vec![false; n];
    let mut parent_of = vec![ROOT; n];
    let mut address_of = vec![0u64; n];
    for i in 1..n {
        if let Some((p, a)) = cct::node_info(i as u32) {
            parent_of[i] = p;
            address_of[i] = a;
        }
    }
    for e in &errors {
        if let Some(k) = keep.get_mut(e.node as usize) {
            *k = true;
        }
    }
    for i in (1..n).rev() {
        if keep[i] || totals.nodes[i].iter().any(|c| c.iter().any(|&x| x != 0)) {
            keep[i] = true;
            keep[parent_of[i] as usize] = true;
        }
    }

    let mut profile = Profile::empty(Language::C, CategoryScheme::c_sizes());
    let mut builder = ProfileBuilder::new();
    let mut mapped = vec![0u32; n];
    for i in 1..n {
        if !keep[i] {
            continue;
        }
        let mut node = mapped[parent_of[i] as usize];
        let frames = symbolizer.frames(address_of[i]);
        let own_counts = totals.nodes[i].iter().any(|c| c.iter().any(|&x| x != 0));
        if node == 0 && !own_counts && frames.iter().all(is_startup_frame) {
            // The C runtime's process and thread start-up frames (__libc_start_call_main,
            // start_thread, clone3) above main or a thread function: paths start below them.
            continue;
        }
        for frame in frames {
            let info = FunctionInfo {
                name: frame.name,
                file: frame.file,
                line: frame.start_line,
                module: frame.module,
            };
            let func = builder.function(&mut profile, info);
            let site = frame.line.map_or(0, u64::from);
            node = builder.child(&mut profile, NodeId(node), func, site).0;
        }
        mapped[i] = node;
        for (dst, src) in profile.nodes[node as usize]
            .counters
            .iter_mut()
            .zip(totals.nodes[i])
        {
            dst.add(&counters(src));
        }
    }
    let types = crate::symbolize::type_names_by_size();
    // The bins above 1024 bytes are one row of the paper's table (`BinKey::of_bin`).
    let mut larger = [0u64; 4];
    for (bin, c) in totals.bins.iter().enumerate().take(BINS) {
        let key = BinKey::of_bin(bin);
        let BinKey::Size(size) = key else {
            for (x, v) in larger.iter_mut().zip(c) {
                *x += v;
            }
            continue;
        };
        if c.iter().any(|&x| x != 0) {
            let labels = types.get(&size).cloned().unwrap_or_default();
            profile.bins.push(BinRow { key, counters: counters(*c), labels });
        }
    }
    if larger.iter().any(|&x| x != 0) {
        profile.bins.push(BinRow { key: BinKey::Larger, counters: counters(larger), labels: Vec::new() });
    }
    for e in errors {
        let kind = match e.kind {
            ErrorKind::DoubleFree => HeapErrorKind::DoubleFree,
            ErrorKind::InvalidFree => HeapErrorKind::InvalidFree,
            ErrorKind::ReallocOfFreed => HeapErrorKind::ReallocOfFreed,
        };
        let node = NodeId(mapped.get(e.node as usize).copied().unwrap_or(0));
        match profile
            .errors
            .iter_mut()
            .find(|x| x.kind == kind && x.node == node)
        {
            Some(x) => x.count += e.count,
            None => profile.errors.push(HeapError {
                kind,
                node,
                address: e.address,
                count: e.count,
            }),
        }
    }
    let overall = totals.overall();
    profile.samples = crate::samples::for_profile(&totals.bins);
    // The peak's contexts: those of the sample that set it, unless the sample
    // taken now (the series' last) is as high. A peak sampled while snapshots
    // were spaced out keeps an earlier snapshot: say which.
    let highest = profile
        .samples
        .iter()
        .map(|s| s.live_bytes)
        .max()
        .unwrap_or(0);
    let (snap_live, snap_ns, snap_nodes) = crate::samples::peak();
    let peak_nodes = if overall[1].saturating_sub(overall[3]) >= highest {
        crate::samples::live_by_node(&totals)
    } else {
        if snap_live < highest {
            set_metadata(
                &mut profile,
                "memory at peak",
                &format!(
                    "contexts of the sample at {:.3} s ({snap_live} live bytes), the highest with a per-context snapshot",
                    snap_ns as f64 / 1e9
                ),
            );
        }
        snap_nodes
    };
    add_figure(&mut profile, "memory at peak", peak_nodes, &mapped);
    let temporary = totals
        .node_temporary
        .iter()
        .enumerate()
        .map(|(i, t)| (i as u32, t[0], t[1]));
    add_figure(&mut profile, "temporary allocations", temporary, &mapped);
    if let Some((from, registers)) = state::exit_point()
        && state::config().is_some_and(|c| c.leak_check)
    {
        let (summary, verdicts) =
            classify_leaks(symbolizer, from, &registers, &parent_of, &address_of);
        add_leak_summary(&mut profile, &summary);
        // Suppressed blocks get no table: suppressing is asking not to see them.
        for (name, class) in [
            ("definitely lost", Verdict::Definite),
            ("indirectly lost", Verdict::Indirect),
            ("still reachable", Verdict::Reachable),
        ] {
            let rows = verdicts
                .iter()
                .filter(|v| v.1 == class)
                .map(|&(node, _, size)| (node, 1, size));
            add_figure(&mut profile, name, rows, &mapped);
        }
    }
    add_metadata(&mut profile);
    add_rates(&mut profile, overall, totals.temporary);
    profile
}

/// Adds the figure `name` from (raw node, count, bytes) rows, summed per profile
/// node (`mapped`: raw node -> profile node; nodes it does not know, made after
/// the snapshot, go to the root). Left out when it has no row.
fn add_figure(
    profile: &mut Profile,
    name: &str,
    rows: impl IntoIterator<Item = (u32, u64, u64)>,
    mapped: &[u32],
) {
    let mut sums: HashMap<u32, (u64, u64)> = HashMap::new();
    for (raw, count, bytes) in rows {
        if count == 0 && bytes == 0 {
            continue;
        }
        let node = mapped.get(raw as usize).copied().unwrap_or(0);
        let slot = sums.entry(node).or_default();
        slot.0 = slot.0.saturating_add(count);
        slot.1 = slot.1.saturating_add(bytes);
    }
    if sums.is_empty() {
        return;
    }
    let mut rows: Vec<(NodeId, u64, u64)> = sums
        .into_iter()
        .map(|(n, (c, b))| (NodeId(n), c, b))
        .collect();
    rows.sort_unstable_by_key(|r| r.0.0);
    profile.figures.push(Figure {
        name: name.to_string(),
        rows,
    });
}

/// The leak check at exit: which never-freed blocks are lost (see `leaks`).
fn classify_leaks(
    symbolizer: &mut Symbolizer,
    from: usize,
    registers: &[usize],
    parent_of: &[u32],
    address_of: &[u64],
) -> (crate::leaks::Summary, Vec<(u32, Verdict, u64)>) {
    let patterns = crate::leaks::patterns(state::config().and_then(|c| c.suppress.as_deref()));
    let high = crate::stack::current_bounds().high;
    let mut memo: HashMap<u32, bool> = HashMap::new();
    let mut suppressed = |node: u32| -> bool {
        // The path from the node up to the root, stopping at a node already decided.
        let mut path = Vec::new();
        let mut n = node;
        let mut verdict = false;
        while n != ROOT && (n as usize) < parent_of.len() {
            if let Some(&v) = memo.get(&n) {
                verdict = v;
                break;
            }
            path.push(n);
            n = parent_of[n as usize];
        }
        for &p in path.iter().rev() {
            verdict = verdict
                || symbolizer.frames(address_of[p as usize]).iter().any(|f| {
                    patterns
                        .iter()
                        .any(|pat| crate::leaks::matches(pat, &f.name))
                });
            memo.insert(p, verdict);
        }
        verdict
    };
    // SAFETY: at exit, under the guard; [from, high) is this thread's stack above our frames.
    unsafe {
        crate::leaks::classify(
            state::epoch(),
            cct::node_count(),
            (from, high),
            registers,
            &mut suppressed,
        )
    }
}

fn add_leak_summary(profile: &mut Profile, s: &crate::leaks::Summary) {
    for (key, v) in [
        ("definitely lost", s.definite),
        ("indirectly lost", s.indirect),
        ("still reachable", s.reachable),
        ("suppressed", s.suppressed),
    ] {
        set_metadata(profile, key, &format!("{} blocks, {} bytes", v[0], v[1]));
    }
}

/// heaptrack's summary figures: peak RSS, allocation rate, temporary allocations.
fn add_rates(profile: &mut Profile, overall: [u64; 4], temporary: [u64; 2]) {
    // SAFETY: getrusage fills the struct.
    let max_rss_kb = unsafe {
        let mut u: libc::rusage = core::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u.ru_maxrss
    };
    set_metadata(
        profile,
        "peak RSS",
        &format!("{} bytes", max_rss_kb.max(0) as u64 * 1024),
    );
    let seconds = crate::samples::elapsed_s();
    if seconds > 0.0 {
        set_metadata(
            profile,
            "allocations per second",
            &format!("{:.0} over {seconds:.3} s", overall[0] as f64 / seconds),
        );
    }
    let share = if overall[0] == 0 {
        0.0
    } else {
        100.0 * temporary[0] as f64 / overall[0] as f64
    };
    set_metadata(
        profile,
        "temporary allocations",
        &format!(
            "{} ({share:.1}% of allocations), {} bytes: freed with no other allocation by their thread in between",
            temporary[0], temporary[1]
        ),
    );
}

/// Frames of the C runtime's process and thread start-up, above `main` or a thread function.
fn is_startup_frame(frame: &crate::symbolize::Frame) -> bool {
    matches!(
        frame.name.as_str(),
        "_start" | "__libc_start_main" | "start_thread" | "clone" | "clone3" | "__clone"
    ) || frame.module.as_deref().is_some_and(|m| {
        m.starts_with("libc.so") || m.starts_with("ld-linux") || m.starts_with("libpthread")
    })
}

fn totals_clone(t: &cct::Totals) -> cct::Totals {
    cct::Totals {
        nodes: t.nodes.clone(),
        bins: t.bins.clone(),
        temporary: t.temporary,
        node_temporary: t.node_temporary.clone(),
    }
}

fn set_metadata(profile: &mut Profile, key: &str, value: &str) {
    profile.metadata.retain(|(k, _)| k != key);
    profile.metadata.push((key.to_string(), value.to_string()));
}

fn add_metadata(profile: &mut Profile) {
    let program = std::fs::read_link("/proc/self/exe")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let command = std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    set_metadata(profile, "program", &program);
    set_metadata(profile, "command", &command);
    set_metadata(profile, "pid", &std::process::id().to_string());
    if let Some(c) = state::config() {
        let unwind = match c.unwind {
            crate::config::Unwind::Auto => "cfi or frame pointers, per module",
            crate::config::Unwind::FramePointers => "frame pointers",
            crate::config::Unwind::Dwarf => "dwarf",
        };
        set_metadata(profile, "unwind", unwind);
        set_metadata(profile, "depth", &c.depth.to_string());
    }
}

/// Write the profile to `path` (temporary file, then rename).
pub fn write_to(path: &str) -> Result<(), String> {
    state::with_guard(|| {
        DUMP_LOCK.lock();
        let r = (|| {
            let mut symbolizer = Symbolizer::new();
            let profile = build_profile(&mut symbolizer);
            let mut bytes = Vec::new();
            profile
                .write(&mut bytes)
                .map_err(|e| format!("cannot encode the profile: {e}"))?;
            // A device or a pipe (MPROF_OUT=/dev/null) is written in place.
            mprof_engine::save_file_noting(std::path::Path::new(path), &bytes, &mut state::set_temporary)
                .map_err(|e| format!("cannot write {path}: {e}"))
        })();
        DUMP_LOCK.unlock();
        r
    })
}

/// Write to MPROF_OUT (with `%p` expanded); errors go to stderr, the program goes on.
pub fn write_default_file() {
    let Some(cfg) = state::config() else { return };
    if state::SILENT.load(core::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let forked = state::FORKED_CHILD.load(core::sync::atomic::Ordering::Relaxed);
    let path = cfg.path_for(std::process::id(), forked);
    if let Err(e) = write_to(&path) {
        state::with_guard(|| eprintln!("mprof: {e}"));
    }
}
