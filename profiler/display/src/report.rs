//! Display: the paper's four tables (Figures 2-5), an allocation errors table and a header.
//!
//! Layout rules kept from the paper: two-character percentage fields that print at most
//! 99 ("99% is the largest percentage possible"), blank category fields below 1%,
//! truncated (not rounded) two-character percentages, one-decimal self+desc and % mem
//! columns, rules whose category letters stand over the digits of their column, the
//! `<TOTAL>` lines, and the orders: leak paths, direct rows and call-graph entries by
//! decreasing bytes; C bins by size; Lisp bins by decreasing bytes. `exact_percentages`
//! widens every percentage to one decimal and lifts the 99 cap.
//!
//! Wording follows `Profile::language` only: C prints a memory *leak* table with s/m/l/x
//! columns, Lisp a memory *kept* table (reachable at the report) with c/f/s/o. Column
//! widths grow with the numbers, and the rules are generated from the same widths, so
//! headings, rules and rows always line up. A profile's figures (`Profile::figures`:
//! memory at peak, temporary allocations, leak classes) each get a table after the leak
//! table, in its layout and selected with it; a profile without figures prints exactly
//! what it printed before they existed. Tests: tools/mprof/tests/ (insta snapshots).

use std::fmt::Write as _;

use mprof_engine::profile::{BinKey, Counters, Profile};
use mprof_engine::reduce::{reduce, Edge, Entity, PartialPath, ReduceOptions, Reduction};
use mprof_engine::scheme::{Language, LARGEST_SIZE_BIN};

/// Which tables a report prints.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Tables(pub u8);

impl Tables {
    pub const LEAK: Tables = Tables(1);
    pub const BINS: Tables = Tables(2);
    pub const DIRECT: Tables = Tables(4);
    pub const GRAPH: Tables = Tables(8);
    pub const ERRORS: Tables = Tables(16);
    pub const ALL: Tables = Tables(31);
    pub const NONE: Tables = Tables(0);

    pub fn contains(self, other: Tables) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn with(self, other: Tables) -> Tables {
        Tables(self.0 | other.0)
    }

    /// Parses a comma-separated list of `leak` (or `kept`), `bins`, `direct`, `graph`,
    /// `errors`, `all`.
    pub fn parse(list: &str) -> Result<Tables, String> {
        let mut t = Tables::NONE;
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            t = t.with(match name {
                "leak" | "kept" => Tables::LEAK,
                "bins" => Tables::BINS,
                "direct" => Tables::DIRECT,
                "graph" => Tables::GRAPH,
                "errors" => Tables::ERRORS,
                "all" => Tables::ALL,
                other => {
                    return Err(format!(
                        "unknown table `{other}` (expected leak, kept, bins, direct, graph, errors or all)"
                    ));
                }
            });
        }
        if t == Tables::NONE {
            return Err("no table named (expected leak, bins, direct, graph, errors or all)".into());
        }
        Ok(t)
    }
}

/// What a report shows and how.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ReportOptions {
    pub tables: Tables,
    /// One decimal in every percentage, no 99 cap.
    pub exact_percentages: bool,
    /// Merge recursion cycles into one entry each, as the paper did.
    pub merge_cycles: bool,
    /// Distinguish call sites in printed paths.
    pub call_sites: bool,
    /// Callers shown in the leak/kept and errors tables (the paper used five).
    pub path_depth: usize,
    /// How the bin table of a C profile groups sizes.
    pub size_bins: SizeBins,
}

/// The rows of a C profile's bin table: one per exact size (the paper's way), or one
/// per power-of-two range (`129-256`), which keeps the table short for programs that
/// allocate many sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SizeBins {
    #[default]
    Exact,
    Pow2,
}

impl SizeBins {
    /// `exact` or `pow2`.
    pub fn parse(name: &str) -> Result<SizeBins, String> {
        match name.trim() {
            "exact" => Ok(SizeBins::Exact),
            "pow2" => Ok(SizeBins::Pow2),
            other => Err(format!("unknown bin grouping `{other}` (expected exact or pow2)")),
        }
    }

    /// The (first, last) sizes of the row holding `size` bytes.
    fn range(self, size: u64) -> (u64, u64) {
        match self {
            SizeBins::Exact => (size, size),
            SizeBins::Pow2 if size <= 2 => (size, size),
            SizeBins::Pow2 => {
                let last = size.next_power_of_two();
                (last / 2 + 1, last)
            }
        }
    }
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            tables: Tables::ALL,
            exact_percentages: false,
            merge_cycles: false,
            call_sites: false,
            path_depth: 5,
            size_bins: SizeBins::Exact,
        }
    }
}

