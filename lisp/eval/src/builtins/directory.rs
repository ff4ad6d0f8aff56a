//! Builtins: the file system. `SYS::%DIRECTORY`, the existing files and
//! directories a (possibly wild) native namestring names, as SBCL finds
//! them; and the single-file operations under the prelude's pathname
//! functions (`prelude/pathnames.lisp`): `%PROBE-FILE`, `%DELETE-FILE`,
//! `%RENAME-FILE`, `%FILE-AUTHOR`, `%FILE-KIND` and `%CWD`. They take native
//! namestrings or pathnames (through `file_name_arg`) and return native
//! namestrings; the prelude makes pathnames of them.
//!
//! A pattern is `dir/.../name.type`. Each directory component may be `**`
//! (any number of levels), or contain `*` (any characters) and `?` (one
//! character); the file part matches a file's name and type separately (the
//! type is after the last dot that does not start the name), where a missing
//! type matches only files without one, except that a type `*` matches every
//! file. Directories match a file part as names without a type, and come back
//! as `dir/`. An empty file part names the directories themselves. Results are
//! truenames (canonical absolute paths), sorted, without duplicates.
//!
//! Invariants: the walk keeps its directories on an explicit stack, never
//! follows a symbolic link into a directory for `**` (so links cannot make it
//! loop), and skips directories it cannot read. A failing operation on one
//! file is a `file-error` naming it. Tested by
//! `lisp-tests/streams/directory.lisp`, `lisp-tests/pathnames/` and the tests
//! below.

use std::path::{Path, PathBuf};

use mprof_heap::{Value, alloc};

use crate::runtime::builtin::{BuiltinDef, sys};
use crate::runtime::capabilities::{Capability, FileAccess};
use crate::runtime::ctx::{Ctx, file_error, file_name_arg};
use crate::runtime::raise::{LResult, Raise};

type A<'a, 'gc> = &'a [Value<'gc>];

/// Whether `text` matches `pattern`, where `*` is any run of characters and `?`
/// one character (the usual two-pointer matcher: linear space, no recursion).
fn wild_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn is_wild(component: &str) -> bool {
    component.contains(['*', '?'])
}

/// A file name's name and type: the type follows the last dot, unless that dot
/// starts the name (`.hidden` has no type).
fn name_and_type(file: &str) -> (&str, Option<&str>) {
    match file.rfind('.') {
        Some(i) if i > 0 => (&file[..i], Some(&file[i + 1..])),
        _ => (file, None),
    }
}

/// Whether an entry named `file` matches the file part `pattern`.
fn file_matches(pattern: &str, file: &str, is_dir: bool) -> bool {
    let (pname, ptype) = name_and_type(pattern);
    let (name, ftype) = if is_dir { (file, None) } else { name_and_type(file) };
    if !wild_match(pname, name) {
        return false;
    }
    match (ptype, ftype) {
        (None, None) => true,
        (None, Some(_)) => false,
        (Some("*"), _) => true,
        (Some(_), None) => false,
        (Some(p), Some(t)) => wild_match(p, t),
    }
}

/// The entries of a directory as (name, whether it is a directory, whether it is
/// a symbolic link); an unreadable directory has none.
fn entries(dir: &Path) -> Vec<(String, bool, bool)> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    read.flatten()
        .map(|e| {
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            (e.file_name().to_string_lossy().into_owned(), e.path().is_dir(), link)
        })
        .collect()
}

/// The directories the directory components name, from `start`.
fn expand_directories(start: PathBuf, components: &[&str]) -> Vec<PathBuf> {
    let mut dirs = vec![start];
    for component in components {
        let mut next = Vec::new();
        for dir in &dirs {
            match *component {
                "" | "." => next.push(dir.clone()),
                ".." => next.push(dir.join("..")),
                "**" => {
                    // The directory and every directory below it, without following links.
                    let mut stack = vec![dir.clone()];
                    while let Some(d) = stack.pop() {
                        for (name, is_dir, link) in entries(&d) {
                            if is_dir && !link {
                                stack.push(d.join(name));
                            }
                        }
                        next.push(d);
                    }
                }
                c if is_wild(c) => {
                    for (name, is_dir, _) in entries(dir) {
                        if is_dir && wild_match(c, &name) {
                            next.push(dir.join(name));
                        }
                    }
                }
                c => {
                    let d = dir.join(c);
                    if d.is_dir() {
                        next.push(d);
                    }
                }
            }
        }
        dirs = next;
    }
    dirs
}

