//! CFA operations on shape states: each [`Op`] / [`Step`] becomes a sequence of
//! `tvla::PtrOp`s per component, plus the bookkeeping of wild variables/fields,
//! uninitialised fields and integer provenance (see the module documentation of
//! [`super`]).

use super::{numeric, tracked_fields, tracked_vars, ShapeComp, ShapeCpa, ShapeState};
use crate::affine::Affine;
use crate::cfa::{
    Access, AllocKind, BinOp, Expr, FieldRef, Op, Program, Step, StructId, Ty, UnOp, VarId,
};
use crate::tvla::{post, Kleene, PredSym, PtrOp, ShapeClass, ShapeRegion, Structure};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A name no program variable has: an unknown pointer for `tvla::post`.
mod values;
pub(in crate::shape) use values::split_field_value;

const UNKNOWN: &str = "$unknown";

/// The successor of `s` along `step` (None: bottom), in the classes of `s`. `stored`:
/// what another domain knows of the integer a `Store` writes and of the variables an `Assume` compares (strengthening;
/// see [`super::Known`]).
pub(super) fn post_step(
    cpa: &ShapeCpa,
    prog: &Program,
    s: &ShapeState,
    step: Step,
    stored: &super::Known,
) -> Option<ShapeState> {
    let mut t = s.clone();
    let edge = match step {
        Step::Edge(e) | Step::Enter(e) | Step::Leave(e) => prog.graph.edge_weight(e)?,
    };
    match step {
        Step::Edge(e) => match &edge.op {
            Op::AssumeLeak { check, of } => {
                let from = prog.graph.edge_endpoints(e).map(|(a, _)| a);
                let func = from.map(|a| prog.graph[a].func);
                let at_exit = from.is_some_and(|a| {
                    func.and_then(|f| prog.functions.get(f))
                        .is_some_and(|f| f.exit == a)
                });
                // stack objects are roots in their frame (globals: always)
                let roots: BTreeSet<String> = cpa
                    .stack_vars
                    .iter()
                    .filter(|(_, f)| f.is_none() || (!at_exit && **f == func))
                    .map(|(x, _)| x.clone())
                    .collect();
                super::stack::assume_no_leak(cpa, &mut t, *check, *of, &roots);
            }
            op => apply(cpa, prog, &mut t, op, stored),
        },
        Step::Enter(_) => {
            let Op::Call { callee, args, .. } = &edge.op else {
                return Some(t);
            };
            let f = prog.functions.get(*callee)?;
            for (p, a) in f.params.iter().zip(args) {
                assign(prog, &mut t, *p, a);
            }
        }
        Step::Leave(_) => {
            let Op::Call { callee, ret, .. } = &edge.op else {
                return Some(t);
            };
            let f = prog.functions.get(*callee)?;
            if let (Some(r), Some(rv)) = (ret, f.ret) {
                assign(prog, &mut t, *r, &Expr::Var(rv));
            }
            // the callee's variables are dead: nullify them (locals are written before
            // they are read in every activation: the front end adds `Nondet` edges)
            for v in f.params.iter().chain(&f.locals).chain(f.ret.iter()) {
                if Some(*v) != *ret && !cpa.stack_vars.contains_key(var_name(prog, *v)) {
                    assign(prog, &mut t, *v, &Expr::Null);
                }
            }
        }
    }
    (!t.is_bottom()).then_some(t)
}

fn var_name(prog: &Program, v: VarId) -> &str {
    prog.vars.get(v).map_or(UNKNOWN, |x| x.name.as_str())
}

fn is_tracked(c: &ShapeComp, x: &str) -> bool {
    c.region
        .class
        .core
        .iter()
        .any(|p| p.sym.name == "pt" && p.sym.params.len() == 1 && p.sym.params[0] == x)
}

fn field_tracked(c: &ShapeComp, f: &str) -> bool {
    c.region
        .class
        .core
        .iter()
        .any(|p| p.arity == 2 && p.def.is_none() && p.sym.name == f)
}

/// The per-cell "may be uninitialised" predicate of field `f` (see
/// [`super::with_uninit_preds`]), if the class has it.
fn un_pred(c: &ShapeComp, f: &str) -> Option<PredSym> {
    let sym = PredSym::with("un", &[f]);
    c.region
        .class
        .core
        .iter()
        .any(|p| p.arity == 1 && p.sym == sym)
        .then_some(sym)
}

/// True if field `f` of a cell `x` may point to may be uninitialised (per cell, by
/// `un[f]`; classes without it use [`ShapeComp::uninit`]).
fn may_be_uninit(c: &ShapeComp, x: &str, f: &str) -> bool {
    let Some(un) = un_pred(c, f) else {
        return false;
    };
    let px = PredSym::with("pt", &[x]);
    c.region.structures().any(|st| {
        (0..st.len())
            .any(|u| st.value(&px, &[u]) != Kleene::False && st.value(&un, &[u]) != Kleene::False)
    })
}

/// Tracked and not wild: its points-to predicate is exact.
pub(super) fn exact(c: &ShapeComp, x: &str) -> bool {
    is_tracked(c, x) && !c.wild_vars.contains(x)
}

/// Applies a `tvla::post` to every structure of the component (counts follow the
/// provenance of the nodes).
fn run(c: &mut ShapeComp, op: &PtrOp) {
    remake(c, |s, class| {
        let r = post(s, class, op);
        for e in &r.errors {
            tracing::debug!("shape: {op:?}: {e:?} (path stops there)");
        }
        r.structures
    });
}

/// Replaces each structure `s` of the component by `f(s)`, whose results carry
/// provenance relative to `s` (`tvla::post`, or structure edits on
/// `s.with_identity_origins()` ending in a blur); the counts follow.
fn remake(c: &mut ShapeComp, f: impl Fn(&Structure, &ShapeClass) -> Vec<Structure>) {
    let class = c.region.class.clone();
    let nv = class.counters.len();
    let mut out = ShapeRegion::empty(class.clone());
    for (s, a) in c.region.entries() {
        let base = if nv > 0 {
            s.with_identity_origins()
        } else {
            s.clone()
        };
        for t in f(&base, &class) {
            let counts = a.map(|a| crate::tvla::counts::after_post(a, nv, s.len(), &t));
            out.insert_counted(t, counts);
        }
    }
    c.region = out;
}

