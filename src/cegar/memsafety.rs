//! The memory properties in the CEGAR loop (`verify --property valid-memsafety` /
//! `valid-memcleanup`, [`crate::spec`]).
//!
//! - What a replayed path to a target means ([`target_meaning`]): under
//!   valid-memsafety the NULL- and invalid-dereference targets are valid-deref
//!   violations, the invalid-free targets valid-free violations; everything else
//!   (division by zero, a call through an invalid function pointer, and `reach_error()`,
//!   which is an ordinary call under a memory property but whose continuation the CFA
//!   does not keep) is recorded and forbids SAFE, as undefined behaviour does for
//!   unreach-call.
//! - The random bug hunt ([`hunt_memory_violation`]): a run that ends in an invalid
//!   dereference or free, or that loses (valid-memtrack) or does not free
//!   (valid-memcleanup) heap memory ([`crate::interp::HeapAtEnd`]), is confirmed like
//!   any counterexample: Z3 finds its path feasible and the replay of Z3's model ends
//!   in the same violation.
//! - Leaks in the ART: the program carries leak checks ([`Program::add_leak_checks`]:
//!   where runs end, and for valid-memtrack at loop heads); a replayed path to one is
//!   a valid-memtrack / valid-memcleanup violation, a feasible one that does not
//!   replay makes the abstraction track every allocated type on explicit heaps
//!   ([`super::Abstraction::refine_leak`]), which decide the checks
//!   ([`crate::explicit::ExplicitState::leak`]). [`memory_proof_obligation`] only
//!   asks that a program that allocates carries the checks.

use super::{counterexample, replay_model, CegarOptions};
use crate::cfa::{LocKind, Program, Step};
use crate::interp::{
    replay_to_end, run_random_to_end, violated_subproperty, Limits, MemErrorKind, Outcome,
};
use crate::simulate::Counterexample;
use crate::smt::{timeout_until, SmtOptions};
use crate::spec::{Property, Subproperty};
use std::time::{Duration, Instant};

/// What reaching a target location (replayed) means for a property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetMeaning {
    /// The property is violated: UNSAFE (with the subproperty under a memory property).
    Violation(Option<Subproperty>),
    /// Recorded: no SAFE answer, the search goes on (a real violation may follow).
    NoProof,
}

/// The meaning of a replayed path to a target of `kind` under `property`.
pub fn target_meaning(property: Property, kind: LocKind) -> TargetMeaning {
    match (property, kind) {
        (Property::UnreachCall, LocKind::Error) => TargetMeaning::Violation(None),
        (Property::ValidMemsafety, LocKind::NullDeref | LocKind::InvalidDeref) => {
            TargetMeaning::Violation(Some(Subproperty::ValidDeref))
        }
        (Property::ValidMemsafety, LocKind::InvalidFree) => {
            TargetMeaning::Violation(Some(Subproperty::ValidFree))
        }
        (Property::ValidMemsafety, LocKind::MemLeak) => {
            TargetMeaning::Violation(Some(Subproperty::ValidMemtrack))
        }
        (Property::ValidMemcleanup, LocKind::MemLeak) => {
            TargetMeaning::Violation(Some(Subproperty::ValidMemcleanup))
        }
        _ => TargetMeaning::NoProof,
    }
}

/// The target kinds whose check edge stands beside an access that fails with `kind`.
fn target_kinds(kind: MemErrorKind) -> &'static [LocKind] {
    match kind {
        MemErrorKind::NullDeref => &[LocKind::NullDeref],
        MemErrorKind::DoubleFree | MemErrorKind::InvalidFree => &[LocKind::InvalidFree],
        MemErrorKind::Leak => &[LocKind::MemLeak],
        _ => &[LocKind::InvalidDeref],
    }
}

/// `Err(reason)` when a complete ART under `property` is no proof of it: a program
/// that allocates heap memory must carry the leak checks of the property
/// ([`Program::add_leak_checks`], which `verify` and `check-certificate` add), whose
/// targets the complete ART then proves unreachable like every other target.
pub fn memory_proof_obligation(prog: &Program, property: Property) -> Result<(), String> {
    if !property.is_memory() || !prog.allocates() || prog.has_leak_checks() {
        return Ok(());
    }
    let what = match property {
        Property::ValidMemcleanup => "valid-memcleanup",
        _ => "valid-memtrack",
    };
    Err(format!(
        "every dereference and free is proved valid, but {what} is not proved (the program has no leak checks)"
    ))
}

/// Random runs of [`hunt_memory_violation`].
const HUNT_RUNS: u64 = 256;
/// Their wall-clock budget.
const HUNT_BUDGET: Duration = Duration::from_secs(3);

/// A confirmed violation found by a random run: its seed, the subproperty, the
/// counterexample and a log line.
pub struct Found {
    pub seed: u64,
    pub violated: Subproperty,
    pub counterexample: Counterexample,
}

