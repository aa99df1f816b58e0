//! Sequence interpolants for infeasible paths, computed as weakest preconditions of
//! `false` over the path sliced by the unsat core, and validated by Z3.
//!
//! For a path `A_1 .. A_n` (one conjunct per step, see [`super::encode`]) the sequence
//! `I_0 = true, I_1, .., I_n = false` satisfies `I_{i-1} ∧ A_i ⊨ I_i`, and `I_i` only
//! mentions state symbols live at position `i` (current SSA versions of variables and
//! heap arrays, plus versions saved by enclosing activations).
//!
//! Technique: guards of steps outside the (minimised) unsat core are dropped (a weakening
//! of each `A_i`, so the result is still a sequence interpolant of the original path),
//! except the first test of each may-fail allocation result (see `StepEnc::null_kill`);
//! then `I_{i-1} = wp(A_i, I_i) = ∀choices. guards → I_i[defs]`. Definitions are
//! substituted (SSA), Boolean choices (NULL outcome of `malloc`) are eliminated by case
//! split, integer choices (`Nondet`, uninitialised locals) by Z3's `qe` tactic; if `qe`
//! leaves a quantifier, interpolation fails (no predicates are learnt, the caller answers
//! UNKNOWN for this refinement). `wp(A_1 .. A_n, false)` at position 0 must be valid
//! (that is the infeasibility of the sliced path); it is replaced by `true`.
//!
//! Plain weakest preconditions grow with the path: they carry every later store into
//! objects allocated later on the path (fixed addresses, see the memory model), because
//! they cannot know that a pointer of the current state is not such an object. Each
//! `wp` step is therefore simplified at its position `i` ([`FutureCtx`]): for a read
//! index `x` facing such stores the bound `x < next allocation address` is proved from
//! the sliced prefix (by evaluating the SSA definitions, else one Z3 query), the stores
//! are dropped from the read and the bound is conjoined to `I_i` (so `I_i ⊨ wp`, and the
//! chain conditions hold by construction; implied bounds are pruned). The interpolants
//! then stay of constant size along a list-building loop, and their atoms are the
//! program-level facts (`l->succ->pred == l`); atoms over object addresses are dropped.
//! If this fails, the plain weakest preconditions are used.
//!
//! All solvers are created for the logic `QF_AUFLIA` (fast start-up), and a query it
//! answers `unknown` is retried with Z3's default solver.

use super::atoms::{extract_atoms, Atom};
use super::encode::{encode_path, Live, PathEncoding, SymbolTable, STRIDE};
use super::feasibility::{
    new_full_solver, new_solver, solve, Feasibility, Model, Proof, SmtOptions,
};
use super::term::{const_names, has_quantifier, Converter, Fun, Term};
use super::SmtError;
use crate::cfa::{Node, Program, Step, VarId};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use z3::ast::{exists_const, Ast, Bool, Dynamic, Int};
use z3::{AstKind, DeclKind, Goal, SatResult, Tactic};

/// Queries per incremental validation solver.
const VALIDATION_BATCH: usize = 32;

/// Alias candidates of one interpolant.
type Aliases = BTreeSet<(VarId, VarId)>;

/// Longest SMT-LIB rendering kept in [`Interpolant::smt2`] (longer ones are cut).
const SMT2_MAX: usize = 4096;

/// Options of [`interpolate`].
#[derive(Clone, Debug)]
pub struct InterpolationOptions {
    /// Check every interpolant sequence with Z3 (the three conditions and the shared-symbol
    /// condition). Default: on in debug builds. A failed check is an error, never used.
    pub validate: bool,
    pub smt: SmtOptions,
    /// Upper bound on the atoms extracted per interpolant (ite-splitting can blow up).
    pub max_atoms: usize,
}

impl Default for InterpolationOptions {
    fn default() -> Self {
        InterpolationOptions {
            validate: cfg!(debug_assertions),
            smt: SmtOptions::default(),
            max_atoms: 256,
        }
    }
}

/// The interpolant at one path position, with its atoms mapped to program variables.
#[derive(Clone, Debug)]
pub struct Interpolant {
    /// Position: 0 = before the first step, i = after step i (1-based).
    pub pos: usize,
    /// Program location at this position.
    pub loc: Node,
    /// The interpolant over SSA symbols (see [`Interpolants::symbols`]).
    pub term: Arc<Term>,
    /// SMT-LIB rendering (for logs; cut after 4096 bytes).
    pub smt2: String,
    /// Atoms, rendered over program variables.
    pub atoms: Vec<Atom>,
    /// Pointer variables equated with each other in some atom (alias candidates), `a < b`.
    pub aliases: BTreeSet<(VarId, VarId)>,
}

/// A sequence interpolant `I_0 = true, .., I_n = false` of an infeasible path.
#[derive(Clone, Debug, Default)]
pub struct Interpolants {
    /// Unsat core the interpolants were computed from.
    pub proof: Proof,
    /// `items[i]` is `I_i`, for `i` in `0..=n`.
    pub items: Vec<Interpolant>,
    pub symbols: SymbolTable,
    /// True if the sequence was checked by Z3.
    pub validated: bool,
    /// Where the time went (the feasibility check is not included).
    pub timings: Timings,
}