/// Replaces the counts of every structure by `f(structure, counts)`; `None` drops
/// the structure. Without counters nothing changes.
fn recount(c: &mut ShapeComp, f: impl Fn(&Structure, &Affine) -> Option<Affine>) {
    if c.region.class.counters.is_empty() {
        return;
    }
    let nv = c.region.class.counters.len();
    let mut out = ShapeRegion::empty(c.region.class.clone());
    for (s, a) in c.region.entries() {
        let a = a.cloned().unwrap_or_else(|| Affine::top(nv + s.len()));
        if let Some(b) = f(s, &a) {
            out.insert_counted(s.clone(), Some(b));
        }
    }
    c.region = out;
}

/// The number of cells of `strukt` that can be live at once (ILP32: distinct objects
/// in a 32-bit address space).
fn cell_bound(prog: &Program, strukt: StructId) -> i128 {
    let size = prog.structs.get(strukt).map_or(1, |d| d.size.max(1)) as i128;
    (1i128 << 32) / size
}

/// `dst := src` (`None`: unknown) for every component counting `dst`.
fn write_counter(prog: &Program, s: &mut ShapeState, dst: VarId, src: Option<&Expr>) {
    let name = var_name(prog, dst).to_string();
    for (k, c) in s.comps.iter_mut() {
        let Some(i) = c.region.class.counters.iter().position(|x| *x == name) else {
            continue;
        };
        let counters = c.region.class.counters.clone();
        let nv = counters.len();
        let cells = cell_bound(prog, *k);
        let form = src
            .filter(|_| numeric::counter_type(prog, dst))
            .and_then(|e| numeric::linear(prog, e, &counters));
        recount(c, |st, a| {
            Some(match &form {
                Some(e) if !numeric::may_overflow(a, nv, st, cells, e) => {
                    let mut coeffs = e.0.clone();
                    coeffs.resize(a.dims(), 0);
                    a.assign(i, &coeffs, e.1)
                }
                _ => a.havoc(i),
            })
        });
    }
}

/// `assume(l rel r)` on the counters of every component whose counters express both
/// sides: drops the structures whose counts rule it out, and adds `l = r` to the
/// counts of the others.
fn assume_counters(prog: &Program, s: &mut ShapeState, rel: BinOp, l: &Expr, r: &Expr) {
    for (k, c) in s.comps.iter_mut() {
        let counters = c.region.class.counters.clone();
        if counters.is_empty() {
            continue;
        }
        let (Some(fl), Some(fr)) = (
            numeric::linear(prog, l, &counters),
            numeric::linear(prog, r, &counters),
        ) else {
            continue;
        };
        let nv = counters.len();
        let cells = cell_bound(prog, *k);
        let diff: numeric::Linear = (
            fl.0.iter().zip(&fr.0).map(|(a, b)| a - b).collect(),
            fl.1 - fr.1,
        );
        let plain = |e: &Expr| matches!(e, Expr::Var(_) | Expr::Int(_));
        recount(c, |st, a| {
            // a side computed with possible overflow: the comparison tells nothing
            if (!plain(l) && numeric::may_overflow(a, nv, st, cells, &fl))
                || (!plain(r) && numeric::may_overflow(a, nv, st, cells, &fr))
            {
                return Some(a.clone());
            }
            let cond = numeric::Constraint {
                form: diff.clone(),
                rel,
            };
            if !numeric::satisfiable(a, nv, st, cells, &[vec![cond]]) {
                return None;
            }
            let mut b = a.clone();
            if rel == BinOp::Eq {
                let mut coeffs = diff.0.clone();
                coeffs.resize(b.dims(), 0);
                b.add_eq(&coeffs, -diff.1);
            }
            Some(b)
        });
    }
}

/// Before `x` gets a new value: uninitialised fields of x's cell can no longer be
/// followed through x, so they become wild.
fn release(c: &mut ShapeComp, x: &str) {
    let gone: Vec<(String, String)> = c.uninit.iter().filter(|(v, _)| v == x).cloned().collect();
    for e in gone {
        c.wild_fields.insert(e.1.clone());
        c.uninit.remove(&e);
    }
}

/// `x := unknown` (x tracked): any node or NULL or an outside value.
fn havoc_var(c: &mut ShapeComp, x: &str) {
    release(c, x);
    run(
        c,
        &PtrOp::Copy {
            x: x.into(),
            y: UNKNOWN.into(),
        },
    );
    c.wild_vars.insert(x.into());
}

/// `x := NULL` (x tracked).
fn null_var(c: &mut ShapeComp, x: &str) {
    release(c, x);
    run(c, &PtrOp::AssignNull { x: x.into() });
    c.wild_vars.remove(x);
}

/// Drops the provenance facts that mention `v`.
fn forget_var(s: &mut ShapeState, v: VarId) {
    s.loaded.remove(&v);
    s.loaded.retain(|_, (p, _)| *p != v);
}

/// The pointer variable an expression denotes (through casts), or NULL.
enum PtrVal {
    Null,
    Var(VarId),
    Other,
}

fn ptr_val(prog: &Program, e: &Expr) -> PtrVal {
    match e {
        Expr::Null | Expr::Int(0) => PtrVal::Null,
        Expr::Var(v) if prog.vars.get(*v).is_some_and(|x| x.ty.is_ptr()) => PtrVal::Var(*v),
        Expr::Cast(t, e) if t.is_ptr() => ptr_val(prog, e),
        _ => PtrVal::Other,
    }
}

/// `dst = src` (also parameter passing and return values).
fn assign(prog: &Program, s: &mut ShapeState, dst: VarId, src: &Expr) {
    write_counter(prog, s, dst, Some(src));
    let copied = match src {
        Expr::Var(y) => s.loaded.get(y).copied(),
        _ => None,
    };
    forget_var(s, dst);
    if let Some(pf) = copied {
        if prog.vars.get(dst).is_some_and(|v| v.ty.is_int()) {
            s.loaded.insert(dst, pf);
        }
    }
    let x = var_name(prog, dst).to_string();
    let pv = ptr_val(prog, src);
    for c in s.comps.values_mut() {
        if !is_tracked(c, &x) {
            continue;
        }
        match pv {
            PtrVal::Null => null_var(c, &x),
            PtrVal::Var(y) => {
                let yn = var_name(prog, y);
                if yn == x {
                    continue;
                }
                if is_tracked(c, yn) {
                    release(c, &x);
                    run(
                        c,
                        &PtrOp::Copy {
                            x: x.clone(),
                            y: yn.into(),
                        },
                    );
                    if c.wild_vars.contains(yn) {
                        c.wild_vars.insert(x.clone());
                    } else {
                        c.wild_vars.remove(&x);
                    }
                } else {
                    havoc_var(c, &x);
                }
            }
            PtrVal::Other => havoc_var(c, &x),
        }
    }
}

