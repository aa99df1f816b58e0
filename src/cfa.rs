//! Control-flow automata (CFA): the program representation every analysis reads.
//!
//! A [`Program`] is one `petgraph` graph for the whole translation unit. Nodes are
//! program locations ([`Loc`]) with their source position; every edge carries exactly
//! one [`Op`]. Operations are in three-address form: expressions ([`Expr`]) are pure
//! (no memory access, no calls, no side effects), and every memory access is an
//! operation of its own (`Load`, `Store`, `FieldAddr`, `LoadIndirect`, `StoreIndirect`).
//!
//! Invariants the front end guarantees and analyses may rely on:
//! - every variable has a scalar type ([`Ty::Int`] or [`Ty::Ptr`]); struct values live
//!   in memory objects (locals of struct type become pointers to a stack object);
//! - struct fields are flattened: an embedded struct's fields appear as `outer.inner`
//!   fields of the enclosing struct, each with its byte offset (ILP32 layout);
//! - `&&`, `||`, `!` in conditions, `?:` and `,` are lowered into branches, so an
//!   `Assume` condition is a comparison or a pure arithmetic expression;
//! - calls are super-edges (`Op::Call`) from the call site to the return site inside
//!   the caller; the callee body is entered at [`Function::entry`] and left at
//!   [`Function::exit`]; `return e` is an assignment to [`Function::ret`];
//! - error locations are nodes of kind [`LocKind::Error`] (one per `reach_error()` /
//!   `__VERIFIER_error()` / `__assert_fail` call site) and have no successors; nodes of
//!   kind [`LocKind::Sink`] (after `abort()`/`exit()`) have no successors either;
//! - [`Program::entry`] is the entry of a synthetic start function that initialises the
//!   globals (zero or their initialiser) and then calls `main`.

pub mod cells;
pub mod leak;
pub mod live;
pub mod loads;
pub mod recursion;
pub mod rewrite;

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// Index of a variable in [`Program::vars`].
pub type VarId = usize;
/// Index of a function in [`Program::functions`].
pub type FuncId = usize;
/// Index of a struct type in [`Program::structs`].
pub type StructId = usize;
/// A program location (node of [`Program::graph`]).
pub type Node = NodeIndex;
/// A CFA edge (edge of [`Program::graph`]).
pub type EdgeId = EdgeIndex;

/// A position in the source file (1-based line and column; 0 when synthetic).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct SrcLoc {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for SrcLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Types of variables, fields and pointees. Variables and fields are always scalar
/// (`Int` or `Ptr`); `Struct` and `Void` only occur as pointees.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ty {
    /// An integer of `bits` width (ILP32: char 8, short 16, int/long 32, long long 64; `_Bool` is 1).
    Int { bits: u8, signed: bool },
    /// A pointer to the given type.
    Ptr(Box<Ty>),
    /// A struct type (only as a pointee).
    Struct(StructId),
    /// `void` (only as a pointee or a return type).
    Void,
}

impl Ty {
    /// The C `int` type (32 bits, signed).
    pub const INT: Ty = Ty::Int {
        bits: 32,
        signed: true,
    };

    /// True for pointer types.
    pub fn is_ptr(&self) -> bool {
        matches!(self, Ty::Ptr(_))
    }
    /// True for integer types.
    pub fn is_int(&self) -> bool {
        matches!(self, Ty::Int { .. })
    }
    /// The struct a pointer points to, if this is a pointer to a struct.
    pub fn pointee_struct(&self) -> Option<StructId> {
        match self {
            Ty::Ptr(inner) => match **inner {
                Ty::Struct(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }
    /// Inclusive value range of an integer type (`None` for non-integers).
    pub fn int_range(&self) -> Option<(i128, i128)> {
        match *self {
            Ty::Int { bits, signed } => {
                let bits = bits.min(64) as u32;
                if bits == 1 {
                    return Some((0, 1));
                }
                Some(if signed {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                })
            }
            _ => None,
        }
    }
}

/// One (flattened) field of a struct: a scalar at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDef {
    /// Field name; embedded struct fields are dotted (`list.next`).
    pub name: String,
    /// Scalar type of the field.
    pub ty: Ty,
    /// Byte offset from the start of the struct (ILP32 layout as computed by clang).
    pub offset: u64,
}

/// A struct type with its flattened scalar fields, in layout order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<FieldDef>,
    /// `sizeof` in bytes.
    pub size: u64,
}

impl StructDef {
    /// Index of the field with the given (dotted) name.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

/// A field of a particular struct type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FieldRef {
    pub strukt: StructId,
    /// Index into [`StructDef::fields`].
    pub field: usize,
}

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scope {
    Global,
    Param(FuncId),
    Local(FuncId),
    /// A temporary introduced by the front end (three-address lowering).
    Temp(FuncId),
}

/// A program variable. Names are unique within the program (locals are qualified
/// `func::name`, shadowed names get a `#n` suffix).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Var {
    pub name: String,
    pub ty: Ty,
    pub scope: Scope,
    pub src: SrcLoc,
}

