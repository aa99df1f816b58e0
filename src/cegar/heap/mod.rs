//! The heap part of the CEGAR loop (paper Algorithms 2 and 3): a combined abstraction
//! of predicate abstraction × explicit heap, refined from interpolants.
//!
//! - The CPA ([`HeapCpa`]) is the product of [`PredAbs`] (integer and pointer
//!   (dis)equality predicates) and [`ExplicitCpa`] (explicit heaps, paper §2.2). States
//!   and precisions are serialisable, so a complete ART becomes a certificate that
//!   `check-certificate` re-checks with a fresh [`HeapCpa`] ([`check_heap_certificate`]).
//! - Refinement ([`HeapAbstraction::refine`], Algorithm 3 step 1 and the first branch
//!   of step 2): integer facts of the interpolants become predicates
//!   ([`refine_predicates`]); a pointer mentioned by an atom (as an operand, dereferenced,
//!   or as an alias) whose *pointer group* (its pointee struct type, or "other" for
//!   `void*`, `int*`, ...) is not tracked yet switches that group to explicit tracking.
//!   **Granularity**: Θ is refined per pointer group and globally (every location):
//!   a pointer variable tracked only at the interpolant's locations would be ⊤ where
//!   its value is computed (the list is built in another function, copied through
//!   front-end temporaries), so the explicit heap would never see the structure; this is
//!   the granularity at which Algorithm 2 switches a struct type from explicit to shape
//!   tracking ("remove all x from Θ(l) s.t. type(x) = type(p)"). The pivot of such a
//!   refinement is the root (the ART is rebuilt; it happens at most once per group).
//!   When neither new predicates nor new pointer groups are found, the integer variables
//!   of the atoms are tracked explicitly (values loaded from the heap are invisible to
//!   predicate abstraction, which havocs loads); only then does the refinement fail.
//! - Threshold (BuildART's condition (c)): 5 distinct explicit heaps of depth ≥ 4 at
//!   loop heads or in `main` (50 elsewhere). `Abstract` (Algorithm 2) classifies them,
//!   restricts E(σ), picks the coarsest SCG anchored on the recognised structure and
//!   hands the type to the shape domain (rebuilding the ART from the root). Without an
//!   SCG library the explicit analysis runs without threshold (fixed-size heaps
//!   complete; unbounded ones end at a limit → UNKNOWN, bugs are still found).
//! - Refinement of shape-tracked types: tracking definition first, then FineTune
//!   (oracle: the shape replay of the path); when neither applies the type falls back
//!   to explicit heaps without threshold.
//!
//! Soundness: SAFE and UNSAFE come only from [`super::model_check`], which checks the
//! certificate with a fresh CPA and replays counterexamples.

pub mod cert;

use super::predicates::refine_predicates;
use super::{Abstraction, RefineInput, Refinement};
use crate::art::{Art, ArtId};
use crate::cert::Certificate;
use crate::cfa::{BinOp, Expr, Node, Op, Program, Step, StructId, VarId};
use crate::cpa::Cpa;
use crate::explicit::{
    classify, CellTy, Classification, ExplicitCpa, ExplicitPrec, ExplicitState, SampleCollector,
    SampleThreshold,
};
use crate::predabs::{Cube, Precision, PredAbs, PredScope};
use crate::scg::{fine_tune, EnabledSets, Lattice, Scg, TrackingDef};
use crate::shape::{Known, ShapeCpa, ShapePrec, ShapeState};
use crate::smt::atoms::Operand;
use crate::tvla::ShapeClass;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The name of [`HeapCpa`] with one joined region of shape structures per state
/// ([`HeapOptions::shape_joined`]) in certificates.
pub const HEAP_CPA_NAME: &str = "pred+explicit+shape";
/// The name of [`HeapCpa`] with one shape structure per state (the default) in
/// certificates.
pub const HEAP_SPLIT_CPA_NAME: &str = "pred+explicit+shape/split";

/// Experiment switches of the heap abstraction (`verify --shape-joined`,
/// `--no-heap-pointer-predicates`, `--separate-mentioned-only`); the defaults are what measured
/// best on the gdsl benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapOptions {
    /// One joined region of shape structures per ART node instead of one structure
    /// per node (measured with merging on: same scoreboard verdicts, but
    /// gdsl/bintree_rotate_left does not finish: merged regions only join within the
    /// names they already have and keep many fat structures per node).
    pub shape_joined: bool,
    /// Drop interpolant predicates over pointers the heap domains already track
    /// (the shape domain then decides their (dis)equalities alone).
    pub filter_heap_pointer_predicates: bool,
    /// Only the pointers the interpolants mentioned are separating when shape
    /// tracking starts (the paper's Ts, grown by tracking-definition refinement);
    /// default: every `struct σ *` variable (measured: the gdsl proofs need fewer
    /// refinements and no per-pointer reachability, e.g. treep_rotate_left 13 s with
    /// `tree-parent{cancel, share}` against a time-out with `{cancel, reach, share}`).
    pub separate_mentioned_only: bool,
    /// Keep every shape region a set of distinct structures (no partial join). By
    /// default regions join structures with equal node names
    /// ([`crate::tvla::ShapeClass::partial_join`]) until a refinement of the type fails.
    pub no_partial_join: bool,
    /// FineTune results go only to the functions of the error path that need them
    /// (per-function classes, see [`HeapAbstraction::fn_scg`]); default: everywhere.
    pub local_scg: bool,
    /// Shape classes track possibly uninitialised or dangling fields with per-variable
    /// `uninit` flags (a field becomes unknown in every cell once the variable dies);
    /// default: the per-cell `un[f]` predicates ([`crate::shape::with_uninit_preds`]),
    /// measured 9 more correct svcomp tasks and no loss (scoreboard 81 against 72).
    pub per_variable_uninit: bool,
    /// When the samplers must stop (`--scg maximal`'s up-front sampling runs before the
    /// CEGAR loop's time limit is set): `verify`'s time limit.
    pub sample_deadline: Option<std::time::Instant>,
}

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
}

impl HeapCpa {
    /// A fresh CPA (no caches) for `prog` with the given Z3 timeout per abstraction
    /// query; `split`: one shape structure per state (see [`HeapOptions`]).
    pub fn new(prog: &Program, timeout_ms: u32, split: bool) -> HeapCpa {
        HeapCpa {
            pred: PredAbs::new(timeout_ms),
            explicit: ExplicitCpa,
            shape: if split {
                ShapeCpa::new(prog)
            } else {
                ShapeCpa::new(prog).joined()
            },
        }
    }
    /// Whether shape regions are joined per state (the default) or split.
    pub fn is_split(&self) -> bool {
        !self.shape.is_joined()
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
        let mut out = Vec::with_capacity(pairs.len() * pr.len());
        for p in &pr {
            for (e, g) in &pairs {
                out.push(HeapState {
                    pred: p.clone(),
                    explicit: e.clone(),
                    shape: g.clone(),
                });
            }
        }
        out
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
        HeapState {
            pred: self.pred.adjust(s.pred, at, &prec.pred),
            explicit: self.explicit.adjust(s.explicit, at, &prec.explicit),
            shape: self.shape.adjust(s.shape, at, &prec.shape),
        }
    }
}

/// At most this many constants of a field become field assertions ([`field_constants`]).
const MAX_FIELD_CONSTANTS: usize = 8;

/// The integer constants the program may store into `field` or assign to one of the
/// variables `also` (the other side of a comparison with the field): the constant
/// sources of every `p->field = e` and of `also`, following copies, parameters and
/// return values back to constant assignments (sorted; empty when there are more than
/// [`MAX_FIELD_CONSTANTS`]). Only a choice of predicates: values that come from
/// elsewhere (input, arithmetic, loads) are simply not among them.
fn field_constants(prog: &Program, field: crate::cfa::FieldRef, also: &[VarId]) -> Vec<i64> {
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
            _ => {}
        }
    }
    out.into_iter().collect()
}

/// What the explicit state and the predicate cube before `step` know that the shape
/// domain can use ([`Known`]): for a store, the facts on the stored integer
/// ([`stored_facts`]); for `assume(a rel b)`, the values the explicit state knows of
/// the integer variables `a` and `b`.
fn known_facts(
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

/// The explicit successor `e` of `dst = ptr->field` met with a shape successor that
/// gives the loaded value `val` ([`ShapeState::split_field_value`]; `None`: unknown):
/// `dst` becomes `val` where `e` does not know it; `None` (no state) when `e` knows a
/// different value.
fn with_loaded(e: &ExplicitState, dst: VarId, val: Option<i64>) -> Option<ExplicitState> {
    use crate::explicit::Value;
    match (e.vars.get(dst).copied()?, val) {
        (Value::Top, Some(k)) => {
            let mut e = e.clone();
            e.vars[dst] = Value::Int(k);
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

/// The group a pointer variable belongs to for tracking decisions: the struct type it
/// points to, or `Other` (pointers to scalars, `void*`, pointers to pointers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PtrGroup {
    Struct(StructId),
    Other,
}

impl PtrGroup {
    /// The group of variable `x`, or `None` if `x` is not a pointer (or does not exist).
    pub fn of(prog: &Program, x: VarId) -> Option<PtrGroup> {
        let v = prog.vars.get(x)?;
        if !v.ty.is_ptr() {
            return None;
        }
        Some(match v.ty.pointee_struct() {
            Some(s) => PtrGroup::Struct(s),
            None => PtrGroup::Other,
        })
    }
    /// `struct node` or `other pointers`.
    pub fn name(self, prog: &Program) -> String {
        match self {
            PtrGroup::Struct(s) => prog
                .structs
                .get(s)
                .map_or_else(|| format!("struct #{s}"), |d| format!("struct {}", d.name)),
            PtrGroup::Other => "other pointers".into(),
        }
    }
}

impl fmt::Display for PtrGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtrGroup::Struct(s) => write!(f, "struct#{s}"),
            PtrGroup::Other => write!(f, "other"),
        }
    }
}

/// How the pointers of a struct type are tracked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeMode {
    /// On explicit heaps (sampling until the threshold).
    Explicit,
    /// On explicit heaps for good: no SCG is enabled by the samples.
    ExplicitFinal,
    /// By the shape domain with this SCG and tracking definition (shape type (σ, m, D)).
    Shape { scg: Scg, d: TrackingDef },
}

