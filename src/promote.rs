//! Promotion of boundedly allocated struct objects to global variables (scalar
//! replacement of heap objects).
//!
//! A struct type whose objects are allocated a bounded number of times in every run
//! (each `malloc` site is outside every loop, in a function called a bounded number of
//! times, without recursion) has at most `N` objects. Such objects — the two queue
//! descriptors of a two-queue program, the heads of a hash table's buckets — are
//! containers of the unbounded structure, not part of it. [`promote`] rewrites the
//! program so that object `i` (the `i`-th allocated, `1 ≤ i ≤ N`) becomes the globals
//! `S#i.f` (one per field) and `S#i.alive`, and a pointer to the struct becomes an `int`
//! holding `0` (NULL) or `i`:
//!
//! | operation | becomes |
//! |---|---|
//! | `p = malloc(S)` (or a stack object of `S`, which never fails) | `p = 0` (if malloc may fail) or, for the `i` with `S#next == i-1`: `S#next = i; S#i.alive = 1; S#i.f = nondet()` (`0` for calloc) for every field; `p = i` |
//! | `x = p->f` / `p->f = e` | for each `i`: `assume(p == i); assume(S#i.alive != 0); x = S#i.f` / `S#i.f = e` |
//! | `free(p)` | `assume(p == 0)`, or for each `i`: `assume(p == i); assume(S#i.alive != 0); S#i.alive = 0` |
//! | `assume_invalid(p)` | `assume(p != 0)`, then for each `i` either `assume(p != i)` or `assume(p == i); assume(S#i.alive == 0)` |
//! | `p == NULL` | `p == 0` |
//!
//! Fields of other structs that point to `S` become `int` fields (same size in ILP32).
//! The rewritten program has exactly the runs of the original, with the pointers to
//! `S` renamed injectively, with one exception: a pointer to `S` set by `nondet()` (an
//! uninitialised local) may now equal a live object's number, where the original held
//! NULL or a garbage address. That adds runs, never removes one, so a proof of the
//! rewritten program is a proof of the original; a counterexample of it is not
//! evidence for the original (`verify` re-runs the original program then).
//!
//! A type is promoted only when nothing else can reach its objects: no `&p->f`, no
//! pointer to a pointer to `S`, no cast between `S *` and another type, no pointer
//! arithmetic or ordering on `S *`. Anything else leaves the type alone.
//!
//! Stack and static objects (struct-typed locals and globals, `AllocKind::Stack`) are
//! promoted like heap objects: a head struct on the stack (`SLIST_HEAD(..) head;`,
//! reached through `&head`) becomes the globals `S#i.f`, so its pointer fields are
//! roots of the shape domain. Such an allocation never fails and its fields start
//! indeterminate (a static object's zero initialiser follows as ordinary stores); a
//! site executing in a loop is unbounded and keeps the type as it is. A type with stack
//! objects whose pointers the program also frees is not promoted: freeing a stack
//! object is an invalid free, which the rewriting (a `free` kills any live object)
//! would hide.

use crate::cfa::rewrite::{assign, assume, Chain};
use crate::cfa::{
    Access, AllocKind, BinOp, Edge, Expr, FieldRef, LocKind, Node, Op, Program, Scope, SrcLoc,
    StructId, Ty, UnOp, VarId,
};
use petgraph::visit::EdgeRef;

/// At most this many objects of a type are promoted (each becomes a set of globals).
pub const MAX_OBJECTS: u64 = 4;

/// One promoted struct type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Promoted {
    pub strukt: StructId,
    /// The struct's name as the program declares it (`queue`).
    pub name: String,
    /// How many objects of it a run can allocate at most.
    pub objects: u64,
}

