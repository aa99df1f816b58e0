//! Assignments to pointer variables (`x = NULL`, `x = y`, `x = y->f`): `pt[x]` is
//! nullified, then set, each step changing it in one direction only.

use super::update::update;
use super::{nonnull, pt_sym, target, Change, Dir};
use crate::tvla::formula::Kleene;
use crate::tvla::structure::Structure;

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