/// Value sets of an integer: an interval or all but one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum VSet {
    Range(i128, i128),
    Not(i128),
}

fn vset(rel: BinOp, c: i128) -> Option<VSet> {
    const MIN: i128 = i64::MIN as i128;
    const MAX: i128 = i64::MAX as i128;
    Some(match rel {
        BinOp::Eq => VSet::Range(c, c),
        BinOp::Ne => VSet::Not(c),
        BinOp::Lt => VSet::Range(MIN, c - 1),
        BinOp::Le => VSet::Range(MIN, c),
        BinOp::Gt => VSet::Range(c + 1, MAX),
        BinOp::Ge => VSet::Range(c, MAX),
        _ => return None,
    })
}

/// Whether every value of `s` is in `a` (1), none is (0), or neither (1/2).
fn implies(s: VSet, a: VSet) -> Kleene {
    use VSet::*;
    match (s, a) {
        (Range(l, h), Range(al, ah)) => {
            if l > h || (al <= l && h <= ah) {
                Kleene::True
            } else if h < al || ah < l {
                Kleene::False
            } else {
                Kleene::Half
            }
        }
        (Range(l, h), Not(c)) => {
            if c < l || c > h {
                Kleene::True
            } else if l == h {
                Kleene::False
            } else {
                Kleene::Half
            }
        }
        (Not(c), Range(al, ah)) => {
            if al == c && ah == c {
                Kleene::False
            } else {
                Kleene::Half
            }
        }
        (Not(c), Not(d)) => {
            if c == d {
                Kleene::True
            } else {
                Kleene::Half
            }
        }
    }
}

fn parse_rel(s: &str) -> Option<BinOp> {
    Some(match s {
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        _ => return None,
    })
}

/// A field assertion `field rel constant` (`NULL` is 0); `None` if not of that form.
fn parse_assertion(a: &str) -> Option<(String, VSet)> {
    let toks: Vec<&str> = a.split_whitespace().collect();
    let [f, r, k] = toks.as_slice() else {
        return None;
    };
    let k: i128 = if *k == "NULL" { 0 } else { k.parse().ok()? };
    Some((f.to_string(), vset(parse_rel(r)?, k)?))
}

/// [`parse_assertion`] for HeapToShape.
pub(super) fn parse_assertion_pub(a: &str) -> Option<(String, VSet)> {
    parse_assertion(a)
}

/// Whether the value `k` satisfies the assertion set.
pub(super) fn holds(k: i128, a: VSet) -> Kleene {
    implies(VSet::Range(k, k), a)
}

/// Whether an unknown non-zero value (a valid pointer) satisfies the assertion set.
pub(super) fn holds_nonzero(a: VSet) -> Kleene {
    implies(VSet::Not(0), a)
}

/// The `fd[...]` assertions of a class: (assertion text, parsed form).
fn assertions(class: &ShapeClass) -> Vec<(String, Option<(String, VSet)>)> {
    class
        .core
        .iter()
        .filter(|p| p.sym.name == "fd" && p.sym.params.len() == 1)
        .map(|p| (p.sym.params[0].clone(), parse_assertion(&p.sym.params[0])))
        .collect()
}

/// Updates the field predicates about `field` after `ptr->field = <a value in every
/// set of vals>` (`vals` empty: unknown value). An assertion is definite when one of
/// the sets decides it.
fn set_fields(c: &mut ShapeComp, ptr: &str, field: &str, vals: &[VSet]) {
    let x = if exact(c, ptr) { ptr } else { UNKNOWN };
    for (a, parsed) in assertions(&c.region.class) {
        let value = match &parsed {
            Some((f, _)) if f != field => continue,
            Some((_, set)) => vals
                .iter()
                .map(|v| implies(*v, *set))
                .find(|k| *k != Kleene::Half)
                .unwrap_or(Kleene::Half),
            None => Kleene::Half,
        };
        run(
            c,
            &PtrOp::SetField {
                x: x.into(),
                assertion: a,
                value,
            },
        );
    }
}

/// Keeps only the structures where `x` (tracked, exact) is not NULL: a dereference.
fn deref(c: &mut ShapeComp, x: &str) {
    if exact(c, x) {
        run(c, &PtrOp::AssumeNotNull { x: x.into() });
    }
}

/// May `x` and `y` point to the same node in some structure?
fn may_alias(c: &ShapeComp, x: &str, y: &str) -> bool {
    if x == y {
        return true;
    }
    if c.wild_vars.contains(x) || c.wild_vars.contains(y) {
        return true;
    }
    let (xs, ys) = (PredSym::with("pt", &[x]), PredSym::with("pt", &[y]));
    c.region.structures().any(|s| {
        (0..s.len())
            .any(|v| s.value(&xs, &[v]) != Kleene::False && s.value(&ys, &[v]) != Kleene::False)
    })
}

fn field_name(prog: &Program, f: FieldRef) -> Option<&str> {
    prog.structs
        .get(f.strukt)?
        .fields
        .get(f.field)
        .map(|d| d.name.as_str())
}

fn field_ty(prog: &Program, f: FieldRef) -> Option<&Ty> {
    prog.structs
        .get(f.strukt)?
        .fields
        .get(f.field)
        .map(|d| &d.ty)
}