impl ReportOptions {
    pub fn reduce_options(&self) -> ReduceOptions {
        ReduceOptions {
            merge_cycles: self.merge_cycles,
            call_sites: self.call_sites,
            path_depth: self.path_depth.max(1),
        }
    }
}

/// Reduces `profile` and prints the chosen tables. A profile that breaks the invariants
/// of `Profile::validate` (possible only when built by hand) yields a one-line report
/// saying why, rather than a panic.
pub fn render_report(profile: &Profile, options: &ReportOptions) -> String {
    match reduce(profile, &options.reduce_options()) {
        Ok(r) => render_reduction(profile, &r, options),
        Err(why) => format!("invalid profile: {why}\n"),
    }
}

/// Prints an already computed reduction.
pub fn render_reduction(p: &Profile, r: &Reduction, options: &ReportOptions) -> String {
    let letters: Vec<char> = p.scheme.categories.iter().map(|c| c.letter).collect();
    let fmt = Fmt { exact: options.exact_percentages, groups: letters.len() };
    let mut out = String::new();
    header(&mut out, p, r);
    if options.tables.contains(Tables::LEAK) {
        out.push('\n');
        leak_table(&mut out, p, r, &fmt, options);
        for (name, paths) in &r.figures {
            out.push('\n');
            figure_table(&mut out, name, paths, &fmt, options);
        }
    }
    if options.tables.contains(Tables::BINS) {
        out.push('\n');
        bin_table(&mut out, p, &fmt, options.size_bins);
    }
    if options.tables.contains(Tables::DIRECT) {
        out.push('\n');
        direct_table(&mut out, r, &fmt, &letters);
    }
    if options.tables.contains(Tables::GRAPH) {
        out.push('\n');
        call_graph(&mut out, r, &fmt, &letters);
    }
    if options.tables.contains(Tables::ERRORS) && !r.errors.is_empty() {
        out.push('\n');
        errors_table(&mut out, r);
    }
    out
}

// ---------------------------------------------------------------- formatting helpers

struct Fmt {
    exact: bool,
    /// Number of categories, i.e. cells in a category group.
    groups: usize,
}

impl Fmt {
    /// Width of a category percentage field.
    fn cat_width(&self) -> usize {
        if self.exact { 5 } else { 2 }
    }

    /// A category field: blank below 1% (exact: blank when zero), capped at 99.
    fn cat(&self, part: u64, whole: u64) -> String {
        if whole == 0 || part == 0 {
            return String::new();
        }
        if self.exact {
            return format!("{:.1}", part as f64 * 100.0 / whole as f64);
        }
        match (part as u128 * 100 / whole as u128).min(99) {
            0 => String::new(),
            v => v.to_string(),
        }
    }

    /// Writes one category cell (a space and the field) without allocating.
    fn write_cat(&self, out: &mut String, part: u64, whole: u64, w: usize) {
        if whole == 0 || part == 0 {
            out.extend(std::iter::repeat_n(' ', w + 1));
        } else if self.exact {
            out.push(' ');
            crate::pad::right(out, &format!("{:.1}", part as f64 * 100.0 / whole as f64), w);
        } else {
            match (part as u128 * 100 / whole as u128).min(99) {
                0 => out.extend(std::iter::repeat_n(' ', w + 1)),
                v => {
                    out.push(' ');
                    crate::pad::right(out, &v.to_string(), w);
                }
            }
        }
    }

    /// A "(%)" field of the leak and bin tables: blank below 1%, capped at 99.
    fn paren_capped(&self, part: u64, whole: u64) -> String {
        match self.cat(part, whole) {
            s if s.is_empty() => String::new(),
            s => format!("({s})"),
        }
    }

    /// A "(%)" field of the call graph: always printed, truncated, up to 100.
    fn paren_graph(&self, part: u64, whole: u64) -> String {
        if self.exact {
            let v = if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 };
            return format!("({v:.1})");
        }
        let v = if whole == 0 { 0 } else { part as u128 * 100 / whole as u128 };
        format!("({v})")
    }

    /// A one-decimal percentage (self+desc, % mem).
    fn decimal(&self, part: u64, whole: u64) -> String {
        let v = if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 };
        format!("{v:.1}")
    }
}

fn pad_right(s: &str, w: usize) -> String {
    let mut out = String::new();
    crate::pad::right(&mut out, s, w);
    out
}

fn pad_left(s: &str, w: usize) -> String {
    let mut out = String::new();
    crate::pad::left(&mut out, s, w);
    out
}

