//! Exports to the formats other tools read: folded stacks, flame-graph SVG (inferno),
//! JSON, and pprof's profile.proto (gzip'd, as `go tool pprof` and profile stores expect).
//!
//! Exports are pure functions of a `Profile`; they do no reduction (cycles, partial paths)
//! because every target format carries whole stacks. pprof sample types follow Go's heap
//! profiles (alloc_objects, alloc_space, inuse_objects, inuse_space), one sample per node
//! and category with a `category` label, so existing viewers show them without help.
//! Time profiles are exported through their memory-shaped view (`mprof_display::exec_report::time_view`):
//! folded stacks and flame graphs of self nanoseconds, calls or instructions, and a pprof
//! CPU profile (calls, cpu nanoseconds, instructions per calling context). The JSON
//! document carries the execution data under `exec` when the profile has any.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use rustc_hash::FxHashMap;
use serde_json::{Value, json};

use mprof_engine::model::FuncId;
use mprof_engine::profile::{BinKey, Counters, Node, Profile};

// What a stack counts is the stacks' own vocabulary, named here too for the exports' users.
pub use crate::stacks::FoldedValue;
use crate::stacks::Stacks;

/// Folded text longer than this is not handed to inferno (which needs it all in memory,
/// line by line): the flame graph is then drawn from the stacks directly.
const INFERNO_MAX_TEXT: u64 = 64 << 20;

/// One line per distinct stack with a nonzero value: `outer;...;inner value`, depth first
/// with siblings in name order, so the output is stable and diff-able. Allocations
/// outside any function get the frame `<outside any function>`.
pub fn folded(p: &Profile, value: FoldedValue) -> Result<String, String> {
    let mut out = Vec::new();
    folded_to(p, value, &mut out)?;
    String::from_utf8(out).map_err(|e| format!("folded stacks: {e}"))
}

/// `folded`, written to a stream as it is produced: memory stays linear in the tree
/// however long the text (the sum of the stacks' depths) is.
pub fn folded_to(p: &Profile, value: FoldedValue, out: &mut (impl Write + ?Sized)) -> Result<(), String> {
    p.validate()?;
    Stacks::new(p, value).write_folded(out).map_err(|e| format!("cannot write folded stacks: {e}"))
}

/// A flame graph SVG of the distinct stacks, drawn by inferno, or directly from the
/// stacks when their folded text would be too large to hold.
pub fn flamegraph(p: &Profile, value: FoldedValue, title: &str) -> Result<Vec<u8>, String> {
    p.validate()?;
    let stacks = Stacks::new(p, value);
    if stacks.inclusive()[0] == 0 {
        let what = if value.is_time() { "no measured time" } else { "no allocation" };
        return Err(format!("the profile records {what} to draw"));
    }
    if stacks.folded_len() > INFERNO_MAX_TEXT {
        return Ok(crate::flame::svg(&stacks, title, value.unit()).into_bytes());
    }
    let mut text = Vec::new();
    stacks.write_folded(&mut text).map_err(|e| format!("folded stacks: {e}"))?;
    let text = String::from_utf8(text).map_err(|e| format!("folded stacks: {e}"))?;
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = value.unit().to_string();
    options.name_type = "Function:".to_string();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, text.lines(), &mut svg).map_err(|e| format!("flame graph: {e}"))?;
    Ok(svg)
}

fn counters_json(c: &Counters) -> Value {
    json!({ "allocs": c.allocs, "bytes": c.bytes, "frees": c.frees, "freed_bytes": c.freed_bytes })
}

/// The bin table's rows as JSON (the export and `mprof report --format json` share them).
pub(crate) fn bins_json(p: &Profile) -> Vec<Value> {
    p.bins
        .iter()
        .map(|b| {
            let key = match b.key {
                BinKey::Size(s) => json!({ "size": s }),
                BinKey::Larger => json!({ "larger_than": mprof_engine::scheme::LARGEST_SIZE_BIN }),
                BinKey::Type(t) => json!({ "type": p.types.get(t.0 as usize) }),
            };
            json!({ "key": key, "counters": counters_json(&b.counters), "labels": b.labels })
        })
        .collect()
}