/// A promoted program: the rewritten program, the types promoted, and the variables
/// that hold object numbers or flags of the promoted objects.
#[derive(Clone, Debug)]
pub struct Promotion {
    /// The rewritten program.
    pub program: Program,
    /// The promoted types.
    pub types: Vec<Promoted>,
    /// The pointer-to-field types split first ([`crate::fieldptr`]).
    pub split: Vec<crate::fieldptr::SplitType>,
    /// Variables with a small finite range in every run: the former pointers to a
    /// promoted type (`0..=objects`, or anything after `nondet()`), `S#next` and
    /// `S#i.alive` (never a field of an object). An analysis may track them explicitly
    /// from the start instead of learning one predicate per value.
    pub finite_vars: Vec<VarId>,
}

/// The program with its pointers to pointer fields split ([`crate::fieldptr`]) and
/// then every promotable struct type promoted (see the module docs); `None` when
/// neither applies.
pub fn promote(prog: &Program) -> Option<Promotion> {
    let (split_prog, split) = match crate::fieldptr::split_field_pointers(prog) {
        Some((p, types)) => (Some(p), types),
        None => (None, Vec::new()),
    };
    let prog = split_prog.as_ref().unwrap_or(prog);
    let bounds = ExecBounds::new(prog);
    let mut types: Vec<Promoted> = Vec::new();
    for (s, def) in prog.structs.iter().enumerate() {
        if let Some(objects) = promotable(prog, &bounds, s) {
            types.push(Promoted {
                strukt: s,
                name: def.name.clone(),
                objects,
            });
        }
    }
    if types.is_empty() && split.is_empty() {
        return None;
    }
    let (program, finite_vars) = if types.is_empty() {
        (prog.clone(), Vec::new())
    } else {
        rewrite(prog, &types)
    };
    Some(Promotion {
        program,
        types,
        split,
        finite_vars,
    })
}

/// Upper bounds on how often a location executes in one run (`None`: unbounded).
struct ExecBounds {
    /// Locations on a cycle of the CFA (call edges are edges of the caller).
    cyclic: Vec<bool>,
    /// Calls of each function per run.
    calls: Vec<Option<u64>>,
}

impl ExecBounds {
    fn new(prog: &Program) -> ExecBounds {
        let mut cyclic = vec![false; prog.graph.node_count()];
        for scc in petgraph::algo::tarjan_scc(&prog.graph) {
            let on_cycle = scc.len() > 1 || prog.graph.edges(scc[0]).any(|e| e.target() == scc[0]);
            if on_cycle {
                for n in scc {
                    cyclic[n.index()] = true;
                }
            }
        }
        // call sites per callee
        let mut sites: Vec<Vec<Node>> = vec![Vec::new(); prog.functions.len()];
        for e in prog.graph.edge_references() {
            if let Op::Call { callee, .. } = e.weight().op {
                if let Some(v) = sites.get_mut(callee) {
                    v.push(e.source());
                }
            }
        }
        let start = prog.graph[prog.entry].func;
        let mut calls: Vec<Option<Option<u64>>> = vec![None; prog.functions.len()];
        for f in 0..prog.functions.len() {
            let mut on_stack = vec![false; prog.functions.len()];
            calls_of(prog, &cyclic, f, start, &sites, &mut calls, &mut on_stack);
        }
        ExecBounds {
            cyclic,
            calls: calls.into_iter().map(|c| c.flatten()).collect(),
        }
    }

    /// How often `n` executes per run at most.
    fn at(&self, prog: &Program, n: Node) -> Option<u64> {
        if self.cyclic[n.index()] {
            return None;
        }
        self.calls.get(prog.graph[n].func).copied().flatten()
    }
}

/// Calls of `f` per run: the sum over its call sites of the caller's calls, or
/// `None` if a site is on a cycle or `f` is recursive.
#[allow(clippy::too_many_arguments)]
fn calls_of(
    prog: &Program,
    cyclic: &[bool],
    f: usize,
    start: usize,
    sites: &[Vec<Node>],
    memo: &mut Vec<Option<Option<u64>>>,
    on_stack: &mut Vec<bool>,
) -> Option<u64> {
    if let Some(c) = memo[f] {
        return c;
    }
    if on_stack[f] {
        return None; // recursion
    }
    on_stack[f] = true;
    let mut total: Option<u64> = Some(u64::from(f == start));
    for &site in &sites[f] {
        let caller = prog.graph[site].func;
        let c = if cyclic[site.index()] {
            None
        } else {
            calls_of(prog, cyclic, caller, start, sites, memo, on_stack)
        };
        total = match (total, c) {
            (Some(a), Some(b)) => a.checked_add(b),
            _ => None,
        };
    }
    on_stack[f] = false;
    memo[f] = Some(total);
    total
}