/// Random runs looking for a violation of the memory `property` ([`HUNT_RUNS`] seeds,
/// at most [`HUNT_BUDGET`], never past `deadline` by more than a quarter of it); each
/// one found must be confirmed: Z3 finds the run's path feasible and the replay of its
/// model ends in the same violation. `None` for unreach-call.
pub fn hunt_memory_violation(
    prog: &Program,
    property: Property,
    opts: &CegarOptions,
    deadline: Option<Instant>,
) -> Option<Found> {
    if !property.is_memory() {
        return None;
    }
    let now = Instant::now();
    let hard_stop = deadline.map(|d| d.max(now) + HUNT_BUDGET / 4);
    let stop = hard_stop.map_or(now + HUNT_BUDGET, |h| h.min(now + HUNT_BUDGET));
    let limits = Limits {
        max_steps: super::SANITY_STEPS,
        malloc_never_fails: prog.malloc_never_fails,
    };
    for seed in 0..HUNT_RUNS {
        if Instant::now() >= stop {
            return None;
        }
        let (run, heap) = run_random_to_end(prog, seed, &limits);
        let candidate = match (&run.outcome, heap) {
            (Outcome::MemError { kind, .. }, _) => violated_subproperty(property, *kind)
                .and_then(|s| to_target(prog, &run.trace, *kind).map(|p| (s, p))),
            (Outcome::Exit, Some(h)) => h.violated(property).map(|s| (s, run.trace.clone())),
            _ => None,
        };
        let Some((violated, path)) = candidate else {
            continue;
        };
        let timeout_ms = timeout_until(opts.smt_timeout_ms, hard_stop, Instant::now())?;
        let smt = SmtOptions {
            timeout_ms,
            ..SmtOptions::default()
        };
        let model = match crate::smt::check_path_with(prog, &path, &smt) {
            Ok(crate::smt::Feasibility::Feasible(m)) => m,
            other => {
                tracing::warn!(
                    "random run {seed} violates {violated} but its path is not feasible for Z3 ({})",
                    match other {
                        Ok(_) => "infeasible".to_string(),
                        Err(e) => e.to_string(),
                    }
                );
                continue;
            }
        };
        if let Some(cex) = confirm(prog, property, violated, path, &model) {
            return Some(Found {
                seed,
                violated,
                counterexample: cex,
            });
        }
        tracing::warn!("random run {seed}: Z3's model does not replay to the {violated} violation");
    }
    None
}

/// The replay of Z3's `model` of `path` ends in the violation: the counterexample.
fn confirm(
    prog: &Program,
    property: Property,
    violated: Subproperty,
    path: Vec<Step>,
    model: &crate::smt::Model,
) -> Option<Counterexample> {
    match violated {
        Subproperty::ValidDeref | Subproperty::ValidFree => {
            let (inputs, run) = replay_model(prog, &path, model);
            let at = match path.last() {
                Some(Step::Edge(e)) => prog.graph.edge_endpoints(*e)?.1,
                _ => return None,
            };
            let ok = super::replays_target(prog.graph[at].kind, &run.outcome)
                && target_meaning(property, prog.graph[at].kind)
                    == TargetMeaning::Violation(Some(violated));
            ok.then(|| counterexample(prog, path, inputs, &run))
        }
        Subproperty::ValidMemtrack | Subproperty::ValidMemcleanup => {
            let inputs = model.to_inputs();
            let limits = Limits {
                max_steps: path.len() + 10,
                malloc_never_fails: prog.malloc_never_fails,
            };
            let (run, heap) = replay_to_end(prog, &path, &inputs, &limits);
            let ok = heap.is_some_and(|h| h.violated(property) == Some(violated));
            ok.then(|| counterexample(prog, path, inputs, &run))
        }
    }
}

