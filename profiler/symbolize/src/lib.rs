//! Symbolization of raw profiles, when they are read: libmprof records return addresses
//! and the table of modules they lie in (path, build id, load bias, debug link), and
//! the tools (`mprof report`, `html`, `export`, `merge`...) turn them into functions
//! here, as heaptrack's interpreter, memray's reader and LeakSanitizer's external
//! symbolizer do. The profiled process never reads debug information.
//!
//! [`symbolize`] rebuilds the calling-context tree: each raw node's return address
//! expands to its function and the functions inlined at it (`modules`: DWARF from the
//! module or its separate debug file, `debuginfo`; else the symbol table; else
//! `module+0xoffset`), paths that symbolize alike are unified, and a function calling
//! itself directly folds into one node whose `recursion` counts the folded levels.
//! The C runtime's start-up frames (`_start`, `__libc_start_call_main`, `start_thread`,
//! `clone3`...) above `main` or a thread function are recognised by the address range
//! of their symbols and left out of the paths. Figures and heap errors follow their
//! nodes; the bin table gets the program's type names (`types`); the leak classes get
//! the suppressions (`leaks`). A module that vanished or changed since the run (its
//! build id differs) is never read: its frames keep their `module+0xoffset` names (or
//! come from a debug file of the build that ran) and the profile's metadata says so.
//!
//! Invariants: the result validates whenever the input does, holds no raw addresses,
//! and a profile that is not raw is returned unchanged; no input makes it panic.

mod debuginfo;
mod leaks;
mod modules;
mod types;

pub use modules::{Frame, STARTUP_FUNCTIONS};

use modules::Module;
use mprof_engine::{BinKey, FuncId, FunctionInfo, NodeId, Profile, ProfileBuilder, RawAddress};
use std::collections::HashMap;
use std::path::PathBuf;

/// Where to look, and what to suppress beyond what the profile recorded.
#[derive(Clone, Debug)]
pub struct Options {
    /// The global debug directory (`/usr/lib/debug`): `.build-id/` and debug links.
    pub debug_dir: PathBuf,
    /// More suppression patterns (`MPROF_SUPPRESS` syntax), added to the profile's own.
    pub suppress: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { debug_dir: PathBuf::from("/usr/lib/debug"), suppress: None }
    }
}

