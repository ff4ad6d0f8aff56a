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
//! supported (errors): `~:;` overflow text in justification, `~/fn/`.
//!
//! Invariants: every malformed control string or unsuitable argument is an
//! `Err` naming the problem, never a panic; `~^` unwinds through [`Flow`]
//! values, never through Rust unwinding. Floats are printed with SBCL's
//! algorithms (Burger & Dybvig digit generation with a cut-off position, and
//! SBCL's floating-point `scale-exponent` for `~E`), so rounding matches.

use mprof_heap::Value;
use mprof_heap::pretty::{IndentKind, NewlineKind, TabKind};
use mprof_heap::printer::{PrintContext, print_to_limited_string, print_to_string};
use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};

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
    let mut f = Fmt { pctx: ctx, out: String::new(), base_col: column, depth: 0, ops: Vec::new(), print_escape };
    let mut a = Args::new(args.to_vec());
    f.run(&toks, &mut a, None)?;
    Ok(Formatted { text: f.out, ops: f.ops, consumed: a.pos })
}

/// The error that ends a logical block's body when `pprint-pop` stops
/// (`*print-length*` reached, or a dotted tail): caught by the block.
const BLOCK_EXIT: &str = "\u{0}logical block ends";

/// Directives (`~( ~[ ~{ ~< ~?`) nested deeper than this are an error: running a
/// nested body recurses in Rust, and a control string that includes itself
/// through `~?` would otherwise recurse forever.
const MAX_DEPTH: usize = 200;

/// The largest numeric directive parameter accepted.
const MAX_PARAM: u64 = 1 << 24;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Param {
    Int(i64),
    Char(char),
    /// `v`: take the parameter from the next argument.
    Arg,
    /// `#`: the number of remaining arguments.
    Remaining,
}

#[derive(Clone, Debug)]
struct Directive {
    ch: char,
    /// The function name of `~/name/`, upcased (empty for other directives).
    name: String,
    params: Vec<Option<Param>>,
    colon: bool,
    at: bool,
}

#[derive(Clone, Debug)]
enum Tok {
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
const PARSED_LIMIT: usize = 256;

fn tokenize_cached(control: &str) -> Result<std::rc::Rc<Vec<Tok>>, String> {
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

fn tokenize(control: &str) -> Result<Vec<Tok>, String> {
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

/// The argument list a directive list consumes, with a cursor (for `~*`).
struct Args<'gc> {
    items: Vec<Value<'gc>>,
    pos: usize,
    /// Inside a logical block: taking an argument is `pprint-pop`.
    block: Option<BlockArgs<'gc>>,
}

/// A logical block's list: its dotted tail (NIL for a proper list), the
/// `*print-length*` in force, and why `pprint-pop` stopped.
struct BlockArgs<'gc> {
    tail: Value<'gc>,
    length: Option<usize>,
    stopped: Option<BlockStop>,
}

#[derive(Clone, Copy)]
enum BlockStop {
    Length,
    Tail,
}

impl<'gc> Args<'gc> {
    fn new(items: Vec<Value<'gc>>) -> Args<'gc> {
        Args { items, pos: 0, block: None }
    }

    fn next(&mut self, d: char) -> Result<Value<'gc>, String> {
        if let Some(b) = &mut self.block {
            if b.length.is_some_and(|n| self.pos >= n) {
                b.stopped = Some(BlockStop::Length);
                return Err(BLOCK_EXIT.into());
            }
            if self.pos >= self.items.len() {
                if !b.tail.is_nil() {
                    b.stopped = Some(BlockStop::Tail);
                    return Err(BLOCK_EXIT.into());
                }
                // pprint-pop of an exhausted list gives NIL.
                return Ok(Value::Nil);
            }
        }
        let v = self.items.get(self.pos).copied().ok_or_else(|| format!("no more arguments for ~{d}"))?;
        self.pos += 1;
        Ok(v)
    }

    /// Arguments left (a dotted tail counts: the next pop prints it).
    fn remaining(&self) -> usize {
        let tail = self.block.as_ref().is_some_and(|b| !b.tail.is_nil());
        self.items.len().saturating_sub(self.pos) + usize::from(tail && self.pos >= self.items.len())
    }
}

/// How a directive list ended: normally, or escaping through `~^` / `~:^`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Flow {
    Normal,
    Up,
    UpUp,
}

/// A resolved parameter value.
#[derive(Clone, Copy, Debug)]
enum PVal {
    Int(i64),
    Char(char),
}

struct Fmt<'a, 'c, 'gc> {
    pctx: &'a PrintContext<'c, 'gc>,
    out: String,
    base_col: usize,
    depth: usize,
    ops: Vec<(usize, PrettyOp)>,
    /// `*print-escape*` (for `~W`).
    print_escape: bool,
}

fn list_items<'gc>(v: Value<'gc>, what: &str) -> Result<Vec<Value<'gc>>, String> {
    let mut items = Vec::new();
    let mut cur = v;
    loop {
        match cur {
            Value::Nil => return Ok(items),
            Value::Cons(c) => {
                // A circular list would otherwise grow this vector until memory runs out.
                if items.len() as u64 >= MAX_PARAM {
                    return Err(format!("the argument of {what} is too long or circular"));
                }
                items.push(c.car.get());
                cur = c.cdr.get();
            }
            _ => return Err(format!("the argument of {what} is not a proper list")),
        }
    }
}