/// Whether `ty` mentions struct `s` other than as exactly `struct s *`.
fn mentions_deeply(ty: &Ty, s: StructId) -> bool {
    match ty {
        Ty::Ptr(inner) => match &**inner {
            Ty::Struct(_) => false,
            t => mentions(t, s),
        },
        Ty::Struct(t) => *t == s,
        _ => false,
    }
}

fn mentions(ty: &Ty, s: StructId) -> bool {
    match ty {
        Ty::Ptr(inner) => mentions(inner, s),
        Ty::Struct(t) => *t == s,
        _ => false,
    }
}

/// The number of objects of `s` a run allocates at most, if `s` can be promoted.
fn promotable(prog: &Program, bounds: &ExecBounds, s: StructId) -> Option<u64> {
    let sp = |ty: &Ty| ty.pointee_struct() == Some(s);
    let is_s = |v: &VarId| prog.vars.get(*v).is_some_and(|x| sp(&x.ty));
    if prog.vars.iter().any(|v| mentions_deeply(&v.ty, s))
        || prog
            .structs
            .iter()
            .any(|d| d.fields.iter().any(|f| mentions_deeply(&f.ty, s)))
    {
        return None;
    }
    let mut objects: u64 = 0;
    // the type has stack or static objects / the program frees a pointer to it: the
    // rewriting frees any live object, but freeing a stack object is an invalid free,
    // so a type with both stays as it is
    let (mut stack, mut freed) = (false, false);
    for e in prog.graph.edge_references() {
        let op = &e.weight().op;
        let mut exprs: Vec<&Expr> = Vec::new();
        match op {
            Op::Alloc {
                dst, pointee, kind, ..
            } => {
                let of_s = *pointee == Ty::Struct(s);
                if of_s != is_s(dst) {
                    return None;
                }
                if of_s {
                    // heap and stack objects alike (stack ones never fail; see the
                    // `free` check below)
                    stack |= matches!(kind, AllocKind::Stack);
                    objects = objects.checked_add(bounds.at(prog, e.source())?)?;
                    if objects > MAX_OBJECTS {
                        return None;
                    }
                }
            }
            Op::Assign { dst, src } => {
                if !agrees(prog, s, is_s(dst), src) {
                    return None;
                }
                exprs.push(src);
            }
            Op::Load { dst, field, .. } => {
                if is_s(dst) != sp(&prog.field(*field).ty) {
                    return None;
                }
            }
            Op::Store { field, src, .. } => {
                if !agrees(prog, s, sp(&prog.field(*field).ty), src) {
                    return None;
                }
                exprs.push(src);
            }
            Op::FieldAddr { ptr, field, .. } => {
                if is_s(ptr) || sp(&prog.field(*field).ty) {
                    return None;
                }
            }
            Op::LoadIndirect { dst, .. } => {
                if is_s(dst) {
                    return None;
                }
            }
            Op::StoreIndirect { src, .. } => {
                if !agrees(prog, s, false, src) {
                    return None;
                }
                exprs.push(src);
            }
            Op::AssumeInvalid { ptr, access } => {
                if is_s(ptr) && matches!(access, Access::Cell) {
                    return None;
                }
            }
            Op::Assume { cond } => exprs.push(cond),
            Op::Call { callee, args, ret } => {
                let f = prog.functions.get(*callee)?;
                if f.params.len() != args.len() {
                    return None;
                }
                for (p, a) in f.params.iter().zip(args) {
                    if !agrees(prog, s, is_s(p), a) {
                        return None;
                    }
                    exprs.push(a);
                }
                if let (Some(r), Some(fr)) = (ret, f.ret) {
                    if is_s(r) != is_s(&fr) {
                        return None;
                    }
                }
            }
            Op::Free { ptr } => freed |= is_s(ptr),
            Op::Skip | Op::Nondet { .. } | Op::Error | Op::Halt | Op::AssumeLeak { .. } => {}
        }
        if !exprs.iter().all(|x| well_used(prog, s, x)) {
            return None;
        }
    }
    (objects > 0 && !(stack && freed)).then_some(objects)
}

