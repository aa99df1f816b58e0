//! The abstract reachability tree (ART) and `BuildART`, the waitlist algorithm that
//! extends it under a [`Cpa`] (paper §3.1).
//!
//! Invariants:
//! - node 0 is the root: [`Program::entry`], empty call stack, the CPA's initial state;
//! - a node is either *expanded* (every successor of every step is covered by one of
//!   its children, equal to it unless the child is [`ArtNode::merged`]), *covered* (by
//!   alive, uncovered nodes at the same location and call stack whose states cover its
//!   own: older ones, or the younger node it was merged into), or on the waitlist;
//! - removed nodes ([`Art::remove_subtree`]) are never used again; nodes they covered
//!   go back to the waitlist, so the tree stays sound after refinement;
//! - a complete ART (empty waitlist) without a node at an error location is a proof
//!   that no error location is reachable (the certificate checker re-validates this).

use crate::cfa::{EdgeId, Node, Program, Step};
use crate::cpa::Cpa;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::time::Instant;

/// Index of a node in [`Art::nodes`].
pub type ArtId = usize;

/// One ART node: location, call stack, abstract state, tree and covering links.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ArtNode<S> {
    pub loc: Node,
    /// Call edges of the active calls, innermost last.
    pub stack: Vec<EdgeId>,
    pub state: S,
    /// Parent and the step that led here (None for the root).
    pub parent: Option<(ArtId, Step)>,
    pub children: Vec<ArtId>,
    /// The (first) node covering this one; a covered node is never expanded.
    pub covered_by: Option<ArtId>,
    /// With [`ArtNode::covered_by`], the other nodes whose states together cover this
    /// one ([`Cpa::covers_union`]); empty for a covering by one node.
    #[serde(default)]
    pub covered_also: Vec<ArtId>,
    /// True if states of other nodes were merged into this one ([`Cpa::merge`]): its
    /// state covers, but may exceed, its parent's successor. False unless `BuildART`
    /// merges.
    #[serde(default)]
    pub merged: bool,
    /// False once the node was removed by refinement.
    pub alive: bool,
    /// True once all successors were computed.
    pub expanded: bool,
    /// [`Cpa::fingerprint`] of `state`, set by `BuildART` (the default, which filters
    /// nothing, elsewhere).
    #[serde(skip)]
    pub fp: crate::cpa::Fingerprint,
}

/// Exploration order of the waitlist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
pub enum Order {
    /// Breadth first (shortest counterexamples first).
    #[default]
    Bfs,
    /// Depth first.
    Dfs,
}

/// Limits and options of one `BuildART` call.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub order: Order,
    /// Stop with [`BuildOutcome::Limit`] when the ART has this many nodes.
    pub max_nodes: usize,
    pub deadline: Option<Instant>,
    /// Stop with [`BuildOutcome::Limit`] when the resident set of the process exceeds
    /// this many MiB (checked every 256 expansions).
    pub memory_limit_mb: Option<u64>,
    /// Target locations ([`Program::is_error`]) already known to be reachable: nodes
    /// there are leaves like any other, not errors (the search goes on for the others).
    pub reached: Vec<Node>,
    /// Merge a new node that no node covers into an older uncovered node at the same
    /// location and call stack when the CPA's [`Cpa::merge`] allows it: the new node
    /// gets the merged state and the older one becomes a covered leaf.
    pub merge: bool,
    /// Stop with [`BuildOutcome::Limit`] ("cancelled") once this is set (another
    /// analysis of a portfolio answered first).
    pub cancel: Option<Cancel>,
}

/// A flag one thread sets to stop analyses running on others (checked at every
/// ART expansion and refinement; the analysis then ends UNKNOWN, "cancelled").
#[derive(Clone, Debug, Default)]
pub struct Cancel(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    /// Asks every holder of a clone of this flag to stop.
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called on a clone of this flag.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The reason an analysis stopped by [`Cancel`] gives.
pub const CANCELLED: &str = "cancelled: another analysis answered first";

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            order: Order::Bfs,
            max_nodes: 1_000_000,
            deadline: None,
            memory_limit_mb: None,
            reached: Vec::new(),
            merge: false,
            cancel: None,
        }
    }
}

