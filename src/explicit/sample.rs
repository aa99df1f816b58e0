//! The sampler: explores a program's CFA from [`Program::entry`] with the explicit
//! domain tracking every variable, collects heaps whose depth reaches the threshold,
//! and classifies each struct type.
//!
//! Exploration is breadth-first over `(location, call stack, state)` (so the smallest
//! structures are seen first), bounded by a state budget; conditions on ⊤ follow both
//! branches; `Nondet` integers take a few representative values (default 0, 1, 2) so
//! that loops building structures run a few rounds. Deterministic: no clocks, no
//! hash-order dependence.

use super::depth::{sample_key, SampleCollector, SampleThreshold};
use super::infer::{classify, Classification, DataStructure};
use super::post::Domain;
use super::ExplicitState;
use crate::cfa::{EdgeId, Expr, LocKind, Node, Op, Program, Scope, Step, StructId, VarId};
use fixedbitset::FixedBitSet;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::time::Instant;

/// Where samples may be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SampleSites {
    /// At every explored state.
    All,
    /// Preferably at loop heads of `main` and return sites of calls in `main` (between
    /// client-level operations, where data structures are consistent rather than in
    /// the middle of an update); if those do not give enough samples within the
    /// budget, also at loop heads and entries/exits of other functions. A type the first
    /// samples leave `unknown` is classified on samples of which no site gives half
    /// ([`per_site_cap`]).
    Stable,
}

/// Configuration of [`sample_program`].
#[derive(Clone, Debug, Serialize)]
pub struct SamplerConfig {
    /// When enough samples are collected.
    pub threshold: SampleThreshold,
    /// Maximum number of explored (location, stack, state) triples.
    pub state_budget: usize,
    /// Values tried for `Nondet` integer assignments.
    pub nondet_values: Vec<i64>,
    /// Maximum call-stack depth (deeper calls are not explored).
    pub max_call_depth: usize,
    /// Heap allocations never return NULL (also when `Program::malloc_never_fails`).
    pub malloc_never_fails: bool,
    /// Where samples are taken.
    pub sites: SampleSites,
    /// Forget (set to ⊤) local variables that are dead at the reached location, so
    /// that states differing only in stale temporaries are merged.
    pub kill_dead: bool,
    /// Collect only heaps deep in cells of this struct type (the threshold's depth along
    /// a path of its cells): samples of a type that the first deep heaps of a program
    /// with several structures do not show (none by default: any heap).
    #[serde(skip)]
    pub focus: Option<StructId>,
    /// Stop exploring at this instant, as when the state budget runs out (`verify`'s
    /// time limit; none by default).
    #[serde(skip)]
    pub deadline: Option<Instant>,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            threshold: SampleThreshold::default(),
            state_budget: 200_000,
            nondet_values: vec![0, 1, 2],
            max_call_depth: 32,
            malloc_never_fails: false,
            sites: SampleSites::Stable,
            kill_dead: true,
            focus: None,
            deadline: None,
        }
    }
}

/// One collected explicit heap.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    /// The location where it was collected (node index).
    pub node: usize,
    /// The variable with the largest depth, and that depth.
    pub root: VarId,
    pub depth: usize,
    /// The heap (canonical).
    pub state: ExplicitState,
}

/// What the sampler found.
#[derive(Clone, Debug, Serialize)]
pub struct SampleReport {
    /// The collected samples (at most `threshold.samples`).
    pub samples: Vec<Sample>,
    /// Explored states.
    pub states: usize,
    /// True if the state budget (or the time) ran out before enough samples were
    /// collected.
    pub budget_exhausted: bool,
    /// Paths ended by an explicit error (undefined behaviour), by kind.
    pub errors: BTreeMap<String, usize>,
    /// Number of times an error location was reached.
    pub error_locations: usize,
    /// One classification per struct type occurring in a sample, by struct id.
    pub classifications: Vec<Classification>,
}

