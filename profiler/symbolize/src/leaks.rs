//! Suppressions, applied to a symbolized profile's leak classes: lost blocks (the
//! `definitely lost` and `indirectly lost` figures) whose calling context holds a
//! function matching a pattern move to the `suppressed` count, and the header's four
//! class figures (metadata) are recomputed from what is left. Patterns: the defaults
//! (the C library's own buffers), the `suppress` setting the run recorded
//! (`MPROF_SUPPRESS`), and those the reader adds.

use mprof_engine::suppress::{any_matches, patterns};
use mprof_engine::{NodeId, Profile};

const CLASSES: [&str; 3] = ["definitely lost", "indirectly lost", "still reachable"];

/// Moves suppressed lost blocks apart (see the module comment). A profile without leak
/// classes (no leak check ran) is left alone.
pub fn apply_suppressions(p: &mut Profile, extra: Option<&str>) {
    if !p.metadata.iter().any(|(k, _)| k == "definitely lost") {
        return;
    }
    let recorded = p.metadata.iter().find(|(k, _)| k == "suppress").map(|(_, v)| v.clone());
    let mut list = patterns(recorded.as_deref());
    if let Some(e) = extra {
        // The reader's patterns extend whatever the run used (a leading `-` does not
        // bring the defaults back once the run removed them).
        list.extend(patterns(Some(e.strip_prefix('-').unwrap_or(e))).into_iter().skip(mprof_engine::suppress::DEFAULT_SUPPRESSIONS.len()));
    }
    // Whether each node's path holds a suppressed function: parents come first.
    let mut suppressed = vec![false; p.nodes.len()];
    for i in 1..p.nodes.len() {
        let n = &p.nodes[i];
        let parent = n.parent.map_or(0, |x| x.0 as usize);
        suppressed[i] = suppressed[parent]
            || p.functions.get(n.func.0 as usize).is_some_and(|f| any_matches(&list, &f.name));
    }
    let mut totals = [[0u64; 2]; 4];
    for f in &mut p.figures {
        let Some(class) = CLASSES.iter().position(|c| *c == f.name) else { continue };
        let moved: Vec<(NodeId, u64, u64)> = if class < 2 {
            let (gone, kept): (Vec<_>, Vec<_>) = f.rows.iter().partition(|r| suppressed[r.0.0 as usize]);
            f.rows = kept;
            gone
        } else {
            Vec::new()
        };
        for r in &f.rows {
            totals[class][0] = totals[class][0].saturating_add(r.1);
            totals[class][1] = totals[class][1].saturating_add(r.2);
        }
        for r in moved {
            totals[3][0] = totals[3][0].saturating_add(r.1);
            totals[3][1] = totals[3][1].saturating_add(r.2);
        }
    }
    p.figures.retain(|f| !f.rows.is_empty());
    for (key, v) in CLASSES.iter().chain(["suppressed"].iter()).zip(totals) {
        let value = format!("{} blocks, {} bytes", v[0], v[1]);
        match p.metadata.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => p.metadata.push((key.to_string(), value)),
        }
    }
}
