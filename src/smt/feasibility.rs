//! Path feasibility: is the path formula satisfiable? Feasible paths come with the
//! nondeterministic choices that drive a concrete replay; infeasible ones with an unsat
//! core over the steps' guards.

use super::encode::{encode_path, GuardKind, InputKind, PathEncoding};
use super::limit::TimedSolver;
use super::SmtError;
use crate::cfa::{Inputs, Program, Step, VarId};
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use z3::ast::{Ast, Bool};
use z3::{SatResult, Solver};

/// Solver options.
#[derive(Clone, Debug)]
pub struct SmtOptions {
    /// Z3 timeout per query in milliseconds (0 = none).
    pub timeout_ms: u32,
    /// Shrink the unsat core to a minimal one (deletion-based).
    pub minimize_core: bool,
    /// Timeout of one minimisation query (ms); on timeout the guard stays in the core.
    pub minimize_query_ms: u32,
    /// Total time budget of core minimisation (ms).
    pub minimize_budget_ms: u64,
}

impl Default for SmtOptions {
    fn default() -> Self {
        SmtOptions {
            timeout_ms: 20_000,
            minimize_core: true,
            minimize_query_ms: 100,
            minimize_budget_ms: 2_000,
        }
    }
}

/// The Z3 timeout (ms) of a query that must end by `until`: `timeout_ms` (0 = none) cut
/// to the time left; `None` when no time is left.
pub fn timeout_until(timeout_ms: u32, until: Option<Instant>, now: Instant) -> Option<u32> {
    let Some(u) = until else {
        return Some(timeout_ms);
    };
    let left = u.saturating_duration_since(now).as_millis();
    let left = u32::try_from(left).unwrap_or(u32::MAX);
    if left == 0 {
        return None;
    }
    Some(if timeout_ms == 0 {
        left
    } else {
        timeout_ms.min(left)
    })
}

/// The value of one nondeterministic input along a feasible path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NondetValue {
    /// Path step (0-based) that consumes the input.
    pub step: usize,
    pub var: VarId,
    pub value: i64,
    /// True for the read of an uninitialised variable (false: a `Nondet` operation).
    pub uninit: bool,
}

/// The outcome of one allocation along a feasible path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocOutcome {
    pub step: usize,
    pub var: VarId,
    /// True for `malloc`/`calloc`, false for stack objects.
    pub heap: bool,
    /// True if the allocation returned NULL.
    pub null: bool,
    /// The address the encoding gave the object.
    pub addr: i64,
}

/// A satisfying assignment of a path formula, restricted to the path's choices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    /// Nondeterministic values in path order.
    pub nondet: Vec<NondetValue>,
    /// All allocations in path order.
    pub allocs: Vec<AllocOutcome>,
    /// The value of each memory read, by path step ([`PathEncoding::loads`]).
    pub loads: Vec<(usize, i64)>,
}

impl Model {
    /// The interpreter inputs: values of `Nondet` operations in order (reads of
    /// uninitialised variables are not inputs of [`crate::interp`], which starts every
    /// variable at 0/NULL), one NULL bit per heap allocation.
    pub fn to_inputs(&self) -> Inputs {
        Inputs {
            nondet: self
                .nondet
                .iter()
                .filter(|n| !n.uninit)
                .map(|n| n.value)
                .collect(),
            alloc_null: self
                .allocs
                .iter()
                .filter(|a| a.heap)
                .map(|a| a.null)
                .collect(),
            uninit_loads: self.loads.iter().copied().collect(),
        }
    }
}

/// One guard of the unsat core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CoreGuard {
    pub step: usize,
    /// Index into the step's guards.
    pub guard: usize,
    pub kind: GuardKind,
}

/// Why a path is infeasible: the guards (assume conditions, memory-safety side
/// conditions, ranges) that, with all definitions of the path, are unsatisfiable. Always
/// contains the first test of every may-fail allocation result (`StepEnc::null_kill`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proof {
    pub core: Vec<CoreGuard>,
}

