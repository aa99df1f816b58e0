//! Unit tests of structures: construction, blur, canonical form, embedding.

use super::super::families as fam;
use super::*;

fn list_class() -> ShapeClass {
    fam::simple_class(&["x", "y"], &["next"], vec![fam::reach("x", &["next"])])
}

fn list(n: usize, head: usize) -> Vec<Fact> {
    let mut f = vec![Fact::Unary(PredSym::with("pt", &["x"]), head)];
    for i in 0..n - 1 {
        f.push(Fact::Binary(PredSym::plain("next"), i, i + 1));
    }
    f
}

#[test]
fn partial_join_needs_equal_names_and_covers_both() {
    let c = fam::simple_class(&["x", "y"], &["next"], vec![]);
    let (px, py) = (PredSym::with("pt", &["x"]), PredSym::with("pt", &["y"]));
    let two = |a: usize, b: usize| {
        let f = [
            Fact::Unary(px.clone(), 0),
            Fact::Unary(py.clone(), 1),
            Fact::Binary(PredSym::plain("next"), a, b),
        ];
        Structure::from_concrete(&c, 2, &f).unwrap_or_else(|e| panic!("{e}"))
    };
    let (a, b) = (two(0, 1), two(1, 0));
    let j = a.partial_join(&b).unwrap_or_else(|| panic!("same names"));
    assert!(a.embeds_into(&j) && b.embeds_into(&j));
    assert!(!j.embeds_into(&a) && !j.embeds_into(&b));
    assert_eq!(
        j,
        b.partial_join(&a).unwrap_or_else(|| panic!("same names"))
    );
    assert_eq!(a.partial_join(&a), Some(a.canonical()));
    // y's node missing: other names, no join
    let one = Structure::from_concrete(&c, 1, &[Fact::Unary(px.clone(), 0)])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.partial_join(&one), None);
    // x and y on one node against x and y apart: other names
    let both = Structure::from_concrete(
        &c,
        2,
        &[Fact::Unary(px.clone(), 0), Fact::Unary(py.clone(), 0)],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.partial_join(&both), None);
    // the cheap test agrees with the join on every pair
    for s in [&a, &b, &one, &both] {
        for t in [&a, &b, &one, &both] {
            assert_eq!(s.joins_partially(t), s.partial_join(t).is_some());
            // the merge fingerprint's key: equal whenever the join exists
            if s.joins_partially(t) {
                assert_eq!(s.join_key(), t.join_key());
            }
        }
    }
    assert_ne!(a.join_key(), one.join_key());
    assert_ne!(a.join_key(), both.join_key());
}

#[test]
fn blur_forgets_pointed_only_predicates_off_the_pointed_nodes() {
    // x -> u0 -> u1: nn[next] is 1 on u0 and 0 on u1
    let mut c = fam::simple_class(&["x"], &["next"], vec![fam::nonnull("next")]);
    let nn = PredSym::with("nn", &["next"]);
    c.abs.remove(&nn);
    let facts = [
        Fact::Unary(PredSym::with("pt", &["x"]), 0),
        Fact::Binary(PredSym::plain("next"), 0, 1),
    ];
    let value_at = |c: &ShapeClass, node_of_x: bool| {
        let s = Structure::from_concrete(c, 2, &facts).unwrap_or_else(|e| panic!("{e}"));
        let t = s.blur();
        let pt = PredSym::with("pt", &["x"]);
        let u = (0..t.len())
            .find(|&u| (t.value(&pt, &[u]) == Kleene::True) == node_of_x)
            .unwrap_or_else(|| panic!("node"));
        t.value(&nn, &[u])
    };
    assert_eq!(value_at(&c, true), Kleene::True);
    assert_eq!(value_at(&c, false), Kleene::False);
    c.pointed_only.insert(nn.clone());
    // kept on x's node, forgotten on the other
    assert_eq!(value_at(&c, true), Kleene::True);
    assert_eq!(value_at(&c, false), Kleene::Half);
}

