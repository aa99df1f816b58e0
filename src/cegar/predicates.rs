//! Predicate abstraction under CEGAR: new predicates from the atoms of interpolants.

use super::{Abstraction, RefineInput, Refinement};
use crate::cfa::Program;
use crate::predabs::{atom_to_pred, Precision, PredAbs, PredScope};
use crate::smt::atoms::{theory_atoms, AtomKind};

/// [`PredAbs`] with its precision; refinement adds the interpolant atoms of position
/// `i` (integer relations and pointer (dis)equalities of program variables) at the
/// path's location `i` (or its function, or globally, by [`PredScope`]).
#[derive(Debug)]
pub struct PredicateAbstraction {
    pub cpa: PredAbs,
    pub prec: Precision,
    pub scope: PredScope,
    /// Z3 timeout per abstraction query (ms).
    pub timeout_ms: u32,
    /// Upper bound on atoms taken from one interpolant.
    pub max_atoms: usize,
}

impl PredicateAbstraction {
    /// An abstraction with the empty precision.
    pub fn new(scope: PredScope, timeout_ms: u32) -> PredicateAbstraction {
        PredicateAbstraction {
            cpa: PredAbs::new(timeout_ms),
            prec: Precision::default(),
            scope,
            timeout_ms,
            max_atoms: 64,
        }
    }
}

impl Abstraction for PredicateAbstraction {
    type Cpa = PredAbs;

    fn cpa(&self) -> &PredAbs {
        &self.cpa
    }
    fn checker(&self) -> PredAbs {
        PredAbs::new(self.timeout_ms)
    }
    fn precision(&self) -> &Precision {
        &self.prec
    }
    fn set_deadline(&self, deadline: Option<std::time::Instant>) {
        self.cpa.set_deadline(deadline);
    }
    fn stats(&self) -> serde_json::Value {
        let s = self.cpa.stats();
        serde_json::json!({
            "predicates": self.prec.preds.len(),
            "precision_size": self.prec.size(),
            "posts": s.posts,
            "post_cache_hits": s.cache_hits,
            "z3_queries": s.z3_queries,
            "z3_checks_skipped": s.z3_checks_skipped,
            "time_abstraction_z3_s": s.z3_time.as_secs_f64(),
        })
    }

    fn refine(
        &mut self,
        prog: &Program,
        input: &RefineInput<'_, <PredAbs as crate::cpa::Cpa>::State>,
    ) -> Refinement {
        refine_predicates(
            prog,
            &mut self.prec,
            self.scope,
            self.max_atoms,
            input,
            &|_| true,
        )
    }
}

/// Predicate refinement (shared by [`PredicateAbstraction`] and the combined heap
/// abstraction): adds the theory atoms of each interpolant that are predicates in the
/// fragment of [`crate::predabs::is_predicate`] at the path's location of the
/// interpolant (under `scope`); the pivot is the first path position whose tracked set
/// grew. Field and validity atoms are reported as `unhandled`. Only predicates for
/// which `keep` holds are added (the heap abstraction leaves pointers it tracks on
/// explicit heaps or shape graphs to those domains).
pub fn refine_predicates<S>(
    prog: &Program,
    prec: &mut Precision,
    scope: PredScope,
    max_atoms: usize,
    input: &RefineInput<'_, S>,
    keep: &dyn Fn(&crate::cfa::Expr) -> bool,
) -> Refinement {
    let mut r = Refinement {
        kind: "pred",
        ..Default::default()
    };
    let itps = input.interpolants;
    let mut changed = std::collections::BTreeSet::new();
    for item in &itps.items {
        let Some(&loc) = input.locs.get(item.pos) else {
            continue;
        };
        for a in &item.atoms {
            if matches!(a.kind, AtomKind::Field | AtomKind::Validity) {
                let u = format!("{} @ {}", a.text, prog.graph[loc].src);
                if !r.unhandled.contains(&u) {
                    r.unhandled.push(u);
                }
            }
        }
        for t in theory_atoms(prog, &itps.symbols, &item.term, max_atoms) {
            let Some(e) = atom_to_pred(prog, &itps.symbols, &t) else {
                continue;
            };
            if !keep(&e) || is_trivial(&e) {
                continue;
            }
            if prec.add(prog, &e, loc, scope) {
                changed.insert(loc);
                let f = &prog.functions[prog.graph[loc].func].name;
                r.added.push(format!(
                    "{} @ {f}:{} (loc {})",
                    crate::predabs::pred_text(prog, &e),
                    prog.graph[loc].src,
                    loc.index()
                ));
            }
        }
    }
    // The pivot is the first position whose tracked set grew (a location can occur
    // several times on the path; function and global scope reach further).
    let func = |l: crate::cfa::Node| prog.graph[l].func;
    r.pivot = input.locs.iter().position(|&l| match scope {
        PredScope::Location => changed.contains(&l),
        PredScope::Function => changed.iter().any(|&c| func(c) == func(l)),
        PredScope::Global => !changed.is_empty(),
    });
    r
}

