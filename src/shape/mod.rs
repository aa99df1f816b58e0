//! The shape domain as a CPA (paper §2.3, §3): per struct type a shape region (a set of
//! three-valued structures of the type's shape class), with the CFA operations mapped
//! to [`crate::tvla::transfer::post`].
//!
//! # State and precision
//! - [`ShapePrec`] is the shape-abstraction specification Ψ̂ already applied (Ψ): for
//!   each struct type ([`StructId`]) a [`ShapeClass`], globally and optionally
//!   overridden per location. Build a class with [`class_for`] from an SCG and a
//!   tracking definition (`scg::Lattice::generate`), or by hand
//!   (`tvla::families::simple_class`). CEGAR may change a class globally
//!   ([`ShapePrec::set_global`]) or at one location ([`ShapePrec::set_at`]); states are
//!   converted soundly to the class of the location they arrive at ([`convert_comp`]).
//! - [`ShapeState`] holds one [`ShapeComp`] per struct type of the precision (the
//!   region plus the soundness flags below) and the provenance of integer temporaries
//!   (`t = p->data` remembers `(p, data)` so `assume(t == 0)` refines `fd[data == 0]`).
//!
//! # Semantics (what a state represents)
//! The structures of a component describe the *universe*: heap cells of the struct
//! type that tracked pointers can reach without going through unknown values. Every
//! other cell (reachable only through untracked variables, unknown values, or cells of
//! other types) is *outside*. A concrete state is represented when its projection on
//! the universe embeds into a structure, where
//! - a tracked variable in `wild_vars` may instead hold an *outside* value (a dangling
//!   or garbage pointer, a cell of another type, an outside cell); such values are
//!   represented like NULL or by `1/2`;
//! - a field in `wild_fields` may, in universe cells, hold an outside value
//!   (represented like NULL or by `1/2`);
//! - `(x, f)` in `uninit`: the field `f` of the cell `x` points to may still be
//!   uninitialised (`malloc`): represented as NULL, but a load of it gives an unknown
//!   value; when `x` gets another value, `f` goes into `wild_fields`;
//! - in a class with `un[f]` ([`with_uninit_preds`], the default of `verify`), a cell
//!   with `un[f]` ≠ 0 may hold an unknown value in `f` (uninitialised after `malloc`, or
//!   pointing to a cell since freed) instead: represented without an f-edge, a load of
//!   it gives an unknown value; `malloc` sets it, a store clears it, `free` sets it on the
//!   cells whose field may point to the freed cell (nothing goes wild globally).
//!
//! Consequences (all sound): a read through a wild or untracked pointer gives an
//! unknown, wild value; a write through one may hit any node (join); an `assume` on a
//! wild pointer is the identity; `free` of an untracked pointer of the type makes the
//! component ⊤ ([`ShapeComp::top`]: empty structure, everything wild). Untracked
//! pointer variables and fields are unknown; storing an unknown value into a tracked
//! field makes the field wild, so no definite fact is derived from it.
//!
//! # Memory errors
//! A dereference of a tracked pointer that may be NULL (or freed: dangling pointers are
//! represented like NULL) continues only in the structures where it is not NULL: the
//! path with the memory error *stops* (see `src/smt/mod.rs`). That alone would be
//! unsound for unreach-call (after undefined behaviour anything may happen), so
//! `verify` adds a NULL-dereference target beside every access
//! (`Program::add_null_deref_checks`): the `assume(p == NULL)` edge to it is where this
//! domain must show that `p` is not NULL; likewise the `assume_invalid(p)` edge of an
//! invalid-dereference target (`Program::add_invalid_deref_checks`), which is
//! infeasible when the component tracks `p` exactly (not wild: NULL or a live cell). The abstract errors of `tvla::post` are
//! logged at debug level and not reported as error locations.
//!
//! # Merge and stop
//! With [`ShapeCpa::split`] (the default, for `art::build`, which has no merge) every
//! successor holds one structure per component (merge-sep); [`ShapeState::join`] is the
//! per-location join for worklist fixpoints ([`fixpoint`]). Stop is subsumption:
//! [`ShapeCpa::covers`] = embedding of every structure plus inclusion of the flags.

//!
//! # API for the CEGAR loop
//! - precision: `ShapePrec::single(struct_id, class)` / `set_global` / `set_at`, with
//!   `class = class_for(&prog, struct_id, &lattice, &scg, &tracking_def)`
//!   ([`pointer_vars`] lists the candidate pointers of a struct type);
//! - CPA: `ShapeCpa::new(&prog)` (merge-sep, for `art::build`), `.joined()` for one
//!   successor per step; `Cpa::initial`, `Cpa::post`, `Cpa::covers`;
//! - HeapToShape: [`heap_to_shape`] (one struct type) / [`heap_to_shape_state`]
//!   (all classes at a location, e.g. for `Art::map_states` in `Abstract`);
//! - infeasibility: [`ShapeState::is_bottom`] and [`ShapeCpa::path_post`] (FineTune: a
//!   path is ruled out by a class iff `path_post` returns `None`); an ART built with
//!   this CPA that is complete without an error node proves the error unreachable;
//! - changing a class: states are converted on the next post ([`convert_comp`]).

mod heap;
use crate::cfa::live;
pub mod numeric;
mod ops;
mod stack;
#[cfg(test)]
pub(crate) mod tests;

pub use heap::{heap_to_shape, heap_to_shape_state};
pub use ops::convert_comp;

/// The field a field assertion `field rel constant` (`NULL` is 0) is about; `None` if
/// the text is not of that form.
pub fn assertion_field(a: &str) -> Option<String> {
    ops::parse_assertion_pub(a).map(|(f, _)| f)
}

