//! Leak classification at exit, as LeakSanitizer and memcheck do it: a
//! conservative scan decides which never-freed blocks the program could
//! still reach.
//!
//! Roots are the writable segments (data, bss) of every loaded module but
//! libmprof, the exiting thread's stack from `exit`'s caller upwards, and the
//! registers saved at that point. Any aligned word whose value falls inside a
//! live block (interior pointers included) makes that block reachable, and
//! reachable blocks are scanned in turn (an explicit work list: no recursion).
//! Blocks never reached are *lost*: *indirectly* when another lost block
//! points to them, *definitely* otherwise (so a lost cycle is all indirect, as
//! in LeakSanitizer). Lost blocks whose calling context contains a function
//! matching `MPROF_SUPPRESS` (or the default list of the C library's own
//! buffers) are counted apart as suppressed.
//!
//! Limits: only at `exit` and `_exit` (a crashing or signalled process may be
//! mid-update); other threads' stacks and thread-local storage are not scanned,
//! so a block referenced only from there counts as lost.

use crate::live::{self, Header, NO_NODE};

/// What became of the blocks never freed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// [blocks, bytes] for each class.
    pub definite: [u64; 2],
    pub indirect: [u64; 2],
    pub reachable: [u64; 2],
    pub suppressed: [u64; 2],
}

/// The class of one never-freed block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Definite,
    Indirect,
    Reachable,
    Suppressed,
}

/// Functions whose never-freed blocks are the C library's own, kept until exit.
/// (glibc's internal `__GI_` aliases are how its DWARF names some of them.) The
/// thread-local storage vectors of ended threads stay in pthread's stack
/// cache, which is not scanned.
pub const DEFAULT_SUPPRESSIONS: &[&str] = &[
    "_IO_file_doallocate",
    "__GI__IO_file_doallocate",
    "_nl_*",
    "__gconv_*",
    "__libc_setlocale",
    "setlocale",
    "__nss_*",
    "_dl_*",
    "__GI__dl_*",
    "allocate_dtv",
    "__res_*",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Unvisited,
    Reachable,
    Indirect,
}

struct Block {
    start: usize,
    size: usize,
    node: u32,
}

/// The index of the block containing `v`, if any (blocks sorted by start).
fn block_of(blocks: &[Block], v: usize) -> Option<usize> {
    let i = blocks.partition_point(|b| b.start <= v);
    if i == 0 {
        return None;
    }
    let b = &blocks[i - 1];
    (v < b.start + b.size.max(1)).then_some(i - 1)
}

/// Every aligned word of [start, end) that points into a block.
///
/// # Safety
/// The range must be readable memory.
unsafe fn each_pointer(start: usize, end: usize, blocks: &[Block], mut f: impl FnMut(usize)) {
    let mut p = (start + 7) & !7;
    while p + 8 <= end {
        // SAFETY: inside the readable range.
        let v = unsafe { core::ptr::read_volatile(p as *const usize) };
        if let Some(i) = block_of(blocks, v) {
            f(i);
        }
        p += 8;
    }
}

/// The writable loaded segments of every module but the one holding `skip`.
fn writable_segments(skip: usize) -> Vec<(usize, usize)> {
    struct Acc {
        skip: usize,
        out: Vec<(usize, usize)>,
    }
    extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: pointers from dl_iterate_phdr and our accumulator.
        unsafe {
            let acc = &mut *(data as *mut Acc);
            let info = &*info;
            let headers = core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize);
            let ours = headers.iter().any(|h| {
                h.p_type == libc::PT_LOAD && {
                    let s = info.dlpi_addr as usize + h.p_vaddr as usize;
                    (s..s + h.p_memsz as usize).contains(&acc.skip)
                }
            });
            if ours {
                return 0;
            }
            for h in headers {
                if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_W != 0 {
                    let s = info.dlpi_addr as usize + h.p_vaddr as usize;
                    acc.out.push((s, s + h.p_memsz as usize));
                }
            }
        }
        0
    }
    let mut acc = Acc {
        skip,
        out: Vec::new(),
    };
    // SAFETY: the callback only touches `acc`.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut acc as *mut Acc as *mut libc::c_void) };
    acc.out
}