/// Time spent in the phases of [`interpolate`] after the feasibility check.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timings {
    /// Weakest preconditions, context simplification and the final validity check.
    pub wp: Duration,
    /// Z3 validation of the sequence (zero when not validated).
    pub validation: Duration,
    /// Conversion to [`Term`] and atom extraction.
    pub atoms: Duration,
}

/// Outcome of [`refine_path`].
#[derive(Clone, Debug)]
pub enum PathAnalysis {
    Feasible(Model),
    Infeasible(Interpolants),
}

/// Checks a path and, if infeasible, computes (and, if enabled, validates) its sequence
/// interpolants with atoms.
pub fn refine_path(
    prog: &Program,
    path: &[Step],
    opts: &InterpolationOptions,
) -> Result<PathAnalysis, SmtError> {
    let enc = encode_path(prog, path)?;
    match solve(&enc, &opts.smt)? {
        Feasibility::Feasible(m) => Ok(PathAnalysis::Feasible(m)),
        Feasibility::Infeasible(proof) => Ok(PathAnalysis::Infeasible(interpolate_encoded(
            prog, &enc, proof, opts,
        )?)),
    }
}

/// Sequence interpolants of an infeasible path. A feasible path is an
/// `InterpolationFailed` error.
pub fn interpolate(
    prog: &Program,
    path: &[Step],
    opts: &InterpolationOptions,
) -> Result<Interpolants, SmtError> {
    match refine_path(prog, path, opts)? {
        PathAnalysis::Infeasible(i) => Ok(i),
        PathAnalysis::Feasible(_) => {
            Err(SmtError::InterpolationFailed("the path is feasible".into()))
        }
    }
}

fn interpolate_encoded(
    prog: &Program,
    enc: &PathEncoding,
    proof: Proof,
    opts: &InterpolationOptions,
) -> Result<Interpolants, SmtError> {
    let t0 = Instant::now();
    let seq = wp_sequence(enc, &proof, opts).map_err(|e| {
        tracing::warn!("interpolation failed: {e}");
        SmtError::InterpolationFailed(e)
    })?;
    let mut timings = Timings {
        wp: t0.elapsed(),
        ..Timings::default()
    };
    if opts.validate {
        let t0 = Instant::now();
        if let Err(e) = validate(enc, &seq, opts) {
            tracing::warn!("interpolant validation failed, no predicates learnt: {e}");
            return Err(SmtError::InterpolationFailed(format!("validation: {e}")));
        }
        timings.validation = t0.elapsed();
    }
    let t0 = Instant::now();
    let mut items = Vec::with_capacity(seq.len());
    let mut conv = Converter::new(&enc.symbols.by_name);
    let mut prev: Option<(Bool, Vec<Atom>, Aliases, String)> = None;
    for (pos, itp) in seq.iter().enumerate() {
        let d = Dynamic::from_ast(itp);
        let term = conv
            .convert(&d)
            .map_err(|e| SmtError::InterpolationFailed(format!("I_{pos}: {e}")))?;
        // Consecutive interpolants are often identical (hash-consed): reuse the atoms.
        let reuse = match &prev {
            Some((p, ..)) => p == itp && enc.live[pos].saved == enc.live[pos - 1].saved,
            None => false,
        };
        let (atoms, aliases, smt2) = match (&prev, reuse) {
            (Some((_, a, al, s)), true) => (a.clone(), al.clone(), s.clone()),
            _ => {
                let (a, al) =
                    extract_atoms(prog, &enc.symbols, &enc.live[pos], &term, opts.max_atoms);
                let s = smt2(&term, &enc.symbols, SMT2_MAX);
                (a, al, s)
            }
        };
        prev = Some((itp.clone(), atoms.clone(), aliases.clone(), smt2.clone()));
        items.push(Interpolant {
            pos,
            loc: enc.locs.get(pos).copied().unwrap_or(prog.entry),
            term,
            smt2,
            atoms,
            aliases,
        });
    }
    timings.atoms = t0.elapsed();
    Ok(Interpolants {
        proof,
        items,
        symbols: enc.symbols.clone(),
        validated: opts.validate,
        timings,
    })
}

/// `I_0 .. I_n` by weakest preconditions over the core-sliced path, simplified with
/// facts about objects allocated later on the path (see [`FutureCtx`]); if that fails,
/// the plain weakest preconditions.
fn wp_sequence(
    enc: &PathEncoding,
    proof: &Proof,
    opts: &InterpolationOptions,
) -> Result<Vec<Bool>, String> {
    let keep: FxHashSet<(usize, usize)> = proof.core.iter().map(|c| (c.step, c.guard)).collect();
    if !enc.allocs.is_empty() {
        match wp_sequence_with(enc, &keep, opts, true) {
            Ok(seq) => return Ok(seq),
            Err(e) => tracing::debug!("context-simplified interpolants failed ({e}), plain wp"),
        }
    }
    wp_sequence_with(enc, &keep, opts, false)
}