/// Whether `a` is a field equality `f == k` that the other assertions of `all` bound
/// to a range holding `k` (`f >= lo` and `f <= hi` with lo ≤ k ≤ hi, or `<`/`>`): every
/// cell satisfies the range, so the equality only tells cells of that range apart
/// ([`crate::cegar::heap::cert::ClassRecipe::value_names`]).
pub fn covered_by_range(a: &str, all: &BTreeSet<String>) -> bool {
    let Some((f, ops::VSet::Range(k, k2))) = ops::parse_assertion_pub(a) else {
        return false;
    };
    if k != k2 {
        return false;
    }
    let (mut lo, mut hi) = (false, false);
    for b in all {
        if let Some((g, ops::VSet::Range(l, h))) = ops::parse_assertion_pub(b) {
            if g == f && l != h {
                lo |= l > i128::from(i64::MIN) && l <= k;
                hi |= h < i128::from(i64::MAX) && k <= h;
            }
        }
    }
    lo && hi
}

/// Whether some assertion of `all` is covered by a range of `all` ([`covered_by_range`]),
/// so that value names make a difference to the class.
pub fn has_covered_equalities(all: &BTreeSet<String>) -> bool {
    all.iter().any(|a| covered_by_range(a, all))
}

use crate::cfa::{LeakCheck, Node, Program, Step, StructId, VarId};
use crate::cpa::Cpa;
use crate::scg::{Lattice, Scg, TrackingDef};
use crate::tvla::{PredSym, ShapeClass, ShapeRegion, Structure};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What another domain knows at a step (the product's strengthening of the shape
/// domain). Every fact must hold in every concrete state of the step's pre-state;
/// [`Known::NONE`]: nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Known {
    /// Of the integer a `ptr->field = e` step writes: each `(rel, c)` holds of the
    /// value (`value rel c`; `rel` a comparison). The store transfer makes the field
    /// assertions these facts decide definite, as for a constant.
    pub stored: Vec<(crate::cfa::BinOp, i64)>,
    /// Exact values of integer variables an `assume(t rel x)` step reads: a comparison
    /// of a loaded field `t` with `x` then refines the field assertions as
    /// `assume(t rel c)` does.
    pub ints: Vec<(VarId, i64)>,
}

impl Known {
    /// Nothing known.
    pub const NONE: Known = Known {
        stored: Vec::new(),
        ints: Vec::new(),
    };
}

/// [`Known::NONE`] with a `'static` address.
pub static NOTHING_KNOWN: Known = Known::NONE;

/// The shape class of every struct type, globally and per location (Ψ applied). A
/// struct type without a class is not analysed (no component: unknown).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapePrec {
    /// Classes used at every location without an override. Shared: the states of an
    /// ART hold the same class objects, so that comparing classes is comparing
    /// addresses ([`ShapePrec::set_global`] keeps the object of an equal class).
    pub global: BTreeMap<StructId, Arc<ShapeClass>>,
    /// Per-location overrides (replace the global class of that struct type there).
    pub at: BTreeMap<Node, BTreeMap<StructId, Arc<ShapeClass>>>,
}

impl ShapePrec {
    /// The precision without any struct type (the domain tracks nothing).
    pub fn new() -> ShapePrec {
        ShapePrec::default()
    }
    /// The precision with one class for `strukt` everywhere.
    pub fn single(strukt: StructId, class: ShapeClass) -> ShapePrec {
        let mut p = ShapePrec::new();
        p.set_global(strukt, class);
        p
    }
    /// Sets the class of `strukt` at every location without an override; returns
    /// whether the precision changed (an equal class keeps its object).
    pub fn set_global(&mut self, strukt: StructId, class: ShapeClass) -> bool {
        set_class(&mut self.global, strukt, class)
    }
    /// Sets the class of `strukt` at location `loc` only; returns whether it changed.
    pub fn set_at(&mut self, loc: Node, strukt: StructId, class: ShapeClass) -> bool {
        set_class(self.at.entry(loc).or_default(), strukt, class)
    }
    /// The classes in force at `loc` (global ones, overridden by `at[loc]`).
    pub fn classes_at(&self, loc: Node) -> BTreeMap<StructId, &Arc<ShapeClass>> {
        let mut m: BTreeMap<StructId, &Arc<ShapeClass>> =
            self.global.iter().map(|(k, v)| (*k, v)).collect();
        if let Some(o) = self.at.get(&loc) {
            for (k, v) in o {
                m.insert(*k, v);
            }
        }
        m
    }
}

/// `m[strukt] = class`, keeping the object of an equal class; whether `m` changed.
fn set_class(
    m: &mut BTreeMap<StructId, Arc<ShapeClass>>,
    strukt: StructId,
    class: ShapeClass,
) -> bool {
    if m.get(&strukt).is_some_and(|c| **c == class) {
        return false;
    }
    m.insert(strukt, Arc::new(class));
    true
}

/// The shape class `m(D)` for struct type `strukt`: the SCG applied to the tracking
/// definition, restricted to pointers that are program variables of type
/// `struct strukt *` (other names in `D` are dropped with a debug log, since the domain
/// could not maintain their points-to predicates).
pub fn class_for(
    prog: &Program,
    strukt: StructId,
    lattice: &Lattice,
    scg: &Scg,
    d: &TrackingDef,
) -> ShapeClass {
    let ok = |x: &String| {
        let good = prog
            .vars
            .iter()
            .any(|v| &v.name == x && v.ty.pointee_struct() == Some(strukt));
        if !good {
            tracing::debug!("shape: {x} is not a pointer to struct {strukt}; not tracked");
        }
        good
    };
    let tracked: Vec<String> = d.tracked().iter().filter(|x| ok(x)).cloned().collect();
    let sep: Vec<String> = d.separating().iter().filter(|x| ok(x)).cloned().collect();
    let d2 = TrackingDef::new(
        tracked,
        sep,
        d.assertions().iter().cloned().collect::<Vec<_>>(),
    );
    lattice.generate(scg, &d2)
}

