//! Counting: node cardinalities of a structure, related to program integer variables
//! (the class's [`ShapeClass::counters`]) by affine equalities ([`Affine`]).
//!
//! Layout of a structure's counts: unknowns `0..nv` are the counters in class order,
//! unknowns `nv..nv+n` the cardinalities `c_u` of nodes `u = 0..n` (every node stands
//! for at least one cell; a non-summary node for exactly one, which [`structural`]
//! adds). The inequalities `c_u ≥ 1` are not representable here; the shape domain
//! adds them when it decides a comparison (`shape::ops`).
//!
//! The transfer follows the provenance masks [`Structure::origins`]: after
//! [`super::transfer::post`], output node `v` holds cells of the input nodes in its
//! mask. Grouping input nodes, output nodes and removed cells into connected
//! components of "shares a cell with", the cells of each component are conserved:
//! `Σ c_k (inputs) + [allocated] = Σ c'_v (outputs) + #removed`. This is exact for
//! focus (a node split in two), blur (nodes merged) and free (one cell gone).

use super::class::ShapeClass;
use super::structure::{Structure, ORIGIN_NEW};
use crate::affine::Affine;

/// The counts of a structure with nothing known about the counters.
pub fn initial(class: &ShapeClass, s: &Structure) -> Option<Affine> {
    if class.counters.is_empty() {
        return None;
    }
    Some(structural(
        &Affine::top(class.counters.len() + s.len()),
        class.counters.len(),
        s,
    ))
}

/// `a` with `c_u = 1` for every non-summary node `u` of `s`.
pub fn structural(a: &Affine, nv: usize, s: &Structure) -> Affine {
    let mut a = a.clone();
    for u in 0..s.len() {
        if !s.is_summary(u) {
            let mut r = vec![0; a.dims()];
            r[nv + u] = 1;
            a.add_eq(&r, 1);
        }
    }
    a
}

/// A cheap test of `c_u ≥ 1` against the equalities: true if some equality over
/// node cardinalities only, with coefficients of one sign, cannot hold when every
/// cardinality is at least 1 (e.g. `c₃ + c₅ = 1`). Such counts describe no heap.
pub fn contradicts_nonempty_nodes(a: &Affine, nv: usize) -> bool {
    if a.is_bottom() {
        return true;
    }
    a.rows().iter().any(|r| {
        let (coeffs, k) = (&r[..a.dims()], r[a.dims()]);
        if coeffs[..nv.min(coeffs.len())].iter().any(|&c| c != 0) {
            return false;
        }
        let nodes = &coeffs[nv.min(coeffs.len())..];
        let pos: i128 = nodes.iter().filter(|&&c| c > 0).sum();
        let neg: i128 = nodes.iter().filter(|&&c| c < 0).sum();
        (neg == 0 && k < pos) || (pos == 0 && k > neg)
    })
}

/// Counts over `post`'s nodes from counts `a` over the `pre_n` nodes of the input of
/// the [`super::transfer::post`] that produced `post` (whose provenance masks are
/// relative to that input). Unknown provenance (a node beyond 63, a mask 0) keeps
/// only the relations between counters.
pub fn after_post(a: &Affine, nv: usize, pre_n: usize, post: &Structure) -> Affine {
    let m = post.len();
    let known = pre_n < 63
        && a.dims() == nv + pre_n
        && post.origins().len() == m
        && post.origins().iter().all(|&o| o != 0);
    if !known {
        return counters_only(a, nv, pre_n, post);
    }
    if let Some(h) = renaming(post, pre_n) {
        // every output node holds the cells of exactly one input node and vice versa
        return structural(&rename(a, nv, &h), nv, post);
    }
    after_post_by_components(a, nv, pre_n, post)
}

/// [`after_post`] for known provenance, by the conservation equations of the
/// connected components and a projection.
fn after_post_by_components(a: &Affine, nv: usize, pre_n: usize, post: &Structure) -> Affine {
    let m = post.len();
    let dims = nv + pre_n + m;
    // union-find over: input nodes 0..pre_n, NEW = pre_n, outputs, removed cells
    let new_item = pre_n;
    let out0 = pre_n + 1;
    let rem0 = out0 + m;
    let removed = post.removed_origins();
    let mut uf: Vec<usize> = (0..rem0 + removed.len()).collect();
    fn find(uf: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while uf[r] != r {
            r = uf[r];
        }
        let mut y = x;
        while uf[y] != r {
            let n = uf[y];
            uf[y] = r;
            y = n;
        }
        r
    }
    let bits = |mask: u64| {
        (0..pre_n)
            .filter(move |k| mask & (1 << k) != 0)
            .chain((mask & ORIGIN_NEW != 0).then_some(new_item))
    };
    let masks = post
        .origins()
        .iter()
        .copied()
        .chain(removed.iter().copied());
    for (i, mask) in masks.enumerate() {
        if mask & !(ORIGIN_NEW | ((1u64 << pre_n) - 1)) != 0 {
            return counters_only(a, nv, pre_n, post);
        }
        for b in bits(mask) {
            let (x, y) = (find(&mut uf, out0 + i), find(&mut uf, b));
            uf[x] = y;
        }
    }
    let mut t = a.extend(m);
    let roots: std::collections::BTreeSet<usize> = (out0..rem0 + removed.len())
        .map(|i| find(&mut uf, i))
        .collect();
    for root in roots {
        let mut row = vec![0i128; dims];
        let mut constant = 0i128;
        for k in 0..pre_n {
            if find(&mut uf, k) == root {
                row[nv + k] = 1;
            }
        }
        if find(&mut uf, new_item) == root {
            constant -= 1;
        }
        for v in 0..m {
            if find(&mut uf, out0 + v) == root {
                row[nv + pre_n + v] = -1;
            }
        }
        for i in 0..removed.len() {
            if find(&mut uf, rem0 + i) == root {
                constant += 1;
            }
        }
        t.add_eq(&row, constant);
    }
    let gone: Vec<usize> = (nv..nv + pre_n).collect();
    structural(&t.project_out(&gone), nv, post)
}