fn wp_sequence_with(
    enc: &PathEncoding,
    keep: &FxHashSet<(usize, usize)>,
    opts: &InterpolationOptions,
    future: bool,
) -> Result<Vec<Bool>, String> {
    let n = enc.len();
    let mut seq = vec![Bool::from_bool(false); n + 1];
    let alloc_addrs: FxHashSet<i64> = enc.allocs.iter().map(|a| a.addr).collect();
    let mut values = DefValues::new(enc);
    // Allocations the sliced path proves non-NULL (by a kept guard that is false for the
    // NULL outcome), with the step of that guard.
    let mut kills: Vec<(usize, Dynamic)> = Vec::new();
    if future {
        let t = Dynamic::from_ast(&Bool::from_bool(true));
        for a in &enc.allocs {
            let Some(ns) = a.null_sym else { continue };
            let c = &enc.consts[ns as usize];
            'steps: for (i, st) in enc.steps.iter().enumerate().skip(a.step + 1) {
                for &j in &st.null_kill {
                    if !keep.contains(&(i, j)) {
                        continue;
                    }
                    let g = Dynamic::from_ast(&st.guards[j].1);
                    let v = values.eval(&g);
                    if v.substitute(&[(c, &t)])
                        .simplify()
                        .as_bool()
                        .and_then(|b| b.as_bool())
                        == Some(false)
                    {
                        kills.push((i, c.clone()));
                        break 'steps;
                    }
                }
            }
        }
    }
    let mut prefix = PrefixSolver::new(enc, keep, opts.smt.minimize_query_ms.max(1));
    for i in (0..n).rev() {
        let w = wp_step(enc, i, &seq[i + 1], |j| keep.contains(&(i, j)))?;
        seq[i] = if future {
            let bound = (enc.allocs.iter().filter(|a| a.step < i).count() as i64 + 1) * STRIDE;
            let mut cx = FutureCtx {
                kills: kills
                    .iter()
                    .filter(|(k, _)| *k < i)
                    .map(|(_, c)| c.clone())
                    .collect(),
                falsum: Dynamic::from_ast(&Bool::from_bool(false)),
                values: &mut values,
                prefix: &mut prefix,
                pos: i,
                bound,
                alloc_addrs: &alloc_addrs,
                proven: FxHashMap::default(),
                facts: Vec::new(),
                memo: FxHashMap::default(),
            };
            cx.simplify(&w)
        } else {
            w
        };
    }
    // wp of the whole path must be valid: the sliced path is infeasible (and the facts
    // added by `FutureCtx` hold on the path).
    let mut r = SatResult::Unknown;
    for s in [new_solver(&opts.smt), new_full_solver(&opts.smt)] {
        s.assert(seq[0].not());
        r = s.check();
        if r != SatResult::Unknown {
            break;
        }
    }
    if r != SatResult::Unsat {
        return Err(format!("wp at the path start is not valid ({r:?})"));
    }
    seq[0] = Bool::from_bool(true);
    Ok(seq)
}

/// Values of SSA symbols as functions of the path-start symbols and choices, by
/// substituting the definitions of the path (computed in path order up to the latest
/// definition needed, without recursion). Used to prove facts `x < bound` cheaply: the
/// definitions are part of every prefix that defines them.
struct DefValues<'a> {
    /// Definitions in path order.
    order: Vec<&'a Dynamic>,
    index: FxHashMap<String, usize>,
    /// Values of `order[..values.len()]`.
    values: Vec<Dynamic>,
}

impl<'a> DefValues<'a> {
    fn new(enc: &'a PathEncoding) -> Self {
        let mut order = Vec::new();
        let mut index = FxHashMap::default();
        for st in &enc.steps {
            for (s, t) in &st.defs {
                index.insert(s.decl().name(), order.len());
                order.push(t);
            }
        }
        DefValues {
            order,
            index,
            values: Vec::new(),
        }
    }

    /// `t` with every defined symbol replaced by its value, simplified.
    fn eval(&mut self, t: &Dynamic) -> Dynamic {
        let names = const_names(t);
        let ks: Vec<usize> = names
            .iter()
            .filter_map(|n| self.index.get(n).copied())
            .collect();
        if let Some(&last) = ks.iter().max() {
            while self.values.len() <= last {
                let rhs = self.order[self.values.len()];
                let v = self.subst(rhs);
                self.values.push(v);
            }
        }
        self.subst(t)
    }

    /// `t` with the defined symbols that already have a value replaced, simplified.
    fn subst(&self, t: &Dynamic) -> Dynamic {
        let mut pairs: Vec<(Dynamic, Dynamic)> = Vec::new();
        for name in const_names(t) {
            if let Some(&k) = self.index.get(&name) {
                if let Some(v) = self.values.get(k) {
                    pairs.push((enc_const(v, &name), v.clone()));
                }
            }
        }
        let refs: Vec<(&Dynamic, &Dynamic)> = pairs.iter().map(|(a, b)| (a, b)).collect();
        t.substitute(&refs).simplify()
    }
}