/// A comparison with the same truth value in every state, so no predicate: an
/// expression compared with itself (`n == n`: two SSA versions of one variable in the
/// interpolant), or two sums of the same variables with the same coefficients
/// (`d == -4 + (4 + d)`, from interpolants that unroll a counter) whose constants are
/// equal (any comparison) or differ (`==` and `!=` only: with 32-bit wrapping an
/// ordering like `d < d + 1` depends on `d`).
fn is_trivial(e: &crate::cfa::Expr) -> bool {
    use crate::cfa::{BinOp, Expr};
    let Expr::Binary(op, a, b) = e else {
        return false;
    };
    if !op.is_comparison() {
        return false;
    }
    if a == b {
        return true;
    }
    match (linear(a), linear(b)) {
        (Some((ma, ca)), Some((mb, cb))) if ma == mb => {
            ca == cb || matches!(op, BinOp::Eq | BinOp::Ne)
        }
        _ => false,
    }
}

/// `e` as `Σ k·x + c` (no zero coefficients), when it is built from variables and
/// constants by `+`, `-`, negation and multiplication by a constant.
fn linear(
    e: &crate::cfa::Expr,
) -> Option<(std::collections::BTreeMap<crate::cfa::VarId, i128>, i128)> {
    use crate::cfa::{BinOp, Expr, UnOp};
    type Lin = (std::collections::BTreeMap<crate::cfa::VarId, i128>, i128);
    fn scale((m, c): Lin, k: i128) -> Option<Lin> {
        let m = m
            .into_iter()
            .map(|(x, a)| a.checked_mul(k).map(|a| (x, a)))
            .collect::<Option<std::collections::BTreeMap<_, _>>>()?;
        Some((m, c.checked_mul(k)?))
    }
    fn add((mut m, c): Lin, (m2, c2): Lin) -> Option<Lin> {
        for (x, a) in m2 {
            let v = m.get(&x).copied().unwrap_or(0).checked_add(a)?;
            if v == 0 {
                m.remove(&x);
            } else {
                m.insert(x, v);
            }
        }
        Some((m, c.checked_add(c2)?))
    }
    match e {
        Expr::Int(k) => Some((Default::default(), *k as i128)),
        Expr::Null => Some((Default::default(), 0)),
        Expr::Var(x) => Some(([(*x, 1)].into_iter().collect(), 0)),
        Expr::Unary(UnOp::Neg, a) => scale(linear(a)?, -1),
        Expr::Binary(BinOp::Add, a, b) => add(linear(a)?, linear(b)?),
        Expr::Binary(BinOp::Sub, a, b) => add(linear(a)?, scale(linear(b)?, -1)?),
        Expr::Binary(BinOp::Mul, a, b) => {
            let (la, lb) = (linear(a)?, linear(b)?);
            if la.0.is_empty() {
                scale(lb, la.1)
            } else if lb.0.is_empty() {
                scale(la, lb.1)
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::is_trivial;
    use crate::cfa::{BinOp, Expr};

    #[test]
    fn a_variable_compared_with_itself_is_no_predicate() {
        let v = |x| Box::new(Expr::Var(x));
        assert!(is_trivial(&Expr::Binary(BinOp::Eq, v(3), v(3))));
        assert!(is_trivial(&Expr::Binary(BinOp::Lt, v(3), v(3))));
        assert!(!is_trivial(&Expr::Binary(BinOp::Eq, v(3), v(4))));
        assert!(!is_trivial(&Expr::Binary(BinOp::Add, v(3), v(3))));
    }

    #[test]
    fn sums_that_differ_by_a_constant_are_no_equality_predicates() {
        let v = |x| Box::new(Expr::Var(x));
        let k = |c| Box::new(Expr::Int(c));
        let plus = |a, b| Box::new(Expr::Binary(BinOp::Add, a, b));
        // d == -4 + (4 + d): always true (the atoms of an unrolled counter)
        let same = plus(k(-4), plus(k(4), v(3)));
        assert!(is_trivial(&Expr::Binary(BinOp::Eq, v(3), same.clone())));
        assert!(is_trivial(&Expr::Binary(BinOp::Le, v(3), same)));
        // d == d + 1 is always false, d < d + 1 is not constant with wrapping
        let next = plus(v(3), k(1));
        assert!(is_trivial(&Expr::Binary(BinOp::Eq, v(3), next.clone())));
        assert!(is_trivial(&Expr::Binary(BinOp::Ne, v(3), next.clone())));
        assert!(!is_trivial(&Expr::Binary(BinOp::Lt, v(3), next)));
        // 2 * d == d + d, but d == e + 0 is a real predicate
        let twice = Box::new(Expr::Binary(BinOp::Mul, k(2), v(3)));
        assert!(is_trivial(&Expr::Binary(
            BinOp::Eq,
            twice,
            plus(v(3), v(3))
        )));
        assert!(!is_trivial(&Expr::Binary(
            BinOp::Eq,
            v(3),
            plus(v(4), k(0))
        )));
        // d - d == 0
        let diff = Box::new(Expr::Binary(BinOp::Sub, v(3), v(3)));
        assert!(is_trivial(&Expr::Binary(BinOp::Eq, diff, k(0))));
    }
}