/// A control string argument (`~?`, `~{~}`): a string, or a function made by
/// FORMATTER, which is named `(SYS::FORMATTER control-string)` for this.
fn string_of(v: Value<'_>) -> Option<String> {
    match v {
        Value::String(s) => Some(s.borrow().to_rust_string()),
        Value::Function(f) => match f.name() {
            Value::Cons(c) if matches!(c.car.get(), Value::Symbol(s) if &*s.name == "FORMATTER") => {
                match mprof_heap::alloc::car(c.cdr.get()) {
                    Value::String(s) => Some(s.borrow().to_rust_string()),
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

impl<'a, 'c, 'gc> Fmt<'a, 'c, 'gc> {
    fn column(&self) -> usize {
        match self.out.rfind('\n') {
            Some(i) => self.out[i + 1..].chars().count(),
            None => self.base_col + self.out.chars().count(),
        }
    }

    /// Text for a message (an error's): never fails.
    fn print(&self, v: Value<'gc>, escape: bool) -> String {
        print_to_string(v, &PrintContext { escape, ..*self.pctx })
    }

    /// Text for the output: fails, with [`HEAP_EXHAUSTED`], past the context's `max_output`.
    fn output(&self, v: Value<'gc>, escape: bool) -> Result<String, String> {
        print_to_limited_string(v, &PrintContext { escape, ..*self.pctx }).ok_or_else(|| {
            format!(
                "{HEAP_EXHAUSTED}an argument's printed text would pass {} bytes (a circular list prints without end unless *print-circle* is true)",
                self.pctx.max_output
            )
        })
    }

    /// Resolve `v` and `#` parameters (consuming arguments for `v`).
    fn resolve(&self, d: &Directive, args: &mut Args<'gc>) -> Result<Vec<Option<PVal>>, String> {
        let mut out = Vec::with_capacity(d.params.len());
        for p in &d.params {
            let v = match p {
                None => None,
                Some(Param::Int(n)) => Some(PVal::Int(*n)),
                Some(Param::Char(c)) => Some(PVal::Char(*c)),
                Some(Param::Remaining) => Some(PVal::Int(args.remaining() as i64)),
                Some(Param::Arg) => match args.next('V')? {
                    Value::Nil => None,
                    Value::Fixnum(n) => Some(PVal::Int(n)),
                    Value::Char(c) => Some(PVal::Char(c)),
                    other => return Err(format!("the V parameter {} is neither an integer nor a character", self.print(other, true))),
                },
            };
            // Parameters size padding and digit counts; past this they would only
            // exhaust memory. ~^'s are only compared.
            if let Some(PVal::Int(n)) = v
                && n.unsigned_abs() > MAX_PARAM
                && d.ch != '^'
            {
                return Err(format!("the parameter {n} of ~{} is too large", d.ch));
            }
            out.push(v);
        }
        Ok(out)
    }

    /// Run a control string or a directive's body (the one place FORMAT recurses).
    fn run(&mut self, toks: &[Tok], args: &mut Args<'gc>, outer: Option<bool>) -> Result<Flow, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("format directives nest more than {MAX_DEPTH} deep"));
        }
        self.depth += 1;
        let r = self.run_body(toks, args, outer);
        self.depth -= 1;
        r
    }

    fn run_body(&mut self, toks: &[Tok], args: &mut Args<'gc>, outer: Option<bool>) -> Result<Flow, String> {
        let mut i = 0;
        while i < toks.len() {
            let d = match &toks[i] {
                Tok::Text(s) => {
                    self.out.push_str(s);
                    i += 1;
                    continue;
                }
                Tok::Dir(d) => d,
            };
            match d.ch {
                '[' => {
                    let (close, seps) = find_close(toks, i, ']')?;
                    let flow = self.conditional(d, toks, i, close, &seps, args, outer)?;
                    if flow != Flow::Normal {
                        return Ok(flow);
                    }
                    i = close + 1;
                    continue;
                }
                '{' => {
                    let (close, _) = find_close(toks, i, '}')?;
                    let closed_with_colon = matches!(&toks[close], Tok::Dir(c) if c.colon);
                    self.iteration(d, &toks[i + 1..close], closed_with_colon, args)?;
                    i = close + 1;
                    continue;
                }
                '(' => {
                    let (close, _) = find_close(toks, i, ')')?;
                    let start = self.out.len();
                    let flow = self.run(&toks[i + 1..close], args, outer)?;
                    let converted = case_convert(&self.out[start..], d.colon, d.at);
                    self.out.truncate(start);
                    self.out.push_str(&converted);
                    if flow != Flow::Normal {
                        return Ok(flow);
                    }
                    i = close + 1;
                    continue;
                }
                '^' => {
                    if d.colon && outer.is_none() {
                        return Err("~:^ outside a ~:{...~} construct".into());
                    }
                    let ps = self.resolve(d, args)?;
                    let num = |k: usize| -> Result<Option<i64>, String> {
                        match ps.get(k).copied().flatten() {
                            None => Ok(None),
                            Some(PVal::Int(n)) => Ok(Some(n)),
                            Some(PVal::Char(c)) => Ok(Some(c as i64)),
                        }
                    };
                    let (a1, a2, a3) = (num(0)?, num(1)?, num(2)?);
                    let stop = match (a1, a2, a3) {
                        (Some(x), Some(y), Some(z)) => x <= y && y <= z,
                        (Some(x), Some(y), None) => x == y,
                        (Some(x), None, _) => x == 0,
                        (None, _, _) => {
                            if d.colon {
                                outer == Some(true)
                            } else {
                                args.remaining() == 0
                            }
                        }
                    };
                    if stop {
                        return Ok(if d.colon { Flow::UpUp } else { Flow::Up });
                    }
                }
                ']' | '}' | ')' | '>' => return Err(format!("~{} without a matching open directive", d.ch)),
                ';' => return Err("~; outside ~[...~]".into()),
                '<' => {
                    let (close, seps) = find_close(toks, i, '>')?;
                    if let Tok::Dir(c) = &toks[close]
                        && c.colon
                    {
                        self.logical_block(d, c.at, toks, i, close, &seps, args)?;
                        i = close + 1;
                        continue;
                    }
                    let flow = self.justify(d, toks, i, close, &seps, args)?;
                    if flow == Flow::UpUp {
                        return Ok(flow);
                    }
                    i = close + 1;
                    continue;
                }
                _ => self.simple(d, args)?,
            }
            i += 1;
        }
        Ok(Flow::Normal)
    }

    /// `~<prefix~;body~;suffix~:>`: a logical block over the next argument
    /// (all the remaining ones with `~@<`); `~@;` makes the prefix a per-line
    /// prefix; `~:@>` puts a fill newline after each run of blanks in the body's text.
    #[allow(clippy::too_many_arguments)]
    fn logical_block(
        &mut self,
        d: &Directive,
        fill: bool,
        toks: &[Tok],
        open: usize,
        close: usize,
        seps: &[usize],
        args: &mut Args<'gc>,
    ) -> Result<(), String> {
        let mut bounds = vec![open];
        bounds.extend_from_slice(seps);
        bounds.push(close);
        let segs: Vec<&[Tok]> = bounds.windows(2).map(|w| &toks[w[0] + 1..w[1]]).collect();
        let literal = |seg: &[Tok], what: &str| -> Result<String, String> {
            seg.iter()
                .map(|t| match t {
                    Tok::Text(s) => Ok(s.as_str()),
                    Tok::Dir(_) => Err(format!("the {what} of ~<...~:> must be literal text, without directives")),
                })
                .collect()
        };
        let (mut prefix, mut suffix) = if d.colon { ("(".to_string(), ")".to_string()) } else { (String::new(), String::new()) };
        let body = match segs.len() {
            1 => segs[0],
            2 => {
                prefix = literal(segs[0], "prefix")?;
                segs[1]
            }
            3 => {
                prefix = literal(segs[0], "prefix")?;
                suffix = literal(segs[2], "suffix")?;
                segs[1]
            }
            _ => return Err("~<...~:> takes at most three segments (prefix, body, suffix)".into()),
        };
        let per_line = seps.first().is_some_and(|&s| matches!(&toks[s], Tok::Dir(sep) if sep.at));
        // The list the block prints.
        let (items, tail) = if d.at {
            let rest = args.items[args.pos.min(args.items.len())..].to_vec();
            args.pos = args.items.len();
            (rest, Value::Nil)
        } else {
            let v = args.next('<')?;
            if !matches!(v, Value::Nil | Value::Cons(_)) {
                // Not a list: printed as by WRITE, the body is not run.
                let text = self.output(v, self.print_escape)?;
                self.out.push_str(&text);
                return Ok(());
            }
            let mut items = Vec::new();
            let mut cur = v;
            while let Value::Cons(c) = cur {
                if items.len() as u64 >= MAX_PARAM {
                    return Err("the argument of ~<...~:> is too long or circular".into());
                }
                items.push(c.car.get());
                cur = c.cdr.get();
            }
            (items, cur)
        };
        let filled;
        let body = if fill {
            filled = fill_blanks(body);
            &filled[..]
        } else {
            body
        };
        self.ops.push((self.out.len(), PrettyOp::Start { prefix, per_line, suffix }));
        let mut block_args =
            Args { items, pos: 0, block: Some(BlockArgs { tail, length: self.pctx.length(), stopped: None }) };
        match self.run(body, &mut block_args, None) {
            Ok(_) => {}
            Err(e) if e == BLOCK_EXIT => match block_args.block.as_ref().and_then(|b| b.stopped) {
                Some(BlockStop::Length) => self.out.push_str("..."),
                Some(BlockStop::Tail) => {
                    let tail = block_args.block.as_ref().map_or(Value::Nil, |b| b.tail);
                    let text = self.output(tail, self.print_escape)?;
                    self.out.push_str(". ");
                    self.out.push_str(&text);
                }
                None => {}
            },
            Err(e) => return Err(e),
        }
        self.ops.push((self.out.len(), PrettyOp::End));
        Ok(())
    }

    /// `~/pprint-linear/`, `~/pprint-fill/`, `~/pprint-tabular/`: the list
    /// `v` as those functions lay it out (in parentheses with `:`).
    fn list_layout(&mut self, v: Value<'gc>, colon: bool, kind: NewlineKind, tabsize: Option<i64>) -> Result<(), String> {
        if !matches!(v, Value::Nil | Value::Cons(_)) {
            let text = self.output(v, self.print_escape)?;
            self.out.push_str(&text);
            return Ok(());
        }
        let (prefix, suffix) = if colon { ("(", ")") } else { ("", "") };
        self.ops.push((self.out.len(), PrettyOp::Start { prefix: prefix.into(), per_line: false, suffix: suffix.into() }));
        let mut cur = v;
        let mut count = 0usize;
        while let Value::Cons(c) = cur {
            if count > 0 {
                self.out.push(' ');
                if let Some(t) = tabsize {
                    self.ops.push((self.out.len(), PrettyOp::Tab(TabKind::SectionRelative, 0, t)));
                }
                self.ops.push((self.out.len(), PrettyOp::Newline(kind)));
            }
            if self.pctx.length().is_some_and(|n| count >= n) {
                self.out.push_str("...");
                cur = Value::Nil;
                break;
            }
            if count as u64 >= MAX_PARAM {
                return Err("the list of ~/pprint-.../ is too long or circular".into());
            }
            let text = self.output(c.car.get(), self.print_escape)?;
            self.out.push_str(&text);
            count += 1;
            cur = c.cdr.get();
        }
        if !cur.is_nil() {
            let text = self.output(cur, self.print_escape)?;
            self.out.push_str(" . ");
            self.out.push_str(&text);
        }
        self.ops.push((self.out.len(), PrettyOp::End));
        Ok(())
    }

    /// `~mincol,colinc,minpad,padchar<seg~;seg~>`: justify the segments in a
    /// field, as SBCL's format-justification (`:` pads before, `@` after).
    fn justify(
        &mut self,
        d: &Directive,
        toks: &[Tok],
        open: usize,
        close: usize,
        seps: &[usize],
        args: &mut Args<'gc>,
    ) -> Result<Flow, String> {
        if seps.iter().any(|&s| matches!(&toks[s], Tok::Dir(x) if x.colon)) {
            return Err("~:; in ~<...~> (line-overflow text) is not supported".into());
        }
        // CLHS 22.3.5.2: no pretty-printing directive inside a justification.
        let pretty = |t: &Tok| {
            matches!(t, Tok::Dir(x) if matches!(x.ch, 'W' | '_' | 'I') || (x.colon && matches!(x.ch, 'T' | '>')))
        };
        if toks[open + 1..close].iter().any(pretty) {
            return Err("~W, ~_, ~I, ~:T and ~<...~:> cannot appear inside a ~<...~> justification".into());
        }
        let ps = self.resolve(d, args)?;
        let int = |k: usize, default: i64| -> Result<i64, String> {
            match ps.get(k).copied().flatten() {
                None => Ok(default),
                Some(PVal::Int(n)) => Ok(n),
                Some(PVal::Char(c)) => Err(format!("the parameter {c:?} of ~< should be an integer")),
            }
        };
        let (mincol, colinc, minpad) = (int(0, 0)?, int(1, 1)?, int(2, 0)?);
        let padchar = match ps.get(3).copied().flatten() {
            None => ' ',
            Some(PVal::Char(c)) => c,
            Some(PVal::Int(n)) => return Err(format!("the parameter {n} of ~< should be a character")),
        };
        if colinc <= 0 || mincol < 0 {
            return Err("~< needs a positive colinc and a non-negative mincol".into());
        }
        let mut bounds = vec![open];
        bounds.extend_from_slice(seps);
        bounds.push(close);
        let mut strings: Vec<String> = Vec::new();
        let saved = std::mem::take(&mut self.out);
        let saved_base = self.base_col;
        let mut flow = Flow::Normal;
        for w in bounds.windows(2) {
            self.base_col = 0;
            let r = self.run(&toks[w[0] + 1..w[1]], args, None);
            let seg = std::mem::take(&mut self.out);
            match r {
                Ok(Flow::Normal) => strings.push(seg),
                // ~^ drops the segment it is in and the ones after it.
                Ok(f) => {
                    flow = f;
                    break;
                }
                Err(e) => {
                    self.out = saved;
                    self.base_col = saved_base;
                    return Err(e);
                }
            }
        }
        self.out = saved;
        self.base_col = saved_base;
        let (pad_left, pad_right) = (d.colon, d.at);
        let mut num_gaps = strings.len() as i64 - 1 + pad_left as i64 + pad_right as i64;
        let chars = num_gaps * minpad + strings.iter().map(|s| s.chars().count() as i64).sum::<i64>();
        let length = if chars > mincol { mincol + (chars - mincol + colinc - 1).div_euclid(colinc) * colinc } else { mincol };
        let mut padding = length - chars + num_gaps * minpad;
        let mut do_padding = |out: &mut String| {
            let pad_len = if num_gaps == 0 { padding } else { padding / num_gaps };
            padding -= pad_len;
            num_gaps -= 1;
            out.extend(std::iter::repeat_n(padchar, pad_len.max(0) as usize));
        };
        if pad_left || (!pad_right && strings.len() <= 1) {
            do_padding(&mut self.out);
        }
        if let Some((first, rest)) = strings.split_first() {
            self.out.push_str(first);
            for s in rest {
                do_padding(&mut self.out);
                self.out.push_str(s);
            }
        }
        if pad_right {
            do_padding(&mut self.out);
        }
        Ok(if flow == Flow::UpUp { Flow::UpUp } else { Flow::Normal })
    }

    #[allow(clippy::too_many_arguments)]
    fn conditional(
        &mut self,
        d: &Directive,
        toks: &[Tok],
        open: usize,
        close: usize,
        seps: &[usize],
        args: &mut Args<'gc>,
        outer: Option<bool>,
    ) -> Result<Flow, String> {
        // Clause boundaries: open, each ~; at depth 0, close.
        let mut bounds = vec![open];
        bounds.extend_from_slice(seps);
        bounds.push(close);
        let clauses: Vec<&[Tok]> = bounds.windows(2).map(|w| &toks[w[0] + 1..w[1]]).collect();
        let last_sep_colon = seps.last().is_some_and(|&s| matches!(&toks[s], Tok::Dir(x) if x.colon));
        if d.at && d.colon {
            return Err("~:@[ is not a valid directive".into());
        }
        if d.at {
            if clauses.len() != 1 {
                return Err("~@[ takes exactly one clause".into());
            }
            self.resolve(d, args)?;
            let v = args.next('[')?;
            if v.truthy() {
                args.pos -= 1;
                return self.run(clauses[0], args, outer);
            }
            return Ok(Flow::Normal);
        }
        if d.colon {
            if clauses.len() != 2 {
                return Err("~:[ takes exactly two clauses".into());
            }
            self.resolve(d, args)?;
            let v = args.next('[')?;
            return self.run(if v.truthy() { clauses[1] } else { clauses[0] }, args, outer);
        }
        let ps = self.resolve(d, args)?;
        let index = match ps.first().copied().flatten() {
            Some(PVal::Int(n)) => n,
            Some(PVal::Char(c)) => return Err(format!("the parameter of ~[ is the character {c:?}, not an integer")),
            None => match args.next('[')? {
                Value::Fixnum(n) => n,
                Value::BigInt(_) => -1,
                other => return Err(format!("the argument to ~[ is not an integer: {}", self.print(other, false))),
            },
        };
        let (choices, default) = if last_sep_colon {
            (&clauses[..clauses.len() - 1], clauses.last().copied())
        } else {
            (&clauses[..], None)
        };
        let chosen = if index >= 0 && (index as usize) < choices.len() { Some(choices[index as usize]) } else { default };
        match chosen {
            Some(c) => self.run(c, args, outer),
            None => Ok(Flow::Normal),
        }
    }

    fn iteration(&mut self, d: &Directive, body: &[Tok], closed_with_colon: bool, args: &mut Args<'gc>) -> Result<(), String> {
        let ps = self.resolve(d, args)?;
        let mut max_count = match ps.first().copied().flatten() {
            Some(PVal::Int(n)) => Some(n),
            Some(PVal::Char(_)) => return Err("the parameter of ~{ must be an integer".into()),
            None => None,
        };
        // An empty body takes the control string from the arguments.
        let indirect;
        let body: &[Tok] = if body.is_empty() {
            let v = args.next('{')?;
            let s = string_of(v).ok_or_else(|| format!("~{{~}} needs a control string argument, got {}", self.print(v, true)))?;
            indirect = tokenize_cached(&s)?;
            &indirect[..]
        } else {
            body
        };
        let mut own;
        let iter_args: &mut Args<'gc> = if d.at {
            args
        } else {
            let v = args.next('{')?;
            own = Args::new(list_items(v, "~{")?);
            &mut own
        };
        loop {
            if !closed_with_colon && iter_args.remaining() == 0 {
                break;
            }
            if let Some(m) = max_count.as_mut() {
                *m -= 1;
                if *m < 0 {
                    break;
                }
            }
            let before = iter_args.pos;
            let flow = if d.colon {
                let sub = iter_args.next('{')?;
                let mut sub_args = Args::new(list_items(sub, "~:{")?);
                let outside_empty = iter_args.remaining() == 0;
                self.run(body, &mut sub_args, Some(outside_empty))?
            } else {
                self.run(body, iter_args, None)?
            };
            match flow {
                Flow::Normal => {}
                // In ~:{ a plain ~^ ends only this sublist; elsewhere it ends the loop.
                Flow::Up if d.colon => {}
                Flow::Up | Flow::UpUp => break,
            }
            if closed_with_colon && iter_args.remaining() == 0 {
                break;
            }
            // A body that takes no arguments would loop forever (SBCL hangs); stop with an error.
            if !d.colon && max_count.is_none() && iter_args.pos == before {
                return Err("the body of ~{ consumes no arguments, so the iteration would never end".into());
            }
        }
        Ok(())
    }

    fn simple(&mut self, d: &Directive, args: &mut Args<'gc>) -> Result<(), String> {
        let ps = self.resolve(d, args)?;
        let int = |k: usize, default: Option<i64>| -> Result<Option<i64>, String> {
            match ps.get(k).copied().flatten() {
                None => Ok(default),
                Some(PVal::Int(n)) => Ok(Some(n)),
                Some(PVal::Char(c)) => Err(format!("the parameter {c:?} of ~{} should be an integer", d.ch)),
            }
        };
        let chr = |k: usize, default: char| -> Result<char, String> {
            match ps.get(k).copied().flatten() {
                None => Ok(default),
                Some(PVal::Char(c)) => Ok(c),
                Some(PVal::Int(n)) => Err(format!("the parameter {n} of ~{} should be a character", d.ch)),
            }
        };
        let max_params = |n: usize| -> Result<(), String> {
            if ps.len() > n {
                Err(format!("too many parameters for ~{}: at most {n}", d.ch))
            } else {
                Ok(())
            }
        };
        match d.ch {
            'A' | 'S' => {
                max_params(4)?;
                let v = args.next(d.ch)?;
                let text = if d.colon && v.is_nil() { "()".to_string() } else { self.output(v, d.ch == 'S')? };
                let mincol = int(0, Some(0))?.unwrap_or(0);
                let colinc = int(1, Some(1))?.unwrap_or(1);
                let minpad = int(2, Some(0))?.unwrap_or(0);
                let pad = chr(3, ' ')?;
                write_field(&mut self.out, &text, mincol, colinc, minpad, pad, d.at)?;
            }
            'W' => {
                max_params(0)?;
                let v = args.next('W')?;
                // ~:W prints pretty, ~@W without *print-level* and *print-length*.
                let mut settings = self.pctx.settings;
                if d.colon {
                    settings.pretty = true;
                }
                if d.at {
                    settings.level = None;
                    settings.length = None;
                }
                let pctx = PrintContext { settings, ..*self.pctx };
                let text = Fmt { pctx: &pctx, out: String::new(), base_col: 0, depth: 0, ops: Vec::new(), print_escape: true }
                    .output(v, self.print_escape)?;
                self.out.push_str(&text);
            }
            'C' => {
                max_params(0)?;
                let v = args.next('C')?;
                let Value::Char(ch) = v else {
                    return Err(format!("~C needs a character, got {}", self.print(v, true)));
                };
                if d.colon {
                    if ch != ' ' && crate::runtime::chars::graphic_char_p(ch) {
                        self.out.push(ch);
                    } else {
                        match crate::runtime::chars::char_name_of(ch) {
                            Some(n) => self.out.push_str(&n),
                            None => self.out.push(ch),
                        }
                    }
                } else if d.at {
                    let t = self.print(v, true);
                    self.out.push_str(&t);
                } else {
                    self.out.push(ch);
                }
            }
            'D' | 'B' | 'O' | 'X' => {
                max_params(4)?;
                let radix = match d.ch {
                    'B' => 2,
                    'O' => 8,
                    'X' => 16,
                    _ => 10,
                };
                let v = args.next(d.ch)?;
                if !matches!(v, Value::Fixnum(_) | Value::BigInt(_)) {
                    // SBCL prints a non-integer as by princ, without padding.
                    let t = self.output(v, false)?;
                    self.out.push_str(&t);
                    return Ok(());
                }
                let text = self.integer_text(v, radix, d.colon, d.at, chr(2, ',')?, int(3, Some(3))?.unwrap_or(3))?;
                write_field(&mut self.out, &text, int(0, Some(0))?.unwrap_or(0), 1, 0, chr(1, ' ')?, true)?;
            }
            'R' => {
                max_params(5)?;
                let v = args.next('R')?;
                match int(0, None)? {
                    Some(radix) => {
                        if !(2..=36).contains(&radix) {
                            return Err(format!("the radix {radix} of ~R is not between 2 and 36"));
                        }
                        let text =
                            self.integer_text(v, radix as u32, d.colon, d.at, chr(3, ',')?, int(4, Some(3))?.unwrap_or(3))?;
                        write_field(&mut self.out, &text, int(1, Some(0))?.unwrap_or(0), 1, 0, chr(2, ' ')?, true)?;
                    }
                    None => {
                        let n = match v {
                            Value::Fixnum(n) => BigInt::from(n),
                            Value::BigInt(b) => b.0.clone(),
                            other => return Err(format!("~R needs an integer, got {}", self.print(other, true))),
                        };
                        let text = if d.at {
                            roman(&n, d.colon)?
                        } else if d.colon {
                            ordinal(&n)?
                        } else {
                            cardinal(&n)?
                        };
                        self.out.push_str(&text);
                    }
                }
            }
            'P' => {
                max_params(0)?;
                let v = if d.colon {
                    if args.pos == 0 {
                        return Err("~:P has no previous argument".into());
                    }
                    args.items[args.pos - 1]
                } else {
                    args.next('P')?
                };
                let one = matches!(v, Value::Fixnum(1));
                if d.at {
                    self.out.push_str(if one { "y" } else { "ies" });
                } else if !one {
                    self.out.push('s');
                }
            }
            'F' => {
                if d.colon {
                    return Err("~F takes no colon modifier".into());
                }
                max_params(5)?;
                let v = args.next('F')?;
                let (w, dd, k, ovf, pad) = (int(0, None)?, int(1, None)?, int(2, None)?, opt_chr(&ps, 3)?, chr(4, ' ')?);
                match to_float(v) {
                    Some(x) => {
                        format_fixed_aux(&mut self.out, x, w, dd, k, ovf, pad, d.at);
                    }
                    None => self.non_float(v, w, pad)?,
                }
            }
            'E' => {
                if d.colon {
                    return Err("~E takes no colon modifier".into());
                }
                max_params(7)?;
                let v = args.next('E')?;
                let (w, dd, e, k) = (int(0, None)?, int(1, None)?, int(2, None)?, int(3, Some(1))?.unwrap_or(1));
                let (ovf, pad, mark) = (opt_chr(&ps, 4)?, chr(5, ' ')?, opt_chr(&ps, 6)?);
                match to_float(v) {
                    Some(x) => format_exp_aux(&mut self.out, x, w, dd, e, k, ovf, pad, mark, d.at),
                    None => self.non_float(v, w, pad)?,
                }
            }
            'G' => {
                if d.colon {
                    return Err("~G takes no colon modifier".into());
                }
                max_params(7)?;
                let v = args.next('G')?;
                let (w, dd, e, k) = (int(0, None)?, int(1, None)?, int(2, None)?, int(3, None)?);
                let (ovf, pad, mark) = (opt_chr(&ps, 4)?, chr(5, ' ')?, opt_chr(&ps, 6)?);
                match to_float(v) {
                    Some(x) => format_general_aux(&mut self.out, x, w, dd, e, k, ovf, pad, mark, d.at),
                    None => self.non_float(v, w, pad)?,
                }
            }
            '$' => {
                max_params(4)?;
                let v = args.next('$')?;
                let dd = int(0, Some(2))?.unwrap_or(2);
                let n = int(1, Some(1))?.unwrap_or(1);
                let w = int(2, Some(0))?.unwrap_or(0);
                let pad = chr(3, ' ')?;
                match to_float(v) {
                    Some(x) => format_dollars(&mut self.out, x, dd, n, w, pad, d.colon, d.at),
                    None => {
                        let t = self.output(v, false)?;
                        write_field(&mut self.out, &t, w, 1, 0, ' ', true)?;
                    }
                }
            }
            '%' | '|' | '~' => {
                max_params(1)?;
                let n = int(0, Some(1))?.unwrap_or(1).max(0) as usize;
                let c = match d.ch {
                    '%' => '\n',
                    '|' => '\u{c}',
                    _ => '~',
                };
                self.out.extend(std::iter::repeat_n(c, n));
            }
            '&' => {
                max_params(1)?;
                let n = int(0, Some(1))?.unwrap_or(1);
                if n > 0 {
                    if self.column() != 0 {
                        self.out.push('\n');
                    }
                    self.out.extend(std::iter::repeat_n('\n', (n - 1) as usize));
                }
            }
            'T' => {
                max_params(2)?;
                if d.colon {
                    // Section tabs are the pretty stream's: ~:T, ~:@T.
                    let colnum = int(0, Some(1))?.unwrap_or(1);
                    let colinc = int(1, Some(1))?.unwrap_or(1);
                    let kind = if d.at { TabKind::SectionRelative } else { TabKind::Section };
                    self.ops.push((self.out.len(), PrettyOp::Tab(kind, colnum, colinc)));
                    return Ok(());
                }
                let cur = self.column() as i64;
                let spaces = if d.at {
                    let colrel = int(0, Some(1))?.unwrap_or(1);
                    let colinc = int(1, Some(1))?.unwrap_or(1);
                    if colinc > 0 { ((cur + colrel + colinc - 1).div_euclid(colinc)) * colinc - cur } else { colrel }
                } else {
                    let colnum = int(0, Some(1))?.unwrap_or(1);
                    let colinc = int(1, Some(1))?.unwrap_or(1);
                    if cur < colnum {
                        colnum - cur
                    } else if colinc > 0 {
                        colinc - (cur - colnum).rem_euclid(colinc)
                    } else {
                        0
                    }
                };
                self.out.extend(std::iter::repeat_n(' ', spaces.max(0) as usize));
            }
            '*' => {
                max_params(1)?;
                if d.colon && d.at {
                    return Err("~:@* is not a valid directive".into());
                }
                let len = args.items.len() as i64;
                let target = if d.at {
                    int(0, Some(0))?.unwrap_or(0)
                } else if d.colon {
                    args.pos as i64 - int(0, Some(1))?.unwrap_or(1)
                } else {
                    let n = int(0, Some(1))?.unwrap_or(1);
                    for _ in 0..n.max(0) {
                        args.next('*')?;
                    }
                    args.pos as i64
                };
                if !(0..=len).contains(&target) {
                    return Err(format!("~* moves to argument {target}, outside 0..{len}"));
                }
                args.pos = target as usize;
            }
            '?' => {
                max_params(0)?;
                if d.colon {
                    return Err("~? takes no colon modifier".into());
                }
                let c = args.next('?')?;
                let s = string_of(c).ok_or_else(|| format!("~? needs a control string, got {}", self.print(c, true)))?;
                let toks = tokenize_cached(&s)?;
                if d.at {
                    self.run(&toks, args, None)?;
                } else {
                    let l = args.next('?')?;
                    let mut sub = Args::new(list_items(l, "~?")?);
                    self.run(&toks, &mut sub, None)?;
                }
            }
            '/' => {
                let name = d.name.rsplit(':').next().unwrap_or("");
                let kind = match name {
                    "PPRINT-LINEAR" => NewlineKind::Linear,
                    "PPRINT-FILL" => NewlineKind::Fill,
                    "PPRINT-TABULAR" => NewlineKind::Fill,
                    _ => return Err(format!("~/{}/ calls a function, which FORMAT does only for PPRINT-LINEAR, PPRINT-FILL and PPRINT-TABULAR", d.name)),
                };
                let tabsize = if name == "PPRINT-TABULAR" { Some(int(0, Some(16))?.unwrap_or(16)) } else { None };
                let v = args.next('/')?;
                self.list_layout(v, d.colon, kind, tabsize)?;
            }
            '_' => {
                max_params(0)?;
                let kind = match (d.colon, d.at) {
                    (false, false) => NewlineKind::Linear,
                    (true, false) => NewlineKind::Fill,
                    (false, true) => NewlineKind::Miser,
                    (true, true) => NewlineKind::Mandatory,
                };
                self.ops.push((self.out.len(), PrettyOp::Newline(kind)));
            }
            'I' => {
                max_params(1)?;
                let n = int(0, Some(0))?.unwrap_or(0);
                let kind = if d.colon { IndentKind::Current } else { IndentKind::Block };
                self.ops.push((self.out.len(), PrettyOp::Indent(kind, n)));
            }
            other => return Err(format!("unknown format directive ~{other}")),
        }
        Ok(())
    }

    /// ~F/~E/~G of a non-number: princ in the field width.
    fn non_float(&mut self, v: Value<'gc>, w: Option<i64>, pad: char) -> Result<(), String> {
        let t = self.print(v, false);
        match w {
            Some(w) => write_field(&mut self.out, &t, w, 1, 0, pad, false),
            None => {
                self.out.push_str(&t);
                Ok(())
            }
        }
    }

    fn integer_text(&self, v: Value<'gc>, radix: u32, commas: bool, sign: bool, comma: char, interval: i64) -> Result<String, String> {
        let (neg, digits) = match v {
            Value::Fixnum(n) => (n < 0, to_radix(n.unsigned_abs() as u128, radix)),
            Value::BigInt(b) => (b.0.is_negative(), b.0.abs().to_str_radix(radix).to_uppercase()),
            // Not an integer: printed as by princ, in decimal.
            other => return Ok(self.print(other, false)),
        };
        if interval <= 0 {
            return Err("the comma interval must be positive".into());
        }
        let digits = if commas { group_digits(&digits, comma, interval as usize) } else { digits };
        Ok(if neg {
            format!("-{digits}")
        } else if sign {
            format!("+{digits}")
        } else {
            digits
        })
    }
}

/// A body's tokens with a fill newline (`~:_`) after each run of blanks in its
/// text (`~<...~:@>`).
fn fill_blanks(body: &[Tok]) -> Vec<Tok> {
    let fill = || Tok::Dir(Directive { ch: '_', name: String::new(), params: Vec::new(), colon: true, at: false });
    let mut out = Vec::new();
    for t in body {
        let Tok::Text(text) = t else {
            out.push(t.clone());
            continue;
        };
        let mut piece = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            piece.push(c);
            if c == ' ' && chars.peek() != Some(&' ') {
                out.push(Tok::Text(std::mem::take(&mut piece)));
                out.push(fill());
            }
        }
        if !piece.is_empty() {
            out.push(Tok::Text(piece));
        }
    }
    out
}

fn opt_chr(ps: &[Option<PVal>], k: usize) -> Result<Option<char>, String> {
    match ps.get(k).copied().flatten() {
        None => Ok(None),
        Some(PVal::Char(c)) => Ok(Some(c)),
        Some(PVal::Int(n)) => Err(format!("the parameter {n} should be a character")),
    }
}

/// Find the directive closing the opener at `open`; also the `~;` separators at its top level.
fn find_close(toks: &[Tok], open: usize, close: char) -> Result<(usize, Vec<usize>), String> {
    let mut stack: Vec<char> = vec![close];
    let mut seps = Vec::new();
    for (j, t) in toks.iter().enumerate().skip(open + 1) {
        let Tok::Dir(d) = t else { continue };
        match d.ch {
            '[' => stack.push(']'),
            '{' => stack.push('}'),
            '(' => stack.push(')'),
            '<' => stack.push('>'),
            ']' | '}' | ')' | '>' => {
                if stack.last() != Some(&d.ch) {
                    return Err(format!("~{} does not match the open directive", d.ch));
                }
                stack.pop();
                if stack.is_empty() {
                    return Ok((j, seps));
                }
            }
            ';' if stack.len() == 1 => seps.push(j),
            _ => {}
        }
    }
    Err(format!("no matching ~{close} for an open directive"))
}

/// Case conversion of `~(...~)`: plain downcases, `:` capitalizes every
/// word, `@` capitalizes the first word, `:@` upcases.
fn case_convert(s: &str, colon: bool, at: bool) -> String {
    match (colon, at) {
        (false, false) => s.to_lowercase(),
        (true, true) => s.to_uppercase(),
        (true, false) => capitalize_words(s, false),
        (false, true) => capitalize_words(s, true),
    }
}

fn capitalize_words(s: &str, first_only: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_word = false;
    let mut seen_word = false;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if !in_word && (!first_only || !seen_word) {
                out.extend(c.to_uppercase());
            } else {
                out.extend(c.to_lowercase());
            }
            in_word = true;
            seen_word = true;
        } else {
            in_word = false;
            out.push(c);
        }
    }
    out
}