/// The Z3 constant named `name` with the sort of `like`.
fn enc_const(like: &Dynamic, name: &str) -> Dynamic {
    z3::FuncDecl::new(name, &[], &like.get_sort()).apply(&[])
}

/// Drops implied upper bounds: in every conjunction, of the conjuncts `x < c` (Z3 writes
/// `(not (<= c x))`) with the same `x` only the one with the least `c` is kept (an
/// equivalence; facts of [`FutureCtx`] at later positions are subsumed this way).
fn prune_bounds(t: &Dynamic, memo: &mut FxHashMap<Dynamic, Dynamic>) -> Dynamic {
    if let Some(r) = memo.get(t) {
        return r.clone();
    }
    if t.kind() != AstKind::App {
        return t.clone();
    }
    let old = t.children();
    if old.is_empty() {
        return t.clone();
    }
    let mut kids: Vec<Dynamic> = old.iter().map(|k| prune_bounds(k, memo)).collect();
    let decl = t.decl();
    if decl.kind() == DeclKind::And {
        // (x, bound) of `not (<= c x)`
        let bound_of = |k: &Dynamic| -> Option<(Dynamic, i64)> {
            if k.kind() != AstKind::App || k.decl().kind() != DeclKind::Not {
                return None;
            }
            let le = k.children().into_iter().next()?;
            if le.kind() != AstKind::App || le.decl().kind() != DeclKind::Le {
                return None;
            }
            let c = le.children();
            let n = FutureCtx::num(c.first()?)?;
            Some((c.get(1)?.clone(), n))
        };
        let mut least: FxHashMap<Dynamic, i64> = FxHashMap::default();
        for k in &kids {
            if let Some((x, n)) = bound_of(k) {
                let e = least.entry(x).or_insert(n);
                *e = (*e).min(n);
            }
        }
        let before = kids.len();
        kids.retain(|k| match bound_of(k) {
            Some((x, n)) => least.get(&x) == Some(&n),
            None => true,
        });
        // duplicates of the least bound
        let mut seen: FxHashSet<Dynamic> = FxHashSet::default();
        kids.retain(|k| bound_of(k).is_none() || seen.insert(k.clone()));
        if kids.len() != before {
            let bs: Vec<Bool> = kids.iter().filter_map(|k| k.as_bool()).collect();
            let r = Dynamic::from_ast(&Bool::and(&bs));
            memo.insert(t.clone(), r.clone());
            return r;
        }
    }
    let r = if kids == old {
        t.clone()
    } else {
        let refs: Vec<&dyn Ast> = kids.iter().map(|k| k as &dyn Ast).collect();
        decl.apply(&refs)
    };
    memo.insert(t.clone(), r.clone());
    r
}

/// The core-sliced path `A_1 .. A_n` in one solver, each step in a scope of its own,
/// so that the prefix `A_1 .. A_pos` of a [`FutureCtx`] query is the solver cut back
/// to `pos` scopes. The interpolants are computed from the end of the path to its
/// start, so the prefixes shrink and the solver is built (and Z3 internalises the
/// assertions) once per sequence instead of once per position (measured:
/// seeds/two_queues spent 15 % of its run building, pushing and checking a fresh
/// solver per position on paths of 500 steps).
struct PrefixSolver<'a> {
    enc: &'a PathEncoding,
    keep: &'a FxHashSet<(usize, usize)>,
    query_ms: u32,
    solver: Option<super::limit::TimedSolver>,
    /// Steps asserted, one scope each.
    level: usize,
}

impl<'a> PrefixSolver<'a> {
    fn new(enc: &'a PathEncoding, keep: &'a FxHashSet<(usize, usize)>, query_ms: u32) -> Self {
        PrefixSolver {
            enc,
            keep,
            query_ms,
            solver: None,
            level: 0,
        }
    }

    /// The solver holding exactly `A_1 .. A_pos` (pushes or pops whole steps).
    fn at(&mut self, pos: usize) -> &super::limit::TimedSolver {
        let query_ms = self.query_ms;
        let s = self.solver.get_or_insert_with(|| {
            new_solver(&SmtOptions {
                timeout_ms: query_ms,
                ..SmtOptions::default()
            })
        });
        if self.level > pos {
            s.pop((self.level - pos) as u32);
            self.level = pos;
        }
        while self.level < pos {
            let i = self.level;
            s.push();
            if let Some(st) = self.enc.steps.get(i) {
                for (a, t) in &st.defs {
                    s.assert(a.eq(t.clone()));
                }
                for (j, (_, g)) in st.guards.iter().enumerate() {
                    if self.keep.contains(&(i, j)) {
                        s.assert(g);
                    }
                }
            }
            self.level += 1;
        }
        s
    }
}