fn center(s: &str, w: usize) -> String {
    let len = s.chars().count();
    if len + 1 == w {
        return format!(" {s}");
    }
    if len >= w {
        return s.to_string();
    }
    let left = (w - len) / 2;
    format!("{}{}{}", " ".repeat(left), s, " ".repeat(w - len - left))
}

/// A group of category fields: each is a space and the value right-aligned in `w`.
fn cats(values: &[String], w: usize) -> String {
    values.iter().map(|v| format!(" {}", pad_right(v, w))).collect()
}

/// The rule under a category group: each letter stands over the last digit.
fn cat_rule(letters: &[char], w: usize) -> String {
    letters.iter().map(|l| format!("{}{l}", "-".repeat(w))).collect()
}

fn dashes(n: usize) -> String {
    "-".repeat(n)
}

fn trim_line(out: &mut String, line: &str) {
    out.push_str(line.trim_end());
    out.push('\n');
}

fn width_of<I: IntoIterator<Item = u64>>(min: usize, values: I) -> usize {
    values.into_iter().map(|v| v.to_string().len()).fold(min, usize::max)
}

/// `|| > main > make_widget (widgets.c:12)`: a C step's call site shows as the file
/// and line of the call (the last step's, where the allocator was called, on every
/// row; every step's with `--call-sites`), any other recorder's as `name@0x..`.
fn path_text(path: &PartialPath) -> String {
    let mut s = String::from(if path.complete { "||" } else { "..." });
    for step in &path.steps {
        s.push_str(" > ");
        s.push_str(&step.name);
        match (step.location(), step.call_site) {
            (Some(at), _) => {
                let _ = write!(s, " ({at})");
            }
            (None, Some(site)) => {
                let _ = write!(s, "@{site:#x}");
            }
            _ => {}
        }
    }
    s
}

fn sum(cs: &[Counters], f: impl Fn(&Counters) -> u64) -> u64 {
    cs.iter().map(f).sum()
}

// ---------------------------------------------------------------- header

/// The first lines of every report: the kind of profile and its metadata (program,
/// command line...), all a report of a file without memory data opens with.
pub fn render_title(p: &Profile) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mprof report ({} profile)", p.language.name());
    for (k, v) in &p.metadata {
        let _ = writeln!(out, "{k}: {v}");
    }
    out
}

fn header(out: &mut String, p: &Profile, r: &Reduction) {
    out.push_str(&render_title(p));
    let allocs = r.total_of(|c| c.allocs);
    let bytes = r.total_of(|c| c.bytes);
    let frees = r.total_of(|c| c.frees);
    let freed = r.total_of(|c| c.freed_bytes);
    let kept_word = if p.language == Language::C { "never freed" } else { "kept (reachable)" };
    let _ = writeln!(out, "allocated: {allocs} objects, {bytes} bytes");
    let _ = writeln!(out, "freed:     {frees} objects, {freed} bytes");
    let _ = writeln!(
        out,
        "{kept_word}: {} objects, {} bytes",
        allocs.saturating_sub(frees),
        bytes.saturating_sub(freed)
    );
    let unattributed = sum(&r.unattributed, |c| c.bytes);
    if unattributed > 0 {
        let _ = writeln!(out, "outside any known function: {unattributed} bytes");
    }
    if r.cycles > 0 {
        let _ = writeln!(out, "recursion cycles: {}", r.cycles);
    }
    if let Some(peak) = p.samples.iter().max_by_key(|s| (s.live_bytes, std::cmp::Reverse(s.time_ns))) {
        let _ = writeln!(
            out,
            "memory over time: {} samples, peak {} live bytes at {:.3} s",
            p.samples.len(),
            peak.live_bytes,
            peak.time_ns as f64 / 1e9
        );
    }
}

// ---------------------------------------------------------------- Figure 2

/// A few lines under a table's title saying what its columns count.
fn legend(out: &mut String, lines: &[&str]) {
    for l in lines {
        let _ = writeln!(out, "  {l}");
    }
}

fn leak_table(out: &mut String, p: &Profile, r: &Reduction, fmt: &Fmt, options: &ReportOptions) {
    let depth = options.path_depth.max(1);
    match p.language {
        Language::C => {
            let _ = writeln!(out, "Memory leak table: memory allocated and never freed, by path (last {depth} callers)");
            legend(out, &["allocs, bytes: the blocks never freed that were allocated along the path,", "which ends in the function that called the allocator."]);
        }
        Language::Lisp => {
            let _ = writeln!(
                out,
                "Memory kept table: memory still reachable at the report, by path (last {depth} callers)"
            );
            legend(out, &["allocs, bytes: the objects still reachable that were allocated along the path,", "which ends in the function that allocated them."]);
        }
    }
    out.push('\n');
    let none = if p.language == Language::C { "(no memory leaked)" } else { "(no memory kept)" };
    path_rows(out, &r.kept_paths, fmt, none);
}

