//! Settings read once from the environment when the hooks first run.
//!
//! Bad values never stop the program: each is reported once on stderr with the
//! accepted forms, and the default is used instead.

/// How stacks are captured.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Unwind {
    /// Each module's CFI where it has some, frame pointers where not (`unwind`).
    Auto,
    FramePointers,
    /// libgcc's `_Unwind_Backtrace`.
    Dwarf,
}

/// Whether the processes a profiled process starts are profiled too.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Children {
    /// Each writes its own file (`<path>.<pid>`): the default.
    Follow,
    /// The environment is cleaned of the library before `main` (what `mprof run` asks).
    Ignore,
}

/// What to do after reporting a heap error.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OnError {
    Continue,
    Abort,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Output path; `%p` becomes the process id when the file is written.
    pub out: String,
    /// Frames captured per allocation (innermost kept when deeper).
    pub depth: usize,
    pub unwind: Unwind,
    /// Signal number that asks for a dump, if any.
    pub dump_signal: Option<i32>,
    pub on_error: OnError,
    pub children: Children,
    /// `MPROF_SUPPRESS`: function-name patterns whose lost blocks are counted apart (see `leaks`).
    pub suppress: Option<String>,
    /// `MPROF_LEAK_CHECK`: classify never-freed blocks at exit (a scan of all live memory).
    pub leak_check: bool,
    /// `MPROF_LEAK_EXITCODE`: the exit status of a process that leaves definitely lost
    /// bytes after suppressions (the leak gate, `gate`); None when not asked.
    pub leak_exitcode: Option<i32>,
}

pub const DEFAULT_OUT: &str = "mprof.out";
pub const DEFAULT_DEPTH: usize = 1024;
pub const MAX_DEPTH: usize = 65_536;

impl Config {
    /// Parse from a lookup function (the environment in the library, a map in tests).
    /// Returns the config and the warnings to print.
    pub fn parse(get: impl Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        let mut warnings = Vec::new();
        let out = match get("MPROF_OUT") {
            Some(s) if !s.is_empty() => s,
            _ => DEFAULT_OUT.to_string(),
        };
        let depth = match get("MPROF_DEPTH") {
            None => DEFAULT_DEPTH,
            Some(s) => match s.trim().parse::<usize>() {
                Ok(d) if (1..=MAX_DEPTH).contains(&d) => d,
                _ => {
                    warnings.push(format!(
                        "MPROF_DEPTH={s:?} is not a frame count from 1 to {MAX_DEPTH}; using {DEFAULT_DEPTH}"
                    ));
                    DEFAULT_DEPTH
                }
            },
        };
        let unwind = match get("MPROF_UNWIND").as_deref().map(str::trim) {
            None | Some("") | Some("auto") => Unwind::Auto,
            Some("fp") => Unwind::FramePointers,
            Some("dwarf") => Unwind::Dwarf,
            Some(other) => {
                warnings.push(format!(
                    "MPROF_UNWIND={other:?} is not auto, fp or dwarf; using auto"
                ));
                Unwind::Auto
            }
        };
        let dump_signal = match get("MPROF_DUMP_SIGNAL") {
            None => None,
            Some(s) if s.trim().is_empty() => None,
            Some(s) => match signal_number(&s) {
                Some(n) => Some(n),
                None => {
                    warnings.push(format!(
                        "MPROF_DUMP_SIGNAL={s:?} is not a signal name (USR1, SIGUSR2, ...) or number; no dump signal"
                    ));
                    None
                }
            },
        };
        let on_error = match get("MPROF_ON_ERROR").as_deref().map(str::trim) {
            None | Some("") | Some("continue") => OnError::Continue,
            Some("abort") => OnError::Abort,
            Some(other) => {
                warnings.push(format!(
                    "MPROF_ON_ERROR={other:?} is not continue or abort; using continue"
                ));
                OnError::Continue
            }
        };
        let children = match get("MPROF_CHILDREN").as_deref().map(str::trim) {
            None | Some("") | Some("follow") => Children::Follow,
            Some("ignore") => Children::Ignore,
            Some(other) => {
                warnings.push(format!(
                    "MPROF_CHILDREN={other:?} is not follow or ignore; using follow"
                ));
                Children::Follow
            }
        };
        let leak_check = match get("MPROF_LEAK_CHECK").as_deref().map(str::trim) {
            None | Some("") | Some("1") | Some("yes") => true,
            Some("0") | Some("no") => false,
            Some(other) => {
                warnings.push(format!(
                    "MPROF_LEAK_CHECK={other:?} is not yes or no (1 or 0); using yes"
                ));
                true
            }
        };
        let leak_exitcode = match get("MPROF_LEAK_EXITCODE").as_deref().map(str::trim) {
            None | Some("") | Some("0") => None,
            Some(v) => match v.parse::<i32>() {
                Ok(n) if (1..=255).contains(&n) => Some(n),
                _ => {
                    warnings.push(format!("MPROF_LEAK_EXITCODE={v:?} is not an exit status from 1 to 255; no leak gate"));
                    None
                }
            },
        };
        if leak_exitcode.is_some() && !leak_check {
            warnings.push("MPROF_LEAK_EXITCODE needs the leak check (MPROF_LEAK_CHECK=no turns it off); no leak gate".into());
        }
        (
            Config {
                out,
                depth,
                unwind,
                dump_signal,
                on_error,
                children,
                suppress: get("MPROF_SUPPRESS").filter(|s| !s.trim().is_empty()),
                leak_check,
                leak_exitcode: if leak_check { leak_exitcode } else { None },
            },
            warnings,
        )
    }