/// Simplification of `W_i = wp(A_{i+1}, I_{i+1})` at position `i` with respect to objects
/// allocated *later* on the path (addresses `>= bound`, the next allocation address at
/// `i`). Weakest preconditions carry the later stores into those objects
/// (`select(store(S.f, 12288, v), x)`) because they cannot know that `x`, a value of the
/// current state, is not such an address; the terms then grow with the path length.
///
/// For a read index `x` (a term over the state at `i`) facing such a store, the fact
/// `x < bound` is proved from the sliced prefix `A_1 .. A_i` (one Z3 query, a timeout
/// leaves the term alone); then the stores into later objects are dropped from the read
/// and `x == addr` (addr a later allocation) becomes false. The result is
/// `I_i = simp(W_i) ∧ facts`: equivalent to `W_i` under the facts, so `I_i ⊨ W_i` and the
/// chain conditions `I_{i-1} ∧ A_i ⊨ I_i` are kept; the facts propagate backward to
/// position 0, where they are valid because each holds on its prefix (the final validity
/// check of `wp_0` and the Z3 validation confirm it).
struct FutureCtx<'a, 'b> {
    values: &'b mut DefValues<'a>,
    /// The sliced path in one solver, cut to `A_1 .. A_pos` for each query.
    prefix: &'b mut PrefixSolver<'a>,
    pos: usize,
    bound: i64,
    alloc_addrs: &'b FxHashSet<i64>,
    /// NULL-outcome choices of allocations that the prefix proves non-NULL.
    kills: Vec<Dynamic>,
    falsum: Dynamic,
    proven: FxHashMap<Dynamic, bool>,
    facts: Vec<Bool>,
    memo: FxHashMap<Dynamic, Dynamic>,
}

impl FutureCtx<'_, '_> {
    fn simplify(&mut self, w: &Bool) -> Bool {
        let d = Dynamic::from_ast(w);
        if !self.has_future(&d) {
            return w.clone();
        }
        let r = self.simp(&d).as_bool().unwrap_or_else(|| w.clone());
        let mut parts = std::mem::take(&mut self.facts);
        parts.push(r);
        let out = Bool::and(&parts).simplify();
        let d = prune_bounds(&Dynamic::from_ast(&out), &mut FxHashMap::default());
        d.as_bool().unwrap_or(out)
    }

    fn num(d: &Dynamic) -> Option<i64> {
        if d.kind() == AstKind::Numeral {
            d.as_int().and_then(|i| i.as_i64())
        } else {
            None
        }
    }

    fn is_future(&self, d: &Dynamic) -> bool {
        Self::num(d).is_some_and(|v| v >= self.bound)
    }

    /// True if some numeral `>= bound` occurs (cheap pre-check).
    fn has_future(&self, d: &Dynamic) -> bool {
        let mut seen: FxHashSet<Dynamic> = FxHashSet::default();
        let mut stack = vec![d.clone()];
        while let Some(a) = stack.pop() {
            if !seen.insert(a.clone()) {
                continue;
            }
            match a.kind() {
                AstKind::Numeral if self.is_future(&a) => return true,
                AstKind::App => stack.extend(a.children()),
                _ => {}
            }
        }
        false
    }

    /// Proves `x < bound` on the prefix (memoised); records the fact.
    fn below(&mut self, x: &Dynamic) -> bool {
        if let Some(b) = self.proven.get(x) {
            return *b;
        }
        let ok = match x.as_int() {
            Some(xi) if x.kind() != AstKind::Numeral => {
                let fact = xi.lt(Int::from_i64(self.bound));
                // first by evaluating the definitions, then by a solver query
                let by_value = self
                    .values
                    .eval(&Dynamic::from_ast(&fact))
                    .substitute(
                        &self
                            .kills
                            .iter()
                            .map(|c| (c, &self.falsum))
                            .collect::<Vec<_>>(),
                    )
                    .simplify()
                    .as_bool()
                    .and_then(|b| b.as_bool())
                    == Some(true);
                if by_value {
                    self.facts.push(fact);
                    self.proven.insert(x.clone(), true);
                    return true;
                }
                let solver = self.prefix.at(self.pos);
                solver.push();
                solver.assert(fact.not());
                let ok = solver.check() == SatResult::Unsat;
                solver.pop(1);
                if ok {
                    self.facts.push(fact);
                }
                ok
            }
            _ => false,
        };
        self.proven.insert(x.clone(), ok);
        ok
    }

    fn simp(&mut self, t: &Dynamic) -> Dynamic {
        if let Some(r) = self.memo.get(t) {
            return r.clone();
        }
        let r = self.simp_uncached(t);
        self.memo.insert(t.clone(), r.clone());
        r
    }