/// Why `BuildART` stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildOutcome {
    /// (a) a node at an error location was created.
    Error(ArtId),
    /// (b) the waitlist is empty: the ART is complete (and has no error node).
    Complete,
    /// (c) the caller's threshold fired on this node's state (e.g. an explicit heap
    /// deeper than the sampling threshold).
    Threshold(ArtId),
    /// A resource limit or an unsupported feature (e.g. recursion) stopped the search.
    Limit(String),
}

/// The abstract reachability tree.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Art<S> {
    pub nodes: Vec<ArtNode<S>>,
    waitlist: VecDeque<ArtId>,
    #[serde(skip)]
    by_loc: FxHashMap<(Node, Vec<EdgeId>), LocNodes>,
    /// Per node, [`Digest`] of its fingerprint (dense: scanning candidates reads
    /// these, not the nodes).
    #[serde(skip)]
    digests: Vec<Digest>,
    /// Per node, the nodes that were covered by it (some no longer are): where
    /// [`Art::fix_coverings`] looks after a removal, instead of at every node.
    #[serde(skip)]
    covering: Vec<Vec<ArtId>>,
    /// Nodes removed since the last [`Art::fix_coverings`].
    #[serde(skip)]
    killed: Vec<ArtId>,
    /// Whether `covering` and `killed` are kept (false in a tree read back: then every
    /// node is looked at).
    #[serde(skip)]
    indexed: bool,
}

/// The nodes at one location and call stack (alive and uncovered, and some that no
/// longer are, until the next compaction).
#[derive(Clone, Debug, Default)]
struct LocNodes {
    ids: Vec<ArtId>,
    /// The length after the last compaction.
    compacted: usize,
}

impl LocNodes {
    /// Keeps only the ids `keep` accepts, once the index has grown enough since the
    /// last time (each compaction costs a look at every node here).
    fn compact(&mut self, keep: impl Fn(ArtId) -> bool) {
        if self.ids.len() >= 2 * self.compacted + 16 {
            self.ids.retain(|&m| keep(m));
            self.compacted = self.ids.len();
        }
    }
}

/// A node's [`crate::cpa::Fingerprint`] folded into one word each way (a necessary
/// condition for the full one: `req ⊆ offer` word by word implies it of the ORs) and
/// its merge key, kept densely for the candidate scan.
#[derive(Clone, Copy, Debug)]
struct Digest {
    req: u64,
    offer: u64,
    merge: Option<crate::cpa::MergeKey>,
}

impl Default for Digest {
    /// Of the default fingerprint: requires nothing, offers everything.
    fn default() -> Self {
        Digest {
            req: 0,
            offer: !0,
            merge: None,
        }
    }
}

impl Digest {
    fn of(fp: &crate::cpa::Fingerprint) -> Digest {
        let fold = |w: &[u64]| w.iter().fold(0, |a, b| a | b);
        Digest {
            req: fold(&fp.req),
            offer: fp.offer.as_deref().map_or(!0, fold),
            merge: fp.merge,
        }
    }
    /// False only if [`crate::cpa::Fingerprint::may_cover`] is false.
    fn may_cover(&self, s: &Digest) -> bool {
        self.req & !s.offer == 0
    }
    /// [`crate::cpa::Fingerprint::may_merge`] (the merge key is kept whole).
    fn may_merge(&self, new: &Digest) -> bool {
        match (&self.merge, &new.merge) {
            (Some(a), Some(b)) => a.exact == b.exact && b.bits & !a.bits == 0,
            _ => true,
        }
    }
}

impl<S: Clone> Art<S> {
    /// A tree with only the root (at `prog.entry`, empty stack, state `init`).
    pub fn new(prog: &Program, init: S) -> Art<S> {
        let mut art = Art {
            nodes: Vec::new(),
            waitlist: VecDeque::new(),
            by_loc: FxHashMap::default(),
            digests: Vec::new(),
            covering: Vec::new(),
            killed: Vec::new(),
            indexed: true,
        };
        art.push(prog.entry, Vec::new(), init, None);
        art
    }