/// Stand-ins for the node arrays while the rest of the document is laid out; the
/// arrays are written in their place one node at a time (see `json_to`).
const NODES_MARK: &str = "\u{1}mprof-nodes";
const TIME_NODES_MARK: &str = "\u{1}mprof-time-nodes";

/// The whole profile as JSON: the same data model as the binary file, for scripts.
pub fn json(p: &Profile) -> Result<String, String> {
    let mut out = Vec::new();
    json_to(p, &mut out)?;
    String::from_utf8(out).map_err(|e| format!("json: {e}"))
}

fn node_json(i: usize, n: &Node) -> Value {
    json!({
        "id": i,
        "parent": n.parent.map(|x| x.0),
        "function": (n.func != FuncId::NONE).then_some(n.func.0),
        "call_site": n.call_site,
        "recursion": n.recursion,
        "counters": n.counters.iter().map(counters_json).collect::<Vec<_>>(),
    })
}

fn time_node_json(i: usize, n: &mprof_engine::exec::TimeNode) -> Value {
    json!({
        "id": i,
        "parent": n.parent.map(|x| x.0),
        "function": (n.func != FuncId::NONE).then_some(n.func.0),
        "calls": n.calls,
        "recursion": n.recursion,
        "self_ns": n.self_ns,
        "instructions": n.instructions,
    })
}

/// Writes `items` as a pretty JSON array whose opening bracket sits on a line indented
/// by `indent`, one item at a time, laid out as `serde_json::to_string_pretty` would.
fn write_array(out: &mut (impl Write + ?Sized), indent: usize, items: impl Iterator<Item = Value>) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("json: {e}");
    let mut first = true;
    for item in items {
        out.write_all(if first { b"[\n" } else { b",\n" }).map_err(fail)?;
        first = false;
        let text = serde_json::to_string_pretty(&item).map_err(|e| format!("json: {e}"))?;
        for (k, line) in text.lines().enumerate() {
            if k > 0 {
                out.write_all(b"\n").map_err(fail)?;
            }
            write!(out, "{:indent$}{line}", "", indent = indent + 2).map_err(fail)?;
        }
    }
    if first {
        out.write_all(b"[]").map_err(fail)
    } else {
        write!(out, "\n{:indent$}]", "", indent = indent).map_err(fail)
    }
}

/// `json`, written as it is produced: the document around the node arrays is small, and
/// each node is laid out and written on its own, so memory stays linear in the tree
/// with a small constant rather than holding a JSON value per node.
/// A function's source file as a full path: a relative one is taken from the
/// directory the profiled program ran in (the `directory` metadata entry, which
/// mprof-lisp records), so tools reading the export elsewhere find the file.
fn full_path(p: &Profile, file: &str) -> String {
    let dir = p.metadata.iter().find(|(k, _)| k == "directory").map(|(_, v)| v.as_str());
    match dir {
        Some(dir) if !file.is_empty() && std::path::Path::new(file).is_relative() => {
            std::path::Path::new(dir).join(file).to_string_lossy().into_owned()
        }
        _ => file.to_string(),
    }
}

