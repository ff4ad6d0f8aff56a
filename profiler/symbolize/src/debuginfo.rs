//! Finding a module's separate debug file, as gdb does: distributions strip
//! DWARF and the full symbol table out of their binaries into packages such
//! as Debian's `libc6-dbg`, found by build id
//! (`/usr/lib/debug/.build-id/xx/yyyy.debug`) or by the `.gnu_debuglink` name
//! (beside the module, in its `.debug/` folder, or under `/usr/lib/debug`
//! with the module's directory). A debug file made with dwz names a shared
//! supplementary file in `.gnu_debugaltlink`.
//!
//! The build id and debug link come from the profile's module table, recorded
//! by the profiled process, so a module that changed or vanished since the run
//! still finds the debug file of the build that ran. Files are mapped, never
//! read whole; every failure just means "no separate debug file".

use object::{Object, ObjectSection};
use std::path::{Path, PathBuf};

/// Where a module's debug information lives.
#[derive(Debug, PartialEq, Eq)]
pub struct DebugFiles {
    /// The file with the DWARF (the module itself when it was not stripped).
    pub dwarf: PathBuf,
    /// dwz's supplementary file, if the debug file names one that exists.
    pub sup: Option<PathBuf>,
}

/// The file mapped read-only, or None when it cannot be opened.
pub fn map(path: &Path) -> Option<memmap2::Mmap> {
    // Only regular files: a profile may name anything (opening a FIFO would block).
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: a read-only private mapping; a file truncated meanwhile can fault,
    // which the tools accept as addr2line's own loader does.
    unsafe { memmap2::Mmap::map(&file) }.ok()
}

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// The debug files of the module at `path` (by its own build id and debug link), or
/// None when it has no DWARF anywhere.
#[cfg(test)]
pub fn find(path: &Path, global: &Path) -> Option<DebugFiles> {
    let data = map(path)?;
    let file = object::File::parse(&*data).ok()?;
    let id = file.build_id().ok().flatten().unwrap_or_default().to_vec();
    let link = file.gnu_debuglink().ok().flatten().and_then(|(n, _)| std::str::from_utf8(n).ok()).map(String::from);
    find_for(path, Some(&file), &id, link.as_deref(), global)
}

/// The debug files of a module recorded as `path` with build id `build_id` and debug
/// link `debug_link`; `file` is the module itself when it is still there and the same
/// build (then its own DWARF, if any, comes first).
pub fn find_for(
    path: &Path,
    file: Option<&object::File<'_>>,
    build_id: &[u8],
    debug_link: Option<&str>,
    global: &Path,
) -> Option<DebugFiles> {
    if let Some(f) = file
        && has_dwarf(f)
    {
        return Some(DebugFiles { dwarf: path.to_path_buf(), sup: sup_of(path, f, global) });
    }
    let mut candidates = Vec::new();
    if build_id.len() >= 2 {
        let hex = hex(build_id);
        candidates.push(global.join(".build-id").join(&hex[..2]).join(format!("{}.debug", &hex[2..])));
    }
    if let Some(name) = debug_link {
        let dir = path.parent().unwrap_or(Path::new("/"));
        candidates.push(dir.join(name));
        candidates.push(dir.join(".debug").join(name));
        let relative = dir.strip_prefix("/").unwrap_or(dir);
        candidates.push(global.join(relative).join(name));
    }
    candidates.into_iter().find_map(|c| {
        if c == path {
            return None;
        }
        let data = map(&c)?;
        let debug = object::File::parse(&*data).ok()?;
        if !has_dwarf(&debug) {
            return None;
        }
        // A build-id mismatch means a debug file for another build of the module.
        if let Ok(Some(b)) = debug.build_id()
            && !build_id.is_empty()
            && build_id != b
        {
            return None;
        }
        let sup = sup_of(&c, &debug, global);
        Some(DebugFiles { dwarf: c, sup })
    })
}

fn has_dwarf(file: &object::File<'_>) -> bool {
    file.section_by_name(".debug_info")
        .is_some_and(|s| s.size() > 0 && s.kind() != object::SectionKind::UninitializedData)
}

