//! Lisp memory profiling: the allocation hooks that `alloc_object` calls,
//! the calling-context stack the VM keeps in step with its frames, and the
//! profiler's [`Monitor`] they feed.
//!
//! The state belongs to an interpreter (`lent_arena`), which lends it to its
//! thread while its arena runs: the hooks are plain functions called from the
//! heap crate (which knows nothing of the evaluator), and tag drops — the frees
//! — run inside the collector, outside any VM call, so they find the state in a
//! thread-local slot. Two interpreters on one thread never see each other's
//! objects: each arena runs with its own state lent. The time
//! profile is not kept here: the VM owns its recorder and calls it directly, as
//! a thread-local access per call and return would be most of `--time`'s cost;
//! it only borrows this monitor's function table (and its options).
//!
//! Invariants:
//! - While profiling, the context stack has one entry per VM frame (native
//!   frames are transparent), plus one for a builtin being called; the VM
//!   truncates it whenever it pops frames.
//! - An entry's calling-context node is resolved lazily, on the first
//!   allocation under it, from the nearest resolved entry below: an
//!   allocation costs a counter update, not a stack walk.
//! - Contexts deeper than the monitor's depth cap keep their innermost frames:
//!   an entry at index `cap` or more stands for the path of the `cap - 1`
//!   entries ending at it under a `<outer frames>` node (built once per entry),
//!   so the direct table and the kept paths still end in the function that
//!   allocated. The profile's header says how many allocations were so cut.
//! - Site ids (stored in object tags) name (node, category, type) triples.
//!   They are never reused: each epoch (started by configuring or resetting the
//!   profiler) takes ids from `site_base` on, the first four being its
//!   per-category sites of counting mode. A free whose site is below the
//!   current `site_base` is of an object allocated before the epoch began, and
//!   is not counted: a reset profile never shows frees of objects it did not
//!   see allocated, and header totals and tables agree.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Instant;

use mprof_heap::{AllocEvent, AllocHooks, Category};
use mprof_engine::monitor::{Bin, FuncId, FunctionInfo, Monitor, MonitorOptions, NodeId, Sample, TypeId};
use mprof_display::report::{ReportOptions, render_report};
use mprof_engine::scheme::{CategoryScheme, Language};
use mprof_engine::Profile;

/// Sites of an epoch before its first profiled one: one per category, for counting mode.
const COUNTING_SITES: u32 = 4;
const UNRESOLVED: u32 = u32::MAX;
/// The smallest allocation step between two memory samples.
const SAMPLE_STEP_MIN: i64 = 64 << 10;

/// How allocations are being recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing is recorded; `alloc_object` costs one branch.
    Off,
    /// Per-category totals only (for `time` and `room`).
    Counting,
    /// The full calling-context profile.
    Profiling,
}

#[derive(Clone, Copy)]
struct Entry {
    /// The function of this frame, or `None` for a transparent (native) frame.
    func: Option<FuncId>,
    /// Where in its caller the call was made (used when call sites are distinguished).
    call_site: u64,
    node: u32,
    /// One-entry cache of the last allocation site made under this frame:
    /// (type name pointer, length, category) -> site.
    cache_key: (usize, usize, u8),
    cache_site: u32,
}

/// Running totals, kept in every mode but Off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub allocated_objects: [u64; 4],
    pub allocated_bytes: [u64; 4],
    pub freed_objects: [u64; 4],
    pub freed_bytes: [u64; 4],
}

impl Counts {
    pub fn total_allocated_bytes(&self) -> u64 {
        self.allocated_bytes.iter().sum()
    }
    pub fn live_bytes(&self) -> u64 {
        self.total_allocated_bytes().saturating_sub(self.freed_bytes.iter().sum())
    }
}

