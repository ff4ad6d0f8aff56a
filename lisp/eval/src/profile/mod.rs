//! Lisp memory profiling: the allocation hooks that `alloc_object` calls,
//! the calling-context stack the VM keeps in step with its frames, and the
//! profiler's [`Monitor`] they feed.
//!
//! The state belongs to an interpreter (`lent_arena`), which lends it to its
//! thread while its arena runs: the hooks are plain functions called from the
//! heap crate (which knows nothing of the evaluator), and tag drops — the frees
//! — run inside the collector, outside any VM call, so they find the state in a
//! thread-local slot. The VM reaches the context stack through a handle of its
//! own ([`ContextStack`]), so calls and returns cost no thread-local lookup. Two interpreters on one thread never see each other's
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
//!   allocation costs a counter update, not a stack walk. Resolving is
//!   memoized per function (the node it was last entered from) and the site
//!   per node, so the common case hashes nothing. A builtin's allocation (the
//!   most common: CONS called from a Lisp function) is first looked up by its
//!   caller's node and call site, without pushing the builtin's entry; every
//!   cached site is one the general path would give, and the caches are
//!   emptied with the sites at each epoch.
//! - Allocations and frees add to per-site counters; the monitor receives the
//!   sums ([`ProfState::flush`]) before anything reads it (`profile`, `totals`).
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

pub(crate) mod counting;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::collections::HashMap;
use std::time::Instant;

use mprof_heap::{AllocEvent, AllocHooks, SiteFrees, flush_frees};
use mprof_engine::model::{FuncId, FunctionInfo, NodeId, Sample, TypeId};
use mprof_engine::monitor::{Bin, Monitor, MonitorOptions};
use mprof_display::report::{ReportOptions, render_report};
use mprof_engine::scheme::{CategoryScheme, Language};
use mprof_engine::Profile;
use mprof_engine::profile::Counters;

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

/// What identifies an allocation's type in the caches: its name's address and
/// length (the heap passes names that live as long as their type, see
/// `AllocEvent::type_name`) and its category, in two words so a cache compares
/// it with two comparisons.
#[derive(Clone, Copy, PartialEq, Eq)]
struct TypeKey {
    name: usize,
    /// The name's length shifted left by 8, or'ed with the category.
    len_category: usize,
}

impl TypeKey {
    const NONE: TypeKey = TypeKey { name: 0, len_category: 0 };

    #[inline]
    fn of(e: &AllocEvent<'_>) -> TypeKey {
        TypeKey { name: e.type_name.as_ptr() as usize, len_category: (e.type_name.len() << 8) | e.category.index() as usize }
    }

    fn category(self) -> u8 {
        (self.len_category & 3) as u8
    }
}

/// One frame of the calling-context stack, 32 bytes (pushed on every Lisp call).
#[derive(Clone, Copy)]
pub struct Entry {
    /// The function of this frame, or [`NO_FUNC`] for a transparent (native) frame.
    func: u32,
    /// Where in its caller the call was made (a pc; used when call sites are
    /// distinguished).
    call_site: u32,
    node: u32,
    cache_site: u32,
    /// One-entry cache of the last allocation site made under this frame:
    /// `cache_key` -> `cache_site` (0: empty).
    cache_key: TypeKey,
}

/// [`Entry::func`] of a transparent frame.
const NO_FUNC: u32 = u32::MAX;

/// The calling-context stack, shared by the interpreter's profiling state and its VM.
/// The VM pushes and truncates it as it pushes and pops frames, through its own
/// handle ([`ProfState::context_stack`]): a call or a return costs a vector push or
/// a length check, with no thread-local lookup. The allocation hook, which only has
/// the state lent to the thread, reads the same stack ([`ContextStack::entries`]).
///
/// A builtin's entry is made lazily: calling one only notes it as pending, and the
/// entry is pushed if the builtin allocates (most, like ATOM or RPLACD, never do).
#[derive(Clone, Default)]
pub struct ContextStack(Rc<SharedStack>);

