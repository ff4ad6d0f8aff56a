//! The leak gate for CI: with `MPROF_LEAK_EXITCODE=N`, a process that leaves
//! definitely lost bytes after suppressions exits with status N, as valgrind's
//! `--error-exitcode` and LeakSanitizer's `exitcode` do.
//!
//! Decided by the final dump at `exit` or `_exit`, from the leak scan's definitely
//! lost blocks per calling context. Suppressions match the function names of the ELF
//! symbol tables (the module's own and its separate debug file's `.symtab`, mapped,
//! read only for the modules on the lost paths and only when there are lost bytes):
//! the process reads no DWARF, so a pattern naming a function that exists only
//! inlined matches in `mprof report` but not here. The exit point (`runtime` for
//! `exit`, `endings` for `_exit`) then ends the process with the status, after
//! flushing stdio.

use crate::modules::{self, Loaded};
use core::sync::atomic::{AtomicI32, Ordering};
use mprof_engine::suppress;
use std::collections::HashMap;

/// The status the process must exit with, or -1.
static STATUS: AtomicI32 = AtomicI32::new(-1);

/// The status the gate asks for, if it was decided and leaks remain.
pub fn status() -> Option<i32> {
    let s = STATUS.load(Ordering::Acquire);
    (s >= 0).then_some(s)
}

/// Function symbols of one module: (start, end, name), sorted, run-time addresses.
struct Symbols(Vec<(u64, u64, String)>);

impl Symbols {
    fn of(module: &Loaded) -> Symbols {
        let mut out = Vec::new();
        let mut files = vec![std::path::PathBuf::from(&module.path)];
        if module.build_id.len() >= 2 {
            let hex: String = module.build_id.iter().map(|b| format!("{b:02x}")).collect();
            files.push(format!("/usr/lib/debug/.build-id/{}/{}.debug", &hex[..2], &hex[2..]).into());
        }
        for path in files {
            let Ok(file) = std::fs::File::open(&path) else { continue };
            let Ok(len) = file.metadata().map(|m| m.len() as usize) else { continue };
            if len == 0 {
                continue;
            }
            // SAFETY: a private read-only mapping of a file we opened, unmapped below.
            let p = unsafe {
                libc::mmap(core::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, std::os::fd::AsRawFd::as_raw_fd(&file), 0)
            };
            if p == libc::MAP_FAILED {
                continue;
            }
            // SAFETY: the mapping is len bytes long and lives until the munmap below.
            let data = unsafe { core::slice::from_raw_parts(p as *const u8, len) };
            if let Ok(f) = object::File::parse(data) {
                use object::{Object, ObjectSymbol};
                for s in f.symbols().chain(f.dynamic_symbols()) {
                    if s.kind() == object::SymbolKind::Text
                        && s.address() != 0
                        && let Ok(name) = s.name()
                    {
                        let start = s.address().wrapping_add(module.bias);
                        out.push((start, start.wrapping_add(s.size().max(1)), name.to_string()));
                    }
                }
            }
            // SAFETY: our own mapping.
            unsafe { libc::munmap(p, len) };
        }
        out.sort_unstable();
        Symbols(out)
    }

    fn name(&self, address: u64) -> Option<&str> {
        let i = self.0.partition_point(|s| s.0 <= address);
        self.0[..i].iter().rev().take(4).find(|s| address < s.1).map(|s| s.2.as_str())
    }
}

/// Decides the gate from the definitely lost (raw node, bytes) rows; `parent_of` and
/// `address_of` describe the raw tree. Prints one line when it fails the run.
pub fn decide(code: i32, lost: impl Iterator<Item = (u32, u64)>, parent_of: &[u32], address_of: &[u64]) {
    let patterns = suppress::patterns(crate::state::config().and_then(|c| c.suppress.as_deref()));
    let loaded = modules::loaded();
    let mut symbols: HashMap<usize, Symbols> = HashMap::new();
    let mut memo: HashMap<u32, bool> = HashMap::new();
    let (mut bytes, mut contexts) = (0u64, 0u64);
    for (node, size) in lost {
        if size == 0 || suppressed(node, parent_of, address_of, &patterns, &loaded, &mut symbols, &mut memo) {
            continue;
        }
        bytes = bytes.saturating_add(size);
        contexts += 1;
    }
    if bytes > 0 {
        STATUS.store(code, Ordering::Release);
        eprintln!(
            "mprof: {bytes} bytes definitely lost ({contexts} calling context{}): exit status {code} (MPROF_LEAK_EXITCODE); `mprof report` on the profile shows where",
            if contexts == 1 { "" } else { "s" }
        );
    }
}

/// Whether the path of raw node `node` holds a function matching a pattern.
fn suppressed(
    node: u32,
    parent_of: &[u32],
    address_of: &[u64],
    patterns: &[String],
    loaded: &[Loaded],
    symbols: &mut HashMap<usize, Symbols>,
    memo: &mut HashMap<u32, bool>,
) -> bool {
    let mut path = Vec::new();
    let mut n = node;
    let mut verdict = false;
    while n != 0 && (n as usize) < parent_of.len() {
        if let Some(&v) = memo.get(&n) {
            verdict = v;
            break;
        }
        path.push(n);
        n = parent_of[n as usize];
    }
    for &p in path.iter().rev() {
        if !verdict {
            let probe = address_of[p as usize].wrapping_sub(1);
            if let Some(m) = modules::find(loaded, probe) {
                let table = symbols.entry(m).or_insert_with(|| Symbols::of(&loaded[m]));
                verdict = table.name(probe).is_some_and(|name| suppress::any_matches(patterns, name));
            }
        }
        memo.insert(p, verdict);
    }
    verdict
}
