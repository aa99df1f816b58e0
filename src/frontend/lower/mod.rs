//! Lowering of the clang AST to the CFA (see `cfa.rs` for the target's invariants).
//!
//! Conventions (documented for the analyses):
//! - locals declared without initialiser get a `Nondet` edge at the declaration
//!   (their value is indeterminate in C), except an address-taken scalar, whose cell
//!   stays uninitialised like a stack struct's fields (indeterminate reads everywhere;
//!   no quantified value in the interpolants over its memory array);
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
//!   `LoadIndirect`/`StoreIndirect`, `&x` is the pointer itself; after lowering, a
//!   pointer-typed one that only its function and the callees it is passed to
//!   dereference is a variable again ([`crate::cfa::cells`]);
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
//!
//! The lowering is split by construct family: `program` (whole-program steps: the
//! registration of functions and globals, the start function, indirect calls, the
//! assembly into the program graph), `decl` (declarations and initialisers), `expr`
//! (values, effects, conversions), `lvalue` (lvalues, loads, stores, struct copies),
//! `ops` (unary and binary operators), `cond` (branching on a condition), `call`
//! (calls, allocations, function pointers), `stmt` (statements) and `cursor` (helpers
//! on clang cursors). This file holds the lowering state (`Ctx` for the program,
//! `FnLower` for a function) and the primitives that build a function's graph.

#![allow(non_upper_case_globals)]

mod array;
mod call;
mod cond;
mod cursor;
mod decl;
mod expr;
mod links;
mod lvalue;
mod ops;
mod program;
mod stmt;

use super::clang::{Cursor, TranslationUnit, Type};
use super::FrontendOptions;
use crate::cfa::{Expr, FuncId, LocKind, Op, Program, Scope, SrcLoc, StructId, Ty, VarId};
use clang_sys::*;
use cursor::collect_addr_taken;
use expr::is_const;
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

/// A global variable to initialise in the start function.
struct GlobalInit<'t> {
    var: VarId,
    decl: Cursor<'t>,
    strukt: Option<StructId>,
    /// The initialiser (the declaration's, or an array element's item).
    init: Option<Cursor<'t>>,
    /// The C type of the variable (of the element for an array element).
    ty: Type<'t>,
}

/// Whole-program lowering state.
pub struct Ctx<'t> {
    pub prog: Program,
    /// [`crate::frontend::FrontendOptions::error_calls_as_calls`].
    error_calls_as_calls: bool,
    pub struct_ids: HashMap<String, StructId>,
    /// Definition cursor of each struct (None if opaque), indexed by StructId.
    pub struct_defs: Vec<Option<Cursor<'t>>>,
    tu: &'t TranslationUnit<'t>,
    globals: HashMap<Cursor<'t>, VarId>,
    /// Global arrays: the lvalues of their elements' variables (`lower::array`).
    global_arrays: HashMap<Cursor<'t>, lvalue::Lv>,
    /// One-dimensional arrays whose elements have addresses (stack cells, objects):
    /// the type an element pointer points to and the elements' variables, in order;
    /// the candidates of pointer arithmetic (`lower::array`).
    addr_arrays: Vec<(Ty, Vec<VarId>)>,
    /// Stand-alone heads of a link struct identified with its container
    /// (`frontend::intrusive`): the variable of the container object that stands for
    /// the head, and the link member's field prefix (`m.`). The container's other
    /// fields do not exist in C ([`Ctx::add_head_body_checks`]).
    head_objs: Vec<(VarId, StructId, String)>,
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
        global_arrays: HashMap::new(),
        addr_arrays: Vec::new(),
        head_objs: Vec::new(),
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
        error_calls_as_calls: opts.error_calls_as_calls,
    };
    cx.prog.malloc_never_fails = opts.malloc_never_fails;
    let root = tu.cursor();
    cx.intrusive = super::intrusive::scan(root);
    for d in root.children() {
        // bodies, and the initialisers of globals (`int *pa = &a;`)
        if (d.kind() == CXCursor_FunctionDecl && d.is_definition()) || d.kind() == CXCursor_VarDecl
        {
            collect_addr_taken(d, &mut cx.addr_taken);
        }
    }
    let mut main = None;
    for d in root.children() {
        match d.kind() {
            CXCursor_VarDecl if d.in_main_file() => {
                let registered = if crate::frontend::types::is_array(d.ty()) {
                    cx.global_array(d).map(|_| ())
                } else {
                    cx.global_var(d).map(|_| ())
                };
                if let Err(e) = registered {
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
    cx.add_head_body_checks();
    cx.prog.entry = cx.prog.functions[start].entry;
    crate::cfa::recursion::unroll(&mut cx.prog, crate::cfa::recursion::RECURSION_DEPTH);
    cx.prog.branch_pointer_comparisons();
    if !opts.keep_pointer_cells {
        cx.prog.unbox_pointer_cells();
    }
    cx.prog.reuse_loaded_ints();
    Ok(cx.prog)
}

/// The type of parameter `p`: a parameter declared as a function is a function
/// pointer (C11 6.7.6.3p8; libclang gives the declaration, and the prototype's argument
/// types, as written).
fn param_ty<'t>(cx: &mut Ctx<'t>, p: Cursor<'t>) -> R<Ty> {
    if crate::frontend::types::is_fn_type(p.ty()) {
        return Ok(crate::frontend::types::FN_PTR);
    }
    cx.scalar(p.ty(), p)
}

/// Per-function lowering state.
struct FnLower<'c, 't> {
    cx: &'c mut Ctx<'t>,
    fid: FuncId,
    fname: String,
    g: LocalGraph,
    cur: usize,
    locals: HashMap<Cursor<'t>, VarId>,
    /// Local arrays: the lvalues of their elements' variables (`lower::array`).
    arrays: HashMap<Cursor<'t>, lvalue::Lv>,
    name_counts: HashMap<String, u32>,
    tmp_count: u32,
    breaks: Vec<usize>,
    continues: Vec<usize>,
    labels: HashMap<String, usize>,
    switches: Vec<Vec<(Cursor<'t>, usize)>>,
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
            arrays: HashMap::new(),
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
            let ty = param_ty(fl.cx, p)?;
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
}
