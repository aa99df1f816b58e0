//! The order of an integer field's values along a segment.
//!
//! A segment's integer facts ([`super::Facts`]) say which values its objects hold,
//! not where: a list of black objects where every red one is followed by a black one
//! (`B (B | R B)*`) and a list of any colours have the same facts. An [`Order`] of
//! field `f` says, of the objects c₁ … cₙ of a segment, that c₁.f is one of `first`,
//! cₙ.f one of `last`, and every adjacent pair (cᵢ.f, cᵢ₊₁.f) one of `pairs`: the
//! segment's sequence of values is a word of the language of those 2-grams. It is
//! the symbolic heaps' counterpart of a three-valued structure whose `red` summary
//! node has no `next` edge to itself.
//!
//! Folding ([`super::fold`]) composes the orders of the pieces it merges, in chain
//! order ([`then`]): a lone object with value v is `({v}, {v}, {})`. Unfolding
//! ([`first_cases`], [`last_cases`], [`two_cases`], [`one_case`]) splits on the value
//! of the object it materialises, so that the rest of the segment starts with one of
//! that value's successors. Entailment composes the covered chain's orders and asks
//! for inclusion ([`entails`]). Only the fields [`super::fold::SymPrec::order`] names
//! get orders; an order that says no more than the facts is dropped ([`normalize`]).

use super::{Atom, Facts, Val};
use serde::{Deserialize, Serialize};

/// The values of one integer field along a segment (module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Order {
    /// The field (an integer field of the segment's struct with a fact).
    pub field: usize,
    /// The values the first object may hold, ascending.
    pub first: Vec<i64>,
    /// The values the last object may hold, ascending.
    pub last: Vec<i64>,
    /// The pairs of values adjacent objects may hold, ascending.
    pub pairs: Vec<(i64, i64)>,
}

/// A segment's orders, ascending by field, at most one per field.
pub type Orders = Vec<Order>;

/// At most this many states from one unfolding's choices of values; beyond, the
/// object gets the set of its possible values and the rest of the segment the
/// successors of all of them.
pub const MAX_CASES: usize = 8;

fn set(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v.dedup();
    v
}

fn inter(a: &[i64], b: &[i64]) -> Vec<i64> {
    a.iter().copied().filter(|x| b.contains(x)).collect()
}

impl Order {
    /// The order that says nothing beyond "every value is one of `vals`".
    pub fn any(field: usize, vals: &[i64]) -> Order {
        Order {
            field,
            first: vals.to_vec(),
            last: vals.to_vec(),
            pairs: vals
                .iter()
                .flat_map(|&a| vals.iter().map(move |&b| (a, b)))
                .collect(),
        }
    }

    /// The order of one object whose field holds one of `vals`.
    pub fn one(field: usize, vals: &[i64]) -> Order {
        Order {
            field,
            first: vals.to_vec(),
            last: vals.to_vec(),
            pairs: Vec::new(),
        }
    }

    /// The values that may follow one of `vals`.
    pub fn succ(&self, vals: &[i64]) -> Vec<i64> {
        set(self
            .pairs
            .iter()
            .filter(|p| vals.contains(&p.0))
            .map(|p| p.1)
            .collect())
    }

    /// The values that may precede one of `vals`.
    pub fn pred(&self, vals: &[i64]) -> Vec<i64> {
        set(self
            .pairs
            .iter()
            .filter(|p| vals.contains(&p.1))
            .map(|p| p.0)
            .collect())
    }

    /// Renders as `f:first<pairs>last`, e.g. `colour:{1}<0→1,1→0,1→1>{1}`.
    pub fn render(&self, name: &str) -> String {
        let vals = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let pairs: Vec<String> = self.pairs.iter().map(|(a, b)| format!("{a}→{b}")).collect();
        format!(
            "{name}:{{{}}}<{}>{{{}}}",
            vals(&self.first),
            pairs.join(","),
            vals(&self.last)
        )
    }
}