/// `class` with a core abstraction predicate `un[f]` ("field f of this cell may be
/// uninitialised or dangling") for each tracked field `f` (see the module
/// documentation); idempotent.
pub fn with_uninit_preds(mut class: ShapeClass) -> ShapeClass {
    for f in tracked_fields(&class) {
        let sym = PredSym::with("un", &[f.as_str()]);
        if class.core.iter().any(|p| p.sym == sym) {
            continue;
        }
        class.core.push(crate::tvla::class::PredDef {
            sym: sym.clone(),
            arity: 1,
            def: None,
        });
        class.abs.insert(sym);
    }
    class
}

/// Names of all variables of type `struct strukt *` (a convenient tracking set).
pub fn pointer_vars(prog: &Program, strukt: StructId) -> Vec<String> {
    prog.vars
        .iter()
        .filter(|v| v.ty.pointee_struct() == Some(strukt))
        .map(|v| v.name.clone())
        .collect()
}

/// At most this many structure combinations are tried by
/// [`ShapeState::covered_by_union`] (one structure per component).
pub const MAX_UNION_TUPLES: usize = 4096;

/// The abstract state of one struct type: its region and the soundness flags (see the
/// module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ShapeComp {
    pub region: ShapeRegion,
    /// Tracked variables that may hold an outside value.
    pub wild_vars: BTreeSet<String>,
    /// Fields that may hold outside values in universe cells.
    pub wild_fields: BTreeSet<String>,
    /// `(x, f)`: the field `f` of `x`'s cell may be uninitialised.
    pub uninit: BTreeSet<(String, String)>,
    /// Leak tracking (set only at the start of a program with leak checks,
    /// [`crate::cfa::Program::add_leak_checks`]; false everywhere else): every live
    /// heap object allocated as this struct type is a node of every structure (nodes
    /// leave only by `free` of an exactly tracked pointer). Cleared by an allocation of
    /// the type into an untracked variable, a `free` through a wild pointer and ⊤.
    #[serde(default)]
    pub complete: bool,
}

impl ShapeComp {
    /// The empty heap (program start): one structure without nodes.
    pub fn initial(class: impl Into<Arc<ShapeClass>>) -> ShapeComp {
        let class = class.into();
        ShapeComp {
            region: ShapeRegion::from_structures(class.clone(), [Structure::empty(&class)]),
            wild_vars: BTreeSet::new(),
            wild_fields: BTreeSet::new(),
            uninit: BTreeSet::new(),
            complete: false,
        }
    }
    /// ⊤: every cell outside, every tracked variable and field wild.
    pub fn top(class: impl Into<Arc<ShapeClass>>) -> ShapeComp {
        let class = class.into();
        let mut c = ShapeComp::initial(class.clone());
        c.wild_vars = tracked_vars(&class).into_iter().collect();
        c.wild_fields = tracked_fields(&class).into_iter().collect();
        c
    }
    /// Whether this component proves that no concrete state it represents fails the
    /// leak check `check` for the heap objects allocated as its struct type: it is
    /// [`ShapeComp::complete`], and every node of every structure is a stack node
    /// (definitely pointed to by a variable of `stack` that is not wild: one that only
    /// holds addresses of stack objects, [`ShapeCpa::stack_vars`]) or
    /// ([`LeakCheck::Unreachable`]) definitely reachable: pointed to by a root (a
    /// tracked variable that is not wild; one of `stack` only if also in `stack_roots`),
    /// definitely in the reach `r[x, ..]` of one, or the target of a definite field
    /// edge from a reachable node.
    pub fn proves_no_leak(
        &self,
        check: LeakCheck,
        stack: &BTreeSet<String>,
        stack_roots: &BTreeSet<String>,
    ) -> bool {
        if !self.complete {
            return false;
        }
        let tracked: Vec<String> = tracked_vars(self.class())
            .into_iter()
            .filter(|x| !self.wild_vars.contains(x))
            .collect();
        let on_stack: Vec<String> = tracked
            .iter()
            .filter(|x| stack.contains(*x))
            .cloned()
            .collect();
        let roots: Vec<String> = tracked
            .into_iter()
            .filter(|x| !stack.contains(x) || stack_roots.contains(x))
            .collect();
        let fields = tracked_fields(self.class());
        self.region.structures().all(|s| match check {
            LeakCheck::Unfreed => (0..s.len()).all(|u| points_definitely(s, &on_stack, u)),
            LeakCheck::Unreachable => all_reachable(s, &roots, &on_stack, &fields),
        })
    }
    /// The class of the component.
    pub fn class(&self) -> &ShapeClass {
        &self.region.class
    }
    /// True if the component represents no heap.
    pub fn is_bottom(&self) -> bool {
        self.region.is_empty()
    }
    /// `self ⊑ other` (every state of `self` is one of `other`).
    pub fn subsumed_by(&self, other: &ShapeComp) -> bool {
        self.agrees_within(other) && self.region.subsumed_by(&other.region)
    }
    /// Same class, and every soundness flag of `self` is also set in `other` (the
    /// part of [`ShapeComp::subsumed_by`] that does not look at the structures).
    pub fn agrees_within(&self, other: &ShapeComp) -> bool {
        self.region.class == other.region.class
            && self.wild_vars.is_subset(&other.wild_vars)
            && self.wild_fields.is_subset(&other.wild_fields)
            && self.uninit.is_subset(&other.uninit)
            && (self.complete || !other.complete)
    }
    /// Join (union of structures and flags); both must have the same class.
    pub fn join(&self, other: &ShapeComp) -> ShapeComp {
        ShapeComp {
            region: self.region.join(&other.region),
            wild_vars: self.wild_vars.union(&other.wild_vars).cloned().collect(),
            wild_fields: self
                .wild_fields
                .union(&other.wild_fields)
                .cloned()
                .collect(),
            uninit: self.uninit.union(&other.uninit).cloned().collect(),
            complete: self.complete && other.complete,
        }
    }
}

/// Whether one of the variables `xs` definitely points to node `u` of `s`.
fn points_definitely(s: &Structure, xs: &[String], u: usize) -> bool {
    xs.iter()
        .any(|x| s.value(&PredSym::with("pt", &[x.as_str()]), &[u]) == crate::tvla::Kleene::True)
}

