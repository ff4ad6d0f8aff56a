//! Execution counts of source forms, pxp's statement counts for Lisp.
//!
//! When counting is on, loading a file records the source span of every list the reader
//! made (a side table from cons address to span, kept only for the top-level form being
//! compiled, whose conses it also keeps alive so addresses cannot be reused). The
//! compiler then wraps chosen forms in `Ir::Count`: each function body (entry count),
//! each branch of a conditional (after macroexpansion every `when`, `cond`, `case`,
//! `and`, `or` is an `if`; the middle operands of `and`/`or` and LOOP's accumulated
//! forms are wrapped in `SYS::%COUNTED-BRANCH`, compiled as a branch), each form of a body (progn, let, function and loop bodies —
//! a loop's body forms run once per iteration), and each top-level form. An atom has no
//! identity to look up, so a branch or progn form that is an atom (`(if (< n 2) n ...)`)
//! is found by the cons that holds it in its list. A counted form
//! compiles to one `Op::Count` before its code, which adds one to a slot of the VM's
//! count vector: no call, no hash, no thread-local access.
//!
//! Invariants: a count point is identified by (source, start offset, kind, and for an
//! entry the function's name), so compiling
//! a form again (the compiler restarts after each macro expansion) reuses its points;
//! point ids index `CountRegistry::points` and the VM's count vector alike; forms of the
//! prelude, of `-e` and of the REPL are never counted (they have no source file).

use std::collections::HashMap;
use std::rc::Rc;

use mprof_engine::exec::{CountKind, CountPoint, SourceFile, source_hash};
use mprof_reader::Span;

/// What the compiler knows of a count point.
#[derive(Clone, Debug)]
pub struct PointInfo {
    pub source: u32,
    pub span: Span,
    pub kind: CountKind,
    pub function: String,
    pub depth: u32,
}

/// Every count point of the run, and the sources they are in.
#[derive(Default, Debug)]
pub struct CountRegistry {
    pub points: Vec<PointInfo>,
    /// (source, start, kind, function): two functions one form defines (a DEFSTRUCT's
    /// constructor and accessors) have points of their own at the same place.
    index: HashMap<(u32, usize, CountKind, String), u32>,
    pub sources: Vec<SourceFile>,
    source_index: HashMap<Rc<str>, u32>,
}

impl CountRegistry {
    /// The source index of `path` with contents `text`, registering it on first use.
    pub fn source(&mut self, path: &Rc<str>, text: &str) -> u32 {
        if let Some(&i) = self.source_index.get(path) {
            // The same path loaded again with other contents is another source.
            let s = &self.sources[i as usize];
            if s.bytes == text.len() as u64 && s.hash == source_hash(text.as_bytes()) {
                return i;
            }
        }
        let i = self.sources.len() as u32;
        self.sources.push(SourceFile { path: path.to_string(), bytes: text.len() as u64, hash: source_hash(text.as_bytes()) });
        self.source_index.insert(path.clone(), i);
        i
    }

    /// The id of the point counting `kind` executions of the form at `span`.
    pub fn point(&mut self, source: u32, span: Span, kind: CountKind, function: &str, depth: u32) -> u32 {
        let next = self.points.len() as u32;
        let name = if kind == CountKind::Entry { function.to_string() } else { String::new() };
        *self.index.entry((source, span.start, kind, name)).or_insert_with(|| {
            self.points.push(PointInfo { source, span, kind, function: function.to_string(), depth });
            next
        })
    }

    /// The points with their counts, in the profile's terms. `counts` may be shorter than
    /// the point list (points compiled but never run count 0).
    pub fn to_exec(&self, counts: &[u64]) -> (Vec<SourceFile>, Vec<CountPoint>) {
        let points = self
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| CountPoint {
                source: p.source,
                start: p.span.start as u64,
                end: p.span.end as u64,
                line: p.span.line,
                column: p.span.column,
                kind: p.kind,
                function: p.function.clone(),
                depth: p.depth,
                count: counts.get(i).copied().unwrap_or(0),
            })
            .collect();
        (self.sources.clone(), points)
    }
}

/// The spans of the lists of the top-level form being compiled, by cons address, and of
/// the elements of those lists by the address of the cons holding them.
#[derive(Default, Debug)]
pub struct SpanTable {
    pub source: u32,
    pub spans: HashMap<usize, Span>,
    pub cells: HashMap<usize, Span>,
}

/// What the compiler's front end needs to place counters.
pub struct CountCtx<'r> {
    pub spans: &'r SpanTable,
    pub registry: &'r mut CountRegistry,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: usize) -> Span {
        Span { start, end: start + 3, line: 1, column: start as u32 + 1 }
    }

    #[test]
    fn points_are_stable_across_recompilation() {
        let mut r = CountRegistry::default();
        let path: Rc<str> = Rc::from("a.lisp");
        let s = r.source(&path, "(f)");
        let a = r.point(s, span(0), CountKind::Statement, "F", 0);
        let b = r.point(s, span(0), CountKind::Entry, "F", 0);
        assert_ne!(a, b, "kinds are distinct points");
        let c = r.point(s, span(0), CountKind::Entry, "G", 0);
        assert_ne!(b, c, "two functions defined by one form have their own entries");
        assert_eq!(r.point(s, span(0), CountKind::Statement, "F", 0), a);
        assert_eq!(r.source(&path, "(f)"), s, "same contents, same source");
        assert_ne!(r.source(&path, "(g)"), s, "changed contents, new source");
        let (sources, points) = r.to_exec(&[5]);
        assert_eq!(points.len(), 3);
        assert_eq!(sources.len(), 2);
        assert_eq!((points[0].count, points[1].count), (5, 0));
    }
}