/// SBCL's format-write-field.
fn write_field(out: &mut String, s: &str, mincol: i64, colinc: i64, minpad: i64, pad: char, padleft: bool) -> Result<(), String> {
    if colinc <= 0 {
        return Err(format!("the value of colinc is {colinc}, should be a positive integer"));
    }
    // A negative mincol pads nothing, as in SBCL.
    let len = s.chars().count() as i64;
    let mut padding = minpad.max(0);
    let mut chars = len + padding;
    while chars < mincol {
        chars += colinc;
        padding += colinc;
    }
    if !padleft {
        out.push_str(s);
    }
    out.extend(std::iter::repeat_n(pad, padding as usize));
    if padleft {
        out.push_str(s);
    }
    Ok(())
}

fn to_radix(mut n: u128, radix: u32) -> String {
    if n == 0 {
        return "0".to_string();
    }
    let mut digits = Vec::new();
    while n > 0 {
        let d = (n % radix as u128) as u32;
        digits.push(std::char::from_digit(d, radix).unwrap_or('?').to_ascii_uppercase());
        n /= radix as u128;
    }
    digits.iter().rev().collect()
}

fn group_digits(s: &str, comma: char, interval: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if i > 0 && (chars.len() - i).is_multiple_of(interval) {
            out.push(comma);
        }
        out.push(*c);
    }
    out
}