/// A table of one of the profile's figures ("memory at peak", "definitely lost"...),
/// in the leak table's layout: partial paths ranked by bytes, with counts.
fn figure_table(out: &mut String, name: &str, paths: &[PartialPath], fmt: &Fmt, options: &ReportOptions) {
    let depth = options.path_depth.max(1);
    let mut title = name.chars();
    let title: String = title.next().map(|c| c.to_uppercase().chain(title).collect()).unwrap_or_default();
    let _ = writeln!(out, "{title} table: by path (last {depth} callers)");
    out.push('\n');
    path_rows(out, paths, fmt, "(nothing)");
}

/// The rows of the leak table and the figure tables: count, bytes, share of the
/// table's bytes, path; `none` when there is no row.
fn path_rows(out: &mut String, paths: &[PartialPath], fmt: &Fmt, none: &str) {
    let total_kept: u64 = paths.iter().map(|k| k.kept_bytes).fold(0, u64::saturating_add);
    let wa = width_of(6, paths.iter().map(|k| k.kept_allocs));
    let wb = width_of(5, paths.iter().map(|k| k.kept_bytes));
    let wp = if fmt.exact { 7 } else { 4 };
    trim_line(out, &format!("{} {} {} path", pad_right("allocs", wa), pad_right("bytes", wb), pad_right("(%)", wp)));
    if paths.is_empty() {
        let _ = writeln!(out, "{none}");
        return;
    }
    for k in paths {
        let line = format!(
            "{} {} {} {}",
            pad_right(&k.kept_allocs.to_string(), wa),
            pad_right(&k.kept_bytes.to_string(), wb),
            pad_right(&fmt.paren_capped(k.kept_bytes, total_kept), wp),
            path_text(k)
        );
        trim_line(out, &line);
    }
}

// ---------------------------------------------------------------- Figure 3

/// A bin-table row before layout: label, counters, type names, size (for sorting).
type BinRowText = (String, Counters, String, Option<u64>);

/// Size rows merged into ranges: a range is labelled `first-last`, sorts by its last
/// size, and lists the types of its sizes once each; other rows are kept as they are.
fn group_sizes(rows: Vec<BinRowText>, size_bins: SizeBins) -> Vec<BinRowText> {
    let mut grouped: Vec<BinRowText> = Vec::new();
    let mut by_range: std::collections::BTreeMap<(u64, u64), usize> = std::collections::BTreeMap::new();
    for row in rows {
        let Some(size) = row.3.filter(|&s| s != u64::MAX) else {
            grouped.push(row);
            continue;
        };
        let (first, last) = size_bins.range(size);
        let i = *by_range.entry((first, last)).or_insert_with(|| {
            let label = if first == last { last.to_string() } else { format!("{first}-{last}") };
            grouped.push((label, Counters::default(), String::new(), Some(last)));
            grouped.len() - 1
        });
        let entry = &mut grouped[i];
        entry.1.add(&row.1);
        for t in row.2.split_whitespace() {
            if !entry.2.split_whitespace().any(|x| x == t) {
                if !entry.2.is_empty() {
                    entry.2.push(' ');
                }
                entry.2.push_str(t);
            }
        }
    }
    grouped
}

