//! Predicate abstraction (BLAST-style, Cartesian) as a [`Cpa`].
//!
//! - A *predicate* ([`Pred`]) is a comparison over program variables kept as a
//!   [`crate::cfa::Expr`] (so certificates stay readable), restricted to a fragment with an
//!   exact, representation-independent meaning (see [`is_predicate`]): linear integer
//!   relations over integer variables (`x < 10`, `x - y <= 2`), and (dis)equalities of
//!   pointer variables with each other or with `NULL` (`p == q`, `p == NULL`).
//! - The *precision* ([`Precision`]) is an append-only predicate table plus the
//!   predicates tracked at each CFA location, in each function and globally.
//! - An abstract *state* ([`Cube`]) is a conjunction of predicate literals (Cartesian
//!   abstraction); the empty cube is `true`.
//! - `post` is the strongest postcondition of one step (encoded by
//!   [`crate::smt::encode::encode_path`] on the one-step path, so integer semantics are
//!   exactly those of the path formulas: signed overflow is not modelled, unsigned
//!   assignments wrap) followed by abstraction: every predicate tracked at the target
//!   location whose truth the successor decides becomes a literal (Z3). An unsatisfiable
//!   successor gives no state. Heap operations are not interpreted: the variable they
//!   assign becomes unconstrained (heap contents belong to the explicit and shape
//!   domains); a successful dereference of `p` implies `p != NULL`.
//! - `Enter` binds parameters (callee locals become unconstrained), `Leave` assigns the
//!   return value and forgets every callee variable.
//! - `covers(t, s)`: every literal of `t` is a literal of `s` (syntactic, sound for cubes,
//!   reflexive and transitive).
//!
//! Z3 `unknown` answers never decide a predicate and never remove a successor, so the
//! post stays sound when the solver gives up.

use crate::cfa::{BinOp, Expr, Node, Op, Program, Step, UnOp, VarId};
use crate::cpa::Cpa;
use crate::smt::encode::{encode_path, GuardKind, SymKind, SymbolTable};
use crate::smt::term::{Fun, Term};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use z3::ast::{Ast, Bool, Dynamic, Int};
use z3::SatResult;

/// Index of a predicate in [`Precision::preds`].
pub type PredId = u32;

/// A predicate: a comparison in the fragment of [`is_predicate`], in canonical form
/// (operator `==`, `<` or `<=`), with its rendering over variable names (informative;
/// the checker verifies it matches `expr`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pred {
    pub expr: Expr,
    pub text: String,
}

/// Where refinement adds a predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
pub enum PredScope {
    /// At the CFA location of the interpolant (BLAST's lazy abstraction).
    #[default]
    Location,
    /// At every location of the function containing that location.
    Function,
    /// Everywhere.
    Global,
}

/// The precision of predicate abstraction: an append-only predicate table and the
/// predicates tracked per location, per function and globally. Ids stay valid when
/// predicates are added, so states computed under an older precision keep their meaning.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Precision {
    pub preds: Vec<Pred>,
    /// CFA location index -> predicates tracked there.
    pub at_loc: BTreeMap<usize, BTreeSet<PredId>>,
    /// Function index -> predicates tracked at all its locations.
    pub in_func: BTreeMap<usize, BTreeSet<PredId>>,
    /// Predicates tracked everywhere.
    pub global: BTreeSet<PredId>,
}

impl Precision {
    /// The id of a predicate (canonical form), adding it to the table if new.
    pub fn intern(&mut self, prog: &Program, expr: Expr) -> PredId {
        if let Some(i) = self.preds.iter().position(|p| p.expr == expr) {
            return i as PredId;
        }
        let text = pred_text(prog, &expr);
        self.preds.push(Pred { expr, text });
        (self.preds.len() - 1) as PredId
    }

    /// Tracks predicate `expr` (any comparison in the fragment; it is canonicalised)
    /// at `loc` under `scope`. Returns true if the set tracked at `loc` grew.
    pub fn add(&mut self, prog: &Program, expr: &Expr, loc: Node, scope: PredScope) -> bool {
        let Some((base, _)) = canonical(expr) else {
            return false;
        };
        if !is_predicate(prog, &base) {
            return false;
        }
        let id = self.intern(prog, base);
        if self.tracked_at(prog, loc).contains(&id) {
            return false;
        }
        match scope {
            PredScope::Location => self.at_loc.entry(loc.index()).or_default().insert(id),
            PredScope::Function => self
                .in_func
                .entry(prog.graph[loc].func)
                .or_default()
                .insert(id),
            PredScope::Global => self.global.insert(id),
        }
    }

