//! The default stack capture: full stacks through code with or without frame
//! pointers, validated frame by frame.
//!
//! Each frame is one step of a rule looked up by its return address in a per-thread,
//! direct-mapped cache ([`RULES`] entries of 16 bytes: the address and a packed rule:
//! the canonical frame address (CFA) as an offset from rsp or rbp, and where the
//! caller's rbp was saved, relative to the CFA; the return address is the word below
//! the CFA). A hit costs a hash, a compare, one or two stack reads and the bounds
//! checks, and needs no module lookup: only return addresses inside an executable
//! segment of a loaded module are ever cached. On a miss, framehop unwinds the frame
//! from the module's `.eh_frame` CFI (read in place from the loaded image, located by
//! its `PT_GNU_EH_FRAME` segment; the frame-pointer rule for modules without CFI);
//! the rule is then derived by running framehop's step once more on symbolic
//! registers, and cached only when, applied to the real registers, it gives exactly
//! framehop's result (a CFA computed by a DWARF expression, say, is never cached and
//! always goes through framehop). (framehop over a hand-written gimli walk: it caches
//! the parsed rules itself and needs no allocation while unwinding; libgcc's unwinder,
//! kept as `MPROF_UNWIND=dwarf`, re-finds and re-interprets the CFI on every call.)
//!
//! Every frame is validated before it is recorded: its return address must lie
//! in an executable segment of a loaded module, and every stack word read must
//! lie between the hook's frame and the top of the thread's stack, each frame
//! strictly above the one before; the walk stops at the first frame that fails, so
//! no garbage address is ever recorded.
//!
//! The module table is immutable once published (an atomic pointer); a return
//! address outside every module makes the walker check whether modules were
//! loaded or unloaded since (glibc's `dlpi_adds`/`dlpi_subs` counters) and, if
//! so, publish a new table (and every thread's caches start over). Old tables are
//! leaked: they change only on dlopen and dlclose, and a walker may still be reading
//! one.

use crate::lock::SpinLock;
use crate::stack::StackBounds;
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, FrameAddress, Module, MustNotAllocateDuringUnwind, Unwinder};

type Data = &'static [u8];
type Unwind = UnwinderX86_64<Data, MustNotAllocateDuringUnwind>;
pub type Cache = CacheX86_64<MustNotAllocateDuringUnwind>;

/// The loaded modules, as the walk needs them.
pub struct Modules {
    unwinder: Unwind,
    /// Executable segments, sorted by start, as [start, end).
    executable: Vec<(u64, u64)>,
    adds: u64,
    subs: u64,
}

impl Modules {
    fn is_executable(&self, address: u64) -> bool {
        let i = self
            .executable
            .partition_point(|&(start, _)| start <= address);
        i > 0 && address < self.executable[i - 1].1
    }
}

static MODULES: AtomicPtr<Modules> = AtomicPtr::new(core::ptr::null_mut());
/// Serializes rebuilding the table (also taken around fork).
pub static MODULES_LOCK: SpinLock = SpinLock::new();
/// Tables published so far (to tell a thread its cache is stale).
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Entries of a thread's rule cache (a power of two).
pub const RULES: usize = 4096;

/// One cached rule: the return address it is for (0: empty) and the packed rule.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct RuleEntry {
    address: u64,
    rule: u64,
}

/// A packed unwind rule: bits 0-1 the CFA's base (`BASE_SP`, `BASE_BP`) or `END`;
/// bits 2-17 the CFA's offset from it in 8-byte words; bits 18-33 where the caller's
/// rbp is saved, as a signed word offset from the CFA, or `BP_KEPT`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Rule(u64);

const BASE_SP: u64 = 1;
const BASE_BP: u64 = 2;
const END: u64 = 3;
const BP_KEPT: u16 = 0x8000;
/// The frame-pointer rule packed: CFA = rbp + 16, the caller's rbp at CFA - 16.
const FRAME_POINTER_RULE: u64 = BASE_BP | 2 << 2 | ((-2i16 as u16) as u64) << 18;