/// Whether every node of `s` is a stack node (see [`points_definitely`]) or definitely
/// reachable from the variables `roots` (see [`ShapeComp::proves_no_leak`]): pointed to
/// by one, definitely in a reach `r[x, F]` or segment `rs[x, F]` (a subset of the
/// reach) of a root `x` over tracked fields `F` only (the families the vocabulary
/// recognised by name *and* definition; `r[x, inner, next]` of a tree class included: a
/// list whose nodes hang inner nodes off a second field), or the target of a definite
/// edge of a tracked field from a reachable node.
fn all_reachable(s: &Structure, roots: &[String], stack: &[String], fields: &[String]) -> bool {
    use crate::tvla::families::Family;
    use crate::tvla::Kleene;
    let reach: Vec<usize> = s
        .vocab()
        .instr
        .iter()
        .filter(|i| match &i.family {
            Some(Family::Reach(x, fs) | Family::Seg(x, fs)) => {
                i.arity == 1 && roots.contains(x) && fs.iter().all(|f| fields.contains(f))
            }
            _ => false,
        })
        .map(|i| i.idx)
        .collect();
    let n = s.len();
    let mut reached = vec![false; n];
    for (u, r) in reached.iter_mut().enumerate() {
        *r = roots
            .iter()
            .any(|x| s.value(&PredSym::with("pt", &[x.as_str()]), &[u]) == Kleene::True)
            || reach.iter().any(|&p| s.get1(p, u) == Kleene::True);
    }
    let edges: Vec<PredSym> = fields.iter().map(|f| PredSym::plain(f.clone())).collect();
    let mut todo: Vec<usize> = (0..n).filter(|&u| reached[u]).collect();
    while let Some(u) = todo.pop() {
        for (v, r) in reached.iter_mut().enumerate() {
            if !*r && edges.iter().any(|e| s.value(e, &[u, v]) == Kleene::True) {
                *r = true;
                todo.push(v);
            }
        }
    }
    reached
        .into_iter()
        .enumerate()
        .all(|(u, r)| r || points_definitely(s, stack, u))
}

/// Pointer variable names `x` with a `pt[x]` predicate in `class`.
pub fn tracked_vars(class: &ShapeClass) -> Vec<String> {
    class
        .core
        .iter()
        .filter(|p| p.sym.name == "pt" && p.arity == 1 && p.sym.params.len() == 1)
        .map(|p| p.sym.params[0].clone())
        .collect()
}

/// Field names with a binary core predicate in `class`.
pub fn tracked_fields(class: &ShapeClass) -> Vec<String> {
    class
        .core
        .iter()
        .filter(|p| p.arity == 2 && p.def.is_none())
        .map(|p| p.sym.name.clone())
        .collect()
}

/// A shape-domain state: one component per analysed struct type, plus the provenance
/// of integer variables loaded from fields (`t -> (p, field)` while `t == p->field`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ShapeState {
    pub comps: BTreeMap<StructId, ShapeComp>,
    pub loaded: BTreeMap<VarId, (VarId, crate::cfa::FieldRef)>,
}