/// Whether `e` is a pointer to `s` (a variable of that type or a cast to it).
fn is_s_expr(prog: &Program, s: StructId, e: &Expr) -> bool {
    match e {
        Expr::Var(v) => prog
            .vars
            .get(*v)
            .is_some_and(|x| x.ty.pointee_struct() == Some(s)),
        Expr::Cast(ty, _) => ty.pointee_struct() == Some(s),
        _ => false,
    }
}

/// Whether `e`, stored where a pointer to `s` is expected (`want`) or not, agrees:
/// a pointer to `s` only where one is expected; NULL fits either.
fn agrees(prog: &Program, s: StructId, want: bool, e: &Expr) -> bool {
    if *e == Expr::Null {
        return true;
    }
    if is_s_expr(prog, s, e) != want {
        return false;
    }
    // `(struct s *) e` must convert a pointer to s or NULL
    match e {
        Expr::Cast(_, inner) => **inner == Expr::Null || is_s_expr(prog, s, inner),
        _ => true,
    }
}

/// Whether every use of a pointer to `s` inside `e` is one the rewriting keeps exact:
/// `==`/`!=` against another such pointer or NULL, `!p`, casts between such pointers.
fn well_used(prog: &Program, s: StructId, e: &Expr) -> bool {
    let ps = |x: &Expr| is_s_expr(prog, s, x);
    match e {
        Expr::Int(_) | Expr::Null | Expr::Var(_) => true,
        Expr::Cast(ty, inner) => {
            let (to, from) = (ty.pointee_struct() == Some(s), ps(inner));
            if to && !(from || **inner == Expr::Null) || from && !to {
                return false;
            }
            well_used(prog, s, inner)
        }
        Expr::Unary(op, inner) => (*op == UnOp::Not || !ps(inner)) && well_used(prog, s, inner),
        Expr::Binary(op, a, b) => {
            let (pa, pb) = (ps(a), ps(b));
            if pa || pb {
                let other_ok = |x: &Expr, px: bool| px || *x == Expr::Null;
                if !matches!(op, BinOp::Eq | BinOp::Ne) || !other_ok(a, pa) || !other_ok(b, pb) {
                    return false;
                }
            }
            well_used(prog, s, a) && well_used(prog, s, b)
        }
    }
}

/// The globals of one promoted type.
struct Globals {
    strukt: StructId,
    /// `S#next`: objects allocated so far.
    next: VarId,
    /// Per object (index `i - 1`): `S#i.alive` and one global per field.
    alive: Vec<VarId>,
    fields: Vec<Vec<VarId>>,
}

