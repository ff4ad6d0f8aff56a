//! The allocation funnel: [`alloc_object`] (and [`alloc_cons`]), the per-object [`SiteTag`] and
//! the allocation hooks through which a profiler hears of allocations and frees.
//!
//! Invariants:
//! - Every heap object is an [`Obj<T>`] made by [`alloc_object`], or a [`Cons`]
//!   made by [`alloc_cons`]; nothing else in the workspace calls `Gc::new`
//!   (clippy.toml forbids it and a test greps for it).
//! - An object's tag records the profiler site it was allocated under (0 when
//!   profiling was off) and its real size in bytes: the gc-arena header, the
//!   `Obj<T>` itself and any out-of-line buffer it owns. When that buffer
//!   grows or shrinks, [`resize_object`] reports it as a realloc does (the old
//!   size freed under the old site, the new size allocated under the current
//!   context), so the tag always holds the object's current size and the site
//!   its last (re)allocation was charged to.
//! - With profiling off, the funnel costs one predictable branch on a
//!   thread-local flag, and a swept object's tag drop costs one branch on its
//!   site.
//! - The tag holds no `Gc` pointer, so its `Drop` (run by the sweeper, outside
//!   `mutate`) touches nothing that may dangle.
//! - Conses are the one exception to the tag ([`alloc_cons`]): with profiling
//!   off a cons pays nothing for the profiler, its two fields and gc-arena's
//!   header ([`CONS_BYTES`]). A cons allocated while the hooks record is a
//!   [`ProfiledCons`]: the same `Cons` followed by its site
//!   ([`PROFILED_CONS_BYTES`] in all, the size its profile reports), handed
//!   out as a `Gc<Cons>`, since a `Cons` is its first field. gc-arena's header
//!   keeps the real type's drop and trace, so the sweeper reports the free
//!   from the site stored in the object, as it does for a tag.
//! - Frees reach the hooks summed per site ([`flush_frees`]): the sweeper's
//!   drops add each free to its site's row of a thread-local table (objects
//!   and bytes), handed over every [`FLUSH_EVERY`] frees, before the hooks
//!   change or the thread's state is swapped, and before any reader of the
//!   profiler's counts (which calls `flush_frees` first). A free is thus
//!   counted by the state whose hooks were installed when its object was
//!   swept, never seen late, and never twice; a free costs a few additions,
//!   not a call.

use std::cell::{Cell, RefCell};

use gc_arena::{Collect, Gc, Mutation};

use crate::kind::{Category, Kind};
use crate::packed::ConsField;
use crate::value::{Cons, Value};

/// The size in bytes of gc-arena's per-object header on this target
/// (`GcHeader`: next pointer + tagged vtable pointer).
pub const GC_HEADER_BYTES: usize = 2 * std::mem::size_of::<usize>();

/// What a profiler is told about one allocation.
#[derive(Clone, Copy, Debug)]
pub struct AllocEvent<'a> {
    pub category: Category,
    /// The type name shown in the allocation bin table ("cons", "double-float", "WIDGET"...).
    /// Its address and length identify the type in the profiler's per-frame
    /// caches, so callers pass a string that lives as long as the type: a
    /// literal, or the name of the type's own symbol, never one made per object
    /// (a freed string's address could come back holding another name).
    pub type_name: &'a str,
    pub bytes: u64,
}

/// The frees of one site since the hooks last heard of it: how many objects,
/// and their bytes (each at its size when swept).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SiteFrees {
    pub site: u32,
    pub objects: u64,
    pub bytes: u64,
}

