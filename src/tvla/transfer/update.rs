//! The update of the instrumentation predicates after a change of core predicates:
//! the meet of sound estimates (unchanged, local re-evaluation, monotonicity, finite
//! differencing), then coerce.

use super::differencing::{differencing, universal_differencing};
use super::{Change, Dir, Domain};
use crate::tvla::coerce::coerce_after;
use crate::tvla::eval::Evaluator;
use crate::tvla::formula::{Kleene, PredSym};
use crate::tvla::structure::Structure;
use std::collections::{BTreeMap, BTreeSet};

/// Meet of two sound estimates; `None` on contradiction.
pub(super) fn meet(a: Kleene, b: Kleene) -> Option<Kleene> {
    match (a, b) {
        (Kleene::Half, k) | (k, Kleene::Half) => Some(k),
        (x, y) if x == y => Some(x),
        _ => None,
    }
}

pub(super) fn update(pre: &Structure, post: Structure, ch: &Change) -> Option<Structure> {
    let voc = pre.vocab().clone();
    let mut cur = post;
    let n = cur.len();
    // old index of a new node
    let old_of = |v: usize| -> Option<usize> {
        match ch.domain {
            Domain::Same => Some(v),
            Domain::Added(k) => (v != k).then_some(v),
            Domain::Removed(r) => Some(if v >= r { v + 1 } else { v }),
        }
    };
    // the directions of the changed predicates: the change's, then those of the
    // instrumentation predicates updated so far
    let (mut dirs, unnamed) = directions(&voc, ch);
    let mut rtc_cache: BTreeMap<Vec<String>, Vec<Kleene>> = BTreeMap::new();
    for ins in &voc.instr {
        let mut relevant: Vec<(&PredSym, Dir)> = Vec::new();
        let mut pols = Vec::new();
        for ((k, pol), key) in ins.pol.iter().zip(&ins.pol_keys) {
            let Some(p) = k else { continue };
            let d = match key {
                Some(key) => dirs.get(key).copied(),
                None => unnamed.iter().find(|(q, _)| *q == p).map(|(_, d)| *d),
            };
            if let Some(d) = d {
                relevant.push((p, d));
                pols.push(*pol);
            }
        }
        let fam_iso = ins.family.is_some() || ins.guarded;
        let domain_effect = match ch.domain {
            Domain::Same => false,
            Domain::Added(_) => !fam_iso,
            Domain::Removed(_) => true,
        };
        if ch.domain == Domain::Same && stays_zero(&cur, ins) {
            // 0 before, and the definition is 0 now (it needs a unary predicate that
            // is 0 at every node): `r[x]`, `rs[x]` of a NULL `x`
            continue;
        }
        if relevant.is_empty() && !domain_effect {
            if let Domain::Added(k) = ch.domain {
                // only the new node's tuples need values
                let vals = eval_tuples(&cur, ins, |t| t.contains(&k));
                for (t, v) in vals {
                    cur.set_at(ins.arity, ins.idx, &t, v);
                }
            }
            continue;
        }
        // direction of the definition's value
        let mut vdir: Option<Dir> = None;
        let mut combine = |d: Dir| {
            vdir = Some(match vdir {
                None => d,
                Some(e) if e == d => d,
                _ => Dir::Both,
            })
        };
        for ((_, d), pol) in relevant.iter().zip(&pols) {
            combine(compose(*pol, *d));
        }
        if domain_effect {
            let d = match ch.domain {
                Domain::Removed(_) => Dir::Dec,
                _ => Dir::Inc,
            };
            if let Some(pol) = ins.pol.get(&None) {
                combine(compose(*pol, d))
            }
        }
        // locality
        let local = relevant.iter().all(|(p, _)| !ins.nonlocal.contains(*p))
            && (!domain_effect || ins.guarded);
        let touched = if local {
            touched_nodes(pre, &cur, &relevant, ch.domain, ins)
        } else {
            None
        };
        // finite differencing
        let diff = differencing(pre, ins, ch, &relevant, &mut rtc_cache)
            .or_else(|| universal_differencing(pre, &cur, ins, ch, &relevant));
        let old_val = |t: &[usize]| -> Option<Kleene> {
            let o: Option<Vec<usize>> = t.iter().map(|v| old_of(*v)).collect();
            let o = o?;
            Some(pre.get_at(ins.arity, ins.idx, &o))
        };
        let needs_eval = |t: &[usize]| -> bool {
            match &touched {
                Some(tn) => t.iter().any(|v| tn.contains(v)) || old_val(t).is_none(),
                None => true,
            }
        };
        let mut ev = Evaluator::new(&cur);
        let mut newvals: Vec<(Vec<usize>, Kleene)> = Vec::new();
        let mut went_down = false;
        let mut went_up = false;
        for t in tuples(ins.arity, cur.len()) {
            if !needs_eval(&t) {
                continue;
            }
            let old = old_val(&t);
            // the cheap estimates first (monotonicity, finite differencing); the
            // definition is evaluated only where they leave the value open (each
            // estimate is sound alone, so a definite one is the value)
            let mut v = Kleene::Half;
            if let (Some(o), Some(d)) = (old, vdir) {
                v = match (d, o) {
                    (Dir::Dec, Kleene::False) => Kleene::False,
                    (Dir::Inc, Kleene::True) => Kleene::True,
                    _ => Kleene::Half,
                };
            }
            if let Some(dv) = diff.as_ref().and_then(|f| f(&t)) {
                v = meet(v, dv)?;
            }
            if v == Kleene::Half {
                v = ins.def.eval(&mut ev, &t);
            }
            if let Some(o) = old {
                if v < o {
                    went_down = true;
                }
                if v > o {
                    went_up = true;
                }
            }
            newvals.push((t, v));
        }
        for (t, v) in newvals {
            cur.set_at(ins.arity, ins.idx, &t, v);
        }
        match (went_down, went_up) {
            (false, false) => {}
            (true, false) => {
                dirs.insert((ins.arity, ins.idx), Dir::Dec);
            }
            (false, true) => {
                dirs.insert((ins.arity, ins.idx), Dir::Inc);
            }
            _ => {
                dirs.insert((ins.arity, ins.idx), Dir::Both);
            }
        }
    }
    let _ = n;
    coerce_after(pre, cur)
}

