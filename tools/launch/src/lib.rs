//! `mprof run [options] -- PROGRAM ARGS`, as heaptrack's launcher: run a
//! program with libmprof preloaded, then say where each profile went and how
//! to read it.
//!
//! The one entry point is [`run`]. It finds `libmprof.so` (given, or
//! `MPROF_LIBRARY`, or beside the running executable as cargo lays out
//! `target/<profile>/`), adds it to `LD_PRELOAD`, and passes the settings as
//! `MPROF_*` variables. Unless children are followed, it sets
//! `MPROF_CHILDREN=ignore`: the library then removes itself and its variables
//! from the program's environment before `main`, so the program sees the
//! environment it would have had, and anything it starts runs unprofiled.
//! Output files always carry the process id (`%p`), so no run and no process
//! overwrites another's profile. While the program runs, SIGINT and SIGQUIT
//! are ignored in the launcher (as `system` does), so Ctrl-C reaches the
//! program, which writes its profile, and the launcher still reports it.
//!
//! Invariants: it never panics; every failure is a [`LaunchError`] whose
//! message says what to do; it depends on no other crate of the workspace.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// What `mprof run` was asked for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// libmprof.so to preload (default: `MPROF_LIBRARY`, then beside the running executable).
    pub library: Option<PathBuf>,
    /// Output path; `%p` is added before the extension when missing
    /// (default `mprof.<program>.%p.out` in the current directory).
    pub out: Option<String>,
    /// Profile the processes the program starts, each to its own file.
    pub follow_children: bool,
    /// Further settings, e.g. `("MPROF_DEPTH", "64")` or `("MPROF_DUMP_SIGNAL", "USR1")`.
    pub settings: Vec<(String, String)>,
}

/// How the run went.
#[derive(Debug)]
pub struct Outcome {
    /// The program's exit status (the caller should exit the same way).
    pub status: ExitStatus,
    /// The profile files written, the program's own first.
    pub profiles: Vec<PathBuf>,
}

/// Why the program could not be run.
#[derive(Debug, PartialEq, Eq)]
pub enum LaunchError {
    /// No libmprof.so where it was looked for.
    LibraryNotFound(Vec<PathBuf>),
    /// The program could not be started.
    Spawn { program: String, reason: String },
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LaunchError::LibraryNotFound(tried) => {
                write!(f, "libmprof.so not found (looked at ")?;
                for (i, p) in tried.iter().enumerate() {
                    write!(f, "{}{}", if i > 0 { ", " } else { "" }, p.display())?;
                }
                write!(
                    f,
                    "); build it with `cargo build --release -p mprof-ffi`, or give its path with --library or MPROF_LIBRARY"
                )
            }
            LaunchError::Spawn { program, reason } => {
                write!(f, "cannot run {program}: {reason}")
            }
        }
    }
}

impl std::error::Error for LaunchError {}

/// Run `program` with `args` under libmprof, wait for it, and write to
/// `messages` where the profiles went and how to read them.
pub fn run(
    options: &Options,
    program: &OsStr,
    args: &[OsString],
    messages: &mut dyn Write,
) -> Result<Outcome, LaunchError> {
    let library = find_library(options)?;
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    let out = with_pid(
        options
            .out
            .as_deref()
            .unwrap_or(&format!("mprof.{name}.out")),
    );
    let mut cmd = Command::new(program);
    cmd.args(args);
    for (k, v) in &options.settings {
        cmd.env(k, v);
    }
    cmd.env("MPROF_OUT", &out)
        .env(
            "MPROF_CHILDREN",
            if options.follow_children {
                "follow"
            } else {
                "ignore"
            },
        )
        .env(
            "LD_PRELOAD",
            preload_value(&library, std::env::var_os("LD_PRELOAD")),
        );
    let before = existing_matches(&out);
    let status = {
        let ignoring = IgnoreInterrupts::new();
        let saved = ignoring.old;
        // SAFETY: the closure only calls signal(), which is async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            // The program gets the launcher's own dispositions back, not SIG_IGN.
            cmd.pre_exec(move || {
                for (s, old) in INTERRUPTS.iter().zip(saved) {
                    libc::signal(*s, old);
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| LaunchError::Spawn {
            program: program.to_string_lossy().into_owned(),
            reason: e.to_string(),
        })?;
        let pid = child.id();
        let status = child.wait().map_err(|e| LaunchError::Spawn {
            program: program.to_string_lossy().into_owned(),
            reason: e.to_string(),
        })?;
        (status, pid)
    };
    let (status, pid) = status;
    let own = PathBuf::from(out.replace("%p", &pid.to_string()));
    let mut profiles: Vec<PathBuf> = Vec::new();
    if own.exists() {
        profiles.push(own.clone());
    }
    let mut others: Vec<PathBuf> = existing_matches(&out)
        .into_iter()
        .filter(|p| *p != own && !before.contains(p))
        .collect();
    others.sort();
    profiles.extend(others);
    let _ = report(messages, &profiles, &own, status);
    Ok(Outcome { status, profiles })
}

fn report(
    messages: &mut dyn Write,
    profiles: &[PathBuf],
    own: &Path,
    status: ExitStatus,
) -> std::io::Result<()> {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        writeln!(messages, "mprof: the program was ended by signal {sig}")?;
    }
    match profiles.first() {
        None => writeln!(
            messages,
            "mprof: no profile was written (expected {}): the program may not be dynamically linked, or was killed with SIGKILL",
            own.display()
        ),
        Some(first) => {
            writeln!(messages, "mprof: profile written to {}", first.display())?;
            if profiles.len() > 1 {
                writeln!(
                    messages,
                    "mprof: {} more from the processes it started: {}",
                    profiles.len() - 1,
                    profiles[1..]
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                )?;
            }
            writeln!(
                messages,
                "mprof: read it with: mprof report {}",
                first.display()
            )
        }
    }
}

/// `path` with `%p` in it: before the extension when it has none.
fn with_pid(path: &str) -> String {
    if path.contains("%p") {
        return path.to_string();
    }
    let p = Path::new(path);
    match (p.file_stem(), p.extension()) {
        (Some(stem), Some(ext)) if !stem.is_empty() => {
            let file = format!("{}.%p.{}", stem.to_string_lossy(), ext.to_string_lossy());
            p.with_file_name(file).to_string_lossy().into_owned()
        }
        _ => format!("{path}.%p"),
    }
}

/// The files that match the `%p` pattern `out` (pid = digits).
fn existing_matches(out: &str) -> Vec<PathBuf> {
    let pattern = Path::new(out);
    let dir = match pattern.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Some(file) = pattern
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
    else {
        return Vec::new();
    };
    let Some((prefix, suffix)) = file.split_once("%p") else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
            (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| dir.join(&name))
        })
        .map(|p| p.strip_prefix("./").map(Path::to_path_buf).unwrap_or(p))
        .collect()
}

