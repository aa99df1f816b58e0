//! Lowering of the clang AST to the CFA (see `cfa.rs` for the target's invariants).
//!
//! Conventions (documented for the analyses):
//! - locals declared without initialiser get a `Nondet` edge at the declaration
//!   (their value is indeterminate in C);
//! - struct-typed locals/globals become a pointer variable (same name) to an object
//!   allocated with `AllocKind::Stack` at the declaration (globals: in the start
//!   function); `s.f` is then `s->f`; a stack object declared in a loop is allocated
//!   afresh in every iteration; struct copies (`a = b`, `struct T a = b;`) are
//!   lowered field by field (all loads, then all stores); stack objects and cells are
//!   never freed (a use after the function returned is not detected);
//! - unsigned `+ - * <<`, unary `-`/`~` and narrowing conversions are wrapped in
//!   `Expr::Cast(ty, ..)` (modular arithmetic); signed overflow is undefined in C and
//!   is not modelled;
//! - conversions to `_Bool` become `e != 0` (`e != NULL`);
//! - only functions reachable from `main` are lowered (a function whose address a
//!   lowered function or a global initialiser takes is reachable); calls to
//!   `reach_error` and the assert-failure functions become `Error` edges,
//!   `abort`/`exit` `Halt` edges;
//! - a function pointer is an `int` function id: NULL is 0, `f`/`&f` as a value is
//!   `1 + FuncId(f)`; an indirect call `fp(args)` evaluates `fp` and the arguments,
//!   then branches over the functions whose address is taken and whose type is the
//!   pointer's (`assume(fp == id_f)`, then an ordinary call of `f`); when `fp` is none
//!   of them an edge leads to a `LocKind::InvalidCall` target (undefined behaviour);
//!   conversions to or from other types (other function pointer types included),
//!   arithmetic and `<`-comparisons on function pointers and calls through pointers
//!   to variadic or unprototyped functions are refused;
//! - `alloca` becomes an `Alloc` of kind `Stack`; the `pointee` of an allocation is the
//!   innermost non-void pointer type the result is converted to (cast, destination,
//!   parameter, also through `?:`), `Ty::Void` if there is none;
//! - a scalar variable whose address is taken (`&x` anywhere in the file) becomes a
//!   pointer variable (same name; parameters: `f::p#cell`) to a stack cell allocated at
//!   the declaration (`Alloc { pointee: T, kind: Stack }`); reads/writes of `x` are
//!   `LoadIndirect`/`StoreIndirect`, `&x` is the pointer itself;
//! - `p->f` reads/writes are `Load`/`Store` (into a temporary `f::__tN` unless the
//!   destination is a variable of the same type), `&p->f` is `FieldAddr`;
//! - when a later operand has side effects (calls, assignments, `++`), earlier operand
//!   values are copied into temporaries first (left-to-right evaluation);
//! - GNU statement expressions `({ ...; e; })` (used by glibc's `assert`) are lowered
//!   statement by statement;
//! - an integer assigned a pointer comparison (`x = (p == q)`) becomes a branch over
//!   `assume(p == q)` (`cfa::Program::branch_pointer_comparisons`);
//! - `Skip` edges are contracted away where possible and nodes unreachable from the
//!   function entry are dropped (the exit node is always kept).

#![allow(non_upper_case_globals)]

use super::clang::{Cursor, TranslationUnit, Type};
use super::types::{is_fn_ptr, is_fn_type, promote, range_includes, wrap_const, CTy, BOOL, FN_PTR};
use super::FrontendOptions;
use crate::cfa::{
    AllocKind, BinOp, Expr, FieldRef, FuncId, Function, LocKind, Op, Program, Scope, SrcLoc,
    StructId, Ty, UnOp, VarId,
};
use clang_sys::*;
use petgraph::graph::NodeIndex;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

/// Why lowering stopped: an unsupported construct at a position.
#[derive(Debug, Clone)]
pub struct Unsup {
    pub file: Option<PathBuf>,
    pub at: SrcLoc,
    pub construct: String,
}

/// Result of lowering steps.
pub type R<T> = Result<T, Unsup>;

/// An `Unsupported` error blaming cursor `c`.
pub fn unsup<T>(c: Cursor<'_>, what: &str) -> R<T> {
    Err(unsup_at(c, what))
}

fn unsup_at(c: Cursor<'_>, what: &str) -> Unsup {
    let p = c.position();
    Unsup {
        file: (!p.file.is_empty()).then(|| PathBuf::from(p.file)),
        at: SrcLoc {
            line: p.line,
            col: p.col,
        },
        construct: what.to_string(),
    }
}

fn loc(c: Cursor<'_>) -> SrcLoc {
    let p = c.position();
    SrcLoc {
        line: p.line,
        col: p.col,
    }
}

const ERROR_FNS: &[&str] = &[
    "reach_error",
    "__VERIFIER_error",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert",
];
const HALT_FNS: &[&str] = &["abort", "exit", "_Exit"];
/// External functions without effect on program memory (result: nondet).
const PURE_EXTERNS: &[&str] = &["printf", "puts", "putchar"];

/// A global variable to initialise in the start function.
struct GlobalInit<'t> {
    var: VarId,
    decl: Cursor<'t>,
    strukt: Option<StructId>,
}

/// Whole-program lowering state.
pub struct Ctx<'t> {
    pub prog: Program,
    pub struct_ids: HashMap<String, StructId>,
    /// Definition cursor of each struct (None if opaque), indexed by StructId.
    pub struct_defs: Vec<Option<Cursor<'t>>>,
    tu: &'t TranslationUnit<'t>,
    globals: HashMap<Cursor<'t>, VarId>,
    global_inits: Vec<GlobalInit<'t>>,
    /// Variables that point to the stack object backing a struct-typed variable.
    obj_vars: HashMap<VarId, StructId>,
    /// Variables that point to the stack cell backing an address-taken scalar variable.
    cell_vars: HashMap<VarId, Ty>,
    /// Canonical declarations of scalar variables whose address is taken (`&x`).
    addr_taken: HashSet<Cursor<'t>>,
    /// File-scope variables that could not be registered; the error is reported only
    /// if the variable is used.
    deferred_globals: HashMap<Cursor<'t>, Unsup>,
    /// Structs whose layout could not be flattened (reported whenever they are used).
    pub struct_errors: HashMap<StructId, Unsup>,
    /// Names of all variables (kept unique).
    var_names: HashSet<String>,
    funcs: HashMap<Cursor<'t>, FuncId>,
    func_defs: Vec<Cursor<'t>>,
    worklist: VecDeque<FuncId>,
    bodies: Vec<Option<LocalGraph>>,
    /// Functions whose address the program takes (`&f`, or `f` as a value).
    fn_targets: BTreeSet<FuncId>,
    /// Indirect calls, branched over their candidates once every function is lowered.
    indirect_calls: Vec<IndirectCall<'t>>,
    /// Link structs identified with their container (`container_of`).
    pub intrusive: super::intrusive::Intrusive<'t>,
}

/// A call through a function pointer, between nodes `from` and `to` of function
/// `func`'s local graph, resolved by [`Ctx::resolve_indirect_calls`].
struct IndirectCall<'t> {
    func: FuncId,
    from: usize,
    to: usize,
    /// The called pointer's value (a variable).
    ptr: VarId,
    /// The function type the pointer points to (canonical).
    fn_ty: Type<'t>,
    args: Vec<Expr>,
    ret: Option<VarId>,
    src: SrcLoc,
}

/// A function's CFA before it is copied into the program graph.
#[derive(Default)]
struct LocalGraph {
    nodes: Vec<(SrcLoc, LocKind)>,
    edges: Vec<(usize, usize, Op, SrcLoc)>,
    entry: usize,
    exit: usize,
}

/// Lowers a parsed translation unit.
pub fn lower<'t>(tu: &'t TranslationUnit<'t>, path: &Path, opts: &FrontendOptions) -> R<Program> {
    let mut cx = Ctx {
        prog: Program::new(path),
        struct_ids: HashMap::new(),
        struct_defs: Vec::new(),
        tu,
        globals: HashMap::new(),
        global_inits: Vec::new(),
        obj_vars: HashMap::new(),
        cell_vars: HashMap::new(),
        addr_taken: HashSet::new(),
        deferred_globals: HashMap::new(),
        struct_errors: HashMap::new(),
        var_names: HashSet::new(),
        funcs: HashMap::new(),
        func_defs: Vec::new(),
        worklist: VecDeque::new(),
        bodies: Vec::new(),
        fn_targets: BTreeSet::new(),
        indirect_calls: Vec::new(),
        intrusive: Default::default(),
    };
    cx.prog.malloc_never_fails = opts.malloc_never_fails;
    let root = tu.cursor();
    cx.intrusive = super::intrusive::scan(root);
    for d in root.children() {
        if d.kind() == CXCursor_FunctionDecl && d.is_definition() {
            collect_addr_taken(d, &mut cx.addr_taken);
        }
    }
    let mut main = None;
    for d in root.children() {
        match d.kind() {
            CXCursor_VarDecl if d.in_main_file() => {
                if let Err(e) = cx.global_var(d) {
                    cx.deferred_globals.insert(d.canonical(), e);
                }
            }
            CXCursor_FunctionDecl if d.spelling() == "main" && d.is_definition() => {
                main = Some(d);
            }
            _ => {}
        }
    }
    let Some(main) = main else {
        return Err(Unsup {
            file: None,
            at: SrcLoc::default(),
            construct: "program without a `main` function".into(),
        });
    };
    let main_id = cx.func_id(main)?;
    cx.lower_queued()?;
    let start = cx.start_function(main_id)?;
    // functions whose address only a global initialiser takes
    cx.lower_queued()?;
    cx.resolve_indirect_calls();
    cx.prog.main = main_id;
    cx.assemble();
    cx.prog.entry = cx.prog.functions[start].entry;
    cx.prog.branch_pointer_comparisons();
    Ok(cx.prog)
}

impl<'t> Ctx<'t> {
    /// Lowers the bodies of the queued functions (and of those they make reachable).
    fn lower_queued(&mut self) -> R<()> {
        while let Some(f) = self.worklist.pop_front() {
            let g = FnLower::lower_function(self, f)?;
            self.bodies[f] = Some(g);
        }
        Ok(())
    }

    /// The value of the address of function `f` (a function pointer): `1 + f`.
    fn fn_id_value(f: FuncId) -> Expr {
        Expr::Int(1 + f as i64)
    }

    /// Branches every indirect call over the functions whose address the program
    /// takes and whose type is the pointer's: `assume(ptr == id_f)` then a call of `f`,
    /// one after the other, and when the pointer is none of them (NULL, garbage, a
    /// function of another type) an edge to a [`LocKind::InvalidCall`] target.
    fn resolve_indirect_calls(&mut self) {
        let calls = std::mem::take(&mut self.indirect_calls);
        let targets: Vec<FuncId> = self.fn_targets.iter().copied().collect();
        for ic in calls {
            let candidates: Vec<FuncId> = targets
                .iter()
                .copied()
                .filter(|&f| self.func_defs[f].ty().canonical().equals(&ic.fn_ty))
                .collect();
            let Some(g) = self.bodies[ic.func].as_mut() else {
                continue;
            };
            let node = |g: &mut LocalGraph, kind: LocKind| {
                g.nodes.push((ic.src, kind));
                g.nodes.len() - 1
            };
            let mut cur = ic.from;
            for f in candidates {
                let id = Ctx::fn_id_value(f);
                let (call, next) = (node(g, LocKind::Normal), node(g, LocKind::Normal));
                let is = Expr::bin(BinOp::Eq, Expr::Var(ic.ptr), id);
                let isnt = is.negate();
                g.edges.push((cur, call, Op::Assume { cond: is }, ic.src));
                g.edges.push((cur, next, Op::Assume { cond: isnt }, ic.src));
                let op = Op::Call {
                    callee: f,
                    args: ic.args.clone(),
                    ret: ic.ret,
                };
                g.edges.push((call, ic.to, op, ic.src));
                cur = next;
            }
            let target = node(g, LocKind::InvalidCall);
            // without candidates, an edge that names the pointer (messages name it)
            let op = if cur == ic.from {
                let p = Expr::Var(ic.ptr);
                Op::Assume {
                    cond: Expr::bin(BinOp::Eq, p.clone(), p),
                }
            } else {
                Op::Skip
            };
            g.edges.push((cur, target, op, ic.src));
        }
    }

    /// The FuncId of a function definition, registering it (and queueing its body).
    fn func_id(&mut self, def: Cursor<'t>) -> R<FuncId> {
        let key = def.canonical();
        if let Some(&f) = self.funcs.get(&key) {
            return Ok(f);
        }
        if def.is_variadic() {
            return unsup(def, "variadic function definition");
        }
        let ret_ty = match self.conv(def.result_type(), def)? {
            CTy::Scalar(t) => t,
            CTy::Void => Ty::Void,
            CTy::Struct(_) => return unsup(def, "struct return value"),
        };
        let id = self.prog.functions.len();
        self.prog.functions.push(Function {
            name: def.spelling(),
            params: Vec::new(),
            locals: Vec::new(),
            ret: None,
            ret_ty,
            entry: NodeIndex::new(0),
            exit: NodeIndex::new(0),
            src: loc(def),
        });
        self.funcs.insert(key, id);
        self.func_defs.push(def);
        self.bodies.push(None);
        self.worklist.push_back(id);
        Ok(id)
    }