    /// The output path for process `pid`. A forked child whose path has no `%p`
    /// gets `.<pid>` appended, so it never overwrites its parent's file (other
    /// descendants inherit `<path>.%p`: see `children`).
    pub fn path_for(&self, pid: u32, forked_child: bool) -> String {
        if self.out.contains("%p") {
            self.out.replace("%p", &pid.to_string())
        } else if forked_child {
            format!("{}.{pid}", self.out)
        } else {
            self.out.clone()
        }
    }
}

/// Signals that make sense for "write the profile now".
fn signal_number(s: &str) -> Option<i32> {
    let s = s.trim();
    if let Ok(n) = s.parse::<i32>() {
        return (1..=64).contains(&n).then_some(n);
    }
    let upper = s.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    Some(match name {
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "HUP" => libc::SIGHUP,
        "PROF" => libc::SIGPROF,
        "WINCH" => libc::SIGWINCH,
        "URG" => libc::SIGURG,
        _ => {
            let rt = name.strip_prefix("RTMIN+")?.parse::<i32>().ok()?;
            let n = libc::SIGRTMIN() + rt;
            if n > libc::SIGRTMAX() {
                return None;
            }
            n
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(pairs: &[(&str, &str)]) -> (Config, Vec<String>) {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::parse(|k| m.get(k).cloned())
    }

    #[test]
    fn defaults() {
        let (c, w) = parse(&[]);
        assert!(w.is_empty());
        assert_eq!(c.out, "mprof.out");
        assert_eq!(c.depth, DEFAULT_DEPTH);
        assert_eq!(c.unwind, Unwind::Auto);
        assert_eq!(c.dump_signal, None);
        assert_eq!(c.on_error, OnError::Continue);
        assert_eq!(c.children, Children::Follow);
        assert!(c.leak_check);
    }

    #[test]
    fn every_variable_is_read() {
        let (c, w) = parse(&[
            ("MPROF_OUT", "/tmp/run.%p.mprof"),
            ("MPROF_DEPTH", "64"),
            ("MPROF_UNWIND", "dwarf"),
            ("MPROF_DUMP_SIGNAL", "SIGUSR2"),
            ("MPROF_ON_ERROR", "abort"),
            ("MPROF_CHILDREN", "ignore"),
            ("MPROF_LEAK_CHECK", "no"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        let (g, w) = parse(&[("MPROF_LEAK_EXITCODE", "23")]);
        assert_eq!((g.leak_exitcode, w.len()), (Some(23), 0));
        let (g, w) = parse(&[("MPROF_LEAK_EXITCODE", "300")]);
        assert_eq!((g.leak_exitcode, w.len()), (None, 1));
        assert!(!c.leak_check);
        assert_eq!(c.children, Children::Ignore);
        assert_eq!(c.path_for(42, false), "/tmp/run.42.mprof");
        assert_eq!(c.depth, 64);
        assert_eq!(c.unwind, Unwind::Dwarf);
        assert_eq!(c.dump_signal, Some(libc::SIGUSR2));
        assert_eq!(c.on_error, OnError::Abort);
        assert_eq!(
            parse(&[("MPROF_DUMP_SIGNAL", "usr1")]).0.dump_signal,
            Some(libc::SIGUSR1)
        );
        assert_eq!(
            parse(&[("MPROF_DUMP_SIGNAL", "12")]).0.dump_signal,
            Some(12)
        );
    }

    #[test]
    fn bad_values_warn_and_fall_back() {
        let (c, w) = parse(&[
            ("MPROF_DEPTH", "0"),
            ("MPROF_UNWIND", "libunwind"),
            ("MPROF_DUMP_SIGNAL", "SIGFOO"),
            ("MPROF_ON_ERROR", "explode"),
            ("MPROF_CHILDREN", "some"),
        ]);
        assert_eq!(c, parse(&[]).0);
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(w[0].contains("MPROF_DEPTH=\"0\""), "{}", w[0]);
        assert!(w[1].contains("auto, fp or dwarf"), "{}", w[1]);
    }

    #[test]
    fn forked_children_never_share_the_parent_file() {
        let (c, _) = parse(&[]);
        assert_eq!(c.path_for(7, false), "mprof.out");
        assert_eq!(c.path_for(7, true), "mprof.out.7");
    }
}
