//! `format` directives, interpreted over a control string, as SBCL prints them.
//!
//! The engine is pure: it prints values through the heap printer and returns
//! the text; the `format` builtin writes it to the destination. The control
//! string is first split into tokens (literal text and directives); the
//! interpreter then walks token slices, finding the matching close directive
//! of `~[ ~{ ~( ~<` by nesting depth when it meets an opener. The pretty
//! printer's directives (`~<...~:>` logical blocks, `~_`, `~I`, `~:T`) do not
//! lay anything out here: they are recorded as [`PrettyOp`]s at their byte
//! offsets in the text ([`Formatted`]), and the `format` builtin replays text
//! and operations through a pretty stream's engine. Inside a logical block,
//! taking an argument is `pprint-pop` (`*print-length*`, dotted tails). Not
//! supported (errors): `~/fn/` with a function of the program's (the
//! `pprint-linear`/`fill`/`tabular` layouts are).
//!
//! Invariants: every malformed control string or unsuitable argument is an
//! `Err` naming the problem, never a panic; `~^` unwinds through [`Flow`]
//! values, never through Rust unwinding. Floats are printed with SBCL's
//! algorithms (Burger & Dybvig digit generation with a cut-off position, and
//! SBCL's floating-point `scale-exponent` for `~E`), so rounding matches.

mod floats;
mod interpret;
#[cfg(test)]
mod tests;
mod words;

use mprof_heap::Value;
use mprof_heap::pretty::{IndentKind, NewlineKind, TabKind};
use mprof_heap::printer::PrintContext;

/// How an error message of FORMAT begins when the output would exhaust the heap
/// (the caller signals a storage-condition for it).
pub const HEAP_EXHAUSTED: &str = "Heap exhausted: ";

/// A pretty-printing operation of FORMAT's output.
#[derive(Clone, Debug, PartialEq)]
pub enum PrettyOp {
    /// A logical block starts (the prefix is not in the text: the engine writes it).
    Start { prefix: String, per_line: bool, suffix: String },
    /// The innermost block ends (its suffix is written by the engine).
    End,
    Newline(NewlineKind),
    Indent(IndentKind, i64),
    Tab(TabKind, i64, i64),
}

/// FORMAT's output: text, and pretty-printing operations at byte offsets in it
/// (in order).
#[derive(Debug, Default)]
pub struct Formatted {
    pub text: String,
    pub ops: Vec<(usize, PrettyOp)>,
    /// How many of the arguments the directives consumed.
    pub consumed: usize,
}

impl Formatted {
    /// The text printed on one line: blocks give their prefixes and suffixes,
    /// newlines, indentations and tabs nothing.
    pub fn flat(self) -> String {
        if self.ops.is_empty() {
            return self.text;
        }
        let mut out = String::with_capacity(self.text.len());
        let mut suffixes = Vec::new();
        let mut at = 0;
        for (pos, op) in &self.ops {
            let mut pos = (*pos).clamp(at, self.text.len());
            while !self.text.is_char_boundary(pos) {
                pos -= 1;
            }
            out.push_str(&self.text[at..pos]);
            at = pos;
            match op {
                PrettyOp::Start { prefix, suffix, .. } => {
                    out.push_str(prefix);
                    suffixes.push(suffix.clone());
                }
                PrettyOp::End => out.push_str(&suffixes.pop().unwrap_or_default()),
                _ => {}
            }
        }
        out.push_str(&self.text[at..]);
        out
    }
}

/// Format `control` with `args`; `Err` carries a message naming the directive.
/// Pretty-printing directives lay nothing out (the text is as if it fit on a line).
pub fn format_to_string<'gc>(ctx: &PrintContext<'_, 'gc>, control: &str, args: &[Value<'gc>]) -> Result<String, String> {
    format_with_column(ctx, control, args, 0, true).map(Formatted::flat)
}

/// As [`format_to_string`], starting at output column `column` (for `~&` and
/// `~T`), with `*print-escape*`'s value (for `~W`), keeping the operations.
pub fn format_with_column<'gc>(
    ctx: &PrintContext<'_, 'gc>,
    control: &str,
    args: &[Value<'gc>],
    column: usize,
    print_escape: bool,
) -> Result<Formatted, String> {
    let toks = tokenize_cached(control)?;
    interpret::run_control(ctx, &toks, args, column, print_escape)
}

/// The error that ends a logical block's body when `pprint-pop` stops
/// (`*print-length*` reached, or a dotted tail): caught by the block.
pub(super) const BLOCK_EXIT: &str = "\u{0}logical block ends";

/// Directives (`~( ~[ ~{ ~< ~?`) nested deeper than this are an error: running a
/// nested body recurses in Rust, and a control string that includes itself
/// through `~?` would otherwise recurse forever.
pub(super) const MAX_DEPTH: usize = 200;