/// The callbacks a profiler installs. `on_alloc` returns the site id stored in
/// the object's tag (never 0); `on_frees` receives the frees summed per site
/// (see [`flush_frees`]) and returns the lowest site whose frees it still
/// counts (the first of its epoch), so the heap stops keeping rows for older
/// ones.
#[derive(Clone, Copy)]
pub struct AllocHooks {
    pub on_alloc: fn(&AllocEvent<'_>) -> u32,
    pub on_frees: fn(&[SiteFrees]) -> u32,
}

/// Frees gathered before the hooks hear them: a sweep frees objects by the
/// million, and one handover per thousand costs a fraction of one per object,
/// while the profiler's live-byte samples stay at most this many frees behind.
const FLUSH_EVERY: u32 = 1024;

/// The frees of profiled objects not yet handed to the hooks, summed per site.
struct FreeTable {
    /// The site of row 0. Sites below it are of an epoch the profiler no
    /// longer counts: their frees are dropped.
    base: Cell<u32>,
    /// Frees since the last handover.
    pending: Cell<u32>,
    rows: RefCell<FreeRows>,
}

#[derive(Default)]
struct FreeRows {
    /// Per site from `base`: (objects, bytes) freed since the last handover.
    sums: Vec<(u64, u64)>,
    /// The rows that are not zero, in the order they became so.
    dirty: Vec<u32>,
}

thread_local! {
    static HOOKS: Cell<Option<AllocHooks>> = const { Cell::new(None) };
    /// Bytes of the heap objects of this thread not yet swept (see [`live_bytes`]).
    static LIVE_BYTES: Cell<u64> = const { Cell::new(0) };
    static FREES: FreeTable = const {
        FreeTable { base: Cell::new(0), pending: Cell::new(0), rows: RefCell::new(FreeRows { sums: Vec::new(), dirty: Vec::new() }) }
    };
}

/// Hand the frees gathered so far, summed per site, to the installed hooks (or
/// drop them if none are). Frees are gathered only while the collector sweeps;
/// the heap hands them over every [`FLUSH_EVERY`] frees and before the hooks
/// change ([`set_alloc_hooks`], [`swap_thread_state`]), and whoever reads what
/// the hooks counted calls this first, so no reader sees a free late.
pub fn flush_frees() {
    let _ = FREES.try_with(|t| {
        let Ok(mut rows) = t.rows.try_borrow_mut() else { return };
        if t.pending.replace(0) == 0 {
            return;
        }
        let base = t.base.get();
        let FreeRows { sums, dirty } = &mut *rows;
        let batch: Vec<SiteFrees> = dirty
            .drain(..)
            .filter_map(|i| {
                let (objects, bytes) = std::mem::take(sums.get_mut(i as usize)?);
                Some(SiteFrees { site: base.wrapping_add(i), objects, bytes })
            })
            .collect();
        drop(rows);
        if let Some(hooks) = HOOKS.try_with(|h| h.get()).ok().flatten() {
            let first = (hooks.on_frees)(&batch);
            rebase(t, first);
        }
    });
}

/// Index the (empty) table from `first` on, if that is a later site: rows of
/// older epochs would never be counted.
fn rebase(t: &FreeTable, first: u32) {
    if first > t.base.get() {
        reindex(t, first);
    }
}

/// Index the table's rows from site `base` on, if every row was handed over
/// (otherwise nothing changes); returns the base it had.
fn reindex(t: &FreeTable, base: u32) -> Option<u32> {
    let mut rows = t.rows.try_borrow_mut().ok()?;
    if !rows.dirty.is_empty() {
        return None;
    }
    rows.sums.clear();
    Some(t.base.replace(base))
}

/// Bytes of the heap objects allocated on this thread and not yet swept, each
/// counted at the size recorded when it was allocated (gc-arena counts objects,
/// not bytes), and followed through every [`resize_object`]. The count of the
/// interpreter whose arena is running (each lends its own, see
/// [`ThreadHeapState`]): the interpreter's heap limit.
pub fn live_bytes() -> u64 {
    LIVE_BYTES.with(|b| b.get())
}

/// What the heap keeps per thread for the arena running on it: the hooks and
/// the live-byte count. An interpreter owns one and lends it to the thread
/// while its arena runs ([`swap_thread_state`]), so several interpreters on one
/// thread each see only their own objects.
#[derive(Default)]
pub struct ThreadHeapState {
    hooks: Option<AllocHooks>,
    live_bytes: u64,
    /// The free table's first site (its rows are handed over before a swap).
    free_base: u32,
}

/// Exchange this thread's heap state with `state` (lend it, or take it back).
/// At thread exit the slots may be gone already: then nothing is exchanged.
pub fn swap_thread_state(state: &mut ThreadHeapState) {
    // The gathered frees belong to the outgoing state's objects.
    flush_frees();
    if let Ok(hooks) = HOOKS.try_with(|h| h.replace(state.hooks)) {
        state.hooks = hooks;
    }
    if let Ok(live) = LIVE_BYTES.try_with(|b| b.replace(state.live_bytes)) {
        state.live_bytes = live;
    }
    // Flushed above, so the rows are empty: only the indexing changes hands.
    if let Ok(Some(outgoing)) = FREES.try_with(|t| reindex(t, state.free_base)) {
        state.free_base = outgoing;
    }
}

/// Install (or with `None`, remove) the allocation hooks of this thread.
/// While none are installed, allocation records nothing.
pub fn set_alloc_hooks(hooks: Option<AllocHooks>) {
    flush_frees();
    HOOKS.with(|h| h.set(hooks));
}

/// Whether allocation hooks are installed on this thread.
pub fn alloc_hooks_installed() -> bool {
    HOOKS.with(|h| h.get().is_some())
}

/// The small static tag every heap object carries. Its drop, run when the
/// collector sweeps the object, reports the free to the profiler.
#[derive(Debug)]
pub struct SiteTag {
    site: Cell<u32>,
    bytes: Cell<u32>,
}

impl SiteTag {
    /// The profiler site this object was allocated under (0 if unprofiled).
    pub fn site(&self) -> u32 {
        self.site.get()
    }

