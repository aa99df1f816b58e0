//! Sequence interpolants for infeasible paths, computed as weakest preconditions of
//! `false` over the path sliced by the unsat core, and validated by Z3.
//!
//! For a path `A_1 .. A_n` (one conjunct per step, see [`super::encode`]) the sequence
//! `I_0 = true, I_1, .., I_n = false` satisfies `I_{i-1} ∧ A_i ⊨ I_i`, and `I_i` only
//! mentions state symbols live at position `i` (current SSA versions of variables and
//! heap arrays, plus versions saved by enclosing activations).
//!
//! Technique: guards of steps outside the (minimised) unsat core are dropped (a weakening
//! of each `A_i`, so the result is still a sequence interpolant of the original path);
//! then `I_{i-1} = wp(A_i, I_i) = ∀choices. guards → I_i[defs]`. Definitions are
//! substituted (SSA), Boolean choices (NULL outcome of `malloc`) are eliminated by case
//! split, integer choices (`Nondet`, uninitialised locals) by Z3's `qe` tactic; if `qe`
//! leaves a quantifier, interpolation fails (no predicates are learnt, the caller answers
//! UNKNOWN for this refinement). `wp(A_1 .. A_n, false)` at position 0 must be valid
//! (that is the infeasibility of the sliced path); it is replaced by `true`.

use super::atoms::{extract_atoms, Atom};
use super::encode::{encode_path, Live, PathEncoding, SymbolTable};
use super::feasibility::{new_solver, solve, Feasibility, Model, Proof, SmtOptions};
use super::term::{const_names, from_z3, has_quantifier, Term};
use super::SmtError;
use crate::cfa::{Node, Program, Step, VarId};
use rustc_hash::FxHashSet;
use std::collections::BTreeSet;
use std::sync::Arc;
use z3::ast::{exists_const, Ast, Bool, Dynamic};
use z3::{Goal, SatResult, Tactic};

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
    /// SMT-LIB rendering (for logs).
    pub smt2: String,
    /// Atoms, rendered over program variables.
    pub atoms: Vec<Atom>,
    /// Pointer variables equated with each other in some atom (alias candidates), `a < b`.
    pub aliases: BTreeSet<(VarId, VarId)>,
}

/// A sequence interpolant `I_0 = true, .., I_n = false` of an infeasible path.
#[derive(Clone, Debug)]
pub struct Interpolants {
    /// Unsat core the interpolants were computed from.
    pub proof: Proof,
    /// `items[i]` is `I_i`, for `i` in `0..=n`.
    pub items: Vec<Interpolant>,
    pub symbols: SymbolTable,
    /// True if the sequence was checked by Z3.
    pub validated: bool,
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
    let seq = wp_sequence(enc, &proof, opts).map_err(|e| {
        tracing::warn!("interpolation failed: {e}");
        SmtError::InterpolationFailed(e)
    })?;
    if opts.validate {
        if let Err(e) = validate(enc, &seq, opts) {
            tracing::warn!("interpolant validation failed, no predicates learnt: {e}");
            return Err(SmtError::InterpolationFailed(format!("validation: {e}")));
        }
    }
    let mut items = Vec::with_capacity(seq.len());
    for (pos, itp) in seq.iter().enumerate() {
        let d = Dynamic::from_ast(itp);
        let term = from_z3(&d, &enc.symbols.by_name)
            .map_err(|e| SmtError::InterpolationFailed(format!("I_{pos}: {e}")))?;
        let (atoms, aliases) =
            extract_atoms(prog, &enc.symbols, &enc.live[pos], &term, opts.max_atoms);
        items.push(Interpolant {
            pos,
            loc: enc.locs.get(pos).copied().unwrap_or(prog.entry),
            term,
            smt2: itp.to_string(),
            atoms,
            aliases,
        });
    }
    Ok(Interpolants {
        proof,
        items,
        symbols: enc.symbols.clone(),
        validated: opts.validate,
    })
}

/// `I_0 .. I_n` by weakest preconditions over the core-sliced path.
fn wp_sequence(
    enc: &PathEncoding,
    proof: &Proof,
    opts: &InterpolationOptions,
) -> Result<Vec<Bool>, String> {
    let keep: FxHashSet<(usize, usize)> = proof.core.iter().map(|c| (c.step, c.guard)).collect();
    let n = enc.len();
    let mut seq = vec![Bool::from_bool(false); n + 1];
    for i in (0..n).rev() {
        seq[i] = wp_step(enc, i, &seq[i + 1], |j| keep.contains(&(i, j)))?;
    }
    // wp of the whole path must be valid: the sliced path is infeasible.
    let s = new_solver(&opts.smt);
    s.assert(seq[0].not());
    match s.check() {
        SatResult::Unsat => {}
        r => return Err(format!("wp at the path start is not valid ({r:?})")),
    }
    seq[0] = Bool::from_bool(true);
    Ok(seq)
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

/// `∀x. phi` without quantifiers, via Z3's `qe` on `¬∃x. ¬phi`.
fn forall_elim(x: &Dynamic, phi: &Bool) -> Result<Bool, String> {
    let ex = exists_const(&[x as &dyn Ast], &[], &phi.not());
    let goal = Goal::new(false, false, false);
    goal.assert(&ex);
    let tactic = Tactic::new("qe").and_then(&Tactic::new("simplify"));
    let res = tactic
        .apply(&goal, None)
        .map_err(|e| format!("qe failed: {e}"))?;
    let mut disj = Vec::new();
    for g in res.list_subgoals() {
        let fs = g.get_formulas();
        disj.push(Bool::and(&fs));
    }
    let psi = Bool::or(&disj);
    let out = psi.not().simplify();
    if has_quantifier(&Dynamic::from_ast(&out)) {
        return Err(format!("qe left a quantifier eliminating {x}"));
    }
    Ok(out)
}

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
    let s = new_solver(&opts.smt);
    for i in 0..n {
        // Skip the solver when nothing can change (identical formula, no constraints).
        s.push();
        s.assert(&seq[i]);
        s.assert(enc.steps[i].conjunct());
        s.assert(seq[i + 1].not());
        let r = s.check();
        s.pop(1);
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