/// Most abstract states [`HeapAbstraction::product_rules_out`] keeps at one step.
const PRODUCT_REPLAY_STATES: usize = 64;

/// The combined abstraction under CEGAR (see the module documentation).
#[derive(Debug)]
pub struct HeapAbstraction {
    pub cpa: HeapCpa,
    pub prec: HeapPrec,
    pub scope: PredScope,
    /// Z3 timeout per abstraction query (ms).
    pub timeout_ms: u32,
    /// Experiment switches.
    pub options: HeapOptions,
    /// Upper bound on atoms taken from one interpolant.
    pub max_atoms: usize,
    /// Pointer groups tracked on explicit heaps.
    pub explicit_groups: BTreeSet<PtrGroup>,
    /// Integer variables tracked explicitly (fallback refinement).
    pub explicit_ints: BTreeSet<VarId>,
    /// Integer variables known to take few values, tracked explicitly from the start
    /// ([`HeapAbstraction::track_ints_explicitly`]); they never become counters.
    pub finite_ints: BTreeSet<VarId>,
    /// How SCGs are chosen once the shape domain takes over.
    pub scg_mode: crate::scg::ScgMode,
    /// The mode of each struct type whose pointers are tracked.
    pub types: BTreeMap<StructId, TypeMode>,
    /// Shape-tracked types whose regions no longer use the partial join (a refinement
    /// failed with it).
    pub unjoined: BTreeSet<StructId>,
    /// Counters of the shape-tracked struct types (see `shape::numeric`): program
    /// integers whose relation to the number of cells a proof needs. Added by a
    /// "count" refinement.
    pub counters: BTreeMap<StructId, Vec<String>>,
    /// Per-function SCGs of shape-tracked types, each finer than the type's SCG in
    /// [`TypeMode::Shape`]: FineTune's result is kept only in the functions of the error
    /// path that need it (the paper's precision is per location, Ψ(l)); every location
    /// of such a function gets the finer class as a [`ShapePrec::set_at`] override.
    pub fn_scg: BTreeMap<StructId, BTreeMap<crate::cfa::FuncId, Scg>>,
    /// The SCG lattice M (None: the library did not load; no shape analysis).
    pub lattice: Option<Lattice>,
    /// E(σ), by struct name.
    pub enabled: EnabledSets,
    /// Pointer variables mentioned by interpolants so far (candidates for Ts).
    pub mentioned: BTreeSet<VarId>,
    /// Fields mentioned by interpolants so far (to choose among the coarsest SCGs).
    pub mentioned_fields: BTreeMap<String, usize>,
    /// How often the program reads each pointer field (`x = y->f`): the field a program
    /// walks along is the `next` of its lists (orientation of SCG bindings).
    pub field_reads: BTreeMap<String, usize>,
    /// BuildART's condition (c).
    pub sample_threshold: SampleThreshold,
    collector: RefCell<SampleCollector>,
    /// Samples taken elsewhere (see [`Abstraction::threshold`]).
    inner_collector: RefCell<SampleCollector>,
    /// Loop heads of the program (targets of DFS back edges from function entries).
    loop_heads: BTreeSet<Node>,
    /// The wall-clock deadline of the run (FineTune stops asking its oracle after it).
    deadline: std::cell::Cell<Option<std::time::Instant>>,
    /// The body of the last certificate [`Abstraction::seal`] produced (what `verify`
    /// writes): taken with [`HeapAbstraction::take_sealed`].
    sealed: RefCell<Option<cert::HeapBody>>,
    /// Whether a SAFE verdict keeps its certificate body (`verify --certificate`);
    /// default true.
    pub keep_certificate: bool,
    /// Counters for the report.
    pub abstractions: usize,
    pub fine_tune_calls: usize,
    pub fine_tune_oracle_calls: usize,
}

/// An error path prepared for replay in the shape domain alone
/// ([`HeapAbstraction::path_replay`]).
struct PathReplay {
    shape: ShapeCpa,
    steps: Vec<(Step, Node)>,
    /// Per step: what the explicit domain and the predicate cubes along the path know
    /// (of the integer stored into a field, of the integers an assume compares).
    stored: Vec<Known>,
    /// Replay only the steps from this position on, starting in this state (converted
    /// into the candidate classes); from the initial state at the root when None.
    start: Option<(usize, ShapeState)>,
}

impl PathReplay {
    /// True if the path's shape post is empty with `class` for type `s` (the other
    /// types keep their classes in `base`): the class rules the path out.
    fn rules_out(&self, prog: &Program, base: &ShapePrec, s: StructId, class: ShapeClass) -> bool {
        let mut p = base.clone();
        p.set_global(s, class);
        for m in p.at.values_mut() {
            m.remove(&s);
        }
        self.rules_out_with(prog, &p)
    }

    /// True if the path's shape post is empty under precision `p`.
    fn rules_out_with(&self, prog: &Program, p: &ShapePrec) -> bool {
        let (from, init) = match &self.start {
            None => (0, ShapeState::initial(p, prog.entry)),
            Some((i, st)) => {
                let at = if *i == 0 {
                    prog.entry
                } else {
                    self.steps.get(i - 1).map_or(prog.entry, |&(_, to)| to)
                };
                (*i, st.converted(p, at))
            }
        };
        let stored_at = |i: usize| {
            self.stored
                .get(from + i)
                .unwrap_or(&crate::shape::NOTHING_KNOWN)
        };
        let steps = self.steps.get(from..).unwrap_or(&[]);
        self.shape
            .path_post(prog, &init, steps, p, &stored_at)
            .is_none()
    }
}

/// The shape precision `base` with type `s` at SCG `m` everywhere except in the
/// functions of `local`, whose locations get their own SCG (all with tracking
/// definition `d`, the partial join flag `join` and, with `uninit`, the `un[f]`
/// predicates).
#[allow(clippy::too_many_arguments)]
fn shape_prec_for(
    prog: &Program,
    lat: &Lattice,
    base: &ShapePrec,
    s: StructId,
    m: &Scg,
    local: &BTreeMap<crate::cfa::FuncId, Scg>,
    d: &TrackingDef,
    join: bool,
    uninit: bool,
    counters: &[String],
) -> ShapePrec {
    let class = |m: &Scg| {
        cert::ClassRecipe {
            strukt: s,
            scg: m.clone(),
            d: d.clone(),
            partial_join: join,
            uninit,
            counters: counters.to_vec(),
        }
        .generate(prog, lat)
    };
    let mut p = base.clone();
    p.set_global(s, class(m));
    for o in p.at.values_mut() {
        o.remove(&s);
    }
    p.at.retain(|_, o| !o.is_empty());
    let classes: BTreeMap<crate::cfa::FuncId, ShapeClass> =
        local.iter().map(|(f, c)| (*f, class(c))).collect();
    for n in prog.graph.node_indices() {
        if let Some(c) = classes.get(&prog.graph[n].func) {
            p.set_at(n, s, c.clone());
        }
    }
    p
}

/// [`HeapAbstraction::place_scg`]'s search: the per-function SCGs (`local` updated in
/// the path's functions) under which the path is ruled out, or None.
#[allow(clippy::too_many_arguments)]
fn localise(
    abs: &HeapAbstraction,
    prog: &Program,
    lat: &Lattice,
    s: StructId,
    m: &Scg,
    m2: &Scg,
    d: &TrackingDef,
    local: &BTreeMap<crate::cfa::FuncId, Scg>,
    input: &RefineInput<'_, HeapState>,
) -> Option<BTreeMap<crate::cfa::FuncId, Scg>> {
    let mut funcs: Vec<crate::cfa::FuncId> = Vec::new();
    for l in input.locs {
        let f = prog.graph.node_weight(*l)?.func;
        if !funcs.contains(&f) {
            funcs.push(f);
        }
    }
    // a change of structure or binding (which fields are tracked) is the type's
    if m.structure() != m2.structure() || m.binding() != m2.binding() {
        return None;
    }
    // only families instantiated per pointer (`family f for x`, e.g. reachability from
    // each variable) are placed per function: they multiply the structures of every
    // walk; the others (cancellation, sharing, acyclicity) cost little and are needed
    // wherever the structure is updated, so they go everywhere at once
    let st = lat.library().structure(m2.structure()?)?;
    let per_pointer = |f: &String| {
        st.families
            .iter()
            .find(|x| &x.name == f)
            .is_some_and(|x| !x.pointers.is_empty())
    };
    if !m2
        .families()
        .filter(|f| !m.families().any(|g| g == *f))
        .all(per_pointer)
    {
        return None;
    }
    let mut cand = local.clone();
    for &f in &funcs {
        let cur = local.get(&f).unwrap_or(m);
        cand.insert(f, lat.join(cur, m2)?);
    }
    let join = abs.joins(s);
    let uninit = !abs.options.per_variable_uninit;
    let base = &abs.prec.shape;
    let counters = abs.counters.get(&s).cloned().unwrap_or_default();
    let replay = abs.path_replay(prog, input);
    let rules_out = |c: &BTreeMap<crate::cfa::FuncId, Scg>| {
        replay.rules_out_with(
            prog,
            &shape_prec_for(prog, lat, base, s, m, c, d, join, uninit, &counters),
        )
    };
    if !rules_out(&cand) {
        return None;
    }
    // the error's function first: checks at the end of a path are often walks whose
    // states multiply with every predicate, while the updates before them need them
    for &f in funcs.iter().rev() {
        let was = cand.clone();
        match local.get(&f) {
            Some(c) => cand.insert(f, c.clone()),
            None => cand.remove(&f),
        };
        if cand == was {
            continue;
        }
        if !rules_out(&cand) {
            cand = was;
        }
    }
    cand.retain(|_, c| c != m);
    Some(cand)
}

/// The pointer fields of struct `s` that point to `s` (the fields SCG roles bind to).
fn own_ptr_fields(prog: &Program, s: StructId) -> Vec<String> {
    prog.structs.get(s).map_or(vec![], |d| {
        d.fields
            .iter()
            .filter(|f| f.ty.pointee_struct() == Some(s))
            .map(|f| f.name.clone())
            .collect()
    })
}

