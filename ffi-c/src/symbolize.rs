//! Return addresses to functions, once per distinct address, when a profile is written.
//!
//! Modules come from `dl_iterate_phdr` (path, load bias, executable segments).
//! Each module's DWARF, from the module or its separate debug file
//! (`debuginfo`), is read with `addr2line` (function, file, line, inlined
//! frames; C++ and Rust names demangled); without DWARF the ELF symbol table
//! gives the name; without that, `module+0xoffset`. File names are kept
//! whole, as DWARF gives them (pprof and the JSON export show them; the
//! tables do not). A function's own line is
//! the line of its entry address (where a debugger breaks on it). A return
//! address is looked up at `address - 1`, inside the call instruction, so a
//! call that ends a function is not attributed to the next one.
//!
//! This runs under the reentrancy guard (its allocations go straight to
//! glibc) and never on the allocation path.

use std::collections::HashMap;
use std::ffi::CStr;

/// One (possibly inlined) function on a return address's chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub name: String,
    pub file: Option<String>,
    /// Line of the call inside this function.
    pub line: Option<u32>,
    pub module: Option<String>,
    /// Line of the function's entry (None for inlined functions).
    pub start_line: Option<u32>,
}

/// A module's symbolizers: its debug file's (if separate) and its own.
struct Loaders {
    debug: Option<addr2line::Loader>,
    own: Option<addr2line::Loader>,
    /// The file with the fullest symbol table (the debug file when there is one).
    symbols_from: String,
    /// Function symbols by name, read on the first inlined frame.
    by_name: Option<HashMap<String, u64>>,
}

impl Loaders {
    fn open(path: &str) -> Loaders {
        let own = addr2line::Loader::new(path).ok();
        let found = crate::debuginfo::find(std::path::Path::new(path))
            .filter(|d| d.dwarf != std::path::Path::new(path));
        let symbols_from = found
            .as_ref()
            .map_or(path.to_string(), |d| d.dwarf.to_string_lossy().into_owned());
        let debug =
            found.and_then(|d| addr2line::Loader::new_with_sup(&d.dwarf, d.sup.as_ref()).ok());
        Loaders {
            debug,
            own,
            symbols_from,
            by_name: None,
        }
    }

    /// The entry line of the out-of-line copy of function `name`, if the
    /// module has one: how an inlined function gets its own line.
    fn start_line_of(&mut self, name: &str) -> Option<u32> {
        use object::{Object, ObjectSymbol};
        let by_name = self.by_name.get_or_insert_with(|| {
            let mut map = HashMap::new();
            if let Ok(data) = std::fs::read(&self.symbols_from)
                && let Ok(file) = object::File::parse(&*data)
            {
                for sym in file.symbols() {
                    if sym.kind() == object::SymbolKind::Text
                        && sym.address() != 0
                        && let Ok(n) = sym.name()
                    {
                        map.entry(n.to_string()).or_insert(sym.address());
                    }
                }
            }
            map
        });
        let address = *by_name.get(name)?;
        self.each()
            .find_map(|l| l.find_location(address).ok().flatten().and_then(|l| l.line))
    }

    /// The loaders to ask, the one with the DWARF first.
    fn each(&self) -> impl Iterator<Item = &addr2line::Loader> {
        self.debug.iter().chain(self.own.iter())
    }
}

struct Module {
    path: String,
    short: String,
    bias: u64,
    ranges: Vec<(u64, u64)>,
}

/// Caches modules, their debug info and every address looked up.
pub struct Symbolizer {
    modules: Vec<Module>,
    loaders: HashMap<usize, Loaders>,
    cache: HashMap<u64, Vec<Frame>>,
}

unsafe extern "C" fn collect_module(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY: dl_iterate_phdr passes a valid info and our Vec.
    let (info, modules) = unsafe { (&*info, &mut *(data as *mut Vec<Module>)) };
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: NUL-terminated string owned by the loader.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    let path = if name.is_empty() {
        if !modules.is_empty() {
            return 0; // only the first unnamed module is the executable
        }
        std::fs::read_link("/proc/self/exe")
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        name
    };
    let mut ranges = Vec::new();
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: dlpi_phdr has dlpi_phnum entries.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 {
            let start = info.dlpi_addr.wrapping_add(ph.p_vaddr);
            ranges.push((start, start.wrapping_add(ph.p_memsz)));
        }
    }
    let short = path.rsplit('/').next().unwrap_or(&path).to_string();
    modules.push(Module {
        path,
        short,
        bias: info.dlpi_addr,
        ranges,
    });
    0
}

