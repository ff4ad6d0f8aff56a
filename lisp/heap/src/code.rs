//! The compiled-code format: the instruction set and the per-function
//! [`Proto`]. It lives in the heap crate because compiled functions are heap
//! objects; the compiler that writes it and the VM that runs it live in the
//! evaluator.
//!
//! The machine is a stack machine. A frame's slots (parameters, then locals)
//! sit on the value stack from the frame's base; temporaries above them.
//! Every instruction that produces a value pushes it. Instructions named
//! `*Set` store the top of the stack without popping it (a `setq` is an
//! expression).
//!
//! Invariants (checked by the compiler, relied on by the VM):
//! - every jump target is inside the code;
//! - constant and slot indices are in range for the proto;
//! - at every instruction the stack height above the slots is the one the
//!   compiler computed, so local exits can drop a known number of values.

use gc_arena::Collect;

use crate::value::Value;

/// One VM instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Push constant `k`.
    Const(u32),
    Nil,
    T,
    Fixnum(i32),
    /// Push slot `i` of the frame.
    LocalGet(u32),
    /// Store the top into slot `i` (no pop).
    LocalSet(u32),
    /// Slot `i` holds a cell: push its content.
    BoxGet(u32),
    /// Slot `i` holds a cell: store the top into it (no pop).
    BoxSet(u32),
    /// Replace the value in slot `i` by a new cell holding it.
    MakeBox(u32),
    /// Push captured value `i` of the running closure.
    CapGet(u32),
    /// Captured value `i` is a cell: push its content.
    CapBoxGet(u32),
    /// Captured value `i` is a cell: store the top into it (no pop).
    CapBoxSet(u32),
    /// Push the dynamic value of symbol constant `k` (error if unbound).
    SymValue(u32),
    /// Store the top as the dynamic value of symbol constant `k` (no pop).
    SymSet(u32),
    /// Push the global function of symbol constant `k` (error if undefined).
    FunctionOf(u32),
    /// Make a closure of proto constant `k`; its capture list is in the proto.
    MakeClosure(u32),
    Pop,
    Dup,
    /// Remove `n` values below the top, keeping the top.
    Slide(u32),
    /// Drop `n` values.
    Drop(u32),
    Jump(u32),
    /// Pop; jump if NIL.
    JumpIfNil(u32),
    /// Pop; jump if not NIL.
    JumpIfTrue(u32),
    /// If the top is the fixnum `value`, pop it and jump.
    JumpIfEqFixnum { value: i32, target: u32 },
    /// Jump if slot `slot` holds a supplied argument (not the unbound marker).
    JumpIfSupplied { slot: u32, target: u32 },
    /// Push T if slot `i` holds a supplied argument, else NIL.
    Supplied(u32),
    /// Stack: function, then `n` arguments. Call it.
    Call(u32),
    /// Call the global function of symbol constant `sym` with `nargs` arguments on the stack.
    CallGlobal { sym: u32, nargs: u32 },
    /// Return the top of the stack (the values register holds all values).
    Return,
    /// Set the values register to the single value on top.
    Values1,
    /// Push the values register's values (n of them, padded with NIL or cut) onto the stack.
    MvPush(u32),
    /// Replace the top by the list of the values register's values.
    MvList,
    /// Save the values register (for multiple-value-prog1).
    MvSave,
    /// Restore the values register saved by the last `MvSave`.
    MvRestore,
    /// Pop a value and bind symbol constant `k` dynamically to it.
    BindSpecial(u32),
    /// Pop `n` dynamic entries (special bindings, which are undone, and catches).
    /// Never used across an unwind-protect: exits across one go through `Throw`.
    PopDyn(u32),
    /// Push a fresh unique tag (for blocks and tagbodies exited from closures).
    NewTag,
    /// Pop a tag and establish a catch for it; a throw lands at `target` with the thrown value pushed.
    PushCatch(u32),
    /// Stack: tag, value (values register holds all). Throw to the tag.
    Throw,
    /// Establish an unwind-protect whose cleanup starts at `target`.
    PushUnwindProtect(u32),
    /// Normal exit of the protected form: remove the unwind-protect and run its cleanup.
    PopUnwindProtect,
    /// End of a cleanup: resume whatever exit was in progress, or continue.
    EndCleanup,
    /// Stack: symbols list, values list. Bind them dynamically (progv); pushes the count bound.
    ProgvBind,
    /// Pop a count and undo that many dynamic bindings.
    ProgvUnbind,
    /// Apply: stack holds function then a single list of arguments.
    Apply,
    /// An inlined call of a COMMON-LISP function on its fast path (fixnum
    /// arithmetic, car/cdr of a list...); when the fast path does not apply, the
    /// global function of symbol constant `sym` is called as by `CallGlobal`.
    Inline { op: InlineOp, sym: u32 },
    /// Add one to execution count `k` (only in code compiled while counting).
    Count(u32),
}