impl Rule {
    fn new(base: u64, cfa_words: u16, bp_words: Option<i16>) -> Rule {
        let bp = bp_words.map_or(BP_KEPT, |w| w as u16);
        Rule(base | (cfa_words as u64) << 2 | (bp as u64) << 18)
    }
    #[inline]
    fn base(self) -> u64 {
        self.0 & 3
    }
    #[inline]
    fn cfa_offset(self) -> u64 {
        ((self.0 >> 2) & 0xffff) * 8
    }
    /// The saved rbp's offset from the CFA in bytes, if the rule restores rbp.
    #[inline]
    fn bp_offset(self) -> Option<i64> {
        let w = ((self.0 >> 18) & 0xffff) as u16;
        (w != BP_KEPT).then_some(w as i16 as i64 * 8)
    }
}

/// One captured frame: its return address and the caller's rsp and rbp there, and
/// the stack word read for that rbp (0: rbp was not restored; `UNKNOWN`: framehop
/// computed the frame and the words it read are not known).
#[derive(Clone, Copy, Default, Debug)]
#[repr(C)]
pub struct FrameRec {
    pub ra: u64,
    sp: u64,
    bp: u64,
    slot: u64,
}

const UNKNOWN: u64 = u64::MAX;

/// What one thread keeps: its rule cache, framehop's cache (for misses), the table
/// generation both were filled from, and its last two captures (the last one, and the
/// buffer of the next).
pub struct ThreadUnwind {
    rules: Box<[RuleEntry; RULES]>,
    cache: Box<Cache>,
    generation: u64,
    frames: [Box<[FrameRec]>; 2],
    /// Which buffer holds the last capture, and its length.
    last: usize,
    last_len: usize,
}

impl ThreadUnwind {
    /// A thread's unwinder for captures of at most `depth` frames.
    pub fn new(depth: usize) -> ThreadUnwind {
        ThreadUnwind {
            rules: Box::new([RuleEntry { address: 0, rule: 0 }; RULES]),
            cache: Box::new(Cache::new_in()),
            generation: u64::MAX,
            frames: [vec![FrameRec::default(); depth].into_boxed_slice(), vec![FrameRec::default(); depth].into_boxed_slice()],
            last: 0,
            last_len: 0,
        }
    }

    /// The last capture, innermost first.
    #[inline]
    pub fn captured(&self) -> &[FrameRec] {
        &self.frames[self.last][..self.last_len]
    }
}

#[inline(always)]
fn slot(address: u64) -> usize {
    // Below RULES by construction, so indexing `rules` needs no bounds check.
    (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RULES.trailing_zeros())) as usize
}

/// glibc's load and unload counters, from the first module dl_iterate_phdr reports.
fn load_counters() -> (u64, u64) {
    extern "C" fn first(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: both pointers come from dl_iterate_phdr and our own local.
        unsafe {
            let out = &mut *(data as *mut (u64, u64));
            *out = ((*info).dlpi_adds, (*info).dlpi_subs);
        }
        1
    }
    let mut out = (0u64, 0u64);
    // SAFETY: the callback only writes `out`.
    unsafe { libc::dl_iterate_phdr(Some(first), &mut out as *mut _ as *mut c_void) };
    out
}