/// The roles of the recognised data structure bound to field names (`next` → `succ`),
/// to orient SCG bindings like the samples (a DLL's `next` is the field heads start
/// along).
fn chosen_roles(prog: &Program, ds: &crate::explicit::DataStructure) -> BTreeMap<String, String> {
    use crate::explicit::DataStructure as D;
    let names: &[&str] = match ds {
        D::Unknown => &[],
        D::Sll { .. } => &["next"],
        D::Dll { .. } => &["next", "prev"],
        D::Tree { .. } => &["left", "right"],
        D::TreeParent { .. } => &["left", "right", "parent"],
        D::ListOfLists { .. } => &["next", "down", "sub_next"],
    };
    names
        .iter()
        .zip(ds.fields())
        .map(|(r, f)| (r.to_string(), prog.field(f).name.clone()))
        .collect()
}

/// How many roles of `m` are bound like in `roles`.
fn agreement(m: &Scg, roles: &BTreeMap<String, String>) -> usize {
    m.binding().map_or(0, |b| {
        b.iter().filter(|(r, f)| roles.get(*r) == Some(*f)).count()
    })
}

/// The loop heads of `prog`: targets of back edges of a depth-first search from every
/// function entry (intraprocedural edges).
fn loop_heads(prog: &Program) -> BTreeSet<Node> {
    use petgraph::visit::{depth_first_search, DfsEvent};
    let entries: Vec<Node> = prog
        .graph
        .node_indices()
        .filter(|&n| prog.graph[n].kind == crate::cfa::LocKind::FuncEntry)
        .collect();
    let mut out = BTreeSet::new();
    depth_first_search(&prog.graph, entries, |e| {
        if let DfsEvent::BackEdge(_, to) = e {
            out.insert(to);
        }
    });
    out
}

/// States the program sampler may explore for an abstraction before the threshold
/// ([`HeapAbstraction::abstract_early`]; about 0.15 s).
const EARLY_SAMPLE_BUDGET: usize = 20_000;

/// The threshold of the collector of samples taken elsewhere: 10 times as many.
fn inner_threshold(th: SampleThreshold) -> SampleThreshold {
    SampleThreshold {
        samples: 10 * th.samples,
        ..th
    }
}

fn struct_name(prog: &Program, s: StructId) -> String {
    prog.structs
        .get(s)
        .map_or_else(|| format!("#{s}"), |d| d.name.clone())
}

impl HeapAbstraction {
    /// The initial abstraction: no predicates, Θ = ∅, every struct type untracked
    /// (`--scg refine`), or every recursive struct type shape-tracked with the finest SCG
    /// its samples enable (`--scg maximal`, Table 1's first column). `lattice` is the
    /// SCG library (None disables shape analysis: explicit heaps only).
    pub fn new(
        prog: &Program,
        scope: PredScope,
        timeout_ms: u32,
        scg_mode: crate::scg::ScgMode,
        lattice: Option<Lattice>,
        options: HeapOptions,
    ) -> Self {
        let th = SampleThreshold::default();
        let mut a = HeapAbstraction {
            cpa: HeapCpa::new(prog, timeout_ms, !options.shape_joined),
            prec: HeapPrec {
                merge_at: loop_heads(prog),
                ..Default::default()
            },
            scope,
            timeout_ms,
            options,
            max_atoms: 64,
            explicit_groups: BTreeSet::new(),
            explicit_ints: BTreeSet::new(),
            finite_ints: BTreeSet::new(),
            scg_mode,
            types: BTreeMap::new(),
            unjoined: BTreeSet::new(),
            counters: BTreeMap::new(),
            fn_scg: BTreeMap::new(),
            lattice,
            enabled: EnabledSets::new(),
            mentioned: BTreeSet::new(),
            mentioned_fields: BTreeMap::new(),
            field_reads: prog
                .graph
                .edge_weights()
                .filter_map(|e| match &e.op {
                    crate::cfa::Op::Load { field, .. } => Some(prog.field(*field).name.clone()),
                    _ => None,
                })
                .fold(BTreeMap::new(), |mut m, f| {
                    *m.entry(f).or_insert(0usize) += 1;
                    m
                }),
            sample_threshold: th,
            collector: RefCell::new(SampleCollector::new(th)),
            inner_collector: RefCell::new(SampleCollector::new(inner_threshold(th))),
            loop_heads: loop_heads(prog),
            deadline: std::cell::Cell::new(None),
            sealed: RefCell::new(None),
            keep_certificate: true,
            abstractions: 0,
            fine_tune_calls: 0,
            fine_tune_oracle_calls: 0,
        };
        if scg_mode == crate::scg::ScgMode::Maximal {
            a.start_maximal(prog);
        }
        a
    }

    /// Algorithm 2's per-type step: restricts E(σ) to the SCGs the classification `c`
    /// supports and puts σ under shape tracking with the coarsest of them (anchored on
    /// the recognised structure). Returns that SCG; with none enabled, σ stays explicit
    /// for good (`ExplicitFinal`).
    fn abstract_type(&mut self, prog: &Program, lat: &Lattice, c: &Classification) -> Option<Scg> {
        let s = c.strukt;
        let holding = c.holding_invariants(prog);
        tracing::debug!("Abstract: holding invariants {holding:?}");
        let name = struct_name(prog, s);
        let e: Vec<Scg> = self
            .enabled
            .restrict(&name, lat, &holding)
            .iter()
            .cloned()
            .collect();
        let d = self.initial_td(prog, s);
        let recognised = c.chosen.invariant().map(|i| i.name());
        match self.choose_coarsest(lat, &e, &d, &chosen_roles(prog, &c.chosen), recognised) {
            Some(m) => {
                tracing::info!(
                    "Abstract: struct {name} is a {} {:?}, fields in interpolants {:?} → {m}",
                    c.chosen,
                    chosen_roles(prog, &c.chosen),
                    self.mentioned_fields
                );
                self.set_shape(prog, s, m.clone(), d);
                Some(m)
            }
            None => {
                tracing::info!(
                    "Abstract: no SCG enabled for struct {name} ({}); stays explicit",
                    c.chosen
                );
                self.types.insert(s, TypeMode::ExplicitFinal);
                None
            }
        }
    }

    /// Abstract before the threshold: struct types of `groups` still on explicit heaps
    /// whose refinement learned nothing (the interpolants need field facts, which only
    /// the shape domain's field assertions track, and the ART found the error before
    /// BuildART's sampling threshold) are classified on the samples of the program
    /// sampler (`shapemc samples`, as `--scg maximal` does) and handed to the shape
    /// domain (not under `--scg maximal`). Returns what changed.
    fn abstract_early(&mut self, prog: &Program, groups: &BTreeSet<PtrGroup>) -> Vec<String> {
        // `--scg maximal` chose its classes up front (Table 1's first column)
        if self.scg_mode == crate::scg::ScgMode::Maximal {
            return Vec::new();
        }
        let Some(lat) = self.lattice.clone() else {
            return Vec::new();
        };
        let pending: Vec<StructId> = self
            .types
            .iter()
            .filter(|(s, m)| **m == TypeMode::Explicit && groups.contains(&PtrGroup::Struct(**s)))
            .map(|(s, _)| *s)
            .collect();
        if pending.is_empty() {
            return Vec::new();
        }
        // a tenth of the sampler's default budget: this runs on a failing refinement,
        // often of a program whose nondeterministic data keeps structures shallow
        let cfg = crate::explicit::sample::SamplerConfig {
            state_budget: EARLY_SAMPLE_BUDGET,
            deadline: self.deadline.get(),
            ..Default::default()
        };
        let report = crate::explicit::sample_program(prog, &cfg);
        let mut out = Vec::new();
        for s in pending {
            let Some(c) = report.classifications.iter().find(|c| c.strukt == s) else {
                continue;
            };
            self.abstractions += 1;
            if let Some(m) = self.abstract_type(prog, &lat, c) {
                out.push(format!(
                    "struct {}: abstracted before the sampling threshold → {m}",
                    struct_name(prog, s)
                ));
            }
        }
        out
    }

    /// `--scg maximal`: classify every struct type on explicit samples of the program
    /// (the sampler of `shapemc samples`), enable the SCGs the samples support and
    /// shape-track every pointer of the type with the finest of them.
    fn start_maximal(&mut self, prog: &Program) {
        let Some(lat) = &self.lattice else { return };
        let cfg = crate::explicit::sample::SamplerConfig {
            deadline: self.options.sample_deadline,
            ..Default::default()
        };
        let report = crate::explicit::sample_program(prog, &cfg);
        let mut chosen = Vec::new();
        for c in &report.classifications {
            let s = c.strukt;
            if own_ptr_fields(prog, s).is_empty() {
                continue;
            }
            let holding = c.holding_invariants(prog);
            let e: Vec<Scg> = self
                .enabled
                .restrict(&struct_name(prog, s), lat, &holding)
                .iter()
                .cloned()
                .collect();
            // the finest: most roles, then most families, then most predicates
            let d = self.initial_td(prog, s);
            let roles = chosen_roles(prog, &c.chosen);
            let best = e.into_iter().max_by_key(|m| {
                (
                    m.binding().map_or(0, |b| b.len()),
                    m.binding().map_or(vec![], |b| {
                        b.values()
                            .map(|f| self.field_reads.get(f).copied().unwrap_or(0))
                            .collect::<Vec<_>>()
                    }),
                    agreement(m, &roles),
                    m.families().count(),
                    lat.generate(m, &d).num_preds(),
                    std::cmp::Reverse(m.clone()),
                )
            });
            if let Some(m) = best {
                chosen.push((s, m, d));
            }
        }
        for (s, m, d) in chosen {
            self.set_shape(prog, s, m, d);
        }
    }