    fn push(
        &mut self,
        loc: Node,
        stack: Vec<EdgeId>,
        state: S,
        parent: Option<(ArtId, Step)>,
    ) -> ArtId {
        let id = self.nodes.len();
        self.by_loc
            .entry((loc, stack.clone()))
            .or_default()
            .ids
            .push(id);
        // (a tree read back starts without digests: the missing ones are the default)
        self.digests.resize(id, Digest::default());
        self.digests.push(Digest::default());
        self.nodes.push(ArtNode {
            loc,
            stack,
            state,
            parent,
            children: Vec::new(),
            covered_by: None,
            covered_also: Vec::new(),
            merged: false,
            alive: true,
            expanded: false,
            fp: Default::default(),
        });
        if let Some((p, _)) = parent {
            self.nodes[p].children.push(id);
        }
        if self.indexed {
            self.covering.push(Vec::new());
        }
        self.waitlist.push_back(id);
        id
    }

    /// The alive, uncovered nodes at `loc` and `stack` but `child` whose fingerprints
    /// may cover `child`'s, and those whose fingerprints may merge with it (if
    /// `merge`). Dead and covered nodes take part in neither: the index drops them now
    /// and then and skips them until then (a node uncovered later is put back by
    /// [`Art::fix_coverings`]).
    fn candidates(
        &mut self,
        loc: Node,
        stack: &[EdgeId],
        child: ArtId,
        merge: bool,
    ) -> (Vec<ArtId>, Vec<ArtId>) {
        let nodes = &self.nodes;
        let digests = &self.digests;
        let here = self.by_loc.entry((loc, stack.to_vec())).or_default();
        here.compact(|m| m == child || (nodes[m].alive && nodes[m].covered_by.is_none()));
        let fp = &nodes[child].fp;
        let digest = |m: ArtId| digests.get(m).copied().unwrap_or_default();
        let d = digest(child);
        let mut coverers = Vec::new();
        let mut mergers = Vec::new();
        for &m in &here.ids {
            let dm = digest(m);
            let cover = dm.may_cover(&d);
            let may_merge = merge && dm.may_merge(&d);
            if m == child
                || !(cover || may_merge)
                || !nodes[m].alive
                || nodes[m].covered_by.is_some()
            {
                continue;
            }
            if cover && nodes[m].fp.may_cover(fp) {
                coverers.push(m);
            }
            if may_merge {
                mergers.push(m);
            }
        }
        (coverers, mergers)
    }

    /// Gives node `n` the fingerprint `fp` (and its digest).
    pub fn set_fp(&mut self, n: ArtId, fp: crate::cpa::Fingerprint) {
        if let Some(d) = self.digests.get_mut(n) {
            *d = Digest::of(&fp);
        }
        self.nodes[n].fp = fp;
    }

    /// Records `m`'s covering nodes in the index of [`Art::fix_coverings`].
    fn note_cover(&mut self, m: ArtId) {
        if !self.indexed {
            return;
        }
        let n = &self.nodes[m];
        for &c in n.covered_by.iter().chain(&n.covered_also) {
            self.covering[c].push(m);
        }
    }

    /// `n` is covered by `by` (and, together with it, by `also`).
    pub fn set_covered(&mut self, n: ArtId, by: ArtId, also: Vec<ArtId>) {
        self.nodes[n].covered_by = Some(by);
        self.nodes[n].covered_also = also;
        self.note_cover(n);
    }

    /// Number of alive nodes.
    pub fn size(&self) -> usize {
        self.nodes.iter().filter(|n| n.alive).count()
    }

    /// True if no node waits for expansion.
    pub fn is_complete(&self) -> bool {
        self.waitlist
            .iter()
            .all(|&n| !self.nodes[n].alive || self.nodes[n].covered_by.is_some())
    }

    /// The steps from the root to `n`.
    pub fn path_to(&self, mut n: ArtId) -> Vec<Step> {
        let mut steps = Vec::new();
        while let Some((p, s)) = self.nodes[n].parent {
            steps.push(s);
            n = p;
        }
        steps.reverse();
        steps
    }

