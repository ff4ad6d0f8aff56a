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
//! in LeakSanitizer). Suppressions are applied by the reader, which knows the
//! full names (`mprof-symbolize`), and by the leak gate (`gate`).
//!
//! Linear time and little memory: a scanned word is rejected in O(1) when it lies
//! outside the live blocks' address range or in a 64 MiB region without one; the
//! block holding an interior pointer is found in O(1), from the live bitmap's word
//! for the pointer's KiB and, failing that, a per-region table of the block covering
//! each KiB's start (`Cover`, 4 bytes a KiB of regions in use). Marks live in the
//! blocks' own headers (`Header::flags`); only the walk's work list and the
//! per-context sums grow with the heap. Only the leaves of the live bitmap in use are
//! walked.
//!
//! Blocks never written by the program read as memcheck sees them: the allocator's
//! own free-list pointers, which glibc leaves in the first words of a reused block
//! (where memcheck knows them undefined), are cleared when the block is handed out
//! (`runtime`), and the library's own freed memory is cleared (`real`).
//!
//! Limits: only at `exit` and `_exit` (a crashing or signalled process may be
//! mid-update); other threads' stacks and thread-local storage are not scanned,
//! so a block referenced only from there counts as lost.

use crate::live::{self, Header, NO_NODE, REGION_SHIFT, WORDS_PER_REGION};
use core::sync::atomic::{AtomicU64, Ordering};
use rustc_hash::FxHashMap as HashMap;

/// What became of the blocks never freed: [blocks, bytes] for each class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub definite: [u64; 2],
    pub indirect: [u64; 2],
    pub reachable: [u64; 2],
}

/// The class of one never-freed block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Definite,
    Indirect,
    Reachable,
}

const REACHABLE: u8 = 1;
const INDIRECT: u8 = 2;
const MARKS: u8 = REACHABLE | INDIRECT;

/// No block covers this KiB (in `Cover::chunks`).
const NONE: u32 = 0;
/// The block covering this KiB starts in an earlier region (`Cover::incoming`).
const INCOMING: u32 = u32::MAX;

/// One 64 MiB region holding live blocks (or covered by one).
struct Cover {
    region: usize,
    /// The live bitmap's words of the region (None: a region a block only crosses).
    bits: Option<&'static [AtomicU64]>,
    /// Per KiB (one bitmap word), the block covering its first byte: its granule in the
    /// region + 1, NONE or INCOMING. Empty until a block crosses a KiB boundary here.
    chunks: Vec<u32>,
    /// The block from an earlier region that covers this region's start.
    incoming: usize,
}

/// The live blocks as the scan sees them.
struct Heap {
    covers: Vec<Cover>,
    /// Open addressing over `covers` by region: index + 1, 0 for an empty slot.
    slots: Vec<u32>,
    low: usize,
    high: usize,
}

#[inline]
fn region_slot(region: usize, mask: usize) -> usize {
    (region.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) & mask
}