/// Whether `ins` is 0 at every tuple of `cur` (still its values before the change, on
/// the same nodes) and its definition needs a unary predicate that `cur` has 0 at
/// every node ([`crate::tvla::structure::InstrInfo::needs`]), so that it stays 0.
fn stays_zero(cur: &Structure, ins: &crate::tvla::structure::InstrInfo) -> bool {
    let Some(p) = ins.needs else {
        return false;
    };
    let n = cur.len();
    let zero = match ins.arity {
        0 => cur.get0(ins.idx) == Kleene::False,
        1 => (0..n).all(|u| cur.get1(ins.idx, u) == Kleene::False),
        _ => (0..n).all(|a| (0..n).all(|b| cur.get2(ins.idx, a, b) == Kleene::False)),
    };
    zero && crate::tvla::coerce::zero_everywhere(cur, p)
}

/// The directions of `ch`'s predicates by (arity, index), and by name those the
/// vocabulary lacks.
#[allow(clippy::type_complexity)]
fn directions<'a>(
    voc: &crate::tvla::structure::Vocab,
    ch: &'a Change,
) -> (
    rustc_hash::FxHashMap<(u8, usize), Dir>,
    Vec<(&'a PredSym, Dir)>,
) {
    let mut dirs = rustc_hash::FxHashMap::default();
    let mut unnamed = Vec::new();
    for (p, d) in &ch.dirs {
        match voc.lookup(p) {
            Some(k) => {
                dirs.insert(k, *d);
            }
            None => unnamed.push((p, *d)),
        }
    }
    (dirs, unnamed)
}

/// Direction of a definition's value given its polarity in a predicate that moved `d`.
pub(super) fn compose(pol: crate::tvla::analysis::Pol, d: Dir) -> Dir {
    use crate::tvla::analysis::Pol;
    match (pol, d) {
        (_, Dir::Both) | (Pol::Mixed, _) => Dir::Both,
        (Pol::Pos, d) => d,
        (Pol::Neg, Dir::Dec) => Dir::Inc,
        (Pol::Neg, Dir::Inc) => Dir::Dec,
    }
}

pub(super) fn tuples(arity: u8, n: usize) -> Vec<Vec<usize>> {
    match arity {
        0 => vec![vec![]],
        1 => (0..n).map(|v| vec![v]).collect(),
        _ => (0..n)
            .flat_map(|a| (0..n).map(move |b| vec![a, b]))
            .collect(),
    }
}

pub(super) fn eval_tuples(
    s: &Structure,
    ins: &crate::tvla::structure::InstrInfo,
    want: impl Fn(&[usize]) -> bool,
) -> Vec<(Vec<usize>, Kleene)> {
    let mut ev = Evaluator::new(s);
    tuples(ins.arity, s.len())
        .into_iter()
        .filter(|t| want(t))
        .map(|t| {
            let k = ins.def.eval(&mut ev, &t);
            (t, k)
        })
        .collect()
}

/// Nodes (new indices) whose predicate values changed for the relevant predicates, or
/// that neighbour an added/removed node; `None` when every tuple may be affected.
pub(super) fn touched_nodes(
    pre: &Structure,
    cur: &Structure,
    relevant: &[(&PredSym, Dir)],
    domain: Domain,
    ins: &crate::tvla::structure::InstrInfo,
) -> Option<BTreeSet<usize>> {
    let voc = pre.vocab();
    let mut out = BTreeSet::new();
    let n = cur.len();
    let old = |v: usize| -> usize {
        match domain {
            Domain::Removed(r) if v >= r => v + 1,
            _ => v,
        }
    };
    let exists_old = |v: usize| !matches!(domain, Domain::Added(k) if k == v);
    for (p, _) in relevant {
        match voc.lookup(p)? {
            (0, i) => {
                if pre.get0(i) != cur.get0(i) {
                    return None;
                }
            }
            (1, i) => {
                for v in (0..n).filter(|v| exists_old(*v)) {
                    if pre.get1(i, old(v)) != cur.get1(i, v) {
                        out.insert(v);
                    }
                }
            }
            (_, i) => {
                let pos = ins.free_pos.get(*p);
                let at = |k: usize| pos.is_none_or(|s| s.contains(&k));
                for a in (0..n).filter(|v| exists_old(*v)) {
                    for b in (0..n).filter(|v| exists_old(*v)) {
                        if pre.get2(i, old(a), old(b)) != cur.get2(i, a, b) {
                            if at(0) {
                                out.insert(a);
                            }
                            if at(1) {
                                out.insert(b);
                            }
                        }
                    }
                }
            }
        }
    }
    match domain {
        Domain::Same => {}
        Domain::Added(k) => {
            out.insert(k);
        }
        Domain::Removed(r) => {
            for w in 0..pre.len() {
                if w == r {
                    continue;
                }
                let linked = (0..voc.binary.len()).any(|i| {
                    pre.get2(i, w, r) != Kleene::False || pre.get2(i, r, w) != Kleene::False
                });
                if linked {
                    out.insert(if w > r { w - 1 } else { w });
                }
            }
        }
    }
    Some(out)
}