/// The largest numeric directive parameter accepted.
pub(super) const MAX_PARAM: u64 = 1 << 24;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Param {
    Int(i64),
    Char(char),
    /// `v`: take the parameter from the next argument.
    Arg,
    /// `#`: the number of remaining arguments.
    Remaining,
}

#[derive(Clone, Debug)]
pub(super) struct Directive {
    ch: char,
    /// The function name of `~/name/`, upcased (empty for other directives).
    name: String,
    params: Vec<Option<Param>>,
    colon: bool,
    at: bool,
}

#[derive(Clone, Debug)]
pub(super) enum Tok {
    Text(String),
    Dir(Directive),
}

thread_local! {
    /// Parsed control strings: programs format with a few literal strings
    /// over and over, so parsing each once saves most of the engine's allocations.
    static PARSED: std::cell::RefCell<std::collections::HashMap<String, std::rc::Rc<Vec<Tok>>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Entries kept in [`PARSED`] before it is emptied (a bound, not an LRU:
/// programs that build control strings at run time just parse each time).
pub(super) const PARSED_LIMIT: usize = 256;

pub(super) fn tokenize_cached(control: &str) -> Result<std::rc::Rc<Vec<Tok>>, String> {
    if let Some(t) = PARSED.with(|c| c.borrow().get(control).cloned()) {
        return Ok(t);
    }
    let toks = std::rc::Rc::new(tokenize(control)?);
    PARSED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= PARSED_LIMIT {
            c.clear();
        }
        c.insert(control.to_string(), toks.clone());
    });
    Ok(toks)
}

pub(super) fn tokenize(control: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = control.chars().collect();
    let mut toks = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '~' {
            text.push(c);
            i += 1;
            continue;
        }
        i += 1;
        // Parameters and modifiers, in one loop as SBCL parses them;
        // parameters after a modifier (`~:12$`) are an error, as in SBCL.
        let mut params: Vec<Option<Param>> = Vec::new();
        let mut colon = false;
        let mut at = false;
        while let Some(&c) = chars.get(i) {
            let param = if c.is_ascii_digit() || c == '-' || c == '+' {
                let start = i;
                i += 1;
                while chars.get(i).is_some_and(|d| d.is_ascii_digit()) {
                    i += 1;
                }
                let s: String = chars[start..i].iter().collect();
                Some(Param::Int(s.parse::<i64>().map_err(|_| format!("the parameter {s:?} is not a usable integer"))?))
            } else if c == '\'' {
                let Some(&pc) = chars.get(i + 1) else {
                    return Err("the control string ends after a quote in a directive's parameters".into());
                };
                i += 2;
                Some(Param::Char(pc))
            } else if c == 'v' || c == 'V' {
                i += 1;
                Some(Param::Arg)
            } else if c == '#' {
                i += 1;
                Some(Param::Remaining)
            } else {
                None
            };
            if (param.is_some() || c == ',') && (colon || at) {
                return Err("parameters found after a : or @ modifier".into());
            }
            if let Some(p) = param {
                params.push(Some(p));
                match chars.get(i) {
                    Some(',') => i += 1,
                    Some(':') | Some('@') => {}
                    _ => break,
                }
                continue;
            }
            match c {
                ',' => {
                    params.push(None);
                    i += 1;
                }
                ':' if !colon => {
                    colon = true;
                    i += 1;
                }
                '@' if !at => {
                    at = true;
                    i += 1;
                }
                ':' | '@' => return Err(format!("too many {c} modifiers in a directive")),
                _ => {
                    if i > 0 && chars[i - 1] == ',' {
                        params.push(None);
                    }
                    break;
                }
            }
        }
        let Some(&d) = chars.get(i) else {
            return Err("the control string ends inside a directive".to_string());
        };
        i += 1;
        if d == '\n' {
            // ~<newline>: ignore the newline and the whitespace after it; ~:
            // keeps the whitespace, ~@ keeps the newline.
            if at {
                text.push('\n');
            }
            if !colon {
                while chars.get(i).is_some_and(|&c| c == ' ' || c == '\t') {
                    i += 1;
                }
            }
            // The directive is there even when it prints nothing: `~{~<newline>~}`
            // has a body (it does not take its control string from the arguments).
            if text.is_empty() {
                toks.push(Tok::Text(String::new()));
            }
            continue;
        }
        let mut name = String::new();
        if d == '/' {
            let Some(len) = chars[i..].iter().position(|&c| c == '/') else {
                return Err("~/ without the closing / of its function name".into());
            };
            name = chars[i..i + len].iter().collect::<String>().to_uppercase();
            i += len + 1;
        }
        if !text.is_empty() {
            toks.push(Tok::Text(std::mem::take(&mut text)));
        }
        toks.push(Tok::Dir(Directive { ch: d.to_ascii_uppercase(), name, params, colon, at }));
    }
    if !text.is_empty() {
        toks.push(Tok::Text(text));
    }
    Ok(toks)
}