impl Heap {
    fn build() -> Heap {
        let mut covers: Vec<Cover> = live::leaves()
            .into_iter()
            .map(|(region, words)| Cover { region, bits: Some(words), chunks: Vec::new(), incoming: 0 })
            .collect();
        let mut index: std::collections::HashMap<usize, usize> = covers.iter().enumerate().map(|(i, c)| (c.region, i)).collect();
        let (mut low, mut high) = (usize::MAX, 0usize);
        // The region of the last KiB marked, and its cover (blocks come in address order).
        let mut last: Option<(usize, usize)> = None;
        live::for_each_live(|user| {
            // SAFETY: live, so the header is the block's; clearing the marks is ours to do.
            let mut h = unsafe { Header::read(user) };
            if h.flags & MARKS != 0 {
                h.flags &= !MARKS;
                unsafe { h.write(user) };
            }
            let end = user.saturating_add((h.size as usize).max(1));
            low = low.min(user);
            high = high.max(end);
            // Every KiB after the one the block starts in, up to the one it ends in.
            let start_region = user >> REGION_SHIFT;
            for chunk in (user >> 10) + 1..=(end - 1) >> 10 {
                let region = chunk >> (REGION_SHIFT - 10);
                let i = match last {
                    Some((r, i)) if r == region => i,
                    _ => {
                        let i = *index.entry(region).or_insert_with(|| {
                            covers.push(Cover { region, bits: None, chunks: Vec::new(), incoming: 0 });
                            covers.len() - 1
                        });
                        last = Some((region, i));
                        i
                    }
                };
                let cover = &mut covers[i];
                if cover.chunks.is_empty() {
                    cover.chunks = vec![NONE; WORDS_PER_REGION];
                }
                cover.chunks[chunk & (WORDS_PER_REGION - 1)] = if start_region == region {
                    ((user >> 4) & (live::GRANULES_PER_REGION - 1)) as u32 + 1
                } else {
                    cover.incoming = user;
                    INCOMING
                };
            }
        });
        let mask = (covers.len() * 2).next_power_of_two().max(8) - 1;
        let mut slots = vec![0u32; mask + 1];
        for (i, c) in covers.iter().enumerate() {
            let mut at = region_slot(c.region, mask);
            while slots[at] != 0 {
                at = (at + 1) & mask;
            }
            slots[at] = i as u32 + 1;
        }
        Heap { covers, slots, low, high }
    }

    /// Whether `v` may point into a block: inside the blocks' address range.
    #[inline(always)]
    fn in_range(&self, v: usize) -> bool {
        v.wrapping_sub(self.low) < self.high.wrapping_sub(self.low)
    }

    /// The live block holding address `v`, if any: O(1).
    #[inline]
    fn block_of(&self, v: usize) -> Option<usize> {
        if !self.in_range(v) {
            return None;
        }
        let region = v >> REGION_SHIFT;
        let mask = self.slots.len() - 1;
        let mut at = region_slot(region, mask);
        let cover = loop {
            let i = self.slots[at] as usize;
            if i == 0 {
                return None;
            }
            if self.covers[i - 1].region == region {
                break &self.covers[i - 1];
            }
            at = (at + 1) & mask;
        };
        let granule = (v >> 4) & (live::GRANULES_PER_REGION - 1);
        let word = granule / 64;
        let base = region << REGION_SHIFT;
        let mut start = None;
        if let Some(bits) = cover.bits {
            let below = bits[word].load(Ordering::Relaxed) & (u64::MAX >> (63 - granule % 64));
            if below != 0 {
                start = Some(base + ((word * 64 + 63 - below.leading_zeros() as usize) << 4));
            }
        }
        let start = match start {
            Some(s) => s,
            None => match cover.chunks.get(word).copied().unwrap_or(NONE) {
                NONE => return None,
                INCOMING => cover.incoming,
                g => base + ((g as usize - 1) << 4),
            },
        };
        // SAFETY: a live block's header.
        let size = unsafe { Header::read(start) }.size as usize;
        (v < start.saturating_add(size.max(1))).then_some(start)
    }
}

/// The marks of the block at `user` (from its header).
#[inline]
fn marks(user: usize) -> u8 {
    // SAFETY: a live block's header.
    unsafe { Header::read(user) }.flags & MARKS
}

#[inline]
fn set_mark(user: usize, mark: u8) {
    // SAFETY: a live block's header; the scan is the only writer of its flags.
    unsafe {
        let mut h = Header::read(user);
        h.flags |= mark;
        h.write(user);
    }
}

/// Every aligned word of [start, end) that points into a block.
///
/// # Safety
/// The range must be readable memory.
unsafe fn each_pointer(start: usize, end: usize, heap: &Heap, mut f: impl FnMut(usize)) {
    let first = (start + 7) & !7;
    if end < first + 8 {
        return;
    }
    // SAFETY: the caller's readable range, 8-aligned words.
    let words = unsafe { core::slice::from_raw_parts(first as *const u64, (end - first) / 8) };
    let (low, span) = (heap.low as u64, heap.high.wrapping_sub(heap.low) as u64);
    let mut each = |v: u64| {
        if let Some(b) = heap.block_of(v as usize) {
            f(b);
        }
    };
    // Most words are not pointers into the heap: the range check is all they cost,
    // four at a time where the processor can.
    if avx2() {
        // SAFETY: the processor has AVX2.
        unsafe { in_range_avx2(words, low, span, &mut each) };
    } else {
        for &v in words {
            if v.wrapping_sub(low) < span {
                each(v);
            }
        }
    }
}

