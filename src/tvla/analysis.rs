//! Syntactic facts about defining formulas that the transfer functions use to update
//! instrumentation predicates precisely and soundly:
//! - polarity (monotonicity) in each predicate and in the universe (quantifier range);
//! - locality: predicates all of whose atoms mention a free variable of the definition
//!   (a change of such a predicate away from the tuple's nodes cannot change the value);
//! - guardedness: every quantified variable is bound by a positive core-field atom
//!   linking it to a free variable (an isolated new node, or a removed node that is no
//!   neighbour of the tuple's nodes, cannot change the value).

use super::formula::{Formula, PredSym};
use std::collections::{BTreeMap, BTreeSet};

/// Polarity of an occurrence set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pol {
    Pos,
    Neg,
    Mixed,
}

impl Pol {
    fn add(self, o: Pol) -> Pol {
        if self == o {
            self
        } else {
            Pol::Mixed
        }
    }
}

/// Key of a polarity entry: a predicate, or `None` for the universe.
pub type PolKey = Option<PredSym>;

/// Polarities of `f` (positive context) in every predicate it mentions and in the
/// universe (`E` and `TC` are positive in it, `A` negative).
pub fn polarity(f: &Formula) -> BTreeMap<PolKey, Pol> {
    let mut m = BTreeMap::new();
    pol(f, true, &mut m);
    m
}

fn note(m: &mut BTreeMap<PolKey, Pol>, k: PolKey, positive: bool) {
    let p = if positive { Pol::Pos } else { Pol::Neg };
    let e = m.entry(k).or_insert(p);
    *e = e.add(p);
}

fn pol(f: &Formula, positive: bool, m: &mut BTreeMap<PolKey, Pol>) {
    match f {
        Formula::Const(_) | Formula::Eq(..) => {}
        Formula::Pred(p, _) => note(m, Some(p.clone()), positive),
        Formula::Not(g) => pol(g, !positive, m),
        Formula::And(gs) | Formula::Or(gs) => gs.iter().for_each(|g| pol(g, positive, m)),
        Formula::Implies(a, b) => {
            pol(a, !positive, m);
            pol(b, positive, m);
        }
        Formula::Iff(a, b) => {
            for g in [a, b] {
                pol(g, true, m);
                pol(g, false, m);
            }
        }
        Formula::Exists(_, g) => {
            note(m, None, positive);
            pol(g, positive, m);
        }
        Formula::Forall(_, g) => {
            note(m, None, !positive);
            pol(g, positive, m);
        }
        Formula::TC { body, .. } => {
            note(m, None, positive);
            pol(body, positive, m);
        }
    }
}

/// Predicates of arity >= 1 with an occurrence none of whose arguments is one of
/// `free` (occurrences under a binder that shadows a free variable count as non-local).
pub fn nonlocal_preds(f: &Formula, free: &[&str]) -> BTreeSet<PredSym> {
    let mut out = BTreeSet::new();
    nonlocal(f, free, false, &mut out);
    out
}

fn nonlocal(f: &Formula, free: &[&str], shadow: bool, out: &mut BTreeSet<PredSym>) {
    match f {
        Formula::Const(_) | Formula::Eq(..) => {}
        Formula::Pred(p, args) => {
            if !args.is_empty() && (shadow || !args.iter().any(|a| free.contains(&a.as_str()))) {
                out.insert(p.clone());
            }
        }
        Formula::Not(g) => nonlocal(g, free, shadow, out),
        Formula::And(gs) | Formula::Or(gs) => {
            gs.iter().for_each(|g| nonlocal(g, free, shadow, out))
        }
        Formula::Implies(a, b) | Formula::Iff(a, b) => {
            nonlocal(a, free, shadow, out);
            nonlocal(b, free, shadow, out);
        }
        Formula::Exists(v, g) | Formula::Forall(v, g) => {
            let sh = shadow || free.contains(&v.as_str());
            nonlocal(g, free, sh, out)
        }
        Formula::TC { body, .. } => {
            // atoms of a closure body relate intermediate nodes: never local
            body.visit(&mut |h| {
                if let Formula::Pred(p, args) = h {
                    if !args.is_empty() {
                        out.insert(p.clone());
                    }
                }
            });
        }
    }
}

/// For every predicate, the argument positions at which some occurrence has a free
/// variable of `free` (for local predicates, a changed tuple can only affect the value
/// at the nodes in these positions).
pub fn free_positions(f: &Formula, free: &[&str]) -> BTreeMap<PredSym, BTreeSet<usize>> {
    let mut out: BTreeMap<PredSym, BTreeSet<usize>> = BTreeMap::new();
    f.visit(&mut |g| {
        if let Formula::Pred(p, args) = g {
            let e = out.entry(p.clone()).or_default();
            for (i, a) in args.iter().enumerate() {
                if free.contains(&a.as_str()) {
                    e.insert(i);
                }
            }
        }
    });
    out
}