impl SampleReport {
    /// The classification of the struct type with the most cells over all samples
    /// (the program's main data structure), if any.
    pub fn main_structure(&self) -> Option<&Classification> {
        self.classifications.iter().max_by_key(|c| {
            (
                c.sample_sizes.iter().sum::<usize>(),
                std::cmp::Reverse(c.strukt),
            )
        })
    }
    /// The classification of a struct type.
    pub fn classification(&self, s: StructId) -> Option<&Classification> {
        self.classifications.iter().find(|c| c.strukt == s)
    }
}

/// Loop heads: targets of back edges of a DFS from every function entry (call edges
/// are followed to their return site).
pub fn loop_heads(prog: &Program) -> BTreeSet<Node> {
    let mut heads = BTreeSet::new();
    let mut state: BTreeMap<Node, u8> = BTreeMap::new();
    let mut roots: Vec<Node> = prog.functions.iter().map(|f| f.entry).collect();
    roots.push(prog.entry);
    for r in roots {
        if prog.graph.node_weight(r).is_none() || state.contains_key(&r) {
            continue;
        }
        // Iterative DFS with explicit successor iterators.
        let mut stack: Vec<(Node, Vec<Node>)> = vec![(r, succs(prog, r))];
        state.insert(r, 1);
        while let Some((n, rest)) = stack.last_mut() {
            match rest.pop() {
                Some(m) => match state.get(&m) {
                    Some(1) => {
                        heads.insert(m);
                    }
                    Some(_) => {}
                    None => {
                        state.insert(m, 1);
                        let s = succs(prog, m);
                        stack.push((m, s));
                    }
                },
                None => {
                    state.insert(*n, 2);
                    stack.pop();
                }
            }
        }
    }
    heads
}

fn succs(prog: &Program, n: Node) -> Vec<Node> {
    let mut v: Vec<Node> = prog.successors(n).map(|(_, t, _)| t).collect();
    v.reverse();
    v
}