    /// The ART nodes from the root to `n` (inclusive).
    pub fn nodes_to(&self, mut n: ArtId) -> Vec<ArtId> {
        let mut out = vec![n];
        while let Some((p, _)) = self.nodes[n].parent {
            out.push(p);
            n = p;
        }
        out.reverse();
        out
    }

    /// Removes `n` and its descendants (refinement). Nodes covered by a removed node
    /// are uncovered and re-queued; the parent of `n` is re-queued for re-expansion.
    pub fn remove_subtree(&mut self, n: ArtId) {
        self.kill(vec![n]);
        // refinement removes rarely: every node is looked at, also coverings that
        // were set on the public fields rather than through `set_covered`
        self.fix_coverings_of(None, true);
        if let Some((p, _)) = self.nodes[n].parent {
            if self.nodes[p].alive {
                let mut children = std::mem::take(&mut self.nodes[p].children);
                children.retain(|&c| self.nodes[c].alive);
                self.nodes[p].children = children;
                self.nodes[p].expanded = false;
                self.waitlist.push_back(p);
            }
        }
    }

    /// `old` (alive, uncovered, at `into`'s location and call stack, with a state
    /// `into`'s covers) becomes a leaf covered by `into`: its subtrees are removed and
    /// the nodes it covered are covered by `into` instead (coverage is transitive).
    pub fn absorb(&mut self, old: ArtId, into: ArtId) {
        self.remove_children(old);
        self.set_covered(old, into, Vec::new());
        self.nodes[into].merged = true;
        self.fix_coverings(Some((old, into)));
    }

    /// `n` (alive, uncovered) takes the larger state `state` (a merge with a state
    /// found below it): its subtrees are removed and it waits for expansion again.
    pub fn grow(&mut self, n: ArtId, state: S) {
        self.remove_children(n);
        self.nodes[n].state = state;
        self.set_fp(n, Default::default());
        self.nodes[n].merged = true;
        self.waitlist.push_back(n);
        self.fix_coverings(None);
    }

    /// True if `a` is `b` or an ancestor of `b`.
    pub fn is_ancestor(&self, a: ArtId, mut b: ArtId) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.nodes[b].parent {
                Some((p, _)) => b = p,
                None => return false,
            }
        }
    }

    /// Marks `roots` and their descendants removed.
    fn kill(&mut self, mut todo: Vec<ArtId>) {
        while let Some(m) = todo.pop() {
            if !self.nodes[m].alive {
                continue;
            }
            self.nodes[m].alive = false;
            if self.indexed {
                self.killed.push(m);
            }
            todo.extend(self.nodes[m].children.iter().copied());
        }
    }

    /// Removes the subtrees below `n`, which stays alive and unexpanded.
    fn remove_children(&mut self, n: ArtId) {
        let children = std::mem::take(&mut self.nodes[n].children);
        self.kill(children);
        self.nodes[n].expanded = false;
    }

    /// After removals: coverings by `moved.0` go to `moved.1`; nodes covered by a
    /// removed node are uncovered and go back to the waitlist.
    fn fix_coverings(&mut self, moved: Option<(ArtId, ArtId)>) {
        self.fix_coverings_of(moved, false);
    }

    /// [`Art::fix_coverings`], looking at every node if `all` (else at those the
    /// index says the removed or moved nodes covered).
    fn fix_coverings_of(&mut self, moved: Option<(ArtId, ArtId)>, all: bool) {
        let killed = std::mem::take(&mut self.killed);
        let candidates: Vec<ArtId> = if self.indexed && !all {
            let mut c: Vec<ArtId> = killed
                .iter()
                .chain(moved.as_ref().map(|(o, _)| o))
                .flat_map(|&k| std::mem::take(&mut self.covering[k]))
                .collect();
            c.sort_unstable();
            c.dedup();
            c
        } else {
            (0..self.nodes.len()).collect()
        };
        for m in candidates {
            let node = &self.nodes[m];
            if !node.alive || node.covered_by.is_none() || moved.is_some_and(|(o, _)| o == m) {
                continue;
            }
            // the common case, without allocating: no covering node dead or moved
            let touched = |c: &ArtId| !self.nodes[*c].alive || moved.is_some_and(|(o, _)| o == *c);
            if !node
                .covered_by
                .iter()
                .chain(&node.covered_also)
                .any(touched)
            {
                continue;
            }
            let mut cov: Vec<ArtId> = node
                .covered_by
                .iter()
                .chain(&node.covered_also)
                .map(|&c| match moved {
                    Some((o, into)) if c == o => into,
                    _ => c,
                })
                .collect();
            if cov.iter().any(|&c| !self.nodes[c].alive) {
                self.nodes[m].covered_by = None;
                self.nodes[m].covered_also.clear();
                let n = &self.nodes[m];
                let here = &mut self.by_loc.entry((n.loc, n.stack.clone())).or_default().ids;
                if !here.contains(&m) {
                    here.push(m);
                }
                self.waitlist.push_back(m);
                continue;
            }
            if moved.is_some() {
                let mut seen = rustc_hash::FxHashSet::default();
                cov.retain(|c| seen.insert(*c));
                self.set_covered(m, cov[0], cov[1..].to_vec());
            }
        }
    }

    /// Replaces every alive node's state by `f(node)` (e.g. `Abstract`'s HeapToShape).
    pub fn map_states(&mut self, mut f: impl FnMut(&ArtNode<S>) -> S) {
        for i in 0..self.nodes.len() {
            if self.nodes[i].alive {
                let s = f(&self.nodes[i]);
                self.nodes[i].state = s;
                self.set_fp(i, Default::default());
            }
        }
    }
}

