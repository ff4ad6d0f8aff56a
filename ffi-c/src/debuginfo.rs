//! Finding a module's separate debug file, as gdb does: distributions strip
//! DWARF and the full symbol table out of their binaries into packages such
//! as Debian's `libc6-dbg`, found by build id
//! (`/usr/lib/debug/.build-id/xx/yyyy.debug`) or by the `.gnu_debuglink` name
//! (beside the module, in its `.debug/` folder, or under `/usr/lib/debug`
//! with the module's directory). A debug file made with dwz names a shared
//! supplementary file in `.gnu_debugaltlink`.
//!
//! Only read when a profile is written; every failure just means "no
//! separate debug file", and the module's own symbols are used.

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

/// The debug files for the module at `path`, or None when it has no DWARF anywhere.
pub fn find(path: &Path) -> Option<DebugFiles> {
    find_under(path, Path::new("/usr/lib/debug"))
}

/// As [`find`], with the global debug directory given (tests use their own).
pub fn find_under(path: &Path, global: &Path) -> Option<DebugFiles> {
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    if has_dwarf(&file) {
        return Some(DebugFiles {
            dwarf: path.to_path_buf(),
            sup: sup_of(path, &file, global),
        });
    }
    let mut candidates = Vec::new();
    if let Ok(Some(id)) = file.build_id()
        && id.len() >= 2
    {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        candidates.push(
            global
                .join(".build-id")
                .join(&hex[..2])
                .join(format!("{}.debug", &hex[2..])),
        );
    }
    if let Ok(Some((name, _crc))) = file.gnu_debuglink()
        && let Ok(name) = std::str::from_utf8(name)
    {
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
        let data = std::fs::read(&c).ok()?;
        let debug = object::File::parse(&*data).ok()?;
        if !has_dwarf(&debug) {
            return None;
        }
        // A build-id mismatch means a debug file for another build of the module.
        if let (Ok(Some(a)), Ok(Some(b))) = (file.build_id(), debug.build_id())
            && a != b
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
    let direct = if name.is_absolute() {
        name.to_path_buf()
    } else {
        path.parent().unwrap_or(Path::new("/")).join(name)
    };
    if direct.exists() {
        return Some(direct);
    }
    if id.len() < 2 {
        return None;
    }
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let by_id = global
        .join(".build-id")
        .join(&hex[..2])
        .join(format!("{}.debug", &hex[2..]));
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
            let found = find_under(&so, &dir.path().join("global")).expect("debug file");
            assert_eq!(found.dwarf, debug, "by build id: {by_build_id}");
            assert_eq!(found.sup, None);
        }
    }

    #[test]
    fn a_module_with_its_own_dwarf_is_its_own_debug_file() {
        let exe = std::env::current_exe().unwrap();
        let found = find(&exe).expect("the test binary has DWARF");
        assert_eq!(found.dwarf, exe);
    }

    #[test]
    fn no_dwarf_anywhere_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("not-elf");
        std::fs::write(&f, b"hello").unwrap();
        assert_eq!(find(&f), None);
    }
}