/// The order of field `f` along piece `a` (an object or a segment), or `None` if it
/// has no fact of `f`: an object's value (set) is its first and last, a segment
/// without an order of `f` has any order of its facts' values.
pub fn of_piece(a: &Atom, f: usize) -> Option<Order> {
    match a {
        Atom::Pt { fields, data, .. } => match fields.get(f) {
            Some(Val::Int(k)) => Some(Order::one(f, &[*k])),
            _ => data
                .iter()
                .find(|(g, _)| *g == f)
                .map(|(_, ks)| Order::one(f, ks)),
        },
        Atom::Ls { data, order, .. } | Atom::Dls { data, order, .. } => {
            if let Some(o) = order.iter().find(|o| o.field == f) {
                return Some(o.clone());
            }
            data.iter()
                .find(|(g, _)| *g == f)
                .map(|(_, ks)| Order::any(f, ks))
        }
        Atom::Block { .. } => None,
    }
}

/// The order of the chain `a` then `b` (`b`'s first object follows `a`'s last).
pub fn then(a: &Order, b: &Order) -> Order {
    let mut pairs: Vec<(i64, i64)> = a.pairs.iter().chain(&b.pairs).copied().collect();
    pairs.extend(
        a.last
            .iter()
            .flat_map(|&x| b.first.iter().map(move |&y| (x, y))),
    );
    pairs.sort_unstable();
    pairs.dedup();
    Order {
        field: a.field,
        first: a.first.clone(),
        last: b.last.clone(),
        pairs,
    }
}

/// The orders of the fields `fields` along the chain of `pieces` (in chain order);
/// a field some piece has no fact of gets none.
pub fn of_chain(pieces: &[&Atom], fields: impl IntoIterator<Item = usize>) -> Orders {
    let mut out = Vec::new();
    'field: for f in fields {
        let mut acc: Option<Order> = None;
        for a in pieces {
            let Some(o) = of_piece(a, f) else {
                continue 'field;
            };
            acc = Some(match acc {
                None => o,
                Some(x) => then(&x, &o),
            });
        }
        out.extend(acc);
    }
    out
}

/// Whether every sequence `s` allows is one `t` allows (same field).
pub fn entails(s: &Order, t: &Order) -> bool {
    s.field == t.field
        && s.first.iter().all(|x| t.first.contains(x))
        && s.last.iter().all(|x| t.last.contains(x))
        && s.pairs.iter().all(|p| t.pairs.binary_search(p).is_ok())
}

/// The normal form of a segment's orders given its facts `data`: orders of fields
/// without a fact are dropped, the rest cut to the fact's values, and an order that
/// says no more than the fact (every value first and last, every pair) is dropped.
pub fn normalize(data: &Facts, orders: &mut Orders) {
    orders.retain_mut(|o| {
        let Some((_, vals)) = data.iter().find(|(g, _)| *g == o.field) else {
            return false;
        };
        o.first = set(inter(&o.first, vals));
        o.last = set(inter(&o.last, vals));
        o.pairs
            .retain(|(a, b)| vals.contains(a) && vals.contains(b));
        o.pairs.sort_unstable();
        o.pairs.dedup();
        *o != Order::any(o.field, vals)
    });
    orders.sort();
    orders.dedup_by(|a, b| a.field == b.field);
}

/// Checks that a segment's orders read from a certificate are in normal form for its
/// facts (see [`normalize`]).
pub fn check(data: &Facts, orders: &Orders) -> Result<(), String> {
    let mut norm = orders.clone();
    normalize(data, &mut norm);
    if norm != *orders || orders.windows(2).any(|w| w[0].field >= w[1].field) {
        return Err("a segment's orders are not in normal form".into());
    }
    Ok(())
}

/// `data` with field `f`'s values replaced by `vals` (an object's facts).
fn with(data: &Facts, f: usize, vals: Vec<i64>) -> Facts {
    let mut out: Facts = data.iter().filter(|(g, _)| *g != f).cloned().collect();
    out.push((f, vals));
    out.sort();
    out
}