    /// The object's current size in bytes (saturated at u32::MAX).
    pub fn bytes(&self) -> u32 {
        self.bytes.get()
    }
}

impl Drop for SiteTag {
    fn drop(&mut self) {
        let bytes = self.bytes.get() as u64;
        release_live_bytes(bytes);
        report_free(self.site.get(), bytes);
    }
}

/// The site the installed hooks give a new allocation; 0 when none are installed
/// (or the build has no hook).
#[inline]
fn allocation_site(category: Category, type_name: &str, bytes: u64) -> u32 {
    #[cfg(not(feature = "no-profiling-hook"))]
    return match HOOKS.with(|h| h.get()) {
        None => 0,
        Some(hooks) => (hooks.on_alloc)(&AllocEvent { category, type_name, bytes }),
    };
    #[cfg(feature = "no-profiling-hook")]
    {
        let _ = (category, type_name, bytes);
        0
    }
}

/// A swept object's bytes leave the live count. The slot may be gone already at
/// thread exit; then there is nothing left to count.
#[inline]
fn release_live_bytes(bytes: u64) {
    let _ = LIVE_BYTES.try_with(|b| b.set(b.get().saturating_sub(bytes)));
}

/// Count the free of an object allocated under `site` (0: not profiled) on its
/// site's row; the hooks hear of it at the next handover ([`flush_frees`]).
/// The hooks may already be gone (profiling stopped, interpreter torn down);
/// then the free is dropped at the handover.
#[inline]
fn report_free(site: u32, bytes: u64) {
    if site == 0 {
        return;
    }
    let _ = FREES.try_with(|t| {
        let base = t.base.get();
        if site < base {
            return;
        }
        let i = (site - base) as usize;
        let Ok(mut rows) = t.rows.try_borrow_mut() else { return };
        if i >= rows.sums.len() {
            grow_rows(&mut rows.sums, i);
        }
        let row = &mut rows.sums[i];
        let first = row.0 == 0;
        row.0 += 1;
        row.1 += bytes;
        if first {
            rows.dirty.push(i as u32);
        }
        drop(rows);
        let pending = t.pending.get() + 1;
        t.pending.set(pending);
        if pending >= FLUSH_EVERY {
            flush_frees();
        }
    });
}

/// Make row `i` exist (sites are handed out in order, so rows grow by a few at a time).
#[cold]
#[inline(never)]
fn grow_rows(rows: &mut Vec<(u64, u64)>, i: usize) {
    rows.resize(i + 1, (0, 0));
}

/// A heap object: a tag plus the object's value.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Obj<T> {
    #[collect(require_static)]
    pub tag: SiteTag,
    pub val: T,
}

impl<T> std::ops::Deref for Obj<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.val
    }
}

/// gc-arena paces collection by counting objects, not bytes. Memory an
/// object owns out of line (a vector's items, a hash table's buckets) is
/// charged to the pacing as if it were objects of this many bytes, so a few
/// large objects still bring the next collection closer.
const BYTES_PER_DEBT_UNIT: f64 = 64.0;

/// Tell the collector that `bytes` of memory were just acquired out of line
/// by a heap object (at allocation, or when a vector or hash table grows).
#[inline]
pub fn note_external_bytes(mc: &Mutation<'_>, bytes: usize) {
    mc.metrics().adjust_debt(bytes as f64 / BYTES_PER_DEBT_UNIT);
}

