//! Constructors of the core and instrumentation predicates the SCG library uses, with
//! their defining formulas (free variable `v` for unary, `v1, v2` for binary).
//!
//! Field sets `fields` are unions: `tc(&["left", "right"])` is the closure of the
//! down-pointer relation of a binary tree. The transfer functions recognise the
//! reachability/cyclicity families built here (by name *and* definition) and update
//! them by finite differencing; every other definition is re-evaluated.

use super::class::{PredDef, ShapeClass};
use super::formula::{Formula, PredSym};

fn p1(name: &str, params: &[&str], a: &str) -> Formula {
    Formula::pred(PredSym::with(name, params), &[a])
}
fn field(f: &str, a: &str, b: &str) -> Formula {
    Formula::pred(PredSym::plain(f), &[a, b])
}
fn union(fields: &[&str], a: &str, b: &str) -> Formula {
    if fields.len() == 1 {
        field(fields[0], a, b)
    } else {
        Formula::Or(fields.iter().map(|f| field(f, a, b)).collect())
    }
}
fn tc_formula(fields: &[&str], from: &str, to: &str) -> Formula {
    Formula::TC {
        u: "tc_a".into(),
        w: "tc_b".into(),
        body: Box::new(union(fields, "tc_a", "tc_b")),
        from: from.into(),
        to: to.into(),
    }
}
fn exists(v: &str, f: Formula) -> Formula {
    Formula::Exists(v.into(), Box::new(f))
}
fn forall(v: &str, f: Formula) -> Formula {
    Formula::Forall(v.into(), Box::new(f))
}
fn eq(a: &str, b: &str) -> Formula {
    Formula::Eq(a.into(), b.into())
}

/// `sm` (unary core).
pub fn sm() -> PredDef {
    PredDef {
        sym: PredSym::plain("sm"),
        arity: 1,
        def: None,
    }
}
/// `pt[x]` (unary core): pointer variable `x` points to the node.
pub fn pt(x: &str) -> PredDef {
    PredDef {
        sym: PredSym::with("pt", &[x]),
        arity: 1,
        def: None,
    }
}
/// Field predicate `f(u, w)` (binary core).
pub fn field_pred(f: &str) -> PredDef {
    PredDef {
        sym: PredSym::plain(f),
        arity: 2,
        def: None,
    }
}
/// `fd[assertion]` (unary core): the field assertion holds for every represented cell.
pub fn fd(assertion: &str) -> PredDef {
    PredDef {
        sym: PredSym::with("fd", &[assertion]),
        arity: 1,
        def: None,
    }
}

/// `r[x, F](v)`: `v` is reachable from the target of `x` along fields `F` (reflexive):
/// `E w. pt[x](w) & (w == v | TC(F)(w, v))`. With `F = [left, right]` this is
/// downward reachability in a tree.
pub fn reach(x: &str, fields: &[&str]) -> PredDef {
    let mut params = vec![x];
    params.extend_from_slice(fields);
    PredDef {
        sym: PredSym::with("r", &params),
        arity: 1,
        def: Some(exists(
            "w",
            Formula::And(vec![
                p1("pt", &[x], "w"),
                Formula::Or(vec![eq("w", "v"), tc_formula(fields, "w", "v")]),
            ]),
        )),
    }
}

/// `ptd(a)` over the tracked pointers `ptrs`: some pointer variable points to `a`
/// (`pt[p1](a) | pt[p2](a) | ...`; `0` without pointers). The SCG DSL's built-in `ptd`
/// expands to this.
pub fn pointed(ptrs: &[&str], a: &str) -> Formula {
    match ptrs {
        [] => Formula::Const(super::formula::Kleene::False),
        [p] => p1("pt", &[p], a),
        _ => Formula::Or(ptrs.iter().map(|p| p1("pt", &[p], a)).collect()),
    }
}

