//! Tests of the transfer functions.

use super::super::families as fam;
use super::super::structure::Fact;
use super::*;

fn op_load(x: &str, y: &str) -> PtrOp {
    PtrOp::Load {
        x: x.into(),
        y: y.into(),
        field: "next".into(),
    }
}

#[test]
fn relinking_the_head_of_a_cycle_keeps_every_cell_reachable() {
    // h → a → (b c d) → h, with n → a; `h->next = n` (list_add at the head):
    // the summary b..d stays reachable from h, since a path from a, the old
    // successor of h, to another cell never needs the removed edge h → a.
    let c = fam::simple_class(
        &["h", "n", "t"],
        &["next"],
        vec![fam::reach("h", &["next"]), fam::tc(&["next"])],
    );
    let next = PredSym::plain("next");
    let (h, n, a) = (0, 5, 1);
    let mut facts = vec![
        Fact::Unary(PredSym::with("pt", &["h"]), h),
        Fact::Unary(PredSym::with("pt", &["n"]), n),
        Fact::Unary(PredSym::with("pt", &["t"]), a),
        Fact::Binary(next.clone(), n, a),
    ];
    for (u, v) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)] {
        facts.push(Fact::Binary(next.clone(), u, v));
    }
    let s = Structure::from_concrete(&c, 6, &facts)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    assert_eq!(s.len(), 4, "b, c, d are one summary node: {s}");
    let op = PtrOp::Store {
        x: "h".into(),
        field: "next".into(),
        y: "n".into(),
    };
    let r = post(&s, &c, &op);
    assert!(!r.structures.is_empty());
    let rh = PredSym::with("r", &["h", "next"]);
    for t in &r.structures {
        assert!(
            true_everywhere(t, &rh),
            "every cell is reachable from h: {t}"
        );
    }
}

#[test]
fn freeing_a_cell_no_path_from_h_reaches_keeps_reachability_from_h() {
    // x → h → (summary tail), where h's `next` is only known 1/2 but the tail is
    // definitely reachable from h; free(x) cannot cut a path from h, so r[h] stays
    // 1 (re-evaluating the definition would give 1/2).
    let c = fam::simple_class(
        &["h", "x"],
        &["next"],
        vec![fam::reach("h", &["next"]), fam::tc(&["next"])],
    );
    let next = PredSym::plain("next");
    let facts = vec![
        Fact::Unary(PredSym::with("pt", &["h"]), 0),
        Fact::Unary(PredSym::with("pt", &["x"]), 3),
        Fact::Binary(next.clone(), 0, 1),
        Fact::Binary(next.clone(), 1, 2),
        Fact::Binary(next.clone(), 3, 0),
    ];
    let mut s = Structure::from_concrete(&c, 4, &facts)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    let rh = PredSym::with("r", &["h", "next"]);
    let tail = loosen_root_edge_into_summary(&mut s, "h", &["next"]);
    assert_eq!(s.value(&rh, &[tail]), Kleene::True);
    let r = post(&s, &c, &PtrOp::Free { x: "x".into() });
    assert!(!r.structures.is_empty());
    for t in &r.structures {
        assert!(true_everywhere(t, &rh), "{t}");
    }
}

#[test]
fn null_dereference_is_reported_not_panicked() {
    let c = fam::simple_class(&["x", "y"], &["next"], vec![fam::reach("x", &["next"])]);
    let empty = Structure::empty(&c);
    let r = post(&empty, &c, &op_load("y", "x"));
    assert_eq!(
        r.errors,
        vec![AbstractError::MayDerefNull { var: "x".into() }]
    );
    assert!(r.structures.is_empty());
    // free(NULL) is a no-op; untracked pointers are ignored
    let r = post(&empty, &c, &PtrOp::Free { x: "x".into() });
    assert_eq!(r.structures, vec![empty.clone()]);
    let r = post(&empty, &c, &op_load("zz", "qq"));
    assert!(r.errors.is_empty());
}

#[test]
fn load_materialises_the_successor() {
    let c = fam::simple_class(&["x", "y"], &["next"], vec![fam::reach("x", &["next"])]);
    let mut f = vec![Fact::Unary(PredSym::with("pt", &["x"]), 0)];
    for i in 0..4 {
        f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
    }
    let s = Structure::from_concrete(&c, 5, &f)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    let r = post(&s, &c, &op_load("y", "x"));
    assert!(r.errors.is_empty());
    // y = x->next: y definitely points to a single cell in every successor
    let py = c
        .core
        .iter()
        .position(|p| p.sym == PredSym::with("pt", &["y"]));
    assert!(py.is_some());
    for t in &r.structures {
        let i = t.vocab().pt("y").unwrap_or(0);
        assert_eq!(target(t, i).map(|n| t.is_summary(n)), Some(false), "{t}");
    }
    assert_eq!(r.structures.len(), 2); // next(y) is NULL or a summary tail
}