/// The rewriting of the module docs, and the object-number and flag variables.
fn rewrite(prog: &Program, types: &[Promoted]) -> (Program, Vec<VarId>) {
    let promoted = |ty: &Ty| {
        ty.pointee_struct()
            .is_some_and(|s| types.iter().any(|t| t.strukt == s))
    };
    let mut out = prog.clone();
    let mut finite = Vec::new();
    for (i, v) in out.vars.iter_mut().enumerate() {
        if promoted(&v.ty) {
            v.ty = Ty::INT;
            finite.push(i);
        }
    }
    for d in &mut out.structs {
        for f in &mut d.fields {
            if promoted(&f.ty) {
                f.ty = Ty::INT;
            }
        }
    }
    let globals = add_globals(&mut out, types, &mut finite);
    let of_type = |ptr: VarId| -> Option<&Globals> {
        let s = prog.vars[ptr].ty.pointee_struct()?;
        globals.iter().find(|g| g.strukt == s)
    };
    // a fresh graph with the same nodes; the edges in their old order, each rewritten
    let mut g = prog.graph.clone();
    g.clear_edges();
    out.graph = g;
    let edges: Vec<(Node, Node, Edge)> = prog
        .graph
        .edge_references()
        .map(|e| (e.source(), e.target(), e.weight().clone()))
        .collect();
    for (from, to, edge) in edges {
        let src = edge.src;
        let fix = |e: &Expr| null_to_zero(prog, e, &promoted);
        // an expression written where a promoted pointer is expected: NULL is 0
        let fix_at = |want: bool, e: &Expr| {
            if want && *e == Expr::Null {
                Expr::Int(0)
            } else {
                fix(e)
            }
        };
        let field_promoted = |f: FieldRef| promoted(&prog.field(f).ty);
        let var_promoted = |v: VarId| promoted(&prog.vars[v].ty);
        let mut b = Chain {
            prog: &mut out,
            src,
        };
        match edge.op {
            Op::Alloc { dst, kind, .. } if of_type(dst).is_some() => {
                let gl = of_type(dst).expect("checked");
                alloc_paths(&mut b, gl, (from, to), dst, kind, prog.malloc_never_fails);
            }
            Op::Load { dst, ptr, field } if of_type(ptr).is_some() => {
                let gl = of_type(ptr).expect("checked");
                b.per_live_object(from, to, ptr, &gl.alive, |k| {
                    assign(dst, Expr::Var(gl.fields[k][field.field]))
                });
            }
            Op::Store {
                ptr,
                field,
                ref src,
            } if of_type(ptr).is_some() => {
                let gl = of_type(ptr).expect("checked");
                let src = fix_at(field_promoted(field), src);
                b.per_live_object(from, to, ptr, &gl.alive, |k| {
                    assign(gl.fields[k][field.field], src.clone())
                });
            }
            Op::Free { ptr } if of_type(ptr).is_some() => {
                let gl = of_type(ptr).expect("checked");
                b.path(
                    from,
                    to,
                    vec![assume(BinOp::Eq, Expr::Var(ptr), Expr::Int(0))],
                );
                b.per_live_object(from, to, ptr, &gl.alive, |k| {
                    assign(gl.alive[k], Expr::Int(0))
                });
            }
            Op::AssumeInvalid { ptr, .. } if of_type(ptr).is_some() => {
                let gl = of_type(ptr).expect("checked");
                invalid_paths(&mut b, gl, (from, to), ptr);
            }
            op => {
                let op = match op {
                    Op::Assign { dst, src } => Op::Assign {
                        dst,
                        src: fix_at(var_promoted(dst), &src),
                    },
                    Op::Store { ptr, field, src } => Op::Store {
                        ptr,
                        field,
                        src: fix_at(field_promoted(field), &src),
                    },
                    Op::StoreIndirect { ptr, src } => Op::StoreIndirect {
                        ptr,
                        src: fix(&src),
                    },
                    Op::Assume { cond } => Op::Assume { cond: fix(&cond) },
                    Op::Call { callee, args, ret } => {
                        let params = &prog.functions[callee].params;
                        Op::Call {
                            callee,
                            args: args
                                .iter()
                                .zip(params)
                                .map(|(a, &p)| fix_at(var_promoted(p), a))
                                .collect(),
                            ret,
                        }
                    }
                    op => op,
                };
                b.prog.add_edge(from, to, op, src);
            }
        }
    }
    init_globals(&mut out, prog, &globals);
    (out, finite)
}

