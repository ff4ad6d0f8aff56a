//! The annotated listing: a program re-printed by the pretty printer with its execution
//! counts at the left margin, in the manner of pxp.
//!
//! Each printed line shows the source line number of the first form that begins on it,
//! then — when the count in effect changes — the count and `.---|`, else just the bar,
//! then the program text. The count in effect on a line is that of the innermost count
//! point containing the line's first form (function entry before branch before body
//! form before top-level form, when several start at the same place). Lists holding a
//! point whose count differs from the count where the list starts are never printed on
//! one line, so each branch taken a different number of times gets a line of its own.
//!
//! It reads the source with the Lisp reader and lays it out with this crate's pretty
//! printer (`pretty.rs`). Invariant: counts are matched to forms by
//! byte offset, so a listing is only printed from the exact source that was run; a source
//! whose size or hash differs is refused with a message, as pxp refused a counter mismatch.

use mprof_reader::ReadOptions;
use mprof_engine::exec::{CountKind, CountPoint, source_hash};
use mprof_engine::profile::Profile;

use crate::pretty::{Block, Breaks, LineKind, PrettyOptions, pretty_source};

/// What a listing shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListingOptions {
    /// Only the top-level definitions of these names (case-insensitive); all when empty.
    pub only: Vec<String>,
    /// Columns for the program text (the margin is extra).
    pub width: usize,
}

impl Default for ListingOptions {
    fn default() -> Self {
        ListingOptions { only: Vec::new(), width: 72 }
    }
}

/// Width of the count field in the margin.
const COUNT_WIDTH: usize = 10;

fn kind_rank(kind: CountKind) -> u8 {
    match kind {
        CountKind::Entry => 3,
        CountKind::Branch => 2,
        CountKind::Statement => 1,
        CountKind::Toplevel => 0,
    }
}

/// The count points of one source, sorted by start (then by kind rank).
struct Points<'a> {
    points: Vec<&'a CountPoint>,
}