    fn simp_uncached(&mut self, t: &Dynamic) -> Dynamic {
        if t.kind() != AstKind::App {
            return t.clone();
        }
        let old = t.children();
        if old.is_empty() {
            return t.clone();
        }
        let kids: Vec<Dynamic> = old.iter().map(|k| self.simp(k)).collect();
        let decl = t.decl();
        match decl.kind() {
            DeclKind::Select if kids.len() == 2 => {
                let mut chain = Vec::new();
                let mut a = kids[0].clone();
                while a.kind() == AstKind::App && a.decl().kind() == DeclKind::Store {
                    let c = a.children();
                    if c.len() != 3 {
                        break;
                    }
                    chain.push((c[1].clone(), c[2].clone()));
                    a = c[0].clone();
                }
                if chain.iter().any(|(i, _)| self.is_future(i)) && self.below(&kids[1]) {
                    if let Some(mut arr) = a.as_array() {
                        for (i, v) in chain.iter().rev() {
                            if !self.is_future(i) {
                                arr = arr.store(i, v);
                            }
                        }
                        return arr.select(&kids[1]);
                    }
                }
            }
            DeclKind::Eq if kids.len() == 2 => {
                for (c, x) in [(&kids[0], &kids[1]), (&kids[1], &kids[0])] {
                    let later = Self::num(c)
                        .is_some_and(|v| v >= self.bound && self.alloc_addrs.contains(&v));
                    if later && Self::num(x).is_none() && self.below(x) {
                        return Dynamic::from_ast(&Bool::from_bool(false));
                    }
                }
            }
            _ => {}
        }
        if kids == old {
            t.clone()
        } else {
            let refs: Vec<&dyn Ast> = kids.iter().map(|k| k as &dyn Ast).collect();
            decl.apply(&refs)
        }
    }
}

fn wp_step(
    enc: &PathEncoding,
    i: usize,
    post: &Bool,
    keep: impl Fn(usize) -> bool,
) -> Result<Bool, String> {
    let st = &enc.steps[i];
    let mut phi = post.clone();
    let mut changed = false;
    if !st.defs.is_empty() {
        let pairs: Vec<(&Dynamic, &Dynamic)> = st.defs.iter().map(|(s, t)| (s, t)).collect();
        let next = phi.substitute(&pairs);
        changed |= next != phi;
        phi = next;
    }
    let gs: Vec<Bool> = st
        .guards
        .iter()
        .enumerate()
        .filter(|(j, _)| keep(*j))
        .map(|(_, (_, g))| g.clone())
        .collect();
    if !gs.is_empty() {
        phi = Bool::and(&gs).implies(&phi);
        changed = true;
    }
    for c in &st.choices {
        let name = c.decl().name();
        if !const_names(&Dynamic::from_ast(&phi)).contains(&name) {
            continue;
        }
        changed = true;
        if let Some(b) = c.as_bool() {
            let t = phi.substitute(&[(&b, &Bool::from_bool(true))]);
            let f = phi.substitute(&[(&b, &Bool::from_bool(false))]);
            phi = Bool::and(&[t, f]).simplify();
        } else {
            phi = forall_elim(c, &phi)?;
        }
    }
    if changed {
        phi = phi.simplify();
    }
    Ok(phi)
}

/// `∀x. phi` without quantifiers, via Z3's quantifier elimination on `¬∃x. ¬phi`:
/// `qe` first; when it leaves a quantifier (e.g. `x` under an array `select` through
/// an `ite`), the other exact pipelines of [`QE_PIPELINES`] in turn (2 s each).
///
/// Last, when `x` is stored into an array (a value written to memory at a symbolic
/// address), every read of such a store is rewritten by read-over-write
/// ([`expand_reads_of_stores`], an equivalence) and `qe` tried once more.
fn forall_elim(x: &Dynamic, phi: &Bool) -> Result<Bool, String> {
    let mut last = String::new();
    for pipeline in QE_PIPELINES {
        match forall_elim_with(pipeline, x, phi) {
            Ok(out) => return Ok(out),
            Err(e) => last = e,
        }
    }
    let name = x.decl().name();
    let expanded = expand_reads_of_stores(&Dynamic::from_ast(phi), &name);
    if let Some(expanded) = expanded.as_bool().filter(|e| e != phi) {
        for pipeline in [
            &["qe", "simplify"][..],
            &["simplify", "qe2", "simplify"][..],
        ] {
            match forall_elim_with(pipeline, x, &expanded) {
                Ok(out) => return Ok(out),
                Err(e) => last = e,
            }
        }
    }
    Err(last)
}

/// `t` with every `select(store(a, i, v), j)` whose store chain mentions the constant
/// `x` rewritten to `ite(i = j, v, select(a, j))` (recursively): read-over-write, an
/// equivalence, after which `x` occurs in arithmetic and `ite`s only where it was
/// stored and read back.
fn expand_reads_of_stores(t: &Dynamic, x: &str) -> Dynamic {
    if t.kind() != AstKind::App {
        return t.clone();
    }
    let old = t.children();
    if old.is_empty() {
        return t.clone();
    }
    let kids: Vec<Dynamic> = old.iter().map(|k| expand_reads_of_stores(k, x)).collect();
    let decl = t.decl();
    if decl.kind() == DeclKind::Select && kids.len() == 2 && const_names(&kids[0]).contains(x) {
        return read_over_write(&kids[0], &kids[1]);
    }
    if kids == old {
        t.clone()
    } else {
        let refs: Vec<&dyn Ast> = kids.iter().map(|k| k as &dyn Ast).collect();
        decl.apply(&refs)
    }
}