/// True when every quantifier of `f` binds a variable that a positive atom of a field
/// in `fields` links to a free variable (see the module documentation); `TC` is not
/// guarded.
pub fn guarded(f: &Formula, free: &[&str], fields: &BTreeSet<PredSym>) -> bool {
    match f {
        Formula::Const(_) | Formula::Eq(..) | Formula::Pred(..) => true,
        Formula::Not(g) => guarded(g, free, fields),
        Formula::And(gs) | Formula::Or(gs) => gs.iter().all(|g| guarded(g, free, fields)),
        Formula::Implies(a, b) | Formula::Iff(a, b) => {
            guarded(a, free, fields) && guarded(b, free, fields)
        }
        Formula::Exists(v, g) | Formula::Forall(v, g) => {
            if free.contains(&v.as_str()) {
                return false;
            }
            let link = |h: &Formula| match h {
                Formula::Pred(p, args) if args.len() == 2 && fields.contains(p) => {
                    (args[0] == *v && free.contains(&args[1].as_str()))
                        || (args[1] == *v && free.contains(&args[0].as_str()))
                }
                _ => false,
            };
            // E v. (.. & link & ..) ;  A v. (link & ..) -> ..  ;  A v. !link | ..
            let ok = match (f, g.as_ref()) {
                (Formula::Exists(..), Formula::And(gs)) => gs.iter().any(link),
                (Formula::Exists(..), h) => link(h) || nested_exists_guard(h, v, free, fields),
                (Formula::Forall(..), Formula::Implies(a, _)) => match a.as_ref() {
                    Formula::And(gs) => gs.iter().any(link),
                    h => link(h),
                },
                (Formula::Forall(..), Formula::Or(gs)) => gs.iter().any(|h| match h {
                    Formula::Not(x) => link(x),
                    _ => false,
                }),
                _ => false,
            };
            ok && guarded(g, free, fields)
        }
        Formula::TC { .. } => false,
    }
}

/// `E v. E w. (.. & link(v) & ..)`: the guard of `v` may sit in a nested existential's
/// conjunction.
fn nested_exists_guard(h: &Formula, v: &str, free: &[&str], fields: &BTreeSet<PredSym>) -> bool {
    match h {
        Formula::Exists(_, g) => match g.as_ref() {
            Formula::And(gs) => gs.iter().any(|x| match x {
                Formula::Pred(p, args) if args.len() == 2 && fields.contains(p) => {
                    (args[0] == v && free.contains(&args[1].as_str()))
                        || (args[1] == v && free.contains(&args[0].as_str()))
                }
                _ => false,
            }),
            inner => nested_exists_guard(inner, v, free, fields),
        },
        _ => false,
    }
}

/// Component locality: `f`'s value at a tuple of nodes of one connected component of
/// a structure (nodes linked by a binary value that is not 0) depends on that
/// component alone, for every binding of the variables in `scope` to its nodes. So
/// the value is the same in the structure and in the component cut out of it, which
/// is what the frame rule of [`super::transfer::post`] needs. A sufficient, syntactic
/// test: no nullary predicate, and every quantified variable is either the outermost
/// universal variable of a closed formula (an anchor: a universal over all nodes is
/// the meet over the components) or tied to a variable in scope by a binary atom, an
/// equality or a transitive closure of binary atoms ([`connects`]) in its guard: a
/// conjunct of an existential, the premise of a universal.
pub fn component_local(f: &Formula, scope: &[&str]) -> bool {
    let within = |v: &str, g: &Formula| -> bool {
        let mut inner: Vec<&str> = scope.to_vec();
        inner.push(v);
        component_local(g, &inner)
    };
    match f {
        Formula::Const(_) | Formula::Eq(..) => true,
        Formula::Pred(_, args) => !args.is_empty(),
        Formula::Not(g) => component_local(g, scope),
        Formula::And(gs) | Formula::Or(gs) => gs.iter().all(|g| component_local(g, scope)),
        Formula::Implies(a, b) | Formula::Iff(a, b) => {
            component_local(a, scope) && component_local(b, scope)
        }
        Formula::Exists(v, g) => scope.iter().any(|w| connects(g, v, w)) && within(v, g),
        Formula::Forall(v, g) => {
            let guard = match g.as_ref() {
                Formula::Implies(a, _) => scope.iter().any(|w| connects(a, v, w)),
                Formula::Or(hs) => hs.iter().any(
                    |h| matches!(h, Formula::Not(a) if scope.iter().any(|w| connects(a, v, w))),
                ),
                _ => false,
            };
            (scope.is_empty() || guard) && within(v, g)
        }
        Formula::TC {
            u,
            w,
            body,
            from,
            to,
            ..
        } => {
            scope.contains(&from.as_str())
                && scope.contains(&to.as_str())
                && connects(body, u, w)
                && component_local(body, &[u.as_str(), w.as_str()])
        }
    }
}