/// The globals of each promoted type (`S#next`, `S#i.alive`, `S#i.f`), added to `out`;
/// the object numbers and alive flags are appended to `finite`.
fn add_globals(out: &mut Program, types: &[Promoted], finite: &mut Vec<VarId>) -> Vec<Globals> {
    let mut globals = Vec::new();
    for t in types {
        let short = t
            .name
            .strip_prefix("struct ")
            .unwrap_or(&t.name)
            .to_string();
        let next = out.add_var(format!("{short}#next"), Ty::INT, Scope::Global);
        let mut alive = Vec::new();
        let mut fields = Vec::new();
        for i in 1..=t.objects {
            alive.push(out.add_var(format!("{short}#{i}.alive"), Ty::INT, Scope::Global));
            let fs = out.structs[t.strukt]
                .fields
                .clone()
                .into_iter()
                .map(|f| out.add_var(format!("{short}#{i}.{}", f.name), f.ty, Scope::Global))
                .collect();
            fields.push(fs);
        }
        finite.push(next);
        finite.extend(alive.iter().copied());
        globals.push(Globals {
            strukt: t.strukt,
            next,
            alive,
            fields,
        });
    }
    globals
}

/// An allocation of a promoted type (`gl`) from `from` to `to`: one path per object
/// number `i` (taken when `S#next == i - 1`), which makes object `i` alive with
/// indeterminate (or, for `calloc`, zero) fields and assigns `i` to `dst`; a heap
/// allocation that may fail also has the path `dst = 0`.
fn alloc_paths(
    b: &mut Chain<'_>,
    gl: &Globals,
    (from, to): (Node, Node),
    dst: VarId,
    kind: AllocKind,
    malloc_never_fails: bool,
) {
    // a stack or static object never fails; its fields start indeterminate
    // (a static one's initialiser follows as ordinary stores)
    let (may_fail, zeroed) = match kind {
        AllocKind::Heap { zeroed } => (!malloc_never_fails, zeroed),
        AllocKind::Stack => (false, false),
    };
    if may_fail {
        b.path(from, to, vec![assign(dst, Expr::Int(0))]);
    }
    for (k, (alive, fields)) in gl.alive.iter().zip(&gl.fields).enumerate() {
        let i = k as i64 + 1;
        let mut ops = vec![
            assume(BinOp::Eq, Expr::Var(gl.next), Expr::Int(i - 1)),
            assign(gl.next, Expr::Int(i)),
            assign(*alive, Expr::Int(1)),
        ];
        for &f in fields {
            ops.push(if zeroed {
                let zero = if b.prog.vars[f].ty.is_ptr() {
                    Expr::Null
                } else {
                    Expr::Int(0)
                };
                assign(f, zero)
            } else {
                Op::Nondet { dst: f }
            });
        }
        ops.push(assign(dst, Expr::Int(i)));
        b.path(from, to, ops);
    }
}

/// `assume_invalid(ptr)` for a pointer of a promoted type (`gl`), from `from` to `to`.
fn invalid_paths(b: &mut Chain<'_>, gl: &Globals, (from, to): (Node, Node), ptr: VarId) {
    // p != 0, and for every object: p is not it, or it is dead
    let mut at = b.step(from, None, assume(BinOp::Ne, Expr::Var(ptr), Expr::Int(0)));
    for (k, alive) in gl.alive.iter().enumerate() {
        let last = k + 1 == gl.alive.len();
        let next = if last { to } else { b.node(from) };
        let i = Expr::Int(k as i64 + 1);
        b.step(at, Some(next), assume(BinOp::Ne, Expr::Var(ptr), i.clone()));
        b.path(
            at,
            next,
            vec![
                assume(BinOp::Eq, Expr::Var(ptr), i),
                assume(BinOp::Eq, Expr::Var(*alive), Expr::Int(0)),
            ],
        );
        at = next;
    }
}

/// A new entry of the start function that assigns 0 to every `S#next` and `S#i.alive`.
fn init_globals(out: &mut Program, prog: &Program, globals: &[Globals]) {
    // the globals start dead and unallocated (before the start function's first edge)
    let start = prog.graph[prog.entry].func;
    let first = out.add_loc(start, SrcLoc::default(), LocKind::FuncEntry);
    let mut init = Vec::new();
    for gl in globals {
        init.push(assign(gl.next, Expr::Int(0)));
        for &a in &gl.alive {
            init.push(assign(a, Expr::Int(0)));
        }
    }
    out.graph[prog.entry].kind = LocKind::Normal;
    let mut b = Chain {
        prog: &mut *out,
        src: SrcLoc::default(),
    };
    b.path(first, prog.entry, init);
    out.entry = first;
    out.functions[start].entry = first;
}

