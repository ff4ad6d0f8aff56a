//! Fuzz target: the profile-file reader, and everything a read profile feeds.
//!
//! Run: `cd profiler/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run read_profile` (the stable
//! toolchain with nightly flags allowed). Any input must give either an error or a
//! profile that satisfies `Profile::validate`, that prints (memory and execution tables),
//! merges (figures summed by name and path: a self-merge doubles each figure's
//! total) and exports (folded, JSON, pprof) without panicking, and that writes back to
//! bytes reading as itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mprof_display::{ReportOptions, render_report};
use mprof_engine::Profile;

fuzz_target!(|data: &[u8]| {
    let Ok(profile) = Profile::read(data) else { return };
    assert_eq!(profile.validate(), Ok(()));
    let _ = render_report(&profile, &ReportOptions::default());
    let _ = render_report(&profile, &ReportOptions { merge_cycles: true, exact_percentages: true, ..ReportOptions::default() });
    let mut bytes = Vec::new();
    profile.write(&mut bytes).expect("writing to memory cannot fail");
    assert_eq!(Profile::read(&bytes).as_ref(), Ok(&profile));
    let mut doubled = profile.clone();
    doubled.merge(&profile).expect("a profile merges with itself");
    assert_eq!(doubled.validate(), Ok(()));
    assert_eq!(doubled.figures.len(), profile.figures.len());
    for (once, twice) in profile.figures.iter().zip(&doubled.figures) {
        assert_eq!(once.name, twice.name);
        let total = |f: &mprof_engine::Figure| f.rows.iter().try_fold(0u64, |a, r| a.checked_add(r.2));
        if let Some(t) = total(once).and_then(|t| t.checked_mul(2)) {
            assert_eq!(total(twice), Some(t), "figure {:?}", once.name);
        }
    }
    let _ = mprof_export::formats::folded(&profile, Default::default());
    let _ = mprof_export::formats::json(&profile);
    let _ = mprof_export::formats::pprof_gz(&profile);
    let all = mprof_display::exec_report::ExecReportOptions { time: true, counts: true, io: true, merge_cycles: false, exact: false };
    let _ = mprof_display::exec_report::render_exec(&profile, &all);
    if let Some(view) = mprof_display::exec_report::time_view(&profile) {
        let _ = mprof_export::formats::folded(&view, mprof_export::formats::FoldedValue::TimeNs);
    }
});