    /// The predicates tracked at `loc`, sorted (ids outside the table are skipped).
    pub fn tracked_at(&self, prog: &Program, loc: Node) -> Vec<PredId> {
        let mut out: BTreeSet<PredId> = self.global.clone();
        if let Some(s) = self.at_loc.get(&loc.index()) {
            out.extend(s);
        }
        if let Some(f) = prog.graph.node_weight(loc).map(|l| l.func) {
            if let Some(s) = self.in_func.get(&f) {
                out.extend(s);
            }
        }
        out.into_iter()
            .filter(|&i| (i as usize) < self.preds.len())
            .collect()
    }

    /// Number of (location, predicate) pairs, counting function and global
    /// predicates once.
    pub fn size(&self) -> usize {
        self.at_loc.values().map(|s| s.len()).sum::<usize>()
            + self.in_func.values().map(|s| s.len()).sum::<usize>()
            + self.global.len()
    }

    /// Checks a precision read from a certificate: every predicate is in the fragment,
    /// canonical, rendered as its text, and every id and location exists.
    pub fn validate(&self, prog: &Program) -> Result<(), String> {
        for (i, p) in self.preds.iter().enumerate() {
            if !is_predicate(prog, &p.expr) || canonical(&p.expr).is_none_or(|(_, pos)| !pos) {
                return Err(format!("predicate {i} is not a canonical predicate"));
            }
            if p.text != pred_text(prog, &p.expr) {
                return Err(format!("predicate {i}: text does not match the expression"));
            }
        }
        let n = self.preds.len() as PredId;
        let ids = self
            .at_loc
            .values()
            .chain(self.in_func.values())
            .chain(std::iter::once(&self.global));
        for s in ids {
            if s.iter().any(|&i| i >= n) {
                return Err("a predicate id is out of range".into());
            }
        }
        if self.at_loc.keys().any(|&l| l >= prog.graph.node_count()) {
            return Err("a location does not exist".into());
        }
        if self.in_func.keys().any(|&f| f >= prog.functions.len()) {
            return Err("a function does not exist".into());
        }
        Ok(())
    }
}

/// An abstract state: a conjunction of literals `(predicate, polarity)`, sorted by id
/// without duplicates. The empty cube is `true`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cube(pub Vec<(PredId, bool)>);

impl Cube {
    /// True if the literals are sorted by id and each id occurs once.
    pub fn is_normal(&self) -> bool {
        self.0.windows(2).all(|w| w[0].0 < w[1].0)
    }

    /// Renders the cube over variable names (`x < 10 && !(p == NULL)`).
    pub fn render(&self, prec: &Precision) -> String {
        if self.0.is_empty() {
            return "true".into();
        }
        let lits: Vec<String> = self
            .0
            .iter()
            .map(|&(i, pos)| {
                let t = prec
                    .preds
                    .get(i as usize)
                    .map(|p| p.text.as_str())
                    .unwrap_or("?");
                if pos {
                    t.to_string()
                } else {
                    format!("!({t})")
                }
            })
            .collect();
        lits.join(" && ")
    }
}

/// Renders a predicate expression over variable names, without outer parentheses.
pub fn pred_text(prog: &Program, e: &Expr) -> String {
    let s = prog.expr_str(e);
    match s.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        Some(t) if matches!(e, Expr::Binary(..)) => t.to_string(),
        _ => s,
    }
}

/// The canonical predicate of a comparison and the polarity of `e` relative to it:
/// `a != b` is `!(a == b)`, `a >= b` is `!(a < b)`, `a > b` is `!(a <= b)`.
pub fn canonical(e: &Expr) -> Option<(Expr, bool)> {
    let Expr::Binary(op, a, b) = e else {
        return None;
    };
    let (op, pos) = match op {
        BinOp::Eq => (BinOp::Eq, true),
        BinOp::Ne => (BinOp::Eq, false),
        BinOp::Lt => (BinOp::Lt, true),
        BinOp::Ge => (BinOp::Lt, false),
        BinOp::Le => (BinOp::Le, true),
        BinOp::Gt => (BinOp::Le, false),
        _ => return None,
    };
    Some((Expr::Binary(op, a.clone(), b.clone()), pos))
}