impl<'a> Points<'a> {
    fn new(p: &'a Profile, source: u32) -> Points<'a> {
        let mut points: Vec<&CountPoint> = p.exec.counts.iter().filter(|c| c.source == source).collect();
        points.sort_by_key(|c| (c.start, kind_rank(c.kind)));
        Points { points }
    }

    /// The count in effect at `offset`: that of the innermost point containing it (the
    /// latest start at or before it whose form extends past it; among points starting
    /// there, the highest-ranked kind). Entries of several functions defined by one form
    /// (a DEFSTRUCT) count together: calls into what the form defines.
    fn at(&self, offset: usize) -> Option<u64> {
        let offset = offset as u64;
        let upto = self.points.partition_point(|c| c.start <= offset);
        let inside = |c: &CountPoint| offset < c.end.max(c.start.saturating_add(1));
        let innermost = self.points[..upto].iter().rev().find(|c| inside(c))?;
        let rank = self.points[..upto]
            .iter()
            .filter(|c| c.start == innermost.start && inside(c))
            .map(|c| kind_rank(c.kind))
            .max()?;
        Some(
            self.points[..upto]
                .iter()
                .filter(|c| c.start == innermost.start && kind_rank(c.kind) == rank && inside(c))
                .map(|c| c.count)
                .fold(0u64, u64::saturating_add),
        )
    }

    /// The count a printed line shows: that in effect at its first form, unless that form
    /// has no point of its own and a point starts later on the line (`do (when ...)` in a
    /// LOOP: the line shows the WHEN's count, not the loop's).
    fn line_count(&self, first: usize, end: usize) -> Option<u64> {
        let (first64, end64) = (first as u64, end as u64);
        let from = self.points.partition_point(|c| c.start < first64);
        match self.points.get(from) {
            Some(c) if c.start > first64 && c.start < end64 => self.at(c.start as usize),
            _ => self.at(first),
        }
    }

    /// True when the list at (start, end) cannot go on one line: a point inside it has
    /// another count than the one that line would show.
    fn varies_inside(&self, start: usize, end: usize) -> bool {
        let shown = self.line_count(start, end);
        let (start, end) = (start as u64, end as u64);
        let from = self.points.partition_point(|c| c.start <= start);
        self.points[from..].iter().take_while(|c| c.start < end).any(|c| Some(c.count) != shown)
    }
}

/// Where counts force line breaks: a list holding a point with another count than its
/// line's, and a first argument (a COND's first clause) counted otherwise than its operator.
struct CountBreaks<'p, 'a>(&'p Points<'a>);

impl Breaks for CountBreaks<'_, '_> {
    fn must_break(&self, start: usize, end: usize) -> bool {
        self.0.varies_inside(start, end)
    }
    fn first_apart(&self, list_start: usize, first_start: usize, first_end: usize) -> bool {
        self.0.line_count(first_start, first_end) != self.0.line_count(list_start, first_end)
    }
}

/// Line numbers of byte offsets.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }
    fn of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

/// The margin for a line: source line number, then the count (when it changes) or the bar.
fn margin(line: Option<usize>, count: Option<u64>, bar: bool) -> String {
    let number = match line {
        Some(n) => format!("{n:>5}"),
        None => " ".repeat(5),
    };
    match (count, bar) {
        (Some(c), _) => format!("{number} {:>w$}.---|", c, w = COUNT_WIDTH),
        (None, true) => format!("{number} {}    |", " ".repeat(COUNT_WIDTH)),
        (None, false) => format!("{number} {}     ", " ".repeat(COUNT_WIDTH)),
    }
}

/// The listing of source `source` of `p`, whose text is `text`. Fails when the text is
/// not the one the counts were taken from, or cannot be read as Lisp.
pub fn render_listing(p: &Profile, source: usize, text: &str, o: &ListingOptions) -> Result<String, String> {
    let Some(file) = p.exec.sources.get(source) else {
        return Err(format!("the profile has no source number {source}"));
    };
    if file.bytes != text.len() as u64 || file.hash != source_hash(text.as_bytes()) {
        return Err(format!(
            "{} has changed since the run ({} bytes then, {} now): its counts would not line up",
            file.path,
            file.bytes,
            text.len()
        ));
    }
    let points = Points::new(p, source as u32);
    let breaks = CountBreaks(&points);
    let read = ReadOptions { file: Some(file.path.clone()), ..ReadOptions::default() };
    let options = PrettyOptions { width: o.width, ..PrettyOptions::default() };
    let blocks = pretty_source(text, &options, &read, &breaks).map_err(|e| e.to_string())?;
    let lines = Lines::new(text);
    let only: Vec<String> = o.only.iter().map(|n| n.to_uppercase()).collect();
    let mut out = String::new();
    for block in &blocks {
        match block {
            Block::Text { lines: text_lines } => {
                if !only.is_empty() {
                    continue;
                }
                for l in text_lines {
                    let m = margin(None, None, false);
                    push_line(&mut out, &m, l.indent, &l.text);
                }
            }
            Block::Form { definition, lines: form_lines, span } => {
                if !only.is_empty() && !definition.as_ref().is_some_and(|(_, name)| only.contains(&name.to_uppercase())) {
                    continue;
                }
                // Where each line's text ends in the source: the next line's first form.
                let mut ends = vec![span.end; form_lines.len()];
                let mut next = span.end;
                for (i, l) in form_lines.iter().enumerate().rev() {
                    ends[i] = next;
                    if let (LineKind::Code, Some(off)) = (l.kind, l.first_offset) {
                        next = off;
                    }
                }
                let mut shown: Option<Option<u64>> = None;
                for (i, l) in form_lines.iter().enumerate() {
                    let (line_no, count) = match (l.kind, l.first_offset) {
                        (LineKind::Code, Some(off)) => (Some(lines.of(off)), points.line_count(off, ends[i])),
                        _ => (None, shown.flatten()),
                    };
                    let print = l.first_offset.is_some() && shown != Some(count) && count.is_some();
                    let m = margin(line_no, if print { count } else { None }, true);
                    if l.first_offset.is_some() {
                        shown = Some(count);
                    }
                    push_line(&mut out, &m, l.indent, &l.text);
                }
            }
        }
    }
    Ok(out)
}

fn push_line(out: &mut String, margin: &str, indent: usize, text: &str) {
    out.push_str(margin);
    if !text.is_empty() {
        out.extend(std::iter::repeat_n(' ', indent));
        out.push_str(text);
    }
    while out.ends_with(' ') {
        out.pop();
    }
    out.push('\n');
}

/// Listings of every counted source, each read from its recorded path; a source that
/// cannot be read or has changed gets a line saying so instead.
pub fn render_listings(p: &Profile, o: &ListingOptions) -> String {
    let mut out = String::new();
    for (i, file) in p.exec.sources.iter().enumerate() {
        if !p.exec.counts.iter().any(|c| c.source as usize == i) {
            continue;
        }
        out.push_str(&format!("\nExecution counts: {}\n\n", file.path));
        match std::fs::read_to_string(&file.path) {
            Ok(text) => match render_listing(p, i, &text, o) {
                Ok(listing) => out.push_str(&listing),
                Err(e) => out.push_str(&format!("(no listing: {e})\n")),
            },
            Err(e) => out.push_str(&format!("(no listing: cannot read {}: {e})\n", file.path)),
        }
    }
    out
}

/// The index of the source of `p` that `path` names: the same path, else the only
/// source with the same file name.
pub fn find_source(p: &Profile, path: &str) -> Result<usize, String> {
    if let Some(i) = p.exec.sources.iter().position(|s| s.path == path) {
        return Ok(i);
    }
    let name = std::path::Path::new(path).file_name();
    let same: Vec<usize> = p
        .exec
        .sources
        .iter()
        .enumerate()
        .filter(|(_, s)| std::path::Path::new(&s.path).file_name() == name)
        .map(|(i, _)| i)
        .collect();
    match same.as_slice() {
        [i] => Ok(*i),
        [] if p.exec.sources.is_empty() => Err("the profile holds no execution counts (run with --count)".into()),
        [] => Err(format!(
            "the profile has no counts for {path}; it has counts for: {}",
            p.exec.sources.iter().map(|s| s.path.as_str()).collect::<Vec<_>>().join(", ")
        )),
        _ => Err(format!("several counted sources are named like {path}: give the path as recorded")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mprof_engine::exec::SourceFile;
    use mprof_engine::scheme::{CategoryScheme, Language};

    fn profile_for(text: &str, points: &[(&str, CountKind, u64)]) -> Profile {
        let mut p = Profile::empty(Language::Lisp, CategoryScheme::lisp());
        p.exec.sources.push(SourceFile { path: "t.lisp".into(), bytes: text.len() as u64, hash: source_hash(text.as_bytes()) });
        for &(form, kind, count) in points {
            let start = text.find(form).unwrap_or(0);
            p.exec.counts.push(CountPoint {
                source: 0,
                start: start as u64,
                end: (start + form.len()) as u64,
                line: 1,
                column: 1,
                kind,
                function: String::new(),
                depth: 0,
                count,
            });
        }
        p
    }

    #[test]
    fn branches_with_other_counts_get_their_own_lines() {
        let text = "(defun f (x) (if (> x 0) (g x) (h x)))\n";
        let p = profile_for(
            text,
            &[
                (text.trim_end(), CountKind::Entry, 10),
                ("(if (> x 0) (g x) (h x))", CountKind::Statement, 10),
                ("(g x)", CountKind::Branch, 3),
                ("(h x)", CountKind::Branch, 7),
            ],
        );
        let out = render_listing(&p, 0, text, &ListingOptions::default()).unwrap_or_else(|e| e);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(lines[0].ends_with("10.---|(defun f (x)"), "{out}");
        assert!(lines[1].ends_with("    |  (if (> x 0)"), "same count as the line before: bar only\n{out}");
        assert!(lines[2].contains("3.---|") && lines[2].ends_with("(g x)"), "{out}");
        assert!(lines[3].contains("7.---|") && lines[3].ends_with("(h x)))"), "{out}");
    }

    #[test]
    fn entries_of_functions_one_form_defines_add_up() {
        let text = "(defstruct w a)\n";
        let mut p = profile_for(text, &[("(defstruct w a)", CountKind::Entry, 4), ("(defstruct w a)", CountKind::Entry, 6)]);
        p.exec.counts[1].function = "W-A".into();
        let out = render_listing(&p, 0, text, &ListingOptions::default()).unwrap_or_else(|e| e);
        assert!(out.contains("10.---|(defstruct w a)"), "{out}");
    }

    #[test]
    fn a_changed_source_is_refused() {
        let text = "(f)\n";
        let p = profile_for(text, &[("(f)", CountKind::Toplevel, 1)]);
        let e = render_listing(&p, 0, "(g)\n", &ListingOptions::default()).unwrap_err();
        assert!(e.contains("changed since the run"), "{e}");
    }

    #[test]
    fn only_lists_the_named_definitions() {
        let text = "(defun a () 1)\n(defun b () 2)\n";
        let p = profile_for(text, &[("(defun a () 1)", CountKind::Entry, 4), ("(defun b () 2)", CountKind::Entry, 5)]);
        let o = ListingOptions { only: vec!["b".into()], ..ListingOptions::default() };
        let out = render_listing(&p, 0, text, &o).unwrap_or_else(|e| e);
        assert!(!out.contains("defun a") && out.contains("5.---|(defun b () 2)"), "{out}");
        assert_eq!(find_source(&p, "/elsewhere/t.lisp"), Ok(0));
        assert!(find_source(&p, "u.lisp").unwrap_err().contains("t.lisp"));
    }
}