// ---- ~R in English and Roman numerals ----

const ONES: [&str; 10] = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
const TENS: [&str; 10] = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
const TEENS: [&str; 10] =
    ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"];
const PERIODS: [&str; 22] = [
    "",
    " thousand",
    " million",
    " billion",
    " trillion",
    " quadrillion",
    " quintillion",
    " sextillion",
    " septillion",
    " octillion",
    " nonillion",
    " decillion",
    " undecillion",
    " duodecillion",
    " tredecillion",
    " quattuordecillion",
    " quindecillion",
    " sexdecillion",
    " septendecillion",
    " octodecillion",
    " novemdecillion",
    " vigintillion",
];
const ORD_ONES: [&str; 10] = ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"];
const ORD_TENS: [&str; 10] =
    ["", "tenth", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth"];

fn small_cardinal(out: &mut String, n: usize) {
    let (hundreds, rem) = (n / 100, n % 100);
    if hundreds > 0 {
        out.push_str(ONES[hundreds]);
        out.push_str(" hundred");
        if rem > 0 {
            out.push(' ');
        }
    }
    if rem > 0 {
        let (tens, ones) = (rem / 10, rem % 10);
        if tens > 1 {
            out.push_str(TENS[tens]);
            if ones > 0 {
                out.push('-');
                out.push_str(ONES[ones]);
            }
        } else if tens == 1 {
            out.push_str(TEENS[ones]);
        } else {
            out.push_str(ONES[ones]);
        }
    }
}

fn cardinal(n: &BigInt) -> Result<String, String> {
    let mut out = String::new();
    if n.is_zero() {
        return Ok("zero".into());
    }
    if n.is_negative() {
        out.push_str("negative ");
    }
    // Groups of three decimal digits, most significant first.
    let digits = n.abs().to_string();
    let groups: Vec<usize> = {
        let chars: Vec<char> = digits.chars().collect();
        let first = chars.len() % 3;
        let mut gs = Vec::new();
        if first > 0 {
            gs.push(chars[..first].iter().collect::<String>());
        }
        for c in chars[first..].chunks(3) {
            gs.push(c.iter().collect());
        }
        gs.iter().map(|g| g.parse::<usize>().unwrap_or(0)).collect()
    };
    if groups.len() > PERIODS.len() {
        return Err(format!("the number {n} is too large to print in English"));
    }
    let mut first = true;
    for (i, &g) in groups.iter().enumerate() {
        if g == 0 {
            continue;
        }
        if !first {
            out.push(' ');
        }
        first = false;
        small_cardinal(&mut out, g);
        out.push_str(PERIODS[groups.len() - 1 - i]);
    }
    Ok(out)
}

fn ordinal(n: &BigInt) -> Result<String, String> {
    let mut out = String::new();
    if n.is_negative() {
        out.push_str("negative ");
    }
    let number = n.abs();
    let hundred = BigInt::from(100);
    let bot = (&number % &hundred).to_usize().unwrap_or(0);
    let top = &number / &hundred;
    if !top.is_zero() {
        out.push_str(&cardinal(&(&number - BigInt::from(bot)))?);
    }
    if !top.is_zero() && bot > 0 {
        out.push(' ');
    }
    let (tens, ones) = (bot / 10, bot % 10);
    if bot == 12 {
        out.push_str("twelfth");
    } else if tens == 1 {
        out.push_str(TEENS[ones]);
        out.push_str("th");
    } else if tens == 0 && ones > 0 {
        out.push_str(ORD_ONES[ones]);
    } else if ones == 0 && tens > 0 {
        out.push_str(ORD_TENS[tens]);
    } else if bot > 0 {
        out.push_str(TENS[tens]);
        out.push('-');
        out.push_str(ORD_ONES[ones]);
    } else if !number.is_zero() {
        out.push_str("th");
    } else {
        out.push_str("zeroth");
    }
    Ok(out)
}

fn roman(n: &BigInt, old: bool) -> Result<String, String> {
    let limit = if old { 5000 } else { 4000 };
    let v = n.to_i64().filter(|&v| v > 0 && v < limit).ok_or_else(|| {
        format!("the number {n} cannot be printed in {}Roman numerals", if old { "old " } else { "" })
    })?;
    let table: &[(i64, &str)] = if old {
        &[(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]
    } else {
        &[
            (1000, "M"),
            (900, "CM"),
            (500, "D"),
            (400, "CD"),
            (100, "C"),
            (90, "XC"),
            (50, "L"),
            (40, "XL"),
            (10, "X"),
            (9, "IX"),
            (5, "V"),
            (4, "IV"),
            (1, "I"),
        ]
    };
    let mut rest = v;
    let mut out = String::new();
    for &(val, s) in table {
        while rest >= val {
            out.push_str(s);
            rest -= val;
        }
    }
    Ok(out)
}

// ---- floats ----

/// A float to print, with its format: doubles, or singles (what rationals
/// become under ~F ~E ~G ~$, as in SBCL).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flo {
    pub x: f64,
    pub single: bool,
}

fn to_float(v: Value<'_>) -> Option<Flo> {
    match v {
        Value::Float(f) => Some(Flo { x: f.val, single: false }),
        Value::Fixnum(n) => Some(Flo { x: n as f32 as f64, single: true }),
        Value::BigInt(b) => Some(Flo { x: b.0.to_f32().unwrap_or(f32::INFINITY) as f64, single: true }),
        Value::Ratio(r) => {
            let x = ratio_to_f64(&r.num, &r.den);
            Some(Flo { x: x as f32 as f64, single: true })
        }
        _ => None,
    }
}

fn ratio_to_f64(num: &BigInt, den: &BigInt) -> f64 {
    match (num.to_f64(), den.to_f64()) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() => a / b,
        _ => {
            // Scale down huge numerators/denominators before dividing.
            let shift = num.bits().max(den.bits()).saturating_sub(1000);
            let a = (num >> shift).to_f64().unwrap_or(0.0);
            let b = (den >> shift).to_f64().unwrap_or(1.0);
            a / b
        }
    }
}