/// True if `e` is in the predicate fragment: a comparison of two linear integer terms
/// over integer variables (constants, `+`, `-`, unary `-`, multiplication by a
/// constant), or `==`/`!=` between pointer variables and `NULL` (at least one variable).
pub fn is_predicate(prog: &Program, e: &Expr) -> bool {
    let Expr::Binary(op, a, b) = e else {
        return false;
    };
    if !op.is_comparison() {
        return false;
    }
    let ptr_side = |x: &Expr| match x {
        Expr::Null => Some(false),
        Expr::Var(v) if prog.vars.get(*v).is_some_and(|v| v.ty.is_ptr()) => Some(true),
        _ => None,
    };
    match (ptr_side(a), ptr_side(b)) {
        (Some(x), Some(y)) => matches!(op, BinOp::Eq | BinOp::Ne) && (x || y),
        (Some(_), None) | (None, Some(_)) => false,
        (None, None) => is_linear(prog, a) && is_linear(prog, b),
    }
}

fn is_linear(prog: &Program, e: &Expr) -> bool {
    match e {
        Expr::Int(_) => true,
        Expr::Var(v) => prog.vars.get(*v).is_some_and(|v| v.ty.is_int()),
        Expr::Unary(UnOp::Neg, x) => is_linear(prog, x),
        Expr::Binary(BinOp::Add | BinOp::Sub, x, y) => is_linear(prog, x) && is_linear(prog, y),
        Expr::Binary(BinOp::Mul, x, y) => match (&**x, &**y) {
            (Expr::Int(_), t) | (t, Expr::Int(_)) => is_linear(prog, t),
            _ => false,
        },
        _ => false,
    }
}

/// Encodes a predicate-fragment expression over Z3 integers (`NULL` = 0), reading
/// variables through `var`. `None` outside the fragment.
fn encode_pred(e: &Expr, var: &mut dyn FnMut(VarId) -> Int) -> Option<Bool> {
    let Expr::Binary(op, a, b) = e else {
        return None;
    };
    let x = encode_lin(a, var)?;
    let y = encode_lin(b, var)?;
    Some(match op {
        BinOp::Eq => x.eq(&y),
        BinOp::Ne => x.eq(&y).not(),
        BinOp::Lt => x.lt(&y),
        BinOp::Le => x.le(&y),
        BinOp::Gt => x.gt(&y),
        BinOp::Ge => x.ge(&y),
        _ => return None,
    })
}

fn encode_lin(e: &Expr, var: &mut dyn FnMut(VarId) -> Int) -> Option<Int> {
    Some(match e {
        Expr::Int(n) => Int::from_i64(*n),
        Expr::Null => Int::from_i64(0),
        Expr::Var(v) => var(*v),
        Expr::Unary(UnOp::Neg, x) => -encode_lin(x, var)?,
        Expr::Binary(BinOp::Add, x, y) => encode_lin(x, var)? + encode_lin(y, var)?,
        Expr::Binary(BinOp::Sub, x, y) => encode_lin(x, var)? - encode_lin(y, var)?,
        Expr::Binary(BinOp::Mul, x, y) => encode_lin(x, var)? * encode_lin(y, var)?,
        _ => return None,
    })
}

