//! Turning the recorded tree into a raw `mprof_engine::Profile` and writing it.
//!
//! Runs under the reentrancy guard and [`DUMP_LOCK`]: at exit, on the dump
//! signal, on `mprof_dump`, and before aborting on a heap error. The profile is
//! raw: one node per recorded node (a distinct return-address path) that has
//! counts (or errors) below it, one function per distinct return address (named
//! `module+0xoffset`), and the table of the modules those addresses lie in (path,
//! build id, load bias, debug link: `modules`). Symbolization, debug information,
//! the C runtime's start-up frames, type names and suppressions are the reader's
//! business (`mprof-symbolize`), so writing costs no debug-information reading.
//! The file is written by the engine's `save_file_noting`, to a temporary name
//! renamed when complete, so a reader never sees half a profile; the name is
//! noted in `state` so that a process dying meanwhile removes it.
//!
//! The writer sits above `state` and `samples` and below `endings`, which
//! calls it however the process ends; the hot path (`runtime`) never imports it.

use crate::cct::{self, BINS, ROOT};
use crate::leaks::Verdict;
use crate::modules::{self, Loaded};
use crate::state::{self, DUMP_LOCK, ErrorKind};
use mprof_engine::{
    BinKey, BinRow, CategoryScheme, Counters, Figure, FuncId, FunctionInfo, HeapError, HeapErrorKind,
    Language, ModuleInfo, Node, NodeId, Profile, RawAddress,
};
use rustc_hash::FxHashMap as HashMap;

fn counters(c: [u64; 4]) -> Counters {
    Counters {
        allocs: c[0],
        bytes: c[1],
        frees: c[2],
        freed_bytes: c[3],
    }
}

/// The functions of a raw profile: one per distinct return address.
struct Addresses<'a> {
    loaded: &'a [Loaded],
    by_address: HashMap<u64, FuncId>,
    /// Loaded module index -> profile module index.
    module_ids: HashMap<usize, u32>,
}

impl Addresses<'_> {
    fn function(&mut self, profile: &mut Profile, address: u64) -> FuncId {
        if let Some(&f) = self.by_address.get(&address) {
            return f;
        }
        let func = FuncId(profile.functions.len() as u32);
        let (module, relative, name, short) = match modules::find(self.loaded, address.wrapping_sub(1)) {
            Some(m) => {
                let l = &self.loaded[m];
                let next = profile.modules.len() as u32;
                let id = *self.module_ids.entry(m).or_insert_with(|| {
                    profile.modules.push(ModuleInfo {
                        path: l.path.clone(),
                        build_id: l.build_id.clone(),
                        bias: l.bias,
                        debug_link: modules::debug_link(&l.path),
                        executable: l.executable,
                    });
                    next
                });
                let short = l.path.rsplit('/').next().unwrap_or(&l.path).to_string();
                let relative = address.wrapping_sub(l.bias);
                (Some(id), relative, format!("{short}+{:#x}", relative.wrapping_sub(1)), Some(short))
            }
            None => (None, address, format!("{address:#x}"), None),
        };
        profile.functions.push(FunctionInfo { name, file: None, line: None, module: short });
        profile.addresses.push(RawAddress { func, module, address: relative });
        self.by_address.insert(address, func);
        func
    }
}