/// Allocate one heap object. `extra_bytes` is the size of any out-of-line
/// buffer the value owns (a vector's items, a string's characters, a bignum's
/// digits), so that the recorded size is the real one.
///
/// With [`alloc_cons`], the only function that calls `Gc::new`. Its `kind` alone
/// decides the object's profile category (`kind.rs`).
#[allow(clippy::disallowed_methods)]
#[inline]
pub(crate) fn alloc_object<'gc, T: Collect<'gc> + 'gc>(
    mc: &Mutation<'gc>,
    kind: Kind,
    type_name: &str,
    extra_bytes: usize,
    val: T,
) -> Gc<'gc, Obj<T>> {
    let category = kind.category();
    let bytes = GC_HEADER_BYTES + std::mem::size_of::<Obj<T>>() + extra_bytes;
    let site = allocation_site(category, type_name, bytes as u64);
    if extra_bytes >= 256 {
        note_external_bytes(mc, extra_bytes);
    }
    let bytes32 = u32::try_from(bytes).unwrap_or(u32::MAX);
    LIVE_BYTES.with(|b| b.set(b.get() + bytes32 as u64));
    Gc::new(mc, Obj { tag: SiteTag { site: Cell::new(site), bytes: Cell::new(bytes32) }, val })
}

/// What a cons costs: gc-arena's header and its two fields.
pub const CONS_BYTES: usize = GC_HEADER_BYTES + std::mem::size_of::<Cons<'static>>();

/// What a cons allocated while profiling costs: a cons and its site.
pub const PROFILED_CONS_BYTES: usize = GC_HEADER_BYTES + std::mem::size_of::<ProfiledCons<'static>>();

/// A cons allocated while the hooks record: a [`Cons`] (first, so a pointer to
/// this is a pointer to it) and the site it was allocated under.
#[derive(Collect)]
#[collect(no_drop)]
#[repr(C)]
pub struct ProfiledCons<'gc> {
    cons: Cons<'gc>,
    #[collect(require_static)]
    site: ConsSite,
}

/// A profiled cons's site. Dropped after the cons's [`ConsMark`] (fields drop
/// in order), it releases the bytes the site added and reports the free.
struct ConsSite(u32);

impl Drop for ConsSite {
    fn drop(&mut self) {
        release_live_bytes((PROFILED_CONS_BYTES - CONS_BYTES) as u64);
        report_free(self.0, PROFILED_CONS_BYTES as u64);
    }
}

/// Allocate a cons (the funnel for conses, as [`alloc_object`] is for the rest):
/// counted in the live bytes, and, while the hooks record, made a
/// [`ProfiledCons`] holding its site.
#[allow(clippy::disallowed_methods)]
#[inline]
pub fn alloc_cons<'gc>(mc: &Mutation<'gc>, car: Value<'gc>, cdr: Value<'gc>) -> Gc<'gc, Cons<'gc>> {
    // The hooked path is out of line, so this one stays small enough to inline
    // where conses are made in a loop (LIST, MAPCAR...), as it is in a build
    // without the hook: with profiling off a cons pays one branch.
    #[cfg(not(feature = "no-profiling-hook"))]
    if let Some(hooks) = HOOKS.with(|h| h.get()) {
        return alloc_cons_hooked(mc, hooks, car, cdr);
    }
    LIVE_BYTES.with(|b| b.set(b.get() + CONS_BYTES as u64));
    Gc::new(mc, Cons { mark: ConsMark, car: ConsField::new(mc, car), cdr: ConsField::new(mc, cdr) })
}

/// A cons's category, decided by its kind at compile time (the hooked cons path is hot).
const CONS_CATEGORY: crate::kind::Category = Kind::Cons.category();