/// Converts a theory atom of an interpolant (see [`crate::smt::atoms::theory_atoms`])
/// into a predicate over program variables, if it is in the fragment: variable
/// versions become the variable, `0` compared with a pointer becomes `NULL`. Atoms over
/// heap arrays, ghost state, uninterpreted functions, `div`/`mod` or non-NULL pointer
/// constants give `None`.
pub fn atom_to_pred(prog: &Program, syms: &SymbolTable, t: &Term) -> Option<Expr> {
    let Term::App(f, args) = t else {
        return None;
    };
    let op = match f {
        Fun::Eq => BinOp::Eq,
        Fun::Le => BinOp::Le,
        Fun::Lt => BinOp::Lt,
        Fun::Ge => BinOp::Ge,
        Fun::Gt => BinOp::Gt,
        _ => return None,
    };
    if args.len() != 2 {
        return None;
    }
    let var_of = |t: &Term| match t {
        Term::Sym(s) => match syms.syms.get(*s as usize).map(|i| &i.kind) {
            Some(SymKind::Var { var, .. }) => Some(*var),
            _ => None,
        },
        _ => None,
    };
    let is_ptr = |t: &Term| var_of(t).is_some_and(|v| prog.vars[v].ty.is_ptr());
    let e = if is_ptr(&args[0]) || is_ptr(&args[1]) {
        let side = |t: &Term| match t {
            Term::Num(0) => Some(Expr::Null),
            _ if is_ptr(t) => var_of(t).map(Expr::Var),
            _ => None,
        };
        Expr::bin(op, side(&args[0])?, side(&args[1])?)
    } else {
        Expr::bin(
            op,
            term_lin(prog, &var_of, &args[0])?,
            term_lin(prog, &var_of, &args[1])?,
        )
    };
    if !is_predicate(prog, &e) {
        return None;
    }
    let mut vs = Vec::new();
    e.vars(&mut vs);
    if vs.is_empty() {
        return None;
    }
    Some(e)
}

fn term_lin(prog: &Program, var_of: &dyn Fn(&Term) -> Option<VarId>, t: &Term) -> Option<Expr> {
    match t {
        Term::Num(n) => i64::try_from(*n).ok().map(Expr::Int),
        Term::Sym(_) => {
            let v = var_of(t)?;
            prog.vars[v].ty.is_int().then_some(Expr::Var(v))
        }
        Term::App(Fun::Add, a) | Term::App(Fun::Sub, a) | Term::App(Fun::Mul, a)
            if !a.is_empty() =>
        {
            let op = match t {
                Term::App(Fun::Add, _) => BinOp::Add,
                Term::App(Fun::Sub, _) => BinOp::Sub,
                _ => BinOp::Mul,
            };
            let mut acc = term_lin(prog, var_of, &a[0])?;
            for x in &a[1..] {
                acc = Expr::bin(op, acc, term_lin(prog, var_of, x)?);
            }
            is_linear(prog, &acc).then_some(acc)
        }
        Term::App(Fun::Neg, a) if a.len() == 1 => Some(Expr::Unary(
            UnOp::Neg,
            Box::new(term_lin(prog, var_of, &a[0])?),
        )),
        _ => None,
    }
}

/// The width of the signed integer variable defined by SSA symbol `sym` if its new
/// value may need two's-complement wrapping (not for assignments whose source is
/// statically in range).
fn wrap_target(prog: &Program, syms: &SymbolTable, sym: &Dynamic, step: Step) -> Option<u8> {
    let id = *syms.by_name.get(&sym.decl().name())?;
    let SymKind::Var { var, .. } = syms.syms.get(id as usize)?.kind else {
        return None;
    };
    let ty = &prog.vars[var].ty;
    let crate::cfa::Ty::Int { bits, signed: true } = *ty else {
        return None;
    };
    if bits < 2 {
        return None;
    }
    let (lo, hi) = ty.int_range()?;
    if let Step::Edge(e) = step {
        if let Op::Assign { src, .. } = &prog.graph[e].op {
            let fits = |r: Option<(i128, i128)>| r.is_some_and(|(a, b)| a >= lo && b <= hi);
            let in_range = match src {
                Expr::Int(n) => fits(Some((*n as i128, *n as i128))),
                Expr::Var(v) => fits(prog.vars[*v].ty.int_range()),
                Expr::Cast(t, _) => fits(t.int_range()),
                Expr::Binary(op, _, _) if op.is_comparison() => true,
                Expr::Unary(UnOp::Not, _) => true,
                _ => false,
            };
            if in_range {
                return None;
            }
        }
    }
    Some(bits)
}

/// An over-approximation of the two's-complement wrap of `v` to `bits` bits (signed):
/// `v` if it is in range, otherwise some in-range value (cheaper for Z3 than `mod`).
fn wrap_signed(bits: u8, v: Int, fresh: Int) -> Int {
    let lo = Int::from_i128(-(1i128 << (bits - 1)));
    let hi = Int::from_i128((1i128 << (bits - 1)) - 1);
    let in_range = Bool::and(&[v.ge(&lo), v.le(&hi)]);
    let other = Bool::and(&[fresh.ge(&lo), fresh.le(&hi)]);
    in_range.ite(&v, &other.ite(&fresh, &lo))
}

