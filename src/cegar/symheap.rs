//! `verify --shape-domain symheap`: predicate abstraction × symbolic heaps
//! ([`crate::symheap`]) under the CEGAR loop of [`super::model_check`], and the
//! check of its certificates.
//!
//! The symbolic-heap domain has no precision of its own (its abstraction is the fixed
//! folding of [`crate::symheap::fold`]); refinement adds predicates from the
//! interpolants as with `--domains pred`. A path the predicates cannot rule out ends
//! the run UNKNOWN ("the refinement learned nothing"), never with a guess.

use super::{Abstraction, RefineInput, Refinement};
use crate::cert::{check_until, CertError, Certificate};
use crate::cfa::{Node, Program, Step};
use crate::cpa::{Cpa, Fingerprint};
use crate::predabs::{Cube, Precision, PredAbs, PredScope};
use crate::symheap::cpa::SymHeapCpa;
use crate::symheap::SymHeap;

/// The name of [`PredSymHeap`] in certificates.
pub const SYMHEAP_CPA_NAME: &str = "pred+symheap";

/// The certificate of [`PredSymHeap`].
pub type SymHeapCertificate = Certificate<(Cube, SymHeap), (Precision, ())>;

/// Predicate abstraction × symbolic heaps: the product of [`PredAbs`] and
/// [`SymHeapCpa`], the symbolic heap's successors first (no Z3; none means the step is
/// infeasible). Coverage is componentwise, so the components' laws carry over.
#[derive(Debug)]
pub struct PredSymHeap {
    pub pred: PredAbs,
    pub heap: SymHeapCpa,
}

impl PredSymHeap {
    /// A fresh CPA (no caches) for `prog`; `timeout_ms` per abstraction query.
    pub fn new(prog: &Program, timeout_ms: u32) -> PredSymHeap {
        PredSymHeap {
            pred: PredAbs::new(timeout_ms),
            heap: SymHeapCpa::new(prog),
        }
    }
}

impl Cpa for PredSymHeap {
    type State = (Cube, SymHeap);
    type Prec = (Precision, ());

    fn name(&self) -> &'static str {
        SYMHEAP_CPA_NAME
    }
    fn initial(&self, prog: &Program, prec: &Self::Prec) -> Self::State {
        (
            self.pred.initial(prog, &prec.0),
            self.heap.initial(prog, &()),
        )
    }
    fn post(
        &self,
        prog: &Program,
        s: &Self::State,
        step: Step,
        to: Node,
        prec: &Self::Prec,
    ) -> Vec<Self::State> {
        let heaps = self.heap.post(prog, &s.1, step, to, &());
        if heaps.is_empty() {
            return Vec::new();
        }
        let cubes = self.pred.post(prog, &s.0, step, to, &prec.0);
        let mut out = Vec::with_capacity(heaps.len() * cubes.len());
        for c in &cubes {
            for h in &heaps {
                out.push((c.clone(), h.clone()));
            }
        }
        out
    }
    fn covers(&self, t: &Self::State, s: &Self::State) -> bool {
        self.pred.covers(&t.0, &s.0) && self.heap.covers(&t.1, &s.1)
    }
    fn adjust(&self, s: Self::State, at: Node, prec: &Self::Prec) -> Self::State {
        (self.pred.adjust(s.0, at, &prec.0), s.1)
    }
    fn fingerprint(&self, s: &Self::State) -> Fingerprint {
        self.heap.fingerprint(&s.1)
    }
}

/// [`PredSymHeap`] with its precision; refinement is predicate refinement.
#[derive(Debug)]
pub struct SymHeapAbstraction {
    cpa: PredSymHeap,
    prec: (Precision, ()),
    scope: PredScope,
    timeout_ms: u32,
    heap: SymHeapCpa,
}

impl SymHeapAbstraction {
    /// The abstraction of `prog` with the empty precision.
    pub fn new(prog: &Program, scope: PredScope, timeout_ms: u32) -> SymHeapAbstraction {
        let cpa = PredSymHeap::new(prog, timeout_ms);
        let heap = cpa.heap.clone();
        SymHeapAbstraction {
            cpa,
            prec: Default::default(),
            scope,
            timeout_ms,
            heap,
        }
    }
}

impl Abstraction for SymHeapAbstraction {
    type Cpa = PredSymHeap;

    fn cpa(&self) -> &PredSymHeap {
        &self.cpa
    }
    fn checker(&self) -> PredSymHeap {
        PredSymHeap {
            pred: PredAbs::new(self.timeout_ms),
            heap: self.heap.clone(),
        }
    }
    fn precision(&self) -> &(Precision, ()) {
        &self.prec
    }
    fn set_deadline(&self, deadline: Option<std::time::Instant>) {
        self.cpa.pred.set_deadline(deadline);
    }
    fn refine(&mut self, prog: &Program, input: &RefineInput<'_, (Cube, SymHeap)>) -> Refinement {
        super::predicates::refine_predicates(prog, &mut self.prec.0, self.scope, 64, input, &|_| {
            true
        })
    }
    fn stats(&self) -> serde_json::Value {
        let s = self.cpa.pred.stats();
        serde_json::json!({
            "predicates": self.prec.0.preds.len(),
            "z3_queries": s.z3_queries,
            "time_abstraction_z3_s": s.z3_time.as_secs_f64(),
        })
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
    let n = cert.precision.0.preds.len() as u32;
    let edges = prog.graph.edge_count();
    for node in &cert.nodes {
        let (cube, heap) = &node.state;
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
