//! FineTune (paper §3.3): binary search in the lattice of enabled SCGs for the
//! coarsest SCG that rules out an infeasible path.

use super::lattice::{Lattice, Scg};
use super::TrackingDef;
use tracing::debug;

/// Searches the enabled SCGs strictly finer than `current` for a coarsest one that
/// rules out the path (`rules_out` simulates the path with an SCG; it must be
/// monotone: if m rules out, every finer SCG does).
///
/// Candidates C start as the enabled SCGs strictly finer than `current`. Each round
/// picks S = {s}, the untested candidate whose up-set (coarser-or-equal candidates)
/// and down-set (finer-or-equal candidates) in C are closest in size, and asks the
/// oracle. If s does not rule out, every candidate coarser-or-equal to s is removed
/// (monotonicity); otherwise only candidates coarser-or-equal to s are kept. The loop
/// stops when every candidate left has been tested (all rule out). The result is the
/// candidate with the fewest predicates for `d` among the coarsest ones left, or
/// `current` when C becomes empty. Each oracle call at least halves a chain, so a
/// chain of n candidates costs about log2(n) + 1 calls.
///
/// Guarantee (for a monotone oracle): the result is `current` exactly when no
/// candidate rules out the path; otherwise it is a candidate that rules out the path
/// and no strictly coarser candidate does (a coarsest ruling-out candidate).
pub fn fine_tune(
    current: &Scg,
    enabled: &[Scg],
    lattice: &Lattice,
    d: &TrackingDef,
    rules_out: &mut dyn FnMut(&Scg) -> bool,
) -> Scg {
    let mut cands: Vec<Scg> = Vec::new();
    for m in enabled {
        if lattice.lt(m, current) && !cands.contains(m) {
            cands.push(m.clone());
        }
    }
    let mut ruling: Vec<Scg> = Vec::new();
    let mut round = 0usize;
    loop {
        let untested: Vec<&Scg> = cands.iter().filter(|m| !ruling.contains(m)).collect();
        if untested.is_empty() {
            break;
        }
        round += 1;
        // choose s balancing |up(s)| against |down(s)| within C
        let mut best: Option<(&Scg, usize)> = None;
        for s in untested {
            let up = cands.iter().filter(|c| lattice.leq(s, c)).count();
            let down = cands.iter().filter(|c| lattice.leq(c, s)).count();
            let score = up.abs_diff(down);
            if best.is_none_or(|(_, b)| score < b) {
                best = Some((s, score));
            }
        }
        let Some((s, _)) = best else { break };
        let s = s.clone();
        let r = rules_out(&s);
        debug!(round, scg = %s, rules_out = r, candidates = cands.len(), "fine_tune query");
        if r {
            cands.retain(|c| lattice.leq(&s, c));
            ruling.push(s);
        } else {
            cands.retain(|c| !lattice.leq(&s, c));
        }
    }
    if cands.is_empty() {
        return current.clone();
    }
    let top = lattice.coarsest(&cands);
    top.into_iter()
        .min_by_key(|m| (lattice.generate(m, d).num_preds(), m.clone()))
        .unwrap_or_else(|| current.clone())
}
