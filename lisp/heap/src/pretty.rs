//! The pretty printer's layout engine: Waters' XP algorithm (as in SBCL's
//! pretty streams), over plain text and layout operations, with no Lisp
//! values in it.
//!
//! A pretty stream is text interleaved with queued operations: logical-block
//! starts and ends, conditional newlines (`:linear`, `:fill`, `:miser`,
//! `:mandatory`, and the literal newlines of the text), indentation changes
//! and tabs. Each operation sits at a *position* (characters written to the
//! stream before it). A *section* runs from a newline or block start to the
//! next newline at the same or an outer nesting; once its end is queued, or
//! the text passes the right margin, whether it fits on the line is known and
//! the operations at the head of the queue are decided: a block that fits is
//! emitted as written, one that does not is started for real (its column
//! becomes the indentation of its lines) and its newlines break by kind.
//! Decided text moves to [`Engine::take_ready`] for the target stream, so
//! the engine holds about a line of text however long the output is: it
//! streams, in time linear in the output (each operation is decided once;
//! [`Engine::column`] walks the pending operations, at most about a line's
//! worth).
//!
//! Invariants: positions only grow; `buffer[i]` is at position
//! `i + buffer_offset`; `blocks` always holds the outermost block (column 0);
//! after `*print-lines*` lines are output the engine is *abbreviated*: it has
//! written ` ..` and the pending suffixes, and ignores everything after.

use std::collections::VecDeque;

/// A conditional newline's kind (`pprint-newline`), or a newline in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewlineKind {
    Linear,
    Fill,
    Miser,
    Mandatory,
    /// A newline character written to the stream.
    Literal,
}

/// `pprint-indent`'s relative-to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndentKind {
    Block,
    Current,
}

/// `pprint-tab`'s kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TabKind {
    Line,
    LineRelative,
    Section,
    SectionRelative,
}

/// What a pretty stream is made with (the print variables when it was made).
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// `*print-right-margin*`, or the target's line length.
    pub line_length: usize,
    /// `*print-miser-width*`.
    pub miser_width: Option<usize>,
    /// `*print-lines*`.
    pub lines: Option<usize>,
    /// `*print-readably*` (which turns `*print-lines*` off).
    pub readably: bool,
    /// The target's column when the stream was made.
    pub start_column: usize,
}

#[derive(Clone, Copy, Debug)]
struct Tab {
    section: bool,
    relative: bool,
    colnum: i64,
    colinc: i64,
}

#[derive(Debug)]
enum OpKind {
    Newline { kind: NewlineKind, depth: usize, section_end: Option<i64> },
    Indent { kind: IndentKind, amount: i64 },
    BlockStart { depth: usize, section_end: Option<i64>, block_end: Option<u64>, prefix: Option<String>, suffix: Option<String> },
    BlockEnd,
    Tab(Tab),
}

#[derive(Debug)]
struct Op {
    /// Operations are numbered in order; the queue holds consecutive ids.
    id: u64,
    posn: i64,
    kind: OpKind,
}

/// A logical block that was started for real (it did not fit).
#[derive(Clone, Copy, Debug, Default)]
struct Block {
    start_column: i64,
    section_column: i64,
    per_line_prefix_end: i64,
    prefix_length: i64,
    suffix_length: i64,
    section_start_line: usize,
}

/// The layout state of one pretty stream.
#[derive(Debug)]
pub struct Engine {
    cfg: Config,
    /// Text not yet decided.
    buffer: Vec<char>,
    buffer_offset: i64,
    buffer_start_column: i64,
    line_number: usize,
    blocks: Vec<Block>,
    /// The text put at the start of each line: `prefix[..prefix_length]`.
    prefix: Vec<char>,
    /// The pending suffixes, innermost first; the current block's are the
    /// last `suffix_length` characters.
    suffix: Vec<char>,
    queue: VecDeque<Op>,
    next_id: u64,
    /// Ids and suffixes of the block starts whose end is not queued yet.
    pending_blocks: Vec<(u64, String)>,
    ready: String,
    abbreviated: bool,
}

