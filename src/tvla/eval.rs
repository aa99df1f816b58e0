//! Three-valued evaluation of FO(TC) formulas on [`Structure`]s.
//!
//! Formulas are first compiled against a [`Vocab`]: predicate symbols become table
//! indices and logical variables become slots of an assignment vector. A predicate the
//! vocabulary does not know (or an arity mismatch, or a free variable the caller did
//! not bind) compiles to the constant 1/2, which is always sound.
//!
//! Semantics (Kleene, as in TVLA): `&` is min, `|` is max, `!` swaps 0 and 1, `E` is the
//! max over all nodes, `A` the min; `v == w` is 0 on distinct nodes, 1 on one
//! non-summary node and 1/2 on one summary node; `TC(u, w: f)(a, b)` is the maximum over
//! paths of length >= 1 of the minimum of the edge values (computed by a max-min
//! Floyd–Warshall and memoised per assignment of the body's other free variables).

use super::formula::{Formula, Kleene, LVar};
use super::structure::{Structure, Vocab};
use rustc_hash::FxHashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Slot of a logical variable in an assignment vector.
pub type Slot = usize;

static TC_IDS: AtomicUsize = AtomicUsize::new(0);

/// The id of a closed closure body (only `u` = slot `base`, `w` = `base + 1` and the
/// body's own quantified slots, all `>= base`): equal bodies up to that shift get equal
/// ids. Vocabulary indices are part of the key, so bodies compiled against different
/// vocabularies only share an id when they read the same predicate indices, which is
/// harmless: an [`Evaluator`] works on one structure, hence one vocabulary.
fn shared_tc_id(body: &CFormula, base: Slot) -> usize {
    static IDS: std::sync::OnceLock<std::sync::Mutex<FxHashMap<String, usize>>> =
        std::sync::OnceLock::new();
    let key = format!("{:?}", shift_slots(body, base));
    let mut ids = IDS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    *ids.entry(key)
        .or_insert_with(|| TC_IDS.fetch_add(1, Ordering::Relaxed))
}

/// `f` with every slot `s` replaced by `s - base` (saturating).
fn shift_slots(f: &CFormula, base: Slot) -> CFormula {
    let sh = |s: &Slot| s.saturating_sub(base);
    let bx = |g: &CFormula| Box::new(shift_slots(g, base));
    match f {
        CFormula::Const(k) => CFormula::Const(*k),
        CFormula::P0(i) => CFormula::P0(*i),
        CFormula::P1(i, a) => CFormula::P1(*i, sh(a)),
        CFormula::P2(i, a, b) => CFormula::P2(*i, sh(a), sh(b)),
        CFormula::Eq(a, b) => CFormula::Eq(sh(a), sh(b)),
        CFormula::Not(g) => CFormula::Not(bx(g)),
        CFormula::And(gs) => CFormula::And(gs.iter().map(|g| shift_slots(g, base)).collect()),
        CFormula::Or(gs) => CFormula::Or(gs.iter().map(|g| shift_slots(g, base)).collect()),
        CFormula::Implies(a, b) => CFormula::Implies(bx(a), bx(b)),
        CFormula::Iff(a, b) => CFormula::Iff(bx(a), bx(b)),
        CFormula::Exists(v, g) => CFormula::Exists(sh(v), bx(g)),
        CFormula::Forall(v, g) => CFormula::Forall(sh(v), bx(g)),
        CFormula::Tc {
            id,
            u,
            w,
            body,
            from,
            to,
            deps,
        } => CFormula::Tc {
            id: *id,
            u: sh(u),
            w: sh(w),
            body: bx(body),
            from: sh(from),
            to: sh(to),
            deps: deps.iter().map(sh).collect(),
        },
    }
}

/// A formula compiled against a vocabulary (see the module documentation).
#[derive(Clone, Debug)]
pub enum CFormula {
    Const(Kleene),
    P0(usize),
    P1(usize, Slot),
    P2(usize, Slot, Slot),
    Eq(Slot, Slot),
    Not(Box<CFormula>),
    And(Vec<CFormula>),
    Or(Vec<CFormula>),
    Implies(Box<CFormula>, Box<CFormula>),
    Iff(Box<CFormula>, Box<CFormula>),
    Exists(Slot, Box<CFormula>),
    Forall(Slot, Box<CFormula>),
    Tc {
        id: usize,
        u: Slot,
        w: Slot,
        body: Box<CFormula>,
        from: Slot,
        to: Slot,
        /// Slots free in `body` other than `u`, `w` (the memoisation key).
        deps: Vec<Slot>,
    },
}