    /// Adds a variable; its name is made unique (`name#n`) if it is already taken.
    fn new_var(&mut self, name: String, ty: Ty, scope: Scope, src: SrcLoc) -> VarId {
        let mut unique = name.clone();
        let mut n = 1;
        while self.var_names.contains(&unique) {
            unique = format!("{name}#{n}");
            n += 1;
        }
        self.var_names.insert(unique.clone());
        let v = self.prog.add_var(unique, ty, scope);
        self.prog.vars[v].src = src;
        v
    }

    /// Registers a global variable (file scope or static local) given any declaration.
    fn global_var(&mut self, d: Cursor<'t>) -> R<VarId> {
        let key = d.canonical();
        if let Some(&v) = self.globals.get(&key) {
            return Ok(v);
        }
        if let Some(e) = self.deferred_globals.get(&key) {
            return Err(e.clone());
        }
        let def = d.definition().unwrap_or(d);
        if def.storage_class() == CX_SC_Extern && !def.is_definition() {
            // `extern T x;` without a definition in this translation unit
            return unsup(d, "external variable without definition");
        }
        let name = match d.semantic_parent() {
            Some(p) if p.kind() == CXCursor_FunctionDecl => {
                format!("{}::{}", p.spelling(), d.spelling())
            }
            _ => d.spelling(),
        };
        let mut cell = None;
        let (ty, strukt) = match self.conv(d.ty(), d)? {
            CTy::Scalar(t) if self.addr_taken.contains(&key) => {
                cell = Some(t.clone());
                (Ty::Ptr(Box::new(t)), None)
            }
            CTy::Scalar(t) => (t, None),
            CTy::Struct(s) => (Ty::Ptr(Box::new(Ty::Struct(s))), Some(s)),
            CTy::Void => return unsup(d, "void variable"),
        };
        let v = self.new_var(name, ty, Scope::Global, loc(def));
        if let Some(s) = strukt {
            self.obj_vars.insert(v, s);
        }
        if let Some(t) = cell {
            self.cell_vars.insert(v, t);
        }
        self.globals.insert(key, v);
        self.global_inits.push(GlobalInit {
            var: v,
            decl: def,
            strukt,
        });
        Ok(v)
    }

    /// Builds `__shapemc_start`: allocate struct globals, initialise all globals, call main.
    fn start_function(&mut self, main: FuncId) -> R<FuncId> {
        let id = self.prog.functions.len();
        self.prog.functions.push(Function {
            name: "__shapemc_start".into(),
            params: Vec::new(),
            locals: Vec::new(),
            ret: None,
            ret_ty: Ty::Void,
            entry: NodeIndex::new(0),
            exit: NodeIndex::new(0),
            src: SrcLoc::default(),
        });
        self.bodies.push(None);
        let main_def = self.func_defs[main];
        self.func_defs.push(main_def);
        let inits = std::mem::take(&mut self.global_inits);
        let mut fl = FnLower::new(self, id);
        for g in &inits {
            let src = fl.cx.prog.vars[g.var].src;
            if let Some(s) = g.strukt {
                let bytes = fl.cx.prog.structs[s].size;
                fl.emit(
                    Op::Alloc {
                        dst: g.var,
                        pointee: Ty::Struct(s),
                        bytes: Some(bytes),
                        kind: AllocKind::Stack,
                    },
                    src,
                );
            }
            if let Some(t) = fl.cx.cell_vars.get(&g.var).cloned() {
                fl.alloc_cell(g.var, t, src);
            }
        }
        for g in &inits {
            let src = fl.cx.prog.vars[g.var].src;
            let init = g.decl.var_init();
            if let Some(t) = fl.cx.cell_vars.get(&g.var).cloned() {
                let e = match init {
                    Some(i) => fl.rv_as(i, &t)?,
                    None => zero(&t),
                };
                fl.emit(Op::StoreIndirect { ptr: g.var, src: e }, src);
                continue;
            }
            let prefix = fl.cx.obj_prefix(g.decl.ty());
            match (g.strukt, init) {
                (Some(s), Some(i)) => fl.init_struct(g.var, s, &prefix, Some(i), true)?,
                (Some(s), None) => fl.init_struct(g.var, s, &prefix, None, true)?,
                (None, Some(i)) => fl.rhs_into(i, g.var)?,
                (None, None) => {
                    let z = zero(&fl.cx.prog.vars[g.var].ty);
                    fl.emit(Op::Assign { dst: g.var, src: z }, src);
                }
            }
        }
        // call main with nondeterministic arguments
        let mut args = Vec::new();
        for i in 0..main_def.num_args().max(0) as u32 {
            let Some(p) = main_def.arg(i) else { continue };
            let ty = fl.cx.scalar(p.ty(), p)?;
            let t = fl.tmp(ty);
            fl.emit(Op::Nondet { dst: t }, loc(main_def));
            args.push(Expr::Var(t));
        }
        fl.emit(
            Op::Call {
                callee: main,
                args,
                ret: None,
            },
            loc(main_def),
        );
        let exit = fl.g.exit;
        fl.jump(exit, SrcLoc::default());
        let g = fl.finish();
        self.bodies[id] = Some(g);
        Ok(id)
    }

    /// Copies every function's local graph into the program graph (BFS order from
    /// the entry; unreachable nodes are dropped, the exit node is always kept).
    fn assemble(&mut self) {
        let bodies = std::mem::take(&mut self.bodies);
        for (fid, body) in bodies.into_iter().enumerate() {
            let Some(g) = body else { continue };
            let g = contract(g);
            // adjacency in edge order
            let mut out: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
            for (i, e) in g.edges.iter().enumerate() {
                out[e.0].push(i);
            }
            let mut order = Vec::new();
            let mut seen = vec![false; g.nodes.len()];
            let mut q = VecDeque::from([g.entry]);
            seen[g.entry] = true;
            while let Some(n) = q.pop_front() {
                order.push(n);
                for &e in &out[n] {
                    let t = g.edges[e].1;
                    if !seen[t] {
                        seen[t] = true;
                        q.push_back(t);
                    }
                }
            }
            if !seen[g.exit] {
                seen[g.exit] = true;
                order.push(g.exit);
            }
            let mut map = vec![None; g.nodes.len()];
            for &n in &order {
                let (src, kind) = g.nodes[n];
                map[n] = Some(self.prog.add_loc(fid, src, kind));
            }
            for &n in &order {
                for &e in &out[n] {
                    let (a, b, ref op, src) = g.edges[e];
                    if let (Some(a), Some(b)) = (map[a], map[b]) {
                        self.prog.add_edge(a, b, op.clone(), src);
                    }
                }
            }
            if let (Some(en), Some(ex)) = (map[g.entry], map[g.exit]) {
                self.prog.functions[fid].entry = en;
                self.prog.functions[fid].exit = ex;
            }
        }
    }
}

/// Removes `Skip` edges: a normal node whose only outgoing edge is a `Skip` to another
/// node is merged into its successor.
fn contract(g: LocalGraph) -> LocalGraph {
    let n = g.nodes.len();
    let mut out_count = vec![0usize; n];
    let mut skip_to: Vec<Option<usize>> = vec![None; n];
    for e in &g.edges {
        out_count[e.0] += 1;
        if e.2 == Op::Skip && e.0 != e.1 {
            skip_to[e.0] = Some(e.1);
        }
    }
    let contractible = |i: usize| {
        out_count[i] == 1 && skip_to[i].is_some() && g.nodes[i].1 == LocKind::Normal && i != g.entry
    };
    // an all-skip cycle keeps one of its nodes (the loop must not disappear)
    let mut kept = vec![false; n];
    let mut stamp = vec![usize::MAX; n];
    for i in 0..n {
        let mut cur = i;
        while contractible(cur) && !kept[cur] {
            if stamp[cur] == i {
                kept[cur] = true;
                break;
            }
            stamp[cur] = i;
            match skip_to[cur] {
                Some(t) => cur = t,
                None => break,
            }
        }
    }
    let mut repr: Vec<usize> = (0..n).collect();
    for (i, r) in repr.iter_mut().enumerate() {
        let mut cur = i;
        while contractible(cur) && !kept[cur] {
            match skip_to[cur] {
                Some(t) => cur = t,
                None => break,
            }
        }
        *r = cur;
    }
    let mut edges = Vec::new();
    for (a, b, op, src) in g.edges {
        if repr[a] != a {
            continue; // contracted node: its only edge is the skip
        }
        edges.push((a, repr[b], op, src));
    }
    LocalGraph {
        nodes: g.nodes,
        edges,
        entry: g.entry,
        exit: repr[g.exit],
    }
}

fn zero(t: &Ty) -> Expr {
    if t.is_ptr() {
        Expr::Null
    } else {
        Expr::Int(0)
    }
}

/// An lvalue after its address computation.
#[derive(Clone, Debug)]
enum Lv {
    /// A scalar variable.
    Var(VarId),
    /// A scalar field `ptr->field`.
    Field(VarId, FieldRef),
    /// `*ptr` where `ptr` points to a scalar cell of the given type.
    Deref(VarId, Ty),
    /// A struct object (or embedded struct at `prefix`) that `ptr` points into.
    Obj(VarId, StructId, String),
}

/// Per-function lowering state.
struct FnLower<'c, 't> {
    cx: &'c mut Ctx<'t>,
    fid: FuncId,
    fname: String,
    g: LocalGraph,
    cur: usize,
    locals: HashMap<Cursor<'t>, VarId>,
    name_counts: HashMap<String, u32>,
    tmp_count: u32,
    breaks: Vec<usize>,
    continues: Vec<usize>,
    labels: HashMap<String, usize>,
    switches: Vec<Vec<(Cursor<'t>, usize)>>,
}

fn strip_parens(mut c: Cursor<'_>) -> Cursor<'_> {
    while c.kind() == CXCursor_ParenExpr {
        match c.expr_children().first() {
            Some(&i) => c = i,
            None => break,
        }
    }
    c
}

/// Strips parentheses and casts (implicit and explicit).
fn strip_casts(mut c: Cursor<'_>) -> Cursor<'_> {
    loop {
        let k = c.kind();
        if k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr || k == CXCursor_CStyleCastExpr {
            let ch = c.expr_children();
            if ch.len() == 1 {
                c = ch[0];
                continue;
            }
        }
        return c;
    }
}

/// Collects the variables whose address is taken (`&x`) below `c`.
fn collect_addr_taken<'t>(c: Cursor<'t>, out: &mut HashSet<Cursor<'t>>) {
    for ch in c.children() {
        if ch.kind() == CXCursor_UnaryOperator && ch.unary_op() == CXUnaryOperator_AddrOf {
            if let Some(&inner) = ch.expr_children().first() {
                let inner = strip_parens(inner);
                if inner.kind() == CXCursor_DeclRefExpr {
                    if let Some(d) = inner.referenced() {
                        if matches!(d.kind(), CXCursor_VarDecl | CXCursor_ParmDecl) {
                            out.insert(d.canonical());
                        }
                    }
                }
            }
        }
        collect_addr_taken(ch, out);
    }
}

/// Strips parentheses and implicit conversions that do not change the type.
fn strip_noop<'t>(mut c: Cursor<'t>) -> Cursor<'t> {
    loop {
        let k = c.kind();
        if k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr {
            let ch = c.expr_children();
            if ch.len() == 1
                && (k == CXCursor_ParenExpr
                    || ch[0].ty().canonical().spelling() == c.ty().canonical().spelling())
            {
                c = ch[0];
                continue;
            }
        }
        return c;
    }
}

/// True if evaluating the expression may modify a variable or memory.
fn has_side_effects(c: Cursor<'_>) -> bool {
    match c.kind() {
        CXCursor_CallExpr | CXCursor_CompoundAssignOperator | CXCursor_StmtExpr => true,
        CXCursor_UnaryExpr => false, // sizeof/alignof: operand not evaluated
        CXCursor_BinaryOperator if c.binary_op() == CXBinaryOperator_Assign => true,
        CXCursor_UnaryOperator
            if matches!(
                c.unary_op(),
                CXUnaryOperator_PostInc
                    | CXUnaryOperator_PostDec
                    | CXUnaryOperator_PreInc
                    | CXUnaryOperator_PreDec
            ) =>
        {
            true
        }
        _ => c.children().into_iter().any(has_side_effects),
    }
}

/// The function a call expression calls directly (None for indirect calls, and for
/// calls of a function cast to another function type).
fn direct_callee<'t>(call: Cursor<'t>) -> Option<Cursor<'t>> {
    let mut callee = *call.expr_children().first()?;
    let mut casts = Vec::new();
    while matches!(
        callee.kind(),
        CXCursor_ParenExpr | CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr
    ) {
        let ch = callee.expr_children();
        if ch.len() != 1 {
            break;
        }
        if callee.kind() == CXCursor_CStyleCastExpr {
            casts.push(callee);
        }
        callee = ch[0];
    }
    if callee.kind() != CXCursor_DeclRefExpr {
        return None;
    }
    let d = callee.referenced()?;
    let same_type = |k: &Cursor<'t>| {
        is_fn_ptr(k.ty())
            && k.ty()
                .canonical()
                .pointee()
                .canonical()
                .equals(&callee.ty().canonical())
    };
    (d.kind() == CXCursor_FunctionDecl && casts.iter().all(same_type)).then_some(d)
}

