//! `verify --shape-domain symheap`: predicate abstraction × symbolic heaps
//! ([`crate::symheap`]) under the CEGAR loop of [`super::model_check`], and the
//! check of its certificates.
//!
//! Refinement adds predicates from the interpolants as with `--domains pred`, and the
//! integer fields the interpolants read to the symbolic heap's precision
//! ([`SymPrec`]: folding keeps pieces apart that differ on such a field); when those
//! learn nothing, it counts integer variables (their values kept as equalities with
//! the segments' lengths, [`crate::symheap::counts`]). A path none of these rules out
//! ends the run UNKNOWN ("the refinement learned nothing"), never with a guess.

use super::{Abstraction, RefineInput, Refinement};
use crate::cert::{check_until, CertError, Certificate};
use crate::cfa::{Node, Program, Step};
use crate::cpa::{Cpa, Fingerprint, Product};
use crate::predabs::{Cube, Precision, PredAbs, PredScope};
use crate::symheap::cpa::SymHeapCpa;
use crate::symheap::fold::SymPrec;
use crate::symheap::SymHeap;

/// The name of [`PredSymHeap`] in certificates.
pub const SYMHEAP_CPA_NAME: &str = "pred+symheap";

/// The certificate of [`PredSymHeap`].
pub type SymHeapCertificate = Certificate<(SymHeap, Cube), (SymPrec, Precision)>;

/// Symbolic heaps × predicate abstraction: [`cpa::Product`](crate::cpa::Product) of
/// [`SymHeapCpa`] and [`PredAbs`], so the symbolic heap's successors come first (no
/// Z3; none means the step is infeasible), under its own name. Coverage is
/// componentwise, so the components' laws carry over; the fingerprint is the
/// symbolic heap's.
#[derive(Debug)]
pub struct PredSymHeap(pub Product<SymHeapCpa, PredAbs>);

impl PredSymHeap {
    /// A fresh CPA (no caches) for `prog`; `timeout_ms` per abstraction query.
    pub fn new(prog: &Program, timeout_ms: u32) -> PredSymHeap {
        PredSymHeap(Product(SymHeapCpa::new(prog), PredAbs::new(timeout_ms)))
    }
}

impl Cpa for PredSymHeap {
    type State = (SymHeap, Cube);
    type Prec = (SymPrec, Precision);

    fn name(&self) -> &'static str {
        SYMHEAP_CPA_NAME
    }
    fn initial(&self, prog: &Program, prec: &Self::Prec) -> Self::State {
        self.0.initial(prog, prec)
    }
    fn post(
        &self,
        prog: &Program,
        s: &Self::State,
        step: Step,
        to: Node,
        prec: &Self::Prec,
    ) -> Vec<Self::State> {
        self.0.post(prog, s, step, to, prec)
    }
    fn covers(&self, t: &Self::State, s: &Self::State) -> bool {
        self.0.covers(t, s)
    }
    fn adjust(&self, s: Self::State, at: Node, prec: &Self::Prec) -> Self::State {
        self.0.adjust(s, at, prec)
    }
    fn fingerprint(&self, s: &Self::State) -> Fingerprint {
        use std::hash::{Hash, Hasher};
        let mut fp = self.0 .0.fingerprint(&s.0);
        // merging also needs equal cubes
        if let Some(m) = &mut fp.merge {
            let mut h = rustc_hash::FxHasher::default();
            (m.exact, &s.1).hash(&mut h);
            m.exact = h.finish();
        }
        fp
    }
    fn merge_after(&self, at: Node, prec: &Self::Prec) -> usize {
        self.0 .0.merge_after(at, &prec.0)
    }
    /// Two states with the same cube: the symbolic heaps' merge (states equal but for
    /// their counts join).
    fn merge(
        &self,
        existing: &Self::State,
        new: &Self::State,
        at: Node,
        prec: &Self::Prec,
    ) -> Option<Self::State> {
        if existing.1 != new.1 {
            return None;
        }
        let heap = self.0 .0.merge(&existing.0, &new.0, at, &prec.0)?;
        Some((heap, existing.1.clone()))
    }
}

/// [`PredSymHeap`] with its precision; refinement is predicate refinement.
#[derive(Debug)]
pub struct SymHeapAbstraction {
    cpa: PredSymHeap,
    prec: (SymPrec, Precision),
    scope: PredScope,
    timeout_ms: u32,
    heap: SymHeapCpa,
}

