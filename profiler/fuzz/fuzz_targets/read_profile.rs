//! Fuzz target: the profile-file reader, and everything a read profile feeds.
//!
//! Run: `cd profiler/fuzz && cargo +nightly fuzz run read_profile`. Any input must give
//! either an error or a profile that satisfies `Profile::validate`, that prints, merges
//! and exports without panicking, and that writes back to bytes reading as itself.
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
    let _ = mprof_display::export::folded(&profile, Default::default());
    let _ = mprof_display::export::pprof_gz(&profile);
});