fn is_alloc_call(c: Cursor<'_>) -> bool {
    c.kind() == CXCursor_CallExpr
        && direct_callee(c).is_some_and(|d| {
            matches!(
                d.spelling().as_str(),
                "malloc" | "calloc" | "alloca" | "__builtin_alloca"
            )
        })
}

fn binop(k: CXBinaryOperatorKind) -> Option<BinOp> {
    Some(match k {
        CXBinaryOperator_Mul | CXBinaryOperator_MulAssign => BinOp::Mul,
        CXBinaryOperator_Div | CXBinaryOperator_DivAssign => BinOp::Div,
        CXBinaryOperator_Rem | CXBinaryOperator_RemAssign => BinOp::Rem,
        CXBinaryOperator_Add | CXBinaryOperator_AddAssign => BinOp::Add,
        CXBinaryOperator_Sub | CXBinaryOperator_SubAssign => BinOp::Sub,
        CXBinaryOperator_Shl | CXBinaryOperator_ShlAssign => BinOp::Shl,
        CXBinaryOperator_Shr | CXBinaryOperator_ShrAssign => BinOp::Shr,
        CXBinaryOperator_And | CXBinaryOperator_AndAssign => BinOp::BitAnd,
        CXBinaryOperator_Xor | CXBinaryOperator_XorAssign => BinOp::BitXor,
        CXBinaryOperator_Or | CXBinaryOperator_OrAssign => BinOp::BitOr,
        CXBinaryOperator_LT => BinOp::Lt,
        CXBinaryOperator_GT => BinOp::Gt,
        CXBinaryOperator_LE => BinOp::Le,
        CXBinaryOperator_GE => BinOp::Ge,
        CXBinaryOperator_EQ => BinOp::Eq,
        CXBinaryOperator_NE => BinOp::Ne,
        _ => return None,
    })
}

/// Wraps an arithmetic result into its (unsigned or narrow) type.
fn wrap_arith(op: BinOp, e: Expr, ty: &Ty) -> Expr {
    let wraps = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl);
    match ty {
        Ty::Int {
            signed: false,
            bits,
        } if wraps && *bits > 1 => match e {
            Expr::Int(n) => Expr::Int(wrap_const(n, ty)),
            e => Expr::Cast(ty.clone(), Box::new(e)),
        },
        _ => e,
    }
}

/// As a condition: a comparison (`e != 0` / `e != NULL` unless already one).
fn as_comparison(e: Expr, ty: &Ty) -> Expr {
    match e {
        Expr::Binary(op, _, _) if op.is_comparison() => e,
        Expr::Unary(UnOp::Not, inner) => Expr::bin(BinOp::Eq, *inner, Expr::Int(0)),
        e => Expr::bin(BinOp::Ne, e, zero(ty)),
    }
}

fn is_const(e: &Expr) -> bool {
    matches!(e, Expr::Int(_) | Expr::Null)
}

impl<'c, 't> FnLower<'c, 't> {
    fn new(cx: &'c mut Ctx<'t>, fid: FuncId) -> FnLower<'c, 't> {
        let fname = cx.prog.functions[fid].name.clone();
        let src = cx.prog.functions[fid].src;
        let mut g = LocalGraph::default();
        g.nodes.push((src, LocKind::FuncEntry));
        g.nodes.push((src, LocKind::FuncExit));
        g.entry = 0;
        g.exit = 1;
        FnLower {
            cx,
            fid,
            fname,
            g,
            cur: 0,
            locals: HashMap::new(),
            name_counts: HashMap::new(),
            tmp_count: 0,
            breaks: Vec::new(),
            continues: Vec::new(),
            labels: HashMap::new(),
            switches: Vec::new(),
        }
    }

    fn finish(self) -> LocalGraph {
        self.g
    }

    /// Lowers the body of function `fid`.
    fn lower_function(cx: &'c mut Ctx<'t>, fid: FuncId) -> R<LocalGraph> {
        let def = cx.func_defs[fid];
        let mut fl = FnLower::new(cx, fid);
        // parameters
        let n = def.num_args().max(0) as u32;
        let mut params = Vec::new();
        for i in 0..n {
            let Some(p) = def.arg(i) else {
                return unsup(def, "internal: missing parameter");
            };
            let ty = fl.cx.scalar(p.ty(), p)?;
            let pname = p.spelling();
            let name = if pname.is_empty() {
                format!("{}::__p{i}", fl.fname)
            } else {
                fl.unique_name(&pname)
            };
            let v = fl
                .cx
                .new_var(name.clone(), ty.clone(), Scope::Param(fid), loc(p));
            params.push(v);
            if fl.cx.addr_taken.contains(&p.canonical()) {
                let cty = Ty::Ptr(Box::new(ty.clone()));
                let c = fl
                    .cx
                    .new_var(format!("{name}#cell"), cty, Scope::Local(fid), loc(p));
                fl.cx.prog.functions[fid].locals.push(c);
                fl.cx.cell_vars.insert(c, ty);
                fl.alloc_cell(c, fl.cx.cell_vars[&c].clone(), loc(p));
                fl.emit(
                    Op::StoreIndirect {
                        ptr: c,
                        src: Expr::Var(v),
                    },
                    loc(p),
                );
                fl.locals.insert(p.canonical(), c);
            } else {
                fl.locals.insert(p.canonical(), v);
            }
        }
        fl.cx.prog.functions[fid].params = params;
        let ret_ty = fl.cx.prog.functions[fid].ret_ty.clone();
        if ret_ty != Ty::Void {
            let name = format!("{}::__ret", fl.fname);
            let v = fl.cx.new_var(name, ret_ty, Scope::Temp(fid), loc(def));
            fl.cx.prog.functions[fid].locals.push(v);
            fl.cx.prog.functions[fid].ret = Some(v);
        }
        let Some(body) = def
            .children()
            .into_iter()
            .find(|c| c.kind() == CXCursor_CompoundStmt)
        else {
            return unsup(def, "internal: function without body");
        };
        fl.stmt(body)?;
        let exit = fl.g.exit;
        fl.jump(exit, SrcLoc::default());
        Ok(fl.finish())
    }

    fn unique_name(&mut self, name: &str) -> String {
        let n = self.name_counts.entry(name.to_string()).or_insert(0);
        let s = if *n == 0 {
            format!("{}::{name}", self.fname)
        } else {
            format!("{}::{name}#{n}", self.fname)
        };
        *n += 1;
        s
    }

    // ----- graph building -----

    fn node(&mut self, src: SrcLoc) -> usize {
        self.g.nodes.push((src, LocKind::Normal));
        self.g.nodes.len() - 1
    }

    fn edge(&mut self, a: usize, b: usize, op: Op, src: SrcLoc) {
        self.g.edges.push((a, b, op, src));
    }

    /// Appends an operation at the current location.
    fn emit(&mut self, op: Op, src: SrcLoc) {
        let n = self.node(src);
        let cur = self.cur;
        self.edge(cur, n, op, src);
        self.cur = n;
    }

    /// Jumps to `to`; the current location becomes a fresh (unreachable) node.
    fn jump(&mut self, to: usize, src: SrcLoc) {
        let cur = self.cur;
        self.edge(cur, to, Op::Skip, src);
        self.cur = self.node(src);
    }

    /// Ends the path with an operation into a fresh node of the given kind.
    fn terminate(&mut self, op: Op, kind: LocKind, src: SrcLoc) {
        self.g.nodes.push((src, kind));
        let t = self.g.nodes.len() - 1;
        let cur = self.cur;
        self.edge(cur, t, op, src);
        self.cur = self.node(src);
    }

    fn tmp(&mut self, ty: Ty) -> VarId {
        let name = format!("{}::__t{}", self.fname, self.tmp_count);
        self.tmp_count += 1;
        let v = self
            .cx
            .new_var(name, ty, Scope::Temp(self.fid), SrcLoc::default());
        self.cx.prog.functions[self.fid].locals.push(v);
        v
    }

    /// A variable holding the value of `e` (a fresh temporary unless `e` is a variable).
    fn atom(&mut self, e: Expr, ty: Ty, src: SrcLoc) -> VarId {
        if let Expr::Var(v) = e {
            return v;
        }
        let t = self.tmp(ty);
        self.emit(Op::Assign { dst: t, src: e }, src);
        t
    }

    /// Copies a non-constant value into a fresh temporary (protects it from later side effects).
    fn snapshot(&mut self, e: Expr, ty: Ty, src: SrcLoc) -> Expr {
        if is_const(&e) {
            return e;
        }
        let t = self.tmp(ty);
        self.emit(Op::Assign { dst: t, src: e }, src);
        Expr::Var(t)
    }

    fn ety(&mut self, c: Cursor<'t>) -> R<Ty> {
        self.cx.scalar(c.ty(), c)
    }

    // ----- variables -----

    fn var_of(&mut self, decl: Cursor<'t>, at: Cursor<'t>) -> R<VarId> {
        let key = decl.canonical();
        if let Some(&v) = self.locals.get(&key) {
            return Ok(v);
        }
        let global = decl.kind() == CXCursor_VarDecl
            && (matches!(decl.storage_class(), CX_SC_Static | CX_SC_Extern)
                || decl
                    .semantic_parent()
                    .is_some_and(|p| p.kind() == CXCursor_TranslationUnit));
        if global {
            return self.cx.global_var(decl);
        }
        unsup(at, "internal: reference to an unknown variable")
    }

    fn decl_var(&mut self, d: Cursor<'t>) -> R<()> {
        let src = loc(d);
        if matches!(d.storage_class(), CX_SC_Static | CX_SC_Extern) {
            self.cx.global_var(d)?;
            return Ok(());
        }
        let name = self.unique_name(&d.spelling());
        match self.cx.conv(d.ty(), d)? {
            CTy::Scalar(ty) if self.cx.addr_taken.contains(&d.canonical()) => {
                let cty = Ty::Ptr(Box::new(ty.clone()));
                let v = self.cx.new_var(name, cty, Scope::Local(self.fid), src);
                self.cx.prog.functions[self.fid].locals.push(v);
                self.cx.cell_vars.insert(v, ty.clone());
                self.locals.insert(d.canonical(), v);
                self.alloc_cell(v, ty.clone(), src);
                let e = match d.var_init() {
                    Some(i) => self.rv_as(i, &ty)?,
                    None => {
                        let t = self.tmp(ty.clone());
                        self.emit(Op::Nondet { dst: t }, src);
                        Expr::Var(t)
                    }
                };
                self.emit(Op::StoreIndirect { ptr: v, src: e }, src);
            }
            CTy::Scalar(ty) => {
                let v = self.cx.new_var(name, ty, Scope::Local(self.fid), src);
                self.cx.prog.functions[self.fid].locals.push(v);
                self.locals.insert(d.canonical(), v);
                match d.var_init() {
                    Some(i) => self.rhs_into(i, v)?,
                    None => self.emit(Op::Nondet { dst: v }, src),
                }
            }
            CTy::Struct(s) => {
                let ty = Ty::Ptr(Box::new(Ty::Struct(s)));
                let v = self.cx.new_var(name, ty, Scope::Local(self.fid), src);
                self.cx.prog.functions[self.fid].locals.push(v);
                self.cx.obj_vars.insert(v, s);
                self.locals.insert(d.canonical(), v);
                let bytes = self.cx.prog.structs[s].size;
                self.emit(
                    Op::Alloc {
                        dst: v,
                        pointee: Ty::Struct(s),
                        bytes: Some(bytes),
                        kind: AllocKind::Stack,
                    },
                    src,
                );
                if let Some(i) = d.var_init() {
                    let prefix = self.cx.obj_prefix(d.ty());
                    if strip_parens(i).kind() == CXCursor_InitListExpr {
                        self.init_struct(v, s, &prefix, Some(i), true)?;
                    } else {
                        let from = self.lv(strip_noop(i))?;
                        self.copy_struct(Lv::Obj(v, s, prefix), from, i)?;
                    }
                }
            }
            CTy::Void => return unsup(d, "void variable"),
        }
        Ok(())
    }

