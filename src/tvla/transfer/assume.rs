//! Assumptions: pointer (in)equalities, NULL tests and field assertions filter the
//! structures (after focusing on what they test).

use super::{deref, focus_pt, nonnull, target, AbstractError};
use crate::tvla::coerce::coerce_after;
use crate::tvla::formula::{Kleene, PredSym};
use crate::tvla::structure::{Structure, Vocab};
use std::collections::BTreeSet;

/// `assume(x == y)` (`want_eq`) or `assume(x != y)`.
pub(super) fn assume_eq(
    voc: &Vocab,
    ss: Vec<Structure>,
    x: &str,
    y: &str,
    want_eq: bool,
) -> Vec<Structure> {
    let (Some(px), Some(py)) = (voc.pt(x), voc.pt(y)) else {
        return ss;
    };
    focus_pt(focus_pt(ss, Some(px)), Some(py))
        .into_iter()
        .filter(|t| {
            let both =
                (0..t.len()).fold(Kleene::False, |a, v| a.or(t.get1(px, v).and(t.get1(py, v))));
            let nulls = nonnull(t, px).negate().and(nonnull(t, py).negate());
            let eq = both.or(nulls);
            if want_eq {
                eq != Kleene::False
            } else {
                eq != Kleene::True
            }
        })
        .collect()
}

/// `assume(x == NULL)` (`want_null`) or `assume(x != NULL)`.
pub(super) fn assume_null(
    voc: &Vocab,
    ss: Vec<Structure>,
    x: &str,
    want_null: bool,
) -> Vec<Structure> {
    let Some(px) = voc.pt(x) else { return ss };
    focus_pt(ss, Some(px))
        .into_iter()
        .filter_map(|t| {
            let k = nonnull(&t, px);
            if want_null {
                if k == Kleene::True {
                    return None;
                }
                let mut u = t.clone();
                for v in 0..t.len() {
                    u.set1(px, v, Kleene::False);
                }
                coerce_after(&t, u)
            } else {
                (k != Kleene::False).then_some(t)
            }
        })
        .collect()
}

/// `assume(φ(x))` for the field assertion `φ` (`positive`) or `assume(!φ(x))`: a
/// refinement of x's node, the instrumentation values stay.
pub(super) fn assume_field(
    voc: &Vocab,
    ss: Vec<Structure>,
    x: &str,
    assertion: &str,
    positive: bool,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    let px = voc.pt(x);
    let ss = deref(ss, x, px, errors);
    let fsym = PredSym::with("fd", &[assertion]);
    let (Some(px), Some((1, pfd))) = (px, voc.lookup(&fsym)) else {
        return ss;
    };
    let want = Kleene::from_bool(positive);
    ss.into_iter()
        .filter_map(|t| {
            let holds = (0..t.len()).fold(Kleene::False, |a, v| {
                let f = t.get1(pfd, v);
                let lit = if positive { f } else { f.negate() };
                a.or(t.get1(px, v).and(lit))
            });
            if holds == Kleene::False {
                return None;
            }
            let Some(n) = target(&t, px) else {
                return Some(t);
            };
            if t.get1(pfd, n) == want {
                return Some(t);
            }
            let mut post = t.clone();
            post.set1(pfd, n, want);
            // definite assertions of one field that no integer satisfies
            // (`data >= 0`, `data <= 1`, `!(data == 0)`, `!(data == 1)`): no
            // cell is like that, and every node stands for at least one cell
            if !field_facts_satisfiable(&post, voc, n) {
                return None;
            }
            // a refinement, not a state change: instrumentation values stay
            coerce_after(&t, post)
        })
        .collect()
}

/// Whether some integer values of the data fields satisfy every definite field
/// assertion of node `n` (`fd[f rel c]` true: `f rel c`; false: its negation), field by
/// field: an interval from the bounds and equalities, minus the excluded values.
/// Assertions that are not `FIELD REL CONST` are ignored (satisfiable).
pub(crate) fn field_facts_satisfiable(t: &Structure, voc: &Vocab, n: usize) -> bool {
    use std::collections::BTreeMap;
    // per field: [lo, hi] and the values `!=` excludes
    let mut ranges: BTreeMap<&str, (i128, i128, Vec<i128>)> = BTreeMap::new();
    for (i, p) in voc.unary.iter().enumerate() {
        if p.name != "fd" || p.params.len() != 1 {
            continue;
        }
        let truth = match t.get1(i, n) {
            Kleene::True => true,
            Kleene::False => false,
            Kleene::Half => continue,
        };
        let parts: Vec<&str> = p.params[0].split_whitespace().collect();
        let [field, rel, c] = parts.as_slice() else {
            continue;
        };
        let Ok(c) = c.parse::<i64>() else { continue };
        let c = i128::from(c);
        let rel = match (*rel, truth) {
            ("==", true) | ("!=", false) => "==",
            ("!=", true) | ("==", false) => "!=",
            ("<", true) | (">=", false) => "<",
            ("<=", true) | (">", false) => "<=",
            (">", true) | ("<=", false) => ">",
            (">=", true) | ("<", false) => ">=",
            _ => continue,
        };
        let r = ranges
            .entry(field)
            .or_insert((i128::MIN, i128::MAX, Vec::new()));
        match rel {
            "==" => {
                r.0 = r.0.max(c);
                r.1 = r.1.min(c);
            }
            "!=" => r.2.push(c),
            "<" => r.1 = r.1.min(c - 1),
            "<=" => r.1 = r.1.min(c),
            ">" => r.0 = r.0.max(c + 1),
            _ => r.0 = r.0.max(c),
        }
    }
    ranges.values().all(|(lo, hi, out)| {
        if lo > hi {
            return false;
        }
        // a short interval may be excluded value by value
        match hi.checked_sub(*lo) {
            Some(w) if w < 64 => (*lo..=*hi).any(|v| !out.contains(&v)),
            _ => true,
        }
    })
}
