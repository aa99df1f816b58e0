//! The SAFE gate: the last checks between a complete ART and a SAFE answer.

use crate::cert::{check_until, CertError, Certificate};
use crate::cfa::Program;
use crate::cpa::Cpa;
use std::time::Instant;

/// Random runs tried before a SAFE answer ([`crate::interp::find_run`]): one that
/// reaches the error or ends in a memory error (undefined behaviour) prevents it.
pub const SANITY_RUNS: u64 = 64;
/// Step limit of each of those runs.
pub const SANITY_STEPS: usize = 20_000;

/// The SAFE gate: `cert` (of a complete ART) must be accepted by `checker`, a fresh
/// instance of the CPA ([`check_until`], within `deadline` and `memory_limit_mb`), and
/// [`SANITY_RUNS`] random concrete runs must all miss the error locations and every
/// memory error. `Ok(())` allows SAFE; `Err` is the reason of an UNKNOWN answer. An
/// invalid certificate or a run that reaches the error is a bug of the analysis and is
/// logged as one.
pub fn safe_gate<C: Cpa>(
    checker: &C,
    prog: &Program,
    cert: &Certificate<C::State, C::Prec>,
    deadline: Option<Instant>,
    memory_limit_mb: Option<u64>,
) -> Result<(), String> {
    match check_until(checker, prog, cert, deadline, memory_limit_mb) {
        Ok(()) => {}
        Err(CertError::OutOfMemory) => {
            return Err(format!(
                "memory limit reached while checking the certificate of a complete ART ({} nodes)",
                cert.nodes.len()
            ));
        }
        Err(CertError::Timeout) => {
            return Err(format!(
                "time limit reached while checking the certificate of a complete ART ({} nodes)",
                cert.nodes.len()
            ));
        }
        Err(e) => {
            tracing::error!("bug: the certificate of a complete ART is invalid: {e}");
            return Err(format!("certificate check failed: {e}"));
        }
    }
    // the checker shares the domain's transfer functions, so it cannot catch a
    // transfer bug; random runs can catch shallow ones
    let limits = crate::interp::Limits {
        max_steps: SANITY_STEPS,
        malloc_never_fails: prog.malloc_never_fails,
    };
    // a run ending in undefined behaviour blocks SAFE too: the proof covers NULL and
    // invalid struct dereferences and divisions by zero, but paths through other
    // invalid accesses (`*q` of a freed cell, double free) just stop
    let run = crate::interp::find_run(prog, SANITY_RUNS, &limits, |o| {
        o.is_error() || o.is_undefined_behaviour()
    });
    match run {
        Some((seed, run)) if run.outcome.is_error() => {
            tracing::error!("bug: a certificate checks but random run {seed} reaches the error");
            Err(format!(
                "internal inconsistency: the proof is contradicted by a concrete run (random seed {seed}: {}); please report this program",
                run.outcome
            ))
        }
        Some((seed, run)) => Err(format!(
            "undefined behaviour is reachable: a concrete run (random seed {seed}) ends in a {}, after which C allows anything, reach_error() included (`shapemc simulate --runs 1 --seed {seed} --trace` shows it)",
            run.outcome
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    //! Deliberately unsound abstractions: `model_check` must not answer SAFE with them.
    //! Each test fails when the gate (or the part of it the test targets) is removed
    //! from `model_check`.

    use super::super::{model_check, Abstraction, CegarOptions, RefineInput, Refinement, Verdict};
    use super::*;
    use crate::cfa::{Node, Step};

    /// A location-only CPA whose transfer drops every edge into an error location (an
    /// unsound post: the ART completes without ever reaching the error), unless it is
    /// the honest variant.
    #[derive(Debug)]
    struct DropErrorEdges {
        honest: bool,
    }

    impl Cpa for DropErrorEdges {
        type State = ();
        type Prec = ();
        fn name(&self) -> &'static str {
            "drop-error-edges"
        }
        fn initial(&self, _: &Program, _: &()) {}
        fn post(&self, prog: &Program, _: &(), _: Step, to: Node, _: &()) -> Vec<()> {
            if !self.honest && prog.is_error(to) {
                Vec::new()
            } else {
                vec![()]
            }
        }
        fn covers(&self, _: &(), _: &()) -> bool {
            true
        }
    }

    /// Searches with the unsound CPA; its certificate checker is the unsound one too
    /// (`honest_checker == false`: only the random runs can expose it) or the honest
    /// one (the certificate check does).
    struct Unsound {
        cpa: DropErrorEdges,
        honest_checker: bool,
    }

    impl Abstraction for Unsound {
        type Cpa = DropErrorEdges;
        fn cpa(&self) -> &DropErrorEdges {
            &self.cpa
        }
        fn checker(&self) -> DropErrorEdges {
            DropErrorEdges {
                honest: self.honest_checker,
            }
        }
        fn precision(&self) -> &() {
            &()
        }
        fn refine(&mut self, _: &Program, _: &RefineInput<'_, ()>) -> Refinement {
            Refinement::default()
        }
    }

    /// The program of C source `body` (after the usual declarations).
    fn program(name: &str, body: &str) -> Program {
        let dir = tempfile::tempdir().expect("temp dir");
        let f = dir.path().join(name);
        let src = format!(
            "extern void __assert_fail(const char *, const char *, unsigned int, const char *);\n\
             void reach_error() {{ __assert_fail(\"0\", \"{name}\", 0, \"reach_error\"); }}\n\
             extern int __VERIFIER_nondet_int(void);\n{body}\n"
        );
        std::fs::write(&f, src).expect("write");
        crate::frontend::parse_file(&f, &Default::default()).expect("parses")
    }

    fn verify(prog: &Program, honest_checker: bool) -> Verdict {
        let mut abs = Unsound {
            cpa: DropErrorEdges { honest: false },
            honest_checker,
        };
        let opts = CegarOptions {
            timeout: Some(std::time::Duration::from_secs(60)),
            ..Default::default()
        };
        model_check(prog, &mut abs, &opts).verdict
    }

    #[test]
    fn a_run_that_reaches_the_error_blocks_safe_when_the_certificate_checks() {
        let prog = program("reach.c", "int main() { reach_error(); return 0; }");
        // the unsound search and checker agree: the certificate is valid ...
        let mut art = crate::art::Art::new(&prog, ());
        let cpa = DropErrorEdges { honest: false };
        let out = crate::art::build(&cpa, &prog, &mut art, &(), &Default::default(), &mut |_| {
            false
        });
        assert!(matches!(out, crate::art::BuildOutcome::Complete), "{out:?}");
        let cert = Certificate::from_art(&cpa, &prog, &art, &());
        assert_eq!(crate::cert::check(&cpa, &prog, &cert), Ok(()));
        // ... so only the random runs stand between it and SAFE
        let why = safe_gate(&cpa, &prog, &cert, None, None).expect_err("a run reaches the error");
        assert!(why.starts_with("internal inconsistency"), "{why}");
        // model_check gives up; the bug hunt then confirms the error path: UNSAFE
        assert_eq!(verify(&prog, false), Verdict::Unsafe);
    }

    #[test]
    fn an_invalid_certificate_blocks_safe() {
        // the error is unreachable in every run, but the honest checker finds the edge
        // into it that the search dropped
        let prog = program(
            "infeasible.c",
            "int main() { int x = __VERIFIER_nondet_int(); if (x > 5 && x < 3) reach_error(); return 0; }",
        );
        match verify(&prog, true) {
            Verdict::Unknown(why) => assert!(why.starts_with("certificate check failed"), "{why}"),
            v => panic!("expected UNKNOWN, got {v:?}"),
        }
        // with the unsound checker nothing is wrong (and no run reaches the error)
        assert_eq!(verify(&prog, false), Verdict::Safe);
    }

    #[test]
    fn a_run_ending_in_undefined_behaviour_blocks_safe() {
        // no undefined-behaviour targets in this CFA: only a run can show the NULL write
        let prog = program("null.c", "int main() { int *p = 0; *p = 1; return 0; }");
        match verify(&prog, false) {
            Verdict::Unknown(why) => {
                assert!(why.starts_with("undefined behaviour is reachable"), "{why}")
            }
            v => panic!("expected UNKNOWN, got {v:?}"),
        }
    }
}