/// One loaded module's executable segments and, if it has them, its CFI.
fn add_module(info: &libc::dl_phdr_info, table: &mut Modules) {
    let bias = info.dlpi_addr;
    // SAFETY: dl_iterate_phdr gives dlpi_phnum headers at dlpi_phdr.
    let headers = unsafe { core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let mut text: Option<(u64, u64)> = None;
    let mut eh_frame_hdr: Option<(u64, u64)> = None;
    for h in headers {
        if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0 {
            let (s, e) = (h.p_vaddr, h.p_vaddr + h.p_memsz);
            table.executable.push((bias + s, bias + e));
            text = Some(match text {
                Some((a, b)) => (a.min(s), b.max(e)),
                None => (s, e),
            });
        } else if h.p_type == libc::PT_GNU_EH_FRAME {
            eh_frame_hdr = Some((h.p_vaddr, h.p_vaddr + h.p_memsz));
        }
    }
    let Some(text) = text else { return };
    let mut section_info = ExplicitModuleSectionInfo::<Data> {
        base_svma: 0,
        text_svma: Some(text.0..text.1),
        ..Default::default()
    };
    if let Some((hs, he)) = eh_frame_hdr
        && let Some((fs, fe)) = eh_frame_range(bias, hs, headers)
    {
        // SAFETY: both ranges lie inside the module's loaded segments.
        unsafe {
            section_info.eh_frame_hdr = Some(core::slice::from_raw_parts(
                (bias + hs) as *const u8,
                (he - hs) as usize,
            ));
            section_info.eh_frame = Some(core::slice::from_raw_parts(
                (bias + fs) as *const u8,
                (fe - fs) as usize,
            ));
        }
        section_info.eh_frame_hdr_svma = Some(hs..he);
        section_info.eh_frame_svma = Some(fs..fe);
    }
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated name from the loader.
        unsafe { core::ffi::CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    table.unwinder.add_module(Module::new(
        name,
        (bias + text.0)..(bias + text.1),
        bias,
        section_info,
    ));
}

/// `.eh_frame`'s stated range: its start from the header's `eh_frame_ptr`, its
/// end the end of the loaded segment holding it (the section's size is not in
/// the program headers; framehop reads only the entries the header indexes).
fn eh_frame_range(bias: u64, hdr: u64, headers: &[libc::Elf64_Phdr]) -> Option<(u64, u64)> {
    // SAFETY: the header lies in a loaded segment; its first 8 bytes are fixed.
    let bytes = unsafe { core::slice::from_raw_parts((bias + hdr) as *const u8, 8) };
    if bytes[0] != 1 {
        return None;
    }
    let start = match bytes[1] {
        // DW_EH_PE_pcrel | DW_EH_PE_sdata4: what every linker writes.
        0x1b => {
            let rel = i32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as i64;
            (hdr + 4).checked_add_signed(rel)?
        }
        // DW_EH_PE_udata4 / absptr.
        0x03 => u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as u64,
        _ => return None,
    };
    let segment = headers.iter().find(|h| {
        h.p_type == libc::PT_LOAD && h.p_vaddr <= start && start < h.p_vaddr + h.p_memsz
    })?;
    Some((
        start,
        segment.p_vaddr + segment.p_filesz.min(segment.p_memsz),
    ))
}

fn build() -> Modules {
    let mut table = Modules {
        unwinder: Unwind::new(),
        executable: Vec::new(),
        adds: 0,
        subs: 0,
    };
    extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: pointers from dl_iterate_phdr and `build`'s table.
        unsafe {
            let table = &mut *(data as *mut Modules);
            let info = &*info;
            table.adds = info.dlpi_adds;
            table.subs = info.dlpi_subs;
            add_module(info, table);
        }
        0
    }
    // SAFETY: the callback only touches `table`.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut table as *mut Modules as *mut c_void) };
    table.executable.sort_unstable();
    table
}

/// The current table, built on first use. Runs under the reentrancy guard.
fn modules() -> &'static Modules {
    let p = MODULES.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: published tables are never freed.
        return unsafe { &*p };
    }
    refresh(None)
}

/// Publish a new table if `stale` is still the current one (or there is none)
/// and modules were loaded or unloaded since it was built.
fn refresh(stale: Option<&'static Modules>) -> &'static Modules {
    MODULES_LOCK.lock();
    let p = MODULES.load(Ordering::Acquire);
    let current = (!p.is_null()).then(|| unsafe { &*p });
    let result = match (current, stale) {
        (Some(c), Some(s)) if !core::ptr::eq(c, s) => c,
        (Some(c), _) if load_counters() == (c.adds, c.subs) => c,
        _ => {
            let table: &'static Modules = Box::leak(Box::new(build()));
            MODULES.store(table as *const Modules as *mut Modules, Ordering::Release);
            GENERATION.fetch_add(1, Ordering::AcqRel);
            table
        }
    };
    MODULES_LOCK.unlock();
    result
}

/// Registers at a frame boundary: the return address and the caller's rsp and rbp.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Regs {
    ra: u64,
    sp: u64,
    bp: u64,
}

