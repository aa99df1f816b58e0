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
//! - Threshold (BuildART's condition (c)) and `Abstract` (Algorithm 2) need the shape
//!   domain; until it is available the explicit analysis runs without threshold (fixed
//!   size heaps complete; unbounded ones run into the time or node limit → UNKNOWN,
//!   while bugs are still found on the explicit heaps).
//!
//! Soundness: SAFE and UNSAFE come only from [`super::model_check`], which checks the
//! certificate with a fresh CPA and replays counterexamples.

use super::predicates::refine_predicates;
use super::{Abstraction, RefineInput, Refinement};
use crate::cert::Certificate;
use crate::cfa::{Node, Program, Step, StructId, VarId};
use crate::cpa::Cpa;
use crate::explicit::{CellTy, ExplicitCpa, ExplicitPrec, ExplicitState};
use crate::predabs::{Cube, Precision, PredAbs, PredScope};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The name of [`HeapCpa`] in certificates.
pub const HEAP_CPA_NAME: &str = "pred+explicit";

/// A state of [`HeapCpa`]: a predicate cube and an explicit heap.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HeapState {
    pub pred: Cube,
    pub explicit: ExplicitState,
}

/// The precision of [`HeapCpa`]: predicates and the explicit-heap abstraction Θ.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HeapPrec {
    pub pred: Precision,
    pub explicit: ExplicitPrec,
}

/// Predicate abstraction × explicit heap. Post: the explicit successors first (cheap;
/// none means the step is infeasible), then the predicate successors, all pairs.
/// Coverage and precision adjustment are componentwise, so the CPA laws of both
/// components carry over.
#[derive(Debug, Default)]
pub struct HeapCpa {
    pub pred: PredAbs,
    pub explicit: ExplicitCpa,
}

impl HeapCpa {
    /// A fresh CPA (no caches) with the given Z3 timeout per abstraction query.
    pub fn new(timeout_ms: u32) -> HeapCpa {
        HeapCpa {
            pred: PredAbs::new(timeout_ms),
            explicit: ExplicitCpa,
        }
    }
}

impl Cpa for HeapCpa {
    type State = HeapState;
    type Prec = HeapPrec;

