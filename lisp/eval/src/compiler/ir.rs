//! The compiler's intermediate form: fully macroexpanded code with lexical
//! variables resolved to [`VarId`]s. Built by `front`, consumed by `codegen`.
//!
//! Invariants: every `VarId`, `BlockId` and `TagbodyId` indexes the tables of
//! the [`Unit`] that holds the tree; a `Lambda` lists (in `captures`) every
//! variable of an enclosing function it or its inner lambdas refer to.

use mprof_heap::Value;

pub type VarId = usize;
pub type FnId = usize;
pub type BlockId = usize;
pub type TagbodyId = usize;

/// A lexical variable.
#[derive(Debug)]
pub struct VarInfo<'gc> {
    pub name: Value<'gc>,
    /// The function whose frame holds the variable.
    pub owner: FnId,
    /// Referenced from a function other than its owner.
    pub captured: bool,
    /// Assigned after its binding (setq, labels initialisation).
    pub assigned: bool,
}

impl VarInfo<'_> {
    /// Captured and assigned variables live in a cell shared by the frame and its closures.
    pub fn boxed(&self) -> bool {
        self.captured && self.assigned
    }
}

#[derive(Debug)]
pub struct BlockInfo {
    /// Exited from another function or across an unwind-protect: needs a catch.
    pub nonlocal: bool,
    /// Variable holding the block's unique tag when nonlocal.
    pub tag_var: VarId,
}

#[derive(Debug)]
pub struct TagbodyInfo {
    pub nonlocal: bool,
    pub tag_var: VarId,
    /// Which tags are targets of a nonlocal go.
    pub nonlocal_tags: Vec<bool>,
}

/// A variable binding made by let, lambda or multiple-value-bind.
#[derive(Debug, Clone, Copy)]
pub enum Binding<'gc> {
    Lexical(VarId),
    Special(Value<'gc>),
}

#[derive(Debug)]
pub enum Callee<'gc> {
    /// The global function of a symbol, looked up at each call.
    Global(Value<'gc>),
    /// A local function (flet/labels) held in a variable.
    Local(VarId),
}

#[derive(Debug)]
pub enum TagbodyItem<'gc> {
    Tag(usize),
    Form(Ir<'gc>),
}

/// An optional parameter: its variable, default form and supplied-p variable.
#[derive(Debug)]
pub struct OptParam<'gc> {
    pub var: Binding<'gc>,
    pub default: Option<Ir<'gc>>,
    pub supplied: Option<Binding<'gc>>,
}

#[derive(Debug)]
pub struct KeyParam<'gc> {
    pub keyword: Value<'gc>,
    pub var: Binding<'gc>,
    pub default: Option<Ir<'gc>>,
    pub supplied: Option<Binding<'gc>>,
}

#[derive(Debug)]
pub struct LambdaIr<'gc> {
    pub id: FnId,
    pub name: Value<'gc>,
    pub required: Vec<Binding<'gc>>,
    pub optional: Vec<OptParam<'gc>>,
    pub rest: Option<Binding<'gc>>,
    pub has_keys: bool,
    pub keys: Vec<KeyParam<'gc>>,
    pub allow_other_keys: bool,
    pub body: Ir<'gc>,
    pub line: u32,
}

