//! Orders of values along segments ([`crate::symheap::order`]) against the concrete
//! lists they stand for: every small colouring, not only the random heaps.

use super::*;

/// Every list of 1 to 5 objects (singly linked, doubly linked from its first or its
/// last object) whose `d` values are the bits of a number.
fn coloured_lists() -> Vec<Conc> {
    let mut out = Vec::new();
    for len in 1..=5 {
        for dll in [false, true] {
            for bits in 0..(1u32 << len) {
                let mut c = list(len, dll, None);
                for (i, cell) in c.cells.iter_mut().enumerate() {
                    if let Some(o) = cell {
                        o.1 = i64::from((bits >> i) & 1);
                    }
                }
                if dll {
                    // known by its last object only (matched walking backwards)
                    let mut back = c.clone();
                    back.vars = [Cv::Null, Cv::Addr(len - 1), Cv::Null];
                    out.push(back);
                }
                out.push(c);
            }
        }
    }
    out
}

#[test]
fn ordered_segments_cover_exactly_the_colourings_they_allow() {
    // entailment between folded lists with orders implies inclusion of their
    // concrete lists, tried on every pair (the random heaps rarely differ only in
    // where along a list a value is); and unfolding the first object keeps each
    let (prog, vs) = heap_prog();
    let lists = coloured_lists();
    let folded: Vec<SymHeap> = lists
        .iter()
        .map(|c| fold_as(&prog, exact(c, &vs), true))
        .collect();
    let mut ordered = 0;
    for (c, s) in lists.iter().zip(&folded) {
        assert!(models(c, &vs, s), "{}", s.render(&prog));
        // the list object by object is covered by its folded form, and only by the
        // folded forms of lists whose colourings it has
        let k = exact(c, &vs).canonical();
        assert!(
            entail::entails(&k, s),
            "{} ⋢ {}",
            k.render(&prog),
            s.render(&prog)
        );
        for t in &folded {
            if entail::entails(&k, t) {
                assert!(
                    models(c, &vs, t),
                    "{} ⊑ {}",
                    k.render(&prog),
                    t.render(&prog)
                );
            }
        }
        ordered += usize::from(s.atoms.iter().any(
            |a| matches!(a, Atom::Ls { order, .. } | Atom::Dls { order, .. } if !order.is_empty()),
        ));
        for (d, t) in lists.iter().zip(&folded) {
            if entail::entails(s, t) {
                assert!(
                    models(c, &vs, t),
                    "{} ⊑ {} but not its list {:?}",
                    s.render(&prog),
                    t.render(&prog),
                    d
                );
            }
        }
        for i in [s.get(vs[0]).id(), s.get(vs[1]).id()].into_iter().flatten() {
            let states = post::focus(&prog, s, i).unwrap_or_default();
            assert!(
                states.iter().any(|u| models(c, &vs, u)),
                "unfolded {}",
                s.render(&prog)
            );
        }
    }
    assert!(ordered > 20, "only {ordered} lists keep an order");
}