/// The path of a run that failed with `kind` at its last step (the access), ending
/// instead on the sibling check edge into the target of that memory error, as an ART
/// path to the target would.
fn to_target(prog: &Program, trace: &[Step], kind: MemErrorKind) -> Option<Vec<Step>> {
    let (Step::Edge(access), before) = trace.split_last()? else {
        return None;
    };
    let (from, _) = prog.graph.edge_endpoints(*access)?;
    let check = prog
        .successors(from)
        .find(|(_, to, _)| target_kinds(kind).contains(&prog.graph[*to].kind))?;
    let mut path = before.to_vec();
    path.push(Step::Edge(check.0));
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::parse_c;

    fn hunt(src: &str, property: Property) -> Option<Subproperty> {
        let mut prog = parse_c(src);
        prog.malloc_never_fails = true;
        let found = hunt_memory_violation(&prog, property, &CegarOptions::default(), None)?;
        assert!(!found.counterexample.path.is_empty());
        Some(found.violated)
    }

    const NODE: &str = "#include <stdlib.h>\nstruct n { struct n *next; int d; };\nextern int __VERIFIER_nondet_int(void);\n";

    #[test]
    fn finds_and_confirms_each_kind_of_violation() {
        let leak = format!(
            "{NODE}int main(void) {{ struct n *p = malloc(sizeof(struct n)); p = 0; return 0; }}"
        );
        assert_eq!(
            hunt(&leak, Property::ValidMemsafety),
            Some(Subproperty::ValidMemtrack)
        );
        assert_eq!(
            hunt(&leak, Property::ValidMemcleanup),
            Some(Subproperty::ValidMemcleanup)
        );
        assert_eq!(hunt(&leak, Property::UnreachCall), None);
        let double = format!("{NODE}int main(void) {{ struct n *p = malloc(sizeof(struct n)); free(p); if (__VERIFIER_nondet_int()) free(p); return 0; }}");
        assert_eq!(
            hunt(&double, Property::ValidMemsafety),
            Some(Subproperty::ValidFree)
        );
        let uaf = format!("{NODE}int main(void) {{ struct n *p = malloc(sizeof(struct n)); free(p); p->d = 1; return 0; }}");
        assert_eq!(
            hunt(&uaf, Property::ValidMemsafety),
            Some(Subproperty::ValidDeref)
        );
        // memcleanup: a dereference error is no evidence either way
        assert_eq!(hunt(&uaf, Property::ValidMemcleanup), None);
    }

    #[test]
    fn a_clean_program_has_no_violation() {
        let ok = format!("{NODE}struct n *g;\nint main(void) {{ struct n *p = malloc(sizeof(struct n)); struct n *q = malloc(sizeof(struct n)); p->next = q; g = p; free(q); free(p); return 0; }}");
        assert_eq!(hunt(&ok, Property::ValidMemsafety), None);
        assert_eq!(hunt(&ok, Property::ValidMemcleanup), None);
        // memory a global still reaches is tracked, but not cleaned up
        let global = format!(
            "{NODE}struct n *g;\nint main(void) {{ g = malloc(sizeof(struct n)); return 0; }}"
        );
        assert_eq!(hunt(&global, Property::ValidMemsafety), None);
        assert_eq!(
            hunt(&global, Property::ValidMemcleanup),
            Some(Subproperty::ValidMemcleanup)
        );
    }

    #[test]
    fn targets_mean_what_the_property_says() {
        use TargetMeaning::*;
        let m = Property::ValidMemsafety;
        assert_eq!(
            target_meaning(m, LocKind::NullDeref),
            Violation(Some(Subproperty::ValidDeref))
        );
        assert_eq!(
            target_meaning(m, LocKind::InvalidFree),
            Violation(Some(Subproperty::ValidFree))
        );
        assert_eq!(target_meaning(m, LocKind::Error), NoProof);
        assert_eq!(target_meaning(m, LocKind::DivByZero), NoProof);
        assert_eq!(
            target_meaning(Property::ValidMemcleanup, LocKind::NullDeref),
            NoProof
        );
        assert_eq!(
            target_meaning(Property::UnreachCall, LocKind::Error),
            Violation(None)
        );
        assert_eq!(
            target_meaning(Property::UnreachCall, LocKind::NullDeref),
            NoProof
        );
    }

    #[test]
    fn programs_that_allocate_need_their_leak_checks() {
        let alloc = parse_c(&format!(
            "{NODE}int main(void) {{ struct n *p = malloc(sizeof(struct n)); free(p); return 0; }}"
        ));
        assert!(memory_proof_obligation(&alloc, Property::UnreachCall).is_ok());
        assert!(memory_proof_obligation(&alloc, Property::ValidMemsafety).is_err());
        assert!(memory_proof_obligation(&alloc, Property::ValidMemcleanup).is_err());
        for p in [Property::ValidMemsafety, Property::ValidMemcleanup] {
            let mut checked = alloc.clone();
            assert!(checked.add_leak_checks(p) > 0);
            assert!(memory_proof_obligation(&checked, p).is_ok());
        }
        let none = parse_c("int main(void) { int x = 1; return x - 1; }");
        assert!(memory_proof_obligation(&none, Property::ValidMemsafety).is_ok());
    }

    #[test]
    fn a_leak_target_is_the_violation_of_the_memory_property() {
        use TargetMeaning::*;
        assert_eq!(
            target_meaning(Property::ValidMemsafety, LocKind::MemLeak),
            Violation(Some(Subproperty::ValidMemtrack))
        );
        assert_eq!(
            target_meaning(Property::ValidMemcleanup, LocKind::MemLeak),
            Violation(Some(Subproperty::ValidMemcleanup))
        );
        assert_eq!(
            target_meaning(Property::UnreachCall, LocKind::MemLeak),
            NoProof
        );
    }
}
