//! `depth(H, a)`, `depth(H)` (paper §2.2) and the sample threshold that decides
//! when BuildART's condition (c) fires.
//!
//! The heap graph has the valid objects as nodes and an edge `a1 -> a2` whenever some
//! field of `a1` points into `a2` (any field, any offset). `depth(H, x)` is the number
//! of objects on the longest acyclic path starting at the object `v(x)` points to
//! (0 if `x` is not a pointer to a valid object); `depth(H)` is the maximum over all
//! variables. So the five-node list of Fig. 1(b) has depth 5 from its head.

use super::{Addr, ExplicitState};
use crate::cfa::{StructId, VarId};
use serde::Serialize;
use std::collections::BTreeSet;

/// Upper bound on DFS steps of one depth computation (longest simple path is
/// exponential in the worst case). When exhausted the result is a lower bound; heaps
/// produced by the sampler are far below it.
pub const DEPTH_STEP_BUDGET: usize = 200_000;

/// `depth(H, x)`: objects on the longest acyclic path from the object `x` points to.
pub fn depth_from(h: &ExplicitState, x: VarId) -> usize {
    match h.var(x).obj_any() {
        Some(a) if h.heap.contains_key(&a) => longest_path(h, a, usize::MAX),
        _ => 0,
    }
}

/// `depth(H) = max_x depth(H, x)`.
pub fn depth(h: &ExplicitState) -> usize {
    (0..h.vars.len())
        .map(|x| depth_from(h, x))
        .max()
        .unwrap_or(0)
}

/// The variable with the largest depth and that depth (the smallest such variable on
/// ties); `None` if no variable points to a valid object.
pub fn deepest_var(h: &ExplicitState) -> Option<(VarId, usize)> {
    let mut best: Option<(VarId, usize)> = None;
    for x in 0..h.vars.len() {
        let d = depth_from(h, x);
        if d > 0 && best.is_none_or(|(_, b)| d > b) {
            best = Some((x, d));
        }
    }
    best
}

/// True if `depth(H) >= k` (stops as soon as such a path is found).
pub fn depth_at_least(h: &ExplicitState, k: usize) -> bool {
    if k == 0 {
        return true;
    }
    (0..h.vars.len()).any(|x| match h.var(x).obj_any() {
        Some(a) if h.heap.contains_key(&a) => longest_path(h, a, k) >= k,
        _ => false,
    })
}

/// True if some path of at least `k` objects runs through cells of struct `s` only
/// (the depth of `s`'s structures; a root variable of any type may point to its first
/// cell). `k == 0` always holds.
pub fn depth_of_struct_at_least(h: &ExplicitState, k: usize, s: StructId) -> bool {
    if k == 0 {
        return true;
    }
    let only = Some(s);
    (0..h.vars.len()).any(|x| match h.var(x).obj_any() {
        Some(a) if is_of(h, a, only) => longest_path_in(h, a, k, only) >= k,
        _ => false,
    })
}

/// Whether the valid object `a` is a cell of `only` (any valid object for `None`).
fn is_of(h: &ExplicitState, a: Addr, only: Option<StructId>) -> bool {
    h.heap
        .get(&a)
        .is_some_and(|c| only.is_none() || c.strukt() == only)
}

/// Longest simple path (in nodes) from `a`, stopping early once `stop` is reached.
fn longest_path(h: &ExplicitState, a: Addr, stop: usize) -> usize {
    longest_path_in(h, a, stop, None)
}

/// Longest simple path (in nodes) from `a` through objects of `only` (all objects for
/// `None`), stopping early once `stop` is reached.
fn longest_path_in(h: &ExplicitState, a: Addr, stop: usize, only: Option<StructId>) -> usize {
    let mut on_path = BTreeSet::new();
    let mut best = 0;
    let mut steps = 0;
    dfs(h, a, &mut on_path, &mut best, (stop, only), &mut steps);
    best
}