/// [`alloc_cons`] while hooks are installed: a [`ProfiledCons`] if they give
/// it a site, else a plain cons.
#[allow(clippy::disallowed_methods)]
#[cfg(not(feature = "no-profiling-hook"))]
#[inline(never)]
fn alloc_cons_hooked<'gc>(mc: &Mutation<'gc>, hooks: AllocHooks, car: Value<'gc>, cdr: Value<'gc>) -> Gc<'gc, Cons<'gc>> {
    let cons = Cons { mark: ConsMark, car: ConsField::new(mc, car), cdr: ConsField::new(mc, cdr) };
    let site = (hooks.on_alloc)(&AllocEvent { category: CONS_CATEGORY, type_name: "cons", bytes: PROFILED_CONS_BYTES as u64 });
    if site == 0 {
        LIVE_BYTES.with(|b| b.set(b.get() + CONS_BYTES as u64));
        return Gc::new(mc, cons);
    }
    LIVE_BYTES.with(|b| b.set(b.get() + PROFILED_CONS_BYTES as u64));
    let profiled = Gc::new(mc, ProfiledCons { cons, site: ConsSite(site) });
    // SAFETY: `ProfiledCons` is `repr(C)` with the `Cons` first, so its address
    // is the cons's; gc-arena's header, found from that address, still names
    // `ProfiledCons`'s trace and drop, so tracing and sweeping see the whole
    // object.
    unsafe { Gc::from_ptr(Gc::as_ptr(profiled) as *const Cons<'gc>) }
}

/// The zero-sized first field of a [`Cons`]: its drop, run when the sweeper
/// frees the cons, takes the cons's bytes out of the live count (a
/// [`ProfiledCons`]'s site does the rest).
pub struct ConsMark;

impl Drop for ConsMark {
    fn drop(&mut self) {
        release_live_bytes(CONS_BYTES as u64);
    }
}

/// An object's out-of-line buffer changed size: its total is now `new_bytes`.
/// Recorded like a realloc: the old size is freed under the object's site and
/// the new size allocated under the current calling context (which becomes the
/// object's site), so growth is charged to whoever grew the object, and the
/// heap's live bytes and the collector's pacing follow.
#[inline]
pub fn resize_object(mc: &Mutation<'_>, tag: &SiteTag, kind: Kind, type_name: &str, new_bytes: usize) {
    let category = kind.category();
    let new = u32::try_from(new_bytes).unwrap_or(u32::MAX);
    let old = tag.bytes.get();
    if new == old {
        return;
    }
    if new > old {
        note_external_bytes(mc, (new - old) as usize);
    }
    LIVE_BYTES.with(|b| b.set(b.get().saturating_sub(old as u64) + new as u64));
    tag.bytes.set(new);
    // Without hooks the object keeps its site: its free is reported, at its
    // current size, if profiling comes back.
    #[cfg(not(feature = "no-profiling-hook"))]
    if alloc_hooks_installed() {
        report_free(tag.site.get(), old as u64);
        tag.site.set(allocation_site(category, type_name, new as u64));
    }
    #[cfg(feature = "no-profiling-hook")]
    let _ = (category, type_name);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    thread_local! {
        static EVENTS: RefCell<Vec<(String, u64)>> = const { RefCell::new(Vec::new()) };
    }

    fn on_alloc(e: &AllocEvent<'_>) -> u32 {
        EVENTS.with(|ev| ev.borrow_mut().push((format!("alloc {} {:?}", e.type_name, e.category), e.bytes)));
        7
    }
    fn on_frees(frees: &[SiteFrees]) -> u32 {
        for f in frees {
            for _ in 0..f.objects {
                EVENTS.with(|ev| ev.borrow_mut().push((format!("free {}", f.site), f.bytes / f.objects)));
            }
        }
        0
    }

    #[test]
    fn hooks_hear_allocation_and_free_with_the_real_size() {
        set_alloc_hooks(Some(AllocHooks { on_alloc, on_frees }));
        gc_arena::arena::rootless_mutate(|mc| {
            let o = alloc_object(mc, Kind::Float, "double-float", 0, 1.5f64);
            assert_eq!(o.tag.site(), 7);
            assert_eq!(o.val, 1.5);
        });
        set_alloc_hooks(None);
        let events = EVENTS.with(|ev| ev.borrow().clone());
        let size = (GC_HEADER_BYTES + std::mem::size_of::<Obj<f64>>()) as u64;
        assert_eq!(
            events,
            vec![("alloc double-float Float".to_string(), size), ("free 7".to_string(), size)]
        );
    }

    #[test]
    fn a_profiled_cons_carries_its_site_and_reports_its_free_at_its_real_size() {
        EVENTS.with(|ev| ev.borrow_mut().clear());
        let live_before = live_bytes();
        set_alloc_hooks(Some(AllocHooks { on_alloc, on_frees }));
        gc_arena::arena::rootless_mutate(|mc| {
            let c = alloc_cons(mc, Value::Fixnum(1), Value::Nil);
            // Read through the `Gc<Cons>` handed out for the `ProfiledCons`.
            assert!(matches!(c.car.get(), Value::Fixnum(1)));
            assert!(c.cdr.get().is_nil());
            assert_eq!(live_bytes(), live_before + PROFILED_CONS_BYTES as u64);
        });
        set_alloc_hooks(None);
        assert_eq!(live_bytes(), live_before);
        let events = EVENTS.with(|ev| ev.borrow().clone());
        let size = PROFILED_CONS_BYTES as u64;
        assert_eq!(events, vec![("alloc cons Cons".to_string(), size), ("free 7".to_string(), size)]);
        assert_eq!(PROFILED_CONS_BYTES, CONS_BYTES + 8);
    }

    #[test]
    fn frees_beyond_a_handover_all_reach_the_hooks_once() {
        EVENTS.with(|ev| ev.borrow_mut().clear());
        set_alloc_hooks(Some(AllocHooks { on_alloc, on_frees }));
        let n = 2 * FLUSH_EVERY as usize + 17;
        gc_arena::arena::rootless_mutate(|mc| {
            for i in 0..n {
                alloc_cons(mc, Value::Fixnum(i as i64), Value::Nil);
            }
        });
        // The arena is gone: two handovers were made as the frees came, the
        // rest waits for the flush that removing the hooks makes.
        let frees_before_flush = EVENTS.with(|ev| ev.borrow().iter().filter(|(e, _)| e == "free 7").count());
        assert_eq!(frees_before_flush, 2 * FLUSH_EVERY as usize);
        set_alloc_hooks(None);
        let frees = EVENTS.with(|ev| ev.borrow().iter().filter(|(e, b)| e == "free 7" && *b == PROFILED_CONS_BYTES as u64).count());
        assert_eq!(frees, n);
        flush_frees();
        assert_eq!(EVENTS.with(|ev| ev.borrow().iter().filter(|(e, _)| e == "free 7").count()), n, "nothing twice");
    }

    thread_local! {
        static FIRST_COUNTED: Cell<u32> = const { Cell::new(0) };
        static SUMS: RefCell<Vec<SiteFrees>> = const { RefCell::new(Vec::new()) };
    }

    fn on_alloc_by_type(e: &AllocEvent<'_>) -> u32 {
        e.type_name.len() as u32 * 10
    }

    fn on_frees_summed(frees: &[SiteFrees]) -> u32 {
        SUMS.with(|s| s.borrow_mut().extend_from_slice(frees));
        FIRST_COUNTED.with(|f| f.get())
    }

    fn sums() -> Vec<(u32, u64, u64)> {
        let mut v: Vec<(u32, u64, u64)> = SUMS.with(|s| s.borrow_mut().drain(..).map(|f| (f.site, f.objects, f.bytes)).collect());
        v.sort();
        v
    }

    #[test]
    fn frees_are_summed_per_site_and_older_sites_are_dropped_after_a_rebase() {
        set_alloc_hooks(Some(AllocHooks { on_alloc: on_alloc_by_type, on_frees: on_frees_summed }));
        let float = (GC_HEADER_BYTES + std::mem::size_of::<Obj<f64>>()) as u64;
        let alloc_some = || {
            gc_arena::arena::rootless_mutate(|mc| {
                for i in 0..5 {
                    alloc_cons(mc, Value::Fixnum(i), Value::Nil); // site 40
                }
                for _ in 0..3 {
                    alloc_object(mc, Kind::Float, "double-float", 0, 1.5f64); // site 120
                }
            })
        };
        alloc_some();
        flush_frees();
        assert_eq!(sums(), vec![(40, 5, 5 * PROFILED_CONS_BYTES as u64), (120, 3, 3 * float)]);
        // The profiler now counts sites from 100 on: a cons's site (40) is older.
        FIRST_COUNTED.with(|f| f.set(100));
        alloc_some();
        flush_frees(); // hands over both sites, and rebases at 100
        assert_eq!(sums().len(), 2);
        alloc_some();
        flush_frees();
        assert_eq!(sums(), vec![(120, 3, 3 * float)], "the older site's frees are dropped");
        set_alloc_hooks(None);
        FIRST_COUNTED.with(|f| f.set(0));
    }

    #[test]
    fn an_unprofiled_cons_reports_nothing() {
        EVENTS.with(|ev| ev.borrow_mut().clear());
        set_alloc_hooks(None);
        let live_before = live_bytes();
        gc_arena::arena::rootless_mutate(|mc| {
            alloc_cons(mc, Value::Nil, Value::Nil);
            assert_eq!(live_bytes(), live_before + CONS_BYTES as u64);
        });
        assert_eq!(live_bytes(), live_before);
        assert!(EVENTS.with(|ev| ev.borrow().is_empty()));
    }

    #[test]
    fn without_hooks_the_site_is_zero() {
        set_alloc_hooks(None);
        gc_arena::arena::rootless_mutate(|mc| {
            let o = alloc_object(mc, Kind::Cons, "cons", 0, 1u64);
            assert_eq!(o.tag.site(), 0);
        });
    }
}
