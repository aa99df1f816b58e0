//! Assignments to pointer variables (`x = NULL`, `x = y`, `x = y->f`): `pt[x]` is
//! nullified, then set, each step changing it in one direction only.

use super::update::update;
use super::{deref, nonnull, pt_sym, target, AbstractError, Change, Dir};
use crate::tvla::coerce::{focus_all, FocusLit};
use crate::tvla::formula::Kleene;
use crate::tvla::structure::{Structure, Vocab};
use std::collections::BTreeSet;

/// `x = NULL`.
pub(super) fn assign_null(voc: &Vocab, ss: Vec<Structure>, x: &str) -> Vec<Structure> {
    let Some(px) = voc.pt(x) else { return ss };
    ss.into_iter()
        .filter_map(|t| nullify_pt(&t, px, x))
        .collect()
}

/// `x = y`.
pub(super) fn copy(voc: &Vocab, ss: Vec<Structure>, x: &str, y: &str) -> Vec<Structure> {
    let Some(px) = voc.pt(x) else { return ss };
    if x == y {
        return ss;
    }
    let py = voc.pt(y);
    ss.into_iter()
        .filter_map(|t| {
            let vals: Vec<Kleene> = (0..t.len())
                .map(|v| py.map_or(Kleene::Half, |py| t.get1(py, v)))
                .collect();
            let t = nullify_pt(&t, px, x)?;
            let copy = py.map(|_| (x.to_string(), y.to_string()));
            set_pt(&t, px, x, &vals, copy)
        })
        .collect()
}

/// `x = y->field`: a NULL dereference of `y` is reported; the target of `y`'s
/// `field` edge is materialised (focus) before `pt[x]` is set.
pub(super) fn load(
    voc: &Vocab,
    ss: Vec<Structure>,
    x: &str,
    y: &str,
    field: &str,
    errors: &mut BTreeSet<AbstractError>,
) -> Vec<Structure> {
    let py = voc.pt(y);
    let px = voc.pt(x);
    let pf = voc.field(field);
    let ss = deref(ss, y, py, errors);
    let ss = match (py, pf) {
        (Some(py), Some(pf)) => focus_all(ss, |t| target(t, py).map(|src| FocusLit::Succ(pf, src))),
        _ => ss,
    };
    let Some(px) = px else { return ss };
    ss.into_iter()
        .filter_map(|t| {
            let vals: Vec<Kleene> = (0..t.len())
                .map(|v| match (py, pf) {
                    (Some(py), Some(pf)) => (0..t.len()).fold(Kleene::False, |a, w| {
                        a.or(t.get1(py, w).and(t.get2(pf, w, v)))
                    }),
                    _ => Kleene::Half,
                })
                .collect();
            let load = py
                .and_then(|py| target(&t, py))
                .map(|n| (y.to_string(), field.to_string(), n));
            // `x = x->f`: nullifying x loses r[x], which the load reads
            let load_pre = (x == y).then(|| t.clone());
            let t = nullify_pt(&t, px, x)?;
            set_pt_load(&t, px, x, &vals, None, load, load_pre)
        })
        .collect()
}

pub(super) fn nullify_pt(t: &Structure, px: usize, x: &str) -> Option<Structure> {
    if nonnull(t, px) == Kleene::False {
        return Some(t.clone());
    }
    let mut post = t.clone();
    for v in 0..t.len() {
        post.set1(px, v, Kleene::False);
    }
    let mut ch = Change::with(pt_sym(x), Dir::Dec);
    ch.pt_cleared = target(t, px).map(|n| (x.to_string(), n));
    update(t, post, &ch)
}

/// `pt[x] := vals` on a structure where `pt[x]` is 0 everywhere.
pub(super) fn set_pt(
    t: &Structure,
    px: usize,
    x: &str,
    vals: &[Kleene],
    copy: Option<(String, String)>,
) -> Option<Structure> {
    set_pt_load(t, px, x, vals, copy, None, None)
}

/// [`set_pt`] for `x = y->field` (`load` = (y, field, y's node)).
pub(super) fn set_pt_load(
    t: &Structure,
    px: usize,
    x: &str,
    vals: &[Kleene],
    copy: Option<(String, String)>,
    load: Option<(String, String, usize)>,
    load_pre: Option<Structure>,
) -> Option<Structure> {
    if vals.iter().all(|k| *k == Kleene::False) {
        return Some(t.clone());
    }
    let mut post = t.clone();
    for (v, k) in vals.iter().enumerate() {
        post.set1(px, v, *k);
    }
    let mut ch = Change::with(pt_sym(x), Dir::Inc);
    ch.copy = copy;
    ch.load = load;
    ch.load_pre = load_pre;
    if let Some(n) = target(&post, px) {
        ch.pt_set = Some((x.to_string(), n));
    }
    update(t, post, &ch)
}
