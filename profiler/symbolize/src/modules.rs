//! One module of a raw profile, opened for symbolization: its DWARF (its own, or its
//! separate debug file's), its symbol tables, and whether the file on disk is still the
//! one that ran.
//!
//! A return address is looked up at `address - 1`, inside the call instruction, so a
//! call that ends a function is not attributed to the next one. DWARF gives the
//! function, file, line and inlined frames (C++ and Rust names demangled); without
//! DWARF the ELF symbol table gives the name; without that, `module+0xoffset`. A
//! function's own line is the line of its entry address (where a debugger breaks on
//! it); an inlined function's, that of its out-of-line copy when the module has one.
//!
//! Invariants: a module whose file vanished or whose build id differs from the
//! recorded one is never read (only a debug file of the recorded build may be);
//! every failure degrades to a name with an offset, never to an error.

use crate::debuginfo;
use mprof_engine::ModuleInfo;
use object::{Object, ObjectSymbol};
use std::collections::HashMap;
use std::path::Path;

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

/// Functions of the C runtime's process and thread start-up, above `main` or a thread
/// function: a path starts below them.
pub const STARTUP_FUNCTIONS: &[&str] = &[
    "_start",
    "__libc_start_main",
    "__libc_start_main_impl",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "__clone_internal",
];

/// A function symbol: start, size, name.
struct Symbol {
    start: u64,
    size: u64,
    name: String,
}

struct Opened {
    debug: Option<addr2line::Loader>,
    own: Option<addr2line::Loader>,
    /// Function symbols of the module and its debug file, sorted by start.
    symbols: Vec<Symbol>,
    /// Function symbols by name, built on the first inlined frame.
    by_name: Option<HashMap<String, u64>>,
}

/// A module of the profile, opened on first use.
pub struct Module {
    pub info: ModuleInfo,
    /// The file name alone, as frames name their module.
    pub short: String,
    opened: Option<Option<Opened>>,
    /// Why the file on disk is not the one that ran, if it is not.
    pub problem: Option<String>,
    /// Whether any frame of the profile lies in it.
    pub used: bool,
}

impl Module {
    pub fn new(info: ModuleInfo) -> Module {
        let short = info.path.rsplit('/').next().unwrap_or(&info.path).to_string();
        Module { info, short, opened: None, problem: None, used: false }
    }

    fn open(&mut self, global: &Path) -> Option<&mut Opened> {
        if self.opened.is_none() {
            let opened = self.open_files(global);
            self.opened = Some(opened);
        }
        self.opened.as_mut().and_then(Option::as_mut)
    }

    fn open_files(&mut self, global: &Path) -> Option<Opened> {
        let path = Path::new(&self.info.path);
        let data = debuginfo::map(path);
        let file = data.as_ref().and_then(|d| object::File::parse(&**d).ok());
        let same = match &file {
            None => {
                self.problem = Some(if path.exists() { "cannot be read" } else { "vanished since the run" }.into());
                false
            }
            Some(f) => {
                let id = f.build_id().ok().flatten().unwrap_or_default();
                if !self.info.build_id.is_empty() && id != self.info.build_id.as_slice() {
                    self.problem = Some("changed since the run (build id differs)".into());
                    false
                } else {
                    true
                }
            }
        };
        let usable = if same { file.as_ref() } else { None };
        let found =
            debuginfo::find_for(path, usable, &self.info.build_id, self.info.debug_link.as_deref(), global);
        let own = if same { addr2line::Loader::new(path).ok() } else { None };
        let debug = found
            .as_ref()
            .filter(|d| d.dwarf != path)
            .and_then(|d| addr2line::Loader::new_with_sup(&d.dwarf, d.sup.as_ref()).ok());
        let mut symbols = Vec::new();
        if let Some(f) = usable {
            collect_symbols(f, &mut symbols);
        }
        if let Some(d) = found.as_ref().filter(|d| d.dwarf != path)
            && let Some(data) = debuginfo::map(&d.dwarf)
            && let Ok(f) = object::File::parse(&*data)
        {
            collect_symbols(&f, &mut symbols);
        }
        symbols.sort_by(|a, b| a.start.cmp(&b.start).then(b.size.cmp(&a.size)));
        symbols.dedup_by(|a, b| a.start == b.start && a.name == b.name);
        if own.is_none() && debug.is_none() && symbols.is_empty() {
            return None;
        }
        Some(Opened { debug, own, symbols, by_name: None })
    }