/// Explores `prog` explicitly and collects samples (see module docs).
pub fn sample_program(prog: &Program, cfg: &SamplerConfig) -> SampleReport {
    let dom = Domain::new(prog, cfg.malloc_never_fails || prog.malloc_never_fails);
    let (primary, secondary) = sample_sites(prog);
    let tier = |n: Node| -> Option<usize> {
        match cfg.sites {
            SampleSites::All => Some(0),
            SampleSites::Stable if primary.contains(&n) => Some(0),
            SampleSites::Stable if secondary.contains(&n) => Some(1),
            SampleSites::Stable => None,
        }
    };
    let live = cfg.kill_dead.then(|| liveness(prog));
    let collector = || match cfg.focus {
        None => SampleCollector::new(cfg.threshold),
        Some(s) => SampleCollector::focused(cfg.threshold, s),
    };
    // primary sites within their share (`per_site_cap`), primary sites past it, secondary
    // sites, and primary sites without the cap (the samples used unless they leave a type
    // `unknown`)
    let mut collectors = [collector(), collector(), collector(), collector()];
    let mut nodes_of: [Vec<usize>; 4] = Default::default();
    let cap = per_site_cap(cfg.threshold.samples);
    let mut kept_at: BTreeMap<Node, usize> = BTreeMap::new();
    let mut seen: HashSet<Item> = HashSet::new();
    let mut queue: VecDeque<Item> = VecDeque::new();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    let mut error_locations = 0;
    let mut states = 0;
    let init = (prog.entry, Vec::new(), dom.initial());
    if prog.graph.node_weight(prog.entry).is_some() {
        seen.insert(init.clone());
        queue.push_back(init);
    }
    let mut budget_exhausted = false;
    // when the primary sites with their surplus first had enough samples: the search for
    // other sites then gets as many states again, no more (time and memory at most double)
    let mut filled_at: Option<usize> = None;
    // once the uncapped samples are complete: whether they leave a type `unknown` (only
    // then is the search for the capped ones worth going on)
    let mut need_diverse: Option<bool> = None;
    while let Some((node, stack, st)) = queue.pop_front() {
        if collectors[3].done() {
            let need = *need_diverse.get_or_insert_with(|| {
                let (_, cls) = collect_samples(prog, cfg, &[(&collectors[3], nodes_of[3].clone())]);
                cls.iter().any(|c| c.chosen == DataStructure::Unknown)
            });
            let capped_done = collectors[0].done() || filled_at.is_some_and(|f| states >= 2 * f);
            if !need || capped_done {
                break;
            }
        }
        if states >= cfg.state_budget || cfg.deadline.is_some_and(|d| Instant::now() >= d) {
            budget_exhausted = true;
            break;
        }
        states += 1;
        if let Some(t) = tier(node) {
            if t == 0 && collectors[3].offer(&st) {
                nodes_of[3].push(node.index());
            }
            let c = match t {
                0 if kept_at.get(&node).is_some_and(|&k| k >= cap) => 1,
                0 => 0,
                _ => 2,
            };
            if collectors[c].offer(&st) {
                nodes_of[c].push(node.index());
                if c == 0 {
                    *kept_at.entry(node).or_insert(0) += 1;
                }
                let primary = collectors[0].kept.len() + collectors[1].kept.len();
                if filled_at.is_none() && primary >= cfg.threshold.samples {
                    filled_at = Some(states);
                }
            }
        }
        if prog.is_error(node) {
            error_locations += 1;
            continue;
        }
        let next = expand(prog, &dom, cfg, node, &stack, &st, &mut errors);
        for mut item in next {
            if let Some(live) = &live {
                kill_dead(prog, live, item.0, &mut item.2);
            }
            if !seen.contains(&item) {
                seen.insert(item.clone());
                queue.push_back(item);
            }
        }
    }
    let [capped, surplus, secondary, uncapped] = nodes_of;
    let [c0, c1, c2, c3] = &collectors;
    let (mut samples, mut classifications) =
        collect_samples(prog, cfg, &[(c3, uncapped), (c2, secondary.clone())]);
    if classifications
        .iter()
        .any(|c| c.chosen == DataStructure::Unknown)
    {
        let (diverse, better) =
            collect_samples(prog, cfg, &[(c0, capped), (c1, surplus), (c2, secondary)]);
        let mut replaced = false;
        for c in &mut classifications {
            if c.chosen != DataStructure::Unknown {
                continue;
            }
            if let Some(b) = better.iter().find(|b| b.strukt == c.strukt) {
                if b.chosen != DataStructure::Unknown {
                    *c = b.clone();
                    replaced = true;
                }
            }
        }
        if replaced {
            samples = diverse;
        }
    }
    SampleReport {
        samples,
        states,
        budget_exhausted,
        errors,
        error_locations,
        classifications,
    }
}

/// A state of the exploration: location, call stack, explicit state.
type Item = (Node, Vec<EdgeId>, ExplicitState);

/// The sample sites of `prog`: primary ones, the loop heads of `main` and the return
/// sites of calls made by `main` (between client-level operations structures are
/// consistent), and secondary ones, the loop heads and entries/exits of every
/// function, used when the primary sites do not yield enough samples within the budget.
fn sample_sites(prog: &Program) -> (BTreeSet<Node>, BTreeSet<Node>) {
    let heads = loop_heads(prog);
    let mut primary: BTreeSet<Node> = BTreeSet::new();
    let mut secondary: BTreeSet<Node> = heads.clone();
    for f in &prog.functions {
        secondary.insert(f.entry);
        secondary.insert(f.exit);
    }
    for n in prog.graph.node_indices() {
        if prog.graph[n].func != prog.main {
            continue;
        }
        if heads.contains(&n) {
            primary.insert(n);
        }
        for (_, to, e) in prog.successors(n) {
            if matches!(e.op, Op::Call { .. }) {
                primary.insert(to);
            }
        }
    }
    (primary, secondary)
}