impl SymHeapAbstraction {
    /// The abstraction of `prog` with the empty precision.
    pub fn new(prog: &Program, scope: PredScope, timeout_ms: u32) -> SymHeapAbstraction {
        let cpa = PredSymHeap::new(prog, timeout_ms);
        let heap = cpa.0 .0.clone();
        SymHeapAbstraction {
            cpa,
            prec: Default::default(),
            scope,
            timeout_ms,
            heap,
        }
    }
}

/// Puts every field of `from` that `to` lacks into `to`, noting `"{what} {field}"`
/// in `added` for each (a step up [`SymPrec`]'s lattice for every field at once).
fn raise_all(
    from: &std::collections::BTreeSet<crate::cfa::FieldRef>,
    to: &mut std::collections::BTreeSet<crate::cfa::FieldRef>,
    what: &str,
    name: &dyn Fn(crate::cfa::FieldRef) -> String,
    added: &mut Vec<String>,
) {
    let up: Vec<crate::cfa::FieldRef> = from.difference(to).copied().collect();
    for f in up {
        to.insert(f);
        added.push(format!("{what} {}", name(f)));
    }
}

impl Abstraction for SymHeapAbstraction {
    type Cpa = PredSymHeap;

    fn cpa(&self) -> &PredSymHeap {
        &self.cpa
    }
    fn checker(&self) -> PredSymHeap {
        PredSymHeap(Product(self.heap.clone(), PredAbs::new(self.timeout_ms)))
    }
    fn precision(&self) -> &(SymPrec, Precision) {
        &self.prec
    }
    fn set_deadline(&self, deadline: Option<std::time::Instant>) {
        self.cpa.0 .1.set_deadline(deadline);
    }
    fn refine(&mut self, prog: &Program, input: &RefineInput<'_, (SymHeap, Cube)>) -> Refinement {
        if tracing::enabled!(tracing::Level::DEBUG) {
            trace_path(prog, &self.heap, &self.prec.0, input);
        }
        let mut r = super::predicates::refine_predicates(
            prog,
            &mut self.prec.1,
            self.scope,
            64,
            input,
            &|_| true,
        );
        // an integer field the interpolants read is tracked from now on; one that
        // was tracked already keeps pieces apart
        let mut fields = std::collections::BTreeSet::new();
        for item in &input.interpolants.items {
            for a in &item.atoms {
                fields.extend(a.fields.iter().copied());
            }
        }
        let mut added = Vec::new();
        let prec = &mut self.prec.0;
        let name = |f: crate::cfa::FieldRef| {
            let def = prog.structs.get(f.strukt);
            let field = def.and_then(|d| d.fields.get(f.field));
            format!(
                "{}.{}",
                def.map_or("?", |d| d.name.as_str()),
                field.map_or("?", |d| d.name.as_str())
            )
        };
        for f in fields {
            if !crate::symheap::fold::is_int_field(prog, f) {
                continue;
            }
            let name = name(f);
            if prec.track.insert(f) {
                added.push(format!("track {name}"));
            } else if prec.split.insert(f) {
                added.push(format!("fold apart on {name}"));
            }
        }
        if added.is_empty() && r.pivot.is_none() {
            // nothing else learnt: the integer variables the interpolants compare are
            // counted from now on (their relation to the lists' lengths is kept)
            for item in &input.interpolants.items {
                for a in &item.atoms {
                    for &x in &a.vars {
                        if crate::shape::numeric::counter_type(prog, x) && prec.count.insert(x) {
                            let name = prog.vars.get(x).map_or("?", |v| v.name.as_str());
                            added.push(format!("count {name}"));
                        }
                    }
                }
            }
            // and those the path's integer comparisons read, with the variables
            // whose values flow into them along the path (through a function's
            // result too): interpolants may explain the path by the heap alone
            for x in path_counters(prog, input.path) {
                if prec.count.insert(x) {
                    let name = prog.vars.get(x).map_or("?", |v| v.name.as_str());
                    added.push(format!("count {name}"));
                }
            }
        }
        if added.is_empty() && r.pivot.is_none() {
            // nothing else learnt: every tracked field keeps pieces apart from now on
            // (a fact such as "the last object holds 1" is about a field the
            // interpolants may reach only through a pointer field, `p->next == NULL`)
            raise_all(
                &prec.track,
                &mut prec.split,
                "fold apart on",
                &name,
                &mut added,
            );
        }
        if added.is_empty() && r.pivot.is_none() {
            // nor that: the values of tracked fields the path's states hold are kept
            // at loop heads from now on (a loop bounded by a constant writes `i + len`,
            // which widening would forget)
            let seen = path_states(prog, &self.heap, prec, input, true)
                .iter()
                .flatten()
                .flat_map(|h| self.heap.unkept_values(prec, h))
                .collect::<std::collections::BTreeSet<_>>();
            for (f, k) in seen {
                if prec.keep.len() >= crate::symheap::fold::MAX_KEEP {
                    break;
                }
                let of_field = prec.keep.iter().filter(|p| p.0 == f).count();
                if of_field >= crate::symheap::fold::MAX_KEEP_PER_FIELD {
                    continue;
                }
                if prec.keep.insert((f, k)) {
                    added.push(format!("keep {} = {k}", name(f)));
                }
            }
        }
        if added.is_empty()
            && r.pivot.is_none()
            && !prec.unroll
            && !input.merged.is_empty()
            && path_states(prog, &self.heap, prec, input, false)
                .last()
                .is_some_and(|s| s.is_empty())
        {
            // nor that, and the path went through merged nodes, without which the
            // symbolic heaps rule it out: loops are unrolled a few times before their
            // states merge (a path through a merge may be no path of the program)
            prec.unroll = true;
            added.push(format!(
                "merge after {} states",
                crate::symheap::fold::UNROLL
            ));
        }
        if added.is_empty() && r.pivot.is_none() {
            // nor that: segments keep the order of every split field's values (a
            // red object is followed by a black one) from now on
            raise_all(&prec.split, &mut prec.order, "order", &name, &mut added);
            if !added.is_empty() && prec.unroll {
                // tried without unrolling first (the order may be what the merged
                // path lacked; unrolling is set again if not)
                prec.unroll = false;
                added.push("merge at once".into());
            }
        }
        if !added.is_empty() {
            // folding changes everywhere: rebuild from the root
            r.pivot = Some(0);
            r.added.extend(added);
            r.unhandled.clear();
        }
        r
    }
    fn stats(&self) -> serde_json::Value {
        let s = self.cpa.0 .1.stats();
        serde_json::json!({
            "predicates": self.prec.1.preds.len(),
            "z3_queries": s.z3_queries,
            "time_abstraction_z3_s": s.z3_time.as_secs_f64(),
        })
    }
}

