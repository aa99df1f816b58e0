//! Counting in the shape domain: the program's counters (a class's
//! [`crate::tvla::ShapeClass::counters`]) next to the node cardinalities of each
//! structure ([`crate::tvla::counts`]), updated by integer assignments and decided
//! comparisons.
//!
//! The counts are affine equalities; the facts that are inequalities are added only
//! when a question is asked of Z3 (linear integer arithmetic): every node holds at
//! least one cell, the cells of the struct type number at most `2³² / sizeof`
//! (ILP32: they are distinct objects in a 32-bit address space), and every counter
//! lies in the range of its type. Soundness against the wrapping semantics of the
//! interpreter: an assignment whose value may leave the range forgets the counter,
//! and a comparison whose sides may leave the range decides nothing.

use crate::affine::Affine;
use crate::cfa::{BinOp, Expr, Program, Ty, VarId};
use crate::tvla::Structure;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use z3::ast::Int;
use z3::{SatResult, Solver};

/// A linear form over the counters: coefficients (one per counter) and a constant.
pub type Linear = (Vec<i128>, i128);

/// The range of values of a counter variable.
const MIN: i128 = i32::MIN as i128;
const MAX: i128 = i32::MAX as i128;

/// True if `v` may be a counter: a signed 32-bit integer variable (the type whose
/// comparisons and range this module models).
pub fn counter_type(prog: &Program, v: VarId) -> bool {
    prog.vars.get(v).is_some_and(|v| {
        matches!(
            v.ty,
            Ty::Int {
                bits: 32,
                signed: true
            }
        )
    })
}

/// `e` as a linear form over `counters` (names), if it is one: constants, counters,
/// `+`, `-`, negation and multiplication by a constant.
pub fn linear(prog: &Program, e: &Expr, counters: &[String]) -> Option<Linear> {
    let n = counters.len();
    linear_by(e, n, &|v| {
        let name = &prog.vars.get(v)?.name;
        let i = counters.iter().position(|c| c == name)?;
        if !counter_type(prog, v) {
            return None;
        }
        let mut c = vec![0; n];
        c[i] = 1;
        Some((c, 0))
    })
}

/// `e` as a linear form over `n` unknowns, if it is one: integer constants,
/// variables as `var` gives them (`None`: not linear), `+`, `-`, negation and
/// multiplication by a constant.
pub fn linear_by(e: &Expr, n: usize, var: &dyn Fn(VarId) -> Option<Linear>) -> Option<Linear> {
    match e {
        Expr::Int(k) => Some((vec![0; n], *k as i128)),
        Expr::Var(v) => var(*v),
        Expr::Unary(crate::cfa::UnOp::Neg, a) => {
            let (c, k) = linear_by(a, n, var)?;
            Some((c.iter().map(|x| -x).collect(), -k))
        }
        Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
            let (ca, ka) = linear_by(a, n, var)?;
            let (cb, kb) = linear_by(b, n, var)?;
            let s = if *op == BinOp::Add { 1 } else { -1 };
            Some((
                ca.iter().zip(&cb).map(|(x, y)| x + s * y).collect(),
                ka + s * kb,
            ))
        }
        Expr::Binary(BinOp::Mul, a, b) => {
            let (ca, ka) = linear_by(a, n, var)?;
            let (cb, kb) = linear_by(b, n, var)?;
            if ca.iter().all(|x| *x == 0) {
                Some((cb.iter().map(|y| y * ka).collect(), ka * kb))
            } else if cb.iter().all(|y| *y == 0) {
                Some((ca.iter().map(|x| x * kb).collect(), ka * kb))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A linear constraint for [`satisfiable`]: `Σ coeffs·x + constant  rel  0` over the
/// counters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Constraint {
    pub form: Linear,
    pub rel: BinOp,
}

/// Memo of [`satisfiable`] (bounded): the same counts meet the same comparison in
/// many ART nodes.
const MEMO_CAP: usize = 1 << 14;

/// Milliseconds per satisfiability check (unknown then counts as satisfiable).
const CHECK_MS: u32 = 2000;

type MemoKey = (Affine, usize, Vec<(i128, i128)>, i128, Vec<Vec<Constraint>>);

thread_local! {
    static MEMO: RefCell<FxHashMap<MemoKey, bool>> = RefCell::new(FxHashMap::default());
    /// One solver per thread (Z3's context is per thread), each check inside a
    /// `push`/`pop`: a fresh solver per check paid for Z3's parameter validation
    /// (`set_params`) every time. Each check has at most [`CHECK_MS`].
    static SOLVER: Solver = Solver::new();
}

/// Is there an integer point of `a` (counters, then the nodes of `s`) with every node
/// cardinality ≥ 1, their sum ≤ `cells`, every counter in range, and, for some
/// alternative in `any_of`, all its constraints? (`any_of` empty: no extra
/// constraint.) Unknown (Z3 gives up) counts as satisfiable.
pub fn satisfiable(
    a: &Affine,
    nv: usize,
    s: &Structure,
    cells: i128,
    any_of: &[Vec<Constraint>],
) -> bool {
    satisfiable_bounded(a, nv, &vec![(1, 1); s.len()], cells, any_of)
}

/// Is there an integer point of `a` whose first `nv` unknowns (counters) are in range
/// and whose others, `x_{nv+i}` with `bounds[i] = (lower, weight)`, are at least
/// `lower` with `Σ weight·x_{nv+i} ≤ budget`, and, for some alternative in `any_of`,
/// all its constraints? (`any_of` empty: no extra constraint.) Unknown (Z3 gives up)
/// counts as satisfiable. [`satisfiable`] is the case of node cardinalities (lower
/// bound and weight 1); the symbolic heaps' segment lengths weigh their objects' size.
pub fn satisfiable_bounded(
    a: &Affine,
    nv: usize,
    bounds: &[(i128, i128)],
    budget: i128,
    any_of: &[Vec<Constraint>],
) -> bool {
    if a.is_bottom() {
        return false;
    }
    let key = (a.clone(), nv, bounds.to_vec(), budget, any_of.to_vec());
    if let Some(r) = MEMO.with(|m| m.borrow().get(&key).copied()) {
        return r;
    }
    let r = check(a, nv, bounds, budget, any_of);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MEMO_CAP {
            m.clear();
        }
        m.insert(key, r);
    });
    r
}

