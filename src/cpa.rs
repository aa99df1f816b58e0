//! Configurable program analysis (CPA), after CPAchecker: each abstract domain brings
//! its own transfer, merge, stop (coverage) and precision adjustment, and the
//! reachability algorithm ([`crate::art`]) composes them without knowing their insides.
//!
//! Locations and call stacks are not part of a CPA's state: the ART tracks them, so a
//! domain only describes data (variables and heap). Interprocedural steps reach a
//! domain as [`Step::Enter`] (bind parameters) and [`Step::Leave`] (assign the return
//! value); variables are global-unique, so a domain needs no frames of its own
//! (recursion is unrolled to a bound first, [`crate::cfa::recursion`]; the ART refuses
//! what is left).

use crate::cfa::{Node, Program, Step};
use serde::{de::DeserializeOwned, Serialize};
use std::fmt::Debug;
use std::hash::Hash;

/// An abstract domain with its operators. Laws every implementation keeps:
/// - soundness of `post`: every concrete successor of a concrete state of `s` along
///   `step` is a concrete state of some returned successor (an empty result means the
///   step is infeasible from `s`);
/// - `covers(t, s)` implies every concrete state of `s` is one of `t` (coverage is
///   used to stop exploration, so it must never over-claim);
/// - `covers` is reflexive and transitive;
/// - `adjust` only over-approximates (`covers(adjust(s), s)`).
pub trait Cpa {
    /// Abstract states; serialisable so that certificates can carry them.
    type State: Clone + Debug + Eq + Hash + Serialize + DeserializeOwned;
    /// The precision (what the domain tracks), refined by CEGAR.
    type Prec: Clone + Debug;

    /// A short name for logs and certificates.
    fn name(&self) -> &'static str;
    /// The initial state at [`Program::entry`].
    fn initial(&self, prog: &Program, prec: &Self::Prec) -> Self::State;
    /// Abstract successors of `s` along `step` arriving at location `to`.
    fn post(
        &self,
        prog: &Program,
        s: &Self::State,
        step: Step,
        to: Node,
        prec: &Self::Prec,
    ) -> Vec<Self::State>;
    /// Stop operator: true if `t` represents every concrete state `s` represents.
    fn covers(&self, t: &Self::State, s: &Self::State) -> bool;
    /// Precision adjustment at location `at` (abstraction); identity by default.
    fn adjust(&self, s: Self::State, _at: Node, _prec: &Self::Prec) -> Self::State {
        s
    }
    /// Merge operator (CPAchecker's merge-join, used by `BuildART` when
    /// [`crate::art::BuildOptions::merge`] is set): `Some(j)` with `j` covering both
    /// `existing` and `new` and differing from `existing`, when the domain wants the
    /// two states joined into one node at location `at`; `None` keeps them apart
    /// (merge-sep, the default). Law: `covers(j, existing) && covers(j, new)`.
    fn merge(
        &self,
        _existing: &Self::State,
        _new: &Self::State,
        _at: Node,
        _prec: &Self::Prec,
    ) -> Option<Self::State> {
        None
    }
    /// How many mergeable nodes must wait at location `at` before `BuildART` asks
    /// [`Cpa::merge`] to join a new one into them: 0 merges at once; `k` first unrolls
    /// a loop whose states differ only in what a merge would join `k` times. Any
    /// value is sound.
    fn merge_after(&self, _at: Node, _prec: &Self::Prec) -> usize {
        0
    }
    /// True if `merged`, a state that [`Cpa::merge`] produced, is what the current
    /// precision would merge `succ` into (used to tell nodes computed under an older
    /// precision from merged ones). Default: `covers(merged, succ)`; a domain whose
    /// merge keeps some components equal should also compare those, since a coarser
    /// old component covers a finer new one.
    fn merged_covers(&self, merged: &Self::State, succ: &Self::State) -> bool {
        self.covers(merged, succ)
    }
    /// Coverage by several states together (CPAchecker's stop-join): `Some(used)` only
    /// if every concrete state of `s` is represented by some `ts[i]` with `i ∈ used`
    /// (indices into `ts`, non-empty, ascending). The default asks [`Cpa::covers`] of
    /// each state alone; a domain whose states are unions (shape regions) does better.
    fn covers_union(&self, ts: &[&Self::State], s: &Self::State) -> Option<Vec<usize>> {
        ts.iter().position(|t| self.covers(t, s)).map(|i| vec![i])
    }

    /// A cheap necessary condition for coverage, which `BuildART` tests before
    /// [`Cpa::stop`] so that states that cannot help are never compared. Law: if `t`
    /// can take part in covering `s` (alone by [`Cpa::covers`], or among others by
    /// [`Cpa::covers_union`]), then `fingerprint(t).may_cover(&fingerprint(s))`; and if
    /// [`Cpa::merge`] of `t` and `s` is `Some`, then
    /// `fingerprint(t).may_merge(&fingerprint(s))`. The default asks nothing (no state
    /// is filtered out).
    fn fingerprint(&self, _s: &Self::State) -> Fingerprint {
        Fingerprint::default()
    }