pub fn json_to(p: &Profile, out: &mut (impl Write + ?Sized)) -> Result<(), String> {
    p.validate()?;
    let functions: Vec<Value> = p
        .functions
        .iter()
        .map(|f| json!({ "name": f.name, "file": f.file.as_deref().map(|x| full_path(p, x)), "line": f.line, "module": f.module }))
        .collect();
    let bins = bins_json(p);
    let errors: Vec<Value> = p
        .errors
        .iter()
        .map(|e| json!({ "kind": e.kind.describe(), "node": e.node.0, "address": e.address, "count": e.count }))
        .collect();
    let samples: Vec<Value> = p
        .samples
        .iter()
        .map(|s| json!({ "time_ns": s.time_ns, "live_bytes": s.live_bytes, "allocated_bytes": s.allocated_bytes }))
        .collect();
    let metadata: serde_json::Map<String, Value> =
        p.metadata.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    let mut doc = json!({
        "format": "mprof-json",
        "version": 1,
        "language": p.language.name(),
        "categories": p.scheme.categories.iter().map(|c| json!({ "letter": c.letter.to_string(), "name": c.name })).collect::<Vec<_>>(),
        "metadata": metadata,
        "functions": functions,
        "types": p.types,
        "nodes": NODES_MARK,
        "bins": bins,
        "errors": errors,
        "samples": samples,
    });
    // Only profiles with execution data carry the key, so memory-only documents keep
    // their shape.
    if !p.exec.is_empty()
        && let Some(map) = doc.as_object_mut()
    {
        map.insert("exec".into(), exec_json(p));
    }
    // Likewise figures (libmprof's per-context peak, temporary and leak classes): only
    // documents of profiles that have them carry the key.
    if !p.figures.is_empty()
        && let Some(map) = doc.as_object_mut()
    {
        let figures: Vec<Value> = p
            .figures
            .iter()
            .map(|f| {
                let rows: Vec<Value> =
                    f.rows.iter().map(|&(n, count, bytes)| json!({ "node": n.0, "count": count, "bytes": bytes })).collect();
                json!({ "name": f.name, "rows": rows })
            })
            .collect();
        map.insert("figures".into(), Value::Array(figures));
    }
    let text = serde_json::to_string_pretty(&doc).map_err(|e| format!("json: {e}"))?;
    let fail = |e: std::io::Error| format!("json: {e}");
    let mut rest = text.as_str();
    loop {
        let marks = [NODES_MARK, TIME_NODES_MARK].map(|m| serde_json::to_string(m).unwrap_or_default());
        let next = marks.iter().enumerate().filter_map(|(k, m)| rest.find(m.as_str()).map(|at| (at, k, m.len()))).min();
        let Some((at, which, len)) = next else {
            return out.write_all(rest.as_bytes()).map_err(fail);
        };
        out.write_all(&rest.as_bytes()[..at]).map_err(fail)?;
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        let indent = rest[line_start..].len() - rest[line_start..].trim_start_matches(' ').len();
        match which {
            0 => write_array(out, indent, p.nodes.iter().enumerate().map(|(i, n)| node_json(i, n)))?,
            _ => {
                let nodes = p.exec.time.as_ref().map(|t| t.nodes.as_slice()).unwrap_or_default();
                write_array(out, indent, nodes.iter().enumerate().map(|(i, n)| time_node_json(i, n)))?
            }
        }
        rest = &rest[at + len..];
    }
}

/// The execution data (time tree, count points, I/O rows), field for field.
fn exec_json(p: &Profile) -> Value {
    let e = &p.exec;
    let time = e.time.as_ref().map(|t| {
        json!({
            "clock": {
                "source": t.clock.source,
                "resolution_ps": t.clock.resolution_ps,
                "read_cost_ps": t.clock.read_cost_ps,
                "compensation_ps": t.clock.compensation_ps,
                "elapsed_ns": t.clock.elapsed_ns,
            },
            "nodes": TIME_NODES_MARK,
        })
    });
    let sources: Vec<Value> =
        e.sources.iter().map(|s| json!({ "path": s.path, "bytes": s.bytes, "hash": s.hash })).collect();
    let counts: Vec<Value> = e
        .counts
        .iter()
        .map(|c| {
            json!({
                "source": c.source, "start": c.start, "end": c.end, "line": c.line, "column": c.column,
                "kind": c.kind.name(), "function": c.function, "depth": c.depth, "count": c.count,
            })
        })
        .collect();
    let io: Vec<Value> = e
        .io
        .iter()
        .map(|r| {
            json!({
                "stream": r.stream, "opens": r.opens, "reads": r.reads, "writes": r.writes,
                "bytes_read": r.bytes_read, "bytes_written": r.bytes_written, "time_ns": r.time_ns,
            })
        })
        .collect();
    json!({ "time": time, "sources": sources, "counts": counts, "io": io })
}