impl Symbolizer {
    pub fn new() -> Self {
        let mut modules: Vec<Module> = Vec::new();
        // SAFETY: the callback only pushes into `modules`.
        unsafe {
            libc::dl_iterate_phdr(
                Some(collect_module),
                &mut modules as *mut Vec<Module> as *mut libc::c_void,
            )
        };
        Symbolizer {
            modules,
            loaders: HashMap::new(),
            cache: HashMap::new(),
        }
    }

    /// The functions at a return address, outermost first (inlined callees last).
    pub fn frames(&mut self, address: u64) -> Vec<Frame> {
        if let Some(f) = self.cache.get(&address) {
            return f.clone();
        }
        let f = self.lookup(address);
        self.cache.insert(address, f.clone());
        f
    }

    fn lookup(&mut self, address: u64) -> Vec<Frame> {
        let probe_abs = address.wrapping_sub(1);
        let Some(mi) = self.modules.iter().position(|m| {
            m.ranges
                .iter()
                .any(|&(s, e)| probe_abs >= s && probe_abs < e)
        }) else {
            return vec![Frame {
                name: format!("{address:#x}"),
                file: None,
                line: None,
                module: None,
                start_line: None,
            }];
        };
        let (path, short, bias) = {
            let m = &self.modules[mi];
            (m.path.clone(), m.short.clone(), m.bias)
        };
        let probe = probe_abs.wrapping_sub(bias);
        let loaders = self
            .loaders
            .entry(mi)
            .or_insert_with(|| Loaders::open(&path));
        let module = Some(short.clone());
        let mut out = Vec::new();
        for loader in loaders.each() {
            if let Ok(mut it) = loader.find_frames(probe) {
                while let Ok(Some(frame)) = it.next() {
                    let Some(func) = frame.function.as_ref() else {
                        continue;
                    };
                    let Ok(name) = func.demangle() else { continue };
                    let (file, line) = match &frame.location {
                        Some(l) => (l.file.map(String::from), l.line),
                        None => (None, None),
                    };
                    out.push(Frame {
                        name: name.into_owned(),
                        file,
                        line,
                        module: module.clone(),
                        start_line: None,
                    });
                }
            }
            let symbol = loader.find_symbol_info(probe);
            let start_line =
                symbol
                    .as_ref()
                    .and_then(|sym| match loader.find_location(sym.address()) {
                        Ok(Some(l)) => l.line,
                        _ => None,
                    });
            if let Some(outermost) = out.last_mut() {
                outermost.start_line = start_line;
                break;
            }
            if let Some(sym) = symbol {
                let name = addr2line::demangle_auto(sym.name().into(), None).into_owned();
                let (file, line) = match loader.find_location(probe) {
                    Ok(Some(l)) => (l.file.map(String::from), l.line),
                    _ => (None, None),
                };
                out.push(Frame {
                    name,
                    file,
                    line,
                    module: module.clone(),
                    start_line,
                });
                break;
            }
        }
        if out.is_empty() {
            out.push(Frame {
                name: format!("{short}+{probe:#x}"),
                file: None,
                line: None,
                module,
                start_line: None,
            });
        }
        for frame in out
            .iter_mut()
            .filter(|f| f.start_line.is_none() && f.line.is_some())
        {
            frame.start_line = loaders.start_line_of(&frame.name);
        }
        out.reverse();
        out
    }
}

/// Names of the executable's user types (structs, unions, classes and their
/// typedefs) by size in bytes, for the bin table's "types" column: the paper's
/// C bins name the types whose size is the bin size. Names starting with `_`
/// (the C library's internals) are left out; at most three names per size.
pub fn type_names_by_size() -> HashMap<u64, Vec<String>> {
    let mut out: HashMap<u64, Vec<String>> = HashMap::new();
    let Ok(data) = std::fs::read("/proc/self/exe") else {
        return out;
    };
    let Ok(file) = object::File::parse(&*data) else {
        return out;
    };
    let _ = collect_types(&file, &mut out);
    for names in out.values_mut() {
        names.sort();
        names.dedup();
        names.truncate(3);
    }
    out
}