impl Flo {
    fn with(self, x: f64) -> Flo {
        Flo { x, single: self.single }
    }
    fn is_special(self) -> bool {
        !self.x.is_finite()
    }
    /// (integer-decode-float x) and (float-digits x), min-e for |x|.
    fn decode(self) -> (u64, i32, u32, i32) {
        if self.single {
            let bits = (self.x.abs() as f32).to_bits();
            let exp = ((bits >> 23) & 0xff) as i32;
            let frac = (bits & 0x7f_ffff) as u64;
            let (f, e) = if exp == 0 { (frac, -149) } else { (frac | 0x80_0000, exp - 150) };
            (f, e, 24, -148)
        } else {
            let bits = self.x.abs().to_bits();
            let exp = ((bits >> 52) & 0x7ff) as i32;
            let frac = bits & 0xf_ffff_ffff_ffff;
            let (f, e) = if exp == 0 { (frac, -1074) } else { (frac | (1 << 52), exp - 1075) };
            (f, e, 53, -1073)
        }
    }
    /// Infinities and NaNs print as the printer prints them.
    fn print(self) -> String {
        if self.single && self.x.is_infinite() {
            let sign = if self.x > 0.0 { "POSITIVE" } else { "NEGATIVE" };
            format!("#.SB-EXT:SINGLE-FLOAT-{sign}-INFINITY")
        } else {
            mprof_heap::printer::format_float(self.x)
        }
    }
}