/// The few messages of pprof's profile.proto that mprof writes, hand-written with prost.
pub mod pprof {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Profile {
        #[prost(message, repeated, tag = "1")]
        pub sample_type: Vec<ValueType>,
        #[prost(message, repeated, tag = "2")]
        pub sample: Vec<Sample>,
        #[prost(message, repeated, tag = "4")]
        pub location: Vec<Location>,
        #[prost(message, repeated, tag = "5")]
        pub function: Vec<Function>,
        #[prost(string, repeated, tag = "6")]
        pub string_table: Vec<String>,
        #[prost(int64, tag = "9")]
        pub time_nanos: i64,
        #[prost(message, optional, tag = "11")]
        pub period_type: Option<ValueType>,
        #[prost(int64, tag = "12")]
        pub period: i64,
        #[prost(int64, repeated, tag = "13")]
        pub comment: Vec<i64>,
        #[prost(int64, tag = "14")]
        pub default_sample_type: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ValueType {
        #[prost(int64, tag = "1")]
        pub r#type: i64,
        #[prost(int64, tag = "2")]
        pub unit: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sample {
        #[prost(uint64, repeated, tag = "1")]
        pub location_id: Vec<u64>,
        #[prost(int64, repeated, tag = "2")]
        pub value: Vec<i64>,
        #[prost(message, repeated, tag = "3")]
        pub label: Vec<Label>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Label {
        #[prost(int64, tag = "1")]
        pub key: i64,
        #[prost(int64, tag = "2")]
        pub str: i64,
        #[prost(int64, tag = "3")]
        pub num: i64,
        #[prost(int64, tag = "4")]
        pub num_unit: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Location {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub mapping_id: u64,
        #[prost(uint64, tag = "3")]
        pub address: u64,
        #[prost(message, repeated, tag = "4")]
        pub line: Vec<Line>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Line {
        #[prost(uint64, tag = "1")]
        pub function_id: u64,
        #[prost(int64, tag = "2")]
        pub line: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Function {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(int64, tag = "2")]
        pub name: i64,
        #[prost(int64, tag = "3")]
        pub system_name: i64,
        #[prost(int64, tag = "4")]
        pub filename: i64,
        #[prost(int64, tag = "5")]
        pub start_line: i64,
    }
}

struct Strings {
    table: Vec<String>,
    index: FxHashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        // pprof requires string_table[0] == "".
        let mut s = Strings { table: Vec::new(), index: FxHashMap::default() };
        s.get("");
        s
    }

    fn get(&mut self, text: &str) -> i64 {
        if let Some(&i) = self.index.get(text) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(text.to_string());
        self.index.insert(text.to_string(), i);
        i
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// One pprof sample before its stack is attached: values in `sample_type` order, labels.
type SampleValues = (Vec<i64>, Vec<pprof::Label>);

/// A pprof export in the making: everything but the samples (`head`, whose `sample` is
/// empty), each node's location, and the values of each node's samples.
struct Pprof<'a, F: Fn(&Node) -> Vec<SampleValues>> {
    p: &'a Profile,
    head: pprof::Profile,
    location_of_node: Vec<u64>,
    values: F,
}

impl<F: Fn(&Node) -> Vec<SampleValues>> Pprof<'_, F> {
    /// Calls `f` with every sample: its stack (leaf first; the root is a frame only
    /// when nothing else is), values and labels. One stack is held at a time, so a
    /// deep unfolded tree costs its depth in memory, not the sum of its stacks.
    fn each_sample(&self, mut f: impl FnMut(&[u64], SampleValues) -> std::io::Result<()>) -> std::io::Result<()> {
        let mut stack = Vec::new();
        for (i, node) in self.p.nodes.iter().enumerate() {
            let sets = (self.values)(node);
            if sets.is_empty() {
                continue;
            }
            stack.clear();
            let mut at = i;
            while at != 0 {
                stack.push(self.location_of_node[at]);
                at = self.p.nodes[at].parent.map_or(0, |x| x.0 as usize);
            }
            if stack.is_empty() {
                stack.push(self.location_of_node[0]);
            }
            for set in sets {
                f(&stack, set)?;
            }
        }
        Ok(())
    }

    /// The whole message (tests compare it with what the streamed export decodes to).
    fn message(self) -> pprof::Profile {
        let mut samples = Vec::new();
        let _ = self.each_sample(|stack, (value, label)| {
            samples.push(pprof::Sample { location_id: stack.to_vec(), value, label });
            Ok(())
        });
        pprof::Profile { sample: samples, ..self.head }
    }

    /// The encoded message, gzip'd, streamed to `out`: the head's first field, then
    /// each sample as it is made, then the rest of the head (protobuf messages merge
    /// when concatenated: repeated fields append).
    fn write_gz(self, out: &mut (impl Write + ?Sized)) -> Result<(), String> {
        let mut gz = GzEncoder::new(out, Compression::default());
        let first = pprof::Profile { sample_type: self.head.sample_type.clone(), ..pprof::Profile::default() };
        let rest = pprof::Profile { sample_type: Vec::new(), ..self.head.clone() };
        let mut buf = Vec::new();
        let mut ids = Vec::new();
        let result = (|| {
            gz.write_all(&prost::Message::encode_to_vec(&first))?;
            self.each_sample(|stack, (value, label)| {
                // Field 1 (packed location ids) by hand, fields 2 and 3 by prost.
                ids.clear();
                for &id in stack {
                    prost::encoding::encode_varint(id, &mut ids);
                }
                buf.clear();
                prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, &mut buf);
                prost::encoding::encode_varint(ids.len() as u64, &mut buf);
                buf.extend_from_slice(&ids);
                prost::Message::encode(&pprof::Sample { location_id: Vec::new(), value, label }, &mut buf)
                    .map_err(std::io::Error::other)?;
                let mut head = Vec::with_capacity(16);
                prost::encoding::encode_key(2, prost::encoding::WireType::LengthDelimited, &mut head);
                prost::encoding::encode_varint(buf.len() as u64, &mut head);
                gz.write_all(&head)?;
                gz.write_all(&buf)
            })?;
            gz.write_all(&prost::Message::encode_to_vec(&rest))?;
            gz.try_finish()
        })();
        result.map_err(|e| format!("pprof: {e}"))
    }
}

fn memory_values(p: &Profile, strings: &mut Strings) -> impl Fn(&Node) -> Vec<SampleValues> + use<> {
    let category_key = strings.get("category");
    let category_names: Vec<i64> = p.scheme.categories.iter().map(|c| strings.get(&c.name)).collect();
    move |node: &Node| -> Vec<SampleValues> {
        node.counters
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_zero())
            .map(|(k, c)| {
                (
                    vec![clamp(c.allocs), clamp(c.bytes), clamp(c.kept_allocs()), clamp(c.kept_bytes())],
                    vec![pprof::Label { key: category_key, str: category_names[k], num: 0, num_unit: 0 }],
                )
            })
            .collect()
    }
}

fn memory_pprof(p: &Profile) -> Result<Pprof<'_, impl Fn(&Node) -> Vec<SampleValues> + use<>>, String> {
    p.validate()?;
    let mut strings = Strings::new();
    let values = memory_values(p, &mut strings);
    let types = ["alloc_objects:count", "alloc_space:bytes", "inuse_objects:count", "inuse_space:bytes"];
    Ok(build_pprof(p, strings, &types, ("space", "bytes"), "alloc_space", values))
}

fn time_values(node: &Node) -> Vec<SampleValues> {
    let calls = FoldedValue::Calls.of(&node.counters);
    let ns = FoldedValue::TimeNs.of(&node.counters);
    let instructions = FoldedValue::Instructions.of(&node.counters);
    if calls == 0 && ns == 0 && instructions == 0 {
        return Vec::new();
    }
    vec![(vec![clamp(calls), clamp(ns), clamp(instructions)], Vec::new())]
}

fn time_pprof(view: &Profile) -> Result<Pprof<'_, fn(&Node) -> Vec<SampleValues>>, String> {
    view.validate()?;
    let types = ["calls:count", "cpu:nanoseconds", "instructions:count"];
    Ok(build_pprof(view, Strings::new(), &types, ("cpu", "nanoseconds"), "cpu", time_values as fn(&Node) -> Vec<SampleValues>))
}