/// A concrete list `0 -> 1 -> ... -> n-1` along `next` (plus `prev` back links
/// when `dll`), pointer facts `ptrs`, blurred.
/// The unary predicate `p` is definite (0 or 1) at every node of `t`.
fn definite_everywhere(t: &Structure, p: &PredSym) -> bool {
    values(t, p).iter().all(|k| *k != Kleene::Half)
}

#[test]
fn walking_a_cycle_from_its_head_keeps_both_segments_definite() {
    // h → 1 → ... → 5 → h, p = h; `p = p->next` until p is back at h. Unary
    // reachability is 1 everywhere on a cycle; the segments rs[h] (cells from h up
    // to p) and rs[p] (from p back to h) tell the walked cells from the others.
    // (Without `is[next]` the summary may link back into the walked cells.)
    let ptrs = ["h", "p", "t"];
    let c = fam::simple_class(
        &ptrs,
        &["next"],
        vec![
            fam::tc(&["next"]),
            fam::shared(&["next"]),
            fam::segment("h", &["next"], &ptrs),
            fam::segment("p", &["next"], &ptrs),
            fam::segment("t", &["next"], &ptrs),
        ],
    );
    let next = PredSym::plain("next");
    let mut facts = vec![
        Fact::Unary(PredSym::with("pt", &["h"]), 0),
        Fact::Unary(PredSym::with("pt", &["p"]), 0),
    ];
    for u in 0..6 {
        facts.push(Fact::Binary(next.clone(), u, (u + 1) % 6));
    }
    let s = Structure::from_concrete(&c, 6, &facts)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    let (rh, rp) = (
        PredSym::with("rs", &["h", "next"]),
        PredSym::with("rs", &["p", "next"]),
    );
    let op = op_load("p", "p");
    let mut frontier = vec![s];
    let mut seen = BTreeSet::new();
    while let Some(t) = frontier.pop() {
        if !seen.insert(t.clone()) {
            continue;
        }
        assert!(seen.len() < 50, "the walk converges");
        for u in post(&t, &c, &op).structures {
            assert!(
                definite_everywhere(&u, &rh) && definite_everywhere(&u, &rp),
                "segments stay definite: {t}\n ---> {u}"
            );
            frontier.push(u);
        }
    }
    // the walk reaches a state with a non-empty walked segment and one where p is
    // back at h (rs[h] = {h} = rs[p])
    assert!(seen.len() >= 3, "{}", seen.len());
}

fn list(c: &ShapeClass, n: usize, dll: bool, ptrs: &[(&str, usize)]) -> Structure {
    let mut f: Vec<Fact> = ptrs
        .iter()
        .map(|(x, u)| Fact::Unary(PredSym::with("pt", &[x]), *u))
        .collect();
    for i in 0..n - 1 {
        f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
        if dll {
            f.push(Fact::Binary(PredSym::plain("prev"), i + 1, i));
        }
    }
    Structure::from_concrete(c, n, &f)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur()
}

/// Makes the `next` edge from `root`'s node into the (only) summary node of `s`, and its
/// `tc[fields]` entry, 1/2 (as a join leaves them), keeping every other value; returns
/// the summary node. The reachability from `root` stays as the concrete heap had it, so
/// a test can check that a transfer keeps it rather than re-deriving 1/2.
fn loosen_root_edge_into_summary(s: &mut Structure, root: &str, fields: &[&str]) -> usize {
    let (Some((2, fi)), Some(pr)) = (
        s.vocab().lookup(&PredSym::plain("next")),
        s.vocab().pt(root),
    ) else {
        panic!("vocabulary")
    };
    let r = (0..s.len())
        .find(|&u| s.get1(pr, u) == Kleene::True)
        .unwrap();
    let tail = (0..s.len()).find(|&u| s.is_summary(u)).unwrap();
    s.set2(fi, r, tail, Kleene::Half);
    let tc = s.vocab().lookup(&PredSym::with("tc", fields)).unwrap().1;
    s.set2(tc, r, tail, Kleene::Half);
    tail
}

fn values(t: &Structure, p: &PredSym) -> Vec<Kleene> {
    (0..t.len()).map(|u| t.value(p, &[u])).collect()
}

/// The unary predicate `p` is 1 at every node of `t`.
fn true_everywhere(t: &Structure, p: &PredSym) -> bool {
    values(t, p).iter().all(|k| *k == Kleene::True)
}