/// Statistics of the abstract post (time and number of Z3 queries).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PostStats {
    pub posts: u64,
    pub cache_hits: u64,
    pub z3_queries: u64,
    /// Checks not made because a model of an earlier check of the same post already
    /// refuted them.
    pub z3_checks_skipped: u64,
    pub z3_time: Duration,
}

type CacheKey = (Cube, Step, Vec<PredId>);

/// The predicate-abstraction CPA. Holds a cache of abstract posts (valid for one
/// append-only predicate table) and statistics; create a fresh one to check a
/// certificate independently.
#[derive(Debug, Default)]
pub struct PredAbs {
    /// Z3 timeout per query in milliseconds (0 = none). A timeout decides nothing.
    pub timeout_ms: u32,
    cache: RefCell<FxHashMap<CacheKey, Option<Cube>>>,
    stats: RefCell<PostStats>,
    deadline: Cell<Option<Instant>>,
    /// One solver for all posts: a fresh solver per post paid for Z3's parameter
    /// validation (`set_params`) each time. Each post runs inside a `push`/`pop` scope
    /// ([`ScopedSolver`]), so no assertion outlives its post; each check has its own
    /// limit ([`PredAbs::check`]).
    pooled: RefCell<Option<z3::Solver>>,
}

/// The pooled solver of a [`PredAbs`] inside one `push`; `pop` on drop.
struct ScopedSolver<'a>(std::cell::RefMut<'a, Option<z3::Solver>>);

impl std::ops::Deref for ScopedSolver<'_> {
    type Target = z3::Solver;
    fn deref(&self) -> &z3::Solver {
        // constructed only with `Some` (see `PredAbs::solver`)
        match &*self.0 {
            Some(s) => s,
            None => unreachable!("a ScopedSolver holds a solver"),
        }
    }
}

impl Drop for ScopedSolver<'_> {
    fn drop(&mut self) {
        if let Some(s) = &*self.0 {
            s.pop(1);
        }
    }
}

impl PredAbs {
    /// A CPA with the given Z3 timeout per query.
    pub fn new(timeout_ms: u32) -> PredAbs {
        PredAbs {
            timeout_ms,
            ..Default::default()
        }
    }

    /// Statistics so far.
    pub fn stats(&self) -> PostStats {
        self.stats.borrow().clone()
    }