impl CFormula {
    /// A unary predicate that must hold (1 or 1/2) at some node for `self` to be
    /// anything but 0: where it is 0 at every node, `self` evaluates to 0 under every
    /// assignment (a conjunct `p(v)`, under `∃`, `∧`, a transitive closure of such a
    /// body, or the same predicate in every disjunct). `None` when there is none.
    pub fn needs_unary(&self) -> Option<usize> {
        match self {
            CFormula::P1(i, _) => Some(*i),
            CFormula::And(gs) => gs.iter().find_map(CFormula::needs_unary),
            CFormula::Or(gs) => {
                let first = gs.first()?.needs_unary()?;
                gs.iter()
                    .all(|g| g.needs_unary() == Some(first))
                    .then_some(first)
            }
            CFormula::Exists(_, g) | CFormula::Tc { body: g, .. } => g.needs_unary(),
            _ => None,
        }
    }
}

/// A compiled formula together with its number of slots; the first
/// `free.len()` slots are the free variables given to [`Compiled::new`].
#[derive(Clone, Debug)]
pub struct Compiled {
    pub f: CFormula,
    pub slots: usize,
    pub free: Vec<LVar>,
}

impl Compiled {
    /// Compiles `f` against `voc`, binding the free variables `free` to slots 0.. in order.
    pub fn new(voc: &Vocab, f: &Formula, free: &[&str]) -> Compiled {
        let mut scope: Vec<(LVar, Slot)> = free
            .iter()
            .enumerate()
            .map(|(i, v)| (v.to_string(), i))
            .collect();
        let mut next = free.len();
        let f = compile(voc, f, &mut scope, &mut next);
        Compiled {
            f,
            slots: next.max(1),
            free: free.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Evaluates the formula on `s` with the free variables bound to `args`.
    pub fn eval(&self, ev: &mut Evaluator<'_>, args: &[usize]) -> Kleene {
        // the assignment on the stack for the usual handful of slots (this runs for
        // every tuple of every definition in update and coerce)
        const STACK_SLOTS: usize = 16;
        let mut buf = [0usize; STACK_SLOTS];
        let mut heap;
        let env: &mut [usize] = if self.slots <= STACK_SLOTS {
            &mut buf[..self.slots]
        } else {
            heap = vec![0usize; self.slots];
            &mut heap
        };
        env[..args.len()].copy_from_slice(args);
        ev.eval(&self.f, env)
    }
}

fn lookup(scope: &[(LVar, Slot)], v: &str) -> Option<Slot> {
    scope.iter().rev().find(|(n, _)| n == v).map(|(_, s)| *s)
}

fn compile(voc: &Vocab, f: &Formula, scope: &mut Vec<(LVar, Slot)>, next: &mut Slot) -> CFormula {
    let half = CFormula::Const(Kleene::Half);
    match f {
        Formula::Const(k) => CFormula::Const(*k),
        Formula::Pred(p, args) => {
            let Some((arity, idx)) = voc.lookup(p) else {
                tracing::debug!("predicate {p} not in vocabulary: evaluates to 1/2");
                return half;
            };
            if args.len() != arity as usize {
                tracing::warn!("predicate {p} applied to {} arguments", args.len());
                return half;
            }
            let slots: Option<Vec<Slot>> = args.iter().map(|a| lookup(scope, a)).collect();
            let Some(slots) = slots else {
                tracing::warn!("unbound variable in {f}");
                return half;
            };
            match arity {
                0 => CFormula::P0(idx),
                1 => CFormula::P1(idx, slots[0]),
                _ => CFormula::P2(idx, slots[0], slots[1]),
            }
        }
        Formula::Eq(a, b) => match (lookup(scope, a), lookup(scope, b)) {
            (Some(a), Some(b)) => CFormula::Eq(a, b),
            _ => half,
        },
        Formula::Not(g) => CFormula::Not(Box::new(compile(voc, g, scope, next))),
        Formula::And(gs) => {
            CFormula::And(gs.iter().map(|g| compile(voc, g, scope, next)).collect())
        }
        Formula::Or(gs) => CFormula::Or(gs.iter().map(|g| compile(voc, g, scope, next)).collect()),
        Formula::Implies(a, b) => CFormula::Implies(
            Box::new(compile(voc, a, scope, next)),
            Box::new(compile(voc, b, scope, next)),
        ),
        Formula::Iff(a, b) => CFormula::Iff(
            Box::new(compile(voc, a, scope, next)),
            Box::new(compile(voc, b, scope, next)),
        ),
        Formula::Exists(v, g) | Formula::Forall(v, g) => {
            let slot = *next;
            *next += 1;
            scope.push((v.clone(), slot));
            let body = Box::new(compile(voc, g, scope, next));
            scope.pop();
            if matches!(f, Formula::Exists(..)) {
                CFormula::Exists(slot, body)
            } else {
                CFormula::Forall(slot, body)
            }
        }
        Formula::TC {
            u,
            w,
            body,
            from,
            to,
        } => {
            let (Some(from), Some(to)) = (lookup(scope, from), lookup(scope, to)) else {
                return half;
            };
            let su = *next;
            let sw = *next + 1;
            *next += 2;
            // slots of the variables free in the body other than u, w
            let outer: Vec<Slot> = body
                .free_vars()
                .iter()
                .filter(|v| *v != u && *v != w)
                .filter_map(|v| lookup(scope, v))
                .collect();
            scope.push((u.clone(), su));
            scope.push((w.clone(), sw));
            let b = compile(voc, body, scope, next);
            scope.pop();
            scope.pop();
            let mut deps = outer;
            deps.sort_unstable();
            deps.dedup();
            // closures with the same body (r[x] for every x walks the same `next`
            // edges) share one id, so an evaluator computes them once
            let id = if deps.is_empty() {
                shared_tc_id(&b, su)
            } else {
                TC_IDS.fetch_add(1, Ordering::Relaxed)
            };
            CFormula::Tc {
                id,
                u: su,
                w: sw,
                body: Box::new(b),
                from,
                to,
                deps,
            }
        }
    }
}

/// Evaluates compiled formulas on one structure; memoises transitive closures, so
/// create a new evaluator whenever the structure changes.
pub struct Evaluator<'a> {
    s: &'a Structure,
    /// Closures by formula id and the values of its dependencies (at most
    /// [`TC_MEMO_DEPS`]; unused places `usize::MAX`).
    tc: FxHashMap<(usize, [usize; TC_MEMO_DEPS]), Rc<Vec<Kleene>>>,
}

/// A transitive closure with at most this many dependencies is memoised (the key lives
/// inline: no allocation per evaluation); with more it is computed every time.
const TC_MEMO_DEPS: usize = 4;

impl<'a> Evaluator<'a> {
    /// An evaluator for `s`.
    pub fn new(s: &'a Structure) -> Evaluator<'a> {
        Evaluator {
            s,
            tc: FxHashMap::default(),
        }
    }

    /// Evaluates `f` under the assignment `env` (indexed by slot).
    pub fn eval(&mut self, f: &CFormula, env: &mut [usize]) -> Kleene {
        use Kleene::*;
        let s = self.s;
        match f {
            CFormula::Const(k) => *k,
            CFormula::P0(i) => s.get0(*i),
            CFormula::P1(i, a) => s.get1(*i, env[*a]),
            CFormula::P2(i, a, b) => s.get2(*i, env[*a], env[*b]),
            CFormula::Eq(a, b) => {
                if env[*a] != env[*b] {
                    False
                } else if s.is_summary(env[*a]) {
                    Half
                } else {
                    True
                }
            }
            CFormula::Not(g) => self.eval(g, env).negate(),
            CFormula::And(gs) => {
                let mut acc = True;
                for g in gs {
                    acc = acc.and(self.eval(g, env));
                    if acc == False {
                        break;
                    }
                }
                acc
            }
            CFormula::Or(gs) => {
                let mut acc = False;
                for g in gs {
                    acc = acc.or(self.eval(g, env));
                    if acc == True {
                        break;
                    }
                }
                acc
            }
            CFormula::Implies(a, b) => {
                let x = self.eval(a, env).negate();
                if x == True {
                    return True;
                }
                x.or(self.eval(b, env))
            }
            CFormula::Iff(a, b) => {
                let x = self.eval(a, env);
                let y = self.eval(b, env);
                match (x, y) {
                    (Half, _) | (_, Half) => Half,
                    _ => Kleene::from_bool(x == y),
                }
            }
            CFormula::Exists(v, g) => {
                let mut acc = False;
                for n in 0..s.len() {
                    env[*v] = n;
                    acc = acc.or(self.eval(g, env));
                    if acc == True {
                        break;
                    }
                }
                acc
            }
            CFormula::Forall(v, g) => {
                let mut acc = True;
                for n in 0..s.len() {
                    env[*v] = n;
                    acc = acc.and(self.eval(g, env));
                    if acc == False {
                        break;
                    }
                }
                acc
            }
            CFormula::Tc {
                id,
                u,
                w,
                body,
                from,
                to,
                deps,
            } => {
                let n = s.len();
                if n == 0 {
                    return False;
                }
                let key = (deps.len() <= TC_MEMO_DEPS).then(|| {
                    let mut k = [usize::MAX; TC_MEMO_DEPS];
                    for (slot, d) in k.iter_mut().zip(deps) {
                        *slot = env[*d];
                    }
                    (*id, k)
                });
                let m = if let Some(m) = key.as_ref().and_then(|k| self.tc.get(k)) {
                    m.clone()
                } else {
                    let mut m = vec![False; n * n];
                    for a in 0..n {
                        for b in 0..n {
                            env[*u] = a;
                            env[*w] = b;
                            m[a * n + b] = self.eval(body, env);
                        }
                    }
                    // max-min Floyd–Warshall: paths of length >= 1
                    for k in 0..n {
                        for i in 0..n {
                            let ik = m[i * n + k];
                            if ik == False {
                                continue;
                            }
                            for j in 0..n {
                                let v = ik.and(m[k * n + j]);
                                if v > m[i * n + j] {
                                    m[i * n + j] = v;
                                }
                            }
                        }
                    }
                    let m = Rc::new(m);
                    if let Some(key) = key {
                        self.tc.insert(key, m.clone());
                    }
                    m
                };
                m[env[*from] * n + env[*to]]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::families as fam;
    use super::super::formula::PredSym;
    use super::super::structure::Fact;
    use super::*;

    #[test]
    fn equality_tc_and_unknown_predicates() {
        let c = fam::simple_class(&["x"], &["next"], vec![]);
        let f = [
            Fact::Unary(PredSym::with("pt", &["x"]), 0),
            Fact::Binary(PredSym::plain("next"), 0, 1),
            Fact::Binary(PredSym::plain("next"), 1, 2),
            Fact::Binary(PredSym::plain("next"), 2, 3),
        ];
        let s = Structure::from_concrete(&c, 4, &f).unwrap_or_else(|e| panic!("{e}"));
        let voc = s.vocab().clone();
        let tc = fam::tc(&["next"])
            .def
            .unwrap_or(Formula::Const(Kleene::Half));
        let ctc = Compiled::new(&voc, &tc, &["v1", "v2"]);
        let mut ev = Evaluator::new(&s);
        assert_eq!(ctc.eval(&mut ev, &[0, 3]), Kleene::True);
        assert_eq!(ctc.eval(&mut ev, &[3, 0]), Kleene::False);
        assert_eq!(ctc.eval(&mut ev, &[1, 1]), Kleene::False);
        let b = s.blur();
        // blurred: x-node and a summary tail; v == v is 1/2 on the summary node
        let eq = Compiled::new(&voc, &Formula::Eq("a".into(), "a".into()), &["a"]);
        let mut ev = Evaluator::new(&b);
        let sm = (0..b.len()).find(|u| b.is_summary(*u)).unwrap_or(0);
        assert_eq!(eq.eval(&mut ev, &[sm]), Kleene::Half);
        assert_eq!(eq.eval(&mut ev, &[1 - sm]), Kleene::True);
        assert_eq!(ctc.eval(&mut ev, &[sm, sm]), Kleene::Half);
        let unknown = Compiled::new(&voc, &Formula::pred(PredSym::plain("zz"), &["a"]), &["a"]);
        assert_eq!(unknown.eval(&mut ev, &[0]), Kleene::Half);
    }

    fn tc_id(c: &Compiled) -> Option<usize> {
        fn find(f: &CFormula) -> Option<usize> {
            match f {
                CFormula::Tc { id, .. } => Some(*id),
                CFormula::Not(g) | CFormula::Exists(_, g) | CFormula::Forall(_, g) => find(g),
                CFormula::And(gs) | CFormula::Or(gs) => gs.iter().find_map(find),
                CFormula::Implies(a, b) | CFormula::Iff(a, b) => find(a).or_else(|| find(b)),
                _ => None,
            }
        }
        find(&c.f)
    }

    #[test]
    fn a_needed_unary_predicate_is_found_under_exists_and_closures_only() {
        let c = fam::simple_class(&["x", "y"], &["next"], vec![fam::reach("x", &["next"])]);
        let s = Structure::from_concrete(&c, 1, &[]).unwrap();
        let voc = s.vocab();
        let px = voc.pt("x").unwrap();
        let formula = |t: &str| crate::scg::parse::parse_formula(t).unwrap();
        let parse = |t: &str| Compiled::new(voc, &formula(t), &["v"]).f;
        let reach = parse("E u. pt[x](u) & (u == v | TC(a, b: next(a, b))(u, v))");
        assert_eq!(reach.needs_unary(), Some(px));
        assert_eq!(
            parse("pt[x](v) | pt[x](v) & next(v, v)").needs_unary(),
            Some(px)
        );
        assert_eq!(
            parse("TC(a, b: pt[x](a) & next(a, b))(v, v)").needs_unary(),
            Some(px)
        );
        // not needed: a disjunct without it, a negation, a universal
        assert_eq!(parse("pt[x](v) | pt[y](v)").needs_unary(), None);
        assert_eq!(parse("!pt[x](v)").needs_unary(), None);
        assert_eq!(parse("A u. pt[x](u)").needs_unary(), None);
        // and where it is 0 everywhere, the formula is 0 at every node
        let mut ev = Evaluator::new(&s);
        assert_eq!(s.get1(px, 0), Kleene::False);
        let c = Compiled::new(
            voc,
            &formula("E u. pt[x](u) & (u == v | TC(a, b: next(a, b))(u, v))"),
            &["v"],
        );
        assert_eq!(c.eval(&mut ev, &[0]), Kleene::False);
    }

    #[test]
    fn equal_closure_bodies_share_one_memoised_closure() {
        let c = fam::simple_class(&["x", "y"], &["next", "prev"], vec![]);
        let f = [
            Fact::Unary(PredSym::with("pt", &["x"]), 0),
            Fact::Unary(PredSym::with("pt", &["y"]), 2),
            Fact::Binary(PredSym::plain("next"), 0, 1),
            Fact::Binary(PredSym::plain("next"), 1, 2),
            Fact::Binary(PredSym::plain("prev"), 2, 1),
        ];
        let s = Structure::from_concrete(&c, 3, &f).unwrap_or_else(|e| panic!("{e}"));
        let voc = s.vocab().clone();
        let def = |x: &str, fields: &[&str]| {
            fam::reach(x, fields)
                .def
                .unwrap_or(Formula::Const(Kleene::Half))
        };
        // r[x] and r[y] over next: the same closure (compiled in different slots)
        let rx = Compiled::new(&voc, &def("x", &["next"]), &["v"]);
        let ry = Compiled::new(&voc, &def("y", &["next"]), &["v"]);
        let rp = Compiled::new(&voc, &def("x", &["prev"]), &["v"]);
        assert!(tc_id(&rx).is_some());
        assert_eq!(tc_id(&rx), tc_id(&ry));
        assert_ne!(tc_id(&rx), tc_id(&rp));
        // one evaluator answers all three as separate evaluators do
        let mut shared = Evaluator::new(&s);
        for v in 0..3 {
            for c in [&rx, &ry, &rp] {
                let alone = c.eval(&mut Evaluator::new(&s), &[v]);
                assert_eq!(c.eval(&mut shared, &[v]), alone, "node {v}");
            }
        }
        assert_eq!(rx.eval(&mut shared, &[2]), Kleene::True);
        assert_eq!(ry.eval(&mut shared, &[0]), Kleene::False);
        assert_eq!(rp.eval(&mut shared, &[1]), Kleene::False);
    }
}