/// Whether the processor has AVX2 (asked once).
fn avx2() -> bool {
    use core::sync::atomic::AtomicU8;
    static KNOWN: AtomicU8 = AtomicU8::new(0);
    match KNOWN.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let yes = std::arch::is_x86_feature_detected!("avx2");
            KNOWN.store(1 + yes as u8, Ordering::Relaxed);
            yes
        }
    }
}

/// Calls `each` with every word `v` of `words` with `v - low < span` (unsigned).
#[target_feature(enable = "avx2")]
unsafe fn in_range_avx2(words: &[u64], low: u64, span: u64, each: &mut impl FnMut(u64)) {
    use core::arch::x86_64::*;
    const SIGN: i64 = i64::MIN;
    // Unsigned v - low < span, as the signed (v - low) ^ SIGN < span ^ SIGN.
    let lowv = _mm256_set1_epi64x(low as i64);
    let signv = _mm256_set1_epi64x(SIGN);
    let spanv = _mm256_set1_epi64x(span as i64 ^ SIGN);
    let mut chunks = words.chunks_exact(8);
    for c in &mut chunks {
        // SAFETY: eight readable words.
        let (a, b) = unsafe {
            (_mm256_loadu_si256(c.as_ptr() as *const __m256i), _mm256_loadu_si256(c.as_ptr().add(4) as *const __m256i))
        };
        let a = _mm256_xor_si256(_mm256_sub_epi64(a, lowv), signv);
        let b = _mm256_xor_si256(_mm256_sub_epi64(b, lowv), signv);
        let hit = _mm256_or_si256(_mm256_cmpgt_epi64(spanv, a), _mm256_cmpgt_epi64(spanv, b));
        if _mm256_testz_si256(hit, hit) == 0 {
            for &v in c {
                if v.wrapping_sub(low) < span {
                    each(v);
                }
            }
        }
    }
    for &v in chunks.remainder() {
        if v.wrapping_sub(low) < span {
            each(v);
        }
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

/// Classify the live blocks counted in `epoch`. `stack` is the exiting thread's
/// stack range above the library's own frames, `registers` the callee-saved
/// registers spilled there. Besides the summary, the blocks and bytes of each class
/// per raw node, for the per-context figures.
///
/// # Safety
/// Runs at exit under the reentrancy guard; `stack` must be readable.
pub unsafe fn classify(
    epoch: u16,
    node_count: u32,
    stack: (usize, usize),
    registers: &[usize],
) -> (Summary, HashMap<(u32, Verdict), (u64, u64)>) {
    let heap = Heap::build();
    let mut work = Vec::new();
    let reach = |b: usize, work: &mut Vec<usize>| {
        if marks(b) & REACHABLE == 0 {
            set_mark(b, REACHABLE);
            work.push(b);
        }
    };
    for (s, e) in writable_segments(Heap::build as *const () as usize) {
        // SAFETY: a loaded writable segment.
        unsafe { each_pointer(s, e, &heap, |b| reach(b, &mut work)) };
    }
    // SAFETY: the caller's stack range.
    unsafe { each_pointer(stack.0, stack.1, &heap, |b| reach(b, &mut work)) };
    for &r in registers {
        if let Some(b) = heap.block_of(r) {
            reach(b, &mut work);
        }
    }
    while let Some(b) = work.pop() {
        // SAFETY: a live block's header and user bytes.
        let n = unsafe { Header::read(b) }.size as usize;
        unsafe { each_pointer(b, b + n, &heap, |i| reach(i, &mut work)) };
    }

    // One pass over the blocks in address order: each is counted in its class, and a
    // lost block's pointees become indirectly lost (moved from definitely lost when
    // they were counted already, i.e. lie below it).
    let mut sums = Sums { epoch, node_count, summary: Summary::default(), per_node: HashMap::default(), last: None };
    live::for_each_live(|b| {
        // SAFETY: as above.
        let h = unsafe { Header::read(b) };
        match h.flags & MARKS {
            m if m & REACHABLE != 0 => return sums.add(&h, Verdict::Reachable, 1),
            INDIRECT => sums.add(&h, Verdict::Indirect, 1),
            _ => sums.add(&h, Verdict::Definite, 1),
        }
        unsafe {
            each_pointer(b, b + h.size as usize, &heap, |i| {
                if i != b && marks(i) == 0 {
                    set_mark(i, INDIRECT);
                    if i < b {
                        // SAFETY: a live block's header.
                        let pointee = Header::read(i);
                        sums.add(&pointee, Verdict::Definite, -1);
                        sums.add(&pointee, Verdict::Indirect, 1);
                    }
                }
            })
        };
    });
    sums.flush();
    (sums.summary, sums.per_node)
}

/// The classes' sums, overall and per raw node (blocks counted in the epoch only).
struct Sums {
    epoch: u16,
    node_count: u32,
    summary: Summary,
    per_node: HashMap<(u32, Verdict), (u64, u64)>,
    /// Consecutive blocks often share their node and class: summed here first.
    last: Option<((u32, Verdict), (i64, i64))>,
}

impl Sums {
    #[inline]
    fn add(&mut self, h: &Header, verdict: Verdict, sign: i64) {
        if h.node == NO_NODE || h.epoch != self.epoch || h.node >= self.node_count {
            return;
        }
        let slot = match verdict {
            Verdict::Reachable => &mut self.summary.reachable,
            Verdict::Indirect => &mut self.summary.indirect,
            Verdict::Definite => &mut self.summary.definite,
        };
        slot[0] = slot[0].wrapping_add_signed(sign);
        slot[1] = slot[1].wrapping_add_signed(sign * h.size as i64);
        let key = (h.node, verdict);
        match &mut self.last {
            Some((k, v)) if *k == key => {
                v.0 += sign;
                v.1 += sign * h.size as i64;
            }
            _ => {
                self.flush();
                self.last = Some((key, (sign, sign * h.size as i64)));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((key, (count, bytes))) = self.last.take() {
            let row = self.per_node.entry(key).or_default();
            row.0 = row.0.wrapping_add_signed(count);
            row.1 = row.1.wrapping_add_signed(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interior_pointers_find_their_block_through_the_bitmap_and_the_cover_table() {
        assert!(live::init());
        // Three blocks in a buffer of ours: 100 bytes, 5000 bytes (crossing KiBs), 0 bytes.
        let buf = vec![0u128; 1024];
        let base = (buf.as_ptr() as usize + 1023) & !1023;
        let blocks = [(base + 32, 100u64), (base + 256, 5000), (base + 6144, 0)];
        for &(user, size) in &blocks {
            unsafe { Header { size, node: 1, epoch: 0, offset_shift: 4, flags: 0 }.write(user) };
            assert!(live::mark_live(user));
        }
        let heap = Heap::build();
        assert_eq!(heap.block_of(base + 32), Some(base + 32));
        assert_eq!(heap.block_of(base + 131), Some(base + 32));
        assert_eq!(heap.block_of(base + 132), None, "past the end of the first block");
        assert_eq!(heap.block_of(base + 256 + 4999), Some(base + 256), "four KiB into the block");
        assert_eq!(heap.block_of(base + 256 + 5000), None);
        assert_eq!(heap.block_of(base + 6144), Some(base + 6144), "a zero-size block has its address");
        assert_eq!(heap.block_of(base + 6160), None);
        assert_eq!(heap.block_of(8), None);
        for &(user, _) in &blocks {
            assert!(live::take_live(user));
        }
        drop(buf);
    }
}