    /// Z3 queries started after `deadline` run with a 1 ms timeout (they decide
    /// nothing, which is sound), so a deadline is not overrun by abstraction.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        self.deadline.set(deadline);
    }

    /// The pooled solver, in a fresh `push` scope.
    fn solver(&self) -> ScopedSolver<'_> {
        let mut pooled = self.pooled.borrow_mut();
        pooled.get_or_insert_with(z3::Solver::new).push();
        ScopedSolver(pooled)
    }

    /// A check limited to the per-query timeout and the time left before the deadline
    /// (at least 1 ms: a query past the deadline decides next to nothing, which is
    /// sound), through [`crate::smt::limit`] (Z3's own `timeout` costs a thread hand-off
    /// per check).
    fn check(&self, s: &z3::Solver) -> SatResult {
        let mut ms = self.timeout_ms;
        if let Some(d) = self.deadline.get() {
            let left = d.saturating_duration_since(Instant::now()).as_millis();
            let left = u32::try_from(left).unwrap_or(u32::MAX).max(1);
            if ms == 0 || left < ms {
                ms = left;
            }
        }
        let t = Instant::now();
        let r = crate::smt::limit::limited(ms, || s.check());
        let mut st = self.stats.borrow_mut();
        st.z3_queries += 1;
        st.z3_time += t.elapsed();
        r
    }

    /// Checks `solver`'s assertions with `assumption` (in a `push`/`pop` scope), and
    /// records in `seen` the model of a `sat` answer.
    fn check_assuming(
        &self,
        solver: &z3::Solver,
        assumption: &Bool,
        seen: &mut Seen,
        preds: &[(PredId, Bool)],
    ) -> SatResult {
        solver.push();
        solver.assert(assumption);
        let r = self.check(solver);
        if r == SatResult::Sat {
            seen.record(solver, preds);
        }
        solver.pop(1);
        r
    }

    fn compute_post(
        &self,
        prog: &Program,
        s: &Cube,
        step: Step,
        prec: &Precision,
        targets: &[PredId],
    ) -> Option<Cube> {
        let pre = |v: VarId| pre_sym(prog, v);
        let StepConstraint {
            conj,
            post_sym,
            blocking,
        } = step_constraint(prog, step);
        let mut range_of: BTreeSet<VarId> = BTreeSet::new();
        let mut post_var = |v: VarId| {
            post_sym.get(&v).cloned().unwrap_or_else(|| {
                range_of.insert(v);
                pre(v)
            })
        };
        // Literals that survive syntactically: their variables are unchanged.
        let mut out: Vec<(PredId, bool)> = Vec::new();
        let mut undecided: Vec<(PredId, Bool)> = Vec::new();
        for &id in targets {
            let Some(p) = prec.preds.get(id as usize) else {
                continue;
            };
            let mut vs = Vec::new();
            p.expr.vars(&mut vs);
            let unchanged = vs.iter().all(|v| !post_sym.contains_key(v));
            if unchanged {
                if let Ok(k) = s.0.binary_search_by_key(&id, |l| l.0) {
                    out.push(s.0[k]);
                    continue;
                }
            }
            if let Some(b) = encode_pred(&p.expr, &mut post_var) {
                undecided.push((id, b));
            }
        }
        if undecided.is_empty() && !blocking {
            out.sort_unstable();
            return Some(Cube(out));
        }
        let solver = self.solver();
        let solver = &*solver;
        let mut pre_var = |v: VarId| {
            range_of.insert(v);
            pre(v)
        };
        for &(id, pos) in &s.0 {
            let Some(p) = prec.preds.get(id as usize) else {
                continue;
            };
            if let Some(b) = encode_pred(&p.expr, &mut pre_var) {
                solver.assert(if pos { b } else { b.not() });
            }
        }
        for v in range_of {
            if let Some((lo, hi)) = prog.vars[v].ty.int_range() {
                let x = pre(v);
                solver.assert(x.ge(Int::from_i128(lo)));
                solver.assert(x.le(Int::from_i128(hi)));
            }
        }
        for c in &conj {
            solver.assert(c);
        }
        // What the models of the checks so far show each undecided predicate can be: a
        // model where it is true (false) means "always false" ("always true") is
        // refuted, and that check is skipped. Only an `unsat` answer decides.
        let mut seen = Seen::new(undecided.len());
        if blocking {
            match self.check(solver) {
                SatResult::Unsat => return None,
                SatResult::Sat => seen.record(solver, &undecided),
                SatResult::Unknown => {}
            }
        }
        let mut skipped = 0;
        for (i, (id, b)) in undecided.iter().enumerate() {
            // is `b` implied (`¬b` unsat)? else, is `¬b` implied (`b` unsat)?
            for implied in [true, false] {
                let refuted = if implied {
                    seen.can_be_false[i]
                } else {
                    seen.can_be_true[i]
                };
                if refuted {
                    skipped += 1;
                    continue;
                }
                let assumption = if implied { b.not() } else { b.clone() };
                if self.check_assuming(solver, &assumption, &mut seen, &undecided)
                    == SatResult::Unsat
                {
                    out.push((*id, implied));
                    break;
                }
            }
        }
        self.stats.borrow_mut().z3_checks_skipped += skipped;
        out.sort_unstable();
        Some(Cube(out))
    }
}

/// For the predicates of one abstract post: which values a model found so far gives
/// them (a model satisfies the pre-state, the step and one check's assumption).
struct Seen {
    can_be_true: Vec<bool>,
    can_be_false: Vec<bool>,
    read: bool,
}

impl Seen {
    fn new(n: usize) -> Seen {
        Seen {
            can_be_true: vec![false; n],
            can_be_false: vec![false; n],
            read: false,
        }
    }