/// Symbolic stack contents for deriving a rule: the word "at" `a` reads as `a ^ TAG`.
const TAG: u64 = 0x5a5a_0000_0000_0000;
const PROBE_SP: u64 = 0x1000_0000_0000;
const PROBE_BP: u64 = 0x3000_0000_0000;

/// Runs a packed rule: the caller's registers, or None at the end of the stack or
/// when a read would leave [low, high) or the frame would not move up the stack.
#[inline(always)]
fn step(rule: Rule, r: Regs, read: &mut impl FnMut(u64) -> Option<u64>) -> Option<Regs> {
    let base = match rule.base() {
        BASE_SP => r.sp,
        BASE_BP if r.bp != 0 => r.bp,
        _ => return None,
    };
    let cfa = base.checked_add(rule.cfa_offset())?;
    if cfa <= r.sp {
        return None;
    }
    let ra = read(cfa - 8)?;
    let bp = match rule.bp_offset() {
        None => r.bp,
        Some(off) => read(cfa.checked_add_signed(off)?)?,
    };
    (ra != 0).then_some(Regs { ra, sp: cfa, bp })
}

/// The rule framehop applies at return address `ra`, derived from a step on symbolic
/// registers; None when it is not one a packed rule can say.
fn derive(table: &Modules, cache: &mut Cache, ra: u64) -> Option<Rule> {
    let frame = FrameAddress::from_return_address(ra)?;
    let mut regs = UnwindRegsX86_64::new(ra, PROBE_SP, PROBE_BP);
    let mut read = |a: u64| -> Result<u64, ()> { Ok(a ^ TAG) };
    let next = match table.unwinder.unwind_frame(frame, &mut regs, cache, &mut read) {
        Ok(Some(next)) => next,
        Ok(None) => return Some(Rule(END)),
        Err(_) => return None,
    };
    let sp = regs.sp();
    let (base, offset) = if sp > PROBE_SP && sp < PROBE_SP + 0x8_0000 {
        (BASE_SP, sp - PROBE_SP)
    } else if sp > PROBE_BP && sp < PROBE_BP + 0x8_0000 {
        (BASE_BP, sp - PROBE_BP)
    } else {
        return None;
    };
    if offset % 8 != 0 || next != (sp - 8) ^ TAG {
        return None;
    }
    let bp = match regs.bp() {
        PROBE_BP => None,
        v => {
            let at = (v ^ TAG) as i64 - sp as i64;
            if at % 8 != 0 || at / 8 < i16::MIN as i64 + 1 || at / 8 > i16::MAX as i64 {
                return None;
            }
            Some((at / 8) as i16)
        }
    };
    Some(Rule::new(base, (offset / 8) as u16, bp))
}

/// A cache miss: framehop unwinds the frame at `r`; its rule is cached when a packed
/// rule gives the same result. None ends the walk; beside the caller's registers, the
/// stack word their rbp was read from (as `FrameRec::slot`).
#[cold]
fn unwind_miss(
    table: &Modules,
    rules: &mut [RuleEntry; RULES],
    cache: &mut Cache,
    r: Regs,
    read: &mut impl FnMut(u64) -> Option<u64>,
) -> Option<(Regs, u64)> {
    let frame = FrameAddress::from_return_address(r.ra)?;
    let mut regs = UnwindRegsX86_64::new(r.ra, r.sp, r.bp);
    let mut read_stack = |a: u64| read(a).ok_or(());
    let real = match table.unwinder.unwind_frame(frame, &mut regs, cache, &mut read_stack) {
        Ok(Some(next)) => Some(Regs { ra: next, sp: regs.sp(), bp: regs.bp() }),
        _ => None,
    };
    let mut slot_read = UNKNOWN;
    if let Some(rule) = derive(table, cache, r.ra) {
        let agrees = match rule.base() {
            END => real.is_none(),
            _ => step(rule, r, read) == real,
        };
        if agrees {
            rules[slot(r.ra)] = RuleEntry { address: r.ra, rule: rule.0 };
            if let Some(next) = real {
                slot_read = rule.bp_offset().map_or(0, |off| next.sp.wrapping_add_signed(off));
            }
        }
    }
    real.map(|r| (r, slot_read))
}