impl ShapeState {
    /// The state at program start for the classes in force at `loc`.
    pub fn initial(prec: &ShapePrec, loc: Node) -> ShapeState {
        ShapeState {
            comps: prec
                .classes_at(loc)
                .into_iter()
                .map(|(s, c)| (s, ShapeComp::initial(c.clone())))
                .collect(),
            loaded: BTreeMap::new(),
        }
    }
    /// This state in the classes `prec` has at `loc` (predicates whose definitions
    /// changed are recomputed, new ones start unknown where they cannot be derived).
    pub fn converted(&self, prec: &ShapePrec, loc: Node) -> ShapeState {
        ops::convert_state(self, &prec.classes_at(loc))
    }
    /// Every component's structures, one per line (`struct: {structure}`), for logs.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (k, c) in &self.comps {
            for (st, a) in c.region.entries() {
                out.push_str(&format!("  #{k}: {st}\n"));
                if let Some(a) = a {
                    let names = c.region.class.counters.join(", ");
                    out.push_str(&format!("    counts over ({names}, nodes): {a}\n"));
                }
            }
        }
        out
    }
    /// True if the state represents no concrete state (some region is empty): the
    /// location is unreachable along whatever produced it (e.g. FineTune's path post).
    pub fn is_bottom(&self) -> bool {
        self.comps.values().any(|c| c.is_bottom())
    }
    /// `self ⊑ other`.
    pub fn subsumed_by(&self, other: &ShapeState) -> bool {
        if self.is_bottom() {
            return true;
        }
        self.comps.len() == other.comps.len()
            && self
                .comps
                .iter()
                .all(|(k, c)| other.comps.get(k).is_some_and(|o| c.subsumed_by(o)))
            && other
                .loaded
                .iter()
                .all(|(k, v)| self.loaded.get(k) == Some(v))
    }
    /// The join of `self` and `other` when both use the partial join
    /// ([`crate::tvla::ShapeClass::partial_join`]) for every component and agree on
    /// the components and the loaded-field bookkeeping, and every structure of `other`
    /// has the node names of one of `self`: each component's region is the partially
    /// joined union and its flags the union. `None` otherwise, or when the join is
    /// `self` again. The result covers both states.
    pub fn merge(&self, other: &ShapeState) -> Option<ShapeState> {
        if self.loaded != other.loaded
            || self.is_bottom()
            || other.is_bottom()
            || self.comps.values().any(|c| !c.region.class.partial_join)
        {
            return None;
        }
        // the join only stays within `self`'s names if every structure of `other`
        // partially joins with one of `self`'s (a cheap test first)
        let within = self.comps.iter().all(|(k, c)| {
            other.comps.get(k).is_some_and(|o| {
                o.region
                    .structures()
                    .all(|s| c.region.structures().any(|t| t.joins_partially(s)))
            })
        });
        if !within || self.comps.len() != other.comps.len() {
            return None;
        }
        let j = self.join(other)?;
        // only joins within the names `self` already has: a region never grows by
        // merging, so merged nodes stay as cheap to expand as the others
        let grows = j.comps.iter().any(|(k, c)| {
            self.comps
                .get(k)
                .is_none_or(|o| c.region.len() > o.region.len())
        });
        (!grows && j != *self).then_some(j)
    }
    /// Coverage by a union (stop-join): `Some(used)` if every combination of one
    /// structure per component lies in some `others[i]` (`i ∈ used`, indices into
    /// `others`), which means `γ(self) ⊆ ⋃ γ(others[i])`. `None` if not, or if there are
    /// more than [`MAX_UNION_TUPLES`] combinations to try.
    pub fn covered_by_union(&self, others: &[&ShapeState]) -> Option<Vec<usize>> {
        if self.is_bottom() {
            return others.first().map(|_| vec![0]);
        }
        Coverage::new(self, others).union()
    }
    /// The shape domain's stop: `Some(vec![i])` for the first `others[i]` that
    /// subsumes `self` alone ([`ShapeState::subsumed_by`]), else, with `union`,
    /// [`ShapeState::covered_by_union`]'s answer. The same answers as those two calls,
    /// but each "does `others[i]` hold this structure" is decided once for both.
    pub fn covered_by(&self, others: &[&ShapeState], union: bool) -> Option<Vec<usize>> {
        if self.is_bottom() {
            return others.first().map(|_| vec![0]);
        }
        let mut cov = Coverage::new(self, others);
        if let Some(i) = cov.single() {
            return Some(vec![i]);
        }
        if union {
            cov.union()
        } else {
            None
        }
    }
    /// The per-location join (componentwise; provenance kept where both agree).
    /// Components of different classes cannot be joined: `None`.
    pub fn join(&self, other: &ShapeState) -> Option<ShapeState> {
        if self.is_bottom() {
            return Some(other.clone());
        }
        if other.is_bottom() {
            return Some(self.clone());
        }
        let mut comps = BTreeMap::new();
        for (k, c) in &self.comps {
            let o = other.comps.get(k)?;
            if o.class() != c.class() {
                return None;
            }
            comps.insert(*k, c.join(o));
        }
        if comps.len() != other.comps.len() {
            return None;
        }
        let loaded = self
            .loaded
            .iter()
            .filter(|(k, v)| other.loaded.get(k) == Some(v))
            .map(|(k, v)| (*k, *v))
            .collect();
        Some(ShapeState { comps, loaded })
    }
    /// The state split by the value of the integer `ptr->field`, as far as the class's
    /// assertions `field == k` tell it: `(Some(k), t)` where the field of `ptr`'s node
    /// is `k` in every heap of `t`, `(None, t)` for the heaps where no such assertion
    /// holds; together exactly the heaps of `self` (the product's strengthening of an
    /// explicitly tracked integer loaded from a shape-tracked cell).
    pub fn split_field_value(
        &self,
        prog: &Program,
        ptr: VarId,
        field: crate::cfa::FieldRef,
    ) -> Vec<(Option<i64>, ShapeState)> {
        ops::split_field_value(prog, self, ptr, field)
    }
    /// One state per combination of single structures (merge-sep).
    pub fn split(&self) -> Vec<ShapeState> {
        let mut out = vec![ShapeState {
            comps: BTreeMap::new(),
            loaded: self.loaded.clone(),
        }];
        for (k, c) in &self.comps {
            let mut next = Vec::new();
            for (s, a) in c.region.entries() {
                let mut region = ShapeRegion::empty(c.region.class.clone());
                region.insert_counted(s.clone(), a.cloned());
                for partial in &out {
                    let mut p = partial.clone();
                    p.comps.insert(
                        *k,
                        ShapeComp {
                            region: region.clone(),
                            ..c.clone()
                        },
                    );
                    next.push(p);
                }
            }
            out = next;
        }
        out
    }
    /// Number of structures over all components.
    pub fn num_structures(&self) -> usize {
        self.comps.values().map(|c| c.region.len()).sum()
    }
    /// What this state knows of the pointer comparison `a == b`, each side a variable
    /// name or NULL (`None`): `Some(true)` if it holds in every concrete state,
    /// `Some(false)` if in none, `None` if either may be. Only a component that tracks
    /// every variable of it exactly (not wild: NULL or a universe cell in every
    /// concrete state) decides, structure by structure: both NULL (no node they may
    /// point to), or both definitely at one non-summary node, is equal; definitely at
    /// different nodes (disjoint sets of cells), or NULL and definitely at a node, is
    /// unequal. Every structure must agree; a bottom state decides nothing.
    pub fn decide_ptr_eq(&self, a: Option<&str>, b: Option<&str>) -> Option<bool> {
        use crate::tvla::Kleene;
        // where a pointer is in a structure: NULL, definitely at node u, or unknown
        enum At {
            Null,
            Node(usize),
            Unknown,
        }
        let at = |st: &Structure, x: Option<&str>| -> At {
            let Some(x) = x else { return At::Null };
            let Some(i) = st.vocab().pt(x) else {
                return At::Unknown;
            };
            let mut maybe = false;
            for u in 0..st.len() {
                match st.get1(i, u) {
                    Kleene::True => return At::Node(u),
                    Kleene::Half => maybe = true,
                    Kleene::False => {}
                }
            }
            if maybe {
                At::Unknown
            } else {
                At::Null
            }
        };
        let vars: Vec<&str> = [a, b].into_iter().flatten().collect();
        let c = self
            .comps
            .values()
            .find(|c| !vars.is_empty() && vars.iter().all(|x| ops::exact(c, x)))?;
        let mut answer = None;
        for st in c.region.structures() {
            let here = match (at(st, a), at(st, b)) {
                (At::Null, At::Null) => true,
                (At::Null, At::Node(_)) | (At::Node(_), At::Null) => false,
                (At::Node(u), At::Node(v)) if u != v => false,
                (At::Node(u), At::Node(_)) if !st.is_summary(u) => true,
                _ => return None,
            };
            if answer.is_some_and(|x| x != here) {
                return None;
            }
            answer = Some(here);
        }
        answer
    }
    /// True if the unary predicate `p` of component `strukt` is 1 at every node of
    /// every structure (vacuously true for a bottom state).
    pub fn holds_everywhere(&self, strukt: StructId, p: &PredSym) -> bool {
        let Some(c) = self.comps.get(&strukt) else {
            return false;
        };
        c.region.structures().all(|s| match s.vocab().lookup(p) {
            Some((1, i)) => (0..s.len()).all(|u| s.get1(i, u) == crate::tvla::Kleene::True),
            _ => false,
        })
    }
}