fn dfs(
    h: &ExplicitState,
    a: Addr,
    on_path: &mut BTreeSet<Addr>,
    best: &mut usize,
    (stop, only): (usize, Option<StructId>),
    steps: &mut usize,
) {
    *steps += 1;
    on_path.insert(a);
    *best = (*best).max(on_path.len());
    let succ: BTreeSet<Addr> = h.successors(a).filter(|&b| is_of(h, b, only)).collect();
    for b in succ {
        if *best >= stop || *steps > DEPTH_STEP_BUDGET {
            break;
        }
        if !on_path.contains(&b) {
            dfs(h, b, on_path, best, (stop, only), steps);
        }
    }
    on_path.remove(&a);
}

/// When enough explicit heaps have been collected: `samples` distinct heaps, each
/// with depth at least `min_nodes`. The default is the paper's experimental setting
/// (five samples of at least four structure nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SampleThreshold {
    /// Number of distinct samples to collect.
    pub samples: usize,
    /// Minimum depth (structure nodes on a longest acyclic path) of a sample.
    pub min_nodes: usize,
}

impl Default for SampleThreshold {
    fn default() -> Self {
        SampleThreshold {
            samples: 5,
            min_nodes: 4,
        }
    }
}

/// Collects explicit heaps for BuildART's condition (c): [`SampleCollector::offer`]
/// keeps a heap if its depth reaches `min_nodes` and it is not (up to address
/// renaming and integer variable values) one already collected;
/// [`SampleCollector::done`] fires once `samples` heaps are kept. Deterministic.
#[derive(Clone, Debug)]
pub struct SampleCollector {
    /// When to stop.
    pub threshold: SampleThreshold,
    /// Only heaps whose depth through cells of this struct reaches the threshold count
    /// (none: any heap; [`SampleCollector::focused`]).
    focus: Option<StructId>,
    seen: BTreeSet<ExplicitState>,
    /// The kept heaps (canonical), in the order offered, with the deepest variable.
    pub kept: Vec<(ExplicitState, VarId, usize)>,
}

impl SampleCollector {
    /// An empty collector.
    pub fn new(threshold: SampleThreshold) -> SampleCollector {
        SampleCollector {
            threshold,
            focus: None,
            seen: BTreeSet::new(),
            kept: Vec::new(),
        }
    }

    /// An empty collector that keeps only heaps in which a path through cells of
    /// struct `s` reaches the threshold's depth (samples of one type in a program with
    /// several).
    pub fn focused(threshold: SampleThreshold, s: StructId) -> SampleCollector {
        SampleCollector {
            focus: Some(s),
            ..SampleCollector::new(threshold)
        }
    }

    /// Offers a heap; returns true if it was kept as a new sample.
    pub fn offer(&mut self, h: &ExplicitState) -> bool {
        let deep = match self.focus {
            None => depth_at_least(h, self.threshold.min_nodes),
            Some(s) => depth_of_struct_at_least(h, self.threshold.min_nodes, s),
        };
        if self.done() || !deep {
            return false;
        }
        let key = sample_key(h);
        if !self.seen.insert(key) {
            return false;
        }
        let Some((x, d)) = deepest_var(h) else {
            return false;
        };
        self.kept.push((h.canonical(), x, d));
        true
    }

    /// True once `threshold.samples` samples are kept (condition (c) of BuildART).
    pub fn done(&self) -> bool {
        self.kept.len() >= self.threshold.samples
    }
}

/// The identity of a sample: the canonical heap with integer variables forgotten, so
/// that the same heap at a different loop counter is not a new sample.
pub fn sample_key(h: &ExplicitState) -> ExplicitState {
    let mut k = h.clone();
    k.vars.update(|_, v| {
        if matches!(v, super::Value::Ptr { .. }) {
            v
        } else {
            super::Value::Top
        }
    });
    k.canonicalize();
    k
}