#[derive(Default)]
pub struct SharedStack {
    entries: RefCell<Vec<Entry>>,
    /// The builtin being called (function, call site), while it has no entry yet.
    pending: Cell<Option<(FuncId, u64)>>,
}

impl Entry {
    /// Call sites are pcs within one function's code, far below 2^32.
    fn new(func: Option<FuncId>, call_site: u64) -> Entry {
        Entry {
            func: func.map_or(NO_FUNC, |f| f.0),
            call_site: call_site as u32,
            node: UNRESOLVED,
            cache_site: 0,
            cache_key: TypeKey::NONE,
        }
    }

    fn func(&self) -> Option<FuncId> {
        (self.func != NO_FUNC).then_some(FuncId(self.func))
    }

    fn call_site(&self) -> u64 {
        self.call_site as u64
    }
}

impl ContextStack {
    /// An entry for a function called from `call_site` in its caller.
    #[inline]
    pub fn push_function(&self, func: FuncId, call_site: u64) {
        self.entries().push(Entry::new(Some(func), call_site));
    }

    /// A transparent entry (native frames; primitives attributed to their caller).
    #[inline]
    pub fn push_transparent(&self) {
        self.entries().push(Entry::new(None, 0));
    }

    /// Cut the stack to `depth` entries.
    #[inline]
    pub fn truncate(&self, depth: usize) {
        self.0.pending.set(None);
        let mut s = self.0.entries.borrow_mut();
        if s.len() > depth {
            s.truncate(depth);
        }
    }

    /// A builtin called from `call_site` is running (it cannot call Lisp code);
    /// its entry is pushed by the first allocation it makes.
    #[inline]
    pub fn begin_builtin(&self, func: FuncId, call_site: u64) {
        self.0.pending.set(Some((func, call_site)));
    }

    /// The builtin returned: the stack goes back to `depth` entries.
    #[inline]
    pub fn end_builtin(&self, depth: usize) {
        if self.0.pending.take().is_none() {
            self.truncate(depth);
        }
    }

    /// The entries, with the pending builtin's entry pushed first if there is one
    /// (anything that reads or extends the stack sees the builtin's entry).
    #[inline]
    fn entries(&self) -> std::cell::RefMut<'_, Vec<Entry>> {
        let mut entries = self.0.entries.borrow_mut();
        if let Some((func, call_site)) = self.0.pending.take() {
            entries.push(Entry::new(Some(func), call_site));
        }
        entries
    }
}

/// A profiled allocation site: where and what, and what it allocated and freed
/// since the last [`ProfState::flush`] (the hot paths add to these counters; the
/// monitor gets the sums only when someone reads it).
struct Site {
    node: NodeId,
    category: u8,
    type_id: TypeId,
    counts: Counters,
}

/// A memoized `Monitor::child` result; `child == UNRESOLVED` is an empty slot.
#[derive(Clone, Copy)]
struct ChildMemo {
    parent: u32,
    func: u32,
    call_site: u64,
    child: u32,
}

/// How many unresolved entries the quick path resolves before leaving them to `resolve`.
const QUICK_RESOLVE_LEVELS: usize = 8;

/// Slots of the child cache (a power of two).
const CHILD_CACHE_SLOTS: usize = 4096;

const NO_CHILD: ChildMemo = ChildMemo { parent: 0, func: 0, call_site: 0, child: UNRESOLVED };

/// A memoized allocation site of a node: type key -> site;
/// `site == 0` is an empty slot.
#[derive(Clone, Copy)]
struct SiteMemo {
    key: TypeKey,
    site: u32,
}

const NO_SITE: SiteMemo = SiteMemo { key: TypeKey::NONE, site: 0 };

/// A memoized allocation site of a builtin called from a place: the caller's
/// node, the builtin, the call site (as the VM gave it, whether or not call
/// sites are distinguished) and the allocation's key; `site == 0` is an empty slot.
#[derive(Clone, Copy)]
struct BuiltinSite {
    parent: u32,
    func: u32,
    call_site: u64,
    key: TypeKey,
    site: u32,
}

