//! Writing an output file so that it is complete or absent, never half-written.
//!
//! The bytes go to a temporary file beside the target (same directory, so the rename
//! stays on one file system), which is then renamed over it: a reader, or a process
//! killed mid-write, sees the old file or the whole new one. A write that fails removes
//! its temporary file. `check_writable` lets a command line refuse an output path
//! before a long run rather than after it. A writer whose process may die mid-write
//! (libmprof, killed by a signal while its helper thread writes) learns the temporary
//! file's name (`save_file_noting`), so that it can remove it on the way out.
//!
//! Only regular files are replaced that way. A path naming something else — a device
//! such as `/dev/null` or `/dev/stdout`, a pipe — is opened and written in place: a
//! rename would put a regular file where the device was (it did, once: `--report
//! /dev/null` replaced the machine's /dev/null). A symbolic link is followed, so the
//! file it points to is replaced and the link stays.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name a save of `path` writes first.
fn temporary_for(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Where a save of `path` goes: `Some(file)` to replace a regular (or not yet existing)
/// file through a rename, `None` to write in place (devices, pipes, sockets).
fn replaced_file(path: &Path) -> Option<PathBuf> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Some(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())),
        Ok(_) => None,
        Err(_) => Some(path.to_path_buf()),
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn save_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    save_file_noting(path, bytes, &mut |_| {})
}

/// As [`save_file`], telling `note` the temporary file's name before it is created, and
/// `None` once it is renamed or removed (never called for a device written in place).
pub fn save_file_noting(path: &Path, bytes: &[u8], note: &mut dyn FnMut(Option<&Path>)) -> std::io::Result<()> {
    let Some(path) = replaced_file(path) else {
        return std::fs::OpenOptions::new().write(true).open(path).and_then(|mut f| f.write_all(bytes));
    };
    let path = path.as_path();
    let tmp = temporary_for(path);
    note(Some(&tmp));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|_| f.flush()))
        .and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    note(None);
    result
}

/// Writes `path` through a temporary file and a rename, the bytes produced by `write`
/// as it goes (for outputs too large to build in memory first).
pub fn save_streaming(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let Some(path) = replaced_file(path) else {
        let mut w = std::io::BufWriter::new(std::fs::OpenOptions::new().write(true).open(path)?);
        write(&mut w)?;
        return w.flush();
    };
    let path = path.as_path();
    let tmp = temporary_for(path);
    let result = std::fs::File::create(&tmp).and_then(|f| {
        let mut w = std::io::BufWriter::new(f);
        write(&mut w)?;
        w.flush()
    });
    let result = result.and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Whether a file can be written at `path` (its directory exists and takes a new
/// file), checked by creating and removing the temporary file a save would use.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!("{} is a directory", path.display()));
    }
    let Some(file) = replaced_file(path) else {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map(drop)
            .map_err(|e| format!("cannot write {}: {e}", path.display()));
    };
    let tmp = temporary_for(&file);
    match std::fs::File::create(&tmp) {
        Ok(_) => {
            let _ = std::fs::remove_file(&tmp);
            Ok(())
        }
        Err(e) => {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Err(format!("cannot write {} (in {}): {e}", path.display(), dir.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_replaces_the_file_whole_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("mprof-save-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.mprof");
        save_file(&path, b"first").unwrap();
        save_file(&path, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(check_writable(&path).is_ok());
        save_streaming(&path, |w| w.write_all(b"streamed")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"streamed");
        let mut noted = Vec::new();
        save_file_noting(&path, b"noted", &mut |t| noted.push(t.map(Path::to_path_buf))).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"noted");
        assert!(matches!(&noted[..], [Some(t), None] if t.to_string_lossy().ends_with(".tmp") && !t.exists()), "{noted:?}");
        save_streaming(&path, |w| w.write_all(b"streamed")).unwrap();
        let failed = save_streaming(&path, |_| Err(std::io::Error::other("stop")));
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"streamed", "a failed save leaves the old file");
        let missing = dir.join("no/such/dir/out.mprof");
        assert!(save_file(&missing, b"x").is_err());
        let err = check_writable(&missing).unwrap_err();
        assert!(err.contains("no/such/dir"), "{err}");
        assert!(check_writable(&dir).unwrap_err().contains("is a directory"));
        // A link is followed: the file it points to is replaced, the link stays.
        let link = dir.join("link.mprof");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        save_file(&link, b"through the link").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"through the link");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_is_written_in_place_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        assert!(check_writable(null).is_ok());
        save_file(null, b"discarded").unwrap();
        save_streaming(null, |w| w.write_all(b"discarded")).unwrap();
        assert!(std::fs::metadata(null).unwrap().file_type().is_char_device(), "/dev/null is still the device");
        let litter: Vec<_> = std::fs::read_dir("/dev")
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(litter.is_empty(), "no temporary file in /dev: {litter:?}");
    }
}