/// `e` with NULL replaced by 0 where it stands for a promoted pointer: compared with
/// one, or cast to one. (A NULL assigned, stored or passed where a promoted pointer is
/// expected is replaced too: those positions have the pointer's type.)
fn null_to_zero(prog: &Program, e: &Expr, promoted: &impl Fn(&Ty) -> bool) -> Expr {
    let is_p = |x: &Expr| match x {
        Expr::Var(v) => promoted(&prog.vars[*v].ty),
        Expr::Cast(ty, _) => promoted(ty),
        _ => false,
    };
    match e {
        Expr::Int(_) | Expr::Null | Expr::Var(_) => e.clone(),
        Expr::Cast(ty, inner) if promoted(ty) => match &**inner {
            Expr::Null => Expr::Int(0),
            x => null_to_zero(prog, x, promoted),
        },
        Expr::Cast(ty, inner) => {
            Expr::Cast(ty.clone(), Box::new(null_to_zero(prog, inner, promoted)))
        }
        Expr::Unary(op, inner) => Expr::Unary(*op, Box::new(null_to_zero(prog, inner, promoted))),
        Expr::Binary(op, a, b) => {
            let (pa, pb) = (is_p(a), is_p(b));
            let side = |x: &Expr, other_p: bool| {
                if other_p && *x == Expr::Null {
                    Expr::Int(0)
                } else {
                    null_to_zero(prog, x, promoted)
                }
            };
            Expr::bin(*op, side(a, pb), side(b, pa))
        }
    }
}

/// Promotion's own chain: accesses through a pointer to each live object.
trait PerLiveObject {
    fn per_live_object(
        &mut self,
        from: Node,
        to: Node,
        ptr: VarId,
        alive: &[VarId],
        op: impl Fn(usize) -> Op,
    );
}