    /// Initialises the struct (part at `prefix`) `ptr` points to from an initialiser
    /// list; missing initialisers (or `init == None` when `zero_rest`) store zero.
    fn init_struct(
        &mut self,
        ptr: VarId,
        s: StructId,
        prefix: &str,
        init: Option<Cursor<'t>>,
        zero_rest: bool,
    ) -> R<()> {
        let items: Vec<Cursor<'t>> = match init {
            None => Vec::new(),
            Some(i) => {
                let i = strip_parens(i);
                if i.kind() != CXCursor_InitListExpr {
                    return unsup(i, "struct copy in initialiser");
                }
                i.expr_children()
            }
        };
        for it in &items {
            if it.children().iter().any(|c| c.kind() == CXCursor_MemberRef) {
                return unsup(*it, "designated initialiser");
            }
        }
        // the struct (or embedded struct) definition whose direct fields we walk
        let def = self.struct_def_at(s, prefix, init)?;
        let fields: Vec<Cursor<'t>> = def
            .children()
            .into_iter()
            .filter(|f| f.kind() == CXCursor_FieldDecl)
            .collect();
        if items.len() > fields.len() {
            return unsup(items[fields.len()], "excess initialiser");
        }
        for (i, f) in fields.iter().enumerate() {
            let item = items.get(i).copied();
            if item.is_none() && !zero_rest {
                continue;
            }
            let fname = format!("{prefix}{}", f.spelling());
            match self.cx.conv(f.ty(), *f)? {
                CTy::Struct(_) => {
                    let sub = format!("{fname}.");
                    if let Some(it) = item {
                        if strip_parens(it).kind() != CXCursor_InitListExpr {
                            return unsup(it, "initialiser with brace elision or struct copy");
                        }
                    }
                    self.init_struct(ptr, s, &sub, item, zero_rest)?;
                }
                CTy::Scalar(fty) => {
                    let Some(idx) = self.cx.prog.structs[s].field_index(&fname) else {
                        return unsup(*f, "internal: field not found");
                    };
                    let field = FieldRef {
                        strukt: s,
                        field: idx,
                    };
                    let (val, src) = match item {
                        Some(it) => {
                            let e = self.rv(it)?;
                            let ity = self.ety(it)?;
                            (self.convert(e, &ity, &fty, it)?, loc(it))
                        }
                        None => (zero(&fty), self.cx.prog.vars[ptr].src),
                    };
                    self.emit(
                        Op::Store {
                            ptr,
                            field,
                            src: val,
                        },
                        src,
                    );
                }
                CTy::Void => return unsup(*f, "void field"),
            }
        }
        Ok(())
    }

    /// The definition cursor of struct `s` or of its embedded struct at `prefix`.
    fn struct_def_at(
        &mut self,
        s: StructId,
        prefix: &str,
        at: Option<Cursor<'t>>,
    ) -> R<Cursor<'t>> {
        let Some(mut def) = self.cx.struct_defs.get(s).copied().flatten() else {
            return match at {
                Some(a) => unsup(a, "initialiser of an incomplete struct"),
                None => Err(Unsup {
                    file: None,
                    at: SrcLoc::default(),
                    construct: "internal: incomplete struct".into(),
                }),
            };
        };
        for part in prefix.split('.').filter(|p| !p.is_empty()) {
            let f = def
                .children()
                .into_iter()
                .find(|f| f.kind() == CXCursor_FieldDecl && f.spelling() == part);
            let Some(next) = f.and_then(|f| f.ty().canonical().declaration().definition()) else {
                return unsup(def, "internal: embedded struct not found");
            };
            def = next;
        }
        Ok(def)
    }

    /// `container_of(p, T, m)` (see `super::intrusive`): `p`, when the link struct `p`
    /// points to is identified with member `m` of `T`; refused when it is not.
    fn container_of(&mut self, c: Cursor<'t>) -> R<Option<Cursor<'t>>> {
        let Some((p, target, k)) = super::intrusive::container_of(c) else {
            return Ok(None);
        };
        let link = p.ty().canonical().pointee().canonical().declaration();
        let key = super::intrusive::record_key(link);
        let Some(a) = self.cx.intrusive.aliases.get(&key) else {
            let why = match self.cx.intrusive.refused.get(&key) {
                Some(places) => format!(
                    "container_of of `struct {}`, which is embedded in several places ({places})",
                    link.spelling()
                ),
                None => format!(
                    "container_of of `struct {}`, which is embedded in no struct",
                    link.spelling()
                ),
            };
            return unsup(c, &why);
        };
        let same_container =
            super::intrusive::record_key(target) == super::intrusive::record_key(a.container);
        if !same_container || u64::try_from(k).ok() != Some(a.offset) {
            return unsup(
                c,
                &format!(
                    "pointer arithmetic on `struct {} *` other than container_of(p, struct {}, {})",
                    link.spelling(),
                    a.container.spelling(),
                    a.member
                ),
            );
        }
        Ok(Some(p))
    }

    /// Refuses a conversion `c` of `inner` between a pointer to a link struct identified
    /// with a member at a nonzero offset and another pointer type (the addresses differ
    /// in C, not in the CFA); NULL and allocations are fine.
    fn check_link_conversion(&mut self, c: Cursor<'t>, inner: Cursor<'t>) -> R<()> {
        let (to, from) = (c.ty().canonical(), inner.ty().canonical());
        if to.kind() != CXType_Pointer || from.kind() != CXType_Pointer {
            return Ok(());
        }
        let key = |t: Type<'t>| {
            let p = t.pointee().canonical();
            (p.kind() == CXType_Record).then(|| super::intrusive::record_key(p.declaration()))
        };
        let (kt, kf) = (key(to), key(from));
        if kt == kf {
            return Ok(());
        }
        let shifted = |k: &Option<String>| {
            k.as_ref()
                .and_then(|k| self.cx.intrusive.aliases.get(k))
                .is_some_and(|a| a.offset != 0)
        };
        if !(shifted(&kt) || shifted(&kf)) {
            return Ok(());
        }
        let stripped = strip_casts(inner);
        if is_alloc_call(stripped) || stripped.eval_int() == Some(0) {
            return Ok(());
        }
        unsup(
            c,
            &format!(
                "conversion from `{}` to `{}` (the link struct is embedded at a nonzero offset; only container_of is supported)",
                from.spelling(),
                to.spelling()
            ),
        )
    }

    /// Allocates the stack cell backing an address-taken scalar variable.
    fn alloc_cell(&mut self, v: VarId, ty: Ty, src: SrcLoc) {
        let bytes = match &ty {
            Ty::Int { bits, .. } => u64::from(*bits).div_ceil(8),
            _ => 4,
        };
        self.emit(
            Op::Alloc {
                dst: v,
                pointee: ty,
                bytes: Some(bytes),
                kind: AllocKind::Stack,
            },
            src,
        );
    }

    /// The value of `c` converted to `ty`.
    fn rv_as(&mut self, c: Cursor<'t>, ty: &Ty) -> R<Expr> {
        let from = self.ety(c)?;
        let e = self.rv(c)?;
        self.convert(e, &from, ty, c)
    }

    // ----- conversions -----

    fn convert(&mut self, e: Expr, from: &Ty, to: &Ty, at: Cursor<'t>) -> R<Expr> {
        if from == to {
            return Ok(e);
        }
        match (from, to) {
            (Ty::Int { .. }, Ty::Int { .. }) => {
                if *to == BOOL {
                    return Ok(match e {
                        Expr::Int(n) => Expr::Int((n != 0) as i64),
                        e => as_comparison(e, from),
                    });
                }
                if range_includes(to, from) {
                    return Ok(e);
                }
                Ok(match e {
                    Expr::Int(n) => Expr::Int(wrap_const(n, to)),
                    e => Expr::Cast(to.clone(), Box::new(e)),
                })
            }
            (Ty::Ptr(_), Ty::Ptr(_)) => Ok(match e {
                Expr::Null => Expr::Null,
                e => Expr::Cast(to.clone(), Box::new(e)),
            }),
            (Ty::Int { .. }, Ty::Ptr(_)) => match e {
                Expr::Int(0) => Ok(Expr::Null),
                _ => unsup(at, "integer to pointer conversion"),
            },
            (Ty::Ptr(_), Ty::Int { .. }) if *to == BOOL => Ok(as_comparison(e, from)),
            (Ty::Ptr(_), Ty::Int { .. }) => unsup(at, "pointer to integer conversion"),
            _ => unsup(at, "conversion"),
        }
    }

    // ----- expressions -----

    /// Lowers an expression whose value is needed; returns a pure expression.
    fn rv(&mut self, c: Cursor<'t>) -> R<Expr> {
        self.rv_h(c, None)
    }

    /// `rv` with the pointee type an allocation in value position should get when its
    /// own type is `void *` (from an enclosing pointer cast, e.g. through `?:`).
    fn rv_h(&mut self, c: Cursor<'t>, hint: Option<Ty>) -> R<Expr> {
        let k = c.kind();
        let src = loc(c);
        let cty = c.ty().canonical();
        let int_typed = !matches!(
            cty.kind(),
            CXType_Pointer | CXType_Record | CXType_Void | CXType_ConstantArray
        );
        if int_typed && k != CXCursor_DeclRefExpr && !has_side_effects(c) {
            if let Some(v) = c.eval_int() {
                if let CTy::Scalar(t @ Ty::Int { .. }) = self.cx.conv(c.ty(), c)? {
                    return Ok(Expr::Int(wrap_const(v, &t)));
                }
            }
        }
        match k {
            CXCursor_ParenExpr => self.rv_h(self.only_child(c)?, hint),
            CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr => {
                if let Some(p) = self.container_of(c)? {
                    return self.rv(p);
                }
                let inner = self.only_child(c)?;
                let to = self.cx.conv(c.ty(), c)?;
                if to == CTy::Void {
                    return unsup(c, "void value");
                }
                self.check_link_conversion(c, inner)?;
                let ik = inner.ty().canonical().kind();
                if is_fn_type(inner.ty()) || is_fn_ptr(inner.ty()) || is_fn_ptr(c.ty()) {
                    return self.fn_ptr_conversion(c, inner);
                }
                if matches!(ik, CXType_ConstantArray | CXType_IncompleteArray) {
                    return if strip_parens(inner).kind() == CXCursor_StringLiteral {
                        unsup(c, "string literal")
                    } else {
                        unsup(c, "array")
                    };
                }
                let CTy::Scalar(to) = to else {
                    // struct-typed no-op cast (e.g. lvalue-to-rvalue of a struct)
                    return unsup(c, "struct value (copy/pass/return by value)");
                };
                let h = match &to {
                    Ty::Ptr(p) if **p != Ty::Void => Some((**p).clone()),
                    Ty::Ptr(_) => hint,
                    _ => None,
                };
                let stripped = strip_casts(inner);
                if to.is_ptr() && is_alloc_call(stripped) {
                    let t = self.tmp(to.clone());
                    self.alloc(stripped, t, Some(c), h)?;
                    return Ok(Expr::Var(t));
                }
                let from = self.ety(inner)?;
                let e = self.rv_h(inner, h)?;
                self.convert(e, &from, &to, c)
            }
            CXCursor_IntegerLiteral | CXCursor_CharacterLiteral => {
                unsup(c, "integer literal that cannot be evaluated")
            }
            CXCursor_FloatingLiteral => unsup(c, "floating point"),
            CXCursor_StringLiteral => unsup(c, "string literal"),
            CXCursor_DeclRefExpr => {
                let Some(d) = c.referenced() else {
                    return unsup(c, "internal: unresolved reference");
                };
                match d.kind() {
                    CXCursor_VarDecl | CXCursor_ParmDecl => {
                        let v = self.var_of(d, c)?;
                        if self.cx.obj_vars.contains_key(&v) {
                            return unsup(c, "struct value (copy/pass/return by value)");
                        }
                        if let Some(t) = self.cx.cell_vars.get(&v).cloned() {
                            return self.read(Lv::Deref(v, t), c);
                        }
                        Ok(Expr::Var(v))
                    }
                    CXCursor_EnumConstantDecl => match c.eval_int() {
                        Some(v) => Ok(Expr::Int(v)),
                        None => unsup(c, "enum constant"),
                    },
                    CXCursor_FunctionDecl => self.fn_value(c),
                    _ => unsup(c, "reference"),
                }
            }
            CXCursor_MemberRefExpr => {
                let lv = self.lv(c)?;
                self.read(lv, c)
            }
            CXCursor_UnaryOperator => self.unary(c, true).map(|e| e.unwrap_or(Expr::Int(0))),
            CXCursor_BinaryOperator | CXCursor_CompoundAssignOperator => {
                self.binary(c, true).map(|e| e.unwrap_or(Expr::Int(0)))
            }
            CXCursor_ConditionalOperator => {
                let ch = c.expr_children();
                if ch.len() != 3 {
                    return unsup(c, "conditional operator without middle operand");
                }
                let ty = self.ety(c)?;
                let t = self.tmp(ty.clone());
                let (nt, nf, join) = (self.node(src), self.node(src), self.node(src));
                self.cond(ch[0], Some(nt), Some(nf))?;
                for (n, e) in [(nt, ch[1]), (nf, ch[2])] {
                    self.cur = n;
                    self.rhs_into_h(e, t, hint.clone())?;
                    self.jump(join, src);
                }
                self.cur = join;
                Ok(Expr::Var(t))
            }
            CXCursor_CallExpr => match self.call_h(c, true, hint)? {
                Some(e) => Ok(e),
                None => unsup(c, "use of a void value"),
            },
            CXCursor_UnaryExpr => match c.eval_int() {
                // sizeof/alignof: the operand is not evaluated
                Some(v) => Ok(Expr::Int(v)),
                None => unsup(c, "sizeof/alignof of a variable-length type"),
            },
            CXCursor_ArraySubscriptExpr => unsup(c, "array subscript"),
            CXCursor_InitListExpr => unsup(c, "initialiser list"),
            CXCursor_CompoundLiteralExpr => unsup(c, "compound literal"),
            CXCursor_StmtExpr => {
                // GNU `({ s1; ...; e; })`: the value is that of the last expression statement
                let Some(body) = c
                    .children()
                    .into_iter()
                    .find(|x| x.kind() == CXCursor_CompoundStmt)
                else {
                    return unsup(c, "statement expression");
                };
                let stmts = body.children();
                let Some((&last, init)) = stmts.split_last() else {
                    return unsup(c, "statement expression without value");
                };
                if !last.is_expression() {
                    return unsup(c, "statement expression without value");
                }
                for s in init {
                    self.stmt(*s)?;
                }
                self.rv(last)
            }
            _ => unsup(c, &format!("expression `{}`", c.kind_name())),
        }
    }

    fn only_child(&self, c: Cursor<'t>) -> R<Cursor<'t>> {
        let ch = c.expr_children();
        if c.kind() == CXCursor_CStyleCastExpr && ch.len() == 2 {
            // `(__typeof__(*p) *) e`: the typeof operand (never evaluated) comes first
            return Ok(ch[1]);
        }
        if ch.len() != 1 {
            return unsup(c, &format!("expression `{}`", c.kind_name()));
        }
        Ok(ch[0])
    }

    /// Lowers an expression for its side effects only.
    fn effect(&mut self, c: Cursor<'t>) -> R<()> {
        let src = loc(c);
        match c.kind() {
            CXCursor_ParenExpr => self.effect(self.only_child(c)?),
            CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr => {
                let inner = self.only_child(c)?;
                if is_alloc_call(strip_casts(inner)) {
                    self.rv(c)?;
                    return Ok(());
                }
                self.effect(inner)
            }
            CXCursor_CallExpr => self.call(c, false).map(|_| ()),
            CXCursor_UnaryOperator => self.unary(c, false).map(|_| ()),
            CXCursor_BinaryOperator | CXCursor_CompoundAssignOperator => {
                self.binary(c, false).map(|_| ())
            }
            CXCursor_ConditionalOperator => {
                let ch = c.expr_children();
                if ch.len() != 3 {
                    return unsup(c, "conditional operator without middle operand");
                }
                let (nt, nf, join) = (self.node(src), self.node(src), self.node(src));
                self.cond(ch[0], Some(nt), Some(nf))?;
                for (n, e) in [(nt, ch[1]), (nf, ch[2])] {
                    self.cur = n;
                    self.effect(e)?;
                    self.jump(join, src);
                }
                self.cur = join;
                Ok(())
            }
            CXCursor_IntegerLiteral | CXCursor_CharacterLiteral | CXCursor_StringLiteral => Ok(()),
            CXCursor_StmtExpr => {
                match c
                    .children()
                    .into_iter()
                    .find(|x| x.kind() == CXCursor_CompoundStmt)
                {
                    Some(body) => self.stmt(body),
                    None => unsup(c, "statement expression"),
                }
            }
            CXCursor_UnaryExpr => Ok(()), // sizeof/alignof: operand not evaluated
            _ => {
                if c.ty().canonical().kind() == CXType_Void {
                    return unsup(c, &format!("expression `{}`", c.kind_name()));
                }
                if c.ty().canonical().kind() == CXType_Record {
                    // e.g. `s;` – evaluates an lvalue without reading it
                    self.lv(c)?;
                    return Ok(());
                }
                self.rv(c).map(|_| ())
            }
        }
    }

    /// `dst = c` (with the conversion to `dst`'s type).
    fn rhs_into(&mut self, c: Cursor<'t>, dst: VarId) -> R<()> {
        self.rhs_into_h(c, dst, None)
    }

    /// `rhs_into` with an allocation type hint (see `rv_h`).
    fn rhs_into_h(&mut self, c: Cursor<'t>, dst: VarId, hint: Option<Ty>) -> R<()> {
        let src = loc(c);
        let dty = self.cx.prog.vars[dst].ty.clone();
        let s = strip_casts(c);
        if dty.is_ptr() && is_alloc_call(s) {
            return self.alloc(s, dst, Some(c), hint);
        }
        if s.kind() == CXCursor_CallExpr {
            if let Some(d) = direct_callee(s) {
                let name = d.spelling();
                let rty = self.cx.conv(d.result_type(), s)?;
                if rty == CTy::Scalar(dty.clone()) && self.cx.conv(c.ty(), c)? == rty {
                    if name.starts_with("__VERIFIER_nondet_") {
                        self.emit(Op::Nondet { dst }, src);
                        return Ok(());
                    }
                    if d.definition().is_some() && !self.is_special(&name) {
                        self.user_call(s, d, Some(dst))?;
                        return Ok(());
                    }
                }
            }
        }
        // `dst = p->f` / `dst = *p` with the same type: load directly into dst
        let n = strip_noop(c);
        let is_deref = n.kind() == CXCursor_UnaryOperator && n.unary_op() == CXUnaryOperator_Deref;
        let is_cell = n.kind() == CXCursor_DeclRefExpr
            && n.referenced().is_some_and(|d| {
                self.locals
                    .get(&d.canonical())
                    .or_else(|| self.cx.globals.get(&d.canonical()))
                    .is_some_and(|v| self.cx.cell_vars.contains_key(v))
            });
        if (n.kind() == CXCursor_MemberRefExpr || is_deref || is_cell)
            && self.cx.conv(n.ty(), n)? == CTy::Scalar(dty.clone())
        {
            match self.lv(n)? {
                Lv::Field(ptr, field) => {
                    self.emit(Op::Load { dst, ptr, field }, src);
                    return Ok(());
                }
                Lv::Deref(ptr, _) => {
                    self.emit(Op::LoadIndirect { dst, ptr }, src);
                    return Ok(());
                }
                lv => {
                    let e = self.read(lv, n)?;
                    self.emit(Op::Assign { dst, src: e }, src);
                    return Ok(());
                }
            }
        }
        let e = self.rv_h(c, hint)?;
        let from = self.ety(c)?;
        let e = self.convert(e, &from, &dty, c)?;
        self.emit(Op::Assign { dst, src: e }, src);
        Ok(())
    }

    fn is_special(&self, name: &str) -> bool {
        ERROR_FNS.contains(&name)
            || HALT_FNS.contains(&name)
            || PURE_EXTERNS.contains(&name)
            || name.starts_with("__VERIFIER_nondet_")
            || matches!(
                name,
                "__VERIFIER_assume" | "malloc" | "calloc" | "free" | "alloca" | "__builtin_alloca"
            )
    }

    /// `dst = malloc/calloc/alloca(...)`; the pointee type comes from the innermost
    /// non-void pointer cast between `outer` and the call, else from `dst`'s type.
    fn alloc(
        &mut self,
        call: Cursor<'t>,
        dst: VarId,
        outer: Option<Cursor<'t>>,
        hint: Option<Ty>,
    ) -> R<()> {
        let src = loc(call);
        let mut pointee = match &self.cx.prog.vars[dst].ty {
            Ty::Ptr(p) => (**p).clone(),
            _ => return unsup(call, "allocation into a non-pointer"),
        };
        let mut c = outer.unwrap_or(call);
        while c != call {
            if let CTy::Scalar(Ty::Ptr(p)) = self.cx.conv(c.ty(), c)? {
                if *p != Ty::Void {
                    pointee = *p;
                }
            }
            match c.expr_children().first() {
                Some(&n) => c = n,
                None => break,
            }
        }
        if pointee == Ty::Void {
            if let Some(h) = hint {
                pointee = h;
            }
        }
        let Some(d) = direct_callee(call) else {
            return unsup(call, "internal: allocation");
        };
        let name = d.spelling();
        let n = call.num_args().max(0) as u32;
        let mut sizes = Vec::new();
        for i in 0..n {
            let Some(a) = call.arg(i) else { continue };
            match a.eval_int() {
                Some(v) if !has_side_effects(a) => sizes.push(Some(v)),
                _ => {
                    self.effect(a)?;
                    sizes.push(None);
                }
            }
        }
        let mut bytes = sizes
            .iter()
            .try_fold(1i64, |acc, s| s.map(|v| acc.saturating_mul(v)))
            .and_then(|b| u64::try_from(b).ok());
        // a stand-alone link struct is an object of its container (`super::intrusive`)
        if let Ty::Struct(s) = pointee {
            let size = self.cx.prog.structs[s].size;
            for a in self.cx.intrusive.aliases.values() {
                let key = super::intrusive::record_key(a.container);
                if self.cx.struct_ids.get(&key) == Some(&s) && bytes == Some(a.link_size) {
                    bytes = Some(size);
                }
            }
        }
        let kind = match name.as_str() {
            "malloc" => AllocKind::Heap { zeroed: false },
            "calloc" => AllocKind::Heap { zeroed: true },
            _ => AllocKind::Stack,
        };
        let expected = if name == "calloc" { 2 } else { 1 };
        if n != expected {
            return unsup(call, &format!("call to `{name}` with {n} arguments"));
        }
        self.emit(
            Op::Alloc {
                dst,
                pointee,
                bytes,
                kind,
            },
            src,
        );
        Ok(())
    }

    // ----- lvalues -----

    fn lv(&mut self, c: Cursor<'t>) -> R<Lv> {
        match c.kind() {
            CXCursor_ParenExpr => self.lv(self.only_child(c)?),
            CXCursor_UnexposedExpr => {
                let inner = self.only_child(c)?;
                if inner.ty().canonical().spelling() == c.ty().canonical().spelling() {
                    self.lv(inner)
                } else {
                    unsup(c, "cast used as lvalue")
                }
            }
            CXCursor_DeclRefExpr => {
                let Some(d) = c.referenced() else {
                    return unsup(c, "internal: unresolved reference");
                };
                if !matches!(d.kind(), CXCursor_VarDecl | CXCursor_ParmDecl) {
                    return unsup(c, "lvalue that is not a variable");
                }
                let v = self.var_of(d, c)?;
                if let Some(t) = self.cx.cell_vars.get(&v) {
                    return Ok(Lv::Deref(v, t.clone()));
                }
                Ok(match self.cx.obj_vars.get(&v) {
                    Some(&s) => Lv::Obj(v, s, self.cx.obj_prefix(d.ty())),
                    None => Lv::Var(v),
                })
            }
            CXCursor_MemberRefExpr => {
                let Some(base) = c.expr_children().first().copied() else {
                    return unsup(c, "internal: member access without base");
                };
                let bt = base.ty().canonical();
                let (p, s, prefix) = if bt.kind() == CXType_Pointer {
                    let ty = self.ety(base)?;
                    let Some(s) = ty.pointee_struct() else {
                        return unsup(c, "member access through a non-struct pointer");
                    };
                    let e = self.rv(base)?;
                    let p = self.atom(e, ty, loc(base));
                    (p, s, self.cx.obj_prefix(bt.pointee()))
                } else {
                    match self.lv(base)? {
                        Lv::Obj(p, s, prefix) => (p, s, prefix),
                        _ => return unsup(c, "member access on a non-struct"),
                    }
                };
                let Some(fd) = c.referenced() else {
                    return unsup(c, "internal: unresolved member");
                };
                let name = format!("{prefix}{}", fd.spelling());
                match self.cx.conv(c.ty(), c)? {
                    CTy::Struct(_) => Ok(Lv::Obj(p, s, format!("{name}."))),
                    CTy::Scalar(_) => match self.cx.prog.structs[s].field_index(&name) {
                        Some(idx) => Ok(Lv::Field(
                            p,
                            FieldRef {
                                strukt: s,
                                field: idx,
                            },
                        )),
                        None => unsup(c, "internal: unknown field"),
                    },
                    CTy::Void => unsup(c, "void member"),
                }
            }
            CXCursor_UnaryOperator if c.unary_op() == CXUnaryOperator_Deref => {
                let inner = self.only_child(c)?;
                let pty = self.ety(inner)?;
                let prefix = self.cx.obj_prefix(inner.ty().canonical().pointee());
                let e = self.rv(inner)?;
                let p = self.atom(e, pty.clone(), loc(inner));
                match pty {
                    Ty::Ptr(t) => match *t {
                        Ty::Struct(s) => Ok(Lv::Obj(p, s, prefix)),
                        Ty::Void => unsup(c, "dereference of a void pointer"),
                        t => Ok(Lv::Deref(p, t)),
                    },
                    _ => unsup(c, "dereference of a non-pointer"),
                }
            }
            CXCursor_ArraySubscriptExpr => unsup(c, "array subscript"),
            _ => unsup(c, &format!("lvalue `{}`", c.kind_name())),
        }
    }

    fn read(&mut self, lv: Lv, at: Cursor<'t>) -> R<Expr> {
        let src = loc(at);
        match lv {
            Lv::Var(v) => Ok(Expr::Var(v)),
            Lv::Field(ptr, field) => {
                let ty = self.cx.prog.field(field).ty.clone();
                let t = self.tmp(ty);
                self.emit(Op::Load { dst: t, ptr, field }, src);
                Ok(Expr::Var(t))
            }
            Lv::Deref(ptr, ty) => {
                let t = self.tmp(ty);
                self.emit(Op::LoadIndirect { dst: t, ptr }, src);
                Ok(Expr::Var(t))
            }
            Lv::Obj(..) => unsup(at, "struct value (copy/pass/return by value)"),
        }
    }

    fn write(&mut self, lv: Lv, e: Expr, at: Cursor<'t>) -> R<()> {
        let src = loc(at);
        match lv {
            Lv::Var(dst) => self.emit(Op::Assign { dst, src: e }, src),
            Lv::Field(ptr, field) => self.emit(Op::Store { ptr, field, src: e }, src),
            Lv::Deref(ptr, _) => self.emit(Op::StoreIndirect { ptr, src: e }, src),
            Lv::Obj(..) => return unsup(at, "struct assignment"),
        }
        Ok(())
    }

    /// Copies a struct (or embedded struct) field by field: all source fields are
    /// loaded before any destination field is stored (the two may overlap).
    fn copy_struct(&mut self, to: Lv, from: Lv, at: Cursor<'t>) -> R<()> {
        let (Lv::Obj(dp, ds, dpre), Lv::Obj(sp, ss, spre)) = (to, from) else {
            return unsup(at, "struct copy");
        };
        let sub = |cx: &Ctx<'t>, s: StructId, pre: &str| -> Vec<(usize, String, Ty)> {
            cx.prog.structs[s]
                .fields
                .iter()
                .enumerate()
                .filter_map(|(i, f)| {
                    f.name
                        .strip_prefix(pre)
                        .map(|rest| (i, rest.to_string(), f.ty.clone()))
                })
                .collect()
        };
        let dst_fields = sub(self.cx, ds, &dpre);
        let src_fields = sub(self.cx, ss, &spre);
        let same = dst_fields.len() == src_fields.len()
            && dst_fields
                .iter()
                .zip(&src_fields)
                .all(|(a, b)| a.1 == b.1 && a.2 == b.2);
        if !same || dst_fields.is_empty() {
            return unsup(at, "struct copy between different struct types");
        }
        let src = loc(at);
        let mut vals = Vec::new();
        for (i, _, ty) in &src_fields {
            let t = self.tmp(ty.clone());
            let field = FieldRef {
                strukt: ss,
                field: *i,
            };
            self.emit(
                Op::Load {
                    dst: t,
                    ptr: sp,
                    field,
                },
                src,
            );
            vals.push(t);
        }
        for ((i, _, _), t) in dst_fields.iter().zip(vals) {
            let field = FieldRef {
                strukt: ds,
                field: *i,
            };
            self.emit(
                Op::Store {
                    ptr: dp,
                    field,
                    src: Expr::Var(t),
                },
                src,
            );
        }
        Ok(())
    }

    fn lv_ty(&self, lv: &Lv) -> Option<Ty> {
        match lv {
            Lv::Var(v) => Some(self.cx.prog.vars[*v].ty.clone()),
            Lv::Field(_, f) => Some(self.cx.prog.field(*f).ty.clone()),
            Lv::Deref(_, t) => Some(t.clone()),
            Lv::Obj(..) => None,
        }
    }

    // ----- operators -----

    fn unary(&mut self, c: Cursor<'t>, want: bool) -> R<Option<Expr>> {
        let op = c.unary_op();
        let inner = self.only_child(c)?;
        match op {
            CXUnaryOperator_PostInc
            | CXUnaryOperator_PostDec
            | CXUnaryOperator_PreInc
            | CXUnaryOperator_PreDec => {
                let post = matches!(op, CXUnaryOperator_PostInc | CXUnaryOperator_PostDec);
                let bop = if matches!(op, CXUnaryOperator_PostInc | CXUnaryOperator_PreInc) {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                self.incdec(c, inner, bop, post, want).map(Some)
            }
            CXUnaryOperator_AddrOf => {
                if is_fn_type(inner.ty()) {
                    return self.fn_value(inner).map(Some);
                }
                let lv = self.lv(inner)?;
                let src = loc(c);
                match lv {
                    Lv::Field(ptr, field) => {
                        let fty = self.cx.prog.field(field).ty.clone();
                        let t = self.tmp(Ty::Ptr(Box::new(fty)));
                        self.emit(Op::FieldAddr { dst: t, ptr, field }, src);
                        Ok(Some(Expr::Var(t)))
                    }
                    Lv::Obj(p, _, prefix) if prefix.is_empty() => Ok(Some(Expr::Var(p))),
                    // `&t->m` of the link struct identified with its container is `t`
                    Lv::Obj(p, _, prefix) if prefix == self.cx.obj_prefix(inner.ty()) => {
                        Ok(Some(Expr::Var(p)))
                    }
                    Lv::Obj(..) => {
                        let why = self
                            .cx
                            .intrusive
                            .refused
                            .get(&super::intrusive::record_key(inner.ty().canonical().declaration()))
                            .map(|places| format!(" (it is embedded in several places: {places}; container_of is supported for a struct embedded in one place only)"))
                            .unwrap_or_default();
                        unsup(c, &format!("address of an embedded struct{why}"))
                    }
                    Lv::Deref(p, _) => Ok(Some(Expr::Var(p))),
                    Lv::Var(_) => unsup(c, "address of a scalar variable"),
                }
            }
            CXUnaryOperator_Deref => {
                if !want && c.ty().canonical().kind() == CXType_Record {
                    self.lv(c)?;
                    return Ok(None);
                }
                let lv = self.lv(c)?;
                self.read(lv, c).map(Some)
            }
            CXUnaryOperator_Plus | CXUnaryOperator_Extension => {
                if want {
                    self.rv(inner).map(Some)
                } else {
                    self.effect(inner).map(|_| None)
                }
            }
            CXUnaryOperator_Minus | CXUnaryOperator_Not => {
                let ty = self.ety(c)?;
                let e = self.rv(inner)?;
                let (uop, bop) = if op == CXUnaryOperator_Minus {
                    (UnOp::Neg, BinOp::Sub)
                } else {
                    (UnOp::BitNot, BinOp::Sub)
                };
                let e = Expr::Unary(uop, Box::new(e));
                Ok(Some(wrap_arith(bop, e, &ty)))
            }
            CXUnaryOperator_LNot => {
                let ity = self.ety(inner)?;
                let e = self.rv(inner)?;
                Ok(Some(match as_comparison(e, &ity) {
                    cmp @ Expr::Binary(..) => cmp.negate(),
                    other => Expr::Unary(UnOp::Not, Box::new(other)),
                }))
            }
            _ => unsup(c, "unary operator"),
        }
    }

    fn incdec(
        &mut self,
        c: Cursor<'t>,
        inner: Cursor<'t>,
        bop: BinOp,
        post: bool,
        want: bool,
    ) -> R<Expr> {
        let src = loc(c);
        if is_fn_ptr(inner.ty()) {
            return unsup(c, "function pointer arithmetic");
        }
        let ty = self.ety(inner)?;
        if ty.is_ptr() {
            return unsup(c, "pointer arithmetic");
        }
        if ty == BOOL {
            return unsup(c, "++/-- on _Bool");
        }
        let step = |e: Expr| -> Expr {
            let r = Expr::bin(bop, e, Expr::Int(1));
            match &ty {
                Ty::Int { bits, signed: true } if *bits >= 32 => r,
                t => Expr::Cast(t.clone(), Box::new(r)),
            }
        };
        let lv = self.lv(inner)?;
        if let Lv::Var(v) = lv {
            let old = if post && want {
                let t = self.tmp(ty.clone());
                self.emit(
                    Op::Assign {
                        dst: t,
                        src: Expr::Var(v),
                    },
                    src,
                );
                Some(Expr::Var(t))
            } else {
                None
            };
            let new = step(Expr::Var(v));
            self.emit(Op::Assign { dst: v, src: new }, src);
            return Ok(old.unwrap_or(Expr::Var(v)));
        }
        let old = self.read(lv.clone(), c)?;
        let new = step(old.clone());
        self.write(lv, new.clone(), c)?;
        Ok(if post { old } else { new })
    }

    fn binary(&mut self, c: Cursor<'t>, want: bool) -> R<Option<Expr>> {
        let k = c.binary_op();
        let src = loc(c);
        let ch = c.expr_children();
        if ch.len() != 2 {
            return unsup(c, "internal: binary operator arity");
        }
        let (l, r) = (ch[0], ch[1]);
        let fn_ptrs = is_fn_ptr(l.ty()) || is_fn_ptr(r.ty());
        if fn_ptrs
            && !matches!(
                k,
                CXBinaryOperator_Comma
                    | CXBinaryOperator_LAnd
                    | CXBinaryOperator_LOr
                    | CXBinaryOperator_Assign
                    | CXBinaryOperator_EQ
                    | CXBinaryOperator_NE
            )
        {
            return unsup(c, "function pointer arithmetic or relational comparison");
        }
        match k {
            CXBinaryOperator_Comma => {
                self.effect(l)?;
                if want {
                    self.rv(r).map(Some)
                } else {
                    self.effect(r).map(|_| None)
                }
            }
            CXBinaryOperator_LAnd | CXBinaryOperator_LOr => {
                if want {
                    let t = self.tmp(Ty::INT);
                    let (nt, nf, join) = (self.node(src), self.node(src), self.node(src));
                    self.cond(c, Some(nt), Some(nf))?;
                    self.cur = nt;
                    self.emit(
                        Op::Assign {
                            dst: t,
                            src: Expr::Int(1),
                        },
                        src,
                    );
                    self.jump(join, src);
                    self.cur = nf;
                    self.emit(
                        Op::Assign {
                            dst: t,
                            src: Expr::Int(0),
                        },
                        src,
                    );
                    self.jump(join, src);
                    self.cur = join;
                    Ok(Some(Expr::Var(t)))
                } else {
                    let (m, join) = (self.node(src), self.node(src));
                    if k == CXBinaryOperator_LAnd {
                        self.cond(l, Some(m), Some(join))?;
                    } else {
                        self.cond(l, Some(join), Some(m))?;
                    }
                    self.cur = m;
                    self.effect(r)?;
                    self.jump(join, src);
                    self.cur = join;
                    Ok(None)
                }
            }
            CXBinaryOperator_Assign => {
                if c.ty().canonical().kind() == CXType_Record {
                    if want {
                        return unsup(c, "value of a struct assignment");
                    }
                    let from = self.lv(strip_noop(r))?;
                    let to = self.lv(l)?;
                    self.copy_struct(to, from, c)?;
                    return Ok(None);
                }
                if let Some(v) = self.var_peek(l)? {
                    self.rhs_into(r, v)?;
                    return Ok(Some(Expr::Var(v)));
                }
                let e = self.rv(r)?;
                let lv = self.lv(l)?;
                let rty = self.ety(r)?;
                let Some(lty) = self.lv_ty(&lv) else {
                    return unsup(c, "struct assignment");
                };
                let e = self.convert(e, &rty, &lty, c)?;
                let e = if want && !is_const(&e) && !matches!(lv, Lv::Var(_)) {
                    // keep the stored value available without re-reading memory
                    self.snapshot(e, lty, src)
                } else {
                    e
                };
                self.write(lv, e.clone(), c)?;
                Ok(Some(e))
            }
            CXBinaryOperator_MulAssign
            | CXBinaryOperator_DivAssign
            | CXBinaryOperator_RemAssign
            | CXBinaryOperator_AddAssign
            | CXBinaryOperator_SubAssign
            | CXBinaryOperator_ShlAssign
            | CXBinaryOperator_ShrAssign
            | CXBinaryOperator_AndAssign
            | CXBinaryOperator_XorAssign
            | CXBinaryOperator_OrAssign => {
                let Some(op) = binop(k) else {
                    return unsup(c, "internal: compound operator");
                };
                let lty = self.ety(l)?;
                if lty.is_ptr() {
                    return unsup(c, "pointer arithmetic");
                }
                let rty = self.ety(r)?;
                let comp = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    promote(&lty)
                } else {
                    rty.clone()
                };
                let re = self.rv(r)?;
                let lv = self.lv(l)?;
                let old = self.read(lv.clone(), c)?;
                let old = self.convert(old, &lty, &comp, c)?;
                let res = wrap_arith(op, Expr::bin(op, old, re), &comp);
                let new = self.convert(res, &comp, &lty, c)?;
                let is_var = matches!(lv, Lv::Var(_));
                let new = if want && !is_var {
                    self.snapshot(new, lty, src)
                } else {
                    new
                };
                self.write(lv.clone(), new.clone(), c)?;
                Ok(Some(match lv {
                    Lv::Var(v) => Expr::Var(v),
                    _ => new,
                }))
            }
            _ => {
                let Some(op) = binop(k) else {
                    return unsup(c, "binary operator");
                };
                let lty = self.ety(l)?;
                let rty = self.ety(r)?;
                if (lty.is_ptr() || rty.is_ptr()) && !matches!(op, BinOp::Eq | BinOp::Ne) {
                    return unsup(c, "pointer arithmetic or relational pointer comparison");
                }
                let mut le = self.rv(l)?;
                if has_side_effects(r) {
                    le = self.snapshot(le, lty, src);
                }
                let mut re = self.rv(r)?;
                if fn_ptrs {
                    // function ids: NULL is 0; a data pointer is never a function
                    for (side, e) in [(l, &mut le), (r, &mut re)] {
                        if *e == Expr::Null {
                            *e = Expr::Int(0);
                        }
                        if !is_fn_ptr(side.ty()) && *e != Expr::Int(0) {
                            return unsup(
                                c,
                                "comparison of a function pointer with a non-function pointer",
                            );
                        }
                    }
                }
                let ty = self.ety(c)?;
                Ok(Some(wrap_arith(op, Expr::bin(op, le, re), &ty)))
            }
        }
    }

    /// The scalar variable an lvalue expression denotes, if it is one (emits nothing).
    fn var_peek(&mut self, l: Cursor<'t>) -> R<Option<VarId>> {
        let s = strip_parens(l);
        if s.kind() == CXCursor_DeclRefExpr {
            if let Some(d) = s.referenced() {
                if matches!(d.kind(), CXCursor_VarDecl | CXCursor_ParmDecl) {
                    let v = self.var_of(d, s)?;
                    if !self.cx.obj_vars.contains_key(&v) && !self.cx.cell_vars.contains_key(&v) {
                        return Ok(Some(v));
                    }
                }
            }
        }
        Ok(None)
    }

    // ----- conditions -----

    /// Branches on `c`: to `t` if true, to `f` if false (`None`: that branch is cut).
    /// Afterwards the current location is unreachable.
    fn cond(&mut self, c: Cursor<'t>, t: Option<usize>, f: Option<usize>) -> R<()> {
        let src = loc(c);
        match c.kind() {
            CXCursor_ParenExpr => return self.cond(self.only_child(c)?, t, f),
            CXCursor_UnexposedExpr => {
                let inner = self.only_child(c)?;
                let to = self.cx.conv(c.ty(), c)?;
                let from = self.cx.conv(inner.ty(), inner)?;
                let transparent = match (&from, &to) {
                    (_, CTy::Scalar(t)) if *t == BOOL => true,
                    (CTy::Scalar(a), CTy::Scalar(b)) => a == b || range_includes(b, a),
                    _ => false,
                };
                if transparent && !is_alloc_call(strip_casts(inner)) {
                    return self.cond(inner, t, f);
                }
            }
            CXCursor_UnaryOperator if c.unary_op() == CXUnaryOperator_LNot => {
                return self.cond(self.only_child(c)?, f, t);
            }
            CXCursor_BinaryOperator => {
                let ch = c.expr_children();
                if ch.len() == 2 {
                    match c.binary_op() {
                        CXBinaryOperator_LAnd => {
                            let m = self.node(src);
                            self.cond(ch[0], Some(m), f)?;
                            self.cur = m;
                            return self.cond(ch[1], t, f);
                        }
                        CXBinaryOperator_LOr => {
                            let m = self.node(src);
                            self.cond(ch[0], t, Some(m))?;
                            self.cur = m;
                            return self.cond(ch[1], t, f);
                        }
                        CXBinaryOperator_Comma => {
                            self.effect(ch[0])?;
                            return self.cond(ch[1], t, f);
                        }
                        _ => {}
                    }
                }
            }
            CXCursor_ConditionalOperator => {
                let ch = c.expr_children();
                if ch.len() == 3 {
                    let (m1, m2) = (self.node(src), self.node(src));
                    self.cond(ch[0], Some(m1), Some(m2))?;
                    self.cur = m1;
                    self.cond(ch[1], t, f)?;
                    self.cur = m2;
                    return self.cond(ch[2], t, f);
                }
            }
            _ => {}
        }
        let ty = self.ety(c)?;
        if ty.is_int() && !has_side_effects(c) {
            if let Some(v) = c.eval_int() {
                let target = if v != 0 { t } else { f };
                match target {
                    Some(n) => self.jump(n, src),
                    None => self.cur = self.node(src),
                }
                return Ok(());
            }
        }
        let e = self.rv(c)?;
        let e = as_comparison(e, &ty);
        let from = self.cur;
        if let Some(t) = t {
            self.edge(from, t, Op::Assume { cond: e.clone() }, src);
        }
        if let Some(f) = f {
            self.edge(from, f, Op::Assume { cond: e.negate() }, src);
        }
        self.cur = self.node(src);
        Ok(())
    }

    // ----- calls -----

    fn call(&mut self, c: Cursor<'t>, want: bool) -> R<Option<Expr>> {
        self.call_h(c, want, None)
    }

    /// `call` with an allocation type hint for `malloc` & co. (see `rv_h`).
    fn call_h(&mut self, c: Cursor<'t>, want: bool, hint: Option<Ty>) -> R<Option<Expr>> {
        let src = loc(c);
        let Some(d) = direct_callee(c) else {
            return self.indirect_call(c, want);
        };
        let name = d.spelling();
        let nargs = c.num_args().max(0) as u32;
        let args: Vec<Cursor<'t>> = (0..nargs).filter_map(|i| c.arg(i)).collect();
        if name.starts_with("__VERIFIER_nondet_") {
            let rty = self.cx.conv(d.result_type(), c)?;
            let CTy::Scalar(ty) = rty else {
                return unsup(c, "nondet function without scalar result");
            };
            if !want {
                return Ok(None);
            }
            let t = self.tmp(ty);
            self.emit(Op::Nondet { dst: t }, src);
            return Ok(Some(Expr::Var(t)));
        }
        if name == "__builtin_expect" && args.len() == 2 {
            // branch-prediction hint: the value is the first argument
            if has_side_effects(args[1]) {
                return unsup(args[1], "__builtin_expect with side effects in the hint");
            }
            return if want {
                self.rv(args[0]).map(Some)
            } else {
                self.effect(args[0]).map(|_| None)
            };
        }
        if name == "__VERIFIER_assume" {
            let Some(&a) = args.first() else {
                return unsup(c, "__VERIFIER_assume without argument");
            };
            let next = self.node(src);
            self.cond(a, Some(next), None)?;
            self.cur = next;
            return Ok(want.then_some(Expr::Int(0)));
        }
        if ERROR_FNS.contains(&name.as_str()) || HALT_FNS.contains(&name.as_str()) {
            for a in &args {
                if has_side_effects(*a) {
                    self.effect(*a)?;
                }
            }
            if ERROR_FNS.contains(&name.as_str()) {
                self.terminate(Op::Error, LocKind::Error, src);
            } else {
                self.terminate(Op::Halt, LocKind::Sink, src);
            }
            return Ok(want.then_some(Expr::Int(0)));
        }
        match name.as_str() {
            "malloc" | "calloc" | "alloca" | "__builtin_alloca" => {
                let ty = self.ety(c)?;
                let t = self.tmp(ty);
                self.alloc(c, t, None, hint)?;
                return Ok(Some(Expr::Var(t)));
            }
            "free" => {
                let Some(&a) = args.first() else {
                    return unsup(c, "free without argument");
                };
                let mut a = a;
                while matches!(
                    a.kind(),
                    CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr | CXCursor_ParenExpr
                ) && a.expr_children().len() == 1
                    && a.expr_children()[0].ty().canonical().kind() == CXType_Pointer
                {
                    a = a.expr_children()[0];
                }
                let aty = self.ety(a)?;
                let e = self.rv(a)?;
                let p = self.atom(e, aty, src);
                self.emit(Op::Free { ptr: p }, src);
                return Ok(None);
            }
            _ => {}
        }
        if PURE_EXTERNS.contains(&name.as_str()) && d.definition().is_none() {
            for a in &args {
                let s = strip_casts(*a);
                if s.kind() == CXCursor_StringLiteral {
                    if s.spelling().contains("%n") {
                        return unsup(*a, "printf with %n");
                    }
                    continue;
                }
                self.effect(*a)?;
            }
            if !want {
                return Ok(None);
            }
            let ty = self.ety(c)?;
            let t = self.tmp(ty);
            self.emit(Op::Nondet { dst: t }, src);
            return Ok(Some(Expr::Var(t)));
        }
        if d.definition().is_none() {
            return unsup(c, &format!("call to external function `{name}`"));
        }
        let ret = if want {
            match self.cx.conv(d.result_type(), c)? {
                CTy::Scalar(t) => Some(self.tmp(t)),
                CTy::Void => None,
                CTy::Struct(_) => return unsup(c, "struct return value"),
            }
        } else {
            None
        };
        self.user_call(c, d, ret)?;
        Ok(ret.map(Expr::Var))
    }

    /// A call through a function pointer `fp(args)` (or `(*fp)(args)`): the pointer and
    /// the arguments are evaluated here, the branches over the candidate functions are
    /// added by [`Ctx::resolve_indirect_calls`] once every function is lowered. A
    /// callee that is a constant (`(&f)(x)`) is a direct call.
    fn indirect_call(&mut self, c: Cursor<'t>, want: bool) -> R<Option<Expr>> {
        let src = loc(c);
        let Some(&callee) = c.expr_children().first() else {
            return unsup(c, "internal: call without callee");
        };
        if !is_fn_ptr(callee.ty()) {
            return unsup(c, "indirect call");
        }
        let fn_ty = callee.ty().canonical().pointee().canonical();
        if fn_ty.kind() == CXType_FunctionNoProto {
            return unsup(c, "call through a function pointer without prototype");
        }
        if fn_ty.is_variadic() {
            return unsup(c, "call through a pointer to a variadic function");
        }
        let Some(ptys) = fn_ty.arg_types() else {
            return unsup(c, "call through a function pointer without prototype");
        };
        let nargs = c.num_args().max(0) as u32;
        let args: Vec<Cursor<'t>> = (0..nargs).filter_map(|i| c.arg(i)).collect();
        if args.len() != ptys.len() {
            return unsup(c, "call with a wrong number of arguments");
        }
        let ret_ty = match self.cx.conv(fn_ty.result(), c)? {
            CTy::Scalar(t) => Some(t),
            CTy::Void => None,
            CTy::Struct(_) => return unsup(c, "struct return value"),
        };
        let fe = self.rv(callee)?;
        if let Expr::Int(k) = fe {
            if let Some(&def) = k
                .checked_sub(1)
                .and_then(|f| usize::try_from(f).ok())
                .and_then(|f| self.cx.func_defs.get(f))
            {
                let ret = if want {
                    ret_ty.map(|t| self.tmp(t))
                } else {
                    None
                };
                self.user_call(c, def, ret)?;
                return Ok(ret.map(Expr::Var));
            }
        }
        let fe = if args.iter().any(|a| has_side_effects(*a)) {
            self.snapshot(fe, FN_PTR, src)
        } else {
            fe
        };
        let mut vals = Vec::new();
        for (i, (a, pt)) in args.iter().zip(&ptys).enumerate() {
            let pty = self.cx.scalar(*pt, *a)?;
            vals.push(self.call_arg(&args, i, pty, src)?);
        }
        let ptr = self.atom(fe, FN_PTR, src);
        let ret = if want {
            ret_ty.map(|t| self.tmp(t))
        } else {
            None
        };
        let (from, to) = (self.cur, self.node(src));
        self.cx.indirect_calls.push(IndirectCall {
            func: self.fid,
            from,
            to,
            ptr,
            fn_ty,
            args: vals,
            ret,
            src,
        });
        self.cur = to;
        Ok(ret.map(Expr::Var))
    }

    /// The value of a function designator (an expression of function type): the
    /// function's id (`1 + FuncId`); the function becomes address-taken and reachable.
    fn fn_value(&mut self, c: Cursor<'t>) -> R<Expr> {
        let s = strip_parens(c);
        match s.kind() {
            CXCursor_DeclRefExpr => {
                let Some(d) = s.referenced().filter(|d| d.kind() == CXCursor_FunctionDecl) else {
                    return unsup(c, "function designator");
                };
                let Some(def) = d.definition() else {
                    return unsup(
                        c,
                        &format!("address of external function `{}`", d.spelling()),
                    );
                };
                let f = self.cx.func_id(def)?;
                self.cx.fn_targets.insert(f);
                Ok(Ctx::fn_id_value(f))
            }
            // `*fp` designates the function `fp` points to
            CXCursor_UnaryOperator if s.unary_op() == CXUnaryOperator_Deref => {
                let inner = self.only_child(s)?;
                if !is_fn_ptr(inner.ty()) {
                    return unsup(c, "function designator");
                }
                self.rv(inner)
            }
            _ => unsup(c, "function designator"),
        }
    }

    /// A conversion `c` of `inner` from or to a function pointer: the decay of a
    /// function designator to its address, a copy between identical function pointer
    /// types, NULL to a function pointer, a function pointer to `_Bool`. Any other
    /// (to another function type, to or from integers and data pointers) is refused.
    fn fn_ptr_conversion(&mut self, c: Cursor<'t>, inner: Cursor<'t>) -> R<Expr> {
        let to = c.ty().canonical();
        let from = inner.ty().canonical();
        if is_fn_type(from) {
            if is_fn_ptr(to) && to.pointee().canonical().equals(&from) {
                return self.fn_value(inner);
            }
            return unsup(c, "function pointer cast");
        }
        if is_fn_ptr(from) {
            if is_fn_ptr(to) {
                if to.pointee().canonical().equals(&from.pointee().canonical()) {
                    return self.rv(inner);
                }
                return unsup(c, "cast between function pointer types");
            }
            if self.ety(c)? == BOOL {
                let e = self.rv(inner)?;
                return Ok(as_comparison(e, &FN_PTR));
            }
            return unsup(c, "function pointer cast");
        }
        // to a function pointer: only from a null pointer constant
        match self.rv(inner)? {
            Expr::Null | Expr::Int(0) => Ok(Expr::Int(0)),
            _ => unsup(c, "conversion to a function pointer"),
        }
    }

    /// A call of a function with a body; `ret` receives the result (same type).
    /// The value of call argument `args[i]` for a parameter of type `pty`, for direct
    /// and indirect calls alike: an allocation call is lowered into a temporary, other
    /// values are converted; the value is snapshotted when a later argument has side
    /// effects.
    fn call_arg(&mut self, args: &[Cursor<'t>], i: usize, pty: Ty, src: SrcLoc) -> R<Expr> {
        let a = args[i];
        let aty = self.ety(a)?;
        let e = if pty.is_ptr() && is_alloc_call(strip_casts(a)) {
            let t = self.tmp(pty.clone());
            self.alloc(strip_casts(a), t, Some(a), None)?;
            Expr::Var(t)
        } else {
            let e = self.rv(a)?;
            self.convert(e, &aty, &pty, a)?
        };
        let later_effects = args[i + 1..].iter().any(|b| has_side_effects(*b));
        Ok(if later_effects {
            self.snapshot(e, pty, src)
        } else {
            e
        })
    }

    fn user_call(&mut self, c: Cursor<'t>, d: Cursor<'t>, ret: Option<VarId>) -> R<()> {
        let src = loc(c);
        let Some(def) = d.definition() else {
            return unsup(c, "internal: call without definition");
        };
        let callee = self.cx.func_id(def)?;
        let nargs = c.num_args().max(0) as u32;
        let args: Vec<Cursor<'t>> = (0..nargs).filter_map(|i| c.arg(i)).collect();
        let nparams = def.num_args().max(0) as usize;
        if args.len() != nparams {
            return unsup(c, "call with a wrong number of arguments");
        }
        let mut vals = Vec::new();
        for i in 0..args.len() {
            let Some(p) = def.arg(i as u32) else {
                return unsup(c, "internal: parameter");
            };
            let pty = self.cx.scalar(p.ty(), p)?;
            vals.push(self.call_arg(&args, i, pty, src)?);
        }
        self.emit(
            Op::Call {
                callee,
                args: vals,
                ret,
            },
            src,
        );
        Ok(())
    }

    // ----- statements -----

    fn stmt(&mut self, c: Cursor<'t>) -> R<()> {
        let src = loc(c);
        match c.kind() {
            CXCursor_CompoundStmt => {
                for s in c.children() {
                    self.stmt(s)?;
                }
            }
            CXCursor_DeclStmt => {
                for d in c.children() {
                    match d.kind() {
                        CXCursor_VarDecl => self.decl_var(d)?,
                        CXCursor_TypedefDecl
                        | CXCursor_StructDecl
                        | CXCursor_EnumDecl
                        | CXCursor_FunctionDecl => {}
                        CXCursor_UnionDecl => return unsup(d, "union"),
                        _ => return unsup(d, &format!("declaration `{}`", d.kind_name())),
                    }
                }
            }
            CXCursor_NullStmt => {}
            CXCursor_IfStmt => {
                let ch = c.children();
                if ch.len() < 2 || ch.len() > 3 {
                    return unsup(c, "internal: if statement shape");
                }
                let (nt, nf, join) = (self.node(src), self.node(src), self.node(src));
                self.cond(ch[0], Some(nt), Some(nf))?;
                self.cur = nt;
                self.stmt(ch[1])?;
                self.jump(join, src);
                self.cur = nf;
                if let Some(&e) = ch.get(2) {
                    self.stmt(e)?;
                }
                self.jump(join, src);
                self.cur = join;
            }
            CXCursor_WhileStmt => {
                let ch = c.children();
                if ch.len() != 2 {
                    return unsup(c, "internal: while statement shape");
                }
                let (head, body, exit) = (self.node(src), self.node(src), self.node(src));
                self.jump(head, src);
                self.cur = head;
                self.cond(ch[0], Some(body), Some(exit))?;
                self.loop_body(ch[1], body, head, exit)?;
                self.cur = exit;
            }
            CXCursor_DoStmt => {
                let ch = c.children();
                if ch.len() != 2 {
                    return unsup(c, "internal: do statement shape");
                }
                let (body, condn, exit) = (self.node(src), self.node(src), self.node(src));
                self.jump(body, src);
                self.loop_body(ch[0], body, condn, exit)?;
                self.cur = condn;
                self.cond(ch[1], Some(body), Some(exit))?;
                self.cur = exit;
            }
            CXCursor_ForStmt => self.for_stmt(c)?,
            CXCursor_BreakStmt => match self.breaks.last() {
                Some(&b) => self.jump(b, src),
                None => return unsup(c, "break outside a loop or switch"),
            },
            CXCursor_ContinueStmt => match self.continues.last() {
                Some(&b) => self.jump(b, src),
                None => return unsup(c, "continue outside a loop"),
            },
            CXCursor_ReturnStmt => {
                if let Some(&e) = c.expr_children().first() {
                    match self.cx.prog.functions[self.fid].ret {
                        Some(r) => self.rhs_into(e, r)?,
                        None => self.effect(e)?,
                    }
                }
                let exit = self.g.exit;
                self.jump(exit, src);
            }
            CXCursor_GotoStmt => {
                let Some(l) = c
                    .children()
                    .into_iter()
                    .find(|x| x.kind() == CXCursor_LabelRef)
                else {
                    return unsup(c, "internal: goto without label");
                };
                let n = self.label(&l.spelling(), src);
                self.jump(n, src);
            }
            CXCursor_LabelStmt => {
                let n = self.label(&c.spelling(), src);
                self.jump(n, src);
                self.cur = n;
                if let Some(&s) = c.children().last() {
                    self.stmt(s)?;
                }
            }
            CXCursor_SwitchStmt => self.switch_stmt(c)?,
            CXCursor_CaseStmt | CXCursor_DefaultStmt => {
                let n = self
                    .switches
                    .last()
                    .and_then(|m| m.iter().find(|(k, _)| *k == c).map(|(_, n)| *n));
                let Some(n) = n else {
                    return unsup(c, "case label outside a switch");
                };
                self.jump(n, src);
                self.cur = n;
                if let Some(&s) = c.children().last() {
                    if c.kind() == CXCursor_DefaultStmt || c.children().len() >= 2 {
                        self.stmt(s)?;
                    }
                }
            }
            CXCursor_AsmStmt | CXCursor_MSAsmStmt => return unsup(c, "inline assembly"),
            CXCursor_IndirectGotoStmt => return unsup(c, "computed goto"),
            _ if c.is_expression() => self.effect(c)?,
            _ => return unsup(c, &format!("statement `{}`", c.kind_name())),
        }
        Ok(())
    }

    fn label(&mut self, name: &str, src: SrcLoc) -> usize {
        if let Some(&n) = self.labels.get(name) {
            return n;
        }
        let n = self.node(src);
        self.labels.insert(name.to_string(), n);
        n
    }

    fn loop_body(&mut self, body: Cursor<'t>, start: usize, cont: usize, exit: usize) -> R<()> {
        self.cur = start;
        self.breaks.push(exit);
        self.continues.push(cont);
        let r = self.stmt(body);
        self.breaks.pop();
        self.continues.pop();
        r?;
        self.jump(cont, loc(body));
        Ok(())
    }

    fn for_stmt(&mut self, c: Cursor<'t>) -> R<()> {
        let src = loc(c);
        let ch = c.children();
        let Some((&body, parts)) = ch.split_last() else {
            return unsup(c, "internal: for statement shape");
        };
        let (mut init, mut cnd, mut inc) = (None, None, None);
        if parts.len() == 3 {
            (init, cnd, inc) = (Some(parts[0]), Some(parts[1]), Some(parts[2]));
        } else if !parts.is_empty() {
            // find the two `;` of the header to classify the parts present
            if c.in_macro() {
                return unsup(c, "for loop with omitted header parts inside a macro");
            }
            let toks = self.cx.tu.tokens(c);
            let mut depth = 0i32;
            let mut semis = Vec::new();
            for (s, off) in &toks {
                match s.as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    ";" if depth == 1 => semis.push(*off),
                    _ => {}
                }
                if semis.len() == 2 {
                    break;
                }
            }
            if semis.len() != 2 {
                return unsup(c, "internal: for header");
            }
            for &p in parts {
                let (start, _) = p.extent_offsets();
                if start < semis[0] {
                    init = Some(p);
                } else if start < semis[1] {
                    cnd = Some(p);
                } else {
                    inc = Some(p);
                }
            }
        }
        if let Some(i) = init {
            if i.kind() == CXCursor_DeclStmt {
                self.stmt(i)?;
            } else {
                self.effect(i)?;
            }
        }
        let (head, bodyn, contn, exit) = (
            self.node(src),
            self.node(src),
            self.node(src),
            self.node(src),
        );
        self.jump(head, src);
        self.cur = head;
        match cnd {
            Some(e) => self.cond(e, Some(bodyn), Some(exit))?,
            None => self.jump(bodyn, src),
        }
        self.loop_body(body, bodyn, contn, exit)?;
        self.cur = contn;
        if let Some(i) = inc {
            self.effect(i)?;
        }
        self.jump(head, src);
        self.cur = exit;
        Ok(())
    }

    fn collect_cases(c: Cursor<'t>, out: &mut Vec<Cursor<'t>>) {
        for ch in c.children() {
            match ch.kind() {
                CXCursor_SwitchStmt => {}
                CXCursor_CaseStmt | CXCursor_DefaultStmt => {
                    out.push(ch);
                    Self::collect_cases(ch, out);
                }
                _ if ch.is_expression() => {}
                _ => Self::collect_cases(ch, out),
            }
        }
    }

    fn switch_stmt(&mut self, c: Cursor<'t>) -> R<()> {
        let src = loc(c);
        let ch = c.children();
        if ch.len() != 2 {
            return unsup(c, "internal: switch statement shape");
        }
        let ty = self.ety(ch[0])?;
        let e = self.rv(ch[0])?;
        let mut cases = Vec::new();
        Self::collect_cases(ch[1], &mut cases);
        let exit = self.node(src);
        let mut map = Vec::new();
        let mut default = None;
        for k in &cases {
            let n = self.node(loc(*k));
            map.push((*k, n));
            if k.kind() == CXCursor_DefaultStmt {
                default = Some(n);
                continue;
            }
            let kc = k.children();
            if kc.len() != 2 {
                return unsup(*k, "case range");
            }
            let Some(v) = kc[0].eval_int() else {
                return unsup(*k, "non-constant case label");
            };
            let v = wrap_const(v, &ty);
            let cond = Expr::bin(BinOp::Eq, e.clone(), Expr::Int(v));
            let next = self.node(loc(*k));
            let cur = self.cur;
            self.edge(cur, n, Op::Assume { cond: cond.clone() }, loc(*k));
            self.edge(
                cur,
                next,
                Op::Assume {
                    cond: cond.negate(),
                },
                loc(*k),
            );
            self.cur = next;
        }
        self.jump(default.unwrap_or(exit), src);
        self.switches.push(map);
        self.breaks.push(exit);
        let r = self.stmt(ch[1]);
        self.breaks.pop();
        self.switches.pop();
        r?;
        self.jump(exit, src);
        self.cur = exit;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(nodes: usize, edges: &[(usize, usize, Op)]) -> LocalGraph {
        let mut g = LocalGraph {
            nodes: vec![(SrcLoc::default(), LocKind::Normal); nodes],
            edges: edges
                .iter()
                .map(|(a, b, op)| (*a, *b, op.clone(), SrcLoc::default()))
                .collect(),
            entry: 0,
            exit: 1,
        };
        g.nodes[0].1 = LocKind::FuncEntry;
        g.nodes[1].1 = LocKind::FuncExit;
        g
    }

    #[test]
    fn contract_removes_skip_chains() {
        let halt = Op::Halt;
        // 0 -halt-> 2 -skip-> 3 -skip-> 1
        let g = contract(graph(
            4,
            &[(0, 2, halt.clone()), (2, 3, Op::Skip), (3, 1, Op::Skip)],
        ));
        assert_eq!(g.edges.len(), 1);
        assert_eq!((g.edges[0].0, g.edges[0].1), (0, 1));
    }

    #[test]
    fn contract_keeps_skip_cycles() {
        // 0 -halt-> 2 -skip-> 3 -skip-> 2 (an empty infinite loop must stay a loop)
        let g = contract(graph(
            4,
            &[(0, 2, Op::Halt), (2, 3, Op::Skip), (3, 2, Op::Skip)],
        ));
        let from0: Vec<_> = g.edges.iter().filter(|e| e.0 == 0).collect();
        assert_eq!(from0.len(), 1);
        let t = from0[0].1;
        // the target has a successor path that returns to itself
        let succ: Vec<_> = g.edges.iter().filter(|e| e.0 == t).collect();
        assert_eq!(succ.len(), 1);
        assert_eq!(succ[0].1, t);
    }

    #[test]
    fn as_comparison_makes_conditions_comparisons() {
        let e = as_comparison(Expr::Var(0), &Ty::INT);
        assert_eq!(e, Expr::bin(BinOp::Ne, Expr::Var(0), Expr::Int(0)));
        let p = as_comparison(Expr::Var(0), &Ty::Ptr(Box::new(Ty::Void)));
        assert_eq!(p, Expr::bin(BinOp::Ne, Expr::Var(0), Expr::Null));
        let c = Expr::bin(BinOp::Lt, Expr::Var(0), Expr::Int(1));
        assert_eq!(as_comparison(c.clone(), &Ty::INT), c);
    }

    #[test]
    fn unsigned_arithmetic_wraps() {
        let u32t = Ty::Int {
            bits: 32,
            signed: false,
        };
        let e = wrap_arith(BinOp::Add, Expr::Var(0), &u32t);
        assert_eq!(e, Expr::Cast(u32t.clone(), Box::new(Expr::Var(0))));
        assert_eq!(wrap_arith(BinOp::Add, Expr::Var(0), &Ty::INT), Expr::Var(0));
        assert_eq!(
            wrap_arith(BinOp::Sub, Expr::Int(-1), &u32t),
            Expr::Int(4294967295)
        );
    }
}