/// The truenames `pattern` names, sorted.
fn directory_names(pattern: &str) -> Vec<String> {
    let (dir_part, file_part) = match pattern.rfind('/') {
        Some(i) => (&pattern[..=i], &pattern[i + 1..]),
        None => ("", pattern),
    };
    let start = if dir_part.starts_with('/') {
        PathBuf::from("/")
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
    };
    let components: Vec<&str> = dir_part.split('/').filter(|c| !c.is_empty()).collect();
    let dirs = expand_directories(start, &components);
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if file_part.is_empty() {
            found.push(dir);
        } else if !is_wild(file_part) {
            found.push(dir.join(file_part));
        } else {
            for (name, is_dir, _) in entries(&dir) {
                if file_matches(file_part, &name, is_dir) {
                    found.push(dir.join(name));
                }
            }
        }
    }
    let mut names: Vec<String> = found
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .map(|p| {
            let mut name = p.to_string_lossy().into_owned();
            if p.is_dir() && !name.ends_with('/') {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// (sys::%directory pattern): the truenames of the existing files PATTERN
/// names, as native namestrings.
fn directory<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let pattern = file_name_arg(ctx, a[0])?;
    ctx.require(Capability::FileRead)?;
    let mut names = directory_names(&pattern);
    // Read-only roots: only what lies under them is listed (a wild pattern may
    // reach anywhere, and each result is judged after resolving links).
    if matches!(ctx.host.options.capabilities.files, FileAccess::ReadOnly(_)) {
        names.retain(|n| ctx.host.options.capabilities.check_file(Capability::FileRead, n).is_ok());
    }
    let names: Vec<Value<'gc>> = names.iter().map(|n| alloc::string(ctx.mc, n)).collect();
    Ok(alloc::list(ctx.mc, &names))
}

/// A canonical path as a namestring: a directory's ends with `/`.
fn path_text(p: &Path) -> String {
    let mut name = p.to_string_lossy().into_owned();
    if p.is_dir() && !name.ends_with('/') {
        name.push('/');
    }
    name
}

/// (sys::%probe-file name) => the file's truename as a native namestring, or NIL.
fn probe_file<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    ctx.require_file(Capability::FileRead, &path)?;
    if path.is_empty() {
        return Ok(Value::Nil);
    }
    match std::fs::canonicalize(&path) {
        Ok(p) => Ok(alloc::string(ctx.mc, &path_text(&p))),
        Err(_) => Ok(Value::Nil),
    }
}

/// (sys::%delete-file name) => T; a file-error when the file cannot be deleted
/// (a directory is not a file).
fn delete_file<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    ctx.require_file(Capability::FileWrite, &path)?;
    let shown = path.strip_suffix('/').filter(|p| !p.is_empty()).unwrap_or(&path);
    let result = if Path::new(&path).is_dir() {
        Err(std::io::Error::other("Is a directory"))
    } else {
        std::fs::remove_file(&path)
    };
    result.map_err(|e| file_error(ctx, a[0], format!("Could not delete the file {shown:?}: {}", io_reason(&e))))?;
    Ok(ctx.t())
}

/// (sys::%rename-file from to) => T; a file-error naming FROM when it fails.
fn rename_file<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let from = file_name_arg(ctx, a[0])?;
    let to = file_name_arg(ctx, a[1])?;
    ctx.require_file(Capability::FileWrite, &from)?;
    ctx.require_file(Capability::FileWrite, &to)?;
    std::fs::rename(&from, &to)
        .map_err(|e| file_error(ctx, a[0], format!("Failed to rename {from} to {to}: {}", io_reason(&e))))?;
    Ok(ctx.t())
}