/// Unary operators of pure expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnOp {
    /// Arithmetic negation `-e`.
    Neg,
    /// Logical negation `!e` (1 if e == 0, else 0).
    Not,
    /// Bitwise complement `~e`.
    BitNot,
}

/// Binary operators of pure expressions. Comparisons yield 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    /// The C spelling.
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
        }
    }
    /// True for the six comparison operators.
    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
    /// The comparison with its operands swapped (`a < b` iff `b > a`); other
    /// operators are returned unchanged.
    pub fn flip(self) -> BinOp {
        match self {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            op => op,
        }
    }
}

/// A pure expression over variables and constants. Pointer-valued expressions are
/// only `Null`, `Var` and `Cast` of those (pointer arithmetic is refused by the front end).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Expr {
    /// An integer constant.
    Int(i64),
    /// The null pointer.
    Null,
    /// The current value of a variable.
    Var(VarId),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Conversion to an integer type (truncation/extension) or between pointer types (no-op).
    Cast(Ty, Box<Expr>),
}

impl Expr {
    /// Whether the expression is a truth value (0 or 1 whatever it reads): a comparison
    /// or a logical negation.
    pub fn is_boolean(&self) -> bool {
        match self {
            Expr::Binary(op, _, _) => op.is_comparison(),
            Expr::Unary(UnOp::Not, _) => true,
            _ => false,
        }
    }
    /// `a op b`.
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }
    /// The logical negation of a condition, pushing `!` through comparisons.
    pub fn negate(&self) -> Expr {
        use BinOp::*;
        match self {
            Expr::Binary(op, a, b) if op.is_comparison() => {
                let neg = match op {
                    Eq => Ne,
                    Ne => Eq,
                    Lt => Ge,
                    Le => Gt,
                    Gt => Le,
                    Ge => Lt,
                    _ => unreachable!(),
                };
                Expr::Binary(neg, a.clone(), b.clone())
            }
            Expr::Unary(UnOp::Not, e) => Expr::bin(Ne, (**e).clone(), Expr::Int(0)),
            e => Expr::Unary(UnOp::Not, Box::new(e.clone())),
        }
    }
    /// Variables read by the expression, in order of occurrence (with repetitions).
    pub fn vars(&self, out: &mut Vec<VarId>) {
        match self {
            Expr::Int(_) | Expr::Null => {}
            Expr::Var(v) => out.push(*v),
            Expr::Unary(_, e) | Expr::Cast(_, e) => e.vars(out),
            Expr::Binary(_, a, b) => {
                a.vars(out);
                b.vars(out);
            }
        }
    }
}

/// How an object was allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AllocKind {
    /// `malloc` (`zeroed: false`) or `calloc` (`zeroed: true`); may return NULL unless
    /// the program is analysed with `--malloc-never-fails`.
    Heap { zeroed: bool },
    /// A stack or static object backing a struct-typed or address-taken variable;
    /// never fails, never freed by `free`.
    Stack,
}