#[test]
fn self_load_keeps_reachability_of_the_tail() {
    // x = x->next on h, x -> [summary]: every cell after x's new target is still
    // reachable from x (r[x] is not re-derived from the 1/2 summary edges)
    let c = fam::simple_class(
        &["h", "x"],
        &["next"],
        vec![fam::reach("h", &["next"]), fam::reach("x", &["next"])],
    );
    let s = list(&c, 6, false, &[("h", 0), ("x", 0)]);
    let r = post(&s, &c, &op_load("x", "x"));
    assert!(!r.structures.is_empty());
    let rx = PredSym::with("r", &["x", "next"]);
    for t in &r.structures {
        assert!(
            values(t, &rx).iter().all(|k| *k != Kleene::Half),
            "r[x] lost: {t}"
        );
    }
}

#[test]
fn edge_removal_keeps_reachability_of_its_source() {
    // h -> [1 2] -> p -> [4 5]; p->next = NULL: p and the cells before it stay
    // reachable from h (a shortest path to p never leaves p)
    let c = fam::simple_class(
        &["h", "p"],
        &["next"],
        vec![
            fam::reach("h", &["next"]),
            fam::reach("p", &["next"]),
            fam::tc(&["next"]),
            fam::cyclic(&["next"]),
        ],
    );
    let s = list(&c, 6, false, &[("h", 0), ("p", 3)]);
    let op = PtrOp::StoreNull {
        x: "p".into(),
        field: "next".into(),
    };
    let r = post(&s, &c, &op);
    assert_eq!(r.structures.len(), 1);
    let t = &r.structures[0];
    let rh = PredSym::with("r", &["h", "next"]);
    let tc = PredSym::with("tc", &["next"]);
    let (Some(p), Some(h)) = (t.vocab().pt("p"), t.vocab().pt("h")) else {
        panic!("no pt[p]/pt[h]")
    };
    let (np, nh) = (target(t, p), target(t, h));
    let (Some(np), Some(nh)) = (np, nh) else {
        panic!("p, h not definite: {t}")
    };
    // the old tail [4 5] is cut off, every other cell stays reachable from h
    let vals = values(t, &rh);
    assert!(vals.iter().all(|k| *k != Kleene::Half), "r[h] lost: {t}");
    let cut: Vec<usize> = (0..t.len()).filter(|u| vals[*u] == Kleene::False).collect();
    assert_eq!(cut.len(), 1, "{t}");
    assert!(t.is_summary(cut[0]) && cut[0] != np, "{t}");
    assert_eq!(t.value(&tc, &[nh, np]), Kleene::True, "tc(h, p) lost: {t}");
}

#[test]
fn removing_a_back_link_keeps_unrelated_cancellation() {
    // h <-> [1 2], n = 3 with n.prev = 2 but 2.next = NULL (n was unlinked);
    // n->prev = NULL changes no cancellation of the cells 1, 2
    let c = fam::simple_class(
        &["h", "n"],
        &["next", "prev"],
        vec![fam::cancel("next", "prev"), fam::cancel("prev", "next")],
    );
    let mut f = vec![
        Fact::Unary(PredSym::with("pt", &["h"]), 0),
        Fact::Unary(PredSym::with("pt", &["n"]), 3),
        Fact::Binary(PredSym::plain("prev"), 3, 2),
    ];
    for i in 0..2 {
        f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
        f.push(Fact::Binary(PredSym::plain("prev"), i + 1, i));
    }
    let s = Structure::from_concrete(&c, 4, &f)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    assert_eq!(s.len(), 3, "{s}");
    let op = PtrOp::StoreNull {
        x: "n".into(),
        field: "prev".into(),
    };
    let r = post(&s, &c, &op);
    assert_eq!(r.structures.len(), 1);
    let t = &r.structures[0];
    for p in [
        PredSym::with("cancel", &["next", "prev"]),
        PredSym::with("cancel", &["prev", "next"]),
    ] {
        assert!(true_everywhere(t, &p), "{p} lost: {t}");
    }
}

#[test]
fn free_of_a_predecessor_keeps_the_successor_non_null() {
    // x -> a -> [b c d]; free(x) after t = x->next: `E w. next(t, w)` stays 1 at a
    // (x was no witness for it; re-evaluation gives 1/2, a's successor being a
    // cell of the summary)
    let c = fam::simple_class(&["x", "t"], &["next"], vec![fam::nonnull("next")]);
    let s = list(&c, 5, false, &[("x", 0), ("t", 1)]);
    let nn = PredSym::with("nn", &["next"]);
    let r = post(&s, &c, &PtrOp::Free { x: "x".into() });
    assert_eq!(r.structures.len(), 1);
    let t = &r.structures[0];
    let pt = t.vocab().pt("t").unwrap();
    let a = target(t, pt).unwrap();
    assert_eq!(t.value(&nn, &[a]), Kleene::True, "{t}");
}