    fn name(&self) -> &'static str {
        HEAP_CPA_NAME
    }
    fn initial(&self, prog: &Program, prec: &HeapPrec) -> HeapState {
        HeapState {
            pred: self.pred.initial(prog, &prec.pred),
            explicit: self.explicit.initial(prog, &prec.explicit),
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
        let pr = self.pred.post(prog, &s.pred, step, to, &prec.pred);
        let mut out = Vec::with_capacity(ex.len() * pr.len());
        for p in &pr {
            for e in &ex {
                out.push(HeapState {
                    pred: p.clone(),
                    explicit: e.clone(),
                });
            }
        }
        out
    }
    fn covers(&self, t: &HeapState, s: &HeapState) -> bool {
        self.explicit.covers(&t.explicit, &s.explicit) && self.pred.covers(&t.pred, &s.pred)
    }
    fn adjust(&self, s: HeapState, at: Node, prec: &HeapPrec) -> HeapState {
        HeapState {
            pred: self.pred.adjust(s.pred, at, &prec.pred),
            explicit: self.explicit.adjust(s.explicit, at, &prec.explicit),
        }
    }
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

/// The combined abstraction under CEGAR (see the module documentation).
#[derive(Debug)]
pub struct HeapAbstraction {
    pub cpa: HeapCpa,
    pub prec: HeapPrec,
    pub scope: PredScope,
    /// Z3 timeout per abstraction query (ms).
    pub timeout_ms: u32,
    /// Upper bound on atoms taken from one interpolant.
    pub max_atoms: usize,
    /// Pointer groups tracked on explicit heaps.
    pub explicit_groups: BTreeSet<PtrGroup>,
    /// Integer variables tracked explicitly (fallback refinement).
    pub explicit_ints: BTreeSet<VarId>,
    /// How SCGs are chosen once the shape domain takes over.
    pub scg_mode: crate::cli::ScgMode,
}

impl HeapAbstraction {
    /// The initial abstraction: no predicates, Θ = ∅ (nothing tracked explicitly).
    pub fn new(scope: PredScope, timeout_ms: u32, scg_mode: crate::cli::ScgMode) -> Self {
        HeapAbstraction {
            cpa: HeapCpa::new(timeout_ms),
            prec: HeapPrec::default(),
            scope,
            timeout_ms,
            max_atoms: 64,
            explicit_groups: BTreeSet::new(),
            explicit_ints: BTreeSet::new(),
            scg_mode,
        }
    }

    /// Switches pointer group `g` to explicit tracking: every pointer variable of the
    /// group is tracked at every location. Returns whether Θ changed.
    pub fn track_group(&mut self, prog: &Program, g: PtrGroup) -> bool {
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
    /// pointers, aliases, and the struct types of the fields they read).
    fn mentioned_groups(prog: &Program, input: &RefineInput<'_>) -> BTreeSet<PtrGroup> {
        let mut out = BTreeSet::new();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                for &x in a.pointers.iter().chain(&a.dereferenced) {
                    out.extend(PtrGroup::of(prog, x));
                }
                for f in &a.fields {
                    out.insert(PtrGroup::Struct(f.strukt));
                }
            }
            for &(x, y) in &item.aliases {
                out.extend(PtrGroup::of(prog, x));
                out.extend(PtrGroup::of(prog, y));
            }
        }
        out
    }

    /// Integer variables the atoms mention that are not tracked explicitly yet.
    fn mentioned_ints(&self, prog: &Program, input: &RefineInput<'_>) -> BTreeSet<VarId> {
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
}

impl Abstraction for HeapAbstraction {
    type Cpa = HeapCpa;

    fn cpa(&self) -> &HeapCpa {
        &self.cpa
    }
    fn checker(&self) -> HeapCpa {
        HeapCpa::new(self.timeout_ms)
    }
    fn precision(&self) -> &HeapPrec {
        &self.prec
    }
    fn set_deadline(&self, deadline: Option<std::time::Instant>) {
        self.cpa.pred.set_deadline(deadline);
    }
    fn final_scg(&self, prog: &Program) -> BTreeMap<String, String> {
        group_names(prog, &self.explicit_groups)
    }
    fn stats(&self) -> serde_json::Value {
        let s = self.cpa.pred.stats();
        serde_json::json!({
            "predicates": self.prec.pred.preds.len(),
            "precision_size": self.prec.pred.size(),
            "explicit_groups": self.explicit_groups.iter().map(|g| g.to_string()).collect::<Vec<_>>(),
            "explicit_vars": self.prec.explicit.everywhere.len(),
            "explicit_ints": self.explicit_ints.len(),
            "posts": s.posts,
            "post_cache_hits": s.cache_hits,
            "z3_queries": s.z3_queries,
            "time_abstraction_z3_s": s.z3_time.as_secs_f64(),
        })
    }

    fn refine(&mut self, prog: &Program, input: &RefineInput<'_>) -> Refinement {
        let mut r = refine_predicates(prog, &mut self.prec.pred, self.scope, self.max_atoms, input);
        // Pointers: a group seen for the first time is tracked on explicit heaps
        // (Algorithm 3, step 2, first case).
        let mut new_groups = Vec::new();
        for g in Self::mentioned_groups(prog, input) {
            if !self.explicit_groups.contains(&g) && self.track_group(prog, g) {
                new_groups.push(g);
            }
        }
        if !new_groups.is_empty() {
            for g in &new_groups {
                r.added.push(format!("track {} explicitly", g.name(prog)));
            }
            r.kind = "td";
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
    if cert.format != "shapemc-certificate-1" {
        return Err(format!("unknown certificate format `{}`", cert.format));
    }
    if cert.cpa != HEAP_CPA_NAME {
        return Err(format!(
            "certificate of CPA `{}`, expected `{HEAP_CPA_NAME}`",
            cert.cpa
        ));
    }
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
    crate::cert::check(&HeapCpa::new(10_000), prog, cert).map_err(|e| e.to_string())
}

/// How each struct type with tracked pointers is tracked, by struct name (for reports).
pub fn group_names(prog: &Program, groups: &BTreeSet<PtrGroup>) -> BTreeMap<String, String> {
    groups
        .iter()
        .filter(|g| **g != PtrGroup::Other)
        .map(|g| (g.name(prog), "explicit".to_string()))
        .collect()
}