impl Engine {
    pub fn new(cfg: Config) -> Engine {
        Engine {
            cfg,
            buffer: Vec::new(),
            buffer_offset: 0,
            buffer_start_column: cfg.start_column as i64,
            line_number: 0,
            blocks: vec![Block::default()],
            prefix: Vec::new(),
            suffix: Vec::new(),
            queue: VecDeque::new(),
            next_id: 0,
            pending_blocks: Vec::new(),
            ready: String::new(),
            abbreviated: false,
        }
    }

    /// Whether `*print-lines*` cut the output: nothing more is printed.
    pub fn abbreviated(&self) -> bool {
        self.abbreviated
    }

    /// How many logical blocks are open (started and not ended).
    pub fn open_blocks(&self) -> usize {
        self.pending_blocks.len()
    }

    /// Decided text, for the target stream.
    pub fn take_ready(&mut self) -> String {
        std::mem::take(&mut self.ready)
    }

    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// Bytes owned out of line (for the heap's size accounting), read from
    /// capacities in O(1): the prefix and suffix strings of queued blocks
    /// are left out (a line's worth at most).
    pub fn heap_bytes(&self) -> usize {
        let c = std::mem::size_of::<char>();
        (self.buffer.capacity() + self.prefix.capacity() + self.suffix.capacity()) * c
            + self.queue.capacity() * std::mem::size_of::<Op>()
            + self.blocks.capacity() * std::mem::size_of::<Block>()
            + self.pending_blocks.capacity() * std::mem::size_of::<(u64, String)>()
            + self.ready.capacity()
    }

    /// The column the next character written would be at.
    pub fn column(&self) -> usize {
        self.index_column(self.buffer.len() as i64).max(0) as usize
    }

    /// Text; its newlines are literal newlines.
    pub fn write_str(&mut self, text: &str) {
        if self.abbreviated {
            return;
        }
        let mut first = true;
        for line in text.split('\n') {
            if !first {
                self.enqueue_newline(NewlineKind::Literal);
                if self.abbreviated {
                    return;
                }
            }
            first = false;
            if !line.is_empty() {
                self.buffer.extend(line.chars());
                self.make_room();
            }
        }
    }

    /// `pprint-logical-block`'s start: the prefix is text before the block.
    pub fn start_block(&mut self, prefix: &str, per_line: bool, suffix: &str) {
        if self.abbreviated {
            return;
        }
        self.write_str(prefix);
        let depth = self.pending_blocks.len();
        let id = self.enqueue(OpKind::BlockStart {
            depth,
            section_end: None,
            block_end: None,
            prefix: (per_line && !prefix.is_empty()).then(|| prefix.to_string()),
            suffix: (!suffix.is_empty()).then(|| suffix.to_string()),
        });
        self.pending_blocks.push((id, suffix.to_string()));
    }

    /// The end of the innermost open block (its suffix is written here).
    pub fn end_block(&mut self) {
        if self.abbreviated {
            return;
        }
        let Some((start, suffix)) = self.pending_blocks.pop() else { return };
        let end = self.enqueue(OpKind::BlockEnd);
        // A start already decided has left the queue: nothing to link.
        if let Some(op) = self.op_mut(start)
            && let OpKind::BlockStart { block_end, .. } = &mut op.kind
        {
            *block_end = Some(end);
        }
        if !suffix.is_empty() {
            self.write_str(&suffix);
        }
    }

    pub fn newline(&mut self, kind: NewlineKind) {
        if !self.abbreviated {
            self.enqueue_newline(kind);
        }
    }

    pub fn indent(&mut self, kind: IndentKind, amount: i64) {
        if !self.abbreviated {
            self.enqueue(OpKind::Indent { kind, amount });
        }
    }

    pub fn tab(&mut self, kind: TabKind, colnum: i64, colinc: i64) {
        if self.abbreviated {
            return;
        }
        let (section, relative) = match kind {
            TabKind::Line => (false, false),
            TabKind::LineRelative => (false, true),
            TabKind::Section => (true, false),
            TabKind::SectionRelative => (true, true),
        };
        self.enqueue(OpKind::Tab(Tab { section, relative, colnum, colinc }));
    }

    /// Decide everything left and move all text to the ready output (at the
    /// end of the outermost block).
    pub fn finish(&mut self) {
        if self.abbreviated {
            return;
        }
        self.maybe_output(false);
        self.expand_tabs(None);
        self.ready.extend(self.buffer.drain(..));
        self.queue.clear();
    }