/// Every combination of one choice per order (the product), or `None` if more than
/// [`MAX_CASES`].
fn product<T: Clone>(per: Vec<Vec<T>>) -> Option<Vec<Vec<T>>> {
    let n: usize = per
        .iter()
        .map(Vec::len)
        .try_fold(1usize, |a, b| a.checked_mul(b))?;
    if n > MAX_CASES {
        return None;
    }
    let mut out: Vec<Vec<T>> = vec![Vec::new()];
    for choices in per {
        out = out
            .into_iter()
            .flat_map(|pre| {
                choices.iter().map(move |c| {
                    let mut v = pre.clone();
                    v.push(c.clone());
                    v
                })
            })
            .collect();
    }
    Some(out)
}

/// The facts of a segment's only object (the segment is one object): its values are
/// first and last. `None` if no value is both (the segment is longer).
pub fn one_case(data: &Facts, orders: &Orders) -> Option<Facts> {
    let mut d = data.clone();
    for o in orders {
        let vals = inter(&o.first, &o.last);
        if vals.is_empty() {
            return None;
        }
        d = with(&d, o.field, vals);
    }
    Some(d)
}

/// The ways to unfold a segment's first object when the segment goes on: the
/// object's facts and the rest's orders (starting with a successor of the object's
/// value), one per choice of values (or one with sets, past [`MAX_CASES`]).
pub fn first_cases(data: &Facts, orders: &Orders) -> Vec<(Facts, Orders)> {
    split_end(
        data,
        orders,
        |o| &o.first,
        |o, v| o.succ(v),
        |o, vals| Order {
            first: vals,
            ..o.clone()
        },
    )
}

/// The mirror of [`first_cases`] for a doubly-linked segment's last object: the
/// rest ends with a predecessor of its value.
pub fn last_cases(data: &Facts, orders: &Orders) -> Vec<(Facts, Orders)> {
    split_end(
        data,
        orders,
        |o| &o.last,
        |o, v| o.pred(v),
        |o, vals| Order {
            last: vals,
            ..o.clone()
        },
    )
}

fn split_end(
    data: &Facts,
    orders: &Orders,
    end: impl Fn(&Order) -> &Vec<i64>,
    next: impl Fn(&Order, &[i64]) -> Vec<i64>,
    rest: impl Fn(&Order, Vec<i64>) -> Order,
) -> Vec<(Facts, Orders)> {
    if orders.is_empty() {
        return vec![(data.clone(), Vec::new())];
    }
    // per order: the object's values that have a neighbour in the rest
    let per: Vec<Vec<i64>> = orders
        .iter()
        .map(|o| {
            end(o)
                .iter()
                .copied()
                .filter(|v| !next(o, &[*v]).is_empty())
                .collect()
        })
        .collect();
    let build = |choice: &[Vec<i64>]| -> Option<(Facts, Orders)> {
        let mut d = data.clone();
        let mut rs = Vec::new();
        for (o, vals) in orders.iter().zip(choice) {
            if vals.is_empty() {
                return None;
            }
            d = with(&d, o.field, vals.clone());
            rs.push(rest(o, next(o, vals)));
        }
        Some((d, rs))
    };
    match product(
        per.iter()
            .map(|vs| vs.iter().map(|v| vec![*v]).collect())
            .collect(),
    ) {
        Some(choices) => choices.iter().filter_map(|c| build(c)).collect(),
        None => build(&per).into_iter().collect(),
    }
}

