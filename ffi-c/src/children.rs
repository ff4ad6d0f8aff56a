//! Which file each process writes, and what its children inherit, so that no
//! profile ever overwrites another process's.
//!
//! The first profiled process of a run (the root) writes `MPROF_OUT` as given;
//! before `main` it rewrites `MPROF_OUT` in its own environment to
//! `<path>.%p`, so every descendant — started by `fork`+exec, `vfork`+exec,
//! `posix_spawn`, `system`, or run by a wrapper such as `timeout` — writes
//! `<path>.<its pid>`, however it was started (no fork handler runs for
//! `vfork` or `posix_spawn`). A forked child that does not exec keeps the
//! root's image and knows it is a child from its fork handler. A path with
//! `%p` already names every process apart and is left as it is.
//!
//! With `MPROF_CHILDREN=ignore` (what `mprof run` sets unless asked to follow
//! children), the root instead removes libmprof from `LD_PRELOAD` and every
//! `MPROF_*` variable from its environment, so the program sees the
//! environment it would have without the profiler and its children run
//! unprofiled; forked children record and write nothing.
//!
//! Runs from the library's constructor, single-threaded, under the guard.

use crate::config::{Children, Config};

/// Prepare the environment the process's children will inherit.
pub fn prepare_environment(cfg: &Config) {
    match cfg.children {
        Children::Follow => {
            if !cfg.out.contains("%p") {
                // SAFETY: the constructor runs before main, single-threaded.
                unsafe { std::env::set_var("MPROF_OUT", format!("{}.%p", cfg.out)) };
            }
        }
        Children::Ignore => {
            let ours: Vec<String> = std::env::vars_os()
                .filter_map(|(k, _)| k.into_string().ok())
                .filter(|k| k.starts_with("MPROF_"))
                .collect();
            // SAFETY: as above.
            unsafe {
                for k in ours {
                    std::env::remove_var(k);
                }
                match std::env::var("LD_PRELOAD")
                    .ok()
                    .map(|v| without_libmprof(&v))
                {
                    Some(Some(rest)) => std::env::set_var("LD_PRELOAD", rest),
                    Some(None) => std::env::remove_var("LD_PRELOAD"),
                    None => {}
                }
            }
        }
    }
}

/// `LD_PRELOAD` without libmprof's entries (separated by spaces or colons, as
/// ld.so reads them); None when nothing else is left.
pub fn without_libmprof(preload: &str) -> Option<String> {
    let rest: Vec<&str> = preload
        .split([' ', ':'])
        .filter(|e| !e.is_empty())
        .filter(|e| {
            let name = e.rsplit('/').next().unwrap_or(e);
            !(name == "libmprof.so" || name.starts_with("libmprof.so."))
        })
        .collect();
    (!rest.is_empty()).then(|| rest.join(":"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_libmprof_leaves_ld_preload() {
        assert_eq!(without_libmprof("/x/target/release/libmprof.so"), None);
        assert_eq!(
            without_libmprof("liba.so /x/libmprof.so:/y/libb.so"),
            Some("liba.so:/y/libb.so".to_string())
        );
        assert_eq!(
            without_libmprof("/x/libmprof.so.1 /x/libmprofx.so"),
            Some("/x/libmprofx.so".to_string())
        );
    }
}