fn collect_types(
    file: &object::File<'_>,
    out: &mut HashMap<u64, Vec<String>>,
) -> Result<(), addr2line::gimli::Error> {
    use addr2line::gimli::{self, EndianSlice, RunTimeEndian};
    use object::{Object, ObjectSection};
    use std::borrow::Cow;
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[])))
    };
    let sections = gimli::DwarfSections::load(load)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, RunTimeEndian::Little));
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let mut entries = unit.entries();
        while let Some(entry) = entries.next_dfs()? {
            let tag = entry.tag();
            let sized = match tag {
                gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_class_type => entry
                    .attr_value(gimli::DW_AT_byte_size)
                    .and_then(|v| v.udata_value()),
                gimli::DW_TAG_typedef => match entry.attr_value(gimli::DW_AT_type) {
                    Some(gimli::AttributeValue::UnitRef(offset)) => unit
                        .entry(offset)
                        .ok()
                        .filter(|t| {
                            matches!(
                                t.tag(),
                                gimli::DW_TAG_structure_type
                                    | gimli::DW_TAG_union_type
                                    | gimli::DW_TAG_class_type
                            )
                        })
                        .and_then(|t| t.attr_value(gimli::DW_AT_byte_size))
                        .and_then(|v| v.udata_value()),
                    _ => None,
                },
                _ => None,
            };
            let (Some(size), Some(name)) = (sized, entry.attr_value(gimli::DW_AT_name)) else {
                continue;
            };
            let Ok(name) = dwarf.attr_string(&unit, name) else {
                continue;
            };
            let name = name.to_string_lossy().into_owned();
            if !name.is_empty() && !name.starts_with('_') {
                out.entry(size).or_default().push(name);
            }
        }
    }
    Ok(())
}

impl Default for Symbolizer {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_named_function_for_the_symbolizer() -> u64 {
        // The address of a call inside this function, as a return address would be.
        let f: fn() -> u64 = a_named_function_for_the_symbolizer as fn() -> u64;
        f as usize as u64 + 1
    }

    #[test]
    fn finds_this_test_function_by_name() {
        let mut s = Symbolizer::new();
        let addr = a_named_function_for_the_symbolizer();
        let frames = s.frames(addr);
        let last = frames.last().unwrap();
        assert!(
            last.name.contains("a_named_function_for_the_symbolizer"),
            "{frames:?}"
        );
        assert!(last.module.is_some());
        assert!(last.line.is_some() && last.file.is_some(), "{last:?}");
        let start = last.start_line.expect("the function's own line");
        assert!(start <= last.line.unwrap(), "{last:?}");
        assert_eq!(s.frames(addr), frames, "cached");
    }

    #[test]
    fn unknown_addresses_get_a_hex_name() {
        let mut s = Symbolizer::new();
        let f = s.frames(0x10);
        assert_eq!(
            f,
            vec![Frame {
                name: "0x10".into(),
                file: None,
                line: None,
                module: None,
                start_line: None,
            }]
        );
    }

    #[allow(dead_code)]
    struct ThirtySevenBytesForTheTypeTable {
        bytes: [u8; 37],
    }

    #[test]
    // The release profile keeps line tables only (Cargo.toml): no DWARF types to read.
    #[cfg_attr(not(debug_assertions), ignore = "release builds carry line tables only, no DWARF types")]
    fn type_names_come_from_the_executables_dwarf() {
        let keep = ThirtySevenBytesForTheTypeTable { bytes: [0; 37] };
        assert_eq!(std::hint::black_box(&keep).bytes.len(), 37);
        let names = type_names_by_size();
        let at_37 = names.get(&37).cloned().unwrap_or_default();
        assert!(
            at_37
                .iter()
                .any(|n| n.contains("ThirtySevenBytesForTheTypeTable")),
            "{at_37:?}"
        );
        assert!(
            names
                .values()
                .all(|v| v.len() <= 3 && v.iter().all(|n| !n.starts_with('_')))
        );
    }
}