/// `f` can be other than 0 only where `u` and `w` lie in one connected component:
/// they are linked by a chain of the pairs [`links`] finds in `f`.
pub fn connects(f: &Formula, u: &str, w: &str) -> bool {
    u == w || linked(&links(f), u, w)
}

/// Pairs of logical variables that lie in one connected component wherever `f` is
/// not 0: the two arguments of a binary atom or an equality, the ends of a transitive
/// closure whose body links its two variables; all pairs of the conjuncts of a
/// conjunction, the pairs every disjunct of a disjunction links (by a chain), and
/// those of an existential's body (its variable stands for some node of the chain).
fn links(f: &Formula) -> Vec<(String, String)> {
    match f {
        Formula::Pred(_, args) if args.len() == 2 => vec![(args[0].clone(), args[1].clone())],
        Formula::Eq(a, b) => vec![(a.clone(), b.clone())],
        Formula::TC {
            u,
            w,
            body,
            from,
            to,
        } if linked(&links(body), u, w) => vec![(from.clone(), to.clone())],
        Formula::And(gs) => gs.iter().flat_map(links).collect(),
        // the bound variable is eliminated (an outer one of the same name is another)
        Formula::Exists(x, g) => {
            let inner = links(g);
            closure_pairs(&[inner.as_slice()], |a| a != x)
        }
        Formula::Or(gs) if !gs.is_empty() => {
            let each: Vec<Vec<(String, String)>> = gs.iter().map(links).collect();
            let each: Vec<&[(String, String)]> = each.iter().map(Vec::as_slice).collect();
            closure_pairs(&each, |_| true)
        }
        _ => Vec::new(),
    }
}

/// The pairs of variables (those `keep` accepts) that every one of `sets` links by a
/// chain.
fn closure_pairs(
    sets: &[&[(String, String)]],
    keep: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    let mut vars: Vec<&String> = sets
        .iter()
        .flat_map(|s| s.iter())
        .flat_map(|(a, b)| [a, b])
        .filter(|a| keep(a))
        .collect();
    vars.sort();
    vars.dedup();
    let mut out = Vec::new();
    for (i, a) in vars.iter().enumerate() {
        for b in &vars[i + 1..] {
            if sets.iter().all(|l| linked(l, a, b)) {
                out.push(((*a).clone(), (*b).clone()));
            }
        }
    }
    out
}

/// `u` and `w` are joined by a chain of `pairs`.
fn linked(pairs: &[(String, String)], u: &str, w: &str) -> bool {
    let mut reached: Vec<&str> = vec![u];
    let mut i = 0;
    while i < reached.len() {
        let x = reached[i];
        if x == w {
            return true;
        }
        for (a, b) in pairs {
            for (p, q) in [(a, b), (b, a)] {
                if p == x && !reached.contains(&q.as_str()) {
                    reached.push(q);
                }
            }
        }
        i += 1;
    }
    false
}

/// A literal of a clause: an atom (predicate application or equality) and its sign.
type Lit = (Formula, bool);

fn literal(f: &Formula) -> Option<Lit> {
    match f {
        Formula::Pred(..) | Formula::Eq(..) => Some((f.clone(), true)),
        Formula::Not(g) => literal(g).map(|(a, s)| (a, !s)),
        _ => None,
    }
}

fn conj_lits(f: &Formula, out: &mut Vec<Lit>) -> bool {
    match f {
        Formula::And(gs) => gs.iter().all(|g| conj_lits(g, out)),
        g => literal(g).map(|l| out.push(l)).is_some(),
    }
}

fn disj_lits(f: &Formula, out: &mut Vec<Lit>) -> bool {
    match f {
        Formula::Or(gs) => gs.iter().all(|g| disj_lits(g, out)),
        Formula::Implies(a, b) => {
            let mut l = Vec::new();
            if !conj_lits(a, &mut l) {
                return false;
            }
            out.extend(l.into_iter().map(|(a, s)| (a, !s)));
            disj_lits(b, out)
        }
        g => literal(g).map(|l| out.push(l)).is_some(),
    }
}