/// Extends `art` under `cpa` and `prec` until an error node is created (a), the tree is
/// complete (b), `threshold` fires on a new uncovered node (c), or a limit is hit.
pub fn build<C: Cpa>(
    cpa: &C,
    prog: &Program,
    art: &mut Art<C::State>,
    prec: &C::Prec,
    opts: &BuildOptions,
    threshold: &mut dyn FnMut(&ArtNode<C::State>) -> bool,
) -> BuildOutcome {
    'expand: loop {
        let next = match opts.order {
            Order::Bfs => art.waitlist.pop_front(),
            Order::Dfs => art.waitlist.pop_back(),
        };
        let Some(n) = next else {
            return BuildOutcome::Complete;
        };
        let node = &art.nodes[n];
        if !node.alive || node.covered_by.is_some() || node.expanded {
            continue;
        }
        if prog.is_error(node.loc) && !opts.reached.contains(&node.loc) {
            return BuildOutcome::Error(n);
        }
        if art.nodes.len() >= opts.max_nodes {
            art.waitlist.push_front(n);
            return BuildOutcome::Limit(format!("ART node limit ({}) reached", opts.max_nodes));
        }
        if opts.deadline.is_some_and(|d| Instant::now() >= d) {
            art.waitlist.push_front(n);
            return BuildOutcome::Limit("time limit reached".into());
        }
        if opts.cancel.as_ref().is_some_and(Cancel::is_cancelled) {
            art.waitlist.push_front(n);
            return BuildOutcome::Limit(CANCELLED.into());
        }
        if let Some(limit) = opts.memory_limit_mb {
            if n % 256 == 0 && crate::diag::resident_mib().is_some_and(|m| m > limit) {
                art.waitlist.push_front(n);
                return BuildOutcome::Limit(format!("memory limit ({limit} MiB) reached"));
            }
        }
        let (loc, stack, state) = (node.loc, node.stack.clone(), node.state.clone());
        art.nodes[n].expanded = true;
        for (step, to) in prog.next_steps(loc, &stack) {
            let mut new_stack = stack.clone();
            match step {
                Step::Enter(e) => {
                    if stack.iter().any(|c| callee_entry(prog, *c) == to) {
                        return BuildOutcome::Limit(format!(
                            "recursion is not supported (call of {} at {})",
                            prog.functions[prog.graph[to].func].name, prog.graph[e].src
                        ));
                    }
                    new_stack.push(e);
                }
                Step::Leave(_) => {
                    new_stack.pop();
                }
                Step::Edge(_) => {}
            }
            for succ in cpa.post(prog, &state, step, to, prec) {
                let succ = cpa.adjust(succ, to, prec);
                let fp = cpa.fingerprint(&succ);
                let child = art.push(to, new_stack.clone(), succ, Some((n, step)));
                art.set_fp(child, fp);
                if prog.is_error(to) && !opts.reached.contains(&to) {
                    return BuildOutcome::Error(child);
                }
                // stop asks only the alive, uncovered nodes here that may cover by
                // their fingerprints, merge only those that may merge
                let (coverers, mergers) = art.candidates(to, &new_stack, child, opts.merge);
                let used = {
                    let states: Vec<&C::State> =
                        coverers.iter().map(|&m| &art.nodes[m].state).collect();
                    cpa.stop(&states, &art.nodes[child].state)
                };
                if let Some(used) = used {
                    if let Some((&first, rest)) = used.split_first() {
                        let also = rest.iter().map(|&i| coverers[i]).collect();
                        art.set_covered(child, coverers[first], also);
                        continue;
                    }
                }
                if opts.merge && mergers.len() >= cpa.merge_after(to, prec) {
                    // the fingerprints first (7.6 million merge tests of which 4,906
                    // merged on seeds/five_lists_join); debug builds check their law
                    #[cfg(debug_assertions)]
                    for &m in art
                        .by_loc
                        .get(&(to, new_stack.clone()))
                        .into_iter()
                        .flat_map(|l| &l.ids)
                    {
                        let n = &art.nodes[m];
                        if m != child && n.alive && n.covered_by.is_none() && !mergers.contains(&m)
                        {
                            debug_assert!(
                                cpa.merge(&n.state, &art.nodes[child].state, to, prec)
                                    .is_none(),
                                "a merge the fingerprints ruled out"
                            );
                        }
                    }
                    let target = mergers.iter().copied().find_map(|m| {
                        cpa.merge(&art.nodes[m].state, &art.nodes[child].state, to, prec)
                            .map(|j| (m, j))
                    });
                    if let Some((m, j)) = target {
                        if art.is_ancestor(m, child) {
                            // a loop: m itself grows and is expanded again (the node
                            // being expanded was below it and is gone)
                            let fp = cpa.fingerprint(&j);
                            art.grow(m, j);
                            art.set_fp(m, fp);
                            continue 'expand;
                        }
                        let fp = cpa.fingerprint(&j);
                        art.set_fp(child, fp);
                        art.nodes[child].state = j;
                        art.absorb(m, child);
                    }
                }
                if threshold(&art.nodes[child]) {
                    return BuildOutcome::Threshold(child);
                }
            }
        }
    }
}