fn pow10(n: u32) -> BigInt {
    num_traits::pow(BigInt::from(10), n as usize)
}

/// SBCL's FLONUM-TO-DIGITS (Burger & Dybvig with a cut-off position):
/// returns the decimal exponent k and the digit string.
fn flonum_to_digits(v: Flo, position: Option<i64>, relativep: bool) -> (i64, String) {
    let (f, e, float_digits, min_e) = v.decode();
    if f == 0 {
        return (0, "0".into());
    }
    let f = BigInt::from(f);
    let mut high_ok = f.clone() % 2u32 == BigInt::zero();
    let mut low_ok = high_ok;
    let hidden = BigInt::one() << (float_digits - 1);
    let (mut r, mut s, mut mp, mut mm);
    if e >= 0 {
        let be = BigInt::one() << e as u32;
        if f != hidden {
            r = &f * &be * 2;
            s = BigInt::from(2);
            mp = be.clone();
            mm = be;
        } else {
            mm = be.clone();
            mp = &be * 2;
            r = &f * &mp * 2;
            s = BigInt::from(4);
        }
    } else if e == min_e || f != hidden {
        r = &f * 2;
        s = BigInt::one() << (1 - e) as u32;
        mp = BigInt::one();
        mm = BigInt::one();
    } else {
        r = &f * 4;
        s = BigInt::one() << (2 - e) as u32;
        mp = BigInt::from(2);
        mm = BigInt::one();
    }
    if let Some(mut position) = position {
        if relativep {
            // Find k̂, then make the position absolute.
            let mut k: i64 = 0;
            let mut l = BigInt::one();
            while &s * &l < &r + &mp {
                k += 1;
                l *= 10;
            }
            // r + s*10^(k-position)/2 < s*l, multiplied through to stay integral.
            let d = k - position;
            let lhs_less = if d >= 0 {
                &r * 2 + &s * pow10(d as u32) < &s * &l * 2
            } else {
                let m = pow10((-d) as u32);
                &r * 2 * &m + &s < &s * &l * 2 * &m
            };
            position = if lhs_less { k - position } else { k - position - 1 };
        }
        // x = s * 10^position / 2; scale everything so x stays an integer.
        let x;
        if position < 0 {
            let factor = pow10((-position).min(4000) as u32) * 2;
            x = s.clone();
            r *= &factor;
            s *= &factor;
            mp *= &factor;
            mm *= &factor;
        } else {
            let factor = BigInt::from(2);
            r *= &factor;
            s *= &factor;
            mp *= &factor;
            mm *= &factor;
            x = &s * pow10(position.min(4000) as u32) / 2;
        }
        if mm <= x {
            mm = x.clone();
            low_ok = true;
        }
        if mp <= x {
            mp = x;
            high_ok = true;
        }
    }
    // The digit loops only multiply by 10 and compare: when the inputs are
    // below 2^100 every intermediate value stays below 2^114, so u128
    // arithmetic (no allocation) gives the same digits as bignums.
    let limit = BigInt::one() << 100u32;
    let small = [&r, &s, &mp, &mm].iter().all(|v| **v < limit);
    let (k, mut digits) = match (small, r.to_u128(), s.to_u128(), mp.to_u128(), mm.to_u128()) {
        (true, Some(r), Some(s), Some(mp), Some(mm)) => scale_and_generate(r, s, mp, mm, high_ok, low_ok),
        _ => scale_and_generate(r, s, mp, mm, high_ok, low_ok),
    };
    let mut k = k;
    // A final digit of 10 carries into the digits before it.
    let mut i = digits.len();
    while i > 0 && digits[i - 1] >= 10 {
        digits[i - 1] -= 10;
        if i >= 2 {
            digits[i - 2] += 1;
        } else {
            digits.insert(0, 1);
            k += 1;
            break;
        }
        i -= 1;
    }
    let s: String = digits.iter().map(|d| (b'0' + d) as char).collect();
    (k, s)
}

/// The integer operations the digit loops need, for bignums and for u128.
trait DigitArith: Ord + Sized {
    fn plus(&self, other: &Self) -> Self;
    fn times10(&mut self);
    fn twice(&self) -> Self;
    /// (self * 10) divided by `s`: the digit, and the remainder into self.
    fn next_digit(&mut self, s: &Self) -> u8;
}

impl DigitArith for BigInt {
    fn plus(&self, other: &Self) -> Self {
        self + other
    }
    fn times10(&mut self) {
        *self *= 10u32;
    }
    fn twice(&self) -> Self {
        self * 2u32
    }
    fn next_digit(&mut self, s: &Self) -> u8 {
        *self *= 10u32;
        let (q, r) = num_integer::Integer::div_rem(&*self, s);
        *self = r;
        q.to_u8().unwrap_or(0)
    }
}