impl PerLiveObject for Chain<'_> {
    /// For each object `i` (`alive[i - 1]`): the path `assume(ptr == i);
    /// assume(S#i.alive != 0); op(i - 1)` from `from` to `to` (an access through `ptr`
    /// to a live object; a dead or other value has no successor here, the UB checks
    /// beside take it).
    fn per_live_object(
        &mut self,
        from: Node,
        to: Node,
        ptr: VarId,
        alive: &[VarId],
        op: impl Fn(usize) -> Op,
    ) {
        for (k, &a) in alive.iter().enumerate() {
            let ops = vec![
                assume(BinOp::Eq, Expr::Var(ptr), Expr::Int(k as i64 + 1)),
                assume(BinOp::Ne, Expr::Var(a), Expr::Int(0)),
                op(k),
            ];
            self.path(from, to, ops);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::Path;

    /// A seed task of the shared benchmarks (`seeds/name`), parsed, with the
    /// undefined-behaviour checks; None, with `test` recorded as skipped, when absent.
    pub(crate) fn load(test: &str, name: &str) -> Option<Program> {
        let f = crate::testutil::shared_bench_path(test, &format!("seeds/{name}"))?;
        let mut p = crate::frontend::parse_file(&f, &Default::default()).expect("parses");
        p.add_undefined_behaviour_checks();
        Some(p)
    }

    #[test]
    fn two_queue_descriptors_become_globals() {
        let Some(prog) = load(
            "promote::tests::two_queue_descriptors_become_globals",
            "two_queues.c",
        ) else {
            return;
        };
        let Promotion {
            program: out,
            types,
            finite_vars,
            ..
        } = promote(&prog).expect("struct queue is promotable");
        assert_eq!(types.len(), 1);
        assert_eq!((types[0].name.as_str(), types[0].objects), ("queue", 2));
        // no operation of the result touches a queue object
        let q = types[0].strukt;
        for e in out.graph.edge_weights() {
            match &e.op {
                Op::Load { field, .. } | Op::Store { field, .. } => assert_ne!(field.strukt, q),
                Op::Alloc { pointee, .. } => assert_ne!(*pointee, Ty::Struct(q)),
                _ => {}
            }
        }
        for g in ["queue#1.head", "queue#2.len", "queue#1.alive", "queue#next"] {
            assert!(out.vars.iter().any(|v| v.name == g), "{g}");
        }
        // the owner field now holds an object number
        let owner = out
            .structs
            .iter()
            .flat_map(|s| &s.fields)
            .find(|f| f.name == "owner")
            .unwrap();
        assert_eq!(owner.ty, Ty::INT);
        // the object numbers and flags: q1, q2, every former `struct queue *` local and
        // parameter, queue#next, queue#1.alive, queue#2.alive
        let names: Vec<&str> = finite_vars
            .iter()
            .map(|&v| out.vars[v].name.as_str())
            .collect();
        for v in ["main::q1", "put::q", "queue#next", "queue#2.alive"] {
            assert!(names.contains(&v), "{v} in {names:?}");
        }
        assert!(!names
            .iter()
            .any(|n| n.ends_with(".head") || n.ends_with("::n")));
    }

    #[test]
    fn hlist_heads_are_promoted_once_pprev_is_split() {
        // `&h->first` and `&n->next` are taken as `struct node **`: after the split
        // (`pprev@head.first`, `pprev@node.next`) no field address is left, so the two
        // heads are promoted; struct node is allocated in a loop and stays
        let Some(prog) = load(
            "promote::tests::hlist_heads_are_promoted_once_pprev_is_split",
            "hlist_del.c",
        ) else {
            return;
        };
        let p = promote(&prog).expect("pprev is split");
        assert_eq!(p.split.len(), 1);
        assert_eq!(p.types.len(), 1);
        assert_eq!((p.types[0].name.as_str(), p.types[0].objects), ("head", 2));
        let node = p.program.structs.iter().find(|s| s.name == "node").unwrap();
        let f = node
            .fields
            .iter()
            .find(|f| f.name == "pprev@head.first")
            .unwrap();
        assert_eq!(f.ty, Ty::INT, "a pointer to a head is an object number");
    }

    #[test]
    fn a_head_struct_on_the_stack_becomes_globals() {
        let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real_c/slist_head_safe.c");
        let mut prog = crate::frontend::parse_file(&f, &Default::default()).expect("parses");
        prog.add_undefined_behaviour_checks();
        let p = promote(&prog).expect("the stack head is promotable");
        assert_eq!(p.types.len(), 1);
        assert_eq!(
            (p.types[0].name.as_str(), p.types[0].objects),
            ("slisthead", 1)
        );
        // no stack allocation of it is left, and its pointer field is a global now
        let h = p.types[0].strukt;
        assert!(!p
            .program
            .graph
            .edge_weights()
            .any(|e| matches!(&e.op, Op::Alloc { pointee, .. } if *pointee == Ty::Struct(h))));
        let first = p
            .program
            .vars
            .iter()
            .find(|v| v.name == "slisthead#1.slh_first");
        assert!(first.is_some_and(|v| v.ty.is_ptr()));
    }

    #[test]
    fn a_type_with_a_stack_object_and_a_free_stays() {
        // freeing `&s` is an invalid free the rewriting would turn into a valid one
        let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cegar/free_stack_bug.c");
        let mut prog = crate::frontend::parse_file(&f, &Default::default()).expect("parses");
        prog.add_undefined_behaviour_checks();
        assert!(promote(&prog).is_none());
    }

    #[test]
    fn a_type_allocated_in_a_loop_stays() {
        let Some(prog) = load(
            "promote::tests::a_type_allocated_in_a_loop_stays",
            "dll_concat.c",
        ) else {
            return;
        };
        assert!(promote(&prog).is_none());
    }
}