fn check(
    a: &Affine,
    nv: usize,
    bounds: &[(i128, i128)],
    cells: i128,
    any_of: &[Vec<Constraint>],
) -> bool {
    let n = bounds.len();
    let xs: Vec<Int> = (0..nv + n)
        .map(|i| Int::new_const(format!("x{i}")))
        .collect();
    let fits = |k: &i128| i64::try_from(*k).is_ok();
    if !a.rows().iter().flatten().all(fits)
        || !bounds.iter().all(|(l, w)| fits(l) && fits(w))
        || !fits(&cells)
        || !any_of
            .iter()
            .flatten()
            .all(|c| c.form.0.iter().all(fits) && fits(&c.form.1))
    {
        return true; // not expressible here: unknown
    }
    let lit = |k: i128| Int::from_i64(k as i64);
    let sum = |coeffs: &[i128]| -> Int {
        let terms: Vec<Int> = coeffs
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(i, c)| &xs[i] * lit(*c))
            .collect();
        if terms.is_empty() {
            lit(0)
        } else {
            Int::add(&terms)
        }
    };
    SOLVER.with(|solver| {
        solver.push();
        let r = decide(solver, a, nv, bounds, cells, any_of, &xs, &sum, &lit);
        solver.pop(1);
        r
    })
}

/// The query of [`check`] on `solver` (inside its `push`).
#[allow(clippy::too_many_arguments)]
fn decide(
    solver: &Solver,
    a: &Affine,
    nv: usize,
    bounds: &[(i128, i128)],
    cells: i128,
    any_of: &[Vec<Constraint>],
    xs: &[Int],
    sum: &dyn Fn(&[i128]) -> Int,
    lit: &dyn Fn(i128) -> Int,
) -> bool {
    for r in a.rows() {
        solver.assert(sum(&r[..a.dims()]).eq(lit(r[a.dims()])));
    }
    for x in &xs[..nv] {
        solver.assert(x.ge(lit(MIN)));
        solver.assert(x.le(lit(MAX)));
    }
    let n = bounds.len();
    for (x, (lower, _)) in xs[nv..].iter().zip(bounds) {
        solver.assert(x.ge(lit(*lower)));
    }
    if n > 0 {
        let all: Vec<i128> = (0..nv + n)
            .map(|i| if i >= nv { bounds[i - nv].1 } else { 0 })
            .collect();
        solver.assert(sum(&all).le(lit(cells)));
    }
    if !any_of.is_empty() {
        let alts: Vec<z3::ast::Bool> = any_of
            .iter()
            .map(|conj| {
                let parts: Vec<z3::ast::Bool> = conj
                    .iter()
                    .map(|c| {
                        let mut coeffs = c.form.0.clone();
                        coeffs.resize(nv + n, 0);
                        let e = sum(&coeffs) + lit(c.form.1);
                        let z = lit(0);
                        match c.rel {
                            BinOp::Eq => e.eq(&z),
                            BinOp::Ne => e.eq(&z).not(),
                            BinOp::Lt => e.lt(&z),
                            BinOp::Le => e.le(&z),
                            BinOp::Gt => e.gt(&z),
                            _ => e.ge(&z),
                        }
                    })
                    .collect();
                z3::ast::Bool::and(&parts)
            })
            .collect();
        solver.assert(z3::ast::Bool::or(&alts));
    }
    crate::smt::limit::limited(CHECK_MS, || solver.check()) != SatResult::Unsat
}

/// May the linear form `e` leave the counter range in some point of `a`?
pub fn may_overflow(a: &Affine, nv: usize, s: &Structure, cells: i128, e: &Linear) -> bool {
    satisfiable(a, nv, s, cells, &out_of_range(e))
}

/// The alternatives "`e` below the counter range" and "`e` above it", for
/// [`satisfiable`] and [`satisfiable_bounded`].
pub fn out_of_range(e: &Linear) -> [Vec<Constraint>; 2] {
    let below = Constraint {
        form: (e.0.clone(), e.1 - MIN),
        rel: BinOp::Lt,
    };
    let above = Constraint {
        form: (e.0.clone(), e.1 - MAX),
        rel: BinOp::Gt,
    };
    [vec![below], vec![above]]
}

#[cfg(test)]
mod pool_tests {
    use super::*;

    #[test]
    fn the_pooled_solver_keeps_no_assertion_between_checks() {
        // one counter x0 = 5, no nodes: x0 == 7 is unsatisfiable, x0 == 5 is not, in
        // any order on the thread's one solver
        let mut a = Affine::top(1);
        a.add_eq(&[1], 5);
        let is = |k: i128| {
            vec![Constraint {
                form: (vec![1], -k),
                rel: BinOp::Eq,
            }]
        };
        assert!(!check(&a, 1, &[], 0, &[is(7)]));
        assert!(check(&a, 1, &[], 0, &[is(5)]));
        assert!(!check(&a, 1, &[], 0, &[is(7)]));
        assert!(check(&a, 1, &[], 0, &[]));
    }
}