impl Proof {
    /// The path steps (0-based) that contribute a guard to the core.
    pub fn steps(&self) -> BTreeSet<usize> {
        self.core.iter().map(|c| c.step).collect()
    }
}

/// Result of [`check_path`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Feasibility {
    Feasible(Model),
    Infeasible(Proof),
}

/// Decides whether `path` of `prog` is feasible (default options).
pub fn check_path(prog: &Program, path: &[Step]) -> Result<Feasibility, SmtError> {
    check_path_with(prog, path, &SmtOptions::default())
}

/// Decides whether `path` of `prog` is feasible. `Solver` errors on `unknown`.
pub fn check_path_with(
    prog: &Program,
    path: &[Step],
    opts: &SmtOptions,
) -> Result<Feasibility, SmtError> {
    let enc = encode_path(prog, path)?;
    solve(&enc, opts)
}

/// A solver for the path logic: `QF_AUFLIA` (nonlinear terms are still handled by Z3's
/// arithmetic solver). Setting the logic skips the probes of Z3's default strategy, which
/// cost about 10 ms per `check` even for trivial formulas; but its simple array theory
/// answers `unknown` ("incomplete (theory array)") on some formulas with constant arrays,
/// so every caller retries an `unknown` with [`new_full_solver`].
pub(crate) fn new_solver(opts: &SmtOptions) -> TimedSolver {
    TimedSolver::new(
        Solver::new_for_logic("QF_AUFLIA").unwrap_or_default(),
        opts.timeout_ms,
    )
}

/// Z3's default solver (complete array theory, slower start-up).
pub(crate) fn new_full_solver(opts: &SmtOptions) -> TimedSolver {
    TimedSolver::new(Solver::new(), opts.timeout_ms)
}

/// Solves an encoded path (the fast solver first, the full one if it answers `unknown`,
/// with what is left of `opts.timeout_ms`: the timeout bounds both together).
pub(crate) fn solve(enc: &PathEncoding, opts: &SmtOptions) -> Result<Feasibility, SmtError> {
    let start = Instant::now();
    match solve_with(enc, opts, new_solver(opts)) {
        Err(SmtError::Solver(why)) => {
            let until = (opts.timeout_ms > 0)
                .then(|| start + Duration::from_millis(opts.timeout_ms.into()));
            let Some(timeout_ms) = timeout_until(opts.timeout_ms, until, Instant::now()) else {
                tracing::debug!("QF_AUFLIA solver: {why}; no time left to retry");
                return Err(SmtError::Solver(why));
            };
            tracing::debug!("QF_AUFLIA solver: {why}; retrying with the default solver");
            let rest = SmtOptions {
                timeout_ms,
                ..opts.clone()
            };
            solve_with(enc, &rest, new_full_solver(&rest))
        }
        r => r,
    }
}