const NO_BUILTIN_SITE: BuiltinSite = BuiltinSite { parent: UNRESOLVED, func: 0, call_site: 0, key: TypeKey::NONE, site: 0 };

/// Slots of the builtin-site cache (a power of two).
const BUILTIN_SITE_SLOTS: usize = 1024;

/// Running totals, kept in every mode but Off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub allocated_objects: [u64; 4],
    pub allocated_bytes: [u64; 4],
    pub freed_objects: [u64; 4],
    pub freed_bytes: [u64; 4],
}

impl Counts {
    /// Count an allocation of `bytes` in category `cat` (its index, c f s o).
    #[inline]
    fn allocated(&mut self, cat: u8, bytes: u64) {
        let ci = cat as usize & 3;
        self.allocated_objects[ci] += 1;
        self.allocated_bytes[ci] += bytes;
    }

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
    stack: ContextStack,
    /// Each profiled site of this epoch, indexed by site - site_base - COUNTING_SITES.
    sites: Vec<Site>,
    /// The first site id of this epoch (0 is "not recorded", so it starts at 1).
    site_base: u32,
    /// The first site id not yet handed out, in any epoch.
    next_site: u32,
    /// Allocations whose context was deeper than the cap (outer frames dropped).
    deep_allocs: u64,
    /// The monitor's depth cap as a stack length (at least 2), kept beside the
    /// hot path that compares with it.
    depth_cap: usize,
    /// The monitor's `call_sites` option, likewise.
    call_sites: bool,
    site_index: HashMap<(u32, u8, u16), u32>,
    /// A direct-mapped cache of `Monitor::child` results ([`CHILD_CACHE_SLOTS`]
    /// slots, indexed by a multiplicative mix of the key), so entering a frame
    /// finds its node without going through the monitor's hash map.
    child_memo: Vec<ChildMemo>,
    /// Per node id: the last allocation site made on it, so a frame's first
    /// allocation of a type already seen on its node costs no hashing either.
    node_sites: Vec<SiteMemo>,
    /// A direct-mapped cache of the sites of builtins' allocations by the place
    /// they were called from ([`BuiltinSite`]), so the common allocation (CONS
    /// called by a Lisp function) needs neither the builtin's entry nor hashing.
    builtin_sites: Vec<BuiltinSite>,
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

/// The context stack length past which outer frames are dropped (see `resolve`).
fn depth_cap(options: &MonitorOptions) -> usize {
    (options.max_depth as usize).max(2)
}

fn new_monitor(options: MonitorOptions) -> Monitor {
    Monitor::new(Language::Lisp, CategoryScheme::lisp(), options)
}

impl ProfState {
    /// Start a new epoch: objects allocated before it report no frees to this profile.
    fn new_epoch(&mut self) {
        self.sites.clear();
        self.site_index.clear();
        self.node_sites.clear();
        self.builtin_sites.clear();
        for e in self.stack.entries().iter_mut() {
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
            stack: ContextStack::default(),
            sites: Vec::new(),
            site_base: 1,
            next_site: 1 + COUNTING_SITES,
            deep_allocs: 0,
            depth_cap: depth_cap(&MonitorOptions::default()),
            call_sites: MonitorOptions::default().call_sites,
            site_index: HashMap::new(),
            child_memo: Vec::new(),
            node_sites: Vec::new(),
            builtin_sites: Vec::new(),
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
            st.stack.truncate(0);
        }
    });
    // Objects allocated while profiling keep reporting their frees after
    // recording stops (so a later report's "kept" is right): the hooks stay
    // installed once anything was profiled, and on_alloc returns at once
    // while the mode is Off.
    let profiled_sites = with_state(|st| !st.sites.is_empty());
    mprof_heap::set_alloc_hooks(match mode {
        Mode::Off if !profiled_sites => None,
        _ => Some(AllocHooks { on_alloc, on_frees }),
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
        st.depth_cap = depth_cap(&options);
        st.call_sites = options.call_sites;
        st.child_memo.clear();
        st.stack.truncate(0);
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
    flush_frees();
    with_state(|st| st.counts)
}

/// This thread's calling-context stack (the VM keeps a handle while profiling).
pub fn context_stack() -> ContextStack {
    with_state(|st| st.stack.clone())
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
fn resolve(st: &mut ProfState, stack: &mut [Entry], cap: usize) -> (NodeId, usize) {
    let n = stack.len();
    if n == 0 {
        return (NodeId::ROOT, usize::MAX);
    }
    let mut k = n;
    while k > 0 && stack[k - 1].node == UNRESOLVED {
        k -= 1;
    }
    let mut node = if k == 0 { NodeId::ROOT } else { NodeId(stack[k - 1].node) };
    for i in k..n {
        if i >= cap {
            node = window_node(st, stack, i, cap);
        } else if let Some(f) = stack[i].func() {
            node = child_node(st, node, f, stack[i].call_site());
        }
        stack[i].node = node.0;
    }
    (node, n - 1)
}

/// `Monitor::child` through the child cache: a function entered again from a node
/// it was entered from before (a loop calling it, recursion through another
/// function) gets its node with a multiply and a compare. Folded self-recursion
/// and the depth cap return the parent, with side effects on the monitor (the
/// recursion count), so those results are not cached.
fn child_node(st: &mut ProfState, parent: NodeId, f: FuncId, call_site: u64) -> NodeId {
    let call_site = if st.monitor.options().call_sites { call_site } else { 0 };
    let i = child_slot(parent, f, call_site);
    if st.child_memo.is_empty() {
        st.child_memo = vec![NO_CHILD; CHILD_CACHE_SLOTS];
    }
    if let Some(child) = memoized_child(&st.child_memo, i, parent, f, call_site) {
        return child;
    }
    let child = st.monitor.child(parent, f, call_site);
    if child != parent {
        st.child_memo[i] = ChildMemo { parent: parent.0, func: f.0, call_site, child: child.0 };
    }
    child
}

/// The child cache slot of (parent, function, call site).
#[inline]
fn child_slot(parent: NodeId, f: FuncId, call_site: u64) -> usize {
    let mix = (parent.0 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (f.0 as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ call_site.wrapping_mul(0x1656_67B1_9E37_79F9);
    (mix >> 52) as usize & (CHILD_CACHE_SLOTS - 1)
}

/// The child cache's node for (parent, function, call site) in slot `i`, if it holds it.
#[inline]
fn memoized_child(memo: &[ChildMemo], i: usize, parent: NodeId, f: FuncId, call_site: u64) -> Option<NodeId> {
    let m = memo.get(i)?;
    (m.child != UNRESOLVED && m.parent == parent.0 && m.func == f.0 && m.call_site == call_site).then_some(NodeId(m.child))
}

/// The site of `key` from the per-node memo, if the node last allocated `key`.
#[inline]
fn memoized_site(node_sites: &[SiteMemo], node: u32, key: TypeKey) -> Option<u32> {
    let m = node_sites.get(node as usize)?;
    (m.site != 0 && m.key == key).then_some(m.site)
}

/// The site of an allocation of `key` that [`cached_site`] did not answer, still
/// without touching the monitor when the caches know it: the pending builtin's
/// entry is pushed, the unresolved entries on top (up to [`QUICK_RESOLVE_LEVELS`]:
/// a Lisp function that has not allocated yet, and the builtin it called) are
/// resolved through the child cache, and the site comes from the node's memo;
/// the top entry's cache is filled on the way. `None` sends the allocation to
/// the general path.
#[inline]
fn quick_site(st: &mut ProfState, key: TypeKey) -> Option<u32> {
    let mut stack = st.stack.entries();
    let n = stack.len();
    if n == 0 || n > st.depth_cap {
        return None;
    }
    let mut k = n;
    while k > 0 && stack[k - 1].node == UNRESOLVED {
        k -= 1;
        if n - k > QUICK_RESOLVE_LEVELS {
            return None;
        }
    }
    for i in k..n {
        let node = child_of_resolved_entry(st, &stack, i)?;
        stack[i].node = node;
    }
    let node = stack[n - 1].node;
    let site = memoized_site(&st.node_sites, node, key)?;
    let top = &mut stack[n - 1];
    top.cache_key = key;
    top.cache_site = site;
    Some(site)
}

/// The site of an allocation of `key` on `node`: from the node's memo, or from the
/// site index (creating the site) when the node last allocated something else.
fn site_on(st: &mut ProfState, node: NodeId, key: TypeKey, type_name: &str) -> u32 {
    let n = node.0 as usize;
    if let Some(m) = st.node_sites.get(n)
        && m.site != 0
        && m.key == key
    {
        return m.site;
    }
    let cat = key.category();
    let type_id = st.monitor.type_name(type_name);
    let site = match st.site_index.get(&(node.0, cat, type_id.0)) {
        Some(&s) => s,
        None => {
            st.sites.push(Site { node, category: cat, type_id, counts: Counters::default() });
            let s = st.next_site;
            st.next_site = st.next_site.saturating_add(1);
            st.site_index.insert((node.0, cat, type_id.0), s);
            s
        }
    };
    if st.node_sites.len() <= n {
        st.node_sites.resize(n + 1, NO_SITE);
    }
    st.node_sites[n] = SiteMemo { key, site };
    site
}

/// The node of entry `i` past the depth cap: its innermost `cap - 1` entries under an
/// `<outer frames>` node, so deep recursion drops outer frames, never inner ones.
fn window_node(st: &mut ProfState, stack: &[Entry], i: usize, cap: usize) -> NodeId {
    let outer = st.monitor.function(FunctionInfo::named("<outer frames>"));
    let mut node = st.monitor.child(NodeId::ROOT, outer, 0);
    for e in &stack[i + 2 - cap..=i] {
        if let Some(f) = e.func() {
            node = st.monitor.child(node, f, e.call_site());
        }
    }
    node
}

/// The allocation hook. Its fast path (profiling, and the caches know the site)
/// stays small and calls nothing out of line but the rare sample; everything
/// else goes to [`alloc_slow_path`], which borrows the state afresh.
fn on_alloc(e: &AllocEvent<'_>) -> u32 {
    PROF.with(|p| {
        if let Ok(mut b) = p.try_borrow_mut()
            && let Some(st) = b.as_mut()
            && st.mode == Mode::Profiling
            && let Some(site) = cached_site(st, TypeKey::of(e))
        {
            st.record_alloc(site, e.category.index(), e.bytes);
            return site;
        }
        alloc_slow_path(p, e)
    })
}

/// [`on_alloc`] when the caches do not know the site, or when not profiling.
#[inline(never)]
fn alloc_slow_path(p: &RefCell<Option<ProfState>>, e: &AllocEvent<'_>) -> u32 {
    let Ok(mut p) = p.try_borrow_mut() else { return 0 };
    let Some(st) = p.as_mut() else { return 0 };
    if st.mode != Mode::Profiling {
        return count_alloc(st, e);
    }
    let key = TypeKey::of(e);
    let site = site_of_uncached_key(st, key, e.type_name);
    st.record_alloc(site, key.category(), e.bytes);
    site
}

impl ProfState {
    /// Count an allocation of `bytes` on `site` (and in the totals), and take a
    /// sample of memory over time when its step is due.
    #[inline]
    fn record_alloc(&mut self, site: u32, cat: u8, bytes: u64) {
        self.counts.allocated(cat, bytes);
        self.until_sample -= bytes as i64;
        if self.until_sample <= 0 {
            self.take_sample();
        }
        if let Some(s) = self.site_mut(site) {
            s.counts.allocs += 1;
            s.counts.bytes += bytes;
        }
    }

    /// Profiled site `site` of this epoch, if it is one (not a counting site, not
    /// an older epoch's).
    #[inline]
    fn site_mut(&mut self, site: u32) -> Option<&mut Site> {
        self.sites.get_mut(site.wrapping_sub(self.site_base + COUNTING_SITES) as usize)
    }
}

/// An allocation while not profiling: nothing (Off), or the per-category totals
/// and the category's counting site.
#[inline(never)]
fn count_alloc(st: &mut ProfState, e: &AllocEvent<'_>) -> u32 {
    if st.mode == Mode::Off {
        return 0;
    }
    let cat = e.category.index();
    st.counts.allocated(cat, e.bytes);
    st.site_base + (cat as u32 & 3)
}

/// The site of an allocation of `key`, when the caches know it: the top entry's
/// own cache or its node's memo, or, for a builtin that has no entry yet (the
/// pending one), the builtin-site cache of its caller's node. The top entry, if
/// not resolved yet, is resolved through the child cache. The builtin case is
/// the commonest (CONS called from a Lisp function), answered without pushing
/// the builtin's entry or touching the monitor.
#[inline]
fn cached_site(st: &ProfState, key: TypeKey) -> Option<u32> {
    let mut stack = st.stack.0.entries.try_borrow_mut().ok()?;
    let n = stack.len();
    let top = stack.last()?;
    match st.stack.0.pending.get() {
        None => {
            if n > st.depth_cap {
                return None;
            }
            if top.cache_site != 0 && top.cache_key == key {
                return Some(top.cache_site);
            }
            // The frame's first allocation of this key (a fresh frame's first
            // allocation, made by the VM itself: a float from arithmetic, a
            // closure, a &REST list): its node through the child cache, the site
            // through the node's memo.
            let node = top_node(st, &mut stack)?;
            let site = memoized_site(&st.node_sites, node, key)?;
            let top = &mut stack[n - 1];
            top.cache_key = key;
            top.cache_site = site;
            Some(site)
        }
        Some((f, call_site)) => {
            if n >= st.depth_cap {
                return None;
            }
            // The caller's node (resolved here if the caller has not allocated
            // yet: a fresh Lisp frame whose first allocation is this builtin's).
            let parent = top_node(st, &mut stack)?;
            let m = st.builtin_sites.get(builtin_slot(parent, f, call_site))?;
            (m.site != 0 && m.parent == parent && m.func == f.0 && m.call_site == call_site && m.key == key).then_some(m.site)
        }
    }
}

/// The top entry's node, resolved through the child cache if it is not yet
/// (when the entry below is resolved and the cache knows the step).
#[inline]
fn top_node(st: &ProfState, stack: &mut [Entry]) -> Option<u32> {
    let n = stack.len();
    if stack.last()?.node == UNRESOLVED {
        stack[n - 1].node = child_of_resolved_entry(st, stack, n - 1)?;
    }
    Some(stack[n - 1].node)
}

/// The node of entry `i`, when the entry below it is resolved (or `i` is the
/// bottom) and the child cache knows the step.
#[inline]
fn child_of_resolved_entry(st: &ProfState, stack: &[Entry], i: usize) -> Option<u32> {
    let below = if i == 0 { NodeId::ROOT.0 } else { stack[i - 1].node };
    if below == UNRESOLVED {
        return None;
    }
    let e = &stack[i];
    let Some(f) = e.func() else { return Some(below) };
    let call_site = if st.call_sites { e.call_site() } else { 0 };
    let below = NodeId(below);
    memoized_child(&st.child_memo, child_slot(below, f, call_site), below, f, call_site).map(|n| n.0)
}

/// The builtin-site cache slot of builtin `f` called from `call_site` (a pc of
/// the caller) by an entry on node `parent` (a recursive function calls the
/// same builtin from the same place on a node per depth).
#[inline]
fn builtin_slot(parent: u32, f: FuncId, call_site: u64) -> usize {
    child_slot(NodeId(parent), f, call_site) & (BUILTIN_SITE_SLOTS - 1)
}

/// The site of an allocation of `key` that no cache answered directly: the quick
/// path through the child cache, or the general one; a pending builtin's site is
/// then cached for its next call from the same place.
#[inline(never)]
fn site_of_uncached_key(st: &mut ProfState, key: TypeKey, type_name: &str) -> u32 {
    let pending = st.stack.0.pending.get();
    let site = match quick_site(st, key) {
        Some(site) => site,
        None => site_of_new_key(st, key, type_name),
    };
    if let Some((f, call_site)) = pending {
        let stack = st.stack.0.entries.borrow();
        let n = stack.len();
        // The builtin's entry was pushed on top of its caller's; within the cap,
        // (caller's node, builtin, call site, key) always gives this site, unless
        // the builtin's node was folded into its caller's (recursion folding
        // counts each such entry, so it is not cached, as in the child cache).
        if n >= 2 && n <= st.depth_cap && stack[n - 2].node != UNRESOLVED && stack[n - 1].node != stack[n - 2].node {
            let parent = stack[n - 2].node;
            if st.builtin_sites.is_empty() {
                st.builtin_sites = vec![NO_BUILTIN_SITE; BUILTIN_SITE_SLOTS];
            }
            st.builtin_sites[builtin_slot(parent, f, call_site)] = BuiltinSite { parent, func: f.0, call_site, key, site };
        }
    }
    site
}

/// The site of an allocation of `key` whose frame has not cached it: resolve
/// the stack's unresolved entries, find (or make) the site on the top node and
/// cache it in the top entry.
#[inline(never)]
fn site_of_new_key(st: &mut ProfState, key: TypeKey, type_name: &str) -> u32 {
    let cap = st.depth_cap;
    // A handle of our own, so the stack can be borrowed beside the state.
    let stack = st.stack.clone();
    let mut stack = stack.entries();
    let (node, top) = resolve(st, &mut stack, cap);
    if top != usize::MAX && top >= cap {
        st.deep_allocs += 1;
    }
    if top != usize::MAX && stack[top].cache_key == key && stack[top].cache_site != 0 {
        return stack[top].cache_site;
    }
    let site = site_on(st, node, key, type_name);
    if top != usize::MAX {
        stack[top].cache_key = key;
        stack[top].cache_site = site;
    }
    site
}

/// Frees handed over by the heap, summed per site (see `mprof_heap::flush_frees`):
/// each site's are counted on it, unless its objects were allocated before this
/// epoch (or while only counting: then on their category alone). Returns the
/// epoch's first site, so the heap keeps no rows for older ones.
fn on_frees(frees: &[SiteFrees]) -> u32 {
    PROF.try_with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else { return 0 };
        let Some(st) = p.as_mut() else { return 0 };
        let base = st.site_base;
        for f in frees {
            let (site, objects, bytes) = (f.site, f.objects, f.bytes);
            if site < base {
                // Allocated before this epoch: not part of this profile.
                continue;
            }
            let ci = if site < base + COUNTING_SITES {
                ((site - base) & 3) as usize
            } else {
                let Some(s) = st.site_mut(site) else { continue };
                s.counts.frees += objects;
                s.counts.freed_bytes += bytes;
                s.category as usize & 3
            };
            st.counts.freed_objects[ci] += objects;
            st.counts.freed_bytes[ci] += bytes;
        }
        base
    })
    .unwrap_or(0)
}

impl ProfState {
    /// A point of the memory-over-time series now; the next one after another
    /// step of allocation (a thousandth of all allocated so far, at least 64 KiB,
    /// so a long run gets on the order of a thousand points per tenfold growth).
    #[cold]
    #[inline(never)]
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
    flush_frees();
    PROF.with(|p| {
        if let Some(st) = p.borrow_mut().as_mut()
            && st.mode == Mode::Profiling
        {
            st.take_sample();
        }
    });
}

impl ProfState {
    /// Move the per-site counts gathered since the last flush into the monitor.
    fn flush(&mut self) {
        for s in &mut self.sites {
            if !s.counts.is_zero() {
                self.monitor.record_counts(s.node, s.category, Bin::Type(s.type_id), &s.counts);
                s.counts = Counters::default();
            }
        }
    }
}

/// The monitor's totals (per category and overall) of what was recorded so far.
pub fn totals() -> mprof_engine::monitor::Totals {
    flush_frees();
    with_state(|st| {
        st.flush();
        st.monitor.totals()
    })
}

/// The profile recorded so far.
pub fn profile() -> Profile {
    flush_frees();
    with_state(|st| {
        st.flush();
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
