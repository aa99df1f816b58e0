//! The heap CPA: predicate abstraction × explicit heap × shape ([`HeapCpa`]), with
//! the strengthening of the shape post by what the explicit state and the predicate
//! cube know of integers stored into and loaded from fields.

use crate::cfa::{BinOp, Expr, Node, Op, Program, Scope, Step, VarId};
use crate::cpa::{Cpa, Fingerprint, MergeKey};
use crate::explicit::{ExplicitCpa, ExplicitPrec, ExplicitState};
use crate::predabs::{Cube, Precision, PredAbs};
use crate::shape::{Known, ShapeCpa, ShapePrec, ShapeState};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The name of [`HeapCpa`] with one joined region of shape structures per state
/// ([`HeapOptions::shape_joined`]) in certificates.
pub const HEAP_CPA_NAME: &str = "pred+explicit+shape";

/// The name of [`HeapCpa`] with one shape structure per state (the default) in
/// certificates.
pub const HEAP_SPLIT_CPA_NAME: &str = "pred+explicit+shape/split";

/// A state of [`HeapCpa`]: a predicate cube, an explicit heap and a shape state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HeapState {
    pub pred: Cube,
    pub explicit: ExplicitState,
    pub shape: ShapeState,
}

/// The precision of [`HeapCpa`]: predicates, the explicit-heap abstraction Θ and the
/// shape classes per struct type (Ψ).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HeapPrec {
    pub pred: Precision,
    pub explicit: ExplicitPrec,
    pub shape: ShapePrec,
    /// Locations where `BuildART` may merge states ([`HeapCpa::merge`]): the loop
    /// heads at first; refinement removes a location when a merge there made an error
    /// path reachable that its own steps do not reach.
    #[serde(default)]
    pub merge_at: BTreeSet<Node>,
}

/// Predicate abstraction × explicit heap × shape. Post: the explicit successors first
/// (cheap; none means the step is infeasible), then the shape successors, then the
/// predicate successors (Z3), all combinations. One strengthening: what the explicit
/// pre-state and the pre-state's cube know of an integer stored into a field (its
/// value, or the cube's comparisons of the stored variable with constants) is passed
/// to the shape store transfer, which decides the field assertions with it as for a
/// constant (`n->data = d` with `d == 1` known, or `!(d == 0)` in the cube).
/// Coverage and precision adjustment are componentwise, so the CPA laws of the
/// components carry over; union coverage shares out the shape structures.
#[derive(Debug)]
pub struct HeapCpa {
    pub pred: PredAbs,
    pub explicit: ExplicitCpa,
    pub shape: ShapeCpa,
    /// Per location: the integer variables of its function that are dead there
    /// ([`dead_ints`]); the precision adjustment forgets their explicit values.
    dead_ints: HashMap<Node, BTreeSet<VarId>>,
    /// Per location and loaded pointer, the comparisons with it among the location's
    /// predicates that the shape may decide ([`HeapCpa::ptr_preds_at`]), with the
    /// precision's version they were computed for (the number of predicates and of
    /// (location, predicate) pairs: a precision only grows).
    ptr_preds: std::cell::RefCell<HashMap<(Node, VarId), PtrPredsAt>>,
}

/// The integer locals (parameters and temporaries included) of each location's own
/// function that are dead there: written again before any read on every path within
/// the function (`live`: the shape CPA's live variables, [`ShapeCpa::live`]).
/// Forgetting such a value (⊤) only over-approximates, and it keeps a loaded temporary
/// (`t = p->data`) from telling apart states at a loop head long after its last use.
/// Pointers are left alone: the explicit heap drops the cells that only a forgotten
/// pointer reached.
pub fn dead_ints(
    prog: &Program,
    live: &HashMap<Node, BTreeSet<VarId>>,
) -> HashMap<Node, BTreeSet<VarId>> {
    let mut out = HashMap::new();
    for n in prog.graph.node_indices() {
        let func = prog.graph[n].func;
        let dead: BTreeSet<VarId> = prog
            .vars
            .iter()
            .enumerate()
            .filter(|(v, var)| {
                var.ty.is_int()
                    && matches!(var.scope, Scope::Local(f) | Scope::Param(f) | Scope::Temp(f) if f == func)
                    && !live.get(&n).is_some_and(|l| l.contains(v))
            })
            .map(|(v, _)| v)
            .collect();
        if !dead.is_empty() {
            out.insert(n, dead);
        }
    }
    out
}