#[test]
fn from_concrete_rejects_bad_input() {
    let c = list_class();
    let bad_pred = [Fact::Unary(PredSym::plain("nope"), 0)];
    assert!(matches!(
        Structure::from_concrete(&c, 2, &bad_pred),
        Err(TvlaError::UnknownPredicate(_))
    ));
    let instr = [Fact::Unary(PredSym::with("r", &["x", "next"]), 0)];
    assert!(Structure::from_concrete(&c, 2, &instr).is_err());
    let range = [Fact::Binary(PredSym::plain("next"), 0, 5)];
    assert_eq!(
        Structure::from_concrete(&c, 2, &range),
        Err(TvlaError::NodeOutOfRange(5))
    );
    let two = [
        Fact::Binary(PredSym::plain("next"), 0, 1),
        Fact::Binary(PredSym::plain("next"), 0, 0),
    ];
    assert_eq!(
        Structure::from_concrete(&c, 2, &two),
        Err(TvlaError::Integrity)
    );
    let arity = [Fact::Unary(PredSym::plain("next"), 0)];
    assert!(matches!(
        Structure::from_concrete(&c, 2, &arity),
        Err(TvlaError::Arity(_))
    ));
}

#[test]
fn blur_summarises_list_tail() {
    let c = list_class();
    let s = Structure::from_concrete(&c, 5, &list(5, 0)).unwrap_or_else(|e| panic!("{e}"));
    assert!(s.is_two_valued());
    let b = s.blur();
    assert_eq!(b.len(), 2);
    assert_eq!((0..2).filter(|u| b.is_summary(*u)).count(), 1);
    assert!(s.embeds_into(&b));
    assert!(!b.embeds_into(&s));
    // a list of three cells blurs to the same structure
    let s3 = Structure::from_concrete(&c, 3, &list(3, 0)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s3.blur(), b);
}

#[test]
fn canonical_form_ignores_node_names() {
    let c = list_class();
    let a = Structure::from_concrete(&c, 3, &list(3, 0)).unwrap_or_else(|e| panic!("{e}"));
    // the same list with nodes renamed 0->2, 1->0, 2->1
    let f = vec![
        Fact::Unary(PredSym::with("pt", &["x"]), 2),
        Fact::Binary(PredSym::plain("next"), 2, 0),
        Fact::Binary(PredSym::plain("next"), 0, 1),
    ];
    let b = Structure::from_concrete(&c, 3, &f).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(a, b);
    assert_eq!(a.canonical(), b.canonical());
}

/// A two-cell list from `x`, without and with `y` pointing to its second cell.
fn two_cells_without_and_with_y(c: &ShapeClass) -> (Structure, Structure) {
    let mut f = list(2, 0);
    let without_y = Structure::from_concrete(c, 2, &f).unwrap_or_else(|e| panic!("{e}"));
    f.push(Fact::Unary(PredSym::with("pt", &["y"]), 1));
    let with_y = Structure::from_concrete(c, 2, &f).unwrap_or_else(|e| panic!("{e}"));
    (without_y, with_y)
}

#[test]
fn embedding_is_surjective() {
    let c = list_class();
    let (without_y, with_y) = two_cells_without_and_with_y(&c);
    assert!(!without_y.embeds_into(&with_y));
    assert!(!with_y.embeds_into(&without_y));
    let mut one = Structure::empty(&c);
    one.add_node(Kleene::False);
    assert!(!Structure::empty(&c).embeds_into(&one));
}

#[test]
fn the_cached_signature_follows_mutations() {
    let c = list_class();
    let (without_y, mut with_y) = two_cells_without_and_with_y(&c);
    // the signatures reject the embedding (pt[y] is true somewhere in one only) ...
    assert!(!without_y.embeds_into(&with_y));
    // ... and are recomputed after a change: with pt[y] unknown at node 1 it embeds
    let (_, y) = with_y.vocab().lookup(&PredSym::with("pt", &["y"])).unwrap();
    with_y.set1(y, 1, Kleene::Half);
    assert!(without_y.embeds_into(&with_y));
    with_y.set1(y, 1, Kleene::True);
    assert!(!without_y.embeds_into(&with_y));
    // a clone carries the cache but also resets it on a change
    let mut copy = with_y.clone();
    copy.set1(y, 1, Kleene::False);
    assert!(without_y.embeds_into(&copy) && copy.embeds_into(&without_y));
}