/// One CFA operation (the label of an edge).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// No effect (joins, declarations without initialiser, `;`, `return;`).
    Skip,
    /// `dst = src` with `src` pure.
    Assign { dst: VarId, src: Expr },
    /// `dst = __VERIFIER_nondet_*()`: any value of `dst`'s type.
    Nondet { dst: VarId },
    /// `dst = ptr->field`.
    Load {
        dst: VarId,
        ptr: VarId,
        field: FieldRef,
    },
    /// `ptr->field = src`.
    Store {
        ptr: VarId,
        field: FieldRef,
        src: Expr,
    },
    /// `dst = &ptr->field` (a pointer to a field of the object `ptr` points to).
    FieldAddr {
        dst: VarId,
        ptr: VarId,
        field: FieldRef,
    },
    /// `dst = *ptr` where `ptr` points to a scalar cell (e.g. a field, via `FieldAddr`).
    LoadIndirect { dst: VarId, ptr: VarId },
    /// `*ptr = src` where `ptr` points to a scalar cell.
    StoreIndirect { ptr: VarId, src: Expr },
    /// `dst = malloc(...)` / `calloc(...)`: a fresh object of type `pointee`
    /// (`bytes` is the requested size when it is a compile-time constant).
    Alloc {
        dst: VarId,
        pointee: Ty,
        bytes: Option<u64>,
        kind: AllocKind,
    },
    /// `free(ptr)` (`free(NULL)` is a no-op; anything else not allocated by malloc is an error).
    Free { ptr: VarId },
    /// Continue only if `cond` evaluates to non-zero.
    Assume { cond: Expr },
    /// Continue only if `ptr` is not NULL and not what `access` needs (see [`Access`]):
    /// the access through it would be a use after free, an invalid dereference or an
    /// invalid (double) free (the edge to a [`LocKind::InvalidDeref`] or
    /// [`LocKind::InvalidFree`] target, [`Program::add_invalid_deref_checks`],
    /// [`Program::add_invalid_free_checks`]).
    AssumeInvalid { ptr: VarId, access: Access },
    /// Continue only if heap objects allocated as `of` (`malloc` of that struct type;
    /// `None`: of any other pointee type) leak in the sense of `check` (see
    /// [`LeakCheck`]): the edge to a [`LocKind::MemLeak`] target that
    /// [`Program::add_leak_checks`] puts where runs end (and, for valid-memtrack, at
    /// loop heads). No effect on the state; only under a memory property.
    AssumeLeak {
        check: LeakCheck,
        of: Option<StructId>,
    },
    /// Call `callee` with `args` (pure), assigning its return value to `ret` if given.
    /// The edge goes from the call site to the return site in the caller.
    Call {
        callee: FuncId,
        args: Vec<Expr>,
        ret: Option<VarId>,
    },
    /// Reaching the target of this edge is the property violation (`reach_error()`).
    Error,
    /// The path ends here (`abort()`, `exit(n)`); the target is a sink.
    Halt,
}

/// What an access needs its (non-NULL) pointer to point to, for [`Op::AssumeInvalid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Access {
    /// `p->f` (`Load`, `Store`, `FieldAddr`): the start of a live object of the struct.
    Struct(StructId),
    /// `*p` (`LoadIndirect`, `StoreIndirect`): a scalar cell of a live object (a field
    /// of a struct, an allocated or address-taken scalar).
    Cell,
    /// `free(p)`: the start of a live object allocated on the heap.
    Free,
}

/// What an [`Op::AssumeLeak`] check asks of the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LeakCheck {
    /// Some heap object is still allocated (valid-memcleanup, where runs end).
    Unfreed,
    /// Some allocated heap object is reachable from no variable (valid-memtrack); the
    /// variables are the run's roots (the locals of returned functions no longer hold
    /// their values, so after `main` returns only globals are roots).
    Unreachable,
}

/// Kinds of program locations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LocKind {
    Normal,
    FuncEntry,
    FuncExit,
    /// An error location (no successors).
    Error,
    /// The target of a NULL-dereference check ([`Program::add_null_deref_checks`]): the
    /// dereference on the sibling edge would read or write through NULL, which is
    /// undefined behaviour. A target like [`LocKind::Error`] (no successors), but
    /// reaching it is not a `reach_error()` call.
    NullDeref,
    /// The target of a division-by-zero check ([`Program::add_div_by_zero_checks`]):
    /// the sibling edge divides by zero (`/` or `%`), undefined behaviour like
    /// [`LocKind::NullDeref`].
    DivByZero,
    /// The target of an invalid-dereference check
    /// ([`Program::add_invalid_deref_checks`]): the sibling access goes through a
    /// dangling (freed) or garbage pointer, undefined behaviour like
    /// [`LocKind::NullDeref`].
    InvalidDeref,
    /// The target of an invalid-free check ([`Program::add_invalid_free_checks`]):
    /// the sibling `free(p)` frees an object twice, or something that is not the start
    /// of a heap object; undefined behaviour like [`LocKind::NullDeref`].
    InvalidFree,
    /// The target of an indirect call's fall-through (added by the front end): the
    /// called function pointer is NULL or not the address of a function of its type
    /// whose address the program takes; undefined behaviour like
    /// [`LocKind::NullDeref`].
    InvalidCall,
    /// The target of a leak check ([`Program::add_leak_checks`], [`Op::AssumeLeak`]):
    /// heap memory is lost (valid-memtrack) or not freed where the run ends
    /// (valid-memcleanup). A target like [`LocKind::NullDeref`], but no undefined
    /// behaviour: reaching it is the violation of the memory property.
    MemLeak,
    /// The target of a call deeper than the recursion bound
    /// ([`recursion::unroll`]): what follows is not analysed. A target like
    /// [`LocKind::NullDeref`]: a run that reaches it ends UNKNOWN, never SAFE.
    RecursionBound,
    /// The target of a step the front end does not model (added by it): the address
    /// `&a[i]` of an array element with `i` out of `0..N` (one past the end is valid C,
    /// but no object of the model is there; anything else is undefined behaviour). A
    /// target like [`LocKind::NullDeref`]: a run that reaches it ends UNKNOWN, never SAFE.
    Unmodelled,
    /// A location after `abort()`/`exit()` (no successors).
    Sink,
}