/// The COMMON-LISP functions compiled inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InlineOp {
    Car,
    Cdr,
    Eq,
    Not,
    Add,
    Sub,
    Mul,
    Neg,
    Inc,
    Dec,
    Lt,
    Gt,
    Le,
    Ge,
    NumEq,
}

impl InlineOp {
    /// How many arguments the inlined form takes.
    pub fn arity(self) -> u32 {
        match self {
            InlineOp::Car | InlineOp::Cdr | InlineOp::Not | InlineOp::Neg | InlineOp::Inc | InlineOp::Dec => 1,
            _ => 2,
        }
    }

    /// The inlined function's name in COMMON-LISP.
    pub fn from_name(name: &str) -> Option<InlineOp> {
        Some(match name {
            "CAR" => InlineOp::Car,
            "CDR" => InlineOp::Cdr,
            "EQ" => InlineOp::Eq,
            "NOT" | "NULL" => InlineOp::Not,
            "+" => InlineOp::Add,
            "-" => InlineOp::Sub,
            "*" => InlineOp::Mul,
            "1+" => InlineOp::Inc,
            "1-" => InlineOp::Dec,
            "<" => InlineOp::Lt,
            ">" => InlineOp::Gt,
            "<=" => InlineOp::Le,
            ">=" => InlineOp::Ge,
            "=" => InlineOp::NumEq,
            _ => return None,
        })
    }
}

/// How a closure obtains one captured value when it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capture {
    /// From slot `i` of the frame making the closure.
    Local(u32),
    /// From captured value `i` of the closure making the closure.
    Captured(u32),
}

/// The parameter layout of a compiled function. Slots are laid out as
/// required, optional, rest (if any), keys; other locals follow.
#[derive(Clone, Debug, Default)]
pub struct Params {
    pub required: u32,
    pub optional: u32,
    pub rest: bool,
    /// Keyword constants (indices into `consts`) in slot order.
    pub keys: Vec<u32>,
    pub has_keys: bool,
    pub allow_other_keys: bool,
}

/// Everything static about a compiled function.
#[derive(Clone, Debug, Default)]
pub struct ProtoInfo {
    pub params: Params,
    /// Total slots (parameters + locals).
    pub nslots: u32,
    pub captures: Vec<Capture>,
    /// The source file and line of the definition, where known.
    pub file: Option<String>,
    pub line: u32,
    /// The line of each instruction (0 where unknown), for backtraces and listings.
    pub lines: Vec<u32>,
    /// The function a top-level form was compiled into (named "(top level)" in profiles).
    pub toplevel: bool,
}

/// A compiled function body.
#[derive(Collect)]
#[collect(no_drop)]
pub struct Proto<'gc> {
    /// A symbol, a `(SETF name)` list, or NIL for an anonymous lambda.
    pub name: Value<'gc>,
    pub consts: Box<[Value<'gc>]>,
    #[collect(require_static)]
    pub code: Box<[Op]>,
    #[collect(require_static)]
    pub info: ProtoInfo,
    /// The profiler's id for this function, cached by the evaluator (0 = none yet).
    #[collect(require_static)]
    pub prof_id: std::cell::Cell<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_small() {
        assert!(std::mem::size_of::<Op>() <= 12);
    }
}