/// The successors of `st` at `node` with call stack `stack`: returns to the caller,
/// calls (up to [`SamplerConfig::max_call_depth`]), every integer nondeterministic
/// value of [`SamplerConfig::nondet_values`], the other edges' posts. The domain's
/// errors are counted in `errors` by kind.
fn expand(
    prog: &Program,
    dom: &Domain,
    cfg: &SamplerConfig,
    node: Node,
    stack: &[EdgeId],
    st: &ExplicitState,
    errors: &mut BTreeMap<String, usize>,
) -> Vec<Item> {
    let all = |_: VarId| true;
    let mut next: Vec<Item> = Vec::new();
    let mut record = |r: Result<Vec<ExplicitState>, super::ExplicitError>,
                      to: Node,
                      stk: &[EdgeId],
                      next: &mut Vec<Item>| {
        match r {
            Ok(v) => next.extend(v.into_iter().map(|s| (to, stk.to_vec(), s))),
            Err(e) => {
                let k = format!("{e:?}");
                let k = k.split([' ', '{', '(']).next().unwrap_or("").to_string();
                *errors.entry(k).or_insert(0) += 1;
            }
        }
    };
    // Returning from a callee.
    if prog.graph[node].kind == LocKind::FuncExit {
        if let Some(&call) = stack.last() {
            let callee_exit = match &prog.graph[call].op {
                Op::Call { callee, .. } => prog.functions.get(*callee).map(|f| f.exit),
                _ => None,
            };
            if callee_exit == Some(node) {
                if let Some((_, ret_to)) = prog.graph.edge_endpoints(call) {
                    let mut stk = stack.to_vec();
                    stk.pop();
                    let r = dom.post_step(st, Step::Leave(call), &all);
                    record(r, ret_to, &stk, &mut next);
                }
            }
        }
    }
    for (e, to, edge) in prog.successors(node) {
        match &edge.op {
            Op::Call { callee, .. } => {
                let Some(f) = prog.functions.get(*callee) else {
                    continue;
                };
                if prog.graph.node_weight(f.entry).is_none() {
                    continue;
                }
                if stack.len() >= cfg.max_call_depth {
                    continue;
                }
                let mut stk = stack.to_vec();
                stk.push(e);
                let r = dom.post_step(st, Step::Enter(e), &all);
                record(r, f.entry, &stk, &mut next);
            }
            Op::Nondet { dst } => {
                let ty = prog.vars.get(*dst).map(|v| v.ty.clone());
                if ty.as_ref().is_some_and(|t| t.is_int()) {
                    let mut done = BTreeSet::new();
                    for &k in &cfg.nondet_values {
                        let op = Op::Assign {
                            dst: *dst,
                            src: Expr::Int(k),
                        };
                        if let Ok(v) = dom.post_op(st, &op, &all) {
                            for s in v {
                                if done.insert(s.var(*dst)) {
                                    next.push((to, stack.to_vec(), s));
                                }
                            }
                        }
                    }
                } else {
                    let r = dom.post_step(st, Step::Edge(e), &all);
                    record(r, to, stack, &mut next);
                }
            }
            _ => {
                let r = dom.post_step(st, Step::Edge(e), &all);
                record(r, to, stack, &mut next);
            }
        }
    }
    next
}

/// How many samples one primary site may give in the second, diverse sample set: fewer
/// than half of them, so that a site in the middle of an update (a check function called
/// between unlinking a cell and freeing it, whose stale links break every invariant)
/// cannot outvote the rest ([`super::infer::PairResult::holds_mostly`]). That set is used
/// only for a type the first samples (as before the cap) leave `unknown`; samples a site
/// gives past its share fill it when the other primary sites give too few within the
/// budget, or within as many states again as it took to have enough with the surplus.
pub fn per_site_cap(samples: usize) -> usize {
    (samples.saturating_sub(1) / 2).max(1)
}