/// A program location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loc {
    pub func: FuncId,
    pub src: SrcLoc,
    pub kind: LocKind,
}

/// A CFA edge: one operation and the source position of the statement it comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    pub op: Op,
    pub src: SrcLoc,
}

/// A function: its parameters, locals and the entry/exit locations of its body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub params: Vec<VarId>,
    /// Locals and temporaries (not parameters).
    pub locals: Vec<VarId>,
    /// The variable `return e` assigns (None for `void` functions).
    pub ret: Option<VarId>,
    pub ret_ty: Ty,
    pub entry: Node,
    pub exit: Node,
    pub src: SrcLoc,
}

/// A whole program as a control-flow automaton.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Program {
    /// The C file this program was read from.
    pub file: PathBuf,
    pub graph: DiGraph<Loc, Edge>,
    pub vars: Vec<Var>,
    pub structs: Vec<StructDef>,
    pub functions: Vec<Function>,
    /// The user's `main`.
    pub main: FuncId,
    /// Entry of the synthetic start function (global initialisation, then `main`).
    pub entry: Node,
    /// True if the program is analysed under the assumption that heap allocation
    /// (`malloc`/`calloc`) never returns NULL (`--malloc-never-fails`).
    #[serde(default)]
    pub malloc_never_fails: bool,
}

impl Program {
    /// Creates an empty program (used by the front end and by hand-built test programs).
    pub fn new(file: impl Into<PathBuf>) -> Program {
        Program {
            file: file.into(),
            graph: DiGraph::new(),
            vars: Vec::new(),
            structs: Vec::new(),
            functions: Vec::new(),
            main: 0,
            entry: NodeIndex::new(0),
            malloc_never_fails: false,
        }
    }

    /// Adds a variable and returns its id.
    pub fn add_var(&mut self, name: impl Into<String>, ty: Ty, scope: Scope) -> VarId {
        self.vars.push(Var {
            name: name.into(),
            ty,
            scope,
            src: SrcLoc::default(),
        });
        self.vars.len() - 1
    }

    /// Adds a location and returns it.
    pub fn add_loc(&mut self, func: FuncId, src: SrcLoc, kind: LocKind) -> Node {
        self.graph.add_node(Loc { func, src, kind })
    }

    /// Adds an edge labelled `op`.
    pub fn add_edge(&mut self, from: Node, to: Node, op: Op, src: SrcLoc) -> EdgeId {
        self.graph.add_edge(from, to, Edge { op, src })
    }

