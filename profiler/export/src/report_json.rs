//! `mprof report --format json`: the numbers of the paper's four tables (and the heap
//! errors) for scripts, computed by the same reduction the text tables print, so a
//! script and a person read the same figures. Per category, counters are given whole
//! (allocations, bytes, frees, freed bytes); kept is allocated minus freed.

use serde_json::{Value, json};

use mprof_engine::profile::{Counters, Profile};
use mprof_engine::reduce::{PartialPath, reduce};

use mprof_display::report::ReportOptions;

fn counters(c: &Counters) -> Value {
    json!({ "allocs": c.allocs, "bytes": c.bytes, "frees": c.frees, "freed_bytes": c.freed_bytes, "kept_bytes": c.kept_bytes() })
}

fn per_category(p: &Profile, cs: &[Counters]) -> Value {
    let map: serde_json::Map<String, Value> =
        p.scheme.categories.iter().zip(cs).map(|(cat, c)| (cat.name.clone(), counters(c))).collect();
    Value::Object(map)
}

fn path(pp: &PartialPath) -> Value {
    let mut v = json!({
        "functions": pp.steps.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        "complete": pp.complete,
        "kept_allocs": pp.kept_allocs,
        "kept_bytes": pp.kept_bytes,
    });
    // A C path's allocation site, `file.c:123`, where debug information gives it.
    if let Some(site) = pp.site() {
        v["site"] = json!(site);
    }
    v
}

/// The report's tables as one JSON document.
pub fn report_json(p: &Profile, options: &ReportOptions) -> Result<String, String> {
    let r = reduce(p, &options.reduce_options())?;
    let names: Vec<&str> = r.entities.iter().map(|e| e.name.as_str()).collect();
    let functions: Vec<Value> = r
        .entities
        .iter()
        .enumerate()
        .filter(|(_, e)| e.total_bytes() > 0 || e.self_bytes() > 0)
        .map(|(i, e)| {
            let callers: Vec<Value> = r
                .edges
                .iter()
                .filter(|edge| edge.callee == i)
                .map(|edge| json!({ "function": names.get(edge.caller), "bytes": edge.bytes(), "calls": edge.calls }))
                .collect();
            json!({
                "name": e.name,
                "cycle": e.cycle,
                "is_cycle": e.is_cycle,
                "self": per_category(p, &e.self_counters),
                "total": per_category(p, &e.total),
                "called": e.called,
                "recursion": e.recursion,
                "callers": callers,
            })
        })
        .collect();
    let bins = crate::formats::bins_json(p);
    let errors: Vec<Value> = r
        .errors
        .iter()
        .map(|e| json!({ "kind": e.kind.describe(), "count": e.count, "address": e.address, "path": path(&e.path) }))
        .collect();
    let metadata: serde_json::Map<String, Value> =
        p.metadata.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    let doc = json!({
        "format": "mprof-report",
        "version": 1,
        "language": p.language.name(),
        "metadata": metadata,
        "totals": per_category(p, &r.totals),
        "unattributed": per_category(p, &r.unattributed),
        "kept": r.kept_paths.iter().map(path).collect::<Vec<_>>(),
        "bins": bins,
        "functions": functions,
        "errors": errors,
    });
    serde_json::to_string_pretty(&doc).map_err(|e| format!("json: {e}"))
}
