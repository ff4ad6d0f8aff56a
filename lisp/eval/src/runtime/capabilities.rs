//! What a host lets a Lisp program reach outside the interpreter: the file
//! system (none, read-only under given roots, or all of it), the process
//! environment, process spawning and sockets. Builtins that touch the world
//! ask here first; a refusal is a `MPROF-EXT:CAPABILITY-DENIED` error naming
//! the capability, so a program learns what it was denied and why.
//!
//! Invariants:
//! - every builtin that opens, creates, deletes, renames, lists or inspects a
//!   file calls [`Capabilities::check_file`] with the path it is about to use,
//!   `getenv` calls [`Capabilities::check`] for [`Capability::Environment`] and
//!   `run-program` for [`Capability::Processes`];
//! - a path is judged after resolving symbolic links and `..` (the longest
//!   existing ancestor is canonicalized), so `root/../etc/passwd` or a link
//!   out of a root is outside the root.
//!
//! Tests: `tests/sandbox.rs` (hostile programs against a sandboxed interpreter).

use std::path::{Component, Path, PathBuf};

/// How much of the file system a program may use.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum FileAccess {
    /// No file may be opened, created, deleted, listed or inspected.
    None,
    /// Files under these directories may be read, listed and inspected; nothing
    /// may be written, created, renamed or deleted anywhere.
    ReadOnly(Vec<PathBuf>),
    /// The whole file system, as the process may use it (the default).
    #[default]
    Full,
}

/// One thing a program may be granted or denied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// Reading files, listing directories, inspecting files (`probe-file`).
    FileRead,
    /// Writing, creating, renaming and deleting files and directories.
    FileWrite,
    /// Reading environment variables (`posix-getenv`).
    Environment,
    /// Starting other programs (`run-program`).
    Processes,
    /// Opening network connections (no builtin opens one today; reserved so a
    /// host's grant means the same when one does).
    Sockets,
}

impl Capability {
    /// The name a denial shows, as the keyword a host documentation uses.
    pub fn name(self) -> &'static str {
        match self {
            Capability::FileRead => ":file-read",
            Capability::FileWrite => ":file-write",
            Capability::Environment => ":environment",
            Capability::Processes => ":processes",
            Capability::Sockets => ":sockets",
        }
    }
}

/// The capabilities a host grants. The default grants everything (a trusted
/// program, as the command line runs); [`Capabilities::none`] grants nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// The file system.
    pub files: FileAccess,
    /// Environment variables.
    pub environment: bool,
    /// Spawning processes.
    pub processes: bool,
    /// Network sockets.
    pub sockets: bool,
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities { files: FileAccess::Full, environment: true, processes: true, sockets: true }
    }
}

impl Capabilities {
    /// Nothing outside the interpreter: no files, environment, processes or sockets.
    pub fn none() -> Self {
        Capabilities { files: FileAccess::None, environment: false, processes: false, sockets: false }
    }

    /// Whether a capability that is not about a particular file is granted.
    pub fn check(&self, cap: Capability) -> Result<(), String> {
        let granted = match cap {
            Capability::Environment => self.environment,
            Capability::Processes => self.processes,
            Capability::Sockets => self.sockets,
            Capability::FileRead => self.files != FileAccess::None,
            Capability::FileWrite => self.files == FileAccess::Full,
        };
        if granted { Ok(()) } else { Err(denial(cap, None)) }
    }

    /// Whether `path` may be used for `cap` (FileRead or FileWrite).
    pub fn check_file(&self, cap: Capability, path: &str) -> Result<(), String> {
        match (&self.files, cap) {
            (FileAccess::Full, _) => Ok(()),
            (FileAccess::ReadOnly(roots), Capability::FileRead) => {
                let resolved = resolve(Path::new(path));
                let inside = resolved
                    .as_ref()
                    .is_some_and(|p| roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()).any(|r| p.starts_with(&r)));
                if inside { Ok(()) } else { Err(denial(cap, Some(path))) }
            }
            _ => Err(denial(cap, Some(path))),
        }
    }
}

fn denial(cap: Capability, path: Option<&str>) -> String {
    let what = match cap {
        Capability::FileRead => "read files",
        Capability::FileWrite => "write files",
        Capability::Environment => "read the environment",
        Capability::Processes => "start processes",
        Capability::Sockets => "open sockets",
    };
    match path {
        Some(p) => format!("The sandbox does not let this program {what} (capability {}): {p:?}.", cap.name()),
        None => format!("The sandbox does not let this program {what} (capability {}).", cap.name()),
    }
}

/// `path` made absolute with `..` and links resolved: the longest existing
/// ancestor canonicalized, the rest appended. None when the rest climbs
/// (`..`) out of what exists, which cannot be judged without following it.
fn resolve(path: &Path) -> Option<PathBuf> {
    let absolute = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().ok()?.join(path) };
    let mut existing = absolute.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(base) = std::fs::canonicalize(existing) {
            let mut out = base;
            for c in rest.iter().rev() {
                out.push(c);
            }
            return Some(out);
        }
        let parent = existing.parent()?;
        match existing.components().next_back()? {
            Component::Normal(name) => rest.push(name),
            Component::CurDir => {}
            _ => return None,
        }
        existing = parent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_roots_admit_reads_inside_and_refuse_escapes() {
        let root = std::env::temp_dir().join(format!("mprof-caps-{}", std::process::id()));
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let caps = Capabilities { files: FileAccess::ReadOnly(vec![root.clone()]), ..Capabilities::none() };
        let inside = root.join("sub/new-file.txt");
        assert!(caps.check_file(Capability::FileRead, inside.to_str().unwrap()).is_ok());
        let escape = root.join("sub/../../etc/passwd");
        let err = caps.check_file(Capability::FileRead, escape.to_str().unwrap()).unwrap_err();
        assert!(err.contains(":file-read"), "{err}");
        let write = caps.check_file(Capability::FileWrite, inside.to_str().unwrap()).unwrap_err();
        assert!(write.contains(":file-write"), "{write}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn none_refuses_everything_and_default_grants_everything() {
        let none = Capabilities::none();
        for cap in [Capability::Environment, Capability::Processes, Capability::Sockets, Capability::FileRead] {
            assert!(none.check(cap).unwrap_err().contains(cap.name()));
            assert!(Capabilities::default().check(cap).is_ok());
        }
        assert!(none.check_file(Capability::FileRead, "/etc/passwd").is_err());
    }
}
