//! First-order formulas with transitive closure, FO(TC), over heap individuals.
//!
//! This is the one formula syntax of the project: instrumentation predicates in the
//! SCG DSL (`scg-library/`) are defined by these formulas and the three-valued
//! structures of [`crate::tvla`] evaluate them. The concrete syntax printed by
//! [`fmt::Display`] is the syntax the DSL parser reads (round trip):
//!
//! ```text
//! 0  1  1/2                     Kleene constants
//! sm(v)  pt[x](v)  next(v, w)   predicate application; [..] are predicate parameters
//! v == w                        equality of individuals
//! !f   f & g   f | g   f -> g   f <-> g
//! E v. f     A v. f             quantifiers
//! TC(u, w: f)(a, b)             reflexive-free transitive closure of f(u, w) from a to b
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;

/// A logical variable ranging over heap individuals.
pub type LVar = String;

/// A predicate symbol: a base name and parameters (tracked pointers, field names,
/// or, inside a not-yet-instantiated SCG family, role and pointer placeholders).
/// `pt[x]`, `r[x, next]`, `cancel[next, prev]`, `sm`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PredSym {
    pub name: String,
    pub params: Vec<String>,
}

impl PredSym {
    /// A predicate symbol without parameters.
    pub fn plain(name: impl Into<String>) -> PredSym {
        PredSym {
            name: name.into(),
            params: Vec::new(),
        }
    }
    /// A predicate symbol with parameters.
    pub fn with(name: impl Into<String>, params: &[&str]) -> PredSym {
        PredSym {
            name: name.into(),
            params: params.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl fmt::Display for PredSym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        if !self.params.is_empty() {
            write!(f, "[{}]", self.params.join(", "))?;
        }
        Ok(())
    }
}

/// Kleene truth values, ordered by information: `Half` is "unknown".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kleene {
    False,
    Half,
    True,
}

impl Kleene {
    /// Kleene conjunction (minimum in the truth order 0 < 1/2 < 1).
    pub fn and(self, o: Kleene) -> Kleene {
        self.min(o)
    }
    /// Kleene disjunction (maximum in the truth order).
    pub fn or(self, o: Kleene) -> Kleene {
        self.max(o)
    }
    /// Kleene negation.
    pub fn negate(self) -> Kleene {
        match self {
            Kleene::False => Kleene::True,
            Kleene::Half => Kleene::Half,
            Kleene::True => Kleene::False,
        }
    }
    /// Information join: equal values stay, different values become `Half`.
    pub fn join(self, o: Kleene) -> Kleene {
        if self == o {
            self
        } else {
            Kleene::Half
        }
    }
    /// `self ⊑ o` in the information order (o is `Half` or equal).
    pub fn leq_info(self, o: Kleene) -> bool {
        self == o || o == Kleene::Half
    }
    /// From a Rust boolean.
    pub fn from_bool(b: bool) -> Kleene {
        if b {
            Kleene::True
        } else {
            Kleene::False
        }
    }
}

impl fmt::Display for Kleene {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kleene::False => "0",
            Kleene::Half => "1/2",
            Kleene::True => "1",
        })
    }
}

/// An FO(TC) formula.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Formula {
    Const(Kleene),
    /// `p(args)`; the number of arguments is the predicate's arity (0, 1 or 2).
    Pred(PredSym, Vec<LVar>),
    Eq(LVar, LVar),
    Not(Box<Formula>),
    And(Vec<Formula>),
    Or(Vec<Formula>),
    Implies(Box<Formula>, Box<Formula>),
    Iff(Box<Formula>, Box<Formula>),
    Exists(LVar, Box<Formula>),
    Forall(LVar, Box<Formula>),
    /// `TC(u, w: body)(from, to)`: there is a path of length >= 1 from `from` to `to`
    /// along pairs satisfying `body(u, w)`.
    TC {
        u: LVar,
        w: LVar,
        body: Box<Formula>,
        from: LVar,
        to: LVar,
    },
}