/// Clause form of `A vs. body` when `body` is a clause (a disjunction of literals, an
/// implication from a conjunction of literals to a disjunction, ...): the bound
/// variables and the literals.
pub fn clause(f: &Formula) -> Option<(Vec<String>, Vec<Lit>)> {
    let mut vars = Vec::new();
    let mut g = f;
    while let Formula::Forall(v, h) = g {
        vars.push(v.clone());
        g = h;
    }
    let mut lits = Vec::new();
    disj_lits(g, &mut lits).then_some((vars, lits))
}

fn lit_formula((a, s): &Lit) -> Formula {
    if *s {
        a.clone()
    } else {
        Formula::negation(a.clone())
    }
}

/// Unit-propagation rules `A vs. (others all false) -> lit` of a clause, one per
/// predicate literal (equalities are never rule heads).
pub fn clause_rules(vars: &[String], lits: &[Lit]) -> Vec<Formula> {
    let mut out = Vec::new();
    for (i, head) in lits.iter().enumerate() {
        if !matches!(head.0, Formula::Pred(..)) {
            continue;
        }
        let others: Vec<Formula> = lits
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, (a, s))| lit_formula(&(a.clone(), !s)))
            .collect();
        let mut f = Formula::Implies(Box::new(Formula::And(others)), Box::new(lit_formula(head)));
        for v in vars.iter().rev() {
            f = Formula::Forall(v.clone(), Box::new(f));
        }
        out.push(f);
    }
    out
}

/// Rules that follow from an instrumentation definition `p(free) <-> def`:
/// `p -> def` when `def` is (a universally quantified) clause, and `def -> p` when
/// `def` is a conjunction or a disjunction of literals.
pub fn definition_rules(p: &PredSym, free: &[&str], def: &Formula) -> Vec<Formula> {
    let atom = Formula::Pred(p.clone(), free.iter().map(|s| s.to_string()).collect());
    let outer: Vec<String> = free.iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    // p -> def
    if let Some((vars, mut lits)) = clause(def) {
        if vars.iter().all(|v| !outer.contains(v)) {
            lits.insert(0, (atom.clone(), false));
            let mut all = outer.clone();
            all.extend(vars);
            out.extend(clause_rules(&all, &lits));
        }
    }
    // !p -> !def for def = E ws. conjunction (or a disjunction of such)
    let disjuncts: Vec<&Formula> = match def {
        Formula::Or(gs) => gs.iter().collect(),
        g => vec![g],
    };
    for d in disjuncts {
        let mut vars = Vec::new();
        let mut g = d;
        while let Formula::Exists(v, h) = g {
            vars.push(v.clone());
            g = h;
        }
        let mut c = Vec::new();
        if !vars.is_empty() && vars.iter().all(|v| !outer.contains(v)) && conj_lits(g, &mut c) {
            let mut lits: Vec<Lit> = c.into_iter().map(|(a, s)| (a, !s)).collect();
            lits.insert(0, (atom.clone(), true));
            let mut all = outer.clone();
            all.extend(vars);
            out.extend(clause_rules(&all, &lits));
        }
    }
    // def -> p
    let mut c = Vec::new();
    if conj_lits(def, &mut c) {
        let mut lits: Vec<Lit> = c.into_iter().map(|(a, s)| (a, !s)).collect();
        lits.push((atom.clone(), true));
        out.extend(clause_rules(&outer, &lits));
    } else {
        let mut d = Vec::new();
        if let Formula::Or(_) = def {
            if disj_lits(def, &mut d) {
                for (a, s) in d {
                    let lits = vec![(a, !s), (atom.clone(), true)];
                    out.extend(clause_rules(&outer, &lits));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::families;
    use super::*;

    #[test]
    fn family_facts() {
        let fields: BTreeSet<PredSym> = ["next", "prev"]
            .iter()
            .map(|f| PredSym::plain(*f))
            .collect();
        let c = families::cancel("next", "prev")
            .def
            .unwrap_or(Formula::Const(super::super::formula::Kleene::Half));
        assert!(guarded(&c, &["v"], &fields));
        assert!(nonlocal_preds(&c, &["v"]).is_empty());
        let p = polarity(&c);
        assert_eq!(p[&Some(PredSym::plain("next"))], Pol::Neg);
        assert_eq!(p[&Some(PredSym::plain("prev"))], Pol::Pos);
        assert_eq!(p[&None], Pol::Neg);
        let s = families::shared(&["next"])
            .def
            .unwrap_or(Formula::Const(super::super::formula::Kleene::Half));
        assert!(guarded(&s, &["v"], &fields));
        let r = families::reach("x", &["next"])
            .def
            .unwrap_or(Formula::Const(super::super::formula::Kleene::Half));
        assert!(!guarded(&r, &["v"], &fields));
        assert!(nonlocal_preds(&r, &["v"]).contains(&PredSym::plain("next")));
    }
}