    /// Outgoing edges of a location: (edge id, target, edge).
    pub fn successors(&self, n: Node) -> impl Iterator<Item = (EdgeId, Node, &Edge)> + '_ {
        self.graph
            .edges(n)
            .map(|e| (e.id(), e.target(), e.weight()))
    }

    /// True if `n` is a location the analyses must prove unreachable: an error
    /// location or the target of an undefined-behaviour check.
    pub fn is_error(&self, n: Node) -> bool {
        self.graph[n].kind == LocKind::Error || self.is_undefined_target(n)
    }

    /// True if `n` is the target of an undefined-behaviour check (NULL dereference,
    /// division by zero, invalid dereference, invalid free, call through an invalid
    /// function pointer), not a `reach_error()` call.
    pub fn is_undefined_target(&self, n: Node) -> bool {
        matches!(
            self.graph[n].kind,
            LocKind::NullDeref
                | LocKind::DivByZero
                | LocKind::InvalidDeref
                | LocKind::InvalidFree
                | LocKind::InvalidCall
                | LocKind::MemLeak
                | LocKind::RecursionBound
                | LocKind::Unmodelled
        )
    }

    /// True if `n` is the target of a NULL-dereference check.
    pub fn is_null_deref(&self, n: Node) -> bool {
        self.graph[n].kind == LocKind::NullDeref
    }

    /// Makes NULL dereferences targets: beside every edge that dereferences a pointer
    /// variable `p` (`Load`, `Store`, `FieldAddr`, `LoadIndirect`, `StoreIndirect`) it
    /// adds an edge `assume(p == NULL)` to a new [`LocKind::NullDeref`] location of the
    /// same function and source position. Reading or writing through NULL is
    /// undefined behaviour, after which C allows anything, `reach_error()` included;
    /// the analyses and the path encoding stop a path at an invalid access, so a SAFE
    /// answer is only sound once these targets are proven unreachable too.
    ///
    /// Pointers that only ever hold a stack object (struct locals, address-taken
    /// scalars) are not checked: they are never NULL. Only edges are appended (node and
    /// edge indices of the program before stay valid), each check after its sibling, so
    /// [`Program::next_steps`] and the interpreter try the access first. Returns the
    /// number of checks added.
    pub fn add_null_deref_checks(&mut self) -> usize {
        self.add_access_checks(LocKind::NullDeref, |op| match op {
            Op::Load { ptr, .. }
            | Op::Store { ptr, .. }
            | Op::FieldAddr { ptr, .. }
            | Op::LoadIndirect { ptr, .. }
            | Op::StoreIndirect { ptr, .. } => Some((
                *ptr,
                Op::Assume {
                    cond: Expr::bin(BinOp::Eq, Expr::Var(*ptr), Expr::Null),
                },
            )),
            _ => None,
        })
    }

    /// Beside every edge whose operation `check` maps to `(p, c)` (an access through
    /// pointer `p`), unless `p` only holds stack objects, an edge with operation `c` to
    /// a new target location of `kind`. Returns the number of checks added.
    fn add_access_checks(
        &mut self,
        kind: LocKind,
        check: impl Fn(&Op) -> Option<(VarId, Op)>,
    ) -> usize {
        // freeing a stack object is an error too
        let stack_only = match kind {
            LocKind::InvalidFree => vec![false; self.vars.len()],
            _ => self.stack_only_pointers(),
        };
        let mut todo = Vec::new();
        for e in self.graph.edge_indices() {
            let Some((ptr, op)) = check(&self.graph[e].op) else {
                continue;
            };
            if !stack_only[ptr] {
                let Some((from, _)) = self.graph.edge_endpoints(e) else {
                    continue;
                };
                todo.push((from, op, self.graph[e].src));
            }
        }
        let n = todo.len();
        for (from, op, src) in todo {
            self.add_target(from, kind, op, src);
        }
        n
    }

    /// An edge with operation `op` from `from` to a new location of `kind` (a target:
    /// no successors) in the same function.
    fn add_target(&mut self, from: Node, kind: LocKind, op: Op, src: SrcLoc) {
        let target = self.add_loc(self.graph[from].func, src, kind);
        self.add_edge(from, target, op, src);
    }

    /// The undefined-behaviour targets `verify` proves unreachable:
    /// [`Program::add_null_deref_checks`], [`Program::add_invalid_deref_checks`],
    /// [`Program::add_invalid_free_checks`] and [`Program::add_div_by_zero_checks`].
    /// Returns the numbers of checks added (NULL dereference, invalid dereference,
    /// invalid free, division by zero).
    pub fn add_undefined_behaviour_checks(&mut self) -> (usize, usize, usize, usize) {
        let null = self.add_null_deref_checks();
        let invalid = self.add_invalid_deref_checks();
        let free = self.add_invalid_free_checks();
        (null, invalid, free, self.add_div_by_zero_checks())
    }

    /// Replaces every `x = (p rel q)` whose operands include a pointer (`return
    /// head->next == head;`) by the branch `assume(p rel q); x = 1` / `assume(!(p rel
    /// q)); x = 0`, the same runs: a heap domain decides a pointer comparison in an
    /// `assume` (aliasing, the shape of the heap), not in an integer value. Returns the
    /// number of assignments replaced.
    pub fn branch_pointer_comparisons(&mut self) -> usize {
        let is_ptr = |e: &Expr| match e {
            Expr::Null => true,
            Expr::Var(v) => self.vars.get(*v).is_some_and(|x| x.ty.is_ptr()),
            Expr::Cast(ty, _) => ty.is_ptr(),
            _ => false,
        };
        let found: Vec<EdgeId> = self
            .graph
            .edge_indices()
            .filter(|&e| match &self.graph[e].op {
                Op::Assign {
                    src: Expr::Binary(op, a, b),
                    dst,
                } => {
                    op.is_comparison()
                        && (is_ptr(a) || is_ptr(b))
                        && self.vars.get(*dst).is_some_and(|x| x.ty.is_int())
                }
                _ => false,
            })
            .collect();
        // the last first: `remove_edge` moves the last edge into the freed index
        for &e in found.iter().rev() {
            let Some((from, to)) = self.graph.edge_endpoints(e) else {
                continue;
            };
            let Some(edge) = self.graph.remove_edge(e) else {
                continue;
            };
            let Op::Assign { dst, src } = edge.op else {
                continue;
            };
            let func = self.graph[from].func;
            for (cond, val) in [(src.clone(), 1), (src.negate(), 0)] {
                let mid = self.add_loc(func, edge.src, LocKind::Normal);
                self.add_edge(from, mid, Op::Assume { cond }, edge.src);
                self.add_edge(
                    mid,
                    to,
                    Op::Assign {
                        dst,
                        src: Expr::Int(val),
                    },
                    edge.src,
                );
            }
        }
        found.len()
    }

    /// Makes dereferences of dangling (freed) and garbage pointers targets: beside
    /// every `Load`, `Store` and `FieldAddr` through a pointer `p` to struct `S` it adds
    /// an edge `assume_invalid(p)` ([`Op::AssumeInvalid`] with [`Access::Struct`]`(S)`),
    /// beside every `LoadIndirect` and `StoreIndirect` through `p` one with
    /// [`Access::Cell`], to a new [`LocKind::InvalidDeref`] location of the same
    /// function and source position. Like [`Program::add_null_deref_checks`]: pointers
    /// that only hold stack objects are skipped, only nodes and edges are appended,
    /// each check after its sibling. Returns the number of checks added.
    pub fn add_invalid_deref_checks(&mut self) -> usize {
        self.add_access_checks(LocKind::InvalidDeref, |op| {
            let (ptr, access) = match op {
                Op::Load { ptr, field, .. }
                | Op::Store { ptr, field, .. }
                | Op::FieldAddr { ptr, field, .. } => (*ptr, Access::Struct(field.strukt)),
                Op::LoadIndirect { ptr, .. } | Op::StoreIndirect { ptr, .. } => {
                    (*ptr, Access::Cell)
                }
                _ => return None,
            };
            Some((ptr, Op::AssumeInvalid { ptr, access }))
        })
    }

    /// Makes double and invalid frees targets: beside every `free(p)` an edge
    /// `assume_invalid(p)` ([`Op::AssumeInvalid`] with [`Access::Free`]: `p` is neither
    /// NULL nor the start of a live heap object) to a new [`LocKind::InvalidFree`]
    /// location of the same function and source position. Unlike the dereference
    /// checks, pointers that only hold stack objects are checked too (freeing one is
    /// the error). Only appends nodes and edges, each check after its sibling. Returns
    /// the number of checks added.
    pub fn add_invalid_free_checks(&mut self) -> usize {
        self.add_access_checks(LocKind::InvalidFree, |op| match op {
            Op::Free { ptr } => Some((
                *ptr,
                Op::AssumeInvalid {
                    ptr: *ptr,
                    access: Access::Free,
                },
            )),
            _ => None,
        })
    }

    /// Makes divisions by zero targets: beside every edge whose expressions divide by
    /// a divisor `d` that is not a non-zero constant (`a / d`, `a % d`) it adds an edge
    /// `assume(d == 0)` to a new [`LocKind::DivByZero`] location of the same function
    /// and source position (one per divisor and edge source, so the two branches of a
    /// condition share it). Expressions have no short-circuit operators (the front end
    /// lowers `&&`, `||` and `?:` to branches), so every division in an edge's
    /// expressions is evaluated when the edge is taken. Like
    /// [`Program::add_null_deref_checks`], only appends nodes and edges, each check
    /// after its sibling. Returns the number of checks added.
    pub fn add_div_by_zero_checks(&mut self) -> usize {
        let mut todo: Vec<(Node, Expr, SrcLoc)> = Vec::new();
        for e in self.graph.edge_indices() {
            let mut divisors = Vec::new();
            match &self.graph[e].op {
                Op::Assign { src, .. } | Op::Store { src, .. } | Op::StoreIndirect { src, .. } => {
                    divisors_of(src, &mut divisors)
                }
                Op::Assume { cond } => divisors_of(cond, &mut divisors),
                Op::Call { args, .. } => args.iter().for_each(|a| divisors_of(a, &mut divisors)),
                _ => {}
            }
            let Some((from, _)) = self.graph.edge_endpoints(e) else {
                continue;
            };
            for d in divisors {
                if !todo.iter().any(|(f, x, _)| *f == from && *x == d) {
                    todo.push((from, d, self.graph[e].src));
                }
            }
        }
        let n = todo.len();
        for (from, d, src) in todo {
            let cond = Expr::bin(BinOp::Eq, d, Expr::Int(0));
            self.add_target(from, LocKind::DivByZero, Op::Assume { cond }, src);
        }
        n
    }

    /// Per variable: true if every operation that writes it is a stack allocation
    /// (and there is one), so it never holds NULL. Parameters and return variables are
    /// written by calls and never count.
    fn stack_only_pointers(&self) -> Vec<bool> {
        let mut stack = vec![false; self.vars.len()];
        let mut other = vec![false; self.vars.len()];
        for f in &self.functions {
            for &v in f.params.iter().chain(f.ret.iter()) {
                other[v] = true;
            }
        }
        for e in self.graph.edge_weights() {
            match &e.op {
                Op::Alloc {
                    dst,
                    kind: AllocKind::Stack,
                    ..
                } => stack[*dst] = true,
                Op::Assign { dst, .. }
                | Op::Nondet { dst }
                | Op::Load { dst, .. }
                | Op::FieldAddr { dst, .. }
                | Op::LoadIndirect { dst, .. }
                | Op::Alloc { dst, .. } => other[*dst] = true,
                Op::Call { ret: Some(r), .. } => other[*r] = true,
                _ => {}
            }
        }
        stack.iter().zip(&other).map(|(s, o)| *s && !*o).collect()
    }

    /// The function with the given name.
    pub fn function(&self, name: &str) -> Option<FuncId> {
        self.functions.iter().position(|f| f.name == name)
    }

    /// The field definition a [`FieldRef`] names.
    pub fn field(&self, f: FieldRef) -> &FieldDef {
        &self.structs[f.strukt].fields[f.field]
    }

    /// Renders an expression with variable names.
    pub fn expr_str(&self, e: &Expr) -> String {
        ExprDisplay { p: self, e }.to_string()
    }

    /// Renders an operation in C-like syntax with variable names.
    pub fn op_str(&self, op: &Op) -> String {
        let v = |x: &VarId| self.vars[*x].name.as_str();
        let fld = |f: &FieldRef| self.field(*f).name.as_str();
        match op {
            Op::Skip => "skip".into(),
            Op::Assign { dst, src } => format!("{} = {}", v(dst), self.expr_str(src)),
            Op::Nondet { dst } => format!("{} = nondet()", v(dst)),
            Op::Load { dst, ptr, field } => format!("{} = {}->{}", v(dst), v(ptr), fld(field)),
            Op::Store { ptr, field, src } => {
                format!("{}->{} = {}", v(ptr), fld(field), self.expr_str(src))
            }
            Op::FieldAddr { dst, ptr, field } => {
                format!("{} = &{}->{}", v(dst), v(ptr), fld(field))
            }
            Op::LoadIndirect { dst, ptr } => format!("{} = *{}", v(dst), v(ptr)),
            Op::StoreIndirect { ptr, src } => format!("*{} = {}", v(ptr), self.expr_str(src)),
            Op::Alloc {
                dst, pointee, kind, ..
            } => {
                let what = match kind {
                    AllocKind::Heap { zeroed: false } => "malloc",
                    AllocKind::Heap { zeroed: true } => "calloc",
                    AllocKind::Stack => "stack_alloc",
                };
                format!("{} = {}({})", v(dst), what, self.ty_str(pointee))
            }
            Op::Free { ptr } => format!("free({})", v(ptr)),
            Op::Assume { cond } => format!("assume({})", self.expr_str(cond)),
            Op::AssumeInvalid { ptr, access } => match access {
                Access::Struct(_) => format!("assume_invalid({})", v(ptr)),
                Access::Cell => format!("assume_invalid(*{})", v(ptr)),
                Access::Free => format!("assume_invalid_free({})", v(ptr)),
            },
            Op::AssumeLeak { check, of } => {
                let what = match check {
                    LeakCheck::Unfreed => "assume_unfreed",
                    LeakCheck::Unreachable => "assume_lost",
                };
                match of {
                    Some(s) => format!("{what}(struct {})", self.structs[*s].name),
                    None => format!("{what}(other)"),
                }
            }
            Op::Call { callee, args, ret } => {
                let args: Vec<String> = args.iter().map(|a| self.expr_str(a)).collect();
                let call = format!("{}({})", self.functions[*callee].name, args.join(", "));
                match ret {
                    Some(r) => format!("{} = {}", v(r), call),
                    None => call,
                }
            }
            Op::Error => "reach_error()".into(),
            Op::Halt => "halt".into(),
        }
    }

    /// Renders a type in C syntax.
    pub fn ty_str(&self, ty: &Ty) -> String {
        match ty {
            Ty::Int { bits, signed } => format!("{}int{}", if *signed { "" } else { "u" }, bits),
            Ty::Ptr(t) => format!("{}*", self.ty_str(t)),
            Ty::Struct(s) => format!("struct {}", self.structs[*s].name),
            Ty::Void => "void".into(),
        }
    }
}