fn bin_table(out: &mut String, p: &Profile, fmt: &Fmt, size_bins: SizeBins) {
    let _ = writeln!(out, "Allocation bin table");
    let lisp = p.language == Language::Lisp;
    legend(
        out,
        &[
            if lisp { "One row per type of object: allocs and bytes allocated, frees, and bytes kept" } else { "One row per block size: allocs and bytes allocated, frees, and bytes leaked" },
            if lisp { "(still reachable), with each one's share of all." } else { "(never freed), with each one's share of all." },
        ],
    );
    out.push('\n');
    let mut rows: Vec<(String, Counters, String, Option<u64>)> = p
        .bins
        .iter()
        .map(|b| {
            let (label, size) = match b.key {
                BinKey::Size(s) => (s.to_string(), Some(s)),
                BinKey::Larger => (format!("> {LARGEST_SIZE_BIN}"), Some(u64::MAX)),
                BinKey::Type(t) => (p.types.get(t.0 as usize).cloned().unwrap_or_else(|| "?".into()), None),
            };
            (label, b.counters, b.labels.join(" "), size)
        })
        .collect();
    if !lisp && size_bins != SizeBins::Exact {
        rows = group_sizes(rows, size_bins);
    }
    if !lisp && !rows.iter().any(|r| r.3 == Some(u64::MAX)) {
        rows.push((format!("> {LARGEST_SIZE_BIN}"), Counters::default(), String::new(), Some(u64::MAX)));
    }
    // C: by size, the "> 1024" bin last. Lisp: by decreasing bytes, then name. Sizes
    // sort before types if a profile mixes them.
    rows.sort_by(|a, b| match (a.3, b.3) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => b.1.bytes.cmp(&a.1.bytes).then_with(|| a.0.cmp(&b.0)),
    });
    let mut total = Counters::default();
    rows.iter().for_each(|r| total.add(&r.1));
    let first = if lisp { "type:" } else { "size:" };
    let w0 = rows.iter().map(|r| r.0.chars().count()).fold(first.len().max("<TOTAL>".len()), usize::max);
    let wa = width_of(6, rows.iter().map(|r| r.1.allocs).chain([total.allocs]));
    let wb = width_of(5, rows.iter().map(|r| r.1.bytes).chain([total.bytes]));
    let wf = width_of(5, rows.iter().map(|r| r.1.frees).chain([total.frees]));
    let wk = width_of(4, rows.iter().map(|r| r.1.kept_bytes()).chain([total.kept_bytes()]));
    let wp = if fmt.exact { 7 } else { 4 };
    let cell0 = |s: &str| if lisp { pad_left(s, w0) } else { pad_right(s, w0) };
    let heading = format!(
        "{} {} {} {} {} {} {}{}",
        cell0(first),
        pad_right("allocs", wa),
        pad_right("bytes", wb),
        pad_right("(%)", wp),
        pad_right("frees", wf),
        pad_right("kept", wk),
        pad_right("(%)", wp),
        if lisp { "" } else { " types" }
    );
    trim_line(out, &heading);
    for (label, c, types, _) in &rows {
        let line = format!(
            "{} {} {} {} {} {} {} {}",
            cell0(label),
            pad_right(&c.allocs.to_string(), wa),
            pad_right(&c.bytes.to_string(), wb),
            pad_right(&fmt.paren_capped(c.bytes, total.bytes), wp),
            pad_right(&c.frees.to_string(), wf),
            pad_right(&c.kept_bytes().to_string(), wk),
            pad_right(&fmt.paren_capped(c.kept_bytes(), total.kept_bytes()), wp),
            types
        );
        trim_line(out, &line);
    }
    let line = format!(
        "{} {} {} {} {} {}",
        cell0("<TOTAL>"),
        pad_right(&total.allocs.to_string(), wa),
        pad_right(&total.bytes.to_string(), wb),
        " ".repeat(wp),
        pad_right(&total.frees.to_string(), wf),
        pad_right(&total.kept_bytes().to_string(), wk),
    );
    trim_line(out, &line);
}

// ---------------------------------------------------------------- Figure 4

fn direct_table(out: &mut String, r: &Reduction, fmt: &Fmt, letters: &[char]) {
    let _ = writeln!(out, "Direct allocation table");
    legend(
        out,
        &[
            "Memory each function allocated itself, not through its callees, as a share of all",
            "and split by category (columns c f s o, or the size classes); calls: its",
            "allocations (mprof counts a call for each allocation made beneath a function).",
        ],
    );
    out.push('\n');
    let cw = fmt.cat_width();
    let total_bytes = r.total_of(|c| c.bytes);
    let total_kept = r.total_of(|c| c.kept_bytes());
    let mut rows: Vec<&Entity> = r
        .entities
        .iter()
        .filter(|e| !e.is_cycle && e.self_counters.iter().any(|c| c.allocs > 0 || c.bytes > 0))
        .collect();
    rows.sort_by(|a, b| b.self_bytes().cmp(&a.self_bytes()).then_with(|| a.name.cmp(&b.name)));
    let kept_of = |cs: &[Counters]| sum(cs, |c| c.kept_bytes());
    let wb = width_of(9, rows.iter().map(|e| e.self_bytes()).chain([total_bytes]));
    let wk = width_of(10, rows.iter().map(|e| kept_of(&e.self_counters)).chain([total_kept]));
    let wc = width_of(5, rows.iter().map(|e| sum(&e.self_counters, |c| c.allocs)).chain([r.total_of(|c| c.allocs)]));
    let gw = letters.len() * (cw + 1);
    let heading = format!(
        "{} {} |{} | {} |{} | {} name",
        pad_right("% mem", 5),
        pad_right("bytes", wb),
        center("% mem(size)", gw),
        pad_right("bytes kept", wk),
        center("% all kept", gw),
        pad_right("calls", wc)
    );
    trim_line(out, &heading);
    let rule = format!(
        "{}{}{}{}{}",
        dashes(5 + 1 + wb + 2),
        cat_rule(letters, cw),
        dashes(2 + 1 + wk + 2),
        cat_rule(letters, cw),
        dashes(2 + 1 + wc + 1 + 4)
    );
    trim_line(out, &rule);
    let row = |out: &mut String, pct: String, cs: &[Counters], name: &str| {
        let bytes = sum(cs, |c| c.bytes);
        let mem: Vec<String> = cs.iter().map(|c| fmt.cat(c.bytes, total_bytes)).collect();
        let kept: Vec<String> = cs.iter().map(|c| fmt.cat(c.kept_bytes(), total_kept)).collect();
        let line = format!(
            "{} {} |{} | {} |{} | {} {}",
            pad_right(&pct, 5),
            pad_right(&bytes.to_string(), wb),
            cats(&mem, cw),
            pad_right(&kept_of(cs).to_string(), wk),
            cats(&kept, cw),
            pad_right(&sum(cs, |c| c.allocs).to_string(), wc),
            name
        );
        trim_line(out, &line);
    };
    row(out, "-----".into(), &r.totals, "<TOTAL>");
    for e in rows {
        row(out, fmt.decimal(e.self_bytes(), total_bytes), &e.self_counters, &entity_label(e));
    }
    if r.unattributed.iter().any(|c| c.allocs > 0) {
        row(out, fmt.decimal(sum(&r.unattributed, |c| c.bytes), total_bytes), &r.unattributed, "<outside any function>");
    }
}