    /// The tracking definition a struct type starts shape tracking with: T = every
    /// pointer variable of type `struct σ *` (front-end temporaries included: the
    /// shape domain only sees values held by tracked pointers), Ts = T, or the pointers
    /// the interpolants mentioned so far with [`HeapOptions::separate_mentioned_only`]
    /// (except under `--scg maximal`).
    fn initial_td(&self, prog: &Program, s: StructId) -> TrackingDef {
        let all = crate::shape::pointer_vars(prog, s);
        let sep: Vec<String> = if self.scg_mode == crate::scg::ScgMode::Maximal
            || !self.options.separate_mentioned_only
        {
            all.clone()
        } else {
            self.mentioned
                .iter()
                .filter(|&&x| PtrGroup::of(prog, x) == Some(PtrGroup::Struct(s)))
                .map(|&x| prog.vars[x].name.clone())
                .collect()
        };
        TrackingDef::new(all, sep, Vec::<String>::new())
    }

    /// Puts struct type `s` under shape tracking with SCG `m` and tracking definition
    /// `d` (global class), removing its pointers from the explicit abstraction.
    fn set_shape(&mut self, prog: &Program, s: StructId, m: Scg, d: TrackingDef) -> bool {
        let Some(lat) = &self.lattice else {
            return false;
        };
        let local = self.fn_scg.get(&s).cloned().unwrap_or_default();
        let p = shape_prec_for(
            prog,
            lat,
            &self.prec.shape,
            s,
            &m,
            &local,
            &d,
            self.joins(s),
            !self.options.per_variable_uninit,
            self.counters.get(&s).map_or(&[][..], |c| &c[..]),
        );
        let changed = self.prec.shape != p;
        self.prec.shape = p;
        if changed {
            // a new class changes what a merge loses: every loop head may merge again
            // (the ART restarts; bounded, since classes only get finer)
            self.prec.merge_at = self.loop_heads.clone();
        }
        for x in 0..prog.vars.len() {
            if PtrGroup::of(prog, x) == Some(PtrGroup::Struct(s)) {
                self.prec.explicit.remove_everywhere(x);
            }
        }
        self.explicit_groups.remove(&PtrGroup::Struct(s));
        let old = self.types.insert(s, TypeMode::Shape { scg: m, d });
        changed || !matches!(old, Some(TypeMode::Shape { .. }))
    }

    /// Places FineTune's result `m2` (finer than the type's SCG `m`) for type `s`: in
    /// the functions of the error path, each keeps its SCG if the path is still ruled
    /// out without `m2` there, else gets its SCG joined with `m2` (functions are tried
    /// from the path's end, each check a replay of the path). Only under `--local-scg`
    /// and for an `m2` of `m`'s structure and binding that adds only families
    /// instantiated per pointer; otherwise, or when the joins do not rule the path
    /// out, `m2` becomes the type's SCG everywhere (finer per-function SCGs are joined
    /// with it). Returns where `m2` went.
    fn place_scg(
        &mut self,
        prog: &Program,
        s: StructId,
        m: Scg,
        m2: Scg,
        d: TrackingDef,
        input: &RefineInput<'_, HeapState>,
    ) -> String {
        let local = self.fn_scg.get(&s).cloned().unwrap_or_default();
        let localised = match &self.lattice {
            Some(lat) if self.options.local_scg => {
                localise(self, prog, lat, s, &m, &m2, &d, &local, input)
            }
            _ => None,
        };
        let name = struct_name(prog, s);
        match localised {
            Some(cand) => {
                let funcs: Vec<&str> = cand
                    .iter()
                    .filter(|(f, c)| local.get(f) != Some(c))
                    .map(|(f, _)| prog.functions[*f].name.as_str())
                    .collect();
                let msg = format!("struct {name}: SCG {m2} in {}", funcs.join(", "));
                self.fn_scg.insert(s, cand);
                self.set_shape(prog, s, m, d);
                msg
            }
            None => {
                let lat = self.lattice.as_ref();
                let joined: BTreeMap<crate::cfa::FuncId, Scg> = local
                    .iter()
                    .filter_map(|(f, c)| lat.and_then(|l| l.join(c, &m2)).map(|j| (*f, j)))
                    .filter(|(_, j)| *j != m2)
                    .collect();
                self.fn_scg.insert(s, joined);
                self.set_shape(prog, s, m2.clone(), d);
                format!("struct {name}: SCG {m} → {m2}")
            }
        }
    }

