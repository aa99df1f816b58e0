//! Allocation and deallocation: `x = malloc(..)` adds a node, `free(x)` removes x's.

use super::assign::{nullify_pt, set_pt};
use super::update::update;
use super::{focus_pt, nonnull, target, Change, Dir, Domain};
use crate::tvla::formula::Kleene;
use crate::tvla::structure::{Structure, Vocab};

/// `x = malloc(..)`: a new cell with NULL pointer fields and unknown field
/// assertions, pointed to by `x` alone.
pub(super) fn malloc(voc: &Vocab, ss: Vec<Structure>, x: &str) -> Vec<Structure> {
    let px = voc.pt(x);
    ss.into_iter()
        .filter_map(|t| {
            let mut post = t.clone();
            let k = post.add_node(Kleene::False);
            for (i, p) in voc.unary.iter().enumerate() {
                if p.name == "fd" {
                    post.set1(i, k, Kleene::Half);
                }
            }
            let mut ch = Change::new();
            ch.domain = Domain::Added(k);
            for (i, p) in voc.unary.iter().enumerate() {
                if p.name == "fd" {
                    ch.dirs.insert(voc.unary[i].clone(), Dir::Both);
                }
            }
            let t2 = update(&t, post, &ch)?;
            // x untracked: the new cell exists, no tracked pointer points to it
            let Some(px) = px else { return Some(t2) };
            let t3 = nullify_pt(&t2, px, x)?;
            let mut vals = vec![Kleene::False; t3.len()];
            vals[k] = Kleene::True;
            set_pt(&t3, px, x, &vals, None)
        })
        .collect()
}

/// `free(x)`: the cell leaves the universe (`free(NULL)` is a no-op).
pub(super) fn free(voc: &Vocab, ss: Vec<Structure>, x: &str) -> Vec<Structure> {
    let Some(px) = voc.pt(x) else { return ss };
    focus_pt(ss, Some(px))
        .into_iter()
        .filter_map(|t| {
            if nonnull(&t, px) == Kleene::False {
                return Some(t); // free(NULL)
            }
            let Some(r) = target(&t, px) else {
                tracing::warn!("free: target of {x} not definite; left unchanged");
                return Some(t);
            };
            let post = t.remove_node(r);
            // every tuple of the remaining nodes keeps its value: only the
            // universe shrinks (so e.g. a universal definition can only become
            // more true, and keeps its 1s)
            let mut ch = Change::new();
            ch.domain = Domain::Removed(r);
            update(&t, post, &ch)
        })
        .collect()
}
