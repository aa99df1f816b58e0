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

/// A comparison of an expression with itself (`n == n`: two SSA versions of one
/// variable in the interpolant): the same truth value in every state, so no predicate.
fn is_trivial(e: &crate::cfa::Expr) -> bool {
    matches!(e, crate::cfa::Expr::Binary(op, a, b) if op.is_comparison() && a == b)
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
}