    /// The recipe of every shape class the current precision uses (per struct type,
    /// the type's SCG and, under `--local-scg`, each per-function SCG), which
    /// certificates name classes by ([`cert`]).
    pub fn class_recipes(&self) -> Vec<cert::ClassRecipe> {
        let mut out = Vec::new();
        for (s, m) in &self.types {
            let TypeMode::Shape { scg, d } = m else {
                continue;
            };
            let local = self.fn_scg.get(s).into_iter().flat_map(|f| f.values());
            for m in std::iter::once(scg).chain(local) {
                let r = cert::ClassRecipe {
                    strukt: *s,
                    scg: m.clone(),
                    d: d.clone(),
                    partial_join: self.joins(*s),
                    uninit: !self.options.per_variable_uninit,
                    counters: self.counters.get(s).cloned().unwrap_or_default(),
                };
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// The body of the certificate the last SAFE verdict checked (see
    /// [`cert`]), once.
    pub fn take_sealed(&self) -> Option<cert::HeapBody> {
        self.sealed.take()
    }

    /// SHA-256 of the SCG library the classes come from (None: no library).
    pub fn library_sha256(&self) -> Option<String> {
        self.lattice
            .as_ref()
            .map(|l| l.library().sha256().to_string())
    }

    /// Whether the regions of type `s` use the partial join: by default under SCG
    /// refinement, until a refinement of `s` fails with it; never under `--scg maximal`.
    fn joins(&self, s: StructId) -> bool {
        !self.options.no_partial_join
            && self.scg_mode != crate::scg::ScgMode::Maximal
            && !self.unjoined.contains(&s)
    }

    /// Switches pointer group `g` to explicit tracking: every pointer variable of the
    /// group is tracked at every location. Returns whether Θ changed.
    pub fn track_group(&mut self, prog: &Program, g: PtrGroup) -> bool {
        if let PtrGroup::Struct(s) = g {
            if self.types.contains_key(&s) {
                return false;
            }
            self.types.insert(s, TypeMode::Explicit);
        }
        if !self.explicit_groups.insert(g) {
            return false;
        }
        let mut changed = false;
        for x in 0..prog.vars.len() {
            if PtrGroup::of(prog, x) == Some(g) {
                changed |= self.prec.explicit.everywhere.insert(x);
            }
        }
        // Pointers of other groups may carry values of this group (casts from void*):
        // they are tracked with the group `Other`.
        if g != PtrGroup::Other {
            changed |= self.track_group(prog, PtrGroup::Other);
        }
        changed
    }

    /// The pointer groups the atoms of the interpolants mention (operands, dereferenced
    /// pointers, aliases, and the struct types of the fields they read); records the
    /// mentioned pointers and fields.
    fn mentioned_groups(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
    ) -> BTreeSet<PtrGroup> {
        let mut out = BTreeSet::new();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                for &x in a.pointers.iter().chain(&a.dereferenced) {
                    if let Some(g) = PtrGroup::of(prog, x) {
                        out.insert(g);
                        self.mentioned.insert(x);
                    }
                }
                for f in &a.fields {
                    out.insert(PtrGroup::Struct(f.strukt));
                    *self
                        .mentioned_fields
                        .entry(prog.field(*f).name.clone())
                        .or_default() += 1;
                }
            }
            for &(x, y) in &item.aliases {
                for z in [x, y] {
                    if let Some(g) = PtrGroup::of(prog, z) {
                        out.insert(g);
                        self.mentioned.insert(z);
                    }
                }
            }
        }
        out
    }

    /// Tracks the integer variables `vars` explicitly everywhere from now on (variables
    /// of other types are ignored). For variables known to take few values, e.g. the
    /// object numbers of [`crate::promote`].
    pub fn track_ints_explicitly(&mut self, prog: &Program, vars: &[VarId]) {
        for &x in vars {
            if prog.vars.get(x).is_some_and(|v| v.ty.is_int()) {
                self.explicit_ints.insert(x);
                self.finite_ints.insert(x);
                self.prec.explicit.everywhere.insert(x);
            }
        }
    }

    /// Integer variables the atoms mention that are not tracked explicitly yet.
    fn mentioned_ints(
        &self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
    ) -> BTreeSet<VarId> {
        let mut out = BTreeSet::new();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                for &x in &a.vars {
                    if prog.vars.get(x).is_some_and(|v| v.ty.is_int())
                        && !self.explicit_ints.contains(&x)
                    {
                        out.insert(x);
                    }
                }
            }
        }
        out
    }

    /// The shape-tracked types among `groups`, with their SCG and tracking definition.
    fn shape_types_in(&self, groups: &BTreeSet<PtrGroup>) -> Vec<(StructId, Scg, TrackingDef)> {
        self.types
            .iter()
            .filter_map(|(s, m)| match m {
                TypeMode::Shape { scg, d } if groups.contains(&PtrGroup::Struct(*s)) => {
                    Some((*s, scg.clone(), d.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// The "count" refinement: for each shape-tracked type of `groups`, the counters
    /// (see `shape::numeric`) made of the signed `int` variables the interpolants
    /// mention or that are tracked explicitly, closed under the copies the path makes
    /// between them (`x = y ± k`, parameters), when with them the type's current class
    /// rules the path out. They leave the explicit abstraction (their values
    /// would make every iteration a new state). Returns what was added, or None.
    fn refine_counters(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        groups: &BTreeSet<PtrGroup>,
    ) -> Option<Vec<String>> {
        use crate::shape::numeric::counter_type;
        let mut ints: BTreeSet<VarId> = self.explicit_ints.clone();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                ints.extend(a.vars.iter().copied());
            }
        }
        ints.retain(|&x| counter_type(prog, x) && !self.finite_ints.contains(&x));
        if ints.is_empty() {
            return None;
        }
        // copies along the path
        let copy_of = |e: &crate::cfa::Expr| -> Option<VarId> {
            use crate::cfa::{BinOp, Expr};
            match e {
                Expr::Var(y) => Some(*y),
                Expr::Binary(BinOp::Add | BinOp::Sub, a, b) => match (&**a, &**b) {
                    (Expr::Var(y), Expr::Int(_)) | (Expr::Int(_), Expr::Var(y)) => Some(*y),
                    _ => None,
                },
                _ => None,
            }
        };
        let mut pairs: Vec<(VarId, VarId)> = Vec::new();
        for st in input.path {
            match (st, &prog.step_edge(*st).op) {
                (Step::Edge(_), crate::cfa::Op::Assign { dst, src }) => {
                    if let Some(y) = copy_of(src) {
                        pairs.push((*dst, y));
                    }
                }
                (Step::Enter(_), crate::cfa::Op::Call { callee, args, .. }) => {
                    if let Some(f) = prog.functions.get(*callee) {
                        for (p, a) in f.params.iter().zip(args) {
                            if let Some(y) = copy_of(a) {
                                pairs.push((*p, y));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let counter = |x: VarId| counter_type(prog, x) && !self.finite_ints.contains(&x);
        pairs.retain(|(x, y)| counter(*x) && counter(*y));
        loop {
            let before = ints.len();
            for &(x, y) in &pairs {
                if ints.contains(&x) || ints.contains(&y) {
                    ints.insert(x);
                    ints.insert(y);
                }
            }
            if ints.len() == before {
                break;
            }
        }
        let names: Vec<String> = ints.iter().map(|&x| prog.vars[x].name.clone()).collect();
        let candidates = self.shape_types_in(groups);
        let replay = self.path_replay(prog, input);
        let mut msgs = Vec::new();
        for (s, m, d) in candidates {
            let mut counters: Vec<String> = self.counters.get(&s).cloned().unwrap_or_default();
            for n in &names {
                if !counters.contains(n) {
                    counters.push(n.clone());
                }
            }
            if Some(&counters) == self.counters.get(&s) {
                continue;
            }
            let Some(class) = self.prec.shape.global.get(&s) else {
                continue;
            };
            let mut class = class.clone();
            class.counters = counters.clone();
            tracing::debug!(
                "count refinement: struct {} with counters {}?",
                struct_name(prog, s),
                counters.join(", ")
            );
            let old = self.counters.insert(s, counters.clone());
            let msg = format!(
                "struct {}: count cells with {}",
                struct_name(prog, s),
                counters.join(", ")
            );
            if replay.rules_out(prog, &self.prec.shape, s, class) {
                msgs.push(msg);
                self.set_shape(prog, s, m, d);
                continue;
            }
            // counting may need a finer class (e.g. reachability from the walking
            // pointer, which separates the counted cells from the others)
            if let Some(m2) = self.fine_tune_type(prog, s, &m, &d, input, None) {
                msgs.push(msg);
                msgs.push(self.place_scg(prog, s, m, m2, d, input));
                continue;
            }
            match old {
                Some(o) => self.counters.insert(s, o),
                None => self.counters.remove(&s),
            };
        }
        if msgs.is_empty() {
            return None;
        }
        for &x in &ints {
            if self.explicit_ints.remove(&x) {
                self.prec.explicit.remove_everywhere(x);
            }
        }
        Some(msgs)
    }

    /// Algorithm 3, step 1 for a shape-tracked struct type: the pointers of the type the
    /// atoms mention become separating, integer field assertions on its cells (`data ==
    /// 0`, `key < 5`) join Φ. Returns the refined D (None: no change).
    fn refine_td(
        &self,
        prog: &Program,
        s: StructId,
        d: &TrackingDef,
        input: &RefineInput<'_, HeapState>,
    ) -> Option<TrackingDef> {
        let mut d2 = d.clone();
        let mut changed = false;
        for item in &input.interpolants.items {
            for a in &item.atoms {
                for &x in a.pointers.iter().chain(&a.dereferenced) {
                    if PtrGroup::of(prog, x) == Some(PtrGroup::Struct(s)) {
                        changed |= d2.separate(prog.vars[x].name.clone());
                    }
                }
                if let Some(fa) = &a.field_assertion {
                    let fty = &prog.field(fa.field).ty;
                    if fa.field.strukt != s || !fty.is_int() {
                        continue;
                    }
                    match fa.rhs {
                        Operand::Int(_) => changed |= d2.add_assertion(fa.field_text(prog)),
                        // `x <= p->f`: the field is told apart by the constants the
                        // program stores into it (`f == k` for each); the product then
                        // compares a loaded value with what the explicit domain knows
                        // of `x` (see `HeapCpa::post`)
                        Operand::Var(_) | Operand::Field { .. } => {
                            let name = &prog.field(fa.field).name;
                            let also = match fa.rhs {
                                Operand::Var(x) => vec![x],
                                _ => Vec::new(),
                            };
                            for k in field_constants(prog, fa.field, &also) {
                                changed |= d2.add_assertion(format!("{name} == {k}"));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        changed.then_some(d2)
    }

    /// What FineTune's oracle needs to replay the error path in the shape domain: the
    /// steps with their target locations and the integers the explicit domain knows
    /// are stored into fields along the path (the product's strengthening, replayed).
    fn path_replay(&self, prog: &Program, input: &RefineInput<'_, HeapState>) -> PathReplay {
        let steps: Vec<(Step, Node)> = input
            .path
            .iter()
            .copied()
            .zip(input.locs.iter().skip(1).copied())
            .collect();
        let mut stored: Vec<Known> = Vec::with_capacity(steps.len());
        let mut ex = Some(self.cpa.explicit.initial(prog, &self.prec.explicit));
        let pprec = &self.prec.pred;
        let mut cube = Some(self.cpa.pred.initial(prog, pprec));
        for &(step, to) in &steps {
            stored.push(ex.as_ref().map_or(Known::NONE, |e| {
                known_facts(prog, e, cube.as_ref().map(|c| (c, pprec)), step)
            }));
            ex = ex.and_then(|e| {
                let mut next = self
                    .cpa
                    .explicit
                    .post(prog, &e, step, to, &self.prec.explicit);
                (next.len() == 1).then(|| next.remove(0))
            });
            cube = cube.and_then(|c| {
                let mut next = self.cpa.pred.post(prog, &c, step, to, pprec);
                (next.len() == 1).then(|| next.remove(0))
            });
        }
        PathReplay {
            shape: ShapeCpa::new(prog).joined(),
            steps,
            stored,
            start: None,
        }
    }

    /// True unless the error path replays in the whole product (predicates, explicit
    /// heaps, shapes) under the current precision: then a refinement that only added
    /// predicates would rebuild the ART into the same error. The replay keeps every
    /// abstract successor (as the ART does); past [`PRODUCT_REPLAY_STATES`] states at
    /// one step, or past the deadline, it gives up and answers true (the predicates
    /// are trusted, as without the check).
    fn product_rules_out(&self, prog: &Program, input: &RefineInput<'_, HeapState>) -> bool {
        let (cpa, prec) = (&self.cpa, &self.prec);
        let deadline = self.deadline.get();
        let mut cur = vec![cpa.adjust(cpa.initial(prog, prec), prog.entry, prec)];
        for (&step, &to) in input.path.iter().zip(input.locs.iter().skip(1)) {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return true;
            }
            let mut next: Vec<HeapState> = Vec::new();
            for s in &cur {
                for t in cpa.post(prog, s, step, to, prec) {
                    let t = cpa.adjust(t, to, prec);
                    if !next.contains(&t) {
                        next.push(t);
                    }
                }
            }
            if next.is_empty() || next.len() > PRODUCT_REPLAY_STATES {
                return true;
            }
            cur = next;
        }
        false
    }

    /// Before blaming the merges of an error path that the replay from the root rules
    /// out: FineTune the counting shape types the interpolants mention with an oracle
    /// that replays the path only from the last merged node's state. A replay from the
    /// root keeps exact counts along the unrolled loops (a list of 3 cells built,
    /// counted and walked), so it rules out every such path whatever the class;
    /// from the merged state it asks whether the *class* loses what the rest of the
    /// path needs (a walk that does not tell visited from unvisited cells without
    /// `reach[p]`). A class found this way is taken (an "scg" refinement, merges stay);
    /// None leaves the merges to be blamed. Types without counters are left to the
    /// merge refinement: there a class found this way was often the dearer fix
    /// (benchmarks/dll_remove: `reach` over a dll, 48 s, against 19 s with merging off
    /// at five loop heads).
    fn refine_class_past_merge(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, HeapState>,
        groups: &BTreeSet<PtrGroup>,
    ) -> Option<Refinement> {
        if self.scg_mode == crate::scg::ScgMode::Maximal {
            return None;
        }
        let (&pos, state) = input.merged.last().zip(input.merged_states.last())?;
        let mut added = Vec::new();
        let at = input.locs.get(pos).map(|&l| prog.graph[l].src);
        for (s, m, d) in self.shape_types_in(groups) {
            if self.counters.get(&s).is_none_or(|c| c.is_empty()) {
                continue;
            }
            let from = Some((pos, state.shape.clone()));
            if let Some(m2) = self.fine_tune_type(prog, s, &m, &d, input, from) {
                let msg = self.place_scg(prog, s, m, m2, d, input);
                added.push(match at {
                    Some(at) => format!("{msg} (replayed from the merge at {at})"),
                    None => msg,
                });
            }
        }
        (!added.is_empty()).then(|| Refinement {
            kind: "scg",
            pivot: Some(0),
            added,
            ..Default::default()
        })
    }

    /// FineTune (§3.3) for struct type `s` along the path: the coarsest enabled SCG
    /// finer than `m` whose shape post along the path is empty; when none is found the
    /// enabled set is widened to every SCG not coarser than `m` and the search repeated.
    /// With `from` (a position into the path's nodes and a shape state there, see
    /// [`PathReplay::start`]) the oracle replays the path only from there, and the
    /// enabled set is not widened.
    fn fine_tune_type(
        &mut self,
        prog: &Program,
        s: StructId,
        m: &Scg,
        d: &TrackingDef,
        input: &RefineInput<'_, HeapState>,
        from: Option<(usize, ShapeState)>,
    ) -> Option<Scg> {
        let lat = self.lattice.as_ref()?;
        self.fine_tune_calls += 1;
        let base = self.prec.shape.clone();
        let widen = from.is_none();
        let replay = PathReplay {
            start: from,
            ..self.path_replay(prog, input)
        };
        let mut calls = 0usize;
        let deadline = self.deadline.get();
        let join = self.joins(s);
        let uninit = !self.options.per_variable_uninit;
        let counters = self.counters.get(&s).cloned().unwrap_or_default();
        let mut oracle = |cand: &Scg| -> bool {
            // past the deadline nothing is asked: "does not rule out" is the answer
            // that never makes FineTune pick a class (the run ends at the next build)
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return false;
            }
            calls += 1;
            tracing::trace!(target: "shapemc::shape::path", "FineTune candidate {cand}");
            let c = cert::ClassRecipe {
                strukt: s,
                scg: cand.clone(),
                d: d.clone(),
                partial_join: join,
                uninit,
                counters: counters.clone(),
            }
            .generate(prog, lat);
            replay.rules_out(prog, &base, s, c)
        };
        let name = struct_name(prog, s);
        let mut enabled = self.enabled.to_vec(&name);
        if self.enabled.get(&name).is_none() {
            enabled = lat.universe(&own_ptr_fields(prog, s));
        }
        let mut m2 = fine_tune(m, &enabled, lat, d, &mut oracle);
        // (a search from a merged state is only a first try: it does not widen E)
        if &m2 == m && widen {
            let universe = lat.universe(&own_ptr_fields(prog, s));
            let added = self.enabled.extend_not_coarser(&name, lat, m, &universe);
            if added > 0 {
                let enabled = self.enabled.to_vec(&name);
                m2 = fine_tune(m, &enabled, lat, d, &mut oracle);
            }
        }
        self.fine_tune_oracle_calls += calls;
        (&m2 != m).then_some(m2)
    }

    /// Among the coarsest SCGs of `e` (no families), the one binding most fields the
    /// interpolants mentioned, then the fewest roles, then oriented by how often the
    /// interpolants use each bound field, then by how often the program reads it, then
    /// like the recognised data structure
    /// (`roles`), then the fewest predicates.
    ///
    /// Anchoring: when the samples were recognised as a data structure whose invariant
    /// some enabled SCG `requires`, only SCGs at least as coarse as one of those are
    /// candidates. Otherwise a coarser SCG of an unrelated structure (an sll along a
    /// tree's parent field) could be picked, from which FineTune never reaches the
    /// recognised structure's SCGs (they are not finer in the lattice).
    fn choose_coarsest(
        &self,
        lat: &Lattice,
        e: &[Scg],
        d: &TrackingDef,
        roles: &BTreeMap<String, String>,
        recognised: Option<&str>,
    ) -> Option<Scg> {
        let anchors: Vec<&Scg> = match recognised {
            Some(inv) => e
                .iter()
                .filter(|c| {
                    c.structure()
                        .and_then(|n| lat.library().structure(n))
                        .is_some_and(|st| st.requires.iter().any(|r| r.invariant == inv))
                })
                .collect(),
            None => Vec::new(),
        };
        let e: Vec<Scg> = if anchors.is_empty() {
            e.to_vec()
        } else {
            e.iter()
                .filter(|m| anchors.iter().any(|c| lat.leq(c, m)))
                .cloned()
                .collect()
        };
        let cands: Vec<&Scg> = e.iter().filter(|m| m.families().count() == 0).collect();
        let cands: Vec<&Scg> = if cands.is_empty() {
            e.iter().collect()
        } else {
            cands
        };
        cands
            .into_iter()
            .max_by_key(|m| {
                let b = m.binding().cloned().unwrap_or_default();
                let hits = b
                    .values()
                    .filter(|f| self.mentioned_fields.contains_key(*f))
                    .count();
                // orientation: the role bound to the field the interpolants use most
                let freq: Vec<usize> = b
                    .values()
                    .map(|f| self.mentioned_fields.get(f).copied().unwrap_or(0))
                    .collect();
                (
                    hits,
                    std::cmp::Reverse(b.len()),
                    freq,
                    b.values()
                        .map(|f| self.field_reads.get(f).copied().unwrap_or(0))
                        .collect::<Vec<_>>(),
                    agreement(m, roles),
                    std::cmp::Reverse(lat.generate(m, d).num_preds()),
                    std::cmp::Reverse((*m).clone()),
                )
            })
            .cloned()
    }

    fn undecided_explicit(&self) -> bool {
        self.lattice.is_some() && self.types.values().any(|m| *m == TypeMode::Explicit)
    }
}

impl Abstraction for HeapAbstraction {
    type Cpa = HeapCpa;

    fn cpa(&self) -> &HeapCpa {
        &self.cpa
    }
    fn checker(&self) -> HeapCpa {
        HeapCpa {
            pred: PredAbs::new(self.timeout_ms),
            explicit: ExplicitCpa,
            shape: self.cpa.shape.clone(),
        }
    }
    fn precision(&self) -> &HeapPrec {
        &self.prec
    }
    fn set_deadline(&self, deadline: Option<std::time::Instant>) {
        self.deadline.set(deadline);
        self.cpa.pred.set_deadline(deadline);
    }
    /// With [`HeapAbstraction::keep_certificate`]: encodes the certificate with the
    /// class recipes of the run and decodes it as `check-certificate` does (every class
    /// regenerated from the library), keeping the body for
    /// [`HeapAbstraction::take_sealed`]. Without: only checks that every class has a
    /// recipe (the round trip costs about 10% of the check on gdsl
    /// treep_rotate_left_right).
    fn seal(&self, prog: &Program, cert: HeapCertificate) -> Result<HeapCertificate, String> {
        let empty;
        let lat = match &self.lattice {
            Some(l) => l,
            None => {
                empty = Lattice::new(crate::scg::Library::default());
                &empty
            }
        };
        if !self.keep_certificate {
            // nothing is written: that every class has a recipe is what the checker
            // would rely on; the round trip is left to runs that write the file
            cert::check_recipes(prog, lat, &self.class_recipes(), &cert)?;
            return Ok(cert);
        }
        let body = cert::encode(prog, lat, &self.class_recipes(), &cert)?;
        let cpa = cert.cpa.clone();
        drop(cert);
        let back = cert::decode(prog, lat, &cpa, &body)?;
        self.sealed.replace(Some(body));
        Ok(back)
    }
    fn final_scg(&self, prog: &Program) -> BTreeMap<String, String> {
        self.types
            .iter()
            .map(|(s, m)| {
                let v = match m {
                    TypeMode::Explicit | TypeMode::ExplicitFinal => "explicit".to_string(),
                    TypeMode::Shape { scg, .. } => {
                        // finer SCGs of single functions: `; in f, g: m'`
                        let mut by: BTreeMap<&Scg, Vec<&str>> = BTreeMap::new();
                        for (f, c) in self.fn_scg.get(s).into_iter().flatten() {
                            by.entry(c).or_default().push(&prog.functions[*f].name);
                        }
                        let mut v = scg.to_string();
                        for (c, fs) in by {
                            v.push_str(&format!("; in {}: {c}", fs.join(", ")));
                        }
                        v
                    }
                };
                (format!("struct {}", struct_name(prog, *s)), v)
            })
            .collect()
    }
    fn stats(&self) -> serde_json::Value {
        let s = self.cpa.pred.stats();
        serde_json::json!({
            "predicates": self.prec.pred.preds.len(),
            "precision_size": self.prec.pred.size(),
            "explicit_groups": self.explicit_groups.iter().map(|g| g.to_string()).collect::<Vec<_>>(),
            "explicit_vars": self.prec.explicit.everywhere.len(),
            "explicit_ints": self.explicit_ints.len(),
            "abstractions": self.abstractions,
            "fine_tune_calls": self.fine_tune_calls,
            "fine_tune_oracle_calls": self.fine_tune_oracle_calls,
            "posts": s.posts,
            "post_cache_hits": s.cache_hits,
            "z3_queries": s.z3_queries,
            "time_abstraction_z3_s": s.z3_time.as_secs_f64(),
        })
    }

    /// Samples are preferred where data structures are consistent: heaps at loop heads
    /// and in the entry function (call stack of at most `main`'s frame) go to the main
    /// collector, which fires at 5 samples; heaps elsewhere (often in the middle of an
    /// update: a node whose parent pointer is set but that is not linked yet breaks
    /// `tree_parent`) only count when 10 times as many were seen.
    fn threshold(&self, node: &crate::art::ArtNode<HeapState>) -> bool {
        if !self.undecided_explicit() {
            return false;
        }
        let stable = node.stack.len() <= 1 || self.loop_heads.contains(&node.loc);
        if stable {
            self.collector.borrow_mut().offer(&node.state.explicit);
        } else {
            self.inner_collector
                .borrow_mut()
                .offer(&node.state.explicit);
        }
        self.collector.borrow().done() || self.inner_collector.borrow().done()
    }

    /// Algorithm 2 (`Abstract`). Variant: instead of replacing explicit heaps by
    /// HeapToShape results in place, the ART is rebuilt from the root under the new
    /// precision (simpler and sound; the shape regions are then computed by the shape
    /// post from the start).
    fn on_threshold(
        &mut self,
        prog: &Program,
        art: &mut Art<HeapState>,
        _node: ArtId,
    ) -> Result<(), String> {
        let Some(lat) = self.lattice.clone() else {
            return Err("explicit heap threshold without an SCG library".into());
        };
        self.abstractions += 1;
        let stable = self.collector.borrow();
        let inner = self.inner_collector.borrow();
        let samples: Vec<ExplicitState> = if stable.done() {
            stable.kept.iter().map(|(h, _, _)| h.clone()).collect()
        } else {
            stable
                .kept
                .iter()
                .chain(&inner.kept)
                .map(|(h, _, _)| h.clone())
                .collect()
        };
        tracing::info!(
            "Abstract: {} samples ({} at loop heads or in main, {} elsewhere; {} loop heads)",
            samples.len(),
            stable.kept.len(),
            samples.len() - stable.kept.len().min(samples.len()),
            self.loop_heads.len()
        );
        drop((stable, inner));
        for h in &samples {
            tracing::trace!("Abstract: sample {h:?}");
        }
        let refs: Vec<&ExplicitState> = samples.iter().collect();
        let pending: Vec<StructId> = self
            .types
            .iter()
            .filter(|(_, m)| **m == TypeMode::Explicit)
            .map(|(s, _)| *s)
            .collect();
        let mut switched = false;
        for s in pending {
            if !refs.iter().any(|h| !h.all_cells_of_type(s).is_empty()) {
                continue;
            }
            let c = classify(prog, s, &refs);
            switched |= self.abstract_type(prog, &lat, &c).is_some();
        }
        if !switched {
            // Nothing to abstract (e.g. the deep heap is of a type without SCGs): stop
            // sampling those types.
            for m in self.types.values_mut() {
                if *m == TypeMode::Explicit {
                    *m = TypeMode::ExplicitFinal;
                }
            }
        }
        *self.collector.borrow_mut() = SampleCollector::new(self.sample_threshold);
        *self.inner_collector.borrow_mut() =
            SampleCollector::new(inner_threshold(self.sample_threshold));
        *art = Art::new(prog, self.cpa.initial(prog, &self.prec));
        Ok(())
    }

    fn refine(&mut self, prog: &Program, input: &RefineInput<'_, HeapState>) -> Refinement {
        // An error path through merged nodes that does not replay step by step under
        // the current precision was reached only thanks to a merge: merging stops at
        // those locations (the coarsest fix; the states along the path are exact).
        let groups = self.mentioned_groups(prog, input);
        if !input.merged.is_empty() && self.product_rules_out(prog, input) {
            if let Some(r) = self.refine_class_past_merge(prog, input, &groups) {
                return r;
            }
            let mut r = Refinement {
                kind: "merge",
                ..Default::default()
            };
            for &i in input.merged {
                if let Some(&l) = input.locs.get(i) {
                    if self.prec.merge_at.remove(&l) {
                        r.added.push(format!(
                            "no merge at {} (loc {})",
                            prog.graph[l].src,
                            l.index()
                        ));
                        r.pivot = Some(r.pivot.map_or(i, |p: usize| p.min(i)));
                    }
                }
            }
            if r.pivot.is_some() {
                return r;
            }
        }
        // Pointers seen for the first time are tracked on explicit heaps (Algorithm 3,
        // step 2, first case); under `--scg maximal` recursive types are shape-tracked
        // from the start, so this only concerns the others.
        let mut new_groups = Vec::new();
        for &g in &groups {
            let known = match g {
                PtrGroup::Struct(s) => self.types.contains_key(&s),
                PtrGroup::Other => self.explicit_groups.contains(&g),
            };
            if !known && self.track_group(prog, g) {
                new_groups.push(g);
            }
        }
        // Integer facts (and pointer facts of untracked groups) become predicates.
        let heap_tracked = |x: VarId| match PtrGroup::of(prog, x) {
            Some(PtrGroup::Struct(s)) => self.types.contains_key(&s),
            Some(g) => self.explicit_groups.contains(&g),
            None => false,
        };
        // (Measured: keeping predicates over heap-tracked pointers makes the gdsl proofs
        // faster, they split the ART along NULL tests the shape domain would also make;
        // so the filter is off unless `--no-heap-pointer-predicates` is given.)
        let filter = self.options.filter_heap_pointer_predicates;
        let keep = |e: &crate::cfa::Expr| {
            if !filter {
                return true;
            }
            let mut vs = Vec::new();
            e.vars(&mut vs);
            !vs.into_iter().any(heap_tracked)
        };
        let mut r = refine_predicates(
            prog,
            &mut self.prec.pred,
            self.scope,
            self.max_atoms,
            input,
            &keep,
        );
        // Shape-tracked types: refine D (step 1), else FineTune the SCG (step 2).
        let mut preds_rule_out: Option<bool> = None;
        let mut td = false;
        let mut scg = false;
        let shape_types = self.shape_types_in(&groups);
        for (s, m, d) in shape_types {
            let name = struct_name(prog, s);
            if let Some(d2) = self.refine_td(prog, s, &d, input) {
                r.added.push(format!("struct {name}: D = {d2:?}"));
                self.set_shape(prog, s, m, d2);
                td = true;
                continue;
            }
            if self.scg_mode == crate::scg::ScgMode::Maximal {
                continue;
            }
            // New predicates that still let the product reach the end of the path would
            // cost an ART rebuild that ends at the same error: FineTune now as well.
            if r.pivot.is_some()
                && *preds_rule_out.get_or_insert_with(|| self.product_rules_out(prog, input))
            {
                continue;
            }
            if let Some(m2) = self.fine_tune_type(prog, s, &m, &d, input, None) {
                let msg = self.place_scg(prog, s, m, m2, d, input);
                r.added.push(msg);
                scg = true;
            }
        }
        if !new_groups.is_empty() || td || scg {
            for g in &new_groups {
                r.added.push(format!("track {} explicitly", g.name(prog)));
            }
            r.kind = if scg && new_groups.is_empty() && !td {
                "scg"
            } else {
                "td"
            };
            r.pivot = Some(0);
            r.unhandled.clear();
            return r;
        }
        if r.pivot.is_some() {
            return r;
        }
        // Fallback: integer variables whose values predicate abstraction cannot see
        // (loaded from the heap) are tracked explicitly.
        let ints = self.mentioned_ints(prog, input);
        if !ints.is_empty() {
            for &x in &ints {
                self.explicit_ints.insert(x);
                self.prec.explicit.everywhere.insert(x);
                r.added
                    .push(format!("track {} explicitly", prog.vars[x].name));
            }
            r.pivot = Some(0);
            return r;
        }
        // Shape types the path mentions whose SCG and tracking definition cannot be
        // refined, whose regions use the partial join, and whose current class without
        // the join rules the path out: the join goes for them.
        let mut replay: Option<PathReplay> = None;
        let joined: Vec<(StructId, Scg, TrackingDef)> = self
            .types
            .iter()
            .filter(|(s, _)| groups.contains(&PtrGroup::Struct(**s)) && self.joins(**s))
            .filter_map(|(s, m)| match (m, self.prec.shape.global.get(s)) {
                (TypeMode::Shape { scg, d }, Some(c)) => Some((*s, scg, d, c)),
                _ => None,
            })
            .filter(|(s, _, _, c)| {
                let mut c = (*c).clone();
                c.partial_join = false;
                replay
                    .get_or_insert_with(|| self.path_replay(prog, input))
                    .rules_out(prog, &self.prec.shape, *s, c)
            })
            .map(|(s, m, d, _)| (s, m.clone(), d.clone()))
            .collect();
        if !joined.is_empty() {
            for (s, m, d) in joined {
                self.unjoined.insert(s);
                self.set_shape(prog, s, m, d);
                r.added.push(format!(
                    "struct {}: no partial join of shape structures",
                    struct_name(prog, s)
                ));
            }
            r.kind = "scg";
            r.pivot = Some(0);
            r.unhandled.clear();
            return r;
        }
        // Counting: the path may need the relation between integer counters and the
        // number of cells (`len == length of the list`); counters that rule it out on
        // the path replay join the type's class.
        if let Some(msgs) = self.refine_counters(prog, input, &groups) {
            r.added.extend(msgs);
            r.kind = "td";
            r.pivot = Some(0);
            r.unhandled.clear();
            return r;
        }
        // Last resort (not in the paper): shape types the path mentions whose SCG and
        // tracking definition cannot be refined go back to explicit heaps, without
        // threshold (finds bugs on small heaps; a proof then needs the heaps to be
        // bounded, otherwise the run ends at a limit with UNKNOWN).
        let stuck: Vec<StructId> = self
            .types
            .iter()
            .filter(|(s, m)| {
                matches!(m, TypeMode::Shape { .. }) && groups.contains(&PtrGroup::Struct(**s))
            })
            .map(|(s, _)| *s)
            .collect();
        let early = self.abstract_early(prog, &groups);
        if !early.is_empty() {
            r.added.extend(early);
            r.kind = "td";
            r.pivot = Some(0);
            r.unhandled.clear();
            return r;
        }
        if !stuck.is_empty() {
            tracing::debug!(
                "shape refinement failed on: {}",
                input
                    .path
                    .iter()
                    .map(|st| {
                        let e = prog.step_edge(*st);
                        format!("{}: {:?}", e.src.line, e.op)
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            for s in stuck {
                self.fn_scg.remove(&s);
                self.prec.shape.global.remove(&s);
                for m in self.prec.shape.at.values_mut() {
                    m.remove(&s);
                }
                self.types.insert(s, TypeMode::ExplicitFinal);
                self.explicit_groups.insert(PtrGroup::Struct(s));
                for x in 0..prog.vars.len() {
                    if PtrGroup::of(prog, x) == Some(PtrGroup::Struct(s)) {
                        self.prec.explicit.everywhere.insert(x);
                    }
                }
                r.added.push(format!(
                    "struct {}: shape refinement failed, back to explicit heaps",
                    struct_name(prog, s)
                ));
            }
            r.kind = "td";
            r.pivot = Some(0);
            r.unhandled.clear();
        }
        r
    }
}

/// The certificate format of the combined abstraction.
pub type HeapCertificate = Certificate<HeapState, HeapPrec>;

/// Checks that an explicit heap read from a certificate is well formed for `prog`
/// (one value per variable; every cell typed like a struct, scalar or opaque object of
/// the program, with the right number of fields).
pub fn validate_explicit(prog: &Program, s: &ExplicitState) -> Result<(), String> {
    if s.vars.len() != prog.vars.len() {
        return Err("explicit heap: wrong number of variables".into());
    }
    for (a, c) in &s.heap {
        if *a == 0 {
            return Err("explicit heap: a cell at address 0".into());
        }
        let n = match &c.ty {
            CellTy::Struct(st) => match prog.structs.get(*st) {
                Some(d) => d.fields.len(),
                None => return Err(format!("explicit heap: cell {a} of an unknown struct")),
            },
            CellTy::Scalar(_) => 1,
            CellTy::Opaque => 0,
        };
        if c.fields.len() != n {
            return Err(format!(
                "explicit heap: cell {a} has a wrong number of fields"
            ));
        }
    }
    Ok(())
}

/// Validates the precision and states of a certificate of [`HeapCpa`], then runs
/// [`crate::cert::check`] with a fresh [`HeapCpa`].
pub fn check_heap_certificate(prog: &Program, cert: &HeapCertificate) -> Result<(), String> {
    if cert.format != crate::cert::FORMAT {
        return Err(format!("unknown certificate format `{}`", cert.format));
    }
    let split = cert.cpa == HEAP_SPLIT_CPA_NAME;
    if cert.cpa != HEAP_CPA_NAME && !split {
        return Err(format!(
            "certificate of CPA `{}`, expected `{HEAP_CPA_NAME}` or `{HEAP_SPLIT_CPA_NAME}`",
            cert.cpa
        ));
    }
    check_heap_certificate_until(prog, cert, split, None, None).map_err(|e| e.to_string())
}

/// [`check_heap_certificate`] with the CPA variant given (`split`: one shape structure
/// per state) and [`crate::cert::check_until`]'s limits.
pub fn check_heap_certificate_until(
    prog: &Program,
    cert: &HeapCertificate,
    split: bool,
    deadline: Option<std::time::Instant>,
    memory_limit_mb: Option<u64>,
) -> Result<(), crate::cert::CertError> {
    validate_heap_certificate(prog, cert).map_err(crate::cert::CertError::Malformed)?;
    crate::cert::check_until(
        &HeapCpa::new(prog, 10_000, split),
        prog,
        cert,
        deadline,
        memory_limit_mb,
    )
}

/// The well-formedness checks of [`check_heap_certificate`] (indices and names).
fn validate_heap_certificate(prog: &Program, cert: &HeapCertificate) -> Result<(), String> {
    cert.precision.pred.validate(prog)?;
    let ep = &cert.precision.explicit;
    if ep
        .everywhere
        .iter()
        .chain(ep.at.values().flatten())
        .any(|&x| x >= prog.vars.len())
    {
        return Err("explicit precision names no variable".into());
    }
    if ep.at.keys().any(|&l| l >= prog.graph.node_count()) {
        return Err("explicit precision names no location".into());
    }
    let n = cert.precision.pred.preds.len() as u32;
    for node in &cert.nodes {
        if !node.state.pred.is_normal() || node.state.pred.0.iter().any(|(i, _)| *i >= n) {
            return Err(format!("node {}: malformed predicate state", node.id));
        }
        validate_explicit(prog, &node.state.explicit)
            .map_err(|e| format!("node {}: {e}", node.id))?;
        if node.stack.iter().any(|&e| e >= prog.graph.edge_count()) {
            return Err(format!("node {}: call stack names no edge", node.id));
        }
        if let Some(s) = node.step {
            let (Step::Edge(e) | Step::Enter(e) | Step::Leave(e)) = s;
            if e.index() >= prog.graph.edge_count() {
                return Err(format!("node {}: step names no edge", node.id));
            }
        }
    }
    validate_shape(prog, cert)
}

/// Checks the shape parts of a certificate name existing struct types, variables and
/// locations (the shape operations index the program by them).
fn validate_shape(prog: &Program, cert: &HeapCertificate) -> Result<(), String> {
    let ns = prog.structs.len();
    let sp = &cert.precision.shape;
    if sp.global.keys().any(|&s| s >= ns)
        || sp
            .at
            .iter()
            .any(|(l, m)| l.index() >= prog.graph.node_count() || m.keys().any(|&s| s >= ns))
    {
        return Err("shape precision names no struct type or location".into());
    }
    for node in &cert.nodes {
        let sh = &node.state.shape;
        if sh.comps.keys().any(|&s| s >= ns) {
            return Err(format!(
                "node {}: shape component of no struct type",
                node.id
            ));
        }
        for (x, (p, f)) in &sh.loaded {
            let bad_field = prog
                .structs
                .get(f.strukt)
                .is_none_or(|d| f.field >= d.fields.len());
            if *x >= prog.vars.len() || *p >= prog.vars.len() || bad_field {
                return Err(format!("node {}: malformed load provenance", node.id));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfa::{FieldDef, Scope, StructDef, Ty};

    fn prog() -> Program {
        let mut p = Program::new("t.c");
        p.structs.push(StructDef {
            name: "node".into(),
            fields: vec![
                FieldDef {
                    name: "next".into(),
                    ty: Ty::Ptr(Box::new(Ty::Struct(0))),
                    offset: 0,
                },
                FieldDef {
                    name: "data".into(),
                    ty: Ty::INT,
                    offset: 4,
                },
            ],
            size: 8,
        });
        p.add_var("main::p", Ty::Ptr(Box::new(Ty::Struct(0))), Scope::Local(0));
        p.add_var("main::q", Ty::Ptr(Box::new(Ty::Void)), Scope::Local(0));
        p.add_var("main::x", Ty::INT, Scope::Local(0));
        p
    }

    #[test]
    fn pointer_groups_and_explicit_tracking() {
        let prog = prog();
        assert_eq!(PtrGroup::of(&prog, 0), Some(PtrGroup::Struct(0)));
        assert_eq!(PtrGroup::of(&prog, 1), Some(PtrGroup::Other));
        assert_eq!(PtrGroup::of(&prog, 2), None);
        assert_eq!(PtrGroup::of(&prog, 7), None);
        assert_eq!(own_ptr_fields(&prog, 0), ["next"]);
        let mut a = HeapAbstraction::new(
            &prog,
            PredScope::Location,
            1000,
            crate::scg::ScgMode::Refine,
            None,
            HeapOptions::default(),
        );
        assert!(a.track_group(&prog, PtrGroup::Struct(0)));
        // the struct's pointers and the `void*` ones, never the integers
        assert_eq!(
            a.prec
                .explicit
                .everywhere
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            [0, 1]
        );
        assert!(!a.track_group(&prog, PtrGroup::Struct(0)));
        assert_eq!(a.types.get(&0), Some(&TypeMode::Explicit));
        // without an SCG library the threshold never fires
        assert!(!a.undecided_explicit());
    }

    #[test]
    fn merges_keep_cube_and_explicit_heap_and_only_at_merge_points() {
        let prog = prog();
        let cpa = HeapCpa::new(&prog, 1000, true);
        let mut prec = HeapPrec::default();
        let at = prog.entry;
        let s = cpa.initial(&prog, &prec);
        // identical states: nothing to merge; an unlisted location never merges
        assert_eq!(cpa.merge(&s, &s, at, &prec), None);
        prec.merge_at.insert(at);
        assert_eq!(cpa.merge(&s, &s, at, &prec), None);
        // a different cube: no merge
        let mut t = s.clone();
        t.pred = crate::predabs::Cube(vec![(0, true)]);
        assert_eq!(cpa.merge(&s, &t, at, &prec), None);
        // a merged state is current for a successor only with the same cube and
        // explicit heap (a coarser, older cube covers a finer one but is stale)
        assert!(cpa.merged_covers(&s, &s));
        assert!(cpa.covers(&s, &t) && !cpa.merged_covers(&s, &t));
    }

    #[test]
    fn malformed_explicit_heaps_are_rejected() {
        let prog = prog();
        let mut h = ExplicitState::initial(&prog);
        assert_eq!(validate_explicit(&prog, &h), Ok(()));
        h.heap.insert(
            1,
            crate::explicit::Cell {
                ty: CellTy::Struct(0),
                kind: crate::explicit::CellKind::Heap,
                fields: vec![crate::explicit::Value::NULL],
            },
        );
        assert!(validate_explicit(&prog, &h).is_err());
        h.vars.pop();
        assert!(validate_explicit(&prog, &h).is_err());
    }
}

#[cfg(test)]
mod abstract_tests {
    use super::*;
    use crate::scg::HoldingInvariant;

    fn library() -> Lattice {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library");
        Lattice::new(crate::scg::Library::load_dir(&dir).expect("library loads"))
    }

    #[test]
    fn the_coarsest_choice_is_anchored_on_the_recognised_structure() {
        // gdsl/treep_rotate_left: a tree with parent pointers whose interpolants only
        // mention `father`; without the anchor the sll along `father` won (bug fix).
        let prog = Program::new("t.c");
        let lat = library();
        let holding = [
            HoldingInvariant::new("acyclic_list", &["father"]),
            HoldingInvariant::new("acyclic_list", &["l"]),
            HoldingInvariant::new("binary_tree", &["l", "r"]),
            HoldingInvariant::new("tree_parent", &["l", "r", "father"]),
        ];
        let e = lat.enabled(&holding);
        let mut a = HeapAbstraction::new(
            &prog,
            PredScope::Location,
            1000,
            crate::scg::ScgMode::Refine,
            Some(lat.clone()),
            HeapOptions::default(),
        );
        a.mentioned_fields.insert("father".into(), 15);
        let d = TrackingDef::new(["p"], ["p"], Vec::<&str>::new());
        let roles = BTreeMap::new();
        let free = a.choose_coarsest(&lat, &e, &d, &roles, None).unwrap();
        assert_eq!(free.to_string(), "sll{}(next=father)");
        let anchored = a
            .choose_coarsest(&lat, &e, &d, &roles, Some("tree_parent"))
            .unwrap();
        assert!(
            anchored.structure() == Some("tree") || anchored.structure() == Some("tree-parent"),
            "{anchored}"
        );
        // every tree-parent SCG is reachable from it by FineTune (finer or equal)
        assert!(e
            .iter()
            .filter(|m| m.structure() == Some("tree-parent"))
            .any(|m| lat.leq(m, &anchored)));
    }

    #[test]
    fn loop_heads_are_the_targets_of_back_edges() {
        let f =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/shape/sll_reverse.c");
        let prog = crate::frontend::parse_file(&f, &Default::default()).expect("parses");
        let heads = loop_heads(&prog);
        assert!(!heads.is_empty());
        let src = std::fs::read_to_string(&f).unwrap();
        let while_lines: BTreeSet<u32> = src
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("while") || l.contains("for ("))
            .map(|(i, _)| i as u32 + 1)
            .collect();
        for h in &heads {
            assert!(
                while_lines.contains(&prog.graph[*h].src.line),
                "loop head at line {} is not a loop",
                prog.graph[*h].src.line
            );
        }
    }

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
        e.vars[x] = Value::Int(3);
        assert!(with_loaded(&e, x, Some(3)).is_some());
        assert!(with_loaded(&e, x, Some(4)).is_none());
        assert!(with_loaded(&e, x, None).is_some());
    }
}
