//! The value of an integer field at a pointer's node, split out for the explicit domain
//! ([`split_field_value`]).

use super::{assertions, exact, field_name, run, var_name, PtrOp, VSet, UNKNOWN};
use crate::cfa::{FieldRef, Program, VarId};
use crate::shape::ShapeState;

/// `s` split by the value of `ptr->field` (an integer field) that the class's
/// assertions `field == k` decide: one state per `k` in which the assertion can hold
/// at `ptr`'s node (made definite there), paired with `Some(k)`, and one state in which
/// none of them holds, paired with `None`. Without equalities, a small range of the
/// assertions (`lo <= field`, `field <= hi`, at most [`SPLIT_RANGE_MAX`] values) gives
/// one state per value in it (the range made definite at `ptr`'s node, the same for
/// each value) and the states outside it with `None`. The states together represent
/// exactly the heaps of `s`. Without such assertions, or when `ptr` is not tracked
/// exactly, the answer is `[(None, s)]`.
pub(in crate::shape) fn split_field_value(
    prog: &Program,
    s: &ShapeState,
    ptr: VarId,
    field: FieldRef,
) -> Vec<(Option<i64>, ShapeState)> {
    let x = var_name(prog, ptr).to_string();
    let fname = field_name(prog, field).unwrap_or(UNKNOWN);
    let eqs: Vec<(String, i64)> = match s.comps.get(&field.strukt) {
        Some(c) if exact(c, &x) => assertions(&c.region.class)
            .into_iter()
            .filter_map(|(a, parsed)| match parsed? {
                (f, VSet::Range(lo, hi)) if f == fname && lo == hi => {
                    Some((a, i64::try_from(lo).ok()?))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let assume = |t: &mut ShapeState, a: &str, positive: bool| {
        if let Some(c) = t.comps.get_mut(&field.strukt) {
            run(
                c,
                &PtrOp::AssumeField {
                    x: x.clone(),
                    assertion: a.to_string(),
                    positive,
                },
            );
        }
    };
    if eqs.is_empty() {
        return match small_range(s, &x, fname, field) {
            // `lo <= f` and `f <= hi` at ptr: one state per value (the structures cannot
            // hold it), one where the value lies below, one where it lies above
            Some((lo_a, lo, hi_a, hi)) => {
                let mut inside = s.clone();
                assume(&mut inside, &lo_a, true);
                assume(&mut inside, &hi_a, true);
                let mut out = Vec::new();
                if !inside.is_bottom() {
                    out.extend((lo..=hi).map(|k| (Some(k), inside.clone())));
                }
                let mut below = s.clone();
                assume(&mut below, &lo_a, false);
                let mut above = s.clone();
                assume(&mut above, &lo_a, true);
                assume(&mut above, &hi_a, false);
                out.extend(
                    [below, above]
                        .into_iter()
                        .filter(|t| !t.is_bottom())
                        .map(|t| (None, t)),
                );
                out
            }
            None => vec![(None, s.clone())],
        };
    }
    let mut out = Vec::new();
    let mut rest = s.clone();
    for (a, k) in &eqs {
        let mut t = s.clone();
        assume(&mut t, a, true);
        // the value is k, so it is none of the other constants
        for (a2, _) in eqs.iter().filter(|(_, k2)| k2 != k) {
            assume(&mut t, a2, false);
        }
        if !t.is_bottom() {
            out.push((Some(*k), t));
        }
        assume(&mut rest, a, false);
    }
    if !rest.is_bottom() {
        out.push((None, rest));
    }
    out
}

/// The widest values a range of the class's assertions may hand the explicit domain
/// one by one ([`split_field_value`]).
const SPLIT_RANGE_MAX: i128 = 8;

/// The tightest range `f >= lo`, `f <= hi` of the class's assertions on `fname` (the
/// two assertion texts and the bounds) when `x` is tracked exactly and the range holds
/// at most [`SPLIT_RANGE_MAX`] values.
fn small_range(
    s: &ShapeState,
    x: &str,
    fname: &str,
    field: FieldRef,
) -> Option<(String, i64, String, i64)> {
    let c = s.comps.get(&field.strukt).filter(|c| exact(c, x))?;
    const MIN: i128 = i64::MIN as i128;
    const MAX: i128 = i64::MAX as i128;
    let mut lo: Option<(String, i128)> = None;
    let mut hi: Option<(String, i128)> = None;
    for (a, parsed) in assertions(&c.region.class) {
        match parsed {
            Some((f, VSet::Range(l, MAX)))
                if f == fname && l > MIN && lo.as_ref().is_none_or(|(_, b)| l > *b) =>
            {
                lo = Some((a, l));
            }
            Some((f, VSet::Range(MIN, h)))
                if f == fname && h < MAX && hi.as_ref().is_none_or(|(_, b)| h < *b) =>
            {
                hi = Some((a, h));
            }
            _ => {}
        }
    }
    let ((lo_a, l), (hi_a, h)) = (lo?, hi?);
    if l > h || h - l >= SPLIT_RANGE_MAX {
        return None;
    }
    Some((lo_a, i64::try_from(l).ok()?, hi_a, i64::try_from(h).ok()?))
}