/// Applies one intraprocedural operation.
fn apply(cpa: &ShapeCpa, prog: &Program, s: &mut ShapeState, op: &Op, stored: &super::Known) {
    match op {
        // handled by `post_step` (it needs the edge's source)
        Op::AssumeLeak { .. } => {}
        Op::Skip | Op::Error | Op::Halt | Op::FieldAddr { .. } => {
            if let Op::FieldAddr { dst, .. } = op {
                forget_var(s, *dst);
                havoc_all_named(prog, s, *dst);
            }
        }
        Op::Assign { dst, src } => assign(prog, s, *dst, src),
        Op::AssumeInvalid { ptr, access } => match access {
            Access::Struct(strukt) => assume_invalid(prog, s, *ptr, *strukt),
            // a scalar cell or field: not tracked here
            Access::Cell => {}
            Access::Free => {
                let pointee = prog.vars.get(*ptr).and_then(|v| v.ty.pointee_struct());
                if let Some(k) = pointee.filter(|k| {
                    !cpa.stack_structs.contains(k)
                        || super::stack::frees_no_stack_node(cpa, prog, s, *ptr, *k)
                }) {
                    assume_invalid(prog, s, *ptr, k);
                }
            }
        },
        Op::Nondet { dst } => {
            // a nondeterministic pointer is NULL or garbage (pointing to no object, as
            // in `interp`): NULL in the structure, wild
            forget_var(s, *dst);
            write_counter(prog, s, *dst, None);
            let x = var_name(prog, *dst).to_string();
            for c in s.comps.values_mut() {
                if is_tracked(c, &x) {
                    null_var(c, &x);
                    c.wild_vars.insert(x.clone());
                }
            }
        }
        Op::LoadIndirect { dst, .. } => {
            forget_var(s, *dst);
            write_counter(prog, s, *dst, None);
            havoc_all_named(prog, s, *dst);
        }
        Op::Load { dst, ptr, field } => load(prog, s, *dst, *ptr, *field),
        Op::Store { ptr, field, src } => store(prog, s, *ptr, *field, src, stored),
        Op::StoreIndirect { src, .. } => store_indirect(cpa, prog, s, src),
        Op::Alloc {
            dst, pointee, kind, ..
        } => alloc(prog, s, *dst, pointee, *kind),
        Op::Free { ptr } => free(prog, s, *ptr),
        Op::Assume { cond } => assume(prog, s, cond, &stored.ints),
        Op::Call { ret, .. } => {
            // a call as a plain edge (not expected): the callee may do anything
            tracing::warn!("shape: call edge taken as a plain step; state set to top");
            if let Some(r) = ret {
                forget_var(s, *r);
            }
            s.loaded.clear();
            for c in s.comps.values_mut() {
                *c = ShapeComp::top(c.region.class.clone());
            }
        }
    }
}

/// `x := unknown` in every component tracking x.
fn havoc_all_named(prog: &Program, s: &mut ShapeState, x: VarId) {
    let name = var_name(prog, x).to_string();
    for c in s.comps.values_mut() {
        if is_tracked(c, &name) {
            havoc_var(c, &name);
        }
    }
}

fn load(prog: &Program, s: &mut ShapeState, dst: VarId, ptr: VarId, field: FieldRef) {
    write_counter(prog, s, dst, None);
    forget_var(s, dst);
    let (x, y) = (
        var_name(prog, dst).to_string(),
        var_name(prog, ptr).to_string(),
    );
    let fname = field_name(prog, field).unwrap_or(UNKNOWN).to_string();
    let target = field_ty(prog, field).and_then(|t| t.pointee_struct());
    for (k, c) in s.comps.iter_mut() {
        let here = *k == field.strukt;
        if !is_tracked(c, &x) {
            if here {
                deref(c, &y);
            }
            continue;
        }
        if here && target == Some(*k) && exact(c, &y) && field_tracked(c, &fname) {
            let wild = c.wild_fields.contains(&fname)
                || may_be_uninit(c, &y, &fname)
                || c.uninit
                    .iter()
                    .any(|(v, f)| *f == fname && may_alias(c, v, &y));
            release(c, &x);
            run(
                c,
                &PtrOp::Load {
                    x: x.clone(),
                    y: y.clone(),
                    field: fname.clone(),
                },
            );
            if wild {
                c.wild_vars.insert(x.clone());
            } else {
                c.wild_vars.remove(&x);
            }
        } else {
            if here {
                deref(c, &y);
            }
            havoc_var(c, &x);
        }
    }
    if prog.vars.get(dst).is_some_and(|v| v.ty.is_int()) && dst != ptr {
        s.loaded.insert(dst, (ptr, field));
    }
}

/// `ptr->field = src`; `stored`: what another domain knows of the integer `src`.
fn store(
    prog: &Program,
    s: &mut ShapeState,
    ptr: VarId,
    field: FieldRef,
    src: &Expr,
    stored: &super::Known,
) {
    s.loaded.retain(|_, (_, f)| *f != field);
    let x = var_name(prog, ptr).to_string();
    let fname = field_name(prog, field).unwrap_or(UNKNOWN).to_string();
    let pv = ptr_val(prog, src);
    let ival: Vec<VSet> = match src {
        Expr::Int(k) => vec![VSet::Range(*k as i128, *k as i128)],
        Expr::Null => vec![VSet::Range(0, 0)],
        Expr::Cast(t, e) if t.is_ptr() && matches!(**e, Expr::Null | Expr::Int(0)) => {
            vec![VSet::Range(0, 0)]
        }
        _ => stored
            .stored
            .iter()
            .filter_map(|&(rel, k)| vset(rel, k as i128))
            .collect(),
    };
    let Some(c) = s.comps.get_mut(&field.strukt) else {
        return;
    };
    deref(c, &x);
    if field_tracked(c, &fname) {
        let xx = if exact(c, &x) {
            x.clone()
        } else {
            UNKNOWN.into()
        };
        match pv {
            PtrVal::Null => run(
                c,
                &PtrOp::StoreNull {
                    x: xx,
                    field: fname.clone(),
                },
            ),
            PtrVal::Var(y) if exact(c, var_name(prog, y)) => run(
                c,
                &PtrOp::Store {
                    x: xx,
                    field: fname.clone(),
                    y: var_name(prog, y).into(),
                },
            ),
            _ => {
                run(
                    c,
                    &PtrOp::Store {
                        x: xx,
                        field: fname.clone(),
                        y: UNKNOWN.into(),
                    },
                );
                c.wild_fields.insert(fname.clone());
            }
        }
        if let PtrVal::Var(y) = pv {
            if c.wild_vars.contains(var_name(prog, y)) {
                c.wild_fields.insert(fname.clone());
            }
        }
        if let Some(un) = un_pred(c, &fname) {
            let xx = if exact(c, &x) { x.as_str() } else { UNKNOWN };
            run(
                c,
                &PtrOp::SetUnary {
                    x: xx.into(),
                    pred: un,
                    value: Kleene::False,
                },
            );
        }
    }
    c.uninit.remove(&(x.clone(), fname.clone()));
    set_fields(c, &x, &fname, &ival);
}

