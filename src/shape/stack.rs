//! Stack struct objects in the shape domain's memory checks (issue #32): the leak
//! checks ([`assume_no_leak`]) do not count the nodes of [`ShapeCpa::stack_vars`] as
//! heap objects, and `free` of a pointer that cannot alias one of them frees no stack
//! object ([`frees_no_stack_node`]).

use super::{tracked_vars, ShapeComp, ShapeCpa, ShapeState};
use crate::cfa::{Program, StructId, VarId};
use crate::tvla::{Kleene, PredSym};
use std::collections::BTreeSet;

/// The leak check `check` for the objects allocated as `of`: taken unless the type's
/// component proves that no object of it leaks. The stack variables of `cpa` tell
/// stack nodes apart everywhere; those of `roots` (the globals, and the locals of the
/// check's function except at its exit, where the frame ends) are also roots.
pub(super) fn assume_no_leak(
    cpa: &ShapeCpa,
    s: &mut ShapeState,
    check: crate::cfa::LeakCheck,
    of: Option<StructId>,
    roots: &BTreeSet<String>,
) {
    let Some(c) = of.and_then(|k| s.comps.get_mut(&k)) else {
        return;
    };
    let stack: BTreeSet<String> = cpa.stack_vars.keys().cloned().collect();
    if c.proves_no_leak(check, &stack, roots) {
        c.region = crate::tvla::ShapeRegion::empty(c.region.class.clone());
    } else if tracing::enabled!(tracing::Level::TRACE) {
        for st in c.region.structures() {
            tracing::trace!(
                "no proof of {check:?} (complete: {}, wild: {:?}): {st}",
                c.complete,
                c.wild_vars
            );
        }
    }
}

/// Whether `free(ptr)` (a `struct k *`) cannot free a stack object: every stack object
/// of `k` is the node of a variable of [`ShapeCpa::stack_vars`]
/// ([`ShapeCpa::stack_exact`]), each of them is tracked and `ptr` (tracked) may alias
/// none of them.
pub(super) fn frees_no_stack_node(
    cpa: &ShapeCpa,
    prog: &Program,
    s: &ShapeState,
    ptr: VarId,
    k: StructId,
) -> bool {
    let Some(c) = s.comps.get(&k) else {
        return false;
    };
    let Some(p) = prog.vars.get(ptr).map(|v| v.name.as_str()) else {
        return false;
    };
    let tracked = tracked_vars(c.class());
    let is_tracked = |x: &str| tracked.iter().any(|t| t == x);
    if !cpa.stack_exact.contains(&k) || !is_tracked(p) {
        return false;
    }
    prog.vars
        .iter()
        .filter(|v| cpa.stack_vars.contains_key(&v.name) && v.ty.pointee_struct() == Some(k))
        .all(|v| is_tracked(&v.name) && !may_alias(c, p, &v.name))
}

/// May the tracked variables `x` and `y` point to the same node in some structure
/// (always when one of them is wild)?
fn may_alias(c: &ShapeComp, x: &str, y: &str) -> bool {
    if x == y || c.wild_vars.contains(x) || c.wild_vars.contains(y) {
        return true;
    }
    let (xs, ys) = (PredSym::with("pt", &[x]), PredSym::with("pt", &[y]));
    c.region.structures().any(|s| {
        (0..s.len())
            .any(|v| s.value(&xs, &[v]) != Kleene::False && s.value(&ys, &[v]) != Kleene::False)
    })
}
