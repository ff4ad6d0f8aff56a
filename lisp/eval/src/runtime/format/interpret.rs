//! Running a tokenized control string: the argument cursor, the directives,
//! `~^` as a `Flow` value, and the field and digit helpers they print with.

use mprof_heap::Value;
use mprof_heap::value::UNKNOWN_COLUMN;
use mprof_heap::pretty::{IndentKind, NewlineKind, TabKind};
use mprof_heap::printer::{PrintContext, print_to_limited_string, print_to_string};
use num_bigint::BigInt;
use num_traits::Signed;

use crate::runtime::format::{BLOCK_EXIT, Directive, Formatted, HEAP_EXHAUSTED, MAX_DEPTH, MAX_PARAM, Param, PrettyOp, Tok, tokenize_cached};
use crate::runtime::format::floats::{format_dollars, format_exp_aux, format_fixed_aux, format_general_aux, to_float};
use crate::runtime::format::words::{cardinal, ordinal, roman};

/// The argument list a directive list consumes, with a cursor (for `~*`).
pub(super) struct Args<'gc> {
    items: Vec<Value<'gc>>,
    pos: usize,
    /// Inside a logical block: taking an argument is `pprint-pop`.
    block: Option<BlockArgs<'gc>>,
}

/// A logical block's list: its dotted tail (NIL for a proper list), the
/// `*print-length*` in force, and why `pprint-pop` stopped.
pub(super) struct BlockArgs<'gc> {
    tail: Value<'gc>,
    length: Option<usize>,
    stopped: Option<BlockStop>,
}

#[derive(Clone, Copy)]
pub(super) enum BlockStop {
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
pub(super) enum Flow {
    Normal,
    Up,
    UpUp,
}

/// A resolved parameter value.
#[derive(Clone, Copy, Debug)]
pub(super) enum PVal {
    Int(i64),
    Char(char),
}

pub(super) struct Fmt<'a, 'c, 'gc> {
    pctx: &'a PrintContext<'c, 'gc>,
    out: String,
    base_col: usize,
    depth: usize,
    ops: Vec<(usize, PrettyOp)>,
    /// `*print-escape*` (for `~W`).
    print_escape: bool,
}

/// Run the tokens of a control string over `args`, starting at output column
/// `column`, with `*print-escape*`'s value (for `~W`).
pub(super) fn run_control<'gc>(
    ctx: &PrintContext<'_, 'gc>,
    toks: &[Tok],
    args: &[Value<'gc>],
    column: usize,
    print_escape: bool,
) -> Result<Formatted, String> {
    let mut f = Fmt { pctx: ctx, out: String::new(), base_col: column, depth: 0, ops: Vec::new(), print_escape };
    let mut a = Args::new(args.to_vec());
    f.run(toks, &mut a, None)?;
    Ok(Formatted { text: f.out, ops: f.ops, consumed: a.pos })
}

pub(super) fn list_items<'gc>(v: Value<'gc>, what: &str) -> Result<Vec<Value<'gc>>, String> {
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
pub(super) fn string_of(v: Value<'_>) -> Option<String> {
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
    /// The output column; always `UNKNOWN_COLUMN` when the destination does
    /// not know its column (a Gray stream whose `stream-line-column` is NIL:
    /// SBCL asks it again at each directive, and it says NIL again).
    fn column(&self) -> usize {
        if self.base_col == UNKNOWN_COLUMN {
            return UNKNOWN_COLUMN;
        }
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
        // ~A is PRINC: it binds *print-readably* to false as well (CLHS 22.3.4.1).
        let mut settings = self.pctx.settings;
        if !escape {
            settings.readably = false;
        }
        print_to_limited_string(v, &PrintContext { escape, settings, ..*self.pctx }).ok_or_else(|| {
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
        // `~<newline-text~n,m:;...~>`: the first segment is written before the rest
        // only when the rest would pass column m (72) less n (0) from here.
        let overflow = match seps.first().map(|&s| &toks[s]) {
            Some(Tok::Dir(x)) if x.colon => Some(x.clone()),
            _ => None,
        };
        if seps.iter().skip(1).any(|&s| matches!(&toks[s], Tok::Dir(x) if x.colon)) {
            return Err("~:; may only end the first segment of a ~<...~> justification".into());
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
        let start_column = self.column();
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
        let newline_text = match &overflow {
            Some(_) if !strings.is_empty() => Some(strings.remove(0)),
            _ => None,
        };
        let (pad_left, pad_right) = (d.colon, d.at);
        let mut num_gaps = strings.len() as i64 - 1 + pad_left as i64 + pad_right as i64;
        let chars = num_gaps * minpad + strings.iter().map(|s| s.chars().count() as i64).sum::<i64>();
        let length = if chars > mincol { mincol + (chars - mincol + colinc - 1).div_euclid(colinc) * colinc } else { mincol };
        let mut padding = length - chars + num_gaps * minpad;
        if let (Some(text), Some(sep)) = (&newline_text, &overflow) {
            let ps = self.resolve(sep, args)?;
            let int = |k: usize, default: i64| match ps.get(k).copied().flatten() {
                Some(PVal::Int(n)) => n,
                _ => default,
            };
            let (extra_space, line_len) = (int(0, 0), int(1, 72));
            if start_column as i64 + length + extra_space > line_len {
                self.out.push_str(text);
            }
        }
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
                let spaces = if self.column() == UNKNOWN_COLUMN {
                    // As SBCL: ~colrel@T writes colrel spaces, ~colnumT two.
                    if d.at { int(0, Some(1))?.unwrap_or(1) } else { 2 }
                } else if d.at {
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
pub(super) fn fill_blanks(body: &[Tok]) -> Vec<Tok> {
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

pub(super) fn opt_chr(ps: &[Option<PVal>], k: usize) -> Result<Option<char>, String> {
    match ps.get(k).copied().flatten() {
        None => Ok(None),
        Some(PVal::Char(c)) => Ok(Some(c)),
        Some(PVal::Int(n)) => Err(format!("the parameter {n} should be a character")),
    }
}

/// Find the directive closing the opener at `open`; also the `~;` separators at its top level.
pub(super) fn find_close(toks: &[Tok], open: usize, close: char) -> Result<(usize, Vec<usize>), String> {
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
pub(super) fn case_convert(s: &str, colon: bool, at: bool) -> String {
    match (colon, at) {
        (false, false) => s.to_lowercase(),
        (true, true) => s.to_uppercase(),
        (true, false) => capitalize_words(s, false),
        (false, true) => capitalize_words(s, true),
    }
}

pub(super) fn capitalize_words(s: &str, first_only: bool) -> String {
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
pub(super) fn write_field(out: &mut String, s: &str, mincol: i64, colinc: i64, minpad: i64, pad: char, padleft: bool) -> Result<(), String> {
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

pub(super) fn to_radix(mut n: u128, radix: u32) -> String {
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

pub(super) fn group_digits(s: &str, comma: char, interval: usize) -> String {
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