/// The facts of a doubly-linked segment's two objects when it has exactly two: a
/// first value, a last value, and the pair of them.
pub fn two_cases(data: &Facts, orders: &Orders) -> Vec<(Facts, Facts)> {
    if orders.is_empty() {
        return vec![(data.clone(), data.clone())];
    }
    let per: Vec<Vec<(i64, i64)>> = orders
        .iter()
        .map(|o| {
            o.pairs
                .iter()
                .copied()
                .filter(|(a, b)| o.first.contains(a) && o.last.contains(b))
                .collect()
        })
        .collect();
    if per.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    let build = |choice: &[Vec<(i64, i64)>]| -> (Facts, Facts) {
        let (mut d1, mut d2) = (data.clone(), data.clone());
        for (o, ps) in orders.iter().zip(choice) {
            d1 = with(&d1, o.field, set(ps.iter().map(|p| p.0).collect()));
            d2 = with(&d2, o.field, set(ps.iter().map(|p| p.1).collect()));
        }
        (d1, d2)
    };
    match product(
        per.iter()
            .map(|ps| ps.iter().map(|p| vec![*p]).collect())
            .collect(),
    ) {
        Some(choices) => choices.iter().map(|c| build(c)).collect(),
        None => vec![build(&per)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rb() -> Order {
        // B (B | R B)*, B = 1, R = 0
        Order {
            field: 1,
            first: vec![1],
            last: vec![1],
            pairs: vec![(0, 1), (1, 0), (1, 1)],
        }
    }

    #[test]
    fn composing_objects_gives_the_pairs_they_form() {
        let b = Order::one(1, &[1]);
        let r = Order::one(1, &[0]);
        let o = then(&then(&then(&b, &r), &b), &b);
        assert_eq!(o.first, vec![1]);
        assert_eq!(o.last, vec![1]);
        assert_eq!(o.pairs, vec![(0, 1), (1, 0), (1, 1)]);
        assert!(entails(&o, &rb()));
        assert!(!entails(&then(&r, &r), &rb()));
    }

    #[test]
    fn unfolding_a_red_object_leaves_a_rest_starting_black() {
        let data: Facts = vec![(1, vec![0, 1])];
        let rest = vec![Order {
            first: vec![0, 1],
            ..rb()
        }];
        let cases = first_cases(&data, &rest);
        assert_eq!(cases.len(), 2);
        let red = cases.iter().find(|c| c.0 == vec![(1, vec![0])]).unwrap();
        assert_eq!(red.1[0].first, vec![1]);
        // a red object is never the last
        assert_eq!(one_case(&data, &rest), Some(vec![(1, vec![1])]));
        assert_eq!(
            one_case(
                &data,
                &vec![Order {
                    last: vec![0],
                    ..rb()
                }]
            ),
            None
        );
    }

    #[test]
    fn two_objects_are_an_allowed_pair() {
        let data: Facts = vec![(1, vec![0, 1])];
        let two = two_cases(&data, &vec![rb()]);
        // first and last black: only 1→1
        assert_eq!(two, vec![(vec![(1, vec![1])], vec![(1, vec![1])])]);
    }

    #[test]
    fn past_the_case_limit_the_object_gets_a_set_and_the_rest_all_successors() {
        // two fields of three values: 9 choices of a first object, more than MAX_CASES
        let cyc = |f: usize| Order {
            field: f,
            first: vec![0, 1, 2],
            last: vec![0, 1, 2],
            pairs: vec![(0, 1), (1, 2), (2, 0)],
        };
        let data: Facts = vec![(1, vec![0, 1, 2]), (2, vec![0, 1, 2])];
        let orders = vec![cyc(1), cyc(2)];
        let cases = first_cases(&data, &orders);
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].0, data);
        assert!(cases[0].1.iter().all(|o| o.first == vec![0, 1, 2]));
        // with one field the three choices are kept apart
        let one = first_cases(&vec![(1, vec![0, 1, 2])], &vec![cyc(1)]);
        assert_eq!(one.len(), 3);
        let two = two_cases(&data, &orders);
        assert_eq!(two.len(), 1);
        assert_eq!(two[0], (data.clone(), data.clone()));
    }

    #[test]
    fn normal_form_drops_what_the_facts_say() {
        let data: Facts = vec![(1, vec![0, 1])];
        let mut o = vec![Order::any(1, &[0, 1])];
        normalize(&data, &mut o);
        assert!(o.is_empty());
        let mut o = vec![rb(), Order::one(2, &[3])];
        normalize(&data, &mut o);
        assert_eq!(o, vec![rb()]);
        assert!(check(&data, &o).is_ok());
        assert!(check(&data, &vec![Order::any(1, &[0, 1])]).is_err());
    }
}