/// `rs[x, F](v)`: `v` is in the *segment* of `x`: reachable from the target of `x`
/// along fields `F` without entering a cell some tracked pointer (of `ptrs`) points to
/// (reflexive): `E w. pt[x](w) & (w == v | TC(a, b: F(a, b) & !ptd(b))(w, v))`. The
/// cut points are the pointed cells (Manevich et al.'s cut-point reachability without
/// heap sharing): on a cycle through `head` and `p`, the cells from `head` up to `p`
/// and those from `p` back to `head` are different segments, which unary reachability
/// (1 everywhere on a cycle) cannot tell apart.
pub fn segment(x: &str, fields: &[&str], ptrs: &[&str]) -> PredDef {
    let mut params = vec![x];
    params.extend_from_slice(fields);
    let body = Formula::And(vec![
        union(fields, "tc_a", "tc_b"),
        Formula::negation(pointed(ptrs, "tc_b")),
    ]);
    PredDef {
        sym: PredSym::with("rs", &params),
        arity: 1,
        def: Some(exists(
            "w",
            Formula::And(vec![
                p1("pt", &[x], "w"),
                Formula::Or(vec![
                    eq("w", "v"),
                    Formula::TC {
                        u: "tc_a".into(),
                        w: "tc_b".into(),
                        body: Box::new(body),
                        from: "w".into(),
                        to: "v".into(),
                    },
                ]),
            ]),
        )),
    }
}

/// `tc[F](v1, v2)`: binary reachability, the (non-reflexive) transitive closure of the
/// union of fields `F`: `TC(F)(v1, v2)`. `tc[left, right]` is the closure of the tree
/// down-pointer.
pub fn tc(fields: &[&str]) -> PredDef {
    PredDef {
        sym: PredSym::with("tc", fields),
        arity: 2,
        def: Some(tc_formula(fields, "v1", "v2")),
    }
}

/// `c[F](v)`: `v` lies on a cycle along fields `F`: `TC(F)(v, v)`.
pub fn cyclic(fields: &[&str]) -> PredDef {
    PredDef {
        sym: PredSym::with("c", fields),
        arity: 1,
        def: Some(tc_formula(fields, "v", "v")),
    }
}

/// `acyc[F](v)`: `v` lies on no cycle along fields `F` (downward acyclicity for
/// `F = [left, right]`): `!TC(F)(v, v)`.
pub fn acyclic(fields: &[&str]) -> PredDef {
    PredDef {
        sym: PredSym::with("acyc", fields),
        arity: 1,
        def: Some(Formula::negation(tc_formula(fields, "v", "v"))),
    }
}

/// `cancel[f, b](v)`: following `f` then `b` returns to `v`: `A w. f(v, w) -> b(w, v)`.
/// `cancel[left, parent]` / `cancel[right, parent]` are the tree parent cancellations.
pub fn cancel(f: &str, b: &str) -> PredDef {
    PredDef {
        sym: PredSym::with("cancel", &[f, b]),
        arity: 1,
        def: Some(forall(
            "w",
            Formula::Implies(Box::new(field(f, "v", "w")), Box::new(field(b, "w", "v"))),
        )),
    }
}

/// `pcancel[parent, left, right](v)`: the parent of `v` has `v` as a child:
/// `A w. parent(v, w) -> (left(w, v) | right(w, v))`.
pub fn parent_cancel(parent: &str, left: &str, right: &str) -> PredDef {
    PredDef {
        sym: PredSym::with("pcancel", &[parent, left, right]),
        arity: 1,
        def: Some(forall(
            "w",
            Formula::Implies(
                Box::new(field(parent, "v", "w")),
                Box::new(Formula::Or(vec![
                    field(left, "w", "v"),
                    field(right, "w", "v"),
                ])),
            ),
        )),
    }
}