fn solve_with(
    enc: &PathEncoding,
    opts: &SmtOptions,
    mut solver: TimedSolver,
) -> Result<Feasibility, SmtError> {
    let mut lits: Vec<Bool> = Vec::new();
    let mut lit_of: FxHashMap<String, CoreGuard> = FxHashMap::default();
    let mut fixed: Vec<CoreGuard> = Vec::new();
    for (i, st) in enc.steps.iter().enumerate() {
        for (s, t) in &st.defs {
            solver.assert(s.eq(t.clone()));
        }
        for (j, (kind, g)) in st.guards.iter().enumerate() {
            if st.null_kill.contains(&j) {
                // The first test of a may-fail allocation result is always part of the
                // core (see `StepEnc::null_kill`): asserted outright, it prunes the NULL
                // case early and keeps the core computation easy.
                solver.assert(g);
                fixed.push(CoreGuard {
                    step: i,
                    guard: j,
                    kind: *kind,
                });
                continue;
            }
            let name = format!("$g{i}_{j}");
            let lit = Bool::new_const(name.as_str());
            solver.assert(lit.implies(g));
            lits.push(lit);
            lit_of.insert(
                name,
                CoreGuard {
                    step: i,
                    guard: j,
                    kind: *kind,
                },
            );
        }
    }
    match solver.check_assumptions(&lits) {
        SatResult::Sat => {
            let m = solver
                .get_model()
                .ok_or_else(|| SmtError::Solver("no model".into()))?;
            let mut model = Model::default();
            for slot in &enc.inputs {
                let c = enc.consts[slot.sym as usize]
                    .as_int()
                    .ok_or_else(|| SmtError::Solver("non-int input".into()))?;
                let v = m
                    .eval(&c, true)
                    .and_then(|v| v.as_i64())
                    .ok_or_else(|| SmtError::Solver("input value out of i64 range".into()))?;
                model.nondet.push(NondetValue {
                    step: slot.step,
                    var: slot.var,
                    value: v,
                    uninit: slot.kind == InputKind::Uninit,
                });
            }
            for a in &enc.allocs {
                let null = match a.null_sym {
                    Some(s) => {
                        let b = enc.consts[s as usize]
                            .as_bool()
                            .ok_or_else(|| SmtError::Solver("non-bool choice".into()))?;
                        m.eval(&b, true).and_then(|b| b.as_bool()).unwrap_or(false)
                    }
                    None => false,
                };
                model.allocs.push(AllocOutcome {
                    step: a.step,
                    var: a.var,
                    heap: a.heap,
                    null,
                    addr: a.addr,
                });
            }
            for &(step, sym) in &enc.loads {
                let v = enc.consts[sym as usize]
                    .as_int()
                    .and_then(|c| m.eval(&c, true))
                    .and_then(|v| v.as_i64());
                if let Some(v) = v {
                    model.loads.push((step, v));
                }
            }
            Ok(Feasibility::Feasible(model))
        }
        SatResult::Unsat => {
            let mut core = solver.get_unsat_core();
            if opts.minimize_core && core.len() > 1 {
                // Deletion-based, with a short per-query timeout: a query that times out
                // keeps its literal (the core stays a core, just not minimal).
                let started = std::time::Instant::now();
                solver.set_limit_ms(opts.minimize_query_ms.max(1));
                let mut i = 0;
                while i < core.len() {
                    if started.elapsed().as_millis() as u64 > opts.minimize_budget_ms {
                        tracing::debug!("core minimisation budget exhausted");
                        break;
                    }
                    let mut trial = core.clone();
                    trial.remove(i);
                    if solver.check_assumptions(&trial) == SatResult::Unsat {
                        let smaller = solver.get_unsat_core();
                        // keep the order stable: the new core is a subset of `trial`
                        core = trial
                            .into_iter()
                            .filter(|l| smaller.iter().any(|s| s == l))
                            .collect();
                    } else {
                        i += 1;
                    }
                }
            }
            let mut out: Vec<CoreGuard> = core
                .iter()
                .filter_map(|l| lit_of.get(&l.decl().name()).copied())
                .collect();
            out.extend(fixed);
            out.sort();
            Ok(Feasibility::Infeasible(Proof { core: out }))
        }
        SatResult::Unknown => Err(SmtError::Solver(
            solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".into()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_timeout_is_cut_to_the_time_left() {
        let now = Instant::now();
        let at = |ms: u64| Some(now + Duration::from_millis(ms));
        assert_eq!(timeout_until(20_000, None, now), Some(20_000));
        assert_eq!(timeout_until(0, None, now), Some(0));
        assert_eq!(timeout_until(20_000, at(1_500), now), Some(1_500));
        assert_eq!(timeout_until(0, at(1_500), now), Some(1_500));
        assert_eq!(timeout_until(100, at(1_500), now), Some(100));
        // past the end (or less than a millisecond left): no query at all
        assert_eq!(timeout_until(20_000, Some(now), now), None);
        assert_eq!(
            timeout_until(20_000, Some(now), now + Duration::from_secs(1)),
            None
        );
        // far away: saturates instead of wrapping around
        let far = Some(now + Duration::from_secs(10_000_000));
        assert_eq!(timeout_until(0, far, now), Some(u32::MAX));
    }
}