fn store_indirect(cpa: &ShapeCpa, prog: &Program, s: &mut ShapeState, src: &Expr) {
    let hit = |f: &FieldRef| cpa.addr_taken.as_ref().is_none_or(|a| a.contains(f));
    s.loaded.retain(|_, (_, f)| !hit(f));
    let pv = ptr_val(prog, src);
    for (k, c) in s.comps.iter_mut() {
        let Some(sd) = prog.structs.get(*k) else {
            continue;
        };
        for (i, fd) in sd.fields.iter().enumerate() {
            let f = FieldRef {
                strukt: *k,
                field: i,
            };
            if !hit(&f) {
                continue;
            }
            if field_tracked(c, &fd.name) {
                let y = match pv {
                    PtrVal::Var(y) if exact(c, var_name(prog, y)) => var_name(prog, y).to_string(),
                    _ => UNKNOWN.into(),
                };
                run(
                    c,
                    &PtrOp::Store {
                        x: UNKNOWN.into(),
                        field: fd.name.clone(),
                        y,
                    },
                );
                c.wild_fields.insert(fd.name.clone());
            }
            set_fields(c, UNKNOWN, &fd.name, &[]);
        }
    }
}

fn alloc(prog: &Program, s: &mut ShapeState, dst: VarId, pointee: &Ty, kind: AllocKind) {
    forget_var(s, dst);
    let x = var_name(prog, dst).to_string();
    let declared = prog.vars.get(dst).and_then(|v| v.ty.pointee_struct());
    let obj = match pointee {
        Ty::Struct(t) => Some(*t),
        Ty::Void => declared,
        _ => None,
    };
    let may_fail = matches!(kind, AllocKind::Heap { .. }) && !prog.malloc_never_fails;
    let zeroed = matches!(kind, AllocKind::Heap { zeroed: true });
    for (k, c) in s.comps.iter_mut() {
        if !is_tracked(c, &x) {
            if *pointee == Ty::Struct(*k) && matches!(kind, AllocKind::Heap { .. }) {
                // an object of the type without a node
                c.complete = false;
            }
            continue;
        }
        if obj != Some(*k) {
            havoc_var(c, &x);
            continue;
        }
        release(c, &x);
        let mut null = c.clone();
        run(c, &PtrOp::Malloc { x: x.clone() });
        c.wild_vars.remove(&x);
        if zeroed {
            let fields: Vec<String> = prog
                .structs
                .get(*k)
                .map(|d| d.fields.iter().map(|f| f.name.clone()).collect())
                .unwrap_or_default();
            for f in fields {
                set_fields(c, &x, &f, &[VSet::Range(0, 0)]);
            }
        } else {
            for f in tracked_fields(&c.region.class) {
                match un_pred(c, &f) {
                    Some(un) => run(
                        c,
                        &PtrOp::SetUnary {
                            x: x.clone(),
                            pred: un,
                            value: Kleene::True,
                        },
                    ),
                    None => {
                        c.uninit.insert((x.clone(), f));
                    }
                }
            }
        }
        if may_fail {
            null_var(&mut null, &x);
            *c = c.join(&null);
        }
    }
}

fn free(prog: &Program, s: &mut ShapeState, ptr: VarId) {
    s.loaded.retain(|_, (p, _)| *p != ptr);
    let x = var_name(prog, ptr).to_string();
    // which struct types an untracked pointer of this type may free
    let may_free = |k: StructId| match prog.vars.get(ptr).map(|v| &v.ty) {
        Some(Ty::Ptr(p)) => match &**p {
            Ty::Struct(t) => *t == k,
            Ty::Void | Ty::Int { bits: 8, .. } => true,
            _ => false,
        },
        _ => true,
    };
    for (k, c) in s.comps.iter_mut() {
        if !is_tracked(c, &x) {
            if may_free(*k) {
                // an unknown cell of this type may be freed
                *c = ShapeComp::top(c.region.class.clone());
            }
            continue;
        }
        if c.wild_vars.contains(&x) {
            // the freed object may be an outside cell while a node is removed
            c.complete = false;
        }
        // pointers to the freed cell dangle (represented like NULL): wild
        let px = PredSym::with("pt", &[x.as_str()]);
        let vars = tracked_vars(&c.region.class);
        let mut fields = tracked_fields(&c.region.class);
        // fields with a per-cell "unknown" predicate: the cells whose field may point to
        // the freed cell get `un[f]` instead of the field going wild everywhere
        let per_cell: Vec<(PredSym, PredSym)> = fields
            .iter()
            .filter_map(|f| un_pred(c, f).map(|u| (PredSym::plain(f.clone()), u)))
            .collect();
        if !per_cell.is_empty() {
            remake(c, |st, _| {
                let mut t = st.clone();
                for v in 0..st.len() {
                    let p = st.value(&px, &[v]);
                    if p == Kleene::False {
                        continue;
                    }
                    for (fs, un) in &per_cell {
                        let Some((1, ui)) = st.vocab().lookup(un) else {
                            continue;
                        };
                        for u in 0..st.len() {
                            let e = st.value(fs, &[u, v]).and(p);
                            t.set1(ui, u, t.get1(ui, u).or(e));
                        }
                    }
                }
                vec![t.blur()]
            });
            fields.retain(|f| !per_cell.iter().any(|(fs, _)| fs.name == *f));
        }
        let mut wild_v = BTreeSet::new();
        let mut wild_f = BTreeSet::new();
        for st in c.region.structures() {
            for v in 0..st.len() {
                if st.value(&px, &[v]) == Kleene::False {
                    continue;
                }
                for y in &vars {
                    if st.value(&PredSym::with("pt", &[y.as_str()]), &[v]) != Kleene::False {
                        wild_v.insert(y.clone());
                    }
                }
                for f in &fields {
                    let fs = PredSym::plain(f.clone());
                    if (0..st.len()).any(|u| st.value(&fs, &[u, v]) != Kleene::False) {
                        wild_f.insert(f.clone());
                    }
                }
            }
        }
        run(c, &PtrOp::Free { x: x.clone() });
        c.uninit.retain(|(v, _)| *v != x);
        c.wild_vars.extend(wild_v);
        c.wild_vars.insert(x.clone());
        c.wild_fields.extend(wild_f);
    }
}