/// `post`'s nodes as a renaming of the `pre_n` input nodes: `h[k] = v` when output
/// node `v`'s provenance is exactly input node `k`, every input is some output's
/// and no cell was allocated or removed; else `None`.
fn renaming(post: &Structure, pre_n: usize) -> Option<Vec<usize>> {
    if post.len() != pre_n || !post.removed_origins().is_empty() {
        return None;
    }
    let mut h = vec![usize::MAX; pre_n];
    for (v, &mask) in post.origins().iter().enumerate() {
        if mask.count_ones() != 1 || mask & ORIGIN_NEW != 0 {
            return None;
        }
        let k = mask.trailing_zeros() as usize;
        if k >= pre_n || h[k] != usize::MAX {
            return None;
        }
        h[k] = v;
    }
    Some(h)
}

fn is_permutation(h: &[usize]) -> bool {
    let mut seen = vec![false; h.len()];
    h.iter()
        .all(|&x| x < h.len() && !std::mem::replace(&mut seen[x], true))
}

/// `a` with node `u`'s cardinality moved to node `h[u]` (`h` a permutation).
fn rename(a: &Affine, nv: usize, h: &[usize]) -> Affine {
    let map: Vec<Option<usize>> = (0..nv)
        .map(Some)
        .chain(h.iter().map(|&x| Some(nv + x)))
        .collect();
    a.remap(&map, nv + h.len())
}

/// The counter relations of `a` (over `pre_n` nodes) with `post`'s nodes unconstrained
/// (besides [`structural`]).
fn counters_only(a: &Affine, nv: usize, pre_n: usize, post: &Structure) -> Affine {
    if a.dims() != nv + pre_n {
        return structural(&Affine::top(nv + post.len()), nv, post);
    }
    let gone: Vec<usize> = (nv..nv + pre_n).collect();
    structural(&a.project_out(&gone).extend(post.len()), nv, post)
}

/// Counts over the nodes of a structure `t` that node `u` of the counted structure
/// maps to as `h[u]` (an embedding or a renaming): `c'_x = Σ_{h(u) = x} c_u`.
pub fn through(a: &Affine, nv: usize, h: &[usize], t_n: usize) -> Affine {
    let n = h.len();
    if a.dims() != nv + n || h.iter().any(|&x| x >= t_n) {
        return Affine::top(nv + t_n);
    }
    if t_n == n && is_permutation(h) {
        // a renaming (canonical order, an isomorphism): move the columns
        return rename(a, nv, h);
    }
    through_by_projection(a, nv, h, t_n)
}

/// [`through`] for any map, by the sums as equations and a projection.
fn through_by_projection(a: &Affine, nv: usize, h: &[usize], t_n: usize) -> Affine {
    let n = h.len();
    let mut e = a.extend(t_n);
    for x in 0..t_n {
        let mut r = vec![0i128; nv + n + t_n];
        r[nv + n + x] = -1;
        for (u, &hu) in h.iter().enumerate() {
            if hu == x {
                r[nv + u] = 1;
            }
        }
        e.add_eq(&r, 0);
    }
    let gone: Vec<usize> = (nv..nv + n).collect();
    e.project_out(&gone)
}

#[cfg(test)]
mod tests {
    use super::super::families as fam;
    use super::super::formula::PredSym;
    use super::super::structure::Fact;
    use super::super::transfer::{post, PtrOp};
    use super::*;

    fn counted_class() -> ShapeClass {
        let mut c = fam::simple_class(&["x", "y"], &["next"], vec![fam::reach("x", &["next"])]);
        c.counters = vec!["len".into()];
        c
    }