/// `is[F](v)`: `v` is shared, i.e. has at least two incoming links along fields `F`
/// (two distinct sources on one field, or links on two different fields).
pub fn shared(fields: &[&str]) -> PredDef {
    let mut alts = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        alts.push(exists(
            "w1",
            exists(
                "w2",
                Formula::And(vec![
                    field(f, "w1", "v"),
                    field(f, "w2", "v"),
                    Formula::negation(eq("w1", "w2")),
                ]),
            ),
        ));
        for g in &fields[i + 1..] {
            alts.push(exists(
                "w1",
                exists(
                    "w2",
                    Formula::And(vec![field(f, "w1", "v"), field(g, "w2", "v")]),
                ),
            ));
        }
    }
    PredDef {
        sym: PredSym::with("is", fields),
        arity: 1,
        def: Some(if alts.len() == 1 {
            alts.remove(0)
        } else {
            Formula::Or(alts)
        }),
    }
}

/// `nn[f](v)`: the field `f` of `v` is not NULL (`E w. f(v, w)`); the SCG library's
/// `always family nonnull`, meant as a non-abstraction (`nonabs`) predicate.
pub fn nonnull(f: &str) -> PredDef {
    PredDef {
        sym: PredSym::with("nn", &[f]),
        arity: 1,
        def: Some(exists("w", field(f, "v", "w"))),
    }
}

/// `down[F](v1, v2)`: the tree down-pointer, `left(v1, v2) | right(v1, v2)`.
pub fn down(fields: &[&str]) -> PredDef {
    PredDef {
        sym: PredSym::with("down", fields),
        arity: 2,
        def: Some(union(fields, "v1", "v2")),
    }
}

/// A reachability/cyclicity family the transfer functions update by differencing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Family {
    /// `tc[F]`
    Tc(Vec<String>),
    /// `c[F]`
    Cyclic(Vec<String>),
    /// `acyc[F]`
    Acyclic(Vec<String>),
    /// `r[x, F]`
    Reach(String, Vec<String>),
    /// `rs[x, F]` (segment of `x`, [`segment`])
    Seg(String, Vec<String>),
}

impl Family {
    /// The field set `F`.
    pub fn fields(&self) -> &[String] {
        match self {
            Family::Tc(f)
            | Family::Cyclic(f)
            | Family::Acyclic(f)
            | Family::Reach(_, f)
            | Family::Seg(_, f) => f,
        }
    }
}

/// Recognises a predicate built by [`tc`], [`cyclic`], [`acyclic`], [`reach`] or
/// [`segment`]
/// (name, parameters and definition must all match).
pub fn recognize(p: &PredDef) -> Option<Family> {
    let params: Vec<&str> = p.sym.params.iter().map(|s| s.as_str()).collect();
    let (fam, expected) = match (p.sym.name.as_str(), p.arity) {
        ("tc", 2) if !params.is_empty() => (Family::Tc(p.sym.params.clone()), tc(&params)),
        ("c", 1) if !params.is_empty() => (Family::Cyclic(p.sym.params.clone()), cyclic(&params)),
        ("acyc", 1) if !params.is_empty() => {
            (Family::Acyclic(p.sym.params.clone()), acyclic(&params))
        }
        ("r", 1) if params.len() >= 2 => (
            Family::Reach(p.sym.params[0].clone(), p.sym.params[1..].to_vec()),
            reach(params[0], &params[1..]),
        ),
        ("rs", 1) if params.len() >= 2 => {
            // the cut points are the pointers `ptd` expanded to, in their order
            let mut ptrs: Vec<String> = Vec::new();
            if let Some(Formula::Exists(_, b)) = &p.def {
                b.visit(&mut |g| {
                    if let Formula::TC { body, .. } = g {
                        body.visit(&mut |h| {
                            if let Formula::Pred(q, _) = h {
                                if q.name == "pt" && q.params.len() == 1 {
                                    ptrs.push(q.params[0].clone());
                                }
                            }
                        })
                    }
                });
            }
            let ptrs: Vec<&str> = ptrs.iter().map(|s| s.as_str()).collect();
            (
                Family::Seg(p.sym.params[0].clone(), p.sym.params[1..].to_vec()),
                segment(params[0], &params[1..], &ptrs),
            )
        }
        _ => return None,
    };
    let same = match (&expected.def, &p.def) {
        (Some(a), Some(b)) => alpha_eq(a, b, &mut Vec::new()),
        _ => false,
    };
    same.then_some(fam)
}

