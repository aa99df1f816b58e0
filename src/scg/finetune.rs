//! FineTune (paper §3.3): binary search in the lattice of enabled SCGs for the
//! coarsest SCG that rules out an infeasible path.

use super::lattice::{Lattice, Scg};
use super::TrackingDef;
use fixedbitset::FixedBitSet;
use std::collections::BTreeMap;
use tracing::debug;

/// Upper bound on the extra oracle calls of FineTune's cost pass.
pub const MAX_COST_QUERIES: usize = 16;

/// Searches the enabled SCGs strictly finer than `current` for a coarsest one that
/// rules out the path (`rules_out` simulates the path with an SCG; it must be
/// monotone: if m rules out, every finer SCG does).
///
/// Candidates C start as the enabled SCGs strictly finer than `current`. Each round
/// picks S = {s}, the untested candidate whose up-set (coarser-or-equal candidates)
/// and down-set (finer-or-equal candidates) in C are closest in size, and asks the
/// oracle. If s does not rule out, every candidate coarser-or-equal to s is removed
/// (monotonicity); otherwise only candidates coarser-or-equal to s are kept. The loop
/// stops when every candidate left has been tested (all rule out); the pick is the
/// candidate with the fewest predicates for `d` among the coarsest ones left. Each
/// oracle call at least halves a chain, so a chain of n candidates costs about
/// log2(n) + 1 calls.
///
/// Cost pass: the search follows the first ruling-out SCG it meets, so a cheaper
/// class incomparable to it (sharing instead of reachability, say) is never asked.
/// Up to [`MAX_COST_QUERIES`] such untested, cheaper candidates are asked, cheapest
/// first; when one rules out, the search restarts from it (its coarser candidates).
///
/// Guarantee (for a monotone oracle): the result is `current` exactly when no
/// candidate rules out the path; otherwise it is a candidate that rules out the path
/// and no strictly coarser candidate does (a coarsest ruling-out candidate). No
/// candidate is asked twice.
pub fn fine_tune(
    current: &Scg,
    enabled: &[Scg],
    lattice: &Lattice,
    d: &TrackingDef,
    rules_out: &mut dyn FnMut(&Scg) -> bool,
) -> Scg {
    let mut all: Vec<Scg> = Vec::new();
    for m in enabled {
        if lattice.lt(m, current) && !all.contains(m) {
            all.push(m.clone());
        }
    }
    // generating a class is the expensive part of the cost pass: once per SCG
    let costs: std::cell::RefCell<BTreeMap<Scg, usize>> = Default::default();
    let cost = |m: &Scg| {
        if let Some(&c) = costs.borrow().get(m) {
            return c;
        }
        let c = lattice.generate(m, d).num_preds();
        costs.borrow_mut().insert(m.clone(), c);
        c
    };
    let mut answers: BTreeMap<Scg, bool> = BTreeMap::new();
    let mut ask = |m: &Scg, answers: &mut BTreeMap<Scg, bool>| -> bool {
        if let Some(&r) = answers.get(m) {
            return r;
        }
        let r = rules_out(m);
        debug!(scg = %m, rules_out = r, "fine_tune query");
        answers.insert(m.clone(), r);
        r
    };
    let Some(mut best) = search(all.clone(), lattice, &cost, &mut answers, &mut ask) else {
        return current.clone();
    };
    let mut extra = 0usize;
    loop {
        // known-failing SCGs exclude everything coarser (monotonicity)
        let cheaper: Vec<Scg> = {
            let mut v: Vec<Scg> = all
                .iter()
                .filter(|c| !answers.contains_key(*c))
                .filter(|c| !answers.iter().any(|(f, &r)| !r && lattice.leq(f, c)))
                .filter(|c| cost(c) < cost(&best))
                .cloned()
                .collect();
            v.sort_by_key(|m| (cost(m), m.clone()));
            v
        };
        let Some(c) = cheaper.into_iter().next() else {
            break;
        };
        if extra == MAX_COST_QUERIES {
            break;
        }
        extra += 1;
        if ask(&c, &mut answers) {
            // continue from c: its strictly coarser candidates, c itself ruling out
            let up: Vec<Scg> = all.iter().filter(|m| lattice.leq(&c, m)).cloned().collect();
            best = search(up, lattice, &cost, &mut answers, &mut ask).unwrap_or(c);
        }
    }
    best
}

/// The binary search of [`fine_tune`] over `cands` (answers are remembered in
/// `answers`); None when no candidate rules out.
///
/// The order between candidates is computed once (`up[i]`: the candidates coarser than
/// or equal to `cands[i]`, `down[i]`: finer or equal), so a round costs bitset
/// intersections instead of |C|² `leq` calls (a whole universe of 2,664 SCGs took 47 s
/// that way). Candidates are tried in the same order as before, so the answers are the
/// same.
fn search(
    mut cands: Vec<Scg>,
    lattice: &Lattice,
    cost: &dyn Fn(&Scg) -> usize,
    answers: &mut BTreeMap<Scg, bool>,
    ask: &mut dyn FnMut(&Scg, &mut BTreeMap<Scg, bool>) -> bool,
) -> Option<Scg> {
    // what is already known prunes the candidates
    for (m, &r) in answers.iter() {
        if !r {
            cands.retain(|c| !lattice.leq(m, c));
        }
    }
    let n = cands.len();
    let mut up = vec![FixedBitSet::with_capacity(n); n];
    let mut down = vec![FixedBitSet::with_capacity(n); n];
    for (i, a) in cands.iter().enumerate() {
        for (j, b) in cands.iter().enumerate() {
            if lattice.leq(a, b) {
                up[i].insert(j);
                down[j].insert(i);
            }
        }
    }
    let mut alive = FixedBitSet::with_capacity(n);
    alive.insert_range(..);
    let mut round = 0usize;
    loop {
        // choose s balancing |up(s)| against |down(s)| within C, among the untested
        let mut best: Option<(usize, usize)> = None;
        for s in alive.ones() {
            if answers.get(&cands[s]) == Some(&true) {
                continue;
            }
            let score = up[s]
                .intersection_count(&alive)
                .abs_diff(down[s].intersection_count(&alive));
            if best.is_none_or(|(_, b)| score < b) {
                best = Some((s, score));
            }
        }
        let Some((s, _)) = best else { break };
        round += 1;
        let r = ask(&cands[s], answers);
        debug!(round, scg = %cands[s], rules_out = r, candidates = alive.count_ones(..), "fine_tune round");
        if r {
            alive.intersect_with(&up[s]);
        } else {
            alive.difference_with(&up[s]);
        }
    }
    let left: Vec<Scg> = alive.ones().map(|i| cands[i].clone()).collect();
    lattice
        .coarsest(&left)
        .into_iter()
        .min_by_key(|m| (cost(m), m.clone()))
}