/// `assume_invalid(p)`: `p` neither NULL nor a live cell. A pointer the component of
/// its struct tracks exactly is NULL or a universe node (a live cell) in every
/// structure, so the assumption fails; anything else (wild, untracked) stays as is.
/// For `free(p)` the caller makes sure the struct has no stack objects (universe
/// nodes are then heap objects).
fn assume_invalid(prog: &Program, s: &mut ShapeState, ptr: VarId, strukt: StructId) {
    let x = var_name(prog, ptr).to_string();
    if let Some(c) = s.comps.get_mut(&strukt) {
        if exact(c, &x) {
            c.region = ShapeRegion::empty(c.region.class.clone());
        }
    }
}

fn assume(prog: &Program, s: &mut ShapeState, cond: &Expr, known: &[(VarId, i64)]) {
    // a boolean combination of comparisons, such as `(p == NULL) != (q == NULL)`: the
    // union of its disjuncts, each assumed atom by atom
    if let Some(dnf) = boolean_dnf(cond, true, 8).filter(|d| d.len() != 1 || d[0].len() != 1) {
        let mut out: Option<ShapeState> = None;
        for conj in &dnf {
            let mut t = s.clone();
            for atom in conj {
                assume(prog, &mut t, atom, known);
            }
            out = match out {
                None => Some(t),
                Some(o) => match o.join(&t) {
                    Some(j) => Some(j),
                    // components of different classes cannot occur in copies of one
                    // state; if they did, assuming nothing is sound
                    None => return,
                },
            };
        }
        if let Some(o) = out {
            *s = o;
        }
        return;
    }
    let Expr::Binary(rel, a, b) = cond else {
        return;
    };
    if rel.is_comparison() {
        assume_counters(prog, s, *rel, a, b);
    }
    if matches!(rel, BinOp::Eq | BinOp::Ne) {
        let eq = *rel == BinOp::Eq;
        match (ptr_val(prog, a), ptr_val(prog, b)) {
            (PtrVal::Var(x), PtrVal::Null) | (PtrVal::Null, PtrVal::Var(x))
                if prog.vars.get(x).is_some_and(|v| v.ty.is_ptr()) =>
            {
                let x = var_name(prog, x).to_string();
                for c in s.comps.values_mut() {
                    if exact(c, &x) {
                        let op = if eq {
                            PtrOp::AssumeNull { x: x.clone() }
                        } else {
                            PtrOp::AssumeNotNull { x: x.clone() }
                        };
                        run(c, &op);
                    }
                }
                return;
            }
            (PtrVal::Var(x), PtrVal::Var(y))
                if prog.vars.get(x).is_some_and(|v| v.ty.is_ptr())
                    && prog.vars.get(y).is_some_and(|v| v.ty.is_ptr()) =>
            {
                let (x, y) = (var_name(prog, x).to_string(), var_name(prog, y).to_string());
                for c in s.comps.values_mut() {
                    if exact(c, &x) && exact(c, &y) {
                        let op = if eq {
                            PtrOp::AssumeEq {
                                x: x.clone(),
                                y: y.clone(),
                            }
                        } else {
                            PtrOp::AssumeNe {
                                x: x.clone(),
                                y: y.clone(),
                            }
                        };
                        run(c, &op);
                    }
                }
                return;
            }
            _ => {}
        }
    }
    // integer comparison of a loaded field with a constant (or a variable whose value
    // another domain knows): field predicates
    let value = |e: &Expr| match e {
        Expr::Int(k) => Some(*k),
        Expr::Var(x) => known.iter().find(|(y, _)| y == x).map(|&(_, k)| k),
        _ => None,
    };
    let side = |x: &Expr, other: &Expr| match x {
        Expr::Var(t) if s.loaded.contains_key(t) => value(other).map(|k| (*t, k)),
        _ => None,
    };
    let (t, k, rel) = if let Some((t, k)) = side(a, b) {
        (t, k, *rel)
    } else if let Some((t, k)) = side(b, a) {
        (t, k, rel.flip())
    } else {
        return;
    };
    let Some(&(p, field)) = s.loaded.get(&t) else {
        return;
    };
    let Some(cond_set) = vset(rel, k as i128) else {
        return;
    };
    let pn = var_name(prog, p).to_string();
    let fname = field_name(prog, field).unwrap_or(UNKNOWN).to_string();
    let Some(c) = s.comps.get_mut(&field.strukt) else {
        return;
    };
    if !exact(c, &pn) {
        return;
    }
    for (a, parsed) in assertions(&c.region.class) {
        let Some((f, set)) = parsed else { continue };
        if f != fname {
            continue;
        }
        let positive = match implies(cond_set, set) {
            Kleene::True => true,
            Kleene::False => false,
            Kleene::Half => continue,
        };
        run(
            c,
            &PtrOp::AssumeField {
                x: pn.clone(),
                assertion: a,
                positive,
            },
        );
    }
}

/// `cond` (or its negation, if `!positive`) as a disjunction of conjunctions of
/// comparisons whose operands are not truth values, when `cond` is built from
/// comparisons by `!` and by `==`/`!=` between truth values or with 0; at most `max`
/// disjuncts. `None` for any other condition. The disjunction is equivalent to the
/// condition in every state.
fn boolean_dnf(cond: &Expr, positive: bool, max: usize) -> Option<Vec<Vec<Expr>>> {
    let and = |x: Vec<Vec<Expr>>, y: Vec<Vec<Expr>>| -> Option<Vec<Vec<Expr>>> {
        let mut out = Vec::new();
        for a in &x {
            for b in &y {
                out.push(a.iter().chain(b).cloned().collect());
            }
        }
        (out.len() <= max).then_some(out)
    };
    match cond {
        Expr::Unary(UnOp::Not, e) => boolean_dnf(e, !positive, max),
        Expr::Binary(rel @ (BinOp::Eq | BinOp::Ne), a, b) if a.is_boolean() && b.is_boolean() => {
            // a == b is (a & b) | (!a & !b); a != b is (a & !b) | (!a & b)
            let same = (*rel == BinOp::Eq) == positive;
            let mut out = and(boolean_dnf(a, true, max)?, boolean_dnf(b, same, max)?)?;
            out.extend(and(
                boolean_dnf(a, false, max)?,
                boolean_dnf(b, !same, max)?,
            )?);
            (out.len() <= max).then_some(out)
        }
        Expr::Binary(rel @ (BinOp::Eq | BinOp::Ne), a, b)
            if (a.is_boolean() && **b == Expr::Int(0))
                || (b.is_boolean() && **a == Expr::Int(0)) =>
        {
            let e = if a.is_boolean() { a } else { b };
            boolean_dnf(e, (*rel == BinOp::Ne) == positive, max)
        }
        Expr::Binary(rel, _, _) if rel.is_comparison() => Some(vec![vec![if positive {
            cond.clone()
        } else {
            cond.negate()
        }]]),
        _ => None,
    }
}