/// dwz's `.gnu_debugaltlink`: an absolute path, or one relative to the debug
/// file's directory; else found by its build id.
fn sup_of(path: &Path, file: &object::File<'_>, global: &Path) -> Option<PathBuf> {
    let (name, id) = file.gnu_debugaltlink().ok()??;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let direct = if name.is_absolute() { name.to_path_buf() } else { path.parent().unwrap_or(Path::new("/")).join(name) };
    if direct.exists() {
        return Some(direct);
    }
    if id.len() < 2 {
        return None;
    }
    let hex = hex(id);
    let by_id = global.join(".build-id").join(&hex[..2]).join(format!("{}.debug", &hex[2..]));
    by_id.exists().then_some(by_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Build a tiny shared object with DWARF, strip it with objcopy into a
    /// debug file placed as `layout` says, and check `find` gets there.
    fn stripped_module(dir: &Path, by_build_id: bool) -> Option<(PathBuf, PathBuf)> {
        let src = dir.join("m.c");
        std::fs::write(&src, "int twice(int x) { return 2 * x; }\n").unwrap();
        let so = dir.join("libm_test.so");
        let ok = Command::new("gcc")
            .args(["-shared", "-fPIC", "-g", "-Wl,--build-id", "-o"])
            .arg(&so)
            .arg(&src)
            .status()
            .ok()?
            .success();
        if !ok {
            return None;
        }
        let global = dir.join("global");
        let id = {
            let data = std::fs::read(&so).unwrap();
            let f = object::File::parse(&*data).unwrap();
            f.build_id().unwrap().unwrap().to_vec()
        };
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let debug = if by_build_id {
            let d = global.join(".build-id").join(&hex[..2]);
            std::fs::create_dir_all(&d).unwrap();
            d.join(format!("{}.debug", &hex[2..]))
        } else {
            std::fs::create_dir_all(dir.join(".debug")).unwrap();
            dir.join(".debug").join("libm_test.so.debug")
        };
        let run = |args: &[&std::ffi::OsStr]| {
            Command::new("objcopy")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        let ok = run(&[
            "--only-keep-debug".as_ref(),
            so.as_os_str(),
            debug.as_os_str(),
        ]) && run(&["--strip-debug".as_ref(), so.as_os_str()])
            && (by_build_id
                || run(&[
                    format!("--add-gnu-debuglink={}", debug.display()).as_ref(),
                    so.as_os_str(),
                ]));
        ok.then_some((so, debug))
    }

    #[test]
    fn a_stripped_module_finds_its_debug_file_by_build_id_and_by_debuglink() {
        for by_build_id in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let Some((so, debug)) = stripped_module(dir.path(), by_build_id) else {
                eprintln!("gcc or objcopy missing: skipped");
                return;
            };
            let found = find(&so, &dir.path().join("global")).expect("debug file");
            assert_eq!(found.dwarf, debug, "by build id: {by_build_id}");
            assert_eq!(found.sup, None);
            // The module gone (or rebuilt): its recorded build id still finds the file.
            let id = {
                let data = std::fs::read(&so).unwrap();
                object::File::parse(&*data).unwrap().build_id().unwrap().unwrap().to_vec()
            };
            std::fs::remove_file(&so).unwrap();
            let link = (!by_build_id).then_some("libm_test.so.debug");
            let found = find_for(&so, None, &id, link, &dir.path().join("global")).expect("by the recorded build id");
            assert_eq!(found.dwarf, debug);
        }
    }

    #[test]
    fn a_module_with_its_own_dwarf_is_its_own_debug_file() {
        let exe = std::env::current_exe().unwrap();
        let found = find(&exe, Path::new("/usr/lib/debug")).expect("the test binary has DWARF");
        assert_eq!(found.dwarf, exe);
    }

    #[test]
    fn no_dwarf_anywhere_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("not-elf");
        std::fs::write(&f, b"hello").unwrap();
        assert_eq!(find(&f, Path::new("/usr/lib/debug")), None);
    }
}