/// The shape CPA. `split` selects merge-sep (one structure per state, for the ART) or
/// joined successors (one state per step, for path posts and worklist fixpoints).
#[derive(Clone, Debug)]
pub struct ShapeCpa {
    pub split: bool,
    /// Fields whose address is taken somewhere in the program (`&p->f`); a store
    /// through an arbitrary pointer (`*q = e`) may write them. `None`: every field.
    pub addr_taken: Option<BTreeSet<crate::cfa::FieldRef>>,
    /// Live local variables per location; tracked pointer variables of the location's
    /// function that are dead there are set to NULL. `None`: no dead-variable reset.
    pub live: Option<std::sync::Arc<std::collections::HashMap<Node, BTreeSet<VarId>>>>,
    /// Struct types of which the program allocates objects on the stack (address-taken
    /// struct locals): their universe nodes need not be heap objects, so `free` of an
    /// exactly tracked pointer may still be invalid.
    pub stack_structs: BTreeSet<crate::cfa::StructId>,
    /// Only in a program with leak checks ([`Program::has_leak_checks`]) or with a
    /// `free` of a pointer to one of [`ShapeCpa::stack_structs`] (empty elsewhere, so
    /// the analysis of other programs is unchanged): the variables that
    /// only hold addresses of stack struct objects ([`live::stack_address_vars`]), with
    /// their function (`None`: a global). They are never set to NULL (not where dead,
    /// not when their function returns), so that the leak checks tell their nodes (no
    /// heap objects) apart and, inside their function, reach the heap through them.
    pub stack_vars: BTreeMap<String, Option<crate::cfa::FuncId>>,
    /// Only where [`ShapeCpa::stack_vars`] is not empty: the struct types of `stack_structs` whose
    /// stack objects are all the nodes of `stack_vars` ([`live::stack_exact_structs`]):
    /// a `free` of a pointer that cannot alias one of them frees a heap object or an
    /// invalid pointer (decided as for heap-only types).
    pub stack_exact: BTreeSet<crate::cfa::StructId>,
}