/// `select(a, j)` with the stores of `a` unfolded into `ite`s.
fn read_over_write(a: &Dynamic, j: &Dynamic) -> Dynamic {
    if a.kind() == AstKind::App && a.decl().kind() == DeclKind::Store {
        let c = a.children();
        if c.len() == 3 {
            let rest = read_over_write(&c[0], j);
            return c[1].eq(j).ite(&c[2], &rest);
        }
    }
    match a.as_array() {
        Some(arr) => arr.select(j),
        None => a.clone(),
    }
}

/// [`forall_elim`] with one tactic pipeline.
fn forall_elim_with(pipeline: &[&str], x: &Dynamic, phi: &Bool) -> Result<Bool, String> {
    let ex = exists_const(&[x as &dyn Ast], &[], &phi.not());
    let goal = Goal::new(false, false, false);
    goal.assert(&ex);
    let mut tactic = Tactic::new(pipeline[0]);
    for t in &pipeline[1..] {
        tactic = tactic.and_then(&Tactic::new(t));
    }
    let res = tactic
        .try_for(std::time::Duration::from_secs(2))
        .apply(&goal, None)
        .map_err(|e| format!("{} failed: {e}", pipeline.join(";")))?;
    let mut disj = Vec::new();
    for g in res.list_subgoals() {
        let fs = g.get_formulas();
        disj.push(Bool::and(&fs));
    }
    let out = Bool::or(&disj).not().simplify();
    if has_quantifier(&Dynamic::from_ast(&out)) {
        return Err(format!("qe left a quantifier eliminating {x}"));
    }
    Ok(out)
}

/// Z3 tactic pipelines tried in order by [`forall_elim`]; each is an equivalence.
const QE_PIPELINES: &[&[&str]] = &[
    &["qe", "simplify"],
    &["simplify", "elim-term-ite", "qe", "simplify"],
    &["qe2", "simplify"],
    &["qe_rec", "simplify"],
];

/// Checks `I_{i-1} ∧ A_i ⊨ I_i`, `I_0 = true`, `I_n = false` and that every `I_i` only
/// mentions state symbols live at position `i`.
fn validate(enc: &PathEncoding, seq: &[Bool], opts: &InterpolationOptions) -> Result<(), String> {
    let n = enc.len();
    if seq.len() != n + 1 {
        return Err("wrong length".into());
    }
    if seq[0].as_bool() != Some(true) {
        return Err("I_0 is not true".into());
    }
    if seq[n].as_bool() != Some(false) {
        return Err("I_n is not false".into());
    }
    for (pos, itp) in seq.iter().enumerate() {
        check_shared(enc, &enc.live[pos], itp).map_err(|e| format!("I_{pos}: {e}"))?;
    }
    let mut s = new_solver(&opts.smt);
    let mut used = 0;
    for i in 0..n {
        if seq[i] == seq[i + 1] {
            continue; // I ∧ A ⊨ I
        }
        // One incremental solver (push/pop) for a batch of queries, renewed now and then
        // so that state kept across pops does not slow long paths down.
        used += 1;
        if used % VALIDATION_BATCH == 0 {
            s = new_solver(&opts.smt);
        }
        let query = [seq[i].clone(), enc.steps[i].conjunct(), seq[i + 1].not()];
        s.push();
        for q in &query {
            s.assert(q);
        }
        let mut r = s.check();
        s.pop(1);
        if r == SatResult::Unknown {
            let full = new_full_solver(&opts.smt);
            for q in &query {
                full.assert(q);
            }
            r = full.check();
        }
        match r {
            SatResult::Unsat => {}
            r => return Err(format!("I_{i} ∧ A_{} ⊭ I_{} ({r:?})", i + 1, i + 1)),
        }
    }
    Ok(())
}

fn check_shared(enc: &PathEncoding, live: &Live, itp: &Bool) -> Result<(), String> {
    for name in const_names(&Dynamic::from_ast(itp)) {
        match enc.symbols.by_name.get(&name) {
            Some(id) if live.contains(*id) => {}
            Some(_) => return Err(format!("mentions `{name}`, not live here")),
            None => return Err(format!("mentions unknown constant `{name}`")),
        }
    }
    Ok(())
}