fn entity_label(e: &Entity) -> String {
    match (e.is_cycle, e.cycle) {
        (false, Some(c)) => format!("{} <cycle {c}>", e.name),
        _ => e.name.clone(),
    }
}

// ---------------------------------------------------------------- Figure 5

fn call_graph(out: &mut String, r: &Reduction, fmt: &Fmt, letters: &[char]) {
    let _ = writeln!(out, "Allocation call graph");
    legend(
        out,
        &[
            "One entry per function, [index] on its own line: its callers above it, its callees",
            "below. self: bytes it allocated itself; desc: bytes allocated beneath it. called/total:",
            "allocations made through this arc / through all arcs into the callee; on the entry's",
            "own line, allocations through it (+ those through its folded recursive calls).",
        ],
    );
    out.push('\n');
    let cw = fmt.cat_width();
    let gw = letters.len() * (cw + 1);
    let total_bytes = r.total_of(|c| c.bytes);
    let shown: Vec<usize> = {
        let mut v: Vec<usize> = (0..r.entities.len())
            .filter(|&e| r.entities[e].total.iter().any(|c| c.allocs > 0 || c.bytes > 0))
            .collect();
        v.sort_by(|&a, &b| {
            let (ea, eb) = (&r.entities[a], &r.entities[b]);
            eb.total_bytes().cmp(&ea.total_bytes()).then_with(|| ea.name.cmp(&eb.name)).then(a.cmp(&b))
        });
        v
    };
    let mut index = vec![usize::MAX; r.entities.len()];
    for (i, &e) in shown.iter().enumerate() {
        index[e] = i;
    }
    // Edges by endpoint. Unmerged cycles: a function's descendants are functions (a
    // member is shown with its cycle tag), a cycle's descendants are its members.
    let mut callers: Vec<Vec<&Edge>> = vec![Vec::new(); r.entities.len()];
    let mut callees: Vec<Vec<&Edge>> = vec![Vec::new(); r.entities.len()];
    for edge in &r.edges {
        if index[edge.caller] == usize::MAX || index[edge.callee] == usize::MAX {
            continue;
        }
        callers[edge.callee].push(edge);
        let hidden = !r.cycles_merged && r.entities[edge.callee].is_cycle;
        if !hidden {
            callees[edge.caller].push(edge);
        }
    }
    let mut out_calls = vec![0u64; r.entities.len()];
    for edge in &r.edges {
        let hidden = !r.cycles_merged && r.entities[edge.callee].is_cycle;
        if !hidden {
            out_calls[edge.caller] += edge.calls;
        }
    }
    let wi = format!("[{}]", shown.len().saturating_sub(1)).len().max(5) + 1;
    let wb = width_of(
        9,
        shown.iter().map(|&e| r.entities[e].total_bytes()).chain(r.edges.iter().map(|e| e.bytes())),
    );
    let wp = if fmt.exact { 7 } else { 5 };
    let wd = 5;
    let head = |a: &str, b: &str, c: &str, d: &str, g1: &str, g2: &str, tail: &str| {
        format!(
            "{} {} {} {} |{} |{} | {}",
            pad_left(a, wi - 1),
            center(b, wd),
            pad_right(c, wb),
            pad_right(d, wp),
            center(g1, gw),
            center(g2, gw),
            tail
        )
    };
    let rule = format!("{}{}{}{}{}", dashes(wi + wd + 1 + wb + 1 + wp + 2), cat_rule(letters, cw), dashes(2), cat_rule(letters, cw), dashes(10));
    trim_line(out, &head("", "self", "", "", "/ances", "/ances", "called/total ancestors"));
    trim_line(out, &head("index", "+", "self", "(%)", "size-func", "frac", "called/recur name [index]"));
    trim_line(out, &head("", "desc", "", "", "\"desc", "\"desc", "called/total descendents"));
    trim_line(out, &rule);
    // Rows are written straight into `out` (a large profile prints ~100k rows).
    let line = |out: &mut String, idx: &str, sd: &str, bytes: u64, pct: Pct, g1: Group, g2: Group, tail: Tail| {
        crate::pad::left(out, idx, wi - 1);
        out.push(' ');
        crate::pad::right(out, sd, wd);
        out.push(' ');
        crate::pad::right(out, &bytes.to_string(), wb);
        out.push(' ');
        pct.write(out, fmt, wp);
        out.push_str(" |");
        g1.write(out, fmt, cw);
        out.push_str(" |");
        g2.write(out, fmt, cw);
        out.push_str(" | ");
        match tail {
            Tail::None => {}
            Tail::Calls(calls, total, e) => {
                let _ = write!(out, "{calls}/{total} {} [{}]", EntityLabel(&r.entities[e]), index[e]);
            }
            Tail::Called(e) => {
                let ent = &r.entities[e];
                let _ = write!(out, "{}", ent.called);
                if ent.recursion > 0 {
                    let _ = write!(out, "+{}", ent.recursion);
                }
                let _ = write!(out, " {} [{}]", EntityLabel(ent), index[e]);
            }
        }
        while out.ends_with(' ') {
            out.pop();
        }
        out.push('\n');
    };
    let sum_edges = |edges: &[&Edge]| -> Vec<Counters> {
        let mut acc = vec![Counters::default(); letters.len()];
        for e in edges {
            for (a, c) in acc.iter_mut().zip(&e.counters) {
                a.add(c);
            }
        }
        acc
    };
    let same_cycle = |a: usize, b: usize| {
        let (ea, eb) = (&r.entities[a], &r.entities[b]);
        !r.cycles_merged && !ea.is_cycle && !eb.is_cycle && ea.cycle.is_some() && ea.cycle == eb.cycle
    };
    let mut ups: Vec<&Edge> = Vec::new();
    let mut downs: Vec<&Edge> = Vec::new();
    for &e in &shown {
        let ent = &r.entities[e];
        ups.clear();
        ups.extend(callers[e].iter().copied());
        ups.sort_by(|a, b| b.bytes().cmp(&a.bytes()).then_with(|| index[a.caller].cmp(&index[b.caller])));
        downs.clear();
        downs.extend(callees[e].iter().copied());
        downs.sort_by(|a, b| b.bytes().cmp(&a.bytes()).then_with(|| index[a.callee].cmp(&index[b.callee])));
        let total = ent.total_bytes();
        // Callers inside the entry's own cycle re-enter memory already credited from
        // outside: they keep exact numbers but stay out of the "all" line and of frac.
        let outside_ups: Vec<&Edge> = ups.iter().copied().filter(|x| !same_cycle(x.caller, e)).collect();
        let ups_all = sum_edges(&outside_ups);
        if ups.len() > 1 {
            let all = sum(&ups_all, |c| c.bytes);
            line(out, "", "all", all, Pct::None, Group::Breakdown(&ups_all), Group::Blank, Tail::None);
        }
        for edge in &ups {
            let fr = if same_cycle(edge.caller, e) { Group::Blank } else { Group::Frac(&edge.counters, &ups_all) };
            let pct = Pct::Graph(edge.bytes(), total);
            let tail = Tail::Calls(edge.calls, out_calls[edge.caller], edge.caller);
            line(out, "", "", edge.bytes(), pct, Group::Breakdown(&edge.counters), fr, tail);
        }
        let size_func = if ent.self_bytes() > 0 { Group::Breakdown(&ent.self_counters) } else { Group::Blank };
        line(
            out,
            &format!("[{}]", index[e]),
            &fmt.decimal(total, total_bytes),
            ent.self_bytes(),
            Pct::Graph(ent.self_bytes(), total),
            size_func,
            Group::Dashes,
            Tail::Called(e),
        );
        if ent.is_cycle && !r.cycles_merged {
            let mut members: Vec<usize> = ent.members.iter().copied().filter(|&m| index[m] != usize::MAX).collect();
            members.sort_by_key(|&m| index[m]);
            for m in members {
                let me = &r.entities[m];
                let pct = Pct::Graph(me.self_bytes(), total);
                line(out, "", "", me.self_bytes(), pct, Group::Breakdown(&me.self_counters), Group::Blank, Tail::Called(m));
            }
        }
        let outside_downs: Vec<&Edge> = downs.iter().copied().filter(|x| !same_cycle(x.callee, e)).collect();
        let downs_all = sum_edges(&outside_downs);
        for edge in &downs {
            let fr = if same_cycle(edge.callee, e) { Group::Blank } else { Group::Frac(&edge.counters, &downs_all) };
            let pct = Pct::Graph(edge.bytes(), total);
            let tail = Tail::Calls(edge.calls, r.entities[edge.callee].called, edge.callee);
            line(out, "", "", edge.bytes(), pct, Group::Breakdown(&edge.counters), fr, tail);
        }
        if downs.len() > 1 {
            let all = sum(&downs_all, |c| c.bytes);
            line(out, "", "all", all, Pct::None, Group::Breakdown(&downs_all), Group::Blank, Tail::None);
        }
        trim_line(out, &rule);
    }
}