    /// Reads the values of `preds` in the model of `solver`'s last (`sat`) check; a
    /// missing model or a value Z3 cannot give records nothing. Only the first model
    /// of a post is read: reading one costs about a third of a check (measured on
    /// seeds/two_queues: reading every model cost more than the checks it saved).
    fn record(&mut self, solver: &z3::Solver, preds: &[(PredId, Bool)]) {
        if std::mem::replace(&mut self.read, true) {
            return;
        }
        let Some(m) = solver.get_model() else {
            return;
        };
        for (i, (_, b)) in preds.iter().enumerate() {
            match m.eval(b, true).and_then(|v| v.as_bool()) {
                Some(true) => self.can_be_true[i] = true,
                Some(false) => self.can_be_false[i] = true,
                None => {}
            }
        }
    }
}

/// What one step does, for the abstract post: its constraint over the pre-state
/// (`x@0`, [`pre_sym`]) and post-state symbols, the post symbol of each variable it
/// changes, and whether the step can block (guards other than value ranges).
struct StepConstraint {
    conj: Vec<Bool>,
    post_sym: FxHashMap<VarId, Int>,
    blocking: bool,
}

/// The symbol of `v`'s value before the step.
fn pre_sym(prog: &Program, v: VarId) -> Int {
    Int::new_const(format!("{}@0", prog.vars[v].name))
}

/// The constraint of `step` ([`StepConstraint`]): heap operations only as far as
/// the pointers they dereference are not NULL (the rest is heap state), other steps
/// as their path encoding; what a step assigns without a symbol is havocked.
fn step_constraint(prog: &Program, step: Step) -> StepConstraint {
    let mut sc = StepConstraint {
        conj: Vec::new(),
        post_sym: FxHashMap::default(),
        blocking: false,
    };
    let mut havoc: Vec<VarId> = Vec::new();
    let edge = prog.step_edge(step);
    let heap_op = matches!(step, Step::Edge(_))
        && matches!(
            edge.op,
            Op::Load { .. }
                | Op::Store { .. }
                | Op::FieldAddr { .. }
                | Op::LoadIndirect { .. }
                | Op::StoreIndirect { .. }
                | Op::Alloc { .. }
                | Op::Free { .. }
                | Op::AssumeInvalid { .. }
        );
    if heap_op {
        heap_step(prog, &edge.op, &mut sc, &mut havoc);
        sc.blocking = !sc.conj.is_empty();
    } else {
        encoded_step(prog, step, &edge.op, &mut sc, &mut havoc);
        frame_havoc(prog, step, &sc.post_sym, &mut havoc);
    }
    for v in havoc {
        sc.post_sym
            .insert(v, Int::new_const(format!("{}@havoc", prog.vars[v].name)));
    }
    sc
}

/// A heap operation's constraint: the dereferenced pointer is not NULL; loads havoc
/// their target, `&p->f` and allocations get a fresh (non-NULL where it cannot fail)
/// value.
fn heap_step(prog: &Program, op: &Op, sc: &mut StepConstraint, havoc: &mut Vec<VarId>) {
    let nonnull = |v: VarId| pre_sym(prog, v).eq(Int::from_i64(0)).not();
    match op {
        Op::Load { dst, ptr, .. } => {
            sc.conj.push(nonnull(*ptr));
            havoc.push(*dst);
        }
        // an invalid pointer is not NULL either (the rest is heap state)
        Op::Store { ptr, .. } | Op::StoreIndirect { ptr, .. } | Op::AssumeInvalid { ptr, .. } => {
            sc.conj.push(nonnull(*ptr))
        }
        Op::LoadIndirect { dst, ptr } => {
            sc.conj.push(nonnull(*ptr));
            havoc.push(*dst);
        }
        Op::FieldAddr { dst, ptr, .. } => {
            sc.conj.push(nonnull(*ptr));
            let fresh = Int::new_const(format!("{}@post", prog.vars[*dst].name));
            sc.conj.push(fresh.eq(Int::from_i64(0)).not());
            sc.post_sym.insert(*dst, fresh);
        }
        Op::Alloc { dst, kind, .. } => {
            let fresh = Int::new_const(format!("{}@post", prog.vars[*dst].name));
            let never_null =
                matches!(kind, crate::cfa::AllocKind::Stack) || prog.malloc_never_fails;
            if never_null {
                sc.conj.push(fresh.eq(Int::from_i64(0)).not());
            }
            sc.post_sym.insert(*dst, fresh);
        }
        _ => {}
    }
}