/// Classify the live blocks counted in `epoch`. `stack` is the exiting
/// thread's stack range above the library's own frames, `registers` the
/// callee-saved registers spilled there; `suppressed(node)` says whether a
/// node's calling context is suppressed. Besides the summary, each counted
/// block's (raw node, class, size), for the per-context figures.
///
/// # Safety
/// Runs at exit under the reentrancy guard; `stack` must be readable.
pub unsafe fn classify(
    epoch: u16,
    node_count: u32,
    stack: (usize, usize),
    registers: &[usize],
    mut suppressed: impl FnMut(u32) -> bool,
) -> (Summary, Vec<(u32, Verdict, u64)>) {
    let mut blocks = Vec::new();
    live::for_each_live(|user| {
        // SAFETY: live, so the header is the block's.
        let h = unsafe { Header::read(user) };
        let counted = h.node != NO_NODE && h.epoch == epoch && h.node < node_count;
        blocks.push(Block {
            start: user,
            size: h.size as usize,
            node: if counted { h.node } else { NO_NODE },
        });
    });
    let mut class = vec![Class::Unvisited; blocks.len()];
    let mut work = Vec::new();
    let reach = |i: usize, class: &mut Vec<Class>, work: &mut Vec<usize>| {
        if class[i] == Class::Unvisited {
            class[i] = Class::Reachable;
            work.push(i);
        }
    };
    for (s, e) in writable_segments(block_of as *const () as usize) {
        // SAFETY: a loaded writable segment.
        unsafe { each_pointer(s, e, &blocks, |i| reach(i, &mut class, &mut work)) };
    }
    // SAFETY: the caller's stack range.
    unsafe {
        each_pointer(stack.0, stack.1, &blocks, |i| {
            reach(i, &mut class, &mut work)
        })
    };
    for &r in registers {
        if let Some(i) = block_of(&blocks, r) {
            reach(i, &mut class, &mut work);
        }
    }
    while let Some(b) = work.pop() {
        let (s, n) = (blocks[b].start, blocks[b].size);
        // SAFETY: a live block's user bytes.
        unsafe { each_pointer(s, s + n, &blocks, |i| reach(i, &mut class, &mut work)) };
    }
    // Lost blocks pointed to by another lost block are indirectly lost.
    for b in 0..blocks.len() {
        if class[b] == Class::Reachable {
            continue;
        }
        let (s, n) = (blocks[b].start, blocks[b].size);
        // SAFETY: as above.
        unsafe {
            each_pointer(s, s + n, &blocks, |i| {
                if i != b && class[i] == Class::Unvisited {
                    class[i] = Class::Indirect;
                }
            })
        };
    }
    let mut summary = Summary::default();
    let mut verdicts = Vec::with_capacity(blocks.len());
    for (b, c) in blocks.iter().zip(&class) {
        if b.node == NO_NODE {
            continue;
        }
        let (slot, verdict) = match c {
            Class::Reachable => (&mut summary.reachable, Verdict::Reachable),
            _ if suppressed(b.node) => (&mut summary.suppressed, Verdict::Suppressed),
            Class::Indirect => (&mut summary.indirect, Verdict::Indirect),
            Class::Unvisited => (&mut summary.definite, Verdict::Definite),
        };
        slot[0] += 1;
        slot[1] += b.size as u64;
        verdicts.push((b.node, verdict, b.size as u64));
    }
    (summary, verdicts)
}

/// Whether `name` matches `pattern` (`*` matches any run of characters).
pub fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(at) => rest = &rest[at + mid.len()..],
            None => return false,
        }
    }
    true
}

/// The patterns in force: the defaults, plus `MPROF_SUPPRESS` (comma-separated;
/// a leading `-` replaces the defaults instead of extending them).
pub fn patterns(setting: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = DEFAULT_SUPPRESSIONS.iter().map(|s| s.to_string()).collect();
    if let Some(s) = setting {
        let s = match s.strip_prefix('-') {
            Some(rest) => {
                out.clear();
                rest
            }
            None => s,
        };
        out.extend(
            s.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(String::from),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_globs() {
        assert!(matches("_nl_*", "_nl_load_locale"));
        assert!(matches("*alloc*", "xmalloc_failed"));
        assert!(matches("main", "main"));
        assert!(!matches("main", "domain"));
        assert!(!matches("_nl_*", "nl_x"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXcYYb"));
    }

    #[test]
    fn settings_extend_or_replace_the_defaults() {
        assert_eq!(patterns(None).len(), DEFAULT_SUPPRESSIONS.len());
        let extended = patterns(Some("my_cache_*, other"));
        assert_eq!(extended.len(), DEFAULT_SUPPRESSIONS.len() + 2);
        assert_eq!(patterns(Some("-only_this")), ["only_this"]);
    }

    #[test]
    fn interior_pointers_find_their_block() {
        let blocks = [
            Block {
                start: 100,
                size: 16,
                node: 1,
            },
            Block {
                start: 200,
                size: 0,
                node: 2,
            },
        ];
        assert_eq!(block_of(&blocks, 100), Some(0));
        assert_eq!(block_of(&blocks, 115), Some(0));
        assert_eq!(block_of(&blocks, 116), None);
        assert_eq!(
            block_of(&blocks, 200),
            Some(1),
            "a zero-size block has its address"
        );
        assert_eq!(block_of(&blocks, 99), None);
    }
}