    fn op_mut(&mut self, id: u64) -> Option<&mut Op> {
        let first = self.queue.front()?.id;
        let i = id.checked_sub(first)? as usize;
        self.queue.get_mut(i)
    }

    fn queue_index(&self, id: u64) -> Option<usize> {
        let first = self.queue.front()?.id;
        let i = id.checked_sub(first)? as usize;
        (i < self.queue.len()).then_some(i)
    }

    fn enqueue(&mut self, kind: OpKind) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let posn = self.buffer.len() as i64 + self.buffer_offset;
        self.queue.push_back(Op { id, posn, kind });
        id
    }

    fn enqueue_newline(&mut self, kind: NewlineKind) {
        let depth = self.pending_blocks.len();
        let id = self.enqueue(OpKind::Newline { kind, depth, section_end: None });
        let posn = self.queue.back().map_or(0, |o| o.posn);
        // This newline ends every open section at its depth or deeper.
        for op in self.queue.iter_mut() {
            if op.id == id {
                continue;
            }
            match &mut op.kind {
                OpKind::Newline { depth: d, section_end, .. } | OpKind::BlockStart { depth: d, section_end, .. }
                    if section_end.is_none() && depth <= *d =>
                {
                    *section_end = Some(posn)
                }
                _ => {}
            }
        }
        self.maybe_output(matches!(kind, NewlineKind::Literal | NewlineKind::Mandatory));
    }

    fn posn_index(&self, posn: i64) -> i64 {
        posn - self.buffer_offset
    }

    fn posn_column(&self, posn: i64) -> i64 {
        self.index_column(self.posn_index(posn))
    }

    fn index_column(&self, index: i64) -> i64 {
        let mut column = self.buffer_start_column;
        let mut section_start = self.current_block().section_column;
        let end_posn = index + self.buffer_offset;
        for op in &self.queue {
            if op.posn >= end_posn {
                break;
            }
            match &op.kind {
                OpKind::Tab(t) => column += tab_size(t, section_start, column + self.posn_index(op.posn)),
                OpKind::Newline { .. } | OpKind::BlockStart { .. } => section_start = column + self.posn_index(op.posn),
                _ => {}
            }
        }
        column + index
    }

    fn current_block(&self) -> &Block {
        self.blocks.last().expect("the outermost block is never popped")
    }

    fn misering(&self) -> bool {
        self.cfg.miser_width.is_some_and(|w| self.cfg.line_length as i64 - self.current_block().start_column <= w as i64)
    }

    /// Whether the text up to `until` (a section's end) fits on the line:
    /// None when it cannot be known yet.
    fn fits_on_line(&self, until: Option<i64>, force_newlines: bool) -> Option<bool> {
        let mut available = self.cfg.line_length as i64;
        if !self.cfg.readably && self.cfg.lines == Some(self.line_number) {
            // Room for " .." and the suffixes on the last line.
            available -= 3;
            available -= self.current_block().suffix_length;
        }
        if let Some(posn) = until {
            return Some(self.posn_column(posn) <= available);
        }
        if force_newlines {
            return Some(false);
        }
        if self.index_column(self.buffer.len() as i64) > available {
            return Some(false);
        }
        None
    }

    /// Decide the operations at the head of the queue while possible; true
    /// when a line was output.
    fn maybe_output(&mut self, force_newlines: bool) -> bool {
        let mut output_anything = false;
        while let Some(op) = self.queue.front() {
            if self.abbreviated {
                break;
            }
            match &op.kind {
                OpKind::Newline { kind, section_end, .. } => {
                    let (kind, section_end, posn) = (*kind, *section_end, op.posn);
                    let breaks = match kind {
                        NewlineKind::Literal | NewlineKind::Mandatory | NewlineKind::Linear => true,
                        NewlineKind::Miser => self.misering(),
                        NewlineKind::Fill => {
                            self.misering()
                                || self.line_number > self.current_block().section_start_line
                                || match self.fits_on_line(section_end, force_newlines) {
                                    Some(fits) => !fits,
                                    None => break,
                                }
                        }
                    };
                    self.queue.pop_front();
                    if breaks {
                        output_anything = true;
                        self.output_line(kind, posn);
                    }
                }
                OpKind::Indent { kind, amount } => {
                    let (kind, amount, posn) = (*kind, *amount, op.posn);
                    self.queue.pop_front();
                    if !self.misering() {
                        let base = match kind {
                            IndentKind::Block => self.current_block().start_column,
                            IndentKind::Current => self.posn_column(posn),
                        };
                        self.set_indentation(base + amount);
                    }
                }
                OpKind::BlockStart { section_end, block_end, .. } => {
                    let (section_end, block_end, posn) = (*section_end, *block_end, op.posn);
                    match self.fits_on_line(section_end, force_newlines) {
                        Some(true) => {
                            // The whole block goes out as written.
                            let end_index = block_end.and_then(|e| self.queue_index(e));
                            self.expand_tabs(end_index);
                            match end_index {
                                Some(i) => {
                                    self.queue.drain(..=i);
                                }
                                None => {
                                    self.queue.pop_front();
                                }
                            }
                        }
                        Some(false) => {
                            let Some(Op { kind: OpKind::BlockStart { prefix, suffix, .. }, .. }) = self.queue.pop_front() else {
                                unreachable!("the head is a block start")
                            };
                            let column = self.posn_column(posn);
                            self.really_start_block(column, prefix, suffix);
                        }
                        None => break,
                    }
                }
                OpKind::BlockEnd => {
                    self.queue.pop_front();
                    self.really_end_block();
                }
                OpKind::Tab(_) => {
                    self.expand_tabs(Some(0));
                    self.queue.pop_front();
                }
            }
        }
        output_anything
    }

    /// The text before a newline goes out; the next line starts with the prefix.
    fn output_line(&mut self, kind: NewlineKind, posn: i64) {
        let literal = kind == NewlineKind::Literal;
        let consume = self.posn_index(posn).clamp(0, self.buffer.len() as i64) as usize;
        let print = if literal {
            consume
        } else {
            // Trailing spaces before a break are dropped.
            self.buffer[..consume].iter().rposition(|c| *c != ' ').map_or(0, |i| i + 1)
        };
        self.ready.extend(&self.buffer[..print]);
        let line_number = self.line_number + 1;
        if !self.cfg.readably && self.cfg.lines.is_some_and(|l| line_number >= l) {
            self.ready.push_str(" ..");
            let n = self.current_block().suffix_length.max(0) as usize;
            let total = self.suffix.len();
            self.ready.extend(&self.suffix[total.saturating_sub(n)..]);
            self.abbreviated = true;
            self.queue.clear();
            self.buffer.clear();
            self.pending_blocks.clear();
            return;
        }
        self.line_number = line_number;
        self.ready.push('\n');
        self.buffer_start_column = 0;
        let block = *self.current_block();
        let prefix_len = if literal { block.per_line_prefix_end } else { block.prefix_length }.max(0) as usize;
        if self.prefix.len() < prefix_len {
            self.prefix.resize(prefix_len, ' ');
        }
        let mut new_buffer = Vec::with_capacity(prefix_len + self.buffer.len() - consume);
        new_buffer.extend_from_slice(&self.prefix[..prefix_len]);
        new_buffer.extend_from_slice(&self.buffer[consume..]);
        self.buffer = new_buffer;
        self.buffer_offset += consume as i64 - prefix_len as i64;
        if !literal {
            let b = self.blocks.last_mut().expect("outermost block");
            b.section_column = prefix_len as i64;
            b.section_start_line = line_number;
        }
    }

    /// The text before the first queued operation goes out (the buffer is
    /// past the margin and nothing could be decided): false when there is none.
    fn output_partial_line(&mut self) -> bool {
        let count = match self.queue.front() {
            Some(op) => self.posn_index(op.posn),
            None => self.buffer.len() as i64,
        }
        .clamp(0, self.buffer.len() as i64) as usize;
        // Blanks at the end stay: a newline after them would drop them.
        let count = self.buffer[..count].iter().rposition(|c| *c != ' ').map_or(0, |i| i + 1);
        if count == 0 {
            return false;
        }
        self.ready.extend(self.buffer.drain(..count));
        self.buffer_start_column += count as i64;
        self.buffer_offset += count as i64;
        true
    }

    /// Keep the undecided text short: past the margin, decide what can be.
    fn make_room(&mut self) {
        while !self.abbreviated && self.buffer.len() > self.cfg.line_length {
            if !self.maybe_output(false) && !self.output_partial_line() {
                break;
            }
        }
    }

    fn set_indentation(&mut self, column: i64) {
        let block = self.blocks.last_mut().expect("outermost block");
        let current = block.prefix_length;
        let column = column.max(block.per_line_prefix_end).max(0);
        block.prefix_length = column;
        let column = column as usize;
        if self.prefix.len() < column {
            self.prefix.resize(column, ' ');
        }
        let current = current.max(0) as usize;
        if column > current {
            self.prefix[current..column].fill(' ');
        }
    }

    fn really_start_block(&mut self, column: i64, prefix: Option<String>, suffix: Option<String>) {
        let prev = *self.current_block();
        self.blocks.push(Block {
            start_column: column,
            section_column: column,
            per_line_prefix_end: prev.per_line_prefix_end,
            prefix_length: prev.prefix_length,
            suffix_length: prev.suffix_length,
            section_start_line: self.line_number,
        });
        self.set_indentation(column);
        if let Some(p) = prefix {
            let chars: Vec<char> = p.chars().collect();
            let end = column.max(0) as usize;
            let start = end.saturating_sub(chars.len());
            if self.prefix.len() < end {
                self.prefix.resize(end, ' ');
            }
            self.prefix[start..end].copy_from_slice(&chars[chars.len() - (end - start)..]);
            self.blocks.last_mut().expect("just pushed").per_line_prefix_end = column;
        }
        if let Some(s) = suffix {
            let keep = prev.suffix_length.max(0) as usize;
            let total = self.suffix.len();
            let mut new: Vec<char> = s.chars().collect();
            new.extend_from_slice(&self.suffix[total.saturating_sub(keep)..]);
            self.blocks.last_mut().expect("just pushed").suffix_length = new.len() as i64;
            self.suffix = new;
        }
    }

    fn really_end_block(&mut self) {
        if self.blocks.len() <= 1 {
            return;
        }
        let old = self.blocks.pop().expect("checked");
        let new = *self.current_block();
        if new.prefix_length > old.prefix_length {
            let (from, to) = (old.prefix_length.max(0) as usize, new.prefix_length as usize);
            if self.prefix.len() < to {
                self.prefix.resize(to, ' ');
            }
            self.prefix[from..to].fill(' ');
        }
    }

    /// Replace the tabs up to the queued operation at `through` (all, when
    /// None) by spaces in the text.
    fn expand_tabs(&mut self, through: Option<usize>) {
        let mut insertions: Vec<(usize, usize)> = Vec::new();
        let mut additional = 0i64;
        let mut column = self.buffer_start_column;
        let mut section_start = self.current_block().section_column;
        for (i, op) in self.queue.iter().enumerate() {
            let index = self.posn_index(op.posn);
            match &op.kind {
                OpKind::Tab(t) => {
                    let size = tab_size(t, section_start, column + index);
                    if size > 0 {
                        insertions.push((index.clamp(0, self.buffer.len() as i64) as usize, size as usize));
                        additional += size;
                        column += size;
                    }
                }
                OpKind::Newline { .. } | OpKind::BlockStart { .. } => section_start = column + index,
                _ => {}
            }
            if through == Some(i) {
                break;
            }
        }
        if insertions.is_empty() {
            return;
        }
        let mut new = Vec::with_capacity(self.buffer.len() + additional as usize);
        let mut from = 0;
        for (index, size) in insertions {
            new.extend_from_slice(&self.buffer[from..index]);
            new.extend(std::iter::repeat_n(' ', size));
            from = index;
        }
        new.extend_from_slice(&self.buffer[from..]);
        self.buffer = new;
        self.buffer_offset -= additional;
    }
}

/// Spaces a tab inserts at `column`, whose section started at `section_start`.
fn tab_size(t: &Tab, section_start: i64, column: i64) -> i64 {
    let origin = if t.section { section_start } else { 0 };
    let (colnum, colinc) = (t.colnum, t.colinc);
    if t.relative {
        let mut colnum = colnum;
        if colinc > 1 {
            let rem = (column - origin + colnum).rem_euclid(colinc);
            if rem != 0 {
                colnum += colinc - rem;
            }
        }
        colnum.max(0)
    } else if column < colnum + origin {
        colnum + origin - column
    } else if colinc <= 0 {
        0
    } else {
        colinc - (column - origin - colnum).rem_euclid(colinc)
    }
}

#[cfg(test)]
mod tests;