impl HeapCpa {
    /// A fresh CPA (no caches) for `prog` with the given Z3 timeout per abstraction
    /// query; `split`: one shape structure per state (see [`HeapOptions`]).
    pub fn new(prog: &Program, timeout_ms: u32, split: bool) -> HeapCpa {
        let shape = if split {
            ShapeCpa::new(prog)
        } else {
            ShapeCpa::new(prog).joined()
        };
        let dead_ints = shape
            .live
            .as_deref()
            .map(|live| dead_ints(prog, live))
            .unwrap_or_default();
        HeapCpa {
            pred: PredAbs::new(timeout_ms),
            explicit: ExplicitCpa,
            shape,
            dead_ints,
            ptr_preds: Default::default(),
        }
    }
    /// The same CPA over the same program tables without the predicate abstraction's
    /// caches (the certificate check's fresh CPA), with the given Z3 timeout.
    pub fn fresh(&self, timeout_ms: u32) -> HeapCpa {
        HeapCpa {
            pred: PredAbs::new(timeout_ms),
            explicit: ExplicitCpa,
            shape: self.shape.clone(),
            dead_ints: self.dead_ints.clone(),
            ptr_preds: Default::default(),
        }
    }
    /// Whether shape regions are joined per state (the default) or split.
    pub fn is_split(&self) -> bool {
        !self.shape.is_joined()
    }
    /// From now on, one joined region per state (as [`HeapCpa::new`] without `split`);
    /// the predicate abstraction keeps its caches. States built before remain sound
    /// states of the same domain, but an ART must be rebuilt from its root for its
    /// certificate to name one CPA.
    pub fn join_regions(&mut self) {
        self.shape = self.shape.clone().joined();
    }
}

impl Cpa for HeapCpa {
    type State = HeapState;
    type Prec = HeapPrec;