#[test]
fn free_keeps_cancellation_next_to_a_summary() {
    // x -> a -> [b c d] (a DLL); free(x) after t = x->next: t's cancellation stays 1
    let c = fam::simple_class(
        &["x", "t"],
        &["next", "prev"],
        vec![fam::cancel("next", "prev"), fam::cancel("prev", "next")],
    );
    let mut f = vec![
        Fact::Unary(PredSym::with("pt", &["x"]), 0),
        Fact::Unary(PredSym::with("pt", &["t"]), 1),
    ];
    for i in 0..4 {
        f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
        f.push(Fact::Binary(PredSym::plain("prev"), i + 1, i));
    }
    let s = Structure::from_concrete(&c, 5, &f)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    let r = post(&s, &c, &PtrOp::Free { x: "x".into() });
    assert_eq!(r.structures.len(), 1);
    let t = &r.structures[0];
    for p in [
        PredSym::with("cancel", &["next", "prev"]),
        PredSym::with("cancel", &["prev", "next"]),
    ] {
        for u in 0..t.len() {
            assert_eq!(t.value(&p, &[u]), Kleene::True, "{p} at u{u}: {t}");
        }
    }
}

/// A two-field class (`inner`, `next`: forester's lists whose nodes hang an inner node
/// off a second field) with reachability from `l` and `x` along both fields.
fn two_field_class() -> ShapeClass {
    fam::simple_class(
        &["l", "x", "e"],
        &["inner", "next"],
        vec![
            fam::reach("l", &["inner", "next"]),
            fam::reach("x", &["inner", "next"]),
            fam::tc(&["inner", "next"]),
        ],
    )
}

#[test]
fn freeing_a_leaf_below_a_root_keeps_reachability_along_two_fields() {
    // l -inner-> e (a leaf), l -next-> a -next-> b: free(e) cuts no path from l to
    // another cell (none passes through a cell without successors), so r[l, inner,
    // next] stays 1 on the summary a, b even where the edge into it is only 1/2.
    let c = two_field_class();
    let (inner, next) = (PredSym::plain("inner"), PredSym::plain("next"));
    let facts = vec![
        Fact::Unary(PredSym::with("pt", &["l"]), 0),
        Fact::Unary(PredSym::with("pt", &["e"]), 1),
        Fact::Binary(inner, 0, 1),
        Fact::Binary(next.clone(), 0, 2),
        Fact::Binary(next.clone(), 2, 3),
    ];
    let mut s = Structure::from_concrete(&c, 4, &facts)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    let rl = PredSym::with("r", &["l", "inner", "next"]);
    let tail = loosen_root_edge_into_summary(&mut s, "l", &["inner", "next"]);
    assert_eq!(s.value(&rl, &[tail]), Kleene::True);
    let r = post(&s, &c, &PtrOp::Free { x: "e".into() });
    assert!(!r.structures.is_empty());
    for t in &r.structures {
        assert!(true_everywhere(t, &rl), "{t}");
    }
}

#[test]
fn loading_the_only_successor_keeps_reachability_along_two_fields() {
    // l -next-> m -next-> a -next-> b, every `inner` NULL: x = l->next; every path
    // from l to another cell starts with l's only edge, so what r[l, inner, next]
    // knows of the cells after m carries over to r[x, inner, next].
    let c = two_field_class();
    let next = PredSym::plain("next");
    let mut facts = vec![Fact::Unary(PredSym::with("pt", &["l"]), 0)];
    for i in 0..3 {
        facts.push(Fact::Binary(next.clone(), i, i + 1));
    }
    let s = Structure::from_concrete(&c, 4, &facts)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    let op = PtrOp::Load {
        x: "x".into(),
        y: "l".into(),
        field: "next".into(),
    };
    let r = post(&s, &c, &op);
    assert!(!r.structures.is_empty());
    let (rl, rx) = (
        PredSym::with("r", &["l", "inner", "next"]),
        PredSym::with("r", &["x", "inner", "next"]),
    );
    let pl = PredSym::with("pt", &["l"]);
    for t in &r.structures {
        for u in 0..t.len() {
            if t.value(&pl, &[u]) == Kleene::False {
                assert_eq!(t.value(&rx, &[u]), t.value(&rl, &[u]), "{t}");
                assert_eq!(t.value(&rx, &[u]), Kleene::True, "{t}");
            }
        }
    }
}
