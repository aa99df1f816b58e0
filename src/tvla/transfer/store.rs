//! Stores into fields: pointer fields (`x->f = NULL`, `x->f = y`: the edge is removed,
//! then inserted) and the unary predicates of data fields (`SetField`, `SetUnary`).

use super::update::update;
use super::{deref, focus_pt, target, AbstractError, Change, Dir};
use crate::tvla::formula::{Kleene, PredSym};
use crate::tvla::structure::{Structure, Vocab};
use std::collections::BTreeSet;

/// `x->field = NULL`.
pub(super) fn store_null(
    voc: &Vocab,
    ss: Vec<Structure>,
    x: &str,
    field: &str,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    let px = voc.pt(x);
    let ss = deref(ss, x, px, errors);
    let Some(pf) = voc.field(field) else {
        return ss;
    };
    let Some(px) = px else {
        // x untracked: any node may be x's target
        return ss
            .into_iter()
            .filter_map(|t| havoc_field(&t, pf, field, |_| Kleene::False))
            .collect();
    };
    ss.into_iter()
        .filter_map(|t| nullify_field(&t, pf, field, px))
        .collect()
}

/// `x->field = y`.
pub(super) fn store(
    voc: &Vocab,
    ss: Vec<Structure>,
    x: &str,
    field: &str,
    y: &str,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    let px = voc.pt(x);
    let py = voc.pt(y);
    let ss = deref(ss, x, px, errors);
    let ss = focus_pt(ss, py);
    let Some(pf) = voc.field(field) else {
        return ss;
    };
    let Some(px) = px else {
        // x untracked: any node may be x's target
        return ss
            .into_iter()
            .filter_map(|t| {
                let ys: Vec<Kleene> = (0..t.len())
                    .map(|b| py.map_or(Kleene::Half, |py| t.get1(py, b)))
                    .collect();
                havoc_field(&t, pf, field, |b| ys[b])
            })
            .collect();
    };
    ss.into_iter()
        .filter_map(|t| {
            let t = nullify_field(&t, pf, field, px)?;
            insert_field(&t, pf, field, px, py)
        })
        .collect()
}

/// `f(a, b) := f(a, b) & !pt[x](a)`
pub(super) fn nullify_field(t: &Structure, pf: usize, field: &str, px: usize) -> Option<Structure> {
    let mut post = t.clone();
    let mut any = false;
    for a in 0..t.len() {
        let p = t.get1(px, a);
        if p == Kleene::False {
            continue;
        }
        for b in 0..t.len() {
            let old = t.get2(pf, a, b);
            let k = old.and(p.negate());
            if k != old {
                any = true;
                post.set2(pf, a, b, k);
            }
        }
    }
    if !any {
        return Some(post);
    }
    let mut ch = Change::with(PredSym::plain(field), Dir::Dec);
    ch.delete = target(t, px).map(|nx| (field.to_string(), nx));
    update(t, post, &ch)
}

/// `f(a, b) := f(a, b) | pt[x](a) & pt[y](b)` (y untracked: unknown target)
pub(super) fn insert_field(
    t: &Structure,
    pf: usize,
    field: &str,
    px: usize,
    py: Option<usize>,
) -> Option<Structure> {
    let mut post = t.clone();
    let mut any = false;
    for a in 0..t.len() {
        let p = t.get1(px, a);
        if p == Kleene::False {
            continue;
        }
        for b in 0..t.len() {
            let yb = py.map_or(Kleene::Half, |py| t.get1(py, b));
            let old = t.get2(pf, a, b);
            let k = old.or(p.and(yb));
            if k != old {
                any = true;
                post.set2(pf, a, b, k);
            }
        }
    }
    if !any {
        return Some(post);
    }
    let mut ch = Change::with(PredSym::plain(field), Dir::Inc);
    if let (Some(nx), Some(py)) = (target(t, px), py) {
        if let Some(ny) = target(t, py) {
            ch.insert = Some((field.to_string(), nx, ny));
        }
    }
    update(t, post, &ch)
}

/// A write of `x->field` through an untracked `x`: every node may be the written one,
/// so `f(a, b) := f(a, b) ⊔ new(b)` for every `a` (`new(b)`: the value the written
/// field has towards `b`).
pub(super) fn havoc_field(
    t: &Structure,
    pf: usize,
    field: &str,
    new: impl Fn(usize) -> Kleene,
) -> Option<Structure> {
    let mut post = t.clone();
    let mut any = false;
    for a in 0..t.len() {
        for b in 0..t.len() {
            let old = t.get2(pf, a, b);
            let k = old.join(new(b));
            if k != old {
                any = true;
                post.set2(pf, a, b, k);
            }
        }
    }
    if !any {
        return Some(post);
    }
    update(t, post, &Change::with(PredSym::plain(field), Dir::Both))
}

/// Updates the instrumentation predicates of `post` (core predicates already updated
/// from `pre` as described by `ch`), then coerces.
/// `SetField` / `SetUnary`: after a dereference of `x`, the unary predicate `sym` is
/// `value` on x's node (joined with its old value where x only may point; on every
/// node when x is untracked). No-op on structures without `sym`.
pub(super) fn set_unary(
    ss: Vec<Structure>,
    voc: &Vocab,
    x: &str,
    sym: PredSym,
    value: Kleene,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    let px = voc.pt(x);
    let ss = deref(ss, x, px, errors);
    let Some((1, pi)) = voc.lookup(&sym) else {
        return ss;
    };
    ss.into_iter()
        .filter_map(|t| {
            let mut post = t.clone();
            for v in 0..t.len() {
                // x untracked: any node may be x's target
                let p = px.map_or(Kleene::Half, |px| t.get1(px, v));
                let k = p.and(value).or(p.negate().and(t.get1(pi, v)));
                post.set1(pi, v, k);
            }
            update(&t, post, &Change::with(sym.clone(), Dir::Both))
        })
        .collect()
}