impl ShapeCpa {
    /// The CPA for `prog` (merge-sep), with the address-taken fields of the program.
    pub fn new(prog: &Program) -> ShapeCpa {
        let mut at = BTreeSet::new();
        for e in prog.graph.edge_weights() {
            if let crate::cfa::Op::FieldAddr { field, .. } = e.op {
                at.insert(field);
            }
        }
        let stack_structs: BTreeSet<crate::cfa::StructId> = prog
            .graph
            .edge_weights()
            .filter_map(|e| match &e.op {
                crate::cfa::Op::Alloc {
                    pointee: crate::cfa::Ty::Struct(k),
                    kind: crate::cfa::AllocKind::Stack,
                    ..
                } => Some(*k),
                _ => None,
            })
            .collect();
        // a `free` of a pointer to a type that also has stack objects (an error path
        // `Op::AssumeInvalid` in every property): the domain tells them apart, so that
        // it can prove the `free` valid
        let frees_stack_type = prog.graph.edge_weights().any(|e| match &e.op {
            crate::cfa::Op::Free { ptr } => prog
                .vars
                .get(*ptr)
                .and_then(|v| v.ty.pointee_struct())
                .is_some_and(|k| stack_structs.contains(&k)),
            _ => false,
        });
        let (stack_vars, stack_exact) = if prog.has_leak_checks() || frees_stack_type {
            let vars = live::stack_address_vars(prog);
            let exact = live::stack_exact_structs(prog, &vars);
            let named = vars
                .into_iter()
                .filter_map(|v| {
                    let x = prog.vars.get(v)?;
                    let f = match x.scope {
                        crate::cfa::Scope::Global => None,
                        crate::cfa::Scope::Local(f)
                        | crate::cfa::Scope::Param(f)
                        | crate::cfa::Scope::Temp(f) => Some(f),
                    };
                    Some((x.name.clone(), f))
                })
                .collect();
            (named, exact)
        } else {
            (BTreeMap::new(), BTreeSet::new())
        };
        ShapeCpa {
            split: true,
            stack_structs,
            stack_vars,
            stack_exact,
            addr_taken: Some(at),
            live: Some(std::sync::Arc::new(live::live_vars(prog))),
        }
    }
    /// Whether the states of this CPA at `to` hold the value of variable `v` as it is:
    /// a global, or a variable of `to`'s function that is live there (a dead one is set
    /// to NULL; those of other functions are not looked at).
    pub fn holds_value_at(&self, prog: &Program, v: VarId, to: Node) -> bool {
        let Some(var) = prog.vars.get(v) else {
            return false;
        };
        let Some(func) = prog.graph.node_weight(to).map(|l| l.func) else {
            return false;
        };
        match var.scope {
            crate::cfa::Scope::Global => true,
            crate::cfa::Scope::Local(f)
            | crate::cfa::Scope::Param(f)
            | crate::cfa::Scope::Temp(f) => {
                f == func
                    && self
                        .live
                        .as_ref()
                        .is_none_or(|l| l.get(&to).is_some_and(|s| s.contains(&v)))
            }
        }
    }
    /// The same CPA with joined successors.
    pub fn joined(mut self) -> ShapeCpa {
        self.split = false;
        self
    }
    /// True for [`ShapeCpa::joined`] (one region of structures per state).
    pub fn is_joined(&self) -> bool {
        !self.split
    }
    /// The successor of `s` along `step` arriving at `to`, joined (None = bottom).
    pub fn post_joined(
        &self,
        prog: &Program,
        s: &ShapeState,
        step: Step,
        to: Node,
        prec: &ShapePrec,
    ) -> Option<ShapeState> {
        self.post_joined_with(prog, s, step, to, prec, &NOTHING_KNOWN)
    }
    /// [`ShapeCpa::post_joined`] strengthened by another domain: `stored` is what is
    /// known of the integer a `ptr->field = e` step writes (see [`Known`]; the field
    /// assertions on `field` at `ptr`'s node it decides become definite).
    pub fn post_joined_with(
        &self,
        prog: &Program,
        s: &ShapeState,
        step: Step,
        to: Node,
        prec: &ShapePrec,
        stored: &Known,
    ) -> Option<ShapeState> {
        // the classes by address too: a state is only ever answered with successors
        // that share its class objects (equal classes in other objects, from an earlier
        // ART, would make every later comparison with them a deep one)
        let mut t = ops::post_step(self, prog, s, step, stored)?;
        if let Some(live) = &self.live {
            ops::kill_dead(prog, &mut t, to, live.get(&to), &self.stack_vars);
        }
        let t = ops::convert_state(&t, &prec.classes_at(to));
        (!t.is_bottom()).then_some(t)
    }
    /// The strongest abstract post along a path from `s` (FineTune: the path is ruled
    /// out iff the result is `None`). `path` lists each step with its target location;
    /// `stored(i)` is what is known of the integer step `i` stores (see
    /// [`ShapeCpa::post_joined_with`]; `&|_| &NOTHING_KNOWN` for the shape domain alone).
    pub fn path_post<'a>(
        &self,
        prog: &Program,
        s: &ShapeState,
        path: &[(Step, Node)],
        prec: &ShapePrec,
        stored: &dyn Fn(usize) -> &'a Known,
    ) -> Option<ShapeState> {
        let mut cur = s.clone();
        for (i, (step, to)) in path.iter().enumerate() {
            cur = self.post_joined_with(prog, &cur, *step, *to, prec, stored(i))?;
            tracing::trace!(target: "shapemc::shape::path", "{}\n{}", crate::interp::render_step(prog, step), cur.render());
        }
        Some(cur)
    }
    /// [`Cpa::post`] with facts on the stored integer (see [`ShapeCpa::post_joined_with`]).
    pub fn post_with(
        &self,
        prog: &Program,
        s: &ShapeState,
        step: Step,
        to: Node,
        prec: &ShapePrec,
        stored: &Known,
    ) -> Vec<ShapeState> {
        match self.post_joined_with(prog, s, step, to, prec, stored) {
            None => Vec::new(),
            Some(t) if self.split => t.split(),
            Some(t) => vec![t],
        }
    }
}

impl Cpa for ShapeCpa {
    type State = ShapeState;
    type Prec = ShapePrec;

    fn name(&self) -> &'static str {
        "shape"
    }
    /// With leak tracking ([`ShapeComp::complete`]) when the program has leak checks:
    /// no heap object exists when a run starts.
    fn initial(&self, prog: &Program, prec: &ShapePrec) -> ShapeState {
        let mut s = ShapeState::initial(prec, prog.entry);
        if prog.has_leak_checks() {
            for c in s.comps.values_mut() {
                c.complete = true;
            }
        }
        s
    }
    fn post(
        &self,
        prog: &Program,
        s: &ShapeState,
        step: Step,
        to: Node,
        prec: &ShapePrec,
    ) -> Vec<ShapeState> {
        self.post_with(prog, s, step, to, prec, &NOTHING_KNOWN)
    }
    fn covers(&self, t: &ShapeState, s: &ShapeState) -> bool {
        s.subsumed_by(t)
    }
    fn covers_union(&self, ts: &[&ShapeState], s: &ShapeState) -> Option<Vec<usize>> {
        s.covered_by_union(ts)
    }
    /// [`ShapeState::covered_by`]: the default's answer, each structure question
    /// decided once.
    fn stop(&self, ts: &[&ShapeState], s: &ShapeState) -> Option<Vec<usize>> {
        s.covered_by(ts, ts.len() >= 2).filter(|u| !u.is_empty())
    }
}

/// Result of [`fixpoint`]: the joined state per (location, call stack) and statistics.
#[derive(Clone, Debug, Default)]
pub struct Fixpoint {
    pub states: BTreeMap<(Node, Vec<crate::cfa::EdgeId>), ShapeState>,
    /// Number of abstract posts computed.
    pub posts: usize,
    /// Error locations reached (non-bottom state).
    pub errors: BTreeSet<Node>,
    /// Set when the iteration limit stopped the computation.
    pub incomplete: bool,
}

impl Fixpoint {
    /// Structures per location (summed over call stacks and components).
    pub fn structures_per_location(&self) -> BTreeMap<Node, usize> {
        let mut m = BTreeMap::new();
        for ((n, _), s) in &self.states {
            *m.entry(*n).or_insert(0) += s.num_structures();
        }
        m
    }
}