struct ExprDisplay<'a> {
    p: &'a Program,
    e: &'a Expr,
}

impl fmt::Display for ExprDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sub = |e| ExprDisplay { p: self.p, e };
        match self.e {
            Expr::Int(n) => write!(f, "{n}"),
            Expr::Null => write!(f, "NULL"),
            Expr::Var(v) => write!(f, "{}", self.p.vars[*v].name),
            Expr::Unary(op, e) => {
                let s = match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                };
                write!(f, "{s}({})", sub(e))
            }
            Expr::Binary(op, a, b) => write!(f, "({} {} {})", sub(a), op.symbol(), sub(b)),
            Expr::Cast(t, e) => write!(f, "({}){}", self.p.ty_str(t), sub(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negate_pushes_through_comparisons() {
        let e = Expr::bin(BinOp::Lt, Expr::Var(0), Expr::Int(3));
        assert_eq!(e.negate(), Expr::bin(BinOp::Ge, Expr::Var(0), Expr::Int(3)));
        assert_eq!(e.negate().negate(), e);
    }

    #[test]
    fn int_ranges() {
        assert_eq!(Ty::INT.int_range(), Some((-(1 << 31), (1 << 31) - 1)));
        assert_eq!(
            Ty::Int {
                bits: 8,
                signed: false
            }
            .int_range(),
            Some((0, 255))
        );
        assert_eq!(
            Ty::Int {
                bits: 1,
                signed: false
            }
            .int_range(),
            Some((0, 1))
        );
    }
}

/// One step of an interprocedural program path. A path is a sequence of steps that
/// the interpreter executes and the SMT encoder turns into a path formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Step {
    /// Execute an intraprocedural edge (any op except `Call`).
    Edge(EdgeId),
    /// Enter the callee of a `Call` edge: bind parameters to the argument values and
    /// continue at the callee's entry (the caller's locals are kept on the call stack).
    Enter(EdgeId),
    /// Return from the callee's exit to the target of the given `Call` edge, assigning
    /// the callee's return variable to the call's `ret` (if any).
    Leave(EdgeId),
}

