//! The side table of profiled conses: address -> allocation site.
//!
//! Conses carry no site tag (see `object`), so the site of a cons allocated
//! while profiling lives here until the sweeper frees it. The table is on the
//! allocation and free paths of every profiled cons, and a hash table keyed
//! by address would send each of them to a random cache line of a table as
//! large as the unswept heap. This one follows the allocator's layout
//! instead: sites are kept per 64 KiB region of address space, one `u32`
//! per 32 bytes, so neighbouring conses (allocated together, swept together)
//! share cache lines, and a one-entry cache of the last region makes the
//! common lookup a shift and a compare.
//!
//! Invariants: a slot holds 0 (no profiled cons there) or the site of the
//! profiled cons at that address; `len` counts the non-zero slots; regions
//! are dropped when their last cons is removed.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Region numbers are small consecutive integers: one multiply spreads them
/// (the map is consulted whenever an allocation or a free moves to another
/// region, so SipHash's cost would show).
#[derive(Default)]
struct RegionHasher(u64);

impl Hasher for RegionHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        let x = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

/// Bytes of address space per region.
const REGION_SHIFT: u32 = 16;
/// Bytes per slot: no two conses (32 bytes with gc-arena's header) start closer.
const SLOT_SHIFT: u32 = 5;
const SLOTS: usize = 1 << (REGION_SHIFT - SLOT_SHIFT);

struct Region {
    number: usize,
    sites: Box<[u32; SLOTS]>,
    used: u32,
}

/// Address -> site, for the profiled conses not yet swept.
#[derive(Default)]
pub struct ConsSites {
    /// The regions with a profiled cons, in no order.
    regions: Vec<Region>,
    /// Region number -> index in `regions`.
    index: HashMap<usize, usize, BuildHasherDefault<RegionHasher>>,
    /// The region last looked up (number, index), if it still exists.
    last: Option<(usize, usize)>,
    len: usize,
}

fn split(address: usize) -> (usize, usize) {
    (address >> REGION_SHIFT, (address >> SLOT_SHIFT) & (SLOTS - 1))
}

impl ConsSites {
    /// Whether no cons is recorded (the free path's fast exit when not profiling).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The index of region `r`, if it has a profiled cons.
    #[inline]
    fn find(&mut self, r: usize) -> Option<usize> {
        if let Some((number, k)) = self.last
            && number == r
        {
            return Some(k);
        }
        let k = *self.index.get(&r)?;
        self.last = Some((r, k));
        Some(k)
    }

    /// Record `site` (not 0) for the cons at `address`.
    pub fn insert(&mut self, address: usize, site: u32) {
        let (r, i) = split(address);
        let k = match self.find(r) {
            Some(k) => k,
            None => {
                self.regions.push(Region { number: r, sites: Box::new([0; SLOTS]), used: 0 });
                let k = self.regions.len() - 1;
                self.index.insert(r, k);
                self.last = Some((r, k));
                k
            }
        };
        let region = &mut self.regions[k];
        if region.sites[i] == 0 {
            region.used += 1;
            self.len += 1;
        }
        region.sites[i] = site;
    }

    /// The site recorded for `address`, removed from the table.
    pub fn remove(&mut self, address: usize) -> Option<u32> {
        let (r, i) = split(address);
        let k = self.find(r)?;
        let region = &mut self.regions[k];
        let site = std::mem::take(&mut region.sites[i]);
        if site == 0 {
            return None;
        }
        region.used -= 1;
        self.len -= 1;
        if region.used == 0 {
            self.index.remove(&r);
            self.regions.swap_remove(k);
            if let Some(moved) = self.regions.get(k) {
                self.index.insert(moved.number, k);
            }
            self.last = None;
        }
        Some(site)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserted_sites_come_back_once_and_empty_regions_go() {
        let mut t = ConsSites::default();
        let base = 0x7f12_3456_0010usize;
        for round in 0..20usize {
            for k in 0..3000usize {
                t.insert(base + (round % 3 * 3000 + k) * 32, (k + 1) as u32);
            }
            assert_eq!(t.len, 3000);
            // Remove in an order unlike insertion, as a sweep would.
            for k in (0..3000usize).filter(|k| k % 2 == 0).chain((0..3000usize).filter(|k| k % 2 == 1)) {
                assert_eq!(t.remove(base + (round % 3 * 3000 + k) * 32), Some((k + 1) as u32));
            }
            assert!(t.is_empty());
            assert!(t.regions.is_empty() && t.index.is_empty());
        }
        assert_eq!(t.remove(base), None);
    }

    #[test]
    fn a_site_recorded_again_at_one_address_replaces_the_old() {
        let mut t = ConsSites::default();
        t.insert(0x1000, 3);
        t.insert(0x1000, 4);
        t.insert(0x1030, 5);
        assert_eq!(t.len, 2);
        assert_eq!(t.remove(0x1000), Some(4));
        assert_eq!(t.remove(0x1000), None);
        assert_eq!(t.remove(0x1030), Some(5));
        assert!(t.is_empty());
    }
}