/// An I/O error's reason as the C library words it ("No such file or directory").
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    // Rust appends " (os error N)" to the system's message.
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The name of the user with id `uid`, from /etc/passwd (its number when unknown).
fn user_name(uid: u32) -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .find_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            let id = fields.nth(1)?;
            (id.parse::<u32>().ok() == Some(uid)).then(|| name.to_string())
        })
        .unwrap_or_else(|| uid.to_string())
}

/// (sys::%file-author name) => the owner's user name; a file-error when the
/// file does not exist.
fn file_author<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    ctx.require_file(Capability::FileRead, &path)?;
    match std::fs::metadata(&path) {
        Ok(m) => {
            #[cfg(unix)]
            let name = {
                use std::os::unix::fs::MetadataExt;
                user_name(m.uid())
            };
            #[cfg(not(unix))]
            let name = {
                let _ = m;
                return Ok(Value::Nil);
            };
            Ok(alloc::string(ctx.mc, &name))
        }
        Err(e) => Err(file_error(ctx, a[0], format!("Failed to find the AUTHOR of {path}: {}", io_reason(&e)))),
    }
}

/// (sys::%file-kind name) => :DIRECTORY, :FILE, :SPECIAL (a device, pipe or
/// socket) or NIL when nothing exists there; symbolic links are followed.
fn file_kind<'gc>(ctx: &mut Ctx<'_, 'gc>, a: A<'_, 'gc>) -> LResult<'gc> {
    let path = file_name_arg(ctx, a[0])?;
    ctx.require_file(Capability::FileRead, &path)?;
    if path.is_empty() {
        return Ok(Value::Nil);
    }
    Ok(match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => ctx.kw("DIRECTORY"),
        Ok(m) if m.is_file() => ctx.kw("FILE"),
        Ok(_) => ctx.kw("SPECIAL"),
        Err(_) => Value::Nil,
    })
}

/// (sys::%cwd) => the process's current directory, ending with `/`.
fn cwd<'gc>(ctx: &mut Ctx<'_, 'gc>, _a: A<'_, 'gc>) -> LResult<'gc> {
    ctx.require(Capability::FileRead)?;
    let dir = std::env::current_dir().map_err(|e| Raise::error(format!("cannot tell the current directory: {e}")))?;
    let mut name = dir.to_string_lossy().into_owned();
    if !name.ends_with('/') {
        name.push('/');
    }
    Ok(alloc::string(ctx.mc, &name))
}

pub const BUILTINS: &[BuiltinDef] = &[
    sys("%DIRECTORY", 1, 1, directory),
    sys("%PROBE-FILE", 1, 1, probe_file),
    sys("%DELETE-FILE", 1, 1, delete_file),
    sys("%RENAME-FILE", 2, 2, rename_file),
    sys("%FILE-AUTHOR", 1, 1, file_author),
    sys("%FILE-KIND", 1, 1, file_kind),
    sys("%CWD", 0, 0, cwd),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_runs_and_single_characters() {
        for (p, t, want) in [
            ("*", "", true),
            ("*.lisp", "a.lisp", true),
            ("a*b*c", "aXXbYc", true),
            ("a*b*c", "aXXbY", false),
            ("?", "ab", false),
            ("??", "ab", true),
            ("*x", "xxxxxy", false),
            ("lisp", "lisp", true),
        ] {
            assert_eq!(wild_match(p, t), want, "{p} ~ {t}");
        }
    }

    #[test]
    fn a_missing_type_matches_only_files_without_one_unless_the_type_is_wild() {
        assert!(file_matches("*", "noext", false));
        assert!(file_matches("*", ".hidden", false));
        assert!(!file_matches("*", "a.lisp", false));
        assert!(file_matches("*", "sub", true));
        assert!(file_matches("*.*", "a.lisp", false));
        assert!(file_matches("*.*", "noext", false));
        assert!(!file_matches("*.lisp", "sub", true));
        assert!(file_matches("a*.*", "a.lisp", false));
    }
}