impl DigitArith for u128 {
    fn plus(&self, other: &Self) -> Self {
        self.saturating_add(*other)
    }
    fn times10(&mut self) {
        *self = self.saturating_mul(10);
    }
    fn twice(&self) -> Self {
        self.saturating_mul(2)
    }
    fn next_digit(&mut self, s: &Self) -> u8 {
        let x = self.saturating_mul(10);
        let s = (*s).max(1);
        *self = x % s;
        (x / s).min(255) as u8
    }
}

/// FLONUM-TO-DIGITS' `scale` and `generate`: the decimal exponent and the digits.
fn scale_and_generate<N: DigitArith>(mut r: N, mut s: N, mut mp: N, mut mm: N, high_ok: bool, low_ok: bool) -> (i64, Vec<u8>) {
    let mut k: i64 = 0;
    let rmp = r.plus(&mp);
    while rmp > s || (high_ok && rmp == s) {
        s.times10();
        k += 1;
    }
    while r > mm {
        let mut x = r.plus(&mp);
        x.times10();
        if x < s || (!high_ok && x == s) {
            k -= 1;
            r.times10();
            mp.times10();
            mm.times10();
        } else {
            break;
        }
    }
    let mut digits: Vec<u8> = Vec::new();
    loop {
        let d = r.next_digit(&s);
        mp.times10();
        mm.times10();
        let tc1 = r < mm || (low_ok && r == mm);
        let rmp = r.plus(&mp);
        let tc2 = rmp > s || (high_ok && rmp == s);
        if tc1 || tc2 {
            // Round up when only the high end terminates, or on a tie-break past half.
            let up = if tc1 != tc2 { tc2 } else { r.twice() >= s };
            digits.push(if up { d + 1 } else { d });
            break;
        }
        digits.push(d);
        if digits.len() > 5000 {
            break;
        }
    }
    (k, digits)
}

/// SBCL's FLONUM-TO-STRING: (string, length, leading point?, trailing point?, point position).
fn flonum_to_string(
    x: Flo,
    width: Option<i64>,
    fdigits: Option<i64>,
    scale: Option<i64>,
    fmin: Option<i64>,
) -> (String, usize, bool, bool, usize) {
    let x = x.with(x.x.abs());
    let (e, string) = if x.x == 0.0 {
        // Zero: FLONUM-TO-DIGITS yields exponent 0 and the digit "0".
        (0, "0".to_string())
    } else if let Some(fd) = fdigits {
        flonum_to_digits(x, Some((-(fd + scale.unwrap_or(0))).min(-fmin.unwrap_or(0))), false)
    } else if let Some(w) = width.filter(|&w| w > 1) {
        let sc = scale.unwrap_or(0);
        let wres = flonum_to_digits(x, Some(1.max(w - 1 + if sc < 0 { sc } else { 0 })), true);
        let fres = flonum_to_digits(x, Some(-(fmin.unwrap_or(0) + sc)), false);
        if wres.1.len() >= fres.1.len() { wres } else { fres }
    } else {
        flonum_to_digits(x, None, false)
    };
    let e = if x.x == 0.0 { e } else { e + scale.unwrap_or(0) };
    let len = string.len() as i64;
    let mut out = String::new();
    if e > 0 {
        out.push_str(&string[..len.min(e) as usize]);
        out.extend(std::iter::repeat_n('0', (e - len).max(0) as usize));
        out.push('.');
        out.push_str(&string[len.min(e) as usize..]);
        if let Some(fd) = fdigits {
            out.extend(std::iter::repeat_n('0', (fd - (len - len.min(e))).max(0) as usize));
        }
    } else {
        out.push('.');
        out.extend(std::iter::repeat_n('0', (-e) as usize));
        let end = match fdigits {
            Some(fd) => len.min(fmin.unwrap_or(0).max(fd + e)).max(0) as usize,
            None => len as usize,
        };
        out.push_str(&string[..end]);
        if let Some(fd) = fdigits {
            out.extend(std::iter::repeat_n('0', (fd + e - len).max(0) as usize));
        }
    }
    let n = out.chars().count();
    let lpoint = out.starts_with('.');
    let tpoint = out.ends_with('.');
    let pos = out.find('.').unwrap_or(0);
    (out, n, lpoint, tpoint, pos)
}

#[allow(clippy::too_many_arguments)]
fn format_fixed_aux(
    out: &mut String,
    number: Flo,
    w: Option<i64>,
    d: Option<i64>,
    k: Option<i64>,
    ovf: Option<char>,
    pad: char,
    atsign: bool,
) -> bool {
    if number.is_special() {
        out.push_str(&number.print());
        return false;
    }
    let neg = number.x.is_sign_negative();
    let mut spaceleft = w;
    if let Some(s) = spaceleft.as_mut()
        && (atsign || neg)
    {
        *s -= 1;
    }
    let (s, len, mut lpoint, mut tpoint, _) = flonum_to_string(number, spaceleft, d, k, None);
    if d == Some(0) {
        tpoint = false;
    }
    if let Some(sl) = spaceleft.as_mut() {
        *sl -= len as i64;
        if lpoint {
            if *sl > 0 || tpoint {
                *sl -= 1;
            } else {
                lpoint = false;
            }
        }
        if tpoint {
            if *sl > 0 {
                *sl -= 1;
            } else {
                tpoint = false;
            }
        }
    }
    if let (Some(w), Some(sl), Some(o)) = (w, spaceleft, ovf)
        && sl < 0
    {
        out.extend(std::iter::repeat_n(o, w.max(0) as usize));
        return true;
    }
    if let Some(sl) = spaceleft {
        out.extend(std::iter::repeat_n(pad, sl.max(0) as usize));
    }
    if neg {
        out.push('-');
    } else if atsign {
        out.push('+');
    }
    if lpoint {
        out.push('0');
    }
    out.push_str(&s);
    if tpoint {
        out.push('0');
    }
    false
}

