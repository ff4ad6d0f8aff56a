//! The default stack capture: full stacks through code with or without frame
//! pointers, validated frame by frame.
//!
//! framehop unwinds one frame at a time from each module's `.eh_frame` CFI
//! (read in place from the loaded image, located by its `PT_GNU_EH_FRAME`
//! segment), so each module gets the rule its code needs: a frame-pointer rule
//! where the code keeps them, a stack-offset rule where it does not, and the
//! frame-pointer walk for modules without CFI. Rules are cached per thread by
//! return address, so a stack seen before costs a cache probe per frame.
//! (framehop over a hand-written gimli walk: it already caches rules by
//! address and needs no allocation while unwinding; libgcc's unwinder, kept as
//! `MPROF_UNWIND=dwarf`, re-finds and re-interprets the CFI on every call.)
//!
//! Every frame is validated before it is recorded: its return address must lie
//! in an executable segment of a loaded module, and every stack word read must
//! lie between the hook's frame and the top of the thread's stack; the walk
//! stops at the first frame that fails, so no garbage address is ever recorded.
//!
//! The module table is immutable once published (an atomic pointer); a return
//! address outside every module makes the walker check whether modules were
//! loaded or unloaded since (glibc's `dlpi_adds`/`dlpi_subs` counters) and, if
//! so, publish a new table. Old tables are leaked: they change only on dlopen
//! and dlclose, and a walker may still be reading one.

use crate::lock::SpinLock;
use crate::stack::StackBounds;
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{
    ExplicitModuleSectionInfo, FrameAddress, Module, MustNotAllocateDuringUnwind, Unwinder,
};

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

/// What one thread keeps: framehop's rule cache and the table it was filled from.
pub struct ThreadUnwind {
    cache: Box<Cache>,
    generation: u64,
}

impl ThreadUnwind {
    pub fn new() -> ThreadUnwind {
        ThreadUnwind {
            cache: Box::new(Cache::new_in()),
            generation: u64::MAX,
        }
    }
}

impl Default for ThreadUnwind {
    fn default() -> Self {
        Self::new()
    }
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

/// Capture the stack from the hook trampoline's frame `fp` into `out`
/// (innermost first); returns the frame count. Runs under the reentrancy guard.
///
/// # Safety
/// `fp` must be the frame the hook trampoline pushed.
pub unsafe fn walk(
    fp: usize,
    bounds: StackBounds,
    state: &mut ThreadUnwind,
    out: &mut [u64],
) -> usize {
    if out.is_empty() {
        return 0;
    }
    let mut table = modules();
    let generation = GENERATION.load(Ordering::Acquire);
    if state.generation != generation {
        *state.cache = Cache::new_in();
        state.generation = generation;
    }
    // SAFETY: the trampoline's frame: saved rbp, then the return address.
    let (ra, bp) = unsafe { (*((fp + 8) as *const u64), *(fp as *const u64)) };
    out[0] = ra;
    if !table.is_executable(ra) {
        table = refresh(Some(table));
        if !table.is_executable(ra) {
            // Code outside every module (generated at run time): only its address.
            return 1;
        }
    }
    let low = fp as u64;
    let high = bounds.high as u64;
    let mut read_stack = |address: u64| -> Result<u64, ()> {
        if address < low || address & 7 != 0 || address.saturating_add(8) > high {
            return Err(());
        }
        // SAFETY: inside this thread's stack, above the hook's own frame.
        Ok(unsafe { *(address as *const u64) })
    };
    let mut regs = UnwindRegsX86_64::new(ra, fp as u64 + 16, bp);
    let mut n = 1;
    let mut address = ra;
    while n < out.len() {
        let Some(frame) = FrameAddress::from_return_address(address) else {
            break;
        };
        let sp = regs.sp();
        let next =
            match table
                .unwinder
                .unwind_frame(frame, &mut regs, &mut state.cache, &mut read_stack)
            {
                Ok(Some(next)) => next,
                _ => break,
            };
        // Callers live higher on the stack; a frame that does not move up is bogus.
        if regs.sp() <= sp || regs.sp() > high {
            break;
        }
        if !table.is_executable(next) {
            let fresh = refresh(Some(table));
            if core::ptr::eq(fresh, table) || !fresh.is_executable(next) {
                break;
            }
            table = fresh;
        }
        out[n] = next;
        n += 1;
        address = next;
    }
    n
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
        let mut state = ThreadUnwind::new();
        let bounds = crate::stack::current_bounds();
        unsafe { walk(frame.as_ptr() as usize, bounds, &mut state, out) }
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