pub struct ProfState {
    pub mode: Mode,
    pub monitor: Monitor,
    stack: Vec<Entry>,
    /// (node, category, type) of each profiled site of this epoch, indexed by
    /// site - site_base - COUNTING_SITES.
    sites: Vec<(NodeId, u8, TypeId)>,
    /// The first site id of this epoch (0 is "not recorded", so it starts at 1).
    site_base: u32,
    /// The first site id not yet handed out, in any epoch.
    next_site: u32,
    /// Allocations whose context was deeper than the cap (outer frames dropped).
    deep_allocs: u64,
    site_index: HashMap<(u32, u8, u16), u32>,
    pub counts: Counts,
    /// Bytes still to allocate before the next point of the memory-over-time series:
    /// samples follow allocation (a 64 KiB step growing with the bytes allocated),
    /// so a short run has a shape too, not only the points taken after collections.
    until_sample: i64,
    /// Attribute builtins and prelude functions to their Lisp caller.
    pub primitives_to_caller: bool,
    /// Show the system's own helpers and prelude macro expansions (see the VM).
    pub show_internals: bool,
    /// Identifies this monitor in the ids cached in protos.
    pub generation: u32,
    started: Instant,
}

thread_local! {
    static PROF: RefCell<Option<ProfState>> = const { RefCell::new(None) };
}

static NEXT_GENERATION: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

fn new_monitor(options: MonitorOptions) -> Monitor {
    Monitor::new(Language::Lisp, CategoryScheme::lisp(), options)
}

impl ProfState {
    /// Start a new epoch: objects allocated before it report no frees to this profile.
    fn new_epoch(&mut self) {
        self.sites.clear();
        self.site_index.clear();
        for e in &mut self.stack {
            e.cache_site = 0;
        }
        // Ids keep growing; should they ever wrap, older objects could be taken for
        // this epoch's, so start over above anything handed out.
        self.site_base = match self.next_site.checked_add(COUNTING_SITES) {
            Some(_) => self.next_site,
            None => 1,
        };
        self.next_site = self.site_base + COUNTING_SITES;
    }

    pub fn new() -> ProfState {
        ProfState {
            mode: Mode::Off,
            monitor: new_monitor(MonitorOptions::default()),
            stack: Vec::new(),
            sites: Vec::new(),
            site_base: 1,
            next_site: 1 + COUNTING_SITES,
            deep_allocs: 0,
            site_index: HashMap::new(),
            counts: Counts::default(),
            until_sample: SAMPLE_STEP_MIN,
            primitives_to_caller: false,
            show_internals: false,
            generation: NEXT_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            started: Instant::now(),
        }
    }
}

/// Exchange the state lent to this thread with `slot` (lend an interpreter's, or take it back).
/// At thread exit (an interpreter kept in a thread-local) the slot may be gone: then
/// nothing is lent, and the frees of the interpreter's last objects go unrecorded.
pub fn swap_state(slot: &mut Option<ProfState>) {
    let _ = PROF.try_with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            std::mem::swap(&mut *p, slot)
        }
    });
}

/// Set the recording mode of this thread, installing or removing the hooks.
pub fn set_mode(mode: Mode) {
    with_state(|st| {
        st.mode = mode;
        if mode != Mode::Profiling {
            st.stack.clear();
        }
    });
    // Objects allocated while profiling keep reporting their frees after
    // recording stops (so a later report's "kept" is right): the hooks stay
    // installed once anything was profiled, and on_alloc returns at once
    // while the mode is Off.
    let profiled_sites = with_state(|st| !st.sites.is_empty());
    mprof_heap::set_alloc_hooks(match mode {
        Mode::Off if !profiled_sites => None,
        _ => Some(AllocHooks { on_alloc, on_free }),
    });
}

pub fn mode() -> Mode {
    PROF.with(|p| p.borrow().as_ref().map(|s| s.mode).unwrap_or(Mode::Off))
}