/// The "(%)" cell of a call-graph row.
#[derive(Clone, Copy)]
enum Pct {
    None,
    Graph(u64, u64),
}

impl Pct {
    fn write(self, out: &mut String, fmt: &Fmt, w: usize) {
        match self {
            Pct::None => out.extend(std::iter::repeat_n(' ', w)),
            Pct::Graph(part, whole) => {
                crate::pad::right(out, &fmt.paren_graph(part, whole), w);
            }
        }
    }
}

/// A group of category cells of a call-graph row.
#[derive(Clone, Copy)]
enum Group<'a> {
    Blank,
    /// The rule in the frac column of an entry's own line.
    Dashes,
    /// Each category as a share of the group's own total.
    Breakdown(&'a [Counters]),
    /// Each category as a share of the same category in `all`.
    Frac(&'a [Counters], &'a [Counters]),
}

impl Group<'_> {
    fn write(self, out: &mut String, fmt: &Fmt, cw: usize) {
        match self {
            Group::Blank => out.extend(std::iter::repeat_n(' ', fmt.groups * (cw + 1))),
            Group::Dashes => {
                out.push(' ');
                out.extend(std::iter::repeat_n('-', fmt.groups * (cw + 1) - 1));
            }
            Group::Breakdown(cs) => {
                let whole = sum(cs, |c| c.bytes);
                for c in cs {
                    fmt.write_cat(out, c.bytes, whole, cw);
                }
            }
            Group::Frac(cs, all) => {
                for (c, a) in cs.iter().zip(all) {
                    fmt.write_cat(out, c.bytes, a.bytes, cw);
                }
            }
        }
    }
}