    /// The path of the debug information of the main program (for its DWARF types).
    pub fn dwarf_path(&mut self, global: &Path) -> Option<std::path::PathBuf> {
        let path = Path::new(&self.info.path).to_path_buf();
        let data = debuginfo::map(&path);
        let file = data.as_ref().and_then(|d| object::File::parse(&**d).ok());
        let same = file.as_ref().is_some_and(|f| {
            self.info.build_id.is_empty() || f.build_id().ok().flatten() == Some(self.info.build_id.as_slice())
        });
        let usable = if same { file.as_ref() } else { None };
        debuginfo::find_for(&path, usable, &self.info.build_id, self.info.debug_link.as_deref(), global)
            .map(|d| d.dwarf)
    }

    /// Whether the function symbol holding `address` is one of the start-up functions;
    /// None when no symbol holds it.
    pub fn startup(&mut self, address: u64, global: &Path) -> Option<bool> {
        let probe = address.wrapping_sub(1);
        let opened = self.open(global)?;
        let i = opened.symbols.partition_point(|s| s.start <= probe);
        // Aliases share an address (`__libc_start_main_impl`, `__libc_start_main_alias_1`...).
        let mut covering = opened.symbols[..i].iter().rev().take(16).filter(|s| probe < s.start + s.size.max(1));
        let first = covering.next()?;
        let startup = |name: &str| STARTUP_FUNCTIONS.contains(&name) || name.starts_with("__libc_start_main");
        Some(startup(&first.name) || covering.any(|s| startup(&s.name)))
    }

    /// The functions at return address `address` (relative to the load bias), outermost
    /// first (inlined callees last).
    pub fn frames(&mut self, address: u64, global: &Path) -> Vec<Frame> {
        let short = self.short.clone();
        let probe = address.wrapping_sub(1);
        let fallback = || vec![Frame {
            name: format!("{short}+{probe:#x}"),
            file: None,
            line: None,
            module: Some(short.clone()),
            start_line: None,
        }];
        let Some(opened) = self.open(global) else { return fallback() };
        let module = Some(short.clone());
        let mut out = Vec::new();
        for loader in opened.debug.iter().chain(opened.own.iter()) {
            if let Ok(mut it) = loader.find_frames(probe) {
                while let Ok(Some(frame)) = it.next() {
                    let Some(func) = frame.function.as_ref() else { continue };
                    let Ok(name) = func.demangle() else { continue };
                    let (file, line) = match &frame.location {
                        Some(l) => (l.file.map(String::from), l.line),
                        None => (None, None),
                    };
                    out.push(Frame { name: name.into_owned(), file, line, module: module.clone(), start_line: None });
                }
            }
            let symbol = loader.find_symbol_info(probe);
            let start_line = symbol.as_ref().and_then(|sym| match loader.find_location(sym.address()) {
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
                out.push(Frame { name, file, line, module: module.clone(), start_line });
                break;
            }
        }
        if out.is_empty() {
            // No DWARF and no symbol the loaders know: the symbol tables we read.
            let i = opened.symbols.partition_point(|s| s.start <= probe);
            match opened.symbols[..i].iter().rev().take(4).find(|s| probe < s.start + s.size.max(1)) {
                Some(s) => out.push(Frame {
                    name: addr2line::demangle_auto(s.name.as_str().into(), None).into_owned(),
                    file: None,
                    line: None,
                    module: module.clone(),
                    start_line: None,
                }),
                None => return fallback(),
            }
        }
        for frame in out.iter_mut().filter(|f| f.start_line.is_none() && f.line.is_some()) {
            frame.start_line = start_line_of(opened, &frame.name);
        }
        out.reverse();
        out
    }
}

fn collect_symbols(file: &object::File<'_>, out: &mut Vec<Symbol>) {
    for sym in file.symbols().chain(file.dynamic_symbols()) {
        if sym.kind() == object::SymbolKind::Text
            && sym.address() != 0
            && let Ok(n) = sym.name()
        {
            out.push(Symbol { start: sym.address(), size: sym.size(), name: n.to_string() });
        }
    }
}

/// The entry line of the out-of-line copy of function `name`, if the module has one:
/// how an inlined function gets its own line.
fn start_line_of(opened: &mut Opened, name: &str) -> Option<u32> {
    let by_name = opened.by_name.get_or_insert_with(|| {
        let mut map = HashMap::new();
        for s in &opened.symbols {
            map.entry(s.name.clone()).or_insert(s.start);
        }
        map
    });
    let address = *by_name.get(name)?;
    opened
        .debug
        .iter()
        .chain(opened.own.iter())
        .find_map(|l| l.find_location(address).ok().flatten().and_then(|l| l.line))
}