/// SMT-LIB rendering of `t` over the SSA names of `syms` (as a tree, no `let`), cut after
/// about `max` bytes with ` ...`. Z3's own printer is far slower on large DAGs.
fn smt2(t: &Term, syms: &SymbolTable, max: usize) -> String {
    fn go(t: &Term, syms: &SymbolTable, max: usize, out: &mut String) {
        use std::fmt::Write;
        if out.len() > max {
            return;
        }
        match t {
            Term::Bool(b) => {
                let _ = write!(out, "{b}");
            }
            Term::Num(n) if *n < 0 => {
                let _ = write!(out, "(- {})", n.unsigned_abs());
            }
            Term::Num(n) => {
                let _ = write!(out, "{n}");
            }
            Term::Sym(s) => out.push_str(&syms.get(*s).name),
            Term::App(f, args) => {
                let name = match f {
                    Fun::Not => "not",
                    Fun::And => "and",
                    Fun::Or => "or",
                    Fun::Implies => "=>",
                    Fun::Xor => "xor",
                    Fun::Ite => "ite",
                    Fun::Eq => "=",
                    Fun::Distinct => "distinct",
                    Fun::Le => "<=",
                    Fun::Lt => "<",
                    Fun::Ge => ">=",
                    Fun::Gt => ">",
                    Fun::Add => "+",
                    Fun::Sub | Fun::Neg => "-",
                    Fun::Mul => "*",
                    Fun::Div => "div",
                    Fun::Mod => "mod",
                    Fun::Rem => "rem",
                    Fun::Select => "select",
                    Fun::Store => "store",
                    Fun::ConstArray => "(as const (Array Int Int))",
                    Fun::Uf(n) => n.as_str(),
                };
                out.push('(');
                out.push_str(name);
                for a in args {
                    out.push(' ');
                    go(a, syms, max, out);
                    if out.len() > max {
                        return;
                    }
                }
                out.push(')');
            }
        }
    }
    let mut out = String::new();
    go(t, syms, max, &mut out);
    if out.len() > max {
        let mut cut = max;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str(" ...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::Array;
    use z3::{Solver, Sort};

    /// True if `a` and `b` are equivalent.
    fn equivalent(a: &Bool, b: &Bool) -> bool {
        let s = Solver::new();
        s.assert(a.eq(b).not());
        s.check() == SatResult::Unsat
    }

    #[test]
    fn a_value_stored_at_a_symbolic_address_and_read_back_is_eliminated() {
        // ldv-regression test15: `b = nondet(); *a = *b; if (*a != *b) error`, the cells
        // at symbolic addresses; `qe` alone leaves the quantifier
        let m = Array::new_const("m", &Sort::int(), &Sort::int());
        let (a, b, x) = (
            Int::new_const("a"),
            Int::new_const("b"),
            Int::new_const("x"),
        );
        // each access at the object's start `p - p mod 4096`, guarded by its validity,
        // as the encoding writes it
        let valid = Array::new_const("valid", &Sort::int(), &Sort::int());
        let k = Int::from_i64(4096);
        let base = |p: &Int| p - &p.modulo(&k);
        let ok = |p: &Int| {
            valid
                .select(&base(p))
                .as_int()
                .expect("int")
                .eq(Int::from_i64(1))
                & p.modulo(&k).eq(Int::from_i64(0))
        };
        let read = |arr: &Array, p: &Int| arr.select(&base(p)).as_int().expect("int");
        let m1 = m.store(&base(&b), &ok(&b).ite(&x, &read(&m, &b)));
        let m2 = m1.store(&base(&a), &ok(&a).ite(&read(&m1, &b), &read(&m, &a)));
        let phi = read(&m2, &a).eq(read(&m2, &b));
        let xd = Dynamic::from_ast(&x);
        // (with Z3 4.8.12 no pipeline of QE_PIPELINES does it alone)
        assert!(QE_PIPELINES
            .iter()
            .all(|p| forall_elim_with(p, &xd, &phi).is_err()));
        let out = forall_elim(&xd, &phi).expect("eliminated");
        assert!(!has_quantifier(&Dynamic::from_ast(&out)));
        // the result is ∀x. phi (Z3 decides the quantified equivalence here)
        let all = z3::ast::forall_const(&[&x as &dyn Ast], &[], &phi);
        assert!(equivalent(&out, &all), "{out}");
        // a read elsewhere: ∀x. m[b := x][a] = m[a] is a != b
        let psi = m.store(&b, &x).select(&a).eq(m.select(&a));
        let out = forall_elim(&xd, &psi).expect("eliminated");
        assert!(equivalent(&out, &a.eq(&b).not()), "{out}");
    }

    #[test]
    fn reads_of_stores_are_unfolded_only_where_the_constant_is_stored() {
        let m = Array::new_const("m", &Sort::int(), &Sort::int());
        let (i, j, x) = (
            Int::new_const("i"),
            Int::new_const("j"),
            Int::new_const("x"),
        );
        let other = m.store(&i, &j).select(&j);
        let read = m.store(&i, &x).select(&j).as_int().expect("int");
        let t = Dynamic::from_ast(&(read + other.as_int().expect("int")));
        let e = expand_reads_of_stores(&t, "x");
        let text = e.to_string();
        assert!(text.contains("ite"), "{text}");
        // the store that does not mention x is kept
        assert_eq!(text.matches("store").count(), 1, "{text}");
        let same = e.as_int().expect("int").eq(t.as_int().expect("int"));
        assert!(equivalent(&same, &Bool::from_bool(true)));
    }
}