fn find_library(options: &Options) -> Result<PathBuf, LaunchError> {
    let mut tried = Vec::new();
    let explicit = options
        .library
        .clone()
        .or_else(|| std::env::var_os("MPROF_LIBRARY").map(PathBuf::from));
    if let Some(p) = explicit {
        if p.is_file() {
            return Ok(absolute(&p));
        }
        return Err(LaunchError::LibraryNotFound(vec![p]));
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        // target/<profile>/mprof, or target/<profile>/deps/<test> when run from tests.
        for candidate in [
            dir.join("libmprof.so"),
            dir.join("../libmprof.so"),
            dir.join("../lib/libmprof.so"),
        ] {
            if candidate.is_file() {
                return Ok(absolute(&candidate));
            }
            tried.push(candidate);
        }
    }
    Err(LaunchError::LibraryNotFound(tried))
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `LD_PRELOAD` with the library first, keeping what was there.
fn preload_value(library: &Path, existing: Option<OsString>) -> OsString {
    let mut v = library.as_os_str().to_os_string();
    if let Some(e) = existing.filter(|e| !e.is_empty()) {
        v.push(":");
        v.push(e);
    }
    v
}

/// SIGINT and SIGQUIT ignored in the launcher while it waits (restored on drop).
struct IgnoreInterrupts {
    old: [libc::sighandler_t; 2],
}

const INTERRUPTS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGQUIT];

impl IgnoreInterrupts {
    fn new() -> Self {
        // SAFETY: setting a signal disposition; the child restores the saved
        // ones before exec (ignored signals would stay ignored across exec).
        let old = INTERRUPTS.map(|s| unsafe { libc::signal(s, libc::SIG_IGN) });
        IgnoreInterrupts { old }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        for (s, old) in INTERRUPTS.iter().zip(self.old) {
            // SAFETY: restoring the disposition saved in `new`.
            unsafe { libc::signal(*s, old) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_always_carry_the_pid() {
        assert_eq!(with_pid("mprof.prog.out"), "mprof.prog.%p.out");
        assert_eq!(with_pid("/tmp/x/run.mprof"), "/tmp/x/run.%p.mprof");
        assert_eq!(with_pid("profile"), "profile.%p");
        assert_eq!(with_pid("a.%p.b"), "a.%p.b");
    }

    #[test]
    fn the_library_goes_first_in_ld_preload() {
        let lib = Path::new("/x/libmprof.so");
        assert_eq!(preload_value(lib, None), OsString::from("/x/libmprof.so"));
        assert_eq!(
            preload_value(lib, Some("liby.so".into())),
            OsString::from("/x/libmprof.so:liby.so")
        );
    }

    #[test]
    fn only_files_of_the_pattern_are_found() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["p.12.out", "p.7.out", "p.x.out", "p..out", "q.3.out"] {
            std::fs::write(dir.path().join(f), b"").unwrap();
        }
        let pattern = dir.path().join("p.%p.out");
        let mut found = existing_matches(pattern.to_str().unwrap());
        found.sort();
        assert_eq!(
            found,
            [dir.path().join("p.12.out"), dir.path().join("p.7.out")]
        );
    }

    #[test]
    fn a_missing_library_says_how_to_get_one() {
        let options = Options {
            library: Some("/nonexistent/libmprof.so".into()),
            ..Options::default()
        };
        let e = run(&options, OsStr::new("true"), &[], &mut Vec::new()).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("/nonexistent/libmprof.so"), "{text}");
        assert!(
            text.contains("cargo build --release -p mprof-ffi"),
            "{text}"
        );
    }
}