#[derive(Debug)]
pub enum Ir<'gc> {
    Const(Value<'gc>),
    Var(VarId),
    SetVar(VarId, Box<Ir<'gc>>),
    Special(Value<'gc>),
    SetSpecial(Value<'gc>, Box<Ir<'gc>>),
    If(Box<Ir<'gc>>, Box<Ir<'gc>>, Box<Ir<'gc>>),
    Progn(Vec<Ir<'gc>>),
    /// `let` (parallel) or `let*` (sequential) bindings, then the body.
    Let { bindings: Vec<(Binding<'gc>, Ir<'gc>)>, sequential: bool, body: Box<Ir<'gc>> },
    Lambda(Box<LambdaIr<'gc>>),
    Call(Callee<'gc>, Vec<Ir<'gc>>),
    /// funcall of a computed function.
    CallValue(Box<Ir<'gc>>, Vec<Ir<'gc>>),
    GlobalFunction(Value<'gc>),
    /// flet/labels: variables bound to closures, then the body. For labels the
    /// lambdas see the variables (they are initialised after creation).
    LocalFunctions { vars: Vec<VarId>, lambdas: Vec<LambdaIr<'gc>>, recursive: bool, body: Box<Ir<'gc>> },
    Block { id: BlockId, body: Box<Ir<'gc>> },
    ReturnFrom { id: BlockId, value: Box<Ir<'gc>> },
    Tagbody { id: TagbodyId, items: Vec<TagbodyItem<'gc>> },
    Go { id: TagbodyId, tag: usize },
    Catch(Box<Ir<'gc>>, Box<Ir<'gc>>),
    Throw(Box<Ir<'gc>>, Box<Ir<'gc>>),
    UnwindProtect(Box<Ir<'gc>>, Box<Ir<'gc>>),
    /// multiple-value-bind.
    MvBind { vars: Vec<Binding<'gc>>, form: Box<Ir<'gc>>, body: Box<Ir<'gc>> },
    MvList(Box<Ir<'gc>>),
    MvCall(Box<Ir<'gc>>, Vec<Ir<'gc>>),
    MvProg1(Box<Ir<'gc>>, Vec<Ir<'gc>>),
    Progv(Box<Ir<'gc>>, Box<Ir<'gc>>, Box<Ir<'gc>>),
    /// Count one execution in count point `id`, then evaluate the form (counting.rs).
    Count(u32, Box<Ir<'gc>>),
}

/// Everything one compilation produces besides the tree.
#[derive(Debug, Default)]
pub struct Unit<'gc> {
    pub vars: Vec<VarInfo<'gc>>,
    pub blocks: Vec<BlockInfo>,
    pub tagbodies: Vec<TagbodyInfo>,
    /// For each function, the outer variables it captures, in capture-index order.
    pub captures: Vec<Vec<VarId>>,
    /// For each function, its enclosing function (None for the top level).
    pub parents: Vec<Option<FnId>>,
}

/// Dropping a tree of any depth without recursion: each node hands its
/// children to an explicit stack before it goes (forms nest as deep as
/// MAX_FORM_DEPTH, far more than a recursive drop's frames fit in).
impl Drop for Ir<'_> {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.take_children(&mut stack);
        while let Some(mut ir) = stack.pop() {
            ir.take_children(&mut stack);
        }
    }
}

impl<'gc> Ir<'gc> {
    /// Move this node's children onto `out`, leaving leaves in their place.
    fn take_children(&mut self, out: &mut Vec<Ir<'gc>>) {
        fn take<'gc>(b: &mut Ir<'gc>, out: &mut Vec<Ir<'gc>>) {
            if !matches!(b, Ir::Const(_) | Ir::Var(_) | Ir::Special(_) | Ir::GlobalFunction(_) | Ir::Go { .. }) {
                out.push(std::mem::replace(b, Ir::Var(0)));
            }
        }
        fn take_lambda<'gc>(l: &mut LambdaIr<'gc>, out: &mut Vec<Ir<'gc>>) {
            take(&mut l.body, out);
            for p in &mut l.optional {
                if let Some(d) = p.default.as_mut() {
                    take(d, out);
                }
            }
            for p in &mut l.keys {
                if let Some(d) = p.default.as_mut() {
                    take(d, out);
                }
            }
        }
        match self {
            Ir::Const(_) | Ir::Var(_) | Ir::Special(_) | Ir::GlobalFunction(_) | Ir::Go { .. } => {}
            Ir::SetVar(_, a) | Ir::SetSpecial(_, a) | Ir::MvList(a) | Ir::Count(_, a) => take(a, out),
            Ir::Block { body: a, .. } | Ir::ReturnFrom { value: a, .. } => take(a, out),
            Ir::If(a, b, c) | Ir::Progv(a, b, c) => {
                take(a, out);
                take(b, out);
                take(c, out);
            }
            Ir::Catch(a, b) | Ir::Throw(a, b) | Ir::UnwindProtect(a, b) => {
                take(a, out);
                take(b, out);
            }
            Ir::MvBind { form, body, .. } => {
                take(form, out);
                take(body, out);
            }
            Ir::Progn(items) | Ir::Call(_, items) => out.append(items),
            Ir::CallValue(a, items) | Ir::MvCall(a, items) | Ir::MvProg1(a, items) => {
                take(a, out);
                out.append(items);
            }
            Ir::Let { bindings, body, .. } => {
                for (_, init) in bindings.iter_mut() {
                    take(init, out);
                }
                take(body, out);
            }
            Ir::Lambda(l) => take_lambda(l, out),
            Ir::LocalFunctions { lambdas, body, .. } => {
                for l in lambdas.iter_mut() {
                    take_lambda(l, out);
                }
                take(body, out);
            }
            Ir::Tagbody { items, .. } => {
                for item in items.iter_mut() {
                    if let TagbodyItem::Form(f) = item {
                        take(f, out);
                    }
                }
            }
        }
    }
}