/// The nondeterministic choices of one execution, in the order they are made: the
/// values of `Nondet` operations (and of uninitialised locals when they are read)
/// and, for each heap allocation, whether `malloc` returned NULL. A counterexample
/// carries these so that the interpreter can replay it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inputs {
    /// Values of `Nondet` operations, in execution order.
    pub nondet: Vec<i64>,
    /// For each heap `Alloc`, in execution order: true if it returned NULL.
    pub alloc_null: Vec<bool>,
    /// What a read of an uninitialised cell (`malloc`'d memory, a stack struct's
    /// field) yields, by the index of the path step that reads it (a replay of a
    /// path model; 0 or NULL where none is given): an indeterminate value, which
    /// SV-COMP's semantics leaves to the environment like `nondet()`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub uninit_loads: std::collections::BTreeMap<usize, i64>,
}

impl Program {
    /// The interprocedural successors of location `n` under the call stack `stack`
    /// (innermost call last): each outgoing edge as `Step::Edge`, a `Call` edge as
    /// `Step::Enter` into the callee's entry, and, at a function exit with a non-empty
    /// stack, `Step::Leave` to the return site of the innermost call. The caller
    /// pushes the call edge on `Enter` and pops it on `Leave`.
    pub fn next_steps(&self, n: Node, stack: &[EdgeId]) -> Vec<(Step, Node)> {
        let mut out: Vec<(Step, Node)> = self
            .graph
            .edges(n)
            .map(|e| match &e.weight().op {
                Op::Call { callee, .. } => (Step::Enter(e.id()), self.functions[*callee].entry),
                _ => (Step::Edge(e.id()), e.target()),
            })
            .collect();
        out.reverse(); // creation order
        if out.is_empty() && self.graph[n].kind == LocKind::FuncExit {
            if let Some(&call) = stack.last() {
                if let Some((_, ret_site)) = self.graph.edge_endpoints(call) {
                    out.push((Step::Leave(call), ret_site));
                }
            }
        }
        out
    }

    /// The CFA edge a step executes (for `Leave`, the call edge it returns from).
    pub fn step_edge(&self, s: Step) -> &Edge {
        match s {
            Step::Edge(e) | Step::Enter(e) | Step::Leave(e) => &self.graph[e],
        }
    }
}

/// The divisors of `e` (of `/` and `%`, innermost first) that are not non-zero
/// constants.
fn divisors_of(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Int(_) | Expr::Null | Expr::Var(_) => {}
        Expr::Unary(_, a) | Expr::Cast(_, a) => divisors_of(a, out),
        Expr::Binary(op, a, b) => {
            divisors_of(a, out);
            divisors_of(b, out);
            let constant = matches!(**b, Expr::Int(c) if c != 0);
            if matches!(op, BinOp::Div | BinOp::Rem) && !constant && !out.contains(b) {
                out.push((**b).clone());
            }
        }
    }
}