fn callee_entry(prog: &Program, call: EdgeId) -> Node {
    match &prog.graph[call].op {
        crate::cfa::Op::Call { callee, .. } => prog.functions[*callee].entry,
        _ => Node::end(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfa::{BinOp, Expr, Function, LocKind, Op, Scope, SrcLoc, Ty, VarId};
    use crate::cpa::Locations;

    /// `p` with `main` (no parameters, `void`) from `entry` to `exit` as its entry.
    fn with_main(mut p: Program, entry: Node, exit: Node, locals: Vec<VarId>) -> Program {
        p.functions.push(Function {
            name: "main".into(),
            params: vec![],
            locals,
            ret: None,
            ret_ty: Ty::Void,
            entry,
            exit,
            src: SrcLoc::default(),
        });
        p.entry = entry;
        p
    }

    /// main: while (x < 3) x = x + 1; if (x == 5) error;
    fn looping() -> Program {
        let mut p = Program::new("t.c");
        let x = p.add_var("main::x", Ty::INT, Scope::Local(0));
        let s = SrcLoc::default();
        let entry = p.add_loc(0, s, LocKind::FuncEntry);
        let head = p.add_loc(0, s, LocKind::Normal);
        let body = p.add_loc(0, s, LocKind::Normal);
        let after = p.add_loc(0, s, LocKind::Normal);
        let err = p.add_loc(0, s, LocKind::Error);
        let exit = p.add_loc(0, s, LocKind::FuncExit);
        p.add_edge(
            entry,
            head,
            Op::Assign {
                dst: x,
                src: Expr::Int(0),
            },
            s,
        );
        let lt = Expr::bin(BinOp::Lt, Expr::Var(x), Expr::Int(3));
        p.add_edge(head, body, Op::Assume { cond: lt.clone() }, s);
        p.add_edge(
            body,
            head,
            Op::Assign {
                dst: x,
                src: Expr::bin(BinOp::Add, Expr::Var(x), Expr::Int(1)),
            },
            s,
        );
        p.add_edge(head, after, Op::Assume { cond: lt.negate() }, s);
        let eq = Expr::bin(BinOp::Eq, Expr::Var(x), Expr::Int(5));
        p.add_edge(after, err, Op::Assume { cond: eq.clone() }, s);
        p.add_edge(after, exit, Op::Assume { cond: eq.negate() }, s);
        with_main(p, entry, exit, vec![x])
    }

    #[test]
    fn location_cpa_finds_the_syntactic_error_path() {
        let prog = looping();
        let mut art = Art::new(&prog, ());
        let out = build(
            &Locations,
            &prog,
            &mut art,
            &(),
            &BuildOptions::default(),
            &mut |_| false,
        );
        let BuildOutcome::Error(n) = out else {
            panic!("{out:?}")
        };
        assert_eq!(art.path_to(n).len(), 3); // x = 0; assume !(x < 3); assume x == 5
    }

    #[test]
    fn removing_a_subtree_requeues_and_completes_again() {
        let prog = looping();
        let mut art = Art::new(&prog, ());
        let BuildOutcome::Error(n) = build(
            &Locations,
            &prog,
            &mut art,
            &(),
            &BuildOptions::default(),
            &mut |_| false,
        ) else {
            panic!()
        };
        let before = art.size();
        art.remove_subtree(n);
        assert_eq!(art.size(), before - 1);
        assert!(!art.is_complete());
    }

    /// States are bit sets joined by merging: the first edge out of a location sets
    /// bit 2, any other edge bit 4 (so the two branches of a diamond differ, and a
    /// loop's second iteration differs from its first).
    struct EdgeBits;
    impl Cpa for EdgeBits {
        type State = u8;
        type Prec = ();
        fn name(&self) -> &'static str {
            "edge-bits"
        }
        fn initial(&self, _: &Program, _: &()) -> u8 {
            1
        }
        fn post(&self, prog: &Program, s: &u8, step: Step, _: Node, _: &()) -> Vec<u8> {
            let e = match step {
                Step::Edge(e) | Step::Enter(e) | Step::Leave(e) => e,
            };
            let from = prog.graph.edge_endpoints(e).map(|(a, _)| a);
            let first = from.and_then(|a| {
                use petgraph::visit::EdgeRef;
                prog.graph.edges(a).map(|x| x.id()).min()
            }) == Some(e);
            vec![*s | if first { 2 } else { 4 }]
        }
        fn covers(&self, t: &u8, s: &u8) -> bool {
            s & !t == 0
        }
        fn merge(&self, t: &u8, s: &u8, _: Node, _: &()) -> Option<u8> {
            (t | s != *t).then_some(t | s)
        }
    }

    /// main: if (*) skip; else skip; (join) x = 0; (no error location)
    fn diamond() -> Program {
        let mut p = Program::new("t.c");
        let c = p.add_var("main::c", Ty::INT, Scope::Temp(0));
        let s = SrcLoc::default();
        let entry = p.add_loc(0, s, LocKind::FuncEntry);
        let test = p.add_loc(0, s, LocKind::Normal);
        let join = p.add_loc(0, s, LocKind::Normal);
        let exit = p.add_loc(0, s, LocKind::FuncExit);
        p.add_edge(entry, test, Op::Nondet { dst: c }, s);
        let cv = Expr::Var(c);
        p.add_edge(test, join, Op::Assume { cond: cv.clone() }, s);
        p.add_edge(test, join, Op::Assume { cond: cv.negate() }, s);
        p.add_edge(join, exit, Op::Skip, s);
        with_main(p, entry, exit, vec![c])
    }

    fn merging() -> BuildOptions {
        BuildOptions {
            merge: true,
            ..BuildOptions::default()
        }
    }

    #[test]
    fn a_cancelled_build_stops_with_the_waitlist_kept() {
        let prog = diamond();
        let mut art = Art::new(&prog, 1u8);
        let cancel = Cancel::default();
        cancel.clone().cancel();
        let opts = BuildOptions {
            cancel: Some(cancel),
            ..BuildOptions::default()
        };
        let out = build(&EdgeBits, &prog, &mut art, &(), &opts, &mut |_| false);
        assert_eq!(out, BuildOutcome::Limit(CANCELLED.into()));
        assert_eq!(art.waitlist.len(), 1, "the root waits to be expanded");
    }

    #[test]
    fn merging_siblings_covers_the_older_node_and_certifies() {
        let prog = diamond();
        let mut art = Art::new(&prog, 1u8);
        let out = build(&EdgeBits, &prog, &mut art, &(), &merging(), &mut |_| false);
        assert_eq!(out, BuildOutcome::Complete);
        let join = prog.graph.node_indices().nth(2).unwrap();
        let at_join: Vec<&ArtNode<u8>> = art
            .nodes
            .iter()
            .filter(|n| n.alive && n.loc == join)
            .collect();
        assert_eq!(at_join.len(), 2);
        let merged = at_join.iter().find(|n| n.merged).expect("a merged node");
        assert_eq!(merged.state, 1 | 2 | 4);
        let old = at_join.iter().find(|n| !n.merged).unwrap();
        assert!(old.covered_by.is_some() && old.children.is_empty());
        // one exit node below the merged node, none below the absorbed one
        assert_eq!(
            art.nodes
                .iter()
                .filter(|n| n.alive && n.loc == prog.functions[0].exit)
                .count(),
            1
        );
        let cert = crate::cert::Certificate::from_art(&EdgeBits, &prog, &art, &());
        assert_eq!(crate::cert::check(&EdgeBits, &prog, &cert), Ok(()));
        // without merging both branches go on
        let mut sep = Art::new(&prog, 1u8);
        build(
            &EdgeBits,
            &prog,
            &mut sep,
            &(),
            &BuildOptions::default(),
            &mut |_| false,
        );
        assert_eq!(
            sep.nodes
                .iter()
                .filter(|n| n.loc == prog.functions[0].exit)
                .count(),
            2
        );
    }

    /// main: while (*) skip; (the exit edge is the loop head's first edge)
    fn spin() -> Program {
        let mut p = Program::new("t.c");
        let s = SrcLoc::default();
        let entry = p.add_loc(0, s, LocKind::FuncEntry);
        let head = p.add_loc(0, s, LocKind::Normal);
        let body = p.add_loc(0, s, LocKind::Normal);
        let exit = p.add_loc(0, s, LocKind::FuncExit);
        p.add_edge(entry, head, Op::Skip, s);
        p.add_edge(head, exit, Op::Skip, s);
        p.add_edge(head, body, Op::Skip, s);
        p.add_edge(body, head, Op::Skip, s);
        with_main(p, entry, exit, vec![])
    }

    #[test]
    fn merging_into_an_ancestor_grows_it_and_certifies() {
        let prog = spin();
        let mut art = Art::new(&prog, 1u8);
        let out = build(&EdgeBits, &prog, &mut art, &(), &merging(), &mut |_| false);
        assert_eq!(out, BuildOutcome::Complete);
        let head = prog.graph.node_indices().nth(1).unwrap();
        let heads: Vec<&ArtNode<u8>> = art
            .nodes
            .iter()
            .filter(|n| n.alive && n.loc == head)
            .collect();
        // head: 1|2 after the entry edge, 1|2|4 after one iteration: the first head
        // node grew in place, the second iteration's head is covered by it
        let grown: Vec<_> = heads.iter().filter(|n| n.covered_by.is_none()).collect();
        assert_eq!(grown.len(), 1);
        assert!(grown[0].merged && grown[0].state == 7);
        assert!(heads.iter().all(|n| n.covered_by.is_some() || n.merged));
        let cert = crate::cert::Certificate::from_art(&EdgeBits, &prog, &art, &());
        assert_eq!(crate::cert::check(&EdgeBits, &prog, &cert), Ok(()));
    }
}