/// A plain worklist fixpoint over the interprocedural CFA with join per (location, call
/// stack) (no ART, no coverage); stops after `max_posts` posts (`incomplete`).
/// Recursion is cut off (call stacks are bounded by the number of functions).
pub fn fixpoint(prog: &Program, prec: &ShapePrec, max_posts: usize) -> Fixpoint {
    let cpa = ShapeCpa::new(prog).joined();
    let mut fx = Fixpoint::default();
    let init = ShapeState::initial(prec, prog.entry);
    let key = (prog.entry, Vec::new());
    fx.states.insert(key.clone(), init);
    let mut work = std::collections::VecDeque::from([key]);
    let mut queued: BTreeSet<(Node, Vec<crate::cfa::EdgeId>)> = work.iter().cloned().collect();
    while let Some((loc, stack)) = work.pop_front() {
        queued.remove(&(loc, stack.clone()));
        let Some(s) = fx.states.get(&(loc, stack.clone())).cloned() else {
            continue;
        };
        if prog.is_error(loc) {
            fx.errors.insert(loc);
            continue;
        }
        for (step, to) in prog.next_steps(loc, &stack) {
            let mut st = stack.clone();
            match step {
                Step::Enter(e) => {
                    if st.contains(&e) || st.len() > prog.functions.len() {
                        continue;
                    }
                    st.push(e)
                }
                Step::Leave(_) => {
                    st.pop();
                }
                Step::Edge(_) => {}
            }
            if fx.posts >= max_posts {
                fx.incomplete = true;
                return fx;
            }
            fx.posts += 1;
            let Some(t) = cpa.post_joined(prog, &s, step, to, prec) else {
                continue;
            };
            let k = (to, st);
            let changed = match fx.states.get(&k) {
                None => {
                    fx.states.insert(k.clone(), t);
                    true
                }
                Some(old) if t.subsumed_by(old) => false,
                Some(old) => {
                    let j = old.join(&t).unwrap_or(t);
                    fx.states.insert(k.clone(), j);
                    true
                }
            };
            if changed && queued.insert(k.clone()) {
                work.push_back(k);
            }
        }
    }
    fx
}

/// One structure of a component (with its counts), as [`Coverage`] enumerates them.
type CovEntry<'a> = (&'a Structure, Option<&'a crate::affine::Affine>);

/// The coverage questions of one state `s` against candidates `others`, with the
/// answers of "does candidate `i` hold structure `j` of component `k`" memoised, so
/// that the single check and the stop-join ask each at most once.
struct Coverage<'a> {
    others: &'a [&'a ShapeState],
    /// The candidates that agree with `s` on everything but the structures.
    cands: Vec<usize>,
    /// `s`'s components and their structures.
    comps: Vec<(&'a StructId, Vec<CovEntry<'a>>)>,
    /// `offset[k]`: the index of component `k`'s first structure in a memo row.
    offset: Vec<usize>,
    /// Structures of `s` in all (the length of a memo row).
    total: usize,
    /// `memo[c * total + offset[k] + j]` for the candidate `cands[c]`: 0 not asked
    /// yet, 1 no, 2 yes (one allocation for all candidates).
    memo: Vec<u8>,
}

impl<'a> Coverage<'a> {
    fn new(s: &'a ShapeState, others: &'a [&'a ShapeState]) -> Coverage<'a> {
        let cands: Vec<usize> = (0..others.len())
            .filter(|&i| {
                let o = others[i];
                o.comps.len() == s.comps.len()
                    && s.comps
                        .iter()
                        .all(|(k, c)| o.comps.get(k).is_some_and(|oc| c.agrees_within(oc)))
                    && o.loaded.iter().all(|(k, v)| s.loaded.get(k) == Some(v))
            })
            .collect();
        let comps: Vec<(&StructId, Vec<CovEntry>)> = s
            .comps
            .iter()
            .map(|(k, c)| (k, c.region.entries().collect()))
            .collect();
        let mut offset = Vec::with_capacity(comps.len());
        let mut total = 0;
        for (_, v) in &comps {
            offset.push(total);
            total += v.len();
        }
        let memo = vec![0; cands.len() * total];
        Coverage {
            others,
            cands,
            comps,
            offset,
            total,
            memo,
        }
    }

    /// Does candidate `cands[c]` hold structure `j` of component `k` (index into
    /// `comps`)?
    fn holds(&mut self, c: usize, k: usize, j: usize) -> bool {
        let slot = c * self.total + self.offset[k] + j;
        match self.memo[slot] {
            1 => return false,
            2 => return true,
            _ => {}
        }
        let (key, v) = &self.comps[k];
        let (st, a) = v[j];
        let b = self.others[self.cands[c]].comps[*key].region.holds(st, a);
        self.memo[slot] = if b { 2 } else { 1 };
        b
    }

    /// The first candidate that holds every structure.
    fn single(&mut self) -> Option<usize> {
        for c in 0..self.cands.len() {
            let all = (0..self.comps.len())
                .all(|k| (0..self.comps[k].1.len()).all(|j| self.holds(c, k, j)));
            if all {
                return Some(self.cands[c]);
            }
        }
        None
    }

    /// The stop-join ([`ShapeState::covered_by_union`]).
    fn union(&mut self) -> Option<Vec<usize>> {
        if self.cands.is_empty() {
            return None;
        }
        let tuples = self
            .comps
            .iter()
            .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))?;
        if tuples > MAX_UNION_TUPLES {
            return None;
        }
        // positions in `cands`
        let mut used: Vec<usize> = Vec::new();
        let mut idx = vec![0usize; self.comps.len()];
        for _ in 0..tuples {
            // the candidate used last first: neighbouring tuples tend to share it
            let fits =
                |cov: &mut Coverage, c: usize| (0..idx.len()).all(|k| cov.holds(c, k, idx[k]));
            let mut found = None;
            for &c in used.iter().rev() {
                if fits(self, c) {
                    found = Some(c);
                    break;
                }
            }
            if found.is_none() {
                found = (0..self.cands.len()).find(|&c| fits(self, c));
            }
            let found = found?;
            if !used.contains(&found) {
                used.push(found);
            }
            for (d, (_, v)) in idx.iter_mut().zip(&self.comps) {
                *d += 1;
                if *d < v.len() {
                    break;
                }
                *d = 0;
            }
        }
        let mut used: Vec<usize> = used.into_iter().map(|c| self.cands[c]).collect();
        used.sort_unstable();
        Some(used)
    }
}