/// Configure the monitor (before recording starts): call-site distinction,
/// depth cap, self-recursion folding, attribution of primitives.
pub fn configure(options: MonitorOptions, primitives_to_caller: bool) {
    with_state(|st| {
        st.monitor = new_monitor(options);
        st.stack.clear();
        st.new_epoch();
        st.primitives_to_caller = primitives_to_caller;
        st.generation = NEXT_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
}

/// Run `f` on this thread's state (created on first use).
pub fn with_state<R>(f: impl FnOnce(&mut ProfState) -> R) -> R {
    PROF.with(|p| {
        let mut b = p.borrow_mut();
        f(b.get_or_insert_with(ProfState::new))
    })
}

/// Forget everything recorded (the tree is kept so cached nodes stay valid); objects
/// allocated before are forgotten too: their frees will not be counted.
pub fn reset() {
    with_state(|st| {
        st.monitor.reset();
        st.counts = Counts::default();
        st.deep_allocs = 0;
        st.new_epoch();
    });
}

/// The current totals.
pub fn counts() -> Counts {
    with_state(|st| st.counts)
}

/// A stack entry for a function called from `call_site` in its caller.
pub fn push_function(func: FuncId, call_site: u64) {
    PROF.with(|p| {
        if let Some(st) = p.borrow_mut().as_mut() {
            st.stack.push(Entry { func: Some(func), call_site, node: UNRESOLVED, cache_key: (0, 0, 0), cache_site: 0 });
        }
    });
}

/// A transparent entry (native frames; primitives attributed to their caller).
pub fn push_transparent() {
    PROF.with(|p| {
        if let Some(st) = p.borrow_mut().as_mut() {
            st.stack.push(Entry { func: None, call_site: 0, node: UNRESOLVED, cache_key: (0, 0, 0), cache_site: 0 });
        }
    });
}

/// Cut the context stack to `depth` entries.
pub fn truncate(depth: usize) {
    PROF.with(|p| {
        if let Some(st) = p.borrow_mut().as_mut()
            && st.stack.len() > depth
        {
            st.stack.truncate(depth);
        }
    });
}

/// The monitor options (the time recorder shapes its tree the same way).
pub fn monitor_options() -> MonitorOptions {
    with_state(|st| st.monitor.options())
}

/// Intern a function for the profile. `cached` is the proto's cached id
/// (generation << 32 | id + 1); returns the id and the new cache value.
pub fn function_id(cached: u64, info: impl FnOnce() -> FunctionInfo) -> (FuncId, u64) {
    with_state(|st| {
        if cached >> 32 == st.generation as u64 && cached & 0xffff_ffff != 0 {
            return (FuncId((cached & 0xffff_ffff) as u32 - 1), cached);
        }
        let id = st.monitor.function(info());
        (id, ((st.generation as u64) << 32) | (id.0 as u64 + 1))
    })
}

/// The current monitor's generation (function ids cached in protos carry it).
pub fn generation() -> u32 {
    PROF.with(|p| p.borrow().as_ref().map(|s| s.generation).unwrap_or(0))
}

/// Whether the system's own helpers are shown in profiles.
pub fn show_internals() -> bool {
    PROF.with(|p| p.borrow().as_ref().map(|s| s.show_internals).unwrap_or(false))
}

/// Whether primitives are attributed to their callers.
pub fn primitives_to_caller() -> bool {
    PROF.with(|p| p.borrow().as_ref().map(|s| s.primitives_to_caller).unwrap_or(false))
}

/// The node of the top entry (resolving the unresolved entries below it) and its index;
/// `cap` is the monitor's depth cap (at least 2).
fn resolve(st: &mut ProfState, cap: usize) -> (NodeId, usize) {
    let n = st.stack.len();
    if n == 0 {
        return (NodeId::ROOT, usize::MAX);
    }
    let mut k = n;
    while k > 0 && st.stack[k - 1].node == UNRESOLVED {
        k -= 1;
    }
    let mut node = if k == 0 { NodeId::ROOT } else { NodeId(st.stack[k - 1].node) };
    for i in k..n {
        if i >= cap {
            node = window_node(st, i, cap);
        } else if let Some(f) = st.stack[i].func {
            node = st.monitor.child(node, f, st.stack[i].call_site);
        }
        st.stack[i].node = node.0;
    }
    (node, n - 1)
}

/// The node of entry `i` past the depth cap: its innermost `cap - 1` entries under an
/// `<outer frames>` node, so deep recursion drops outer frames, never inner ones.
fn window_node(st: &mut ProfState, i: usize, cap: usize) -> NodeId {
    let outer = st.monitor.function(FunctionInfo::named("<outer frames>"));
    let mut node = st.monitor.child(NodeId::ROOT, outer, 0);
    for j in i + 2 - cap..=i {
        if let Some(f) = st.stack[j].func {
            node = st.monitor.child(node, f, st.stack[j].call_site);
        }
    }
    node
}

fn on_alloc(e: &AllocEvent<'_>) -> u32 {
    PROF.with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else { return 0 };
        let Some(st) = p.as_mut() else { return 0 };
        if st.mode == Mode::Off {
            return 0;
        }
        let cat = e.category.index();
        let ci = cat as usize & 3;
        st.counts.allocated_objects[ci] += 1;
        st.counts.allocated_bytes[ci] += e.bytes;
        if st.mode != Mode::Profiling {
            return st.site_base + (cat as u32 & 3);
        }
        st.until_sample -= e.bytes as i64;
        if st.until_sample <= 0 {
            st.take_sample();
        }
        let cap = (st.monitor.options().max_depth as usize).max(2);
        let (node, top) = resolve(st, cap);
        if top != usize::MAX && top >= cap {
            st.deep_allocs += 1;
        }
        let key = (e.type_name.as_ptr() as usize, e.type_name.len(), cat);
        let site = if top != usize::MAX && st.stack[top].cache_key == key && st.stack[top].cache_site != 0 {
            st.stack[top].cache_site
        } else {
            let type_id = st.monitor.type_name(e.type_name);
            let site = match st.site_index.get(&(node.0, cat, type_id.0)) {
                Some(&s) => s,
                None => {
                    st.sites.push((node, cat, type_id));
                    let s = st.next_site;
                    st.next_site = st.next_site.saturating_add(1);
                    st.site_index.insert((node.0, cat, type_id.0), s);
                    s
                }
            };
            if top != usize::MAX {
                st.stack[top].cache_key = key;
                st.stack[top].cache_site = site;
            }
            site
        };
        let (node, cat, type_id) = st.sites[(site - st.site_base - COUNTING_SITES) as usize];
        st.monitor.record_alloc(node, cat, e.bytes, Bin::Type(type_id));
        site
    })
}