    /// x → list of `n` cells; counts: len = n.
    fn list(c: &ShapeClass, n: usize) -> (Structure, Affine) {
        let mut f = vec![Fact::Unary(PredSym::with("pt", &["x"]), 0)];
        for i in 0..n - 1 {
            f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
        }
        let s = Structure::from_concrete(c, n, &f).unwrap_or_else(|e| panic!("{e}"));
        let t = s.with_identity_origins().blur();
        let mut a = Affine::top(1 + n);
        for u in 0..n {
            let mut r = vec![0; 1 + n];
            r[1 + u] = 1;
            a.add_eq(&r, 1);
        }
        let mut r = vec![0; 1 + n];
        r[0] = 1;
        a.add_eq(&r, n as i128);
        (t.clone(), after_post(&a, 1, n, &t))
    }

    /// `len - Σ c_u = k` holds in `a` over the nodes of `s`.
    fn len_minus_cells_is(a: &Affine, s: &Structure, k: i128) -> bool {
        let mut r = vec![0i128; 1 + s.len()];
        r[0] = 1;
        for u in 0..s.len() {
            r[1 + u] = -1;
        }
        a.implies(&r, k)
    }

    /// The sum of the node cardinalities equals `len` in `a` over `s`.
    fn len_is_total(a: &Affine, s: &Structure) -> bool {
        len_minus_cells_is(a, s, 0)
    }

    #[test]
    fn blur_sums_the_merged_cells() {
        let c = counted_class();
        let (s, a) = list(&c, 4);
        assert!(s.len() < 4, "the tail is summarised");
        assert!(len_is_total(&a, &s));
    }

    #[test]
    fn materialisation_walk_and_free_keep_the_total() {
        let c = counted_class();
        let (s, a) = list(&c, 5);
        // y = x->next materialises the successor out of the summary
        let r = post(
            &s,
            &c,
            &PtrOp::Load {
                x: "y".into(),
                y: "x".into(),
                field: "next".into(),
            },
        );
        assert!(!r.structures.is_empty());
        for t in &r.structures {
            let b = after_post(&a, 1, s.len(), t);
            assert!(len_is_total(&b, t), "{t}: {b}");
            // free(x) removes one cell: the remaining cells are len - 1
            let fr = post(t, &c, &PtrOp::Free { x: "x".into() });
            for w in &fr.structures {
                let d = after_post(&b, 1, t.len(), w);
                assert!(len_minus_cells_is(&d, w, 1), "{w}: {d}");
            }
        }
    }

    #[test]
    fn an_allocation_adds_one_cell() {
        let c = counted_class();
        let (s, a) = list(&c, 3);
        let r = post(&s, &c, &PtrOp::Malloc { x: "y".into() });
        for t in &r.structures {
            let b = after_post(&a, 1, s.len(), t);
            assert!(len_minus_cells_is(&b, t, -1), "{t}: {b}");
        }
    }

    #[test]
    fn equalities_that_leave_a_node_empty_are_contradictions() {
        let mut a = Affine::top(3);
        a.add_eq(&[0, 1, 1], 1); // c0 + c1 = 1
        assert!(contradicts_nonempty_nodes(&a, 1));
        let mut b = Affine::top(3);
        b.add_eq(&[1, -1, -1], 0); // x = c0 + c1: fine
        assert!(!contradicts_nonempty_nodes(&b, 1));
    }

    /// The shortcuts (a renaming after a post, a permutation in `through`) give what
    /// the general equations and projection give.
    #[test]
    fn renamings_agree_with_the_general_projection() {
        let c = counted_class();
        let (s, a) = list(&c, 5);
        let ops = [
            PtrOp::Load {
                x: "y".into(),
                y: "x".into(),
                field: "next".into(),
            },
            PtrOp::Copy {
                x: "y".into(),
                y: "x".into(),
            },
            PtrOp::StoreNull {
                x: "x".into(),
                field: "next".into(),
            },
            PtrOp::AssignNull { x: "x".into() },
            PtrOp::Free { x: "x".into() },
            PtrOp::Malloc { x: "y".into() },
        ];
        let mut renamings = 0;
        for op in &ops {
            for t in &post(&s, &c, op).structures {
                renamings += usize::from(renaming(t, s.len()).is_some());
                assert_eq!(
                    after_post(&a, 1, s.len(), t),
                    after_post_by_components(&a, 1, s.len(), t),
                    "{op:?}: {t}"
                );
            }
        }
        assert!(renamings > 0, "some post is a renaming");
        let n = s.len();
        let rotate: Vec<usize> = (0..n).map(|u| (u + 1) % n).collect();
        let reverse: Vec<usize> = (0..n).rev().collect();
        for h in [rotate, reverse] {
            assert_eq!(through(&a, 1, &h, n), through_by_projection(&a, 1, &h, n));
        }
    }

    #[test]
    fn through_an_embedding_sums_preimages() {
        // two nodes mapped onto one: c' = c0 + c1
        let mut a = Affine::top(3);
        a.add_eq(&[1, -1, -1], 0);
        let b = through(&a, 1, &[0, 0], 1);
        assert!(b.implies(&[1, -1], 0));
    }
}