/// The samples the collectors kept (primary sites within their share first, then the
/// primary sites' surplus, then secondary sites; distinct heaps, at most
/// [`SampleThreshold::samples`]) and the classification of every struct type in them.
fn collect_samples(
    prog: &Program,
    cfg: &SamplerConfig,
    collectors: &[(&SampleCollector, Vec<usize>)],
) -> (Vec<Sample>, Vec<Classification>) {
    let mut samples: Vec<Sample> = Vec::new();
    let mut keys = BTreeSet::new();
    for (c, nodes) in collectors {
        for ((st, root, depth), node) in c.kept.iter().zip(nodes) {
            if samples.len() < cfg.threshold.samples && keys.insert(sample_key(st)) {
                samples.push(Sample {
                    node: *node,
                    root: *root,
                    depth: *depth,
                    state: st.clone(),
                });
            }
        }
    }
    let mut types: BTreeSet<StructId> = BTreeSet::new();
    for s in &samples {
        for c in s.state.heap.values() {
            if let Some(t) = c.strukt() {
                types.insert(t);
            }
        }
    }
    let refs: Vec<&ExplicitState> = samples.iter().map(|s| &s.state).collect();
    let classifications = types
        .into_iter()
        .map(|t| classify(prog, t, &refs))
        .collect();
    (samples, classifications)
}

/// Variables read by an operation (on its edge).
fn op_uses(op: &Op, out: &mut Vec<VarId>) {
    match op {
        Op::Assign { src, .. } => src.vars(out),
        Op::Load { ptr, .. } | Op::FieldAddr { ptr, .. } | Op::LoadIndirect { ptr, .. } => {
            out.push(*ptr)
        }
        Op::Store { ptr, src, .. } | Op::StoreIndirect { ptr, src } => {
            out.push(*ptr);
            src.vars(out);
        }
        Op::Free { ptr } | Op::AssumeInvalid { ptr, .. } => out.push(*ptr),
        Op::Assume { cond } => cond.vars(out),
        Op::Call { args, .. } => args.iter().for_each(|a| a.vars(out)),
        Op::Skip
        | Op::Nondet { .. }
        | Op::Alloc { .. }
        | Op::Error
        | Op::Halt
        | Op::AssumeLeak { .. } => {}
    }
}

/// The variable an operation defines.
fn op_def(op: &Op) -> Option<VarId> {
    match op {
        Op::Assign { dst, .. }
        | Op::Nondet { dst }
        | Op::Load { dst, .. }
        | Op::FieldAddr { dst, .. }
        | Op::LoadIndirect { dst, .. }
        | Op::Alloc { dst, .. } => Some(*dst),
        Op::Call { ret, .. } => *ret,
        _ => None,
    }
}

/// Live variables at every location (intraprocedural backward analysis; a call edge
/// reads its arguments and defines its `ret`; a function exit reads `Function::ret`).
pub fn liveness(prog: &Program) -> Vec<FixedBitSet> {
    let n = prog.graph.node_count();
    let nv = prog.vars.len();
    let mut live = vec![FixedBitSet::with_capacity(nv); n];
    for f in &prog.functions {
        if let (Some(r), Some(l)) = (f.ret, live.get_mut(f.exit.index())) {
            if r < nv {
                l.insert(r);
            }
        }
    }
    let mut changed = true;
    let mut uses = Vec::new();
    while changed {
        changed = false;
        for i in (0..n).rev() {
            let node = Node::new(i);
            let mut acc = live[i].clone();
            for (_, to, e) in prog.successors(node) {
                let mut out = live[to.index()].clone();
                if let Some(d) = op_def(&e.op) {
                    if d < nv {
                        out.set(d, false);
                    }
                }
                uses.clear();
                op_uses(&e.op, &mut uses);
                for &u in &uses {
                    if u < nv {
                        out.insert(u);
                    }
                }
                acc.union_with(&out);
            }
            if acc != live[i] {
                live[i] = acc;
                changed = true;
            }
        }
    }
    live
}