/// The name-column text of a call-graph row.
#[derive(Clone, Copy)]
enum Tail {
    None,
    /// called/total and the other end's name.
    Calls(u64, u64, usize),
    /// The entry's own called(+recur) and name.
    Called(usize),
}

struct EntityLabel<'a>(&'a Entity);

impl std::fmt::Display for EntityLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.0.is_cycle, self.0.cycle) {
            (false, Some(c)) => write!(f, "{} <cycle {c}>", self.0.name),
            _ => f.write_str(&self.0.name),
        }
    }
}

// ---------------------------------------------------------------- errors

fn errors_table(out: &mut String, r: &Reduction) {
    let _ = writeln!(out, "Allocation errors");
    out.push('\n');
    let wk = r.errors.iter().map(|e| e.kind.describe().len()).fold(4, usize::max);
    let wc = width_of(5, r.errors.iter().map(|e| e.count));
    let wa = r.errors.iter().map(|e| format!("{:#x}", e.address).len()).fold(7, usize::max);
    trim_line(out, &format!("{} {} {} path", pad_left("kind", wk), pad_right("count", wc), pad_left("address", wa)));
    let mut rows: Vec<_> = r.errors.iter().collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kind.cmp(&b.kind)).then(a.address.cmp(&b.address)));
    for e in rows {
        let line = format!(
            "{} {} {} {}",
            pad_left(e.kind.describe(), wk),
            pad_right(&e.count.to_string(), wc),
            pad_left(&format!("{:#x}", e.address), wa),
            path_text(&e.path)
        );
        trim_line(out, &line);
    }
}