/// Sets the tracked pointer variables of `to`'s function that are dead at `to` to NULL
/// (only where that changes something).
pub(super) fn kill_dead(
    prog: &Program,
    s: &mut ShapeState,
    to: crate::cfa::Node,
    live: Option<&BTreeSet<VarId>>,
    keep: &BTreeMap<String, Option<crate::cfa::FuncId>>,
) {
    let Some(loc) = prog.graph.node_weight(to) else {
        return;
    };
    let func = loc.func;
    let mut dead: BTreeMap<StructId, Vec<String>> = BTreeMap::new();
    for (v, var) in prog.vars.iter().enumerate() {
        let mine = matches!(var.scope, crate::cfa::Scope::Local(f) | crate::cfa::Scope::Param(f) | crate::cfa::Scope::Temp(f) if f == func);
        if !mine || live.is_some_and(|l| l.contains(&v)) {
            continue;
        }
        if var.ty.is_int() {
            forget_var(s, v);
        }
    }
    for (v, var) in prog.vars.iter().enumerate() {
        let mine = matches!(var.scope, crate::cfa::Scope::Local(f) | crate::cfa::Scope::Param(f) | crate::cfa::Scope::Temp(f) if f == func);
        if !mine
            || var.ty.is_int()
            || live.is_some_and(|l| l.contains(&v))
            || keep.contains_key(&var.name)
        {
            continue;
        }
        // a live integer still holds a field of this pointer's cell (`t = p->data`):
        // keep the pointer so that `assume(t ...)` refines the right node
        if s.loaded.values().any(|(p, _)| *p == v) {
            continue;
        }
        for (k, c) in s.comps.iter() {
            if !is_tracked(c, &var.name) {
                continue;
            }
            // `pt[x]` by index (one vocabulary per component)
            let points = c
                .region
                .structures()
                .any(|st| match st.vocab().pt(&var.name) {
                    Some(p) => (0..st.len()).any(|u| st.get1(p, u) != Kleene::False),
                    None => !st.is_empty(),
                });
            let flagged =
                c.wild_vars.contains(&var.name) || c.uninit.iter().any(|(x, _)| *x == var.name);
            if points || flagged {
                dead.entry(*k).or_default().push(var.name.clone());
            }
        }
    }
    for (k, c) in s.comps.iter_mut() {
        let Some(vs) = dead.get(k) else { continue };
        for x in vs {
            release(c, x);
            c.wild_vars.remove(x);
        }
        let ops: Vec<PtrOp> = vs
            .iter()
            .map(|x| PtrOp::AssignNull { x: x.clone() })
            .collect();
        run_seq(c, &ops);
    }
}

/// Applies a sequence of operations to every structure with one canonical abstraction
/// at the end (intermediate blurs would lose precision).
fn run_seq(c: &mut ShapeComp, ops: &[PtrOp]) {
    remake(c, |s, _| {
        let mut cur = vec![s.clone()];
        for op in ops {
            let mut next = Vec::new();
            for t in &cur {
                next.extend(crate::tvla::post_concrete(t, op).structures);
            }
            cur = next;
        }
        cur.into_iter().map(|t| t.blur()).collect()
    });
}

/// Converts every component of `s` to the classes `classes` (components of struct
/// types without a class are dropped, new ones start at ⊤).
pub(super) fn convert_state(
    s: &ShapeState,
    classes: &BTreeMap<StructId, &Arc<ShapeClass>>,
) -> ShapeState {
    let same = s.comps.len() == classes.len()
        && s.comps.iter().all(|(k, c)| {
            classes
                .get(k)
                .is_some_and(|cl| Arc::ptr_eq(cl, &c.region.class))
        });
    if same {
        return s.clone();
    }
    let comps = classes
        .iter()
        .map(|(k, cl)| {
            let c = match s.comps.get(k) {
                Some(c) => convert_comp(c, cl),
                None => ShapeComp::top((*cl).clone()),
            };
            (*k, c)
        })
        .collect();
    ShapeState {
        comps,
        loaded: s.loaded.clone(),
    }
}

