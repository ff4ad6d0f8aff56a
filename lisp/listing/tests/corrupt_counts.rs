//! A profile file whose count section is damaged in any byte either fails to read or
//! lists without a panic: the listing trusts nothing the file says about offsets,
//! lines or sources.

use mprof_engine::exec::{CountKind, CountPoint, SourceFile, source_hash};
use mprof_engine::{CategoryScheme, Language, Profile};
use mprof_listing::{ListingOptions, render_listing, render_listings};

const TEXT: &str = "(defun f (x) (if x (g) (h)))\n";

fn counted() -> Profile {
    let mut p = Profile::empty(Language::Lisp, CategoryScheme::lisp());
    p.exec.sources.push(SourceFile { path: "f.lisp".into(), bytes: TEXT.len() as u64, hash: source_hash(TEXT.as_bytes()) });
    for (start, end, kind, count) in [(0u64, 28u64, CountKind::Entry, 7u64), (19, 22, CountKind::Branch, 3), (23, 26, CountKind::Branch, 4)] {
        p.exec.counts.push(CountPoint { source: 0, start, end, line: 1, column: start as u32 + 1, kind, function: "F".into(), depth: 0, count });
    }
    p
}

#[test]
fn the_undamaged_profile_lists_its_counts() {
    let listing = render_listing(&counted(), 0, TEXT, &ListingOptions::default()).unwrap();
    assert!(listing.contains("7.---|(defun f (x)"), "{listing}");
}

#[test]
fn every_truncation_and_byte_flip_is_an_error_or_a_listing_never_a_panic() {
    let mut good = Vec::new();
    counted().write(&mut good).unwrap();
    for cut in 0..good.len() {
        assert!(Profile::read(&good[..cut]).is_err(), "cut at {cut}");
    }
    let mut listed = 0;
    for i in 0..good.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = good.clone();
            bad[i] ^= flip;
            if let Ok(p) = Profile::read(&bad) {
                for s in 0..p.exec.sources.len() {
                    listed += render_listing(&p, s, TEXT, &ListingOptions::default()).is_ok() as usize;
                }
                let _ = render_listings(&p, &ListingOptions::default());
            }
        }
    }
    assert!(listed > 0, "some damaged files (in counts only) still list");
}