/// SBCL's SCALE-EXPONENT, in double arithmetic as SBCL does it: a number in
/// (0.1, 1] and a decimal exponent.
fn scale_exponent(x: f64) -> (f64, i64) {
    if x == 0.0 {
        return (0.0, 1);
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let denormal = biased == 0;
    // (decode-float x) exponent: x = sig * 2^exponent with sig in [0.5, 1).
    let exponent = if denormal {
        let frac = bits & 0xf_ffff_ffff_ffff;
        -1022 - (frac.leading_zeros() as i64 - 12)
    } else {
        biased - 1022
    };
    let log10_2 = f64::from_bits(0x3FD3_4413_509F_79FF);
    let ex0 = round_half_even(exponent as f64 * log10_2);
    let expt10 = |n: i64| -> f64 { 10f64.powf(n as f64) };
    let x = if ex0 < 0 {
        if denormal {
            x * 1.0e16 * expt10(-ex0 - 16)
        } else {
            x * 10.0 * expt10(-ex0 - 1)
        }
    } else {
        x / 10.0 / expt10(ex0 - 1)
    };
    let mut d = 10.0f64;
    let mut y = x;
    let mut ex = ex0;
    while y >= 1.0 {
        y = x / d;
        d *= 10.0;
        ex += 1;
    }
    let mut m = 10.0f64;
    let mut z = y;
    while z < 0.1 {
        z = y * m;
        m *= 10.0;
        ex -= 1;
    }
    (z, ex)
}

fn round_half_even(v: f64) -> i64 {
    let r = v.round();
    if (v - v.trunc()).abs() == 0.5 {
        let t = v.trunc();
        if (t as i64) % 2 == 0 { t as i64 } else { r as i64 }
    } else {
        r as i64
    }
}

#[allow(clippy::too_many_arguments)]
fn format_exp_aux(
    out: &mut String,
    number: Flo,
    w: Option<i64>,
    d: Option<i64>,
    e: Option<i64>,
    k: i64,
    ovf: Option<char>,
    pad: char,
    marker: Option<char>,
    atsign: bool,
) {
    if number.is_special() {
        out.push_str(&number.print());
        return;
    }
    let (num, expt) = if number.single {
        let (n, ex) = scale_exponent(number.x.abs());
        // Singles scale in double arithmetic, then come back to single precision.
        (n as f32 as f64, ex)
    } else {
        scale_exponent(number.x.abs())
    };
    let num = number.with(num);
    let k = if num.x == 1.0 { k - 1 } else { k };
    let expt = expt - k;
    let estr = expt.abs().to_string();
    let elen = match e {
        Some(e) => (estr.len() as i64).max(e),
        None => estr.len() as i64,
    };
    let neg = number.x.is_sign_negative();
    let mut spaceleft = w.map(|w| w - 2 - elen - if atsign || neg { 1 } else { 0 });
    if let (Some(w), Some(o), Some(e)) = (w, ovf, e)
        && elen > e
    {
        out.extend(std::iter::repeat_n(o, w.max(0) as usize));
        return;
    }
    let fdig = d.map(|d| if k > 0 { d - k + 1 } else { d });
    let fmin = if k < 0 { Some(1) } else { fdig };
    let (fstr, flen, mut lpoint, mut tpoint, _) = flonum_to_string(num, spaceleft, fdig, Some(k), fmin);
    if d == Some(0) {
        tpoint = false;
    }
    if let Some(sl) = spaceleft.as_mut() {
        *sl -= flen as i64;
        if lpoint {
            if *sl > 0 || tpoint {
                *sl -= 1;
            } else {
                lpoint = false;
            }
        }
        if tpoint && *sl <= 0 {
            tpoint = false;
        }
    }
    if let (Some(w), Some(sl), Some(o)) = (w, spaceleft, ovf)
        && sl < 0
    {
        out.extend(std::iter::repeat_n(o, w.max(0) as usize));
        return;
    }
    if let Some(sl) = spaceleft {
        out.extend(std::iter::repeat_n(pad, sl.max(0) as usize));
    }
    if neg {
        out.push('-');
    } else if atsign {
        out.push('+');
    }
    if lpoint {
        out.push('0');
    }
    out.push_str(&fstr);
    if tpoint {
        out.push('0');
    }
    out.push(marker.unwrap_or(if number.single { 'f' } else { 'e' }));
    out.push(if expt < 0 { '-' } else { '+' });
    if let Some(e) = e {
        out.extend(std::iter::repeat_n('0', (e - estr.len() as i64).max(0) as usize));
    }
    out.push_str(&estr);
}

#[allow(clippy::too_many_arguments)]
fn format_general_aux(
    out: &mut String,
    number: Flo,
    w: Option<i64>,
    d: Option<i64>,
    e: Option<i64>,
    k: Option<i64>,
    ovf: Option<char>,
    pad: char,
    marker: Option<char>,
    atsign: bool,
) {
    if number.is_special() {
        out.push_str(&number.print());
        return;
    }
    let (_, n) = scale_exponent(number.x.abs());
    let d = match d {
        Some(d) => d,
        None => {
            let (_, len, _, _, _) = flonum_to_string(number.with(number.x.abs()), None, None, None, None);
            let q = if len == 1 { 1 } else { len as i64 - 1 };
            q.max(n.min(7))
        }
    };
    let ee = e.map(|e| e + 2).unwrap_or(4);
    let ww = w.map(|w| w - ee);
    let dd = d - n;
    if 0 <= dd && dd <= d {
        let overflowed = format_fixed_aux(out, number, ww, Some(dd), None, ovf, pad, atsign);
        let c = if overflowed { ovf.unwrap_or(' ') } else { ' ' };
        out.extend(std::iter::repeat_n(c, ee.max(0) as usize));
    } else {
        format_exp_aux(out, number, w, Some(d), e, k.unwrap_or(1), ovf, pad, marker, atsign);
    }
}

#[allow(clippy::too_many_arguments)]
fn format_dollars(out: &mut String, number: Flo, d: i64, n: i64, w: i64, pad: char, colon: bool, atsign: bool) {
    if number.is_special() {
        out.push_str(&number.print());
        return;
    }
    let signstr = if number.x.is_sign_negative() {
        "-"
    } else if atsign {
        "+"
    } else {
        ""
    };
    let signlen = signstr.len() as i64;
    let (s, _, _, _, pointplace) = flonum_to_string(number.with(number.x.abs()), None, Some(d), None, None);
    let pointplace = pointplace as i64;
    if colon {
        out.push_str(signstr);
    }
    out.extend(std::iter::repeat_n(pad, (w - signlen - n.max(pointplace) - 1 - d).max(0) as usize));
    if !colon {
        out.push_str(signstr);
    }
    out.extend(std::iter::repeat_n('0', (n - pointplace).max(0) as usize));
    out.push_str(&s);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(x: f64, w: Option<i64>, d: Option<i64>) -> String {
        let mut s = String::new();
        format_fixed_aux(&mut s, Flo { x, single: false }, w, d, None, None, ' ', false);
        s
    }

    #[test]
    fn fixed_format_rounds_as_sbcl() {
        assert_eq!(fixed(2.675, None, Some(2)), "2.67");
        assert_eq!(fixed(0.125, None, Some(2)), "0.13");
        assert_eq!(fixed(0.015, None, Some(2)), "0.01");
        assert_eq!(fixed(2.5, None, Some(0)), "3.");
        assert_eq!(fixed(1e20, None, None), "100000000000000000000.0");
        assert_eq!(fixed(1e-5, None, None), "0.00001");
        assert_eq!(fixed(5.43216, Some(8), None), " 5.43216");
        assert_eq!(fixed(5.43216, Some(3), None), "5.4");
        assert_eq!(fixed(0.0, None, Some(2)), "0.00");
    }

    #[test]
    fn english_and_roman_numerals() {
        assert_eq!(cardinal(&BigInt::from(1234567)).unwrap_or_default(),
            "one million two hundred thirty-four thousand five hundred sixty-seven");
        assert_eq!(ordinal(&BigInt::from(111)).unwrap_or_default(), "one hundred eleventh");
        assert_eq!(roman(&BigInt::from(1994), false).unwrap_or_default(), "MCMXCIV");
        assert_eq!(roman(&BigInt::from(1994), true).unwrap_or_default(), "MDCCCCLXXXXIIII");
        assert!(roman(&BigInt::from(4000), false).is_err());
    }

    #[test]
    fn malformed_directives_are_errors() {
        for c in ["~", "~'", "~::a", "~@@a", "~1"] {
            assert!(tokenize(c).is_err(), "{c:?} should be rejected");
        }
        assert!(find_close(&tokenize("~{~a~]").unwrap_or_default(), 0, '}').is_err());
        assert!(find_close(&tokenize("~[a~;b").unwrap_or_default(), 0, ']').is_err());
    }

    /// Every error message a user can get from the engine, with a few
    /// successful outputs around them, in one reviewed snapshot.
    #[test]
    fn messages_and_outputs_snapshot() {
        gc_arena::arena::rootless_mutate(|mc| {
            let pk = mprof_heap::alloc::packages(mc);
            let pctx = PrintContext::new(&pk, pk.user, false);
            let s = |t: &str| mprof_heap::alloc::string(mc, t);
            let n = Value::Fixnum;
            let cases: Vec<(&str, Vec<Value<'_>>)> = vec![
                ("~a ~s ~5d|~:d", vec![s("x"), s("y"), n(42), n(1234567)]),
                ("~{~a~^, ~}", vec![mprof_heap::alloc::list(mc, &[n(1), n(2), n(3)])]),
                ("~r / ~:r / ~@r", vec![n(1234), n(42), n(1994)]),
                ("~,2f ~e ~$", vec![n(3), n(5), n(7)]),
                ("~a", vec![]),
                ("~", vec![]),
                ("~'", vec![]),
                ("~::a", vec![n(1)]),
                ("~:5a", vec![n(1)]),
                ("~99999999999999999999a", vec![n(1)]),
                ("~q", vec![]),
                ("~{~a", vec![mprof_heap::alloc::list(mc, &[])]),
                ("~a~}", vec![n(1)]),
                ("~(~]", vec![]),
                ("~;", vec![]),
                ("~<~>", vec![]),
                ("~<a~:>", vec![]),
                ("~<a~:;b~>", vec![]),
                ("~:^", vec![]),
                ("~c", vec![n(65)]),
                ("~[a~]", vec![s("x")]),
                ("~'x[a~]", vec![]),
                ("~:[a~]", vec![n(1)]),
                ("~@[a~;b~]", vec![n(1)]),
                ("~:@[a~]", vec![n(1)]),
                ("~{~a~}", vec![n(5)]),
                ("~{~}", vec![n(5), mprof_heap::alloc::list(mc, &[])]),
                ("~'x{~a~}", vec![mprof_heap::alloc::list(mc, &[])]),
                ("~?", vec![n(1)]),
                ("~:?", vec![s("a"), mprof_heap::alloc::list(mc, &[])]),
                ("~a~5@*", vec![n(1)]),
                ("~:@*", vec![]),
                ("~:p", vec![]),
                ("~r", vec![s("x")]),
                ("~1r", vec![n(1)]),
                ("~@r", vec![n(0)]),
                ("~:@r", vec![n(5000)]),
                ("~,,,,0:d", vec![n(5)]),
                ("~5,0a", vec![n(1)]),
                ("~'xd", vec![n(1)]),
                ("~5'xd", vec![n(1)]),
                ("~3,4,5,6,7a", vec![n(1)]),
                ("~va", vec![s("x"), n(1)]),
                ("~:f ~:e ~:g", vec![n(1)]),
                ("~*", vec![]),
                ("~100000000%", vec![]),
                ("~{x~}", vec![mprof_heap::alloc::list(mc, &[n(1)])]),
                ("~<a~;b~;c~;d~:>", vec![mprof_heap::alloc::list(mc, &[])]),
                ("~<~a~;b~:>", vec![mprof_heap::alloc::list(mc, &[n(1)])]),
                ("~:<~a~^ ~a~:>", vec![mprof_heap::alloc::list(mc, &[n(1), n(2)])]),
                ("~@<~a ~_~a~:>", vec![n(1), n(2)]),
                ("~<~a~:>", vec![n(7)]),
                ("~3_", vec![]),
                ("~< ~W ~>", vec![n(1)]),
            ];
            let mut out = String::new();
            for (control, args) in &cases {
                let r = match format_to_string(&pctx, control, args) {
                    Ok(t) => format!("ok    {t:?}"),
                    Err(e) => format!("error {e}"),
                };
                out.push_str(&format!("{control:?} => {r}\n"));
            }
            insta::assert_snapshot!(out);
        });
    }
}