/// The pprof message of a memory profile (not yet encoded), for tests and for callers
/// that post-process it.
pub fn pprof_message(p: &Profile) -> Result<pprof::Profile, String> {
    Ok(memory_pprof(p)?.message())
}

/// The pprof message of a time view (`mprof_display::exec_report::time_view`): one sample per calling
/// context with its calls, self nanoseconds and instructions, as CPU profiles carry them.
pub fn pprof_time_message(view: &Profile) -> Result<pprof::Profile, String> {
    Ok(time_pprof(view)?.message())
}

/// The parts common to both pprof exports: functions, one location per (function, call
/// site), metadata as comments; the samples, one per value set of each node with its
/// stack, are made when written.
fn build_pprof<'a, F: Fn(&Node) -> Vec<SampleValues>>(
    p: &'a Profile,
    mut strings: Strings,
    types: &[&str],
    period: (&str, &str),
    default_type: &str,
    values: F,
) -> Pprof<'a, F> {
    let sample_type = types
        .iter()
        .map(|s| {
            let (t, u) = s.split_once(':').unwrap_or((s, ""));
            pprof::ValueType { r#type: strings.get(t), unit: strings.get(u) }
        })
        .collect();
    let functions: Vec<pprof::Function> = p
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| pprof::Function {
            id: i as u64 + 1,
            name: strings.get(&f.name),
            system_name: strings.get(&f.name),
            filename: strings.get(&f.file.as_deref().map(|x| full_path(p, x)).unwrap_or_default()),
            start_line: f.line.map_or(0, i64::from),
        })
        .collect();
    let outside = functions.len() as u64 + 1;
    let mut functions = functions;
    functions.push(pprof::Function {
        id: outside,
        name: strings.get("<outside any function>"),
        system_name: strings.get("<outside any function>"),
        filename: 0,
        start_line: 0,
    });
    // One location per (function, call site).
    let mut location_ids: FxHashMap<(u64, u64), u64> = FxHashMap::default();
    let mut locations: Vec<pprof::Location> = Vec::new();
    let mut location_of_node: Vec<u64> = Vec::with_capacity(p.nodes.len());
    for node in &p.nodes {
        let function_id = if node.func == FuncId::NONE { outside } else { node.func.0 as u64 + 1 };
        let key = (function_id, node.call_site);
        let id = *location_ids.entry(key).or_insert_with(|| {
            let id = locations.len() as u64 + 1;
            // libmprof records a frame's source line as its call site: that is the line of
            // the location. Otherwise (Lisp, or no line) the function's own line.
            let line = match (p.language, node.call_site) {
                (mprof_engine::Language::C, site) if site > 0 && site <= u32::MAX as u64 => site as i64,
                _ => p.functions.get(node.func.0 as usize).and_then(|f| f.line).map_or(0, i64::from),
            };
            locations.push(pprof::Location {
                id,
                mapping_id: 0,
                address: node.call_site,
                line: vec![pprof::Line { function_id, line }],
            });
            id
        });
        location_of_node.push(id);
    }
    let comment = p.metadata.iter().map(|(k, v)| strings.get(&format!("{k}: {v}"))).collect();
    let period_type = Some(pprof::ValueType { r#type: strings.get(period.0), unit: strings.get(period.1) });
    let default_sample_type = strings.get(default_type);
    let head = pprof::Profile {
        sample_type,
        sample: Vec::new(),
        location: locations,
        function: functions,
        string_table: strings.table,
        time_nanos: 0,
        period_type,
        period: 1,
        comment,
        default_sample_type,
    };
    Pprof { p, head, location_of_node, values }
}

/// pprof's profile.proto, gzip'd.
pub fn pprof_gz(p: &Profile) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    memory_pprof(p)?.write_gz(&mut out)?;
    Ok(out)
}

/// pprof's profile.proto, gzip'd, streamed to `out` (memory bounded by the profile,
/// not by the sum of its stacks' depths).
pub fn pprof_gz_to(p: &Profile, out: &mut (impl Write + ?Sized)) -> Result<(), String> {
    memory_pprof(p)?.write_gz(out)
}

/// The time view's pprof message (`pprof_time_message`), gzip'd.
pub fn pprof_time_gz(view: &Profile) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    time_pprof(view)?.write_gz(&mut out)?;
    Ok(out)
}

/// The time view's pprof export, streamed to `out`.
pub fn pprof_time_gz_to(view: &Profile, out: &mut (impl Write + ?Sized)) -> Result<(), String> {
    time_pprof(view)?.write_gz(out)
}
