//! The loaded modules, as a profile records them for the symbolizer that reads it
//! later (`mprof-symbolize`): path, load bias, build id, debug link, and the
//! executable segments that tell which module a return address lies in.
//!
//! Nothing here reads a whole file: the build id comes from the module's `PT_NOTE`
//! segments, already in memory; the `.gnu_debuglink` name (a section the loader does
//! not map) from a few `pread`s of the ELF and section headers. Runs when a profile is
//! written, under the reentrancy guard.

use std::ffi::CStr;
use std::os::unix::fs::FileExt;

/// One loaded module.
pub struct Loaded {
    pub path: String,
    pub bias: u64,
    /// Executable segments, as run-time [start, end).
    pub ranges: Vec<(u64, u64)>,
    pub build_id: Vec<u8>,
    pub executable: bool,
}

/// Every loaded module, the main program first (as `dl_iterate_phdr` reports them).
pub fn loaded() -> Vec<Loaded> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut libc::c_void) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our Vec.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<Loaded>)) };
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-terminated string owned by the loader.
            unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy().into_owned()
        };
        let executable = out.is_empty();
        let path = if name.is_empty() {
            if !executable {
                return 0; // the vDSO and other unnamed modules
            }
            std::fs::read_link("/proc/self/exe").map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
        } else {
            name
        };
        // SAFETY: dlpi_phdr has dlpi_phnum entries.
        let headers = unsafe { core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let bias = info.dlpi_addr;
        let mut ranges = Vec::new();
        let mut build_id = Vec::new();
        for h in headers {
            if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0 {
                let start = bias.wrapping_add(h.p_vaddr);
                ranges.push((start, start.wrapping_add(h.p_memsz)));
            } else if h.p_type == libc::PT_NOTE && build_id.is_empty() {
                // SAFETY: a loaded note segment of p_memsz bytes.
                let notes = unsafe {
                    core::slice::from_raw_parts(bias.wrapping_add(h.p_vaddr) as *const u8, h.p_memsz as usize)
                };
                build_id = gnu_build_id(notes).unwrap_or_default();
            }
        }
        out.push(Loaded { path, bias, ranges, build_id, executable });
        0
    }
    let mut out: Vec<Loaded> = Vec::new();
    // SAFETY: the callback only pushes into `out`.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut out as *mut Vec<Loaded> as *mut libc::c_void) };
    out
}

/// The `NT_GNU_BUILD_ID` note of a note segment.
fn gnu_build_id(mut notes: &[u8]) -> Option<Vec<u8>> {
    let word = |b: &[u8], at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    while notes.len() >= 12 {
        let (namesz, descsz, kind) = (word(notes, 0)?, word(notes, 4)?, word(notes, 8)?);
        let name_end = 12 + namesz.checked_add(3)? / 4 * 4;
        let desc_end = name_end.checked_add(descsz.checked_add(3)? / 4 * 4)?;
        if kind == 3 && notes.get(12..12 + namesz)? == b"GNU\0" {
            return Some(notes.get(name_end..name_end + descsz)?.to_vec());
        }
        notes = notes.get(desc_end..)?;
    }
    None
}

/// The `.gnu_debuglink` name of the ELF file at `path`, read from its section headers.
pub fn debug_link(path: &str) -> Option<String> {
    let f = std::fs::File::open(path).ok()?;
    let mut eh = [0u8; 64];
    f.read_exact_at(&mut eh, 0).ok()?;
    if &eh[..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], at: usize| u16::from_le_bytes([b[at], b[at + 1]]) as u64;
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
    let (shoff, shentsize, shnum, shstrndx) = (u64_at(&eh, 0x28), u16_at(&eh, 0x3a), u16_at(&eh, 0x3c), u16_at(&eh, 0x3e));
    if shentsize != 64 || shnum == 0 || shnum > 4096 || shstrndx >= shnum {
        return None;
    }
    let mut sh = vec![0u8; (shnum * 64) as usize];
    f.read_exact_at(&mut sh, shoff).ok()?;
    let section = |i: u64| -> (u32, u64, u64) {
        let s = &sh[(i * 64) as usize..][..64];
        (u32::from_le_bytes(s[0..4].try_into().unwrap_or([0; 4])), u64_at(s, 0x18), u64_at(s, 0x20))
    };
    let (_, stroff, strsize) = section(shstrndx);
    if strsize > 1 << 20 {
        return None;
    }
    let mut names = vec![0u8; strsize as usize];
    f.read_exact_at(&mut names, stroff).ok()?;
    for i in 0..shnum {
        let (name, offset, size) = section(i);
        let name = names.get(name as usize..)?;
        if name.starts_with(b".gnu_debuglink\0") && (5..=4096).contains(&size) {
            let mut data = vec![0u8; size as usize];
            f.read_exact_at(&mut data, offset).ok()?;
            let end = data.iter().position(|&b| b == 0)?;
            return String::from_utf8(data[..end].to_vec()).ok();
        }
    }
    None
}

/// The module holding run-time address `address`, by index into `modules`.
pub fn find(modules: &[Loaded], address: u64) -> Option<usize> {
    modules.iter().position(|m| m.ranges.iter().any(|&(s, e)| address >= s && address < e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_is_the_first_module_with_its_build_id() {
        let modules = loaded();
        assert!(modules[0].executable && !modules[0].ranges.is_empty());
        let here = this_test_binary_is_the_first_module_with_its_build_id as *const () as u64;
        assert_eq!(find(&modules, here), Some(0));
        assert!(modules.iter().skip(1).all(|m| !m.executable));
        let libc = modules.iter().find(|m| m.path.contains("libc.so")).expect("libc is loaded");
        assert_eq!(libc.build_id.len(), 20, "Debian's libc has a 20-byte build id");
        assert_eq!(debug_link(&libc.path).as_deref().map(|l| l.ends_with(".debug")), Some(true));
    }
}
