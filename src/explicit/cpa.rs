//! The explicit-heap domain as a [`Cpa`] for the ART (paper §3.1: the explicit heap
//! component `H` of ART nodes), with the explicit-heap abstraction Θ as precision.

use super::post::Domain;
use super::ExplicitState;
use crate::cfa::{Node, Program, Step, VarId};
use crate::cpa::Cpa;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The explicit-heap abstraction Θ: L → 2^X. A variable is tracked at location `l` if
/// it is in `everywhere` or in `at[l.index()]`; all other variables are ⊤ there.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplicitPrec {
    /// Variables tracked at every location.
    pub everywhere: BTreeSet<VarId>,
    /// Per location (by node index, so that the JSON form has string keys).
    pub at: BTreeMap<usize, BTreeSet<VarId>>,
}

impl ExplicitPrec {
    /// Θ(l) = ∅ everywhere (the initial abstraction).
    pub fn empty() -> ExplicitPrec {
        ExplicitPrec::default()
    }
    /// Every variable tracked everywhere.
    pub fn all(prog: &Program) -> ExplicitPrec {
        ExplicitPrec {
            everywhere: (0..prog.vars.len()).collect(),
            at: BTreeMap::new(),
        }
    }
    /// True if `x ∈ Θ(l)`.
    pub fn tracks(&self, l: Node, x: VarId) -> bool {
        self.everywhere.contains(&x) || self.at.get(&l.index()).is_some_and(|s| s.contains(&x))
    }
    /// Adds `x` to Θ(l).
    pub fn add(&mut self, l: Node, x: VarId) {
        self.at.entry(l.index()).or_default().insert(x);
    }
    /// Removes `x` from Θ everywhere (Algorithm 2: pointers handed to shape analysis).
    pub fn remove_everywhere(&mut self, x: VarId) {
        self.everywhere.remove(&x);
        for s in self.at.values_mut() {
            s.remove(&x);
        }
    }
}

/// The explicit-heap CPA: post = [`Domain::post_sound`] under Θ(target), coverage =
/// [`ExplicitState::leq`], precision adjustment = forgetting untracked variables.
/// `malloc_never_fails` comes from [`Program::malloc_never_fails`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ExplicitCpa;

impl Cpa for ExplicitCpa {
    type State = ExplicitState;
    type Prec = ExplicitPrec;

    fn name(&self) -> &'static str {
        "explicit"
    }
    /// With leak tracking ([`ExplicitState::leak`]) when the program has leak checks:
    /// no heap object exists when a run starts.
    fn initial(&self, prog: &Program, _prec: &ExplicitPrec) -> ExplicitState {
        let mut s = ExplicitState::initial(prog);
        if prog.has_leak_checks() {
            s.leak = Some(0);
        }
        s
    }
    fn post(
        &self,
        prog: &Program,
        s: &ExplicitState,
        step: Step,
        to: Node,
        prec: &ExplicitPrec,
    ) -> Vec<ExplicitState> {
        Domain::for_program(prog).post_sound(s, step, &|x| prec.tracks(to, x))
    }
    fn covers(&self, t: &ExplicitState, s: &ExplicitState) -> bool {
        s.leq(t)
    }
    fn adjust(&self, s: ExplicitState, at: Node, prec: &ExplicitPrec) -> ExplicitState {
        s.restrict(&|x| prec.tracks(at, x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::art::{build, Art, BuildOptions, BuildOutcome};
    use crate::explicit::depth::{SampleCollector, SampleThreshold};
    use crate::explicit::testutil::alloc_list_prog;

    #[test]
    fn build_art_stops_at_sample_threshold() {
        let prog = alloc_list_prog();
        let prec = ExplicitPrec::all(&prog);
        let mut art = Art::new(&prog, ExplicitCpa.initial(&prog, &prec));
        let mut col = SampleCollector::new(SampleThreshold {
            samples: 1,
            min_nodes: 4,
        });
        let out = build(
            &ExplicitCpa,
            &prog,
            &mut art,
            &prec,
            &BuildOptions::default(),
            &mut |n: &crate::art::ArtNode<ExplicitState>| {
                col.offer(&n.state);
                col.done()
            },
        );
        assert!(matches!(out, BuildOutcome::Threshold(_)), "{out:?}");
        assert_eq!(col.kept.len(), 1);
    }

    #[test]
    fn precision_round_trips_through_json() {
        let mut p = ExplicitPrec::empty();
        p.add(Node::new(3), 7);
        assert!(p.tracks(Node::new(3), 7) && !p.tracks(Node::new(4), 7));
        let j = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<ExplicitPrec>(&j).unwrap(), p);
        p.remove_everywhere(7);
        assert!(!p.tracks(Node::new(3), 7));
    }

    #[test]
    fn holding_invariants_enable_dll_scgs_only() {
        let (prog, h) = crate::explicit::testutil::fig1b();
        let c = crate::explicit::classify(&prog, 0, &[&h]);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scg-library");
        let lat = crate::scg::Lattice::load(Some(&dir)).expect("library loads");
        let enabled = lat.enabled(&c.holding_invariants(&prog));
        let mut structs: Vec<&str> = enabled.iter().filter_map(|m| m.structure()).collect();
        structs.sort();
        structs.dedup();
        assert_eq!(structs, ["dll", "sll"]);
    }

    #[test]
    fn empty_precision_completes() {
        // With Θ = ∅ every pointer is ⊤: the loop is covered and the ART completes.
        let prog = alloc_list_prog();
        let prec = ExplicitPrec::empty();
        let mut art = Art::new(&prog, ExplicitCpa.initial(&prog, &prec));
        let out = build(
            &ExplicitCpa,
            &prog,
            &mut art,
            &prec,
            &BuildOptions::default(),
            &mut |_| false,
        );
        assert_eq!(out, BuildOutcome::Complete);
    }
}