/// The signed 32-bit variables that `path`'s integer comparisons read, closed under
/// the path's assignments, parameter bindings and returns into them.
fn path_counters(prog: &Program, path: &[Step]) -> std::collections::BTreeSet<crate::cfa::VarId> {
    use crate::cfa::{Expr, Op};
    use crate::shape::numeric::counter_type;
    let vars = |e: &Expr, out: &mut Vec<crate::cfa::VarId>| e.vars(out);
    let op = |e| prog.graph.edge_weight(e).map(|x| &x.op);
    let mut out = std::collections::BTreeSet::new();
    for step in path {
        if let Step::Edge(e) = step {
            if let Some(Op::Assume { cond }) = op(*e) {
                let mut vs = Vec::new();
                vars(cond, &mut vs);
                if vs
                    .iter()
                    .all(|x| prog.vars.get(*x).is_some_and(|v| v.ty.is_int()))
                {
                    out.extend(vs.into_iter().filter(|x| counter_type(prog, *x)));
                }
            }
        }
    }
    // the flows into counted variables, to a fixed point
    loop {
        let before = out.len();
        for step in path {
            let mut flow = |dst: crate::cfa::VarId, src: &Expr| {
                if out.contains(&dst) {
                    let mut vs = Vec::new();
                    vars(src, &mut vs);
                    out.extend(vs.into_iter().filter(|x| counter_type(prog, *x)));
                }
            };
            match step {
                Step::Edge(e) => {
                    if let Some(Op::Assign { dst, src }) = op(*e) {
                        flow(*dst, src);
                    }
                }
                Step::Enter(e) | Step::Leave(e) => {
                    let Some(Op::Call { callee, args, ret }) = op(*e) else {
                        continue;
                    };
                    let Some(f) = prog.functions.get(*callee) else {
                        continue;
                    };
                    if matches!(step, Step::Enter(_)) {
                        for (p, a) in f.params.iter().zip(args) {
                            flow(*p, a);
                        }
                    } else if let (Some(dst), Some(r)) = (ret, f.ret) {
                        flow(*dst, &Expr::Var(r));
                    }
                }
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// The symbolic heaps `heap` reaches along `input`'s path: after each step, every
/// state (the path's first state is the initial one, not listed); at a merged node,
/// the ART's merged state instead if `merged`.
fn path_states(
    prog: &Program,
    heap: &SymHeapCpa,
    prec: &SymPrec,
    input: &RefineInput<'_, (SymHeap, Cube)>,
    merged: bool,
) -> Vec<Vec<SymHeap>> {
    let mut states = vec![heap.initial(prog, prec)];
    let mut out = Vec::new();
    for (i, step) in input.path.iter().enumerate() {
        let Some(&to) = input.locs.get(i + 1) else {
            break;
        };
        let mut next: Vec<SymHeap> = Vec::new();
        for s in &states {
            for t in heap.post(prog, s, *step, to, prec) {
                if !next.contains(&t) {
                    next.push(t);
                }
            }
        }
        states = next;
        // the ART's merged node holds more than this step's successors: go on from it
        let at_merged = input.merged.iter().position(|&m| m == i + 1);
        if let Some((h, _)) = at_merged
            .filter(|_| merged)
            .and_then(|j| input.merged_states.get(j))
        {
            states = vec![h.clone()];
        }
        out.push(states.clone());
    }
    out
}

/// Logs (debug) the symbolic heaps along a path to refine: every state the heap
/// domain reaches after each step (at most four shown), so that a reader sees where a
/// fact was lost.
fn trace_path(
    prog: &Program,
    heap: &SymHeapCpa,
    prec: &SymPrec,
    input: &RefineInput<'_, (SymHeap, Cube)>,
) {
    for (i, states) in path_states(prog, heap, prec, input, true)
        .iter()
        .enumerate()
    {
        let to = input.locs.get(i + 1).copied();
        let src = to
            .and_then(|to| prog.graph.node_weight(to))
            .map(|l| l.src.to_string());
        let shown: Vec<String> = states.iter().take(4).map(|s| s.render(prog)).collect();
        let merged = if input.merged.contains(&(i + 1)) {
            ", the ART's merged node"
        } else {
            ""
        };
        tracing::debug!(
            "symheap path step {i} to {} ({} states{merged}): {}",
            src.unwrap_or_default(),
            states.len(),
            shown.join("  |  ")
        );
    }
}

/// Checks a [`SymHeapCertificate`] read from a file: its well-formedness for `prog`
/// first (precision, every state, locations and steps), then
/// [`crate::cert::check_until`] with a fresh [`PredSymHeap`].
pub fn check_certificate(
    prog: &Program,
    cert: &SymHeapCertificate,
    deadline: Option<std::time::Instant>,
    memory_limit_mb: Option<u64>,
) -> Result<(), CertError> {
    let malformed = |e: String| CertError::Malformed(e);
    if cert.format != crate::cert::FORMAT {
        return Err(malformed(format!(
            "unknown certificate format `{}`",
            cert.format
        )));
    }
    if cert.cpa != SYMHEAP_CPA_NAME {
        return Err(malformed(format!(
            "certificate of CPA `{}`, expected `{SYMHEAP_CPA_NAME}`",
            cert.cpa
        )));
    }
    cert.precision.0.validate(prog).map_err(malformed)?;
    cert.precision.1.validate(prog).map_err(malformed)?;
    let n = cert.precision.1.preds.len() as u32;
    let edges = prog.graph.edge_count();
    for node in &cert.nodes {
        let (heap, cube) = &node.state;
        if !cube.is_normal() || cube.0.iter().any(|(i, _)| *i >= n) {
            return Err(CertError::Node(node.id, "malformed predicate cube".into()));
        }
        heap.validate(prog)
            .map_err(|e| CertError::Node(node.id, format!("malformed symbolic heap: {e}")))?;
        if node.stack.iter().any(|&e| e >= edges) {
            return Err(CertError::Node(node.id, "call stack names no edge".into()));
        }
        if let Some(Step::Edge(e) | Step::Enter(e) | Step::Leave(e)) = node.step {
            if e.index() >= edges {
                return Err(CertError::Node(node.id, "step names no edge".into()));
            }
        }
    }
    check_until(
        &PredSymHeap::new(prog, 10_000),
        prog,
        cert,
        deadline,
        memory_limit_mb,
    )
}