fn on_free(site: u32, bytes: u64) {
    let _ = PROF.try_with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else { return };
        let Some(st) = p.as_mut() else { return };
        if site < st.site_base {
            // Allocated before this epoch: not part of this profile.
            return;
        }
        if site < st.site_base + COUNTING_SITES {
            let ci = ((site - st.site_base) & 3) as usize;
            st.counts.freed_objects[ci] += 1;
            st.counts.freed_bytes[ci] += bytes;
            return;
        }
        let Some(&(node, cat, type_id)) = st.sites.get((site - st.site_base - COUNTING_SITES) as usize) else { return };
        let ci = cat as usize & 3;
        st.counts.freed_objects[ci] += 1;
        st.counts.freed_bytes[ci] += bytes;
        st.monitor.record_free(node, cat, bytes, Bin::Type(type_id));
    });
}

impl ProfState {
    /// A point of the memory-over-time series now; the next one after another
    /// step of allocation (a thousandth of all allocated so far, at least 64 KiB,
    /// so a long run gets on the order of a thousand points per tenfold growth).
    fn take_sample(&mut self) {
        let allocated = self.counts.total_allocated_bytes();
        let c = &self.counts;
        let s = Sample {
            time_ns: self.started.elapsed().as_nanos() as u64,
            live_bytes: c.live_bytes(),
            allocated_bytes: allocated,
            live_by_category: std::array::from_fn(|i| c.allocated_bytes[i].saturating_sub(c.freed_bytes[i])),
        };
        self.monitor.record_sample(s);
        self.until_sample = ((allocated / 1024) as i64).max(SAMPLE_STEP_MIN);
    }
}

/// Record a point of the memory-over-time series (called after collections).
pub fn sample() {
    PROF.with(|p| {
        if let Some(st) = p.borrow_mut().as_mut()
            && st.mode == Mode::Profiling
        {
            st.take_sample();
        }
    });
}

/// The profile recorded so far.
pub fn profile() -> Profile {
    with_state(|st| {
        if st.deep_allocs > 0 {
            let note = format!(
                "{} allocations in contexts deeper than {} frames: their outer frames are dropped (paths start at <outer frames>; raise --context-depth to keep more)",
                st.deep_allocs,
                st.monitor.options().max_depth
            );
            st.monitor.set_metadata("deep contexts", &note);
        }
        st.monitor.to_profile()
    })
}

/// The four tables (and a header) for the profile recorded so far.
pub fn report(options: &ReportOptions) -> String {
    render_report(&profile(), options)
}

/// Set a metadata entry of the profile (program, command line...).
pub fn set_metadata(key: &str, value: &str) {
    with_state(|st| st.monitor.set_metadata(key, value));
}

/// The category names, in `Counts` order.
pub const CATEGORY_NAMES: [&str; 4] = ["cons", "float", "structure/vector", "other"];

#[allow(dead_code)]
fn category_of(c: Category) -> usize {
    c.index() as usize
}