    /// The stop operator as `BuildART` applies it to a new state `s` and the alive,
    /// uncovered states `ts` at its location and call stack: `Some(used)` (indices into
    /// `ts`, non-empty, ascending) if those states together cover `s` — the first that
    /// [`Cpa::covers`] `s` alone, else, with at least two states, [`Cpa::covers_union`].
    /// A domain may override it to share work between the two; an override keeps
    /// exactly this meaning (in particular, a single index means [`Cpa::covers`]).
    fn stop(&self, ts: &[&Self::State], s: &Self::State) -> Option<Vec<usize>> {
        if let Some(i) = ts.iter().position(|t| self.covers(t, s)) {
            return Some(vec![i]);
        }
        if ts.len() < 2 {
            return None;
        }
        self.covers_union(ts, s).filter(|u| !u.is_empty())
    }
}

/// Facts about a state as bits ([`Cpa::fingerprint`]): `req`, the facts every state
/// that this state helps to cover has, and `offer`, the facts this state has (`None`:
/// every fact). What a bit means is up to the CPA. `merge` is what merging asks
/// (`None`: nothing): a key two states must share and a set of bits, those of the
/// state merged in contained in those of the state it is merged into.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint {
    pub req: Vec<u64>,
    pub offer: Option<Vec<u64>>,
    pub merge: Option<MergeKey>,
}

/// The part of a [`Fingerprint`] that [`Fingerprint::may_merge`] compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeKey {
    /// Equal for any two states that merge.
    pub exact: u64,
    /// Those of the state merged in are a subset of those of the state it goes into.
    pub bits: u64,
}

impl Fingerprint {
    /// False only if a state with this fingerprint cannot take part in covering one
    /// with `s`'s: some fact it requires is not offered.
    pub fn may_cover(&self, s: &Fingerprint) -> bool {
        let Some(offer) = &s.offer else {
            return true;
        };
        self.req
            .iter()
            .enumerate()
            .all(|(i, r)| r & !offer.get(i).copied().unwrap_or(0) == 0)
    }
    /// False only if [`Cpa::merge`] of a state with this fingerprint (the existing
    /// one) and a state with `new`'s cannot succeed.
    pub fn may_merge(&self, new: &Fingerprint) -> bool {
        match (&self.merge, &new.merge) {
            (Some(a), Some(b)) => a.exact == b.exact && b.bits & !a.bits == 0,
            _ => true,
        }
    }
}

/// The product of two CPAs: states are pairs, successors are all pairs of successors,
/// coverage is componentwise. Used to run explicit heap, shape and predicate
/// abstraction side by side.
#[derive(Clone, Debug, Default)]
pub struct Product<A, B>(pub A, pub B);

impl<A: Cpa, B: Cpa> Cpa for Product<A, B> {
    type State = (A::State, B::State);
    type Prec = (A::Prec, B::Prec);

    fn name(&self) -> &'static str {
        "product"
    }
    fn initial(&self, prog: &Program, prec: &Self::Prec) -> Self::State {
        (self.0.initial(prog, &prec.0), self.1.initial(prog, &prec.1))
    }
    fn post(
        &self,
        prog: &Program,
        s: &Self::State,
        step: Step,
        to: Node,
        prec: &Self::Prec,
    ) -> Vec<Self::State> {
        let left = self.0.post(prog, &s.0, step, to, &prec.0);
        if left.is_empty() {
            return Vec::new();
        }
        let right = self.1.post(prog, &s.1, step, to, &prec.1);
        let mut out = Vec::with_capacity(left.len() * right.len());
        for a in &left {
            for b in &right {
                out.push((a.clone(), b.clone()));
            }
        }
        out
    }
    fn covers(&self, t: &Self::State, s: &Self::State) -> bool {
        self.0.covers(&t.0, &s.0) && self.1.covers(&t.1, &s.1)
    }
    fn adjust(&self, s: Self::State, at: Node, prec: &Self::Prec) -> Self::State {
        (
            self.0.adjust(s.0, at, &prec.0),
            self.1.adjust(s.1, at, &prec.1),
        )
    }
}

/// The trivial CPA: one state that covers everything. With it the ART is the
/// unrolled CFA up to location coverage (useful as a baseline and in tests).
#[derive(Clone, Copy, Debug, Default)]
pub struct Locations;

impl Cpa for Locations {
    type State = ();
    type Prec = ();
    fn name(&self) -> &'static str {
        "locations"
    }
    fn initial(&self, _: &Program, _: &()) {}
    fn post(&self, _: &Program, _: &(), _: Step, _: Node, _: &()) -> Vec<()> {
        vec![()]
    }
    fn covers(&self, _: &(), _: &()) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(merge: Option<(u64, u64)>) -> Fingerprint {
        Fingerprint {
            merge: merge.map(|(exact, bits)| MergeKey { exact, bits }),
            ..Fingerprint::default()
        }
    }

    #[test]
    fn a_merge_needs_equal_keys_and_the_new_states_bits_within_the_existing_ones() {
        let existing = fp(Some((7, 0b0110)));
        assert!(existing.may_merge(&fp(Some((7, 0b0100)))));
        assert!(existing.may_merge(&fp(Some((7, 0b0110)))));
        assert!(!existing.may_merge(&fp(Some((7, 0b0001)))));
        assert!(!existing.may_merge(&fp(Some((8, 0b0100)))));
        // a state without a key filters nothing, either way
        assert!(existing.may_merge(&fp(None)));
        assert!(fp(None).may_merge(&existing));
    }
}