impl Formula {
    /// `p(args)` with string arguments.
    pub fn pred(p: PredSym, args: &[&str]) -> Formula {
        Formula::Pred(p, args.iter().map(|s| s.to_string()).collect())
    }
    /// `!f`.
    pub fn negation(f: Formula) -> Formula {
        Formula::Not(Box::new(f))
    }
    /// Free logical variables, sorted and without duplicates.
    pub fn free_vars(&self) -> Vec<LVar> {
        let mut out = Vec::new();
        self.collect_free(&mut Vec::new(), &mut out);
        out.sort();
        out.dedup();
        out
    }
    fn collect_free(&self, bound: &mut Vec<LVar>, out: &mut Vec<LVar>) {
        let mut add = |v: &LVar, bound: &Vec<LVar>| {
            if !bound.contains(v) {
                out.push(v.clone())
            }
        };
        match self {
            Formula::Const(_) => {}
            Formula::Pred(_, args) => args.iter().for_each(|a| add(a, bound)),
            Formula::Eq(a, b) => {
                add(a, bound);
                add(b, bound);
            }
            Formula::Not(f) => f.collect_free(bound, out),
            Formula::And(fs) | Formula::Or(fs) => {
                fs.iter().for_each(|f| f.collect_free(bound, out))
            }
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                a.collect_free(bound, out);
                b.collect_free(bound, out);
            }
            Formula::Exists(v, f) | Formula::Forall(v, f) => {
                bound.push(v.clone());
                f.collect_free(bound, out);
                bound.pop();
            }
            Formula::TC {
                u,
                w,
                body,
                from,
                to,
            } => {
                add(from, bound);
                add(to, bound);
                bound.push(u.clone());
                bound.push(w.clone());
                body.collect_free(bound, out);
                bound.pop();
                bound.pop();
            }
        }
    }
    /// Every predicate symbol the formula mentions, sorted, without duplicates.
    pub fn preds(&self) -> Vec<PredSym> {
        let mut out = Vec::new();
        self.visit(&mut |f| {
            if let Formula::Pred(p, _) = f {
                out.push(p.clone())
            }
        });
        out.sort();
        out.dedup();
        out
    }
    /// Pre-order traversal of all sub-formulas.
    pub fn visit(&self, g: &mut impl FnMut(&Formula)) {
        g(self);
        match self {
            Formula::Const(_) | Formula::Pred(..) | Formula::Eq(..) => {}
            Formula::Not(f) | Formula::Exists(_, f) | Formula::Forall(_, f) => f.visit(g),
            Formula::And(fs) | Formula::Or(fs) => fs.iter().for_each(|f| f.visit(g)),
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                a.visit(g);
                b.visit(g);
            }
            Formula::TC { body, .. } => body.visit(g),
        }
    }
    /// Replaces every occurrence `name(args)` of the parameterless predicate `name` by
    /// `by(args)` (used to expand the SCG DSL's built-in `ptd`).
    pub fn expand_pred(&self, name: &str, by: &dyn Fn(&[LVar]) -> Formula) -> Formula {
        let b = |f: &Formula| Box::new(f.expand_pred(name, by));
        match self {
            Formula::Pred(p, args) if p.name == name && p.params.is_empty() => by(args),
            Formula::Const(_) | Formula::Pred(..) | Formula::Eq(..) => self.clone(),
            Formula::Not(f) => Formula::Not(b(f)),
            Formula::And(fs) => Formula::And(fs.iter().map(|f| f.expand_pred(name, by)).collect()),
            Formula::Or(fs) => Formula::Or(fs.iter().map(|f| f.expand_pred(name, by)).collect()),
            Formula::Implies(x, y) => Formula::Implies(b(x), b(y)),
            Formula::Iff(x, y) => Formula::Iff(b(x), b(y)),
            Formula::Exists(v, f) => Formula::Exists(v.clone(), b(f)),
            Formula::Forall(v, f) => Formula::Forall(v.clone(), b(f)),
            Formula::TC {
                u,
                w,
                body,
                from,
                to,
            } => Formula::TC {
                u: u.clone(),
                w: w.clone(),
                body: b(body),
                from: from.clone(),
                to: to.clone(),
            },
        }
    }
    /// Replaces predicate parameters by `subst` (used to instantiate SCG families:
    /// roles become field names, pointer placeholders become tracked pointers).
    pub fn subst_params(&self, subst: &dyn Fn(&str) -> Option<String>) -> Formula {
        let s = |p: &PredSym| PredSym {
            name: p.name.clone(),
            params: p
                .params
                .iter()
                .map(|x| subst(x).unwrap_or_else(|| x.clone()))
                .collect(),
        };
        let b = |f: &Formula| Box::new(f.subst_params(subst));
        match self {
            Formula::Const(k) => Formula::Const(*k),
            Formula::Pred(p, args) => {
                // a predicate whose *name* is a role (e.g. `next(u, w)`) is renamed too
                let name = subst(&p.name).unwrap_or_else(|| p.name.clone());
                let mut q = s(p);
                q.name = name;
                Formula::Pred(q, args.clone())
            }
            Formula::Eq(a, c) => Formula::Eq(a.clone(), c.clone()),
            Formula::Not(f) => Formula::Not(b(f)),
            Formula::And(fs) => Formula::And(fs.iter().map(|f| f.subst_params(subst)).collect()),
            Formula::Or(fs) => Formula::Or(fs.iter().map(|f| f.subst_params(subst)).collect()),
            Formula::Implies(x, y) => Formula::Implies(b(x), b(y)),
            Formula::Iff(x, y) => Formula::Iff(b(x), b(y)),
            Formula::Exists(v, f) => Formula::Exists(v.clone(), b(f)),
            Formula::Forall(v, f) => Formula::Forall(v.clone(), b(f)),
            Formula::TC {
                u,
                w,
                body,
                from,
                to,
            } => Formula::TC {
                u: u.clone(),
                w: w.clone(),
                body: b(body),
                from: from.clone(),
                to: to.clone(),
            },
        }
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Fully parenthesised binary connectives keep printing trivially re-parsable.
        match self {
            Formula::Const(k) => write!(f, "{k}"),
            Formula::Pred(p, args) => write!(f, "{p}({})", args.join(", ")),
            Formula::Eq(a, b) => write!(f, "{a} == {b}"),
            Formula::Not(g) => write!(f, "!({g})"),
            Formula::And(fs) | Formula::Or(fs) if fs.is_empty() => {
                write!(
                    f,
                    "{}",
                    if matches!(self, Formula::And(_)) {
                        "1"
                    } else {
                        "0"
                    }
                )
            }
            Formula::And(fs) | Formula::Or(fs) => {
                let sep = if matches!(self, Formula::And(_)) {
                    " & "
                } else {
                    " | "
                };
                write!(f, "(")?;
                for (i, g) in fs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    write!(f, "{g}")?;
                }
                write!(f, ")")
            }
            Formula::Implies(a, b) => write!(f, "({a} -> {b})"),
            Formula::Iff(a, b) => write!(f, "({a} <-> {b})"),
            Formula::Exists(v, g) => write!(f, "(E {v}. {g})"),
            Formula::Forall(v, g) => write!(f, "(A {v}. {g})"),
            Formula::TC {
                u,
                w,
                body,
                from,
                to,
            } => write!(f, "TC({u}, {w}: {body})({from}, {to})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kleene_tables() {
        use Kleene::*;
        assert_eq!(True.and(Half), Half);
        assert_eq!(False.and(Half), False);
        assert_eq!(True.or(Half), True);
        assert_eq!(Half.negate(), Half);
        assert_eq!(True.join(False), Half);
        assert!(True.leq_info(Half));
        assert!(!Half.leq_info(True));
    }

    #[test]
    fn free_vars_respect_binders() {
        let f = Formula::Exists(
            "u".into(),
            Box::new(Formula::And(vec![
                Formula::pred(PredSym::with("pt", &["x"]), &["u"]),
                Formula::TC {
                    u: "a".into(),
                    w: "b".into(),
                    body: Box::new(Formula::pred(PredSym::plain("next"), &["a", "b"])),
                    from: "u".into(),
                    to: "v".into(),
                },
            ])),
        );
        assert_eq!(f.free_vars(), vec!["v".to_string()]);
        assert_eq!(
            f.to_string(),
            "(E u. (pt[x](u) & TC(a, b: next(a, b))(u, v)))"
        );
    }
}