/// The profile with its raw return addresses turned into functions (see the module
/// comment); a profile that is not raw comes back unchanged.
pub fn symbolize(p: Profile, options: &Options) -> Profile {
    if !p.is_raw() || p.validate().is_err() {
        return p;
    }
    let mut modules: Vec<Module> = p.modules.iter().cloned().map(Module::new).collect();
    let raw: HashMap<FuncId, RawAddress> = p.addresses.iter().map(|a| (a.func, *a)).collect();
    let global = options.debug_dir.as_path();
    let mut out = Profile::empty(p.language, p.scheme.clone());
    let mut builder = ProfileBuilder::new();
    let mut mapped = vec![0u32; p.nodes.len()];
    let mut cache: HashMap<FuncId, Vec<Frame>> = HashMap::new();
    // For the top-level nodes: how many children each has, and its first (one pass).
    let mut top_children: Vec<(u32, usize)> = vec![(0, 0); p.nodes.len()];
    for (i, n) in p.nodes.iter().enumerate().skip(1) {
        let parent = n.parent.map_or(0, |x| x.0 as usize);
        if p.nodes[parent].parent == Some(mprof_engine::NodeId::ROOT) {
            let slot = &mut top_children[parent];
            if slot.0 == 0 {
                slot.1 = i;
            }
            slot.0 += 1;
        }
    }
    for (i, node) in p.nodes.iter().enumerate().skip(1) {
        let mut at = mapped[node.parent.map_or(0, |x| x.0 as usize)];
        let address = raw.get(&node.func).copied();
        let own_counts = node.counters.iter().any(|c| !c.is_zero());
        let only_child = (top_children[i].0 == 1).then(|| &p.nodes[top_children[i].1]);
        if at == 0 && !own_counts && address.is_some_and(|a| startup(&mut modules, a, global, only_child, &raw)) {
            continue;
        }
        let frames = cache.entry(node.func).or_insert_with(|| match address {
            Some(RawAddress { module: Some(m), address, .. }) => match modules.get_mut(m as usize) {
                Some(module) => {
                    module.used = true;
                    module.frames(address, global)
                }
                None => vec![unknown(address)],
            },
            Some(a) => vec![unknown(a.address)],
            None => {
                let f = p.functions.get(node.func.0 as usize).cloned().unwrap_or_default();
                vec![Frame { name: f.name, file: f.file, line: None, module: f.module, start_line: f.line }]
            }
        });
        for frame in frames.iter() {
            let info = FunctionInfo {
                name: frame.name.clone(),
                file: frame.file.clone(),
                line: frame.start_line,
                module: frame.module.clone(),
            };
            let func = builder.function(&mut out, info);
            at = builder.child(&mut out, NodeId(at), func, frame.line.map_or(0, u64::from)).0;
        }
        mapped[i] = at;
        let dst = &mut out.nodes[at as usize];
        dst.recursion = dst.recursion.saturating_add(node.recursion);
        for (d, s) in dst.counters.iter_mut().zip(&node.counters) {
            d.add(s);
        }
    }
    for e in &p.errors {
        let node = NodeId(mapped.get(e.node.0 as usize).copied().unwrap_or(0));
        match out.errors.iter_mut().find(|x| x.kind == e.kind && x.node == node) {
            Some(x) => x.count = x.count.saturating_add(e.count),
            None => out.errors.push(mprof_engine::HeapError { node, ..*e }),
        }
    }
    for f in &p.figures {
        let mut sums: HashMap<u32, (u64, u64)> = HashMap::new();
        for &(node, count, bytes) in &f.rows {
            let slot = sums.entry(mapped.get(node.0 as usize).copied().unwrap_or(0)).or_default();
            slot.0 = slot.0.saturating_add(count);
            slot.1 = slot.1.saturating_add(bytes);
        }
        let mut rows: Vec<(NodeId, u64, u64)> = sums.into_iter().map(|(n, (c, b))| (NodeId(n), c, b)).collect();
        rows.sort_unstable_by_key(|r| r.0);
        out.figures.push(mprof_engine::Figure { name: f.name.clone(), rows });
    }
    out.bins = p.bins.clone();
    if out.bins.iter().all(|b| b.labels.is_empty())
        && let Some(exe) = modules.iter_mut().find(|m| m.info.executable)
        && let Some(dwarf) = exe.dwarf_path(global)
    {
        let types = types::type_names_by_size(&dwarf);
        for b in &mut out.bins {
            if let BinKey::Size(size) = b.key {
                b.labels = types.get(&size).cloned().unwrap_or_default();
            }
        }
    }
    out.types = p.types.clone();
    out.samples = p.samples.clone();
    out.metadata = p.metadata.clone();
    out.exec = p.exec.clone();
    leaks::apply_suppressions(&mut out, options.suppress.as_deref());
    let problems: Vec<String> = modules
        .iter()
        .filter(|m| m.used)
        .filter_map(|m| m.problem.as_ref().map(|why| format!("{} {why}: its frames show as {}+0xoffset", m.info.path, m.short)))
        .collect();
    if !problems.is_empty() {
        out.metadata.push(("symbols".into(), problems.join("; ")));
    }
    out
}

/// Whether a node at the top of the tree (address `a`, its only child `only_child`) is in
/// one of the C runtime's start-up functions: by its symbol's address range; in a C
/// runtime module without symbols there, by module; in a program whose file is gone,
/// when the frame it calls is a start-up frame (its `_start` calls `__libc_start_main`).
fn startup(
    modules: &mut [Module],
    a: RawAddress,
    global: &std::path::Path,
    only_child: Option<&mprof_engine::Node>,
    raw: &HashMap<FuncId, RawAddress>,
) -> bool {
    let Some(module) = a.module.and_then(|m| modules.get_mut(m as usize)) else { return false };
    match module.startup(a.address, global) {
        Some(known) => known,
        None if module.info.executable => only_child.and_then(|child| raw.get(&child.func)).is_some_and(|&c| {
            c.module != a.module
                && c.module.and_then(|m| modules.get_mut(m as usize)).is_some_and(|m| m.startup(c.address, global) == Some(true))
        }),
        None => {
            let m = module.short.as_str();
            m.starts_with("libc.so") || m.starts_with("ld-linux") || m.starts_with("libpthread")
        }
    }
}

fn unknown(address: u64) -> Frame {
    Frame { name: format!("{address:#x}"), file: None, line: None, module: None, start_line: None }
}