/// Whether the stack still holds what the frames `rest` of an earlier capture read
/// to be unwound (their return addresses and restored rbps), so the walk from the
/// frame before them would find them again.
#[inline]
fn still_there(rest: &[FrameRec]) -> bool {
    rest.iter().all(|f| {
        // SAFETY: words of this thread's stack read by an earlier walk, above the
        // frame the current walk has reached (so above its hook's frame).
        f.slot != UNKNOWN
            && unsafe { *((f.sp - 8) as *const u64) } == f.ra
            && (f.slot == 0 || unsafe { *(f.slot as *const u64) } == f.bp)
    })
}

/// Capture the stack from the hook trampoline's frame `fp` (at most the depth the
/// state was made for), innermost first, into the state's next buffer, which becomes
/// its last capture. Returns (frames, how many outermost frames equal the previous
/// capture's). Runs under the reentrancy guard.
///
/// Incremental: when a frame has the registers of a frame of the previous capture
/// (same rsp, rbp and return address) and the stack still holds every word the
/// previous walk read beyond it (`still_there`), the rest of the walk would repeat
/// the previous one: it is copied instead (deep recursions allocate from the same
/// frames again and again). A stack too deep for the depth is always walked.
///
/// # Safety
/// `fp` must be the frame the hook trampoline pushed.
pub unsafe fn walk(fp: usize, bounds: StackBounds, state: &mut ThreadUnwind) -> (usize, usize) {
    let ThreadUnwind { rules, cache, generation, frames, last, last_len } = state;
    let (prev, out) = match frames {
        [a, b] if *last == 0 => (&a[..*last_len], &mut b[..]),
        [a, b] => (&b[..*last_len], &mut a[..]),
    };
    let depth = out.len();
    if depth == 0 {
        return (0, 0);
    }
    let mut table = modules();
    let current = GENERATION.load(Ordering::Acquire);
    if *generation != current {
        **cache = Cache::new_in();
        rules.fill(RuleEntry::default());
        *generation = current;
    }
    // SAFETY: the trampoline's frame: saved rbp, then the return address.
    let (ra, bp) = unsafe { (*((fp + 8) as *const u64), *(fp as *const u64)) };
    let mut r = Regs { ra, sp: fp as u64 + 16, bp };
    out[0] = FrameRec { ra, sp: r.sp, bp, slot: 0 };
    let mut n = 1;
    let mut same = 0;
    let mut entry = rules[slot(ra)];
    if entry.address != ra && !table.is_executable(ra) {
        table = refresh(Some(table));
        if !table.is_executable(ra) {
            // Code outside every module (generated at run time): only its address.
            *last ^= 1;
            *last_len = 1;
            return (1, 0);
        }
    }
    let low = fp as u64;
    let high = bounds.high as u64;
    let mut read = |address: u64| -> Option<u64> {
        if address < low || address & 7 != 0 || address.saturating_add(8) > high {
            return None;
        }
        // SAFETY: inside this thread's stack, above the hook's own frame.
        Some(unsafe { *(address as *const u64) })
    };
    // The previous capture's frames are searched by rsp, which grows along a walk.
    let incremental = prev.len() < depth;
    let mut j = 0;
    loop {
        if incremental {
            while j < prev.len() && prev[j].sp < r.sp {
                j += 1;
            }
            if j < prev.len() {
                let p = &prev[j];
                let rest = prev.len() - j - 1;
                if p.sp == r.sp && p.ra == r.ra && p.bp == r.bp && n + rest <= depth && still_there(&prev[j + 1..]) {
                    if n == 1 && j == 0 {
                        // The very stack of the previous capture: it stays the last one.
                        return (prev.len(), prev.len());
                    }
                    out[n..n + rest].copy_from_slice(&prev[j + 1..]);
                    n += rest;
                    same = rest + 1;
                    break;
                }
            }
        }
        if n >= depth {
            break;
        }
        let (next, slot_read) = if entry.address == r.ra {
            // The hot step: the packed rule, inline, in wrapping arithmetic (a wrapped
            // CFA fails the checks below, as a CFA outside the stack does).
            let rule = entry.rule;
            if rule == FRAME_POINTER_RULE {
                // The frame-pointer rule, most frames of code that keeps them:
                // [rbp] is the caller's rbp, [rbp + 8] the return address.
                let bp = r.bp;
                if bp <= r.sp.wrapping_sub(16) || bp > high - 16 || bp & 7 != 0 {
                    break;
                }
                // SAFETY: r.sp < bp + 16 <= high, 8-aligned: inside the stack.
                let (caller_bp, ra) = unsafe { (*(bp as *const u64), *((bp + 8) as *const u64)) };
                if ra == 0 {
                    break;
                }
                (Regs { ra, sp: bp + 16, bp: caller_bp }, bp)
            } else {
                let base = match rule & 3 {
                    BASE_SP => r.sp,
                    BASE_BP if r.bp != 0 => r.bp,
                    _ => break,
                };
                let cfa = base.wrapping_add(((rule >> 2) & 0xffff) << 3);
                if cfa <= r.sp || cfa > high || cfa & 7 != 0 {
                    break;
                }
                // SAFETY: low <= r.sp < cfa - 8 + 8 <= high, 8-aligned: inside the stack.
                let ra = unsafe { *((cfa - 8) as *const u64) };
                let off = ((rule >> 18) & 0xffff) as u16;
                let (bp, at) = if off == BP_KEPT {
                    (r.bp, 0)
                } else {
                    let at = cfa.wrapping_add((off as i16 as i64 * 8) as u64);
                    if at < low || at > high - 8 || at & 7 != 0 {
                        break;
                    }
                    // SAFETY: checked to lie inside the stack.
                    (unsafe { *(at as *const u64) }, at)
                };
                if ra == 0 {
                    break;
                }
                (Regs { ra, sp: cfa, bp }, at)
            }
        } else {
            match unwind_miss(table, rules, cache, r, &mut read) {
                Some((next, at)) if next.sp > r.sp && next.sp <= high => (next, at),
                _ => break,
            }
        };
        // A cached return address is known to be in an executable segment.
        entry = rules[slot(next.ra)];
        if entry.address != next.ra && !table.is_executable(next.ra) {
            let fresh = refresh(Some(table));
            if core::ptr::eq(fresh, table) || !fresh.is_executable(next.ra) {
                break;
            }
            table = fresh;
        }
        out[n] = FrameRec { ra: next.ra, sp: next.sp, bp: next.bp, slot: slot_read };
        n += 1;
        r = next;
    }
    *last ^= 1;
    *last_len = n;
    (n, same)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_is_a_known_executable_module() {
        let table = modules();
        let here = this_test_binary_is_a_known_executable_module as *const () as u64;
        assert!(table.is_executable(here), "{here:#x}");
        let data = &MODULES as *const _ as u64;
        assert!(!table.is_executable(data), "a static is not code");
        assert!(!table.is_executable(0x10));
    }

    #[inline(never)]
    fn capture(out: &mut [u64]) -> usize {
        // A frame shaped like the hook trampoline's: [saved rbp, return address].
        let frame: [u64; 2] = [0, capture as *const () as u64 + 1];
        std::hint::black_box(&frame);
        let mut state = ThreadUnwind::new(out.len());
        let bounds = crate::stack::current_bounds();
        let (n, _) = unsafe { walk(frame.as_ptr() as usize, bounds, &mut state) };
        for (o, f) in out.iter_mut().zip(state.captured()) {
            *o = f.ra;
        }
        n
    }

    #[test]
    fn a_walk_from_a_forged_first_frame_stops_without_reading_wild_memory() {
        // The forged frame's saved registers point nowhere: the walk must stop
        // at a validation check (not fault), having recorded the known address.
        let mut out = [0u64; 64];
        let n = capture(&mut out);
        assert!(n >= 1);
        assert_eq!(out[0], capture as *const () as u64 + 1);
        let table = modules();
        assert!(
            out[..n].iter().all(|&a| table.is_executable(a)),
            "{:x?}",
            &out[..n]
        );
    }
}