/// Equality of formulas up to renaming of bound variables (quantifiers and the two
/// variables of `TC`); `bound` pairs the variables bound so far (innermost last).
/// The SCG library writes `TC(a, b: ..)` and `E u. ..` where the constructors here
/// use other names; both must be recognised as the same family.
pub fn alpha_eq(a: &Formula, b: &Formula, bound: &mut Vec<(String, String)>) -> bool {
    let var_eq = |x: &String, y: &String, bound: &[(String, String)]| match bound
        .iter()
        .rev()
        .find(|(p, q)| p == x || q == y)
    {
        Some((p, q)) => p == x && q == y,
        None => x == y,
    };
    let vars_eq = |xs: &[String], ys: &[String], bound: &[(String, String)]| {
        xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| var_eq(x, y, bound))
    };
    let all = |xs: &[Formula], ys: &[Formula], bound: &mut Vec<(String, String)>| {
        xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| alpha_eq(x, y, bound))
    };
    match (a, b) {
        (Formula::Const(x), Formula::Const(y)) => x == y,
        (Formula::Pred(p, xs), Formula::Pred(q, ys)) => p == q && vars_eq(xs, ys, bound),
        (Formula::Eq(x1, x2), Formula::Eq(y1, y2)) => {
            var_eq(x1, y1, bound) && var_eq(x2, y2, bound)
        }
        (Formula::Not(x), Formula::Not(y)) => alpha_eq(x, y, bound),
        (Formula::And(xs), Formula::And(ys)) | (Formula::Or(xs), Formula::Or(ys)) => {
            all(xs, ys, bound)
        }
        (Formula::Implies(x1, x2), Formula::Implies(y1, y2))
        | (Formula::Iff(x1, x2), Formula::Iff(y1, y2)) => {
            alpha_eq(x1, y1, bound) && alpha_eq(x2, y2, bound)
        }
        (Formula::Exists(x, f), Formula::Exists(y, g))
        | (Formula::Forall(x, f), Formula::Forall(y, g)) => {
            bound.push((x.clone(), y.clone()));
            let r = alpha_eq(f, g, bound);
            bound.pop();
            r
        }
        (
            Formula::TC {
                u: u1,
                w: w1,
                body: b1,
                from: f1,
                to: t1,
            },
            Formula::TC {
                u: u2,
                w: w2,
                body: b2,
                from: f2,
                to: t2,
            },
        ) => {
            if !(var_eq(f1, f2, bound) && var_eq(t1, t2, bound)) {
                return false;
            }
            bound.push((u1.clone(), u2.clone()));
            bound.push((w1.clone(), w2.clone()));
            let r = alpha_eq(b1, b2, bound);
            bound.pop();
            bound.pop();
            r
        }
        _ => false,
    }
}

/// A pointer field that cancellation makes injective, with the predicates whose values
/// follow from that (coerce's `injective_rules`), as vocabulary indices. Two distinct cells
/// that both satisfy `cancel[f, g]` cannot have the same `f` target (it would have two `g`
/// values), so a node whose `f` sources all cancel is not shared along `f`; when every node
/// also has an `f` successor, `f` is a total injective map of the finite universe into
/// itself, a permutation, so every node lies on an `f` cycle. Every predicate is recognised
/// by its definition ([`alpha_eq`]), never by its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injective {
    /// The binary index of the field `f`.
    pub field: usize,
    /// Unary `cancel[f, g]` predicates (any `g`).
    pub cancel: Vec<usize>,
    /// Unary `is[f]` (shared along `f` alone).
    pub shared: Vec<usize>,
    /// Unary predicates defined as `E w. f(v, w)` (`tot[f]`, `nn[f]`).
    pub total: Vec<usize>,
    /// Unary `c[f]`.
    pub cyclic: Vec<usize>,
    /// Unary `acyc[f]`.
    pub acyclic: Vec<usize>,
}