/// Sets the dead locals of the function of `at` to ⊤.
fn kill_dead(prog: &Program, live: &[FixedBitSet], at: Node, s: &mut ExplicitState) {
    let Some(loc) = prog.graph.node_weight(at) else {
        return;
    };
    let Some(l) = live.get(at.index()) else {
        return;
    };
    let mut changed = false;
    for (x, var) in prog.vars.iter().enumerate() {
        let mine = matches!(var.scope, Scope::Local(f) | Scope::Temp(f) | Scope::Param(f) if f == loc.func);
        if mine && !l.contains(x) && !s.var(x).is_top() {
            s.vars.set(x, super::Value::Top);
            changed = true;
        }
    }
    if changed {
        s.canonicalize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{parse_file, FrontendOptions};

    /// The program of the C source `src`.
    fn program(src: &str) -> Program {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let f = dir.path().join("test.c");
        std::fs::write(&f, src).unwrap_or_else(|e| panic!("{e}"));
        parse_file(&f, &FrontendOptions::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_sampler_stops_at_its_deadline() {
        // regression (fuzzing): `verify --scg maximal --timeout 3` sampled a program with
        // an endless loop for 9 s before its time limit started
        let prog = program(
            "#include <stdlib.h>\nstruct node { struct node *next; };\n\
             int main(void) { struct node *h = 0; int i = 0;\n\
             do { struct node *n = malloc(sizeof *n); n->next = h; h = n; i++; } while (1);\n\
             return i; }\n",
        );
        let budget = SamplerConfig {
            state_budget: 50,
            threshold: SampleThreshold {
                samples: 1_000,
                min_nodes: 1_000,
            },
            ..Default::default()
        };
        let r = sample_program(&prog, &budget);
        assert_eq!((r.states, r.budget_exhausted), (50, true));
        let past = SamplerConfig {
            deadline: Some(Instant::now()),
            ..budget
        };
        let r = sample_program(&prog, &past);
        assert_eq!((r.states, r.budget_exhausted), (0, true));
    }

    /// Regression: a program building a list of `struct a` and a list of `struct b` in
    /// one loop gave samples only deep in the list that grows faster (`b`), so the early
    /// abstraction never saw a deep `struct a` (benchmarks/real/fp_sorted_insert with
    /// its two lists of two types: `struct el` stayed unclassified, refinement failed).
    #[test]
    fn a_focused_sampler_samples_the_type_the_first_deep_heaps_miss() {
        let prog = program(
            "#include <stdlib.h>\nextern int __VERIFIER_nondet_int(void);\n\
             struct a { struct a *next; };\nstruct b { struct b *next; };\n\
             int main(void) { struct a *x = 0; struct b *y = 0;\n\
             while (__VERIFIER_nondet_int()) {\n\
               struct b *n = malloc(sizeof *n); n->next = y; y = n;\n\
               n = malloc(sizeof *n); n->next = y; y = n;\n\
               if (__VERIFIER_nondet_int()) { struct a *m = malloc(sizeof *m); m->next = x; x = m; }\n\
             }\n return 0; }\n",
        );
        let id = |name: &str| {
            prog.structs
                .iter()
                .position(|s| s.name == name)
                .unwrap_or_else(|| panic!("struct {name}"))
        };
        let (a, b) = (id("a"), id("b"));
        let cfg = SamplerConfig {
            malloc_never_fails: true,
            ..Default::default()
        };
        let any = sample_program(&prog, &cfg);
        let deep = |r: &SampleReport, t: StructId| {
            r.samples
                .iter()
                .filter(|s| crate::explicit::depth::depth_of_struct_at_least(&s.state, 4, t))
                .count()
        };
        assert_eq!((deep(&any, a), deep(&any, b)), (0, any.samples.len()));
        let focused = sample_program(
            &prog,
            &SamplerConfig {
                focus: Some(a),
                ..cfg
            },
        );
        assert_eq!(deep(&focused, a), 5);
        let c = focused.classifications.iter().find(|c| c.strukt == a);
        assert!(c.is_some_and(|c| c.chosen != crate::explicit::DataStructure::Unknown));
    }
}