    fn name(&self) -> &'static str {
        if self.is_split() {
            HEAP_SPLIT_CPA_NAME
        } else {
            HEAP_CPA_NAME
        }
    }
    fn initial(&self, prog: &Program, prec: &HeapPrec) -> HeapState {
        HeapState {
            pred: self.pred.initial(prog, &prec.pred),
            explicit: self.explicit.initial(prog, &prec.explicit),
            shape: self.shape.initial(prog, &prec.shape),
        }
    }
    fn post(
        &self,
        prog: &Program,
        s: &HeapState,
        step: Step,
        to: Node,
        prec: &HeapPrec,
    ) -> Vec<HeapState> {
        let ex = self
            .explicit
            .post(prog, &s.explicit, step, to, &prec.explicit);
        if ex.is_empty() {
            return Vec::new();
        }
        // strengthening: what the explicit state and the cube know of an integer
        // stored into a field makes the shape domain's field assertions on it definite,
        // and what the explicit state knows of an integer compared with a loaded field
        // refines them
        let known = known_facts(prog, &s.explicit, Some((&s.pred, &prec.pred)), step);
        let sh = self
            .shape
            .post_with(prog, &s.shape, step, to, &prec.shape, &known);
        if sh.is_empty() {
            return Vec::new();
        }
        let pr = self.pred.post(prog, &s.pred, step, to, &prec.pred);
        // the other way: an explicitly tracked integer loaded from a shape-tracked cell
        // gets the value the shape domain's field assertions give it
        let pairs: Vec<(ExplicitState, ShapeState)> = match loaded_int(prog, step, to, prec) {
            Some((dst, ptr, field)) => sh
                .iter()
                .flat_map(|g| g.split_field_value(prog, ptr, field))
                .flat_map(|(val, g)| {
                    ex.iter()
                        .filter_map(|e| Some((with_loaded(e, dst, val)?, g.clone())))
                        .collect::<Vec<_>>()
                })
                .collect(),
            None => ex
                .iter()
                .flat_map(|e| sh.iter().map(move |g| (e.clone(), g.clone())))
                .collect(),
        };
        // and a third: the pointer a load writes (the predicate domain havocs it),
        // compared with others where the shape decides it
        let ptr_preds = match loaded_ptr(prog, step) {
            Some(dst) => self.ptr_preds_at(prog, to, dst, &prec.pred),
            None => std::rc::Rc::from([]),
        };
        let mut out = Vec::with_capacity(pairs.len() * pr.len());
        for p in &pr {
            for (e, g) in &pairs {
                out.push(HeapState {
                    pred: strengthen_cube(p, g, &ptr_preds),
                    explicit: e.clone(),
                    shape: g.clone(),
                });
            }
        }
        out
    }
    /// Facts of the shape structures ([`crate::tvla::Structure::embed_facts`], per
    /// component: those of every structure required, those of any offered) and the
    /// cube's literals (required and offered as they are: a covering cube is a
    /// sub-cube). Components of one class set are laid out alike, and coverage needs
    /// equal classes, so a bit means the same in any two states that can cover.
    /// Nothing is filtered for a state with an empty component.
    fn fingerprint(&self, s: &HeapState) -> Fingerprint {
        let (mut req, mut offer) = (Vec::new(), Vec::new());
        for c in s.shape.comps.values() {
            let mut all: Option<Vec<u64>> = None;
            let mut any: Vec<u64> = Vec::new();
            for st in c.region.structures() {
                let f = st.embed_facts();
                if any.len() < f.len() {
                    any.resize(f.len(), 0);
                }
                any.iter_mut().zip(&f).for_each(|(a, b)| *a |= b);
                all = Some(match all {
                    None => f,
                    Some(mut a) => {
                        a.iter_mut().zip(&f).for_each(|(x, y)| *x &= y);
                        a
                    }
                });
            }
            let Some(all) = all else {
                return Fingerprint::default();
            };
            req.extend(all);
            offer.extend(any);
        }
        // the cube after the shape facts: literal (id, value) is bit 2 * id + value
        let base = req.len().max(offer.len()) * 64;
        req.resize(base / 64, 0);
        offer.resize(base / 64, 0);
        for &(id, v) in &s.pred.0 {
            let bit = base + 2 * id as usize + usize::from(v);
            for words in [&mut req, &mut offer] {
                if words.len() <= bit / 64 {
                    words.resize(bit / 64 + 1, 0);
                }
                words[bit / 64] |= 1 << (bit % 64);
            }
        }
        Fingerprint {
            req,
            offer: Some(offer),
            merge: Some(merge_key(s)),
        }
    }
    /// Cheapest component first: cubes, then explicit heaps, then shape embeddings.
    fn covers(&self, t: &HeapState, s: &HeapState) -> bool {
        self.pred.covers(&t.pred, &s.pred)
            && self.explicit.covers(&t.explicit, &s.explicit)
            && self.shape.covers(&t.shape, &s.shape)
    }
    /// Stop-join: the states whose predicate and explicit parts cover `s` may share
    /// out its shape structures ([`crate::shape::ShapeState::covered_by_union`]).
    fn covers_union(&self, ts: &[&HeapState], s: &HeapState) -> Option<Vec<usize>> {
        let cands: Vec<usize> = (0..ts.len())
            .filter(|&i| {
                self.pred.covers(&ts[i].pred, &s.pred)
                    && self.explicit.covers(&ts[i].explicit, &s.explicit)
            })
            .collect();
        let shapes: Vec<&crate::shape::ShapeState> = cands.iter().map(|&i| &ts[i].shape).collect();
        let used = s.shape.covered_by_union(&shapes)?;
        Some(used.into_iter().map(|j| cands[j]).collect())
    }
    /// The stop operator with the predicate and explicit parts compared once per
    /// candidate: the first candidate whose shape part covers alone, else the shape
    /// stop-join over the candidates (the default's meaning, about half the work).
    fn stop(&self, ts: &[&HeapState], s: &HeapState) -> Option<Vec<usize>> {
        let cands: Vec<usize> = (0..ts.len())
            .filter(|&i| {
                self.pred.covers(&ts[i].pred, &s.pred)
                    && self.explicit.covers(&ts[i].explicit, &s.explicit)
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        // the first single coverer, else (with two states or more) the stop-join,
        // each structure question decided once for both
        let shapes: Vec<&crate::shape::ShapeState> = cands.iter().map(|&i| &ts[i].shape).collect();
        let used = s.shape.covered_by(&shapes, ts.len() >= 2)?;
        Some(used.into_iter().map(|j| cands[j]).collect()).filter(|u: &Vec<usize>| !u.is_empty())
    }
    /// Merge-join of the shape parts when the predicate cubes and explicit heaps are
    /// equal ([`crate::shape::ShapeState::merge`]: only for classes with the partial
    /// join, so a type whose refinement turned the join off is never merged either),
    /// at the locations of [`HeapPrec::merge_at`].
    fn merge(
        &self,
        existing: &HeapState,
        new: &HeapState,
        at: Node,
        prec: &HeapPrec,
    ) -> Option<HeapState> {
        // the location first: it is the same for every candidate and excludes most
        if !prec.merge_at.contains(&at)
            || existing.pred != new.pred
            || existing.explicit != new.explicit
        {
            return None;
        }
        let shape = existing.shape.merge(&new.shape)?;
        if tracing::enabled!(tracing::Level::TRACE) {
            tracing::trace!(
                "merge at loc {}:\n existing:\n{} new:\n{} merged:\n{}",
                at.index(),
                existing.shape.render(),
                new.shape.render(),
                shape.render()
            );
        }
        Some(HeapState {
            pred: existing.pred.clone(),
            explicit: existing.explicit.clone(),
            shape,
        })
    }
    /// Merges keep the cube and the explicit heap: both must be equal, the shape part
    /// covering.
    fn merged_covers(&self, merged: &HeapState, succ: &HeapState) -> bool {
        merged.pred == succ.pred
            && merged.explicit == succ.explicit
            && self.shape.covers(&merged.shape, &succ.shape)
    }
    fn adjust(&self, s: HeapState, at: Node, prec: &HeapPrec) -> HeapState {
        let mut explicit = match self.dead_ints.get(&at) {
            Some(dead) => s
                .explicit
                .restrict(&|x| prec.explicit.tracks(at, x) && !dead.contains(&x)),
            None => self.explicit.adjust(s.explicit, at, &prec.explicit),
        };
        // equal states share their vector: the stop compares every candidate's
        explicit.vars.intern();
        HeapState {
            pred: self.pred.adjust(s.pred, at, &prec.pred),
            explicit,
            shape: self.shape.adjust(s.shape, at, &prec.shape),
        }
    }
}

impl HeapCpa {
    /// The pointer comparisons with `dst` among the predicates tracked at `to` whose
    /// variables the shape states at `to` hold as they are
    /// ([`ShapeCpa::holds_value_at`]): each as its id and its two sides (a variable
    /// name, or `None` for NULL).
    fn ptr_preds_at(
        &self,
        prog: &Program,
        to: Node,
        dst: VarId,
        prec: &Precision,
    ) -> std::rc::Rc<[PtrPred]> {
        let version = (prec.preds.len(), prec.size());
        if let Some((n, m, v)) = self.ptr_preds.borrow().get(&(to, dst)) {
            if (*n, *m) == version {
                return v.clone();
            }
        }
        let name = prog.vars[dst].name.as_str();
        let v: std::rc::Rc<[PtrPred]> = self
            .compute_ptr_preds(prog, to, prec)
            .into_iter()
            .filter(|(_, a, b)| a.as_deref() == Some(name) || b.as_deref() == Some(name))
            .collect();
        self.ptr_preds
            .borrow_mut()
            .insert((to, dst), (version.0, version.1, v.clone()));
        v
    }

    fn compute_ptr_preds(&self, prog: &Program, to: Node, prec: &Precision) -> Vec<PtrPred> {
        let side = |e: &Expr| match e {
            Expr::Null | Expr::Int(0) => Some(None),
            Expr::Var(v) if prog.vars.get(*v).is_some_and(|x| x.ty.is_ptr()) => self
                .shape
                .holds_value_at(prog, *v, to)
                .then(|| Some(prog.vars[*v].name.clone())),
            _ => None,
        };
        prec.tracked_at(prog, to)
            .into_iter()
            .filter_map(|id| {
                let Expr::Binary(BinOp::Eq, a, b) = &prec.preds.get(id as usize)?.expr else {
                    return None;
                };
                let (a, b) = (side(a)?, side(b)?);
                (a.is_some() || b.is_some()).then_some((id, a, b))
            })
            .collect()
    }
}

/// A pointer comparison predicate `a == b` ([`HeapCpa::ptr_preds_at`]): its id and its
/// sides (`None`: NULL).
type PtrPred = (crate::predabs::PredId, Option<String>, Option<String>);

/// [`HeapCpa::ptr_preds_at`]'s memo entry: the precision's version (number of
/// predicates, number of (location, predicate) pairs) and the pointer comparisons.
type PtrPredsAt = (usize, usize, std::rc::Rc<[PtrPred]>);

/// The cube `cube` with the pointer comparisons of `preds` that it leaves open and the
/// shape state `g` decides ([`ShapeState::decide_ptr_eq`]). The predicate domain
/// havocs what a load writes; the shape domain often knows where it points (`t =
/// p->prev` in a one-cell cycle: `t == p`), and a later comparison of the two after
/// `free(p)` (utlist's `CDL_FOREACH_SAFE`) can only be decided by the cube. Only after
/// loads (`preds` compare the loaded pointer): decided everywhere, the extra literals
/// kept apart states the cube used to merge (measured: the instrumented program of a
/// correctness witness of benchmarks/sll_length.c went from 0.5 s to the node limit).
fn strengthen_cube(cube: &Cube, g: &ShapeState, preds: &[PtrPred]) -> Cube {
    let mut added: Vec<(crate::predabs::PredId, bool)> = Vec::new();
    for (id, a, b) in preds {
        if cube.0.binary_search_by_key(id, |l| l.0).is_ok() {
            continue;
        }
        if let Some(known) = g.decide_ptr_eq(a.as_deref(), b.as_deref()) {
            added.push((*id, known));
        }
    }
    if added.is_empty() {
        return cube.clone();
    }
    tracing::trace!(target: "shapemc::strengthen", "cube strengthened by the shape: {added:?}");
    let mut lits = cube.0.clone();
    lits.extend(added);
    lits.sort_unstable();
    Cube(lits)
}

/// At most this many constants of a field become field assertions ([`field_constants`]).
const MAX_FIELD_CONSTANTS: usize = 8;

/// The integer constants the program may store into `field` or assign to one of the
/// variables `also` (the other side of a comparison with the field): the constant
/// sources of every `p->field = e` and of `also`, following copies, parameters and
/// return values back to constant assignments (sorted; empty when there are more than
/// [`MAX_FIELD_CONSTANTS`]). Only a choice of predicates: values that come from
/// elsewhere (input, arithmetic, loads) are simply not among them.
pub(super) fn field_constants(
    prog: &Program,
    field: crate::cfa::FieldRef,
    also: &[VarId],
) -> Vec<i64> {
    // `r = f(...)` assigns f's return variable
    let rets: Vec<(VarId, Expr)> = prog
        .graph
        .edge_weights()
        .filter_map(|e| match &e.op {
            Op::Call {
                callee,
                ret: Some(r),
                ..
            } => Some((*r, Expr::Var(prog.functions.get(*callee)?.ret?))),
            _ => None,
        })
        .collect();
    // the expressions each integer variable is assigned
    let mut sources: BTreeMap<VarId, Vec<&Expr>> = BTreeMap::new();
    for (r, e) in &rets {
        sources.entry(*r).or_default().push(e);
    }
    let also: Vec<Expr> = also.iter().map(|&x| Expr::Var(x)).collect();
    let mut work: Vec<&Expr> = also.iter().collect();
    for e in prog.graph.edge_weights() {
        match &e.op {
            Op::Assign { dst, src } => sources.entry(*dst).or_default().push(src),
            Op::Store { field: f, src, .. } if *f == field => work.push(src),
            Op::Call { callee, args, .. } => {
                if let Some(func) = prog.functions.get(*callee) {
                    for (p, a) in func.params.iter().zip(args) {
                        sources.entry(*p).or_default().push(a);
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    while let Some(e) = work.pop() {
        match e {
            Expr::Int(k) => {
                out.insert(*k);
                if out.len() > MAX_FIELD_CONSTANTS {
                    return Vec::new();
                }
            }
            Expr::Var(x) if seen.insert(*x) => {
                work.extend(sources.get(x).into_iter().flatten().copied());
            }
            Expr::Cast(_, inner) => work.push(inner),
            // a comparison or `!e` is 0 or 1 (`e->data = nondet() != 0`)
            b if b.is_boolean() => {
                out.extend([0, 1]);
                if out.len() > MAX_FIELD_CONSTANTS {
                    return Vec::new();
                }
            }
            _ => {}
        }
    }
    out.into_iter().collect()
}

/// What the explicit state and the predicate cube before `step` know that the shape
/// domain can use ([`Known`]): for a store, the facts on the stored integer
/// ([`stored_facts`]); for `assume(a rel b)`, the values the explicit state knows of
/// the integer variables `a` and `b`.
pub(super) fn known_facts(
    prog: &Program,
    ex: &ExplicitState,
    cube: Option<(&Cube, &Precision)>,
    step: Step,
) -> Known {
    let Step::Edge(e) = step else {
        return Known::NONE;
    };
    match &prog.graph[e].op {
        Op::Store { .. } => Known {
            stored: stored_facts(prog, ex, cube, step),
            ints: Vec::new(),
        },
        Op::Assume {
            cond: Expr::Binary(rel, a, b),
        } if rel.is_comparison() => {
            let ints = [a, b]
                .into_iter()
                .filter_map(|o| match **o {
                    Expr::Var(x) if prog.vars.get(x).is_some_and(|v| v.ty.is_int()) => {
                        match crate::explicit::post::eval(ex, o) {
                            crate::explicit::Value::Int(k) => Some((x, k)),
                            _ => None,
                        }
                    }
                    _ => None,
                })
                .collect();
            Known {
                stored: Vec::new(),
                ints,
            }
        }
        _ => Known::NONE,
    }
}

/// `(dst, ptr, field)` when `step` is `dst = ptr->field` for an integer `dst` that the
/// explicit domain tracks at `to`.
fn loaded_int(
    prog: &Program,
    step: Step,
    to: Node,
    prec: &HeapPrec,
) -> Option<(VarId, VarId, crate::cfa::FieldRef)> {
    let Step::Edge(e) = step else { return None };
    let Op::Load { dst, ptr, field } = prog.graph[e].op else {
        return None;
    };
    (prog.vars.get(dst)?.ty.is_int() && prec.explicit.tracks(to, dst)).then_some((dst, ptr, field))
}

/// The destination of a load of a pointer (`dst = ptr->field`, `dst` a pointer).
fn loaded_ptr(prog: &Program, step: Step) -> Option<VarId> {
    let Step::Edge(e) = step else { return None };
    let Op::Load { dst, .. } = prog.graph[e].op else {
        return None;
    };
    prog.vars.get(dst)?.ty.is_ptr().then_some(dst)
}

/// The explicit successor `e` of `dst = ptr->field` met with a shape successor that
/// gives the loaded value `val` ([`ShapeState::split_field_value`]; `None`: unknown):
/// `dst` becomes `val` where `e` does not know it; `None` (no state) when `e` knows a
/// different value.
fn with_loaded(e: &ExplicitState, dst: VarId, val: Option<i64>) -> Option<ExplicitState> {
    use crate::explicit::Value;
    match (e.vars.get(dst).copied()?, val) {
        (Value::Top, Some(k)) => {
            let mut e = e.clone();
            e.vars.set(dst, Value::Int(k));
            Some(e)
        }
        (Value::Int(k2), Some(k)) => (k2 == k).then(|| e.clone()),
        _ => Some(e.clone()),
    }
}

/// What the explicit state and the predicate cube before `step` know of the integer
/// it stores, if `step` is `ptr->field = e` for an integer field (see
/// [`Known::stored`]): `e`'s value when the explicit state knows it, else, for `e` a
/// variable of the field's type, the cube's literals comparing it with a constant
/// (`!(x == 0)` gives `x != 0`).
fn stored_facts(
    prog: &Program,
    ex: &ExplicitState,
    cube: Option<(&Cube, &Precision)>,
    step: Step,
) -> Vec<(BinOp, i64)> {
    let Step::Edge(e) = step else {
        return Vec::new();
    };
    let Op::Store { field, src, .. } = &prog.graph[e].op else {
        return Vec::new();
    };
    let fty = &prog.field(*field).ty;
    if !fty.is_int() {
        return Vec::new();
    }
    if let crate::explicit::Value::Int(v) = crate::explicit::post::eval(ex, src) {
        return vec![(BinOp::Eq, v)];
    }
    // a comparison (`nondet() != 0`, `!x`) is 0 or 1
    if src.is_boolean() {
        return vec![(BinOp::Ge, 0), (BinOp::Le, 1)];
    }
    let (Expr::Var(x), Some((cube, prec))) = (src, cube) else {
        return Vec::new();
    };
    if prog.vars.get(*x).map(|v| &v.ty) != Some(fty) {
        return Vec::new();
    }
    cube.0
        .iter()
        .filter_map(|&(id, pos)| {
            let p = &prec.preds.get(id as usize)?.expr;
            let p = if pos { p.clone() } else { p.negate() };
            let Expr::Binary(op, a, b) = &p else {
                return None;
            };
            match (a.as_ref(), b.as_ref()) {
                (Expr::Var(y), Expr::Int(c)) if y == x => Some((*op, *c)),
                (Expr::Int(c), Expr::Var(y)) if y == x => Some((op.flip(), *c)),
                _ => None,
            }
        })
        .filter(|(op, _)| op.is_comparison())
        .collect()
}

/// What [`HeapCpa::merge`] needs of two states, as a [`MergeKey`]: equal cubes,
/// explicit heaps, loaded-field bookkeeping and component types (`exact`), and every
/// structure of the state merged in with the node names of one of the state it goes
/// into ([`crate::shape::ShapeState::merge`]; `bits`: one bit per component and
/// [`crate::tvla::Structure::join_key`]).
fn merge_key(s: &HeapState) -> MergeKey {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    s.pred.hash(&mut h);
    s.explicit.hash(&mut h);
    s.shape.loaded.hash(&mut h);
    let mut bits = 0u64;
    for (k, c) in &s.shape.comps {
        k.hash(&mut h);
        for st in c.region.structures() {
            let mut b = rustc_hash::FxHasher::default();
            k.hash(&mut b);
            st.join_key().hash(&mut b);
            bits |= 1 << (b.finish() % 64);
        }
    }
    MergeKey {
        exact: h.finish(),
        bits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `struct node`'s field `name` in `prog`.
    fn node_field(prog: &Program, name: &str) -> crate::cfa::FieldRef {
        let strukt = prog.structs.iter().position(|d| d.name == "node").unwrap();
        let field = prog.structs[strukt]
            .fields
            .iter()
            .position(|f| f.name == name)
            .unwrap();
        crate::cfa::FieldRef { strukt, field }
    }

    #[test]
    fn the_constants_stored_into_a_field_are_followed_through_parameters() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cegar");
        let parse = |f: &str| {
            crate::frontend::parse_file(&dir.join(f), &Default::default()).expect("parses")
        };
        let prog = parse("sorted_tags_safe.c");
        let tag = node_field(&prog, "tag");
        // `n->tag = tag` with push(a, 1) and push(b, 2)
        assert_eq!(field_constants(&prog, tag, &[]), vec![1, 2]);
        // and what `prev` may hold (`int prev = 1`)
        let prev = prog
            .vars
            .iter()
            .position(|v| v.name == "main::prev")
            .unwrap();
        assert_eq!(field_constants(&prog, tag, &[prev]), vec![1, 2]);
        // `n->data = d` with mk(1, NULL) and mk(0, l)
        let prog = parse("tag_param_safe.c");
        let data = node_field(&prog, "data");
        assert_eq!(field_constants(&prog, data, &[]), vec![0, 1]);
    }

    #[test]
    fn a_loaded_value_from_the_shape_domain_refines_only_an_unknown_one() {
        use crate::explicit::Value;
        let mut prog = Program::new("t.c");
        let x = prog.add_var("main::x", crate::cfa::Ty::INT, crate::cfa::Scope::Local(0));
        let mut e = ExplicitState::initial(&prog);
        // unknown: takes the shape domain's value
        assert_eq!(with_loaded(&e, x, Some(3)).unwrap().vars[x], Value::Int(3));
        assert_eq!(with_loaded(&e, x, None).unwrap().vars[x], Value::Top);
        // known: kept when it agrees, no state when it contradicts
        e.vars.set(x, Value::Int(3));
        assert!(with_loaded(&e, x, Some(3)).is_some());
        assert!(with_loaded(&e, x, Some(4)).is_none());
        assert!(with_loaded(&e, x, None).is_some());
    }

    mod props {
        use super::*;
        use crate::shape::tests::props::heaps;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            /// The fingerprint law: a state that covers another (alone, or among others
            /// in a stop-join) requires only facts the other offers. States of random
            /// heaps, their joins, and sub-cubes of random cubes.
            #[test]
            fn a_state_that_helps_to_cover_requires_only_what_the_covered_offers(
                h1 in heaps(), h2 in heaps(), h3 in heaps(),
                c1 in proptest::collection::vec(any::<bool>(), 3),
                c2 in proptest::collection::vec(any::<bool>(), 3),
            ) {
                let prog = crate::explicit::testutil::heap_prog(&["succ", "pred"], 2, 0);
                let cpa = HeapCpa::new(&prog, 1000, true);
                let class = crate::shape::tests::dll_class(&prog, &["cancel", "reach"], &["data == 0"]);
                let mut m = BTreeMap::new();
                m.insert(0, &class);
                let shape = |h| crate::shape::heap_to_shape_state(&prog, h, &m);
                let cube = |c: &[bool], keep: usize| {
                    Cube(c.iter().enumerate().take(keep).map(|(i, v)| (i as u32, *v)).collect())
                };
                let st = |pred, shape| HeapState { pred, explicit: ExplicitState::initial(&prog), shape };
                let (a, b, c) = (shape(&h1), shape(&h2), shape(&h3));
                let mut states = vec![
                    st(cube(&c1, 3), a.clone()),
                    st(cube(&c1, 1), b.clone()),
                    st(cube(&c2, 2), c.clone()),
                    st(cube(&c1, 0), a.clone()),
                ];
                if let Some(j) = a.join(&b) {
                    states.push(st(cube(&c1, 1), j.clone()));
                    if let Some(k) = j.join(&c) {
                        states.push(st(Cube::default(), k));
                    }
                }
                let fps: Vec<Fingerprint> = states.iter().map(|s| cpa.fingerprint(s)).collect();
                let mut covering = 0;
                for (i, s) in states.iter().enumerate() {
                    for (j, t) in states.iter().enumerate() {
                        if cpa.covers(t, s) {
                            covering += usize::from(i != j);
                            prop_assert!(fps[j].may_cover(&fps[i]), "{} covers {}", j, i);
                        }
                        for (k, u) in states.iter().enumerate() {
                            if let Some(used) = cpa.covers_union(&[t, u], s) {
                                for x in used {
                                    let y = [j, k][x];
                                    prop_assert!(fps[y].may_cover(&fps[i]), "{} helps to cover {}", y, i);
                                }
                            }
                        }
                    }
                }
                // reflexive coverings at least (and joins cover their parts)
                prop_assert!(covering < states.len() * states.len());
            }
        }
    }

    const WALK: &str = "#include <stdlib.h>\nextern int __VERIFIER_nondet_int(void);\nstruct node { int data; struct node *next; };\nint main(void) { struct node *l = NULL, *p; int s = 0; while (__VERIFIER_nondet_int()) { p = malloc(sizeof(struct node)); if (!p) return 0; p->data = __VERIFIER_nondet_int() != 0; p->next = l; l = p; } for (p = l; p; p = p->next) { int t = p->data; if (t > 1) s = 1; } return s; }";

    /// A field set to a comparison (`p->data = nondet() != 0`) holds 0 or 1.
    #[test]
    fn a_comparison_stored_into_a_field_gives_the_constants_0_and_1() {
        let prog = crate::testutil::parse_c(WALK);
        assert_eq!(
            field_constants(&prog, node_field(&prog, "data"), &[]),
            vec![0, 1]
        );
    }

    /// A loaded temporary (`t = p->data`) is dead at the walk's loop head, the sum `s`
    /// is not; the precision adjustment forgets only the former.
    #[test]
    fn a_loaded_temporary_is_dead_at_the_loop_head() {
        let prog = crate::testutil::parse_c(WALK);
        let dead = HeapCpa::new(&prog, 1000, true).dead_ints;
        let var = |n: &str| prog.vars.iter().position(|v| v.name == n).unwrap();
        let (t, s) = (var("main::t"), var("main::s"));
        // somewhere (the loop head among others) `t` is forgotten while `s` is kept
        assert!(dead.values().any(|d| d.contains(&t) && !d.contains(&s)));
        // and never the other way round: `s` is read at the end, `t` only in the body
        assert!(!dead.values().any(|d| d.contains(&s) && !d.contains(&t)));
    }
}