/// The [`Injective`] fields of `class` (`index`: a predicate's arity and vocabulary index):
/// the fields `f` some unary predicate of the class is `cancel[f, g]` of, by definition.
pub fn injective_fields(
    class: &ShapeClass,
    index: impl Fn(&PredSym) -> Option<(u8, usize)>,
) -> Vec<Injective> {
    let is_def = |p: &PredDef, want: PredDef| match (&p.def, &want.def) {
        (Some(a), Some(b)) => p.arity == want.arity && alpha_eq(a, b, &mut Vec::new()),
        _ => false,
    };
    let unary = |p: &PredDef| match index(&p.sym) {
        Some((1, i)) => Some(i),
        _ => None,
    };
    let fields: Vec<(String, usize)> = class
        .core
        .iter()
        .filter(|p| p.arity == 2 && p.sym.params.is_empty())
        .filter_map(|p| match index(&p.sym) {
            Some((2, i)) => Some((p.sym.name.clone(), i)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for (f, fi) in &fields {
        let of = |want: &dyn Fn(&PredDef) -> bool| -> Vec<usize> {
            class
                .instr
                .iter()
                .filter(|p| want(p))
                .filter_map(unary)
                .collect()
        };
        let cancel = of(&|p| {
            fields
                .iter()
                .any(|(g, _)| g != f && is_def(p, self::cancel(f, g)))
        });
        if cancel.is_empty() {
            continue;
        }
        out.push(Injective {
            field: *fi,
            cancel,
            shared: of(&|p| is_def(p, shared(&[f]))),
            total: of(&|p| is_def(p, nonnull(f))),
            cyclic: of(&|p| recognize(p) == Some(Family::Cyclic(vec![f.clone()]))),
            acyclic: of(&|p| recognize(p) == Some(Family::Acyclic(vec![f.clone()]))),
        });
    }
    out
}

/// A shape class over the given pointers and fields with the given instrumentation
/// predicates; abstraction predicates are all `pt[x]` and all unary instrumentation
/// predicates (a convenience for tests and hand-written classes).
pub fn simple_class(ptrs: &[&str], fields: &[&str], instr: Vec<PredDef>) -> ShapeClass {
    let mut core = vec![sm()];
    core.extend(ptrs.iter().map(|x| pt(x)));
    core.extend(fields.iter().map(|f| field_pred(f)));
    let mut abs: std::collections::BTreeSet<PredSym> = ptrs.iter().map(|x| pt(x).sym).collect();
    abs.extend(instr.iter().filter(|p| p.arity == 1).map(|p| p.sym.clone()));
    ShapeClass {
        core,
        instr,
        abs,
        constraints: Vec::new(),
        partial_join: false,
        pointed_only: Default::default(),
        counters: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognition_is_up_to_bound_variable_names() {
        // as the SCG library writes them
        let lib_c = crate::scg::parse::parse_formula("TC(a, b: next(a, b))(v, v)")
            .unwrap_or_else(|e| panic!("{e:?}"));
        let lib_r = crate::scg::parse::parse_formula(
            "E u. pt[x](u) & (u == v | TC(a, b: next(a, b))(u, v))",
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        let c = PredDef {
            def: Some(lib_c),
            ..cyclic(&["next"])
        };
        let r = PredDef {
            def: Some(lib_r),
            ..reach("x", &["next"])
        };
        assert_eq!(recognize(&c), Some(Family::Cyclic(vec!["next".into()])));
        assert_eq!(
            recognize(&r),
            Some(Family::Reach("x".into(), vec!["next".into()]))
        );
        // free variables are not renamed: TC(..)(v, v) is not TC(..)(u, v)
        let bad = crate::scg::parse::parse_formula("TC(a, b: next(a, b))(u, v)")
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!alpha_eq(
            &bad,
            cyclic(&["next"]).def.as_ref().unwrap_or(&bad.clone()),
            &mut Vec::new()
        ));
    }
}