/// A non-heap step's constraint from its path encoding (with the wrapping of signed
/// conversions); a step the encoding does not represent havocs what it assigns.
fn encoded_step(
    prog: &Program,
    step: Step,
    op: &Op,
    sc: &mut StepConstraint,
    havoc: &mut Vec<VarId>,
) {
    match encode_path(prog, &[step]) {
        Ok(enc) => {
            let mut best: FxHashMap<VarId, (u32, usize)> = FxHashMap::default();
            for (i, info) in enc.symbols.syms.iter().enumerate() {
                if let SymKind::Var { var, version } = info.kind {
                    if version > 0 && best.get(&var).is_none_or(|(v, _)| version > *v) {
                        best.insert(var, (version, i));
                    }
                }
            }
            for (var, (_, i)) in best {
                if let Some(c) = enc.consts[i].as_int() {
                    sc.post_sym.insert(var, c);
                }
            }
            for st in &enc.steps {
                for (k, g) in &st.guards {
                    if *k != GuardKind::Range {
                        sc.blocking = true;
                    }
                    sc.conj.push(g.clone());
                }
                for (a, b) in &st.defs {
                    sc.conj
                        .push(match wrap_target(prog, &enc.symbols, a, step) {
                            // The interpreter (and C on every supported target)
                            // wraps on conversion to a signed type; the path
                            // encoding does not. Wrap, so that SAFE also holds for
                            // runs that overflow.
                            Some(bits) => match b.as_int() {
                                Some(t) => {
                                    let fresh = Int::new_const(format!("{}!wrap", a.decl().name()));
                                    a.eq(Dynamic::from_ast(&wrap_signed(bits, t, fresh)))
                                }
                                None => a.eq(b),
                            },
                            None => a.eq(b),
                        });
                }
            }
        }
        Err(e) => {
            // Not representable: forget what the step may assign, keep the rest.
            tracing::debug!("predabs: step not encoded ({e}); havocking its targets");
            match op {
                Op::Assign { dst, .. } | Op::Nondet { dst } => havoc.push(*dst),
                Op::Call { callee, ret, .. } => {
                    let f = &prog.functions[*callee];
                    havoc.extend(f.params.iter().chain(&f.locals).chain(&f.ret));
                    havoc.extend(ret.iter());
                }
                _ => {}
            }
        }
    }
}

/// The variables a call or return leaves undefined: the callee's frame after it
/// returns (but the return target), its locals on entry.
fn frame_havoc(
    prog: &Program,
    step: Step,
    post_sym: &FxHashMap<VarId, Int>,
    havoc: &mut Vec<VarId>,
) {
    match step {
        Step::Leave(e) => {
            if let Op::Call { callee, ret, .. } = &prog.graph[e].op {
                let f = &prog.functions[*callee];
                for v in f.params.iter().chain(&f.locals).chain(&f.ret) {
                    if Some(*v) != *ret {
                        havoc.push(*v);
                    }
                }
            }
        }
        Step::Enter(e) => {
            if let Op::Call { callee, .. } = &prog.graph[e].op {
                let f = &prog.functions[*callee];
                for v in f.locals.iter().chain(&f.ret) {
                    if !post_sym.contains_key(v) {
                        havoc.push(*v);
                    }
                }
            }
        }
        Step::Edge(_) => {}
    }
}

impl Cpa for PredAbs {
    type State = Cube;
    type Prec = Precision;

    fn name(&self) -> &'static str {
        "predabs"
    }

    fn initial(&self, _: &Program, _: &Precision) -> Cube {
        Cube::default()
    }

    fn post(&self, prog: &Program, s: &Cube, step: Step, to: Node, prec: &Precision) -> Vec<Cube> {
        let targets = prec.tracked_at(prog, to);
        self.stats.borrow_mut().posts += 1;
        let key = (s.clone(), step, targets);
        if let Some(r) = self.cache.borrow().get(&key) {
            self.stats.borrow_mut().cache_hits += 1;
            return r.iter().cloned().collect();
        }
        let r = self.compute_post(prog, s, step, prec, &key.2);
        self.cache.borrow_mut().insert(key, r.clone());
        r.into_iter().collect()
    }

    fn covers(&self, t: &Cube, s: &Cube) -> bool {
        t.0.iter().all(|l| s.0.binary_search(l).is_ok())
    }
}

#[cfg(test)]
mod tests;