/// The profile of everything recorded since start, the last reset, or the fork.
pub fn build_profile() -> Profile {
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
    let loaded = modules::loaded();
    let mut addresses = Addresses { loaded: &loaded, by_address: HashMap::default(), module_ids: HashMap::default() };
    let mut mapped = vec![0u32; n];
    for i in 1..n {
        if !keep[i] {
            continue;
        }
        let func = addresses.function(&mut profile, address_of[i]);
        let node = profile.nodes.len() as u32;
        profile.nodes.push(Node {
            parent: Some(NodeId(mapped[parent_of[i] as usize])),
            func,
            call_site: 0,
            recursion: 0,
            counters: totals.nodes[i].iter().map(|&c| counters(c)).collect(),
        });
        mapped[i] = node;
    }
    // The bins above 1024 bytes are one row of the paper's table (`BinKey::of_bin`).
    let mut larger = [0u64; 4];
    for (bin, c) in totals.bins.iter().enumerate().take(BINS) {
        let key = BinKey::of_bin(bin);
        let BinKey::Size(_) = key else {
            for (x, v) in larger.iter_mut().zip(c) {
                *x += v;
            }
            continue;
        };
        if c.iter().any(|&x| x != 0) {
            profile.bins.push(BinRow { key, counters: counters(*c), labels: Vec::new() });
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
    // The true peak (`peak`): the highest live bytes there ever were, unless now is
    // as high; its contexts are those of the last snapshot, taken when the peak grew,
    // or the final state when that is the peak.
    let now = overall[1].saturating_sub(overall[3]);
    let (peak, peak_ns, peak_allocated) = crate::peak::peak();
    let peak_nodes = if now >= peak {
        crate::samples::live_by_node(&totals)
    } else {
        let (snap_live, snap_ns, snap_nodes) = crate::peak::snapshot();
        if let Some(at) = profile.samples.iter().position(|s| s.time_ns > peak_ns)
            && profile.samples.iter().all(|s| s.live_bytes < peak)
        {
            // The peak itself as a point of the series (its categories in the
            // proportions of the nearest sample before it).
            let near = profile.samples[at.saturating_sub(1)];
            let mut sample = mprof_engine::Sample { time_ns: peak_ns, live_bytes: peak, allocated_bytes: peak_allocated, ..near };
            let split: u64 = near.live_by_category.iter().sum();
            for (c, n) in sample.live_by_category.iter_mut().zip(near.live_by_category) {
                *c = if split == 0 { 0 } else { (n as u128 * peak as u128 / split as u128) as u64 };
            }
            profile.samples.insert(at, sample);
        }
        if snap_live < peak {
            set_metadata(
                &mut profile,
                "memory at peak",
                &format!(
                    "contexts at {:.3} s ({snap_live} live bytes), the last snapshot before the peak of {peak} bytes at {:.3} s",
                    snap_ns as f64 / 1e9,
                    peak_ns as f64 / 1e9
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
        let (summary, per_node) = classify_leaks(from, &registers);
        add_leak_summary(&mut profile, &summary);
        for (name, class) in [
            ("definitely lost", Verdict::Definite),
            ("indirectly lost", Verdict::Indirect),
            ("still reachable", Verdict::Reachable),
        ] {
            let rows = per_node.iter().filter(|(k, _)| k.1 == class).map(|(k, v)| (k.0, v.0, v.1));
            add_figure(&mut profile, name, rows, &mapped);
        }
        if let Some(code) = state::config().and_then(|c| c.leak_exitcode) {
            let lost = per_node.iter().filter(|(k, _)| k.1 == Verdict::Definite).map(|(k, v)| (k.0, v.1));
            crate::gate::decide(code, lost, &parent_of, &address_of);
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
    let mut sums: HashMap<u32, (u64, u64)> = HashMap::default();
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
    from: usize,
    registers: &[usize],
) -> (crate::leaks::Summary, HashMap<(u32, Verdict), (u64, u64)>) {
    let high = crate::stack::current_bounds().high;
    // SAFETY: at exit, under the guard; [from, high) is this thread's stack above our frames.
    unsafe { crate::leaks::classify(state::epoch(), cct::node_count(), (from, high), registers) }
}

fn add_leak_summary(profile: &mut Profile, s: &crate::leaks::Summary) {
    for (key, v) in [
        ("definitely lost", s.definite),
        ("indirectly lost", s.indirect),
        ("still reachable", s.reachable),
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
        if let Some(patterns) = &c.suppress {
            set_metadata(profile, "suppress", patterns);
        }
    }
}

/// Write the profile to `path` (temporary file, then rename).
pub fn write_to(path: &str) -> Result<(), String> {
    state::with_guard(|| {
        DUMP_LOCK.lock();
        let r = (|| {
            let profile = build_profile();
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