/// Converts a component to another shape class soundly: predicates of both classes
/// keep their values, new points-to and field predicates are 1/2 (and their variables
/// and fields wild), new field predicates `fd` are 1/2, new instrumentation predicates
/// are evaluated from their definitions; then coerce and canonical abstraction.
pub fn convert_comp(c: &ShapeComp, class: &Arc<ShapeClass>) -> ShapeComp {
    if Arc::ptr_eq(&c.region.class, class) {
        return c.clone();
    }
    if *c.region.class == **class {
        // the same class in another object: share `class`'s
        let mut c = c.clone();
        c.region.share_class(class);
        return c;
    }
    let old = &c.region.class;
    let old_core: BTreeSet<&PredSym> = old.core.iter().map(|p| &p.sym).collect();
    let new_vars: Vec<String> = tracked_vars(class)
        .into_iter()
        .filter(|x| !tracked_vars(old).contains(x))
        .collect();
    let new_fields: Vec<String> = tracked_fields(class)
        .into_iter()
        .filter(|f| !tracked_fields(old).contains(f))
        .collect();
    let mut region = ShapeRegion::empty(class.clone());
    let nv = class.counters.len();
    for (s, a) in c.region.entries() {
        if let Some(t) = convert_structure(s, old, class, &old_core) {
            // the counters both classes have keep their relations; the nodes follow
            // their provenance (convert_structure keeps the node order)
            let counts = (nv > 0).then(|| {
                let map: Vec<Option<usize>> = old
                    .counters
                    .iter()
                    .map(|x| class.counters.iter().position(|y| y == x))
                    .chain((0..s.len()).map(|u| Some(nv + u)))
                    .collect();
                let a = match a {
                    Some(a) if a.dims() == map.len() => a.remap(&map, nv + s.len()),
                    _ => Affine::top(nv + s.len()),
                };
                crate::tvla::counts::after_post(&a, nv, s.len(), &t)
            });
            region.insert_counted(t, counts);
        }
    }
    let keep_v: BTreeSet<String> = tracked_vars(class).into_iter().collect();
    let keep_f: BTreeSet<String> = tracked_fields(class).into_iter().collect();
    let mut wild_vars: BTreeSet<String> = c.wild_vars.intersection(&keep_v).cloned().collect();
    wild_vars.extend(new_vars);
    let mut wild_fields: BTreeSet<String> = c.wild_fields.intersection(&keep_f).cloned().collect();
    wild_fields.extend(new_fields);
    // uninitialised fields that are no longer tracked do not matter; new fields are wild
    let uninit = c
        .uninit
        .iter()
        .filter(|(v, f)| keep_v.contains(v) && keep_f.contains(f))
        .cloned()
        .collect();
    // a variable that is no longer tracked may hold an uninitialised field's cell
    for (v, f) in &c.uninit {
        if !keep_v.contains(v) && keep_f.contains(f) {
            wild_fields.insert(f.clone());
        }
    }
    // per-cell uninitialised fields the new class cannot express: wild
    let new_core: BTreeSet<&PredSym> = class.core.iter().map(|p| &p.sym).collect();
    for f in &keep_f {
        let un = PredSym::with("un", &[f.as_str()]);
        if old_core.contains(&un)
            && !new_core.contains(&un)
            && c.region
                .structures()
                .any(|st| (0..st.len()).any(|u| st.value(&un, &[u]) != Kleene::False))
        {
            wild_fields.insert(f.clone());
        }
    }
    ShapeComp {
        region,
        wild_vars,
        wild_fields,
        uninit,
        complete: c.complete,
    }
}

fn convert_structure(
    s: &Structure,
    old: &ShapeClass,
    class: &ShapeClass,
    old_core: &BTreeSet<&PredSym>,
) -> Option<Structure> {
    let mut t = Structure::empty(class);
    for u in 0..s.len() {
        t.add_node(s.get1(crate::tvla::structure::SM, u));
    }
    let voc = t.vocab().clone();
    let kept = |p: &PredSym, arity: u8| -> bool {
        old_core.contains(p)
            || old
                .instr
                .iter()
                .any(|d| d.sym == *p && d.arity == arity && class.instr.iter().any(|e| e == d))
    };
    let n = s.len();
    for (i, p) in voc.nullary.iter().enumerate() {
        t.set0(
            i,
            if kept(p, 0) {
                s.value(p, &[])
            } else {
                Kleene::Half
            },
        );
    }
    for (i, p) in voc.unary.iter().enumerate() {
        if i == crate::tvla::structure::SM {
            continue;
        }
        let k = kept(p, 1);
        for u in 0..n {
            t.set1(i, u, if k { s.value(p, &[u]) } else { Kleene::Half });
        }
    }
    for (i, p) in voc.binary.iter().enumerate() {
        let k = kept(p, 2);
        for a in 0..n {
            for b in 0..n {
                t.set2(i, a, b, if k { s.value(p, &[a, b]) } else { Kleene::Half });
            }
        }
    }
    // new instrumentation predicates from their definitions
    let fresh: BTreeSet<PredSym> = class
        .instr
        .iter()
        .filter(|d| !kept(&d.sym, d.arity))
        .map(|d| d.sym.clone())
        .collect();
    if !fresh.is_empty() {
        let r = t.recompute_instr(None);
        for ins in &voc.instr {
            if !fresh.contains(&ins.sym) {
                continue;
            }
            match ins.arity {
                0 => t.set0(ins.idx, r.get0(ins.idx)),
                1 => {
                    for u in 0..n {
                        t.set1(ins.idx, u, r.get1(ins.idx, u));
                    }
                }
                _ => {
                    for a in 0..n {
                        for b in 0..n {
                            t.set2(ins.idx, a, b, r.get2(ins.idx, a, b));
                        }
                    }
                }
            }
        }
    }
    crate::tvla::coerce::coerce(t.with_identity_origins()).map(|t| t.blur())
}

#[cfg(test)]
mod dnf_tests {
    use super::*;

    fn eq(a: Expr, b: Expr) -> Expr {
        Expr::bin(BinOp::Eq, a, b)
    }

    #[test]
    fn truth_values_compared_become_disjuncts_of_comparisons() {
        // (p == NULL) != (q == NULL)  is  (p == NULL & q != NULL) | (p != NULL & q == NULL)
        let (p, q) = (eq(Expr::Var(0), Expr::Null), eq(Expr::Var(1), Expr::Null));
        let cond = Expr::bin(BinOp::Ne, p.clone(), q.clone());
        let d = boolean_dnf(&cond, true, 8).unwrap();
        assert_eq!(
            d,
            vec![vec![p.clone(), q.negate()], vec![p.negate(), q.clone()]]
        );
        // its negation, and `!(...)`, and `(...) == 0`, are the equality of the two
        let both = vec![vec![p.clone(), q.clone()], vec![p.negate(), q.negate()]];
        assert_eq!(boolean_dnf(&cond, false, 8).unwrap(), both);
        let not = Expr::Unary(UnOp::Not, Box::new(cond.clone()));
        assert_eq!(boolean_dnf(&not, true, 8).unwrap(), both);
        assert_eq!(
            boolean_dnf(&eq(cond.clone(), Expr::Int(0)), true, 8).unwrap(),
            both
        );
        // a plain comparison is one atom; arithmetic is not a boolean combination
        assert_eq!(boolean_dnf(&p, true, 8).unwrap(), vec![vec![p.clone()]]);
        assert!(boolean_dnf(&Expr::Var(0), true, 8).is_none());
        // the size bound
        assert!(boolean_dnf(&cond, true, 1).is_none());
    }
}
