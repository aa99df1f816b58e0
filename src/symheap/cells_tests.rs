//! Tests of composite segments ([`super::cells`]): folding, unfolding, ownership,
//! joins, malformed cells, and small programs over lists of lists.

use super::cells::{validate, Shape, CELL, MAX_DEPTH};
use super::entail::reduce_shapes as reduce;
use super::tests::{explore, PRE};
use super::*;
use crate::art::BuildOutcome;
use crate::testutil::parse_c;

const INNER: &str = "typedef struct T { struct T *next; struct T *inner; } SLL;
     int main() {
       SLL *list = malloc(sizeof(SLL));
       if (!list) abort();
       list->next = NULL;
       if (__VERIFIER_nondet_int()) list->inner = NULL;
       else { list->inner = malloc(sizeof(SLL)); if (!list->inner) abort();
              list->inner->next = NULL; list->inner->inner = NULL; }
       SLL *end = list;
       while (__VERIFIER_nondet_int()) {
         end->next = malloc(sizeof(SLL)); if (!end->next) abort();
         end = end->next; end->next = NULL;
         if (__VERIFIER_nondet_int()) end->inner = NULL;
         else { end->inner = malloc(sizeof(SLL)); if (!end->inner) abort();
                end->inner->next = NULL; end->inner->inner = NULL; }
       }
       end = list;
       while (end) {
         SLL *in = end->inner;
         if (in) { if (in->inner || in->next) reach_error(); }
         end = end->next;
       }
       return 0;
     }";

/// `INNER` with the inner object's check inverted: its error is reachable.
fn inner_bug() -> String {
    INNER.replace(
        "if (in->inner || in->next) reach_error();",
        "if (!in->inner) reach_error();",
    )
}

#[test]
fn a_list_whose_nodes_own_an_optional_inner_object_is_proved_by_shapes() {
    let (prog, art, out) = explore(INNER);
    assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
    // the segment's objects own NULL or one object whose links are NULL
    let composite = art.nodes.iter().find_map(|n| {
        n.state.atoms.iter().find_map(|a| match a {
            Atom::Ls { cells, .. } if cells.shapes.len() == 2 => Some(n.state.render(&prog)),
            _ => None,
        })
    });
    let text = composite.expect("no segment with two shapes");
    assert!(text.contains("#1↦{next:NULL,inner:NULL}"), "{text}");
    let (_, _, out) = explore(&inner_bug());
    assert!(matches!(out, BuildOutcome::Error(_)), "{out:?}");
}

const LOL: &str = "struct in { struct in *next; struct out *owner; };
     struct out { struct out *next; struct in *down; };
     int main() {
       struct out *head = NULL;
       while (__VERIFIER_nondet_int()) {
         struct out *o = malloc(sizeof(struct out)); if (!o) abort();
         o->next = head; o->down = NULL; head = o;
         while (__VERIFIER_nondet_int()) {
           struct in *e = malloc(sizeof(struct in)); if (!e) abort();
           e->owner = o; e->next = o->down; o->down = e;
         }
       }
       for (struct out *o = head; o; o = o->next)
         for (struct in *e = o->down; e; e = e->next)
           if (e->owner != o) reach_error();
       return 0;
     }";

#[test]
fn a_list_of_lists_keeps_every_elements_owner() {
    let (prog, art, out) = explore(LOL);
    assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
    // an outer segment whose objects own a segment of elements pointing back
    let nested = art.nodes.iter().any(|n| {
        n.state.atoms.iter().any(|a| match a {
            Atom::Ls { cells, .. } => cells.shapes.iter().any(|s| {
                s.atoms.iter().any(|b| {
                    matches!(b, Atom::Ls { cells, .. } if cells.common.iter().any(|c| c.1 == Val::Id(0)))
                })
            }),
            _ => false,
        })
    });
    assert!(
        nested,
        "{}",
        art.nodes
            .last()
            .map(|n| n.state.render(&prog))
            .unwrap_or_default()
    );
    // an element given another owner is found
    let bug = LOL.replace("e->owner = o;", "e->owner = o->next;");
    let (_, _, out) = explore(&bug);
    assert!(matches!(out, BuildOutcome::Error(_)), "{out:?}");
}

/// The program of `INNER` and a state `l ↦ n₀ ↦ … ↦ n₂ ↦ NULL` where `n₁` owns an
/// inner object and the others own nothing.
fn three_nodes() -> (Program, SymHeap) {
    let prog = parse_c(&format!("{PRE}{INNER}"));
    let var = |n: &str| {
        prog.vars
            .iter()
            .position(|v| v.name == n || v.name.ends_with(&format!("::{n}")))
    };
    let list = var("list").unwrap();
    let mut h = SymHeap::initial();
    h.set(list, Val::Id(0));
    let pt = |at: Id, next: Val, inner: Val| Atom::Pt {
        at,
        strukt: 0,
        fields: vec![next, inner],
        heap: true,
        data: Vec::new(),
    };
    h.atoms.push(pt(0, Val::Id(1), Val::Null));
    h.atoms.push(pt(1, Val::Id(2), Val::Id(3)));
    h.atoms.push(pt(2, Val::Null, Val::Null));
    h.atoms.push(pt(3, Val::Null, Val::Null));
    (prog, h)
}

#[test]
fn folding_keeps_what_each_object_owns_and_unfolding_gives_it_back() {
    let (prog, h) = three_nodes();
    let folded = fold::fold(&prog, h.clone());
    let [Atom::Ls { cells, .. }] = folded.atoms.as_slice() else {
        panic!("{}", folded.render(&prog));
    };
    assert_eq!(cells.shapes.len(), 2, "{}", folded.render(&prog));
    assert!(entail::entails(&h.clone().canonical(), &folded));
    assert!(!entail::entails(&folded, &h.clone().canonical()));
    // the first object unfolded: either shape, each with one or more objects
    let states = super::post::focus(&prog, &folded, 0).unwrap();
    assert_eq!(states.len(), 4);
    let owning = states.iter().filter(|s| s.atoms.len() >= 2 && s.atoms.iter().any(|a| {
        matches!(a, Atom::Pt { at, fields, .. } if *at != 0 && fields == &vec![Val::Null, Val::Null])
    }));
    assert!(owning.count() >= 2);
    // an inner object that is not a leaf is not owned as a shape: the fold forgets it
    let mut deep = h.clone();
    if let Atom::Pt { fields, .. } = &mut deep.atoms[3] {
        fields[1] = Val::Id(4);
    }
    deep.atoms.push(Atom::Pt {
        at: 4,
        strukt: 0,
        fields: vec![Val::Null, Val::Null],
        heap: true,
        data: Vec::new(),
    });
    let f = fold::fold(&prog, deep);
    assert!(
        f.atoms
            .iter()
            .all(|a| !matches!(a, Atom::Ls { cells, .. } if !cells.shapes.is_empty())),
        "{}",
        f.render(&prog)
    );
}

#[test]
fn an_object_named_elsewhere_is_no_ones_own() {
    let (prog, h) = three_nodes();
    let folded = fold::fold(&prog, h.clone());
    assert!(entail::entails(&h.clone().canonical(), &folded));
    // with `end` pointing to n₁'s inner object, the object is not n₁'s own: the
    // segment's shapes do not claim it (they would hide it from `end`)
    let end = prog
        .vars
        .iter()
        .position(|v| v.name == "end" || v.name.ends_with("::end"))
        .unwrap();
    let mut s = h.clone();
    s.set(end, Val::Id(3));
    let s = s.canonical();
    assert!(!entail::entails(&s, &folded));
    // and folding keeps such an object's owner apart (the region is open to `end`)
    let f = fold::fold(&prog, s.clone());
    assert!(entail::entails(&s, &f));
    assert!(
        f.atoms.iter().any(|a| matches!(a, Atom::Pt { fields, .. } if fields[1] != Val::Null && fields[1] != Val::Unknown)),
        "{}",
        f.render(&prog)
    );
}

#[test]
fn joins_keep_shared_values_and_at_most_a_few_shapes() {
    let (prog, h) = three_nodes();
    let folded = fold::fold(&prog, h);
    let Atom::Ls { cells, .. } = &folded.atoms[0] else {
        panic!()
    };
    let plain = Cells {
        common: vec![(1, Val::Null)],
        shapes: Vec::new(),
    };
    // a plain piece whose field is NULL stands for the shape "NULL, owns nothing"
    let j = Cells::join(cells, &plain);
    assert_eq!(j.shapes.len(), 2, "{j:?}");
    let j = Cells::join(cells, &Cells::default());
    assert!(j.shapes.is_empty());
    assert!(Cells::join(&plain, &plain).common == plain.common);
    // more shapes than MAX_SHAPES: none kept
    // the inner object's links NULL or back to the object, four ways
    let owning = |next: Val, inner: Val| {
        let mut h = SymHeap::initial();
        h.vars = vec![(CELL, Val::Id(0))];
        let pt = |at: Id, fields: Vec<Val>| Atom::Pt {
            at,
            strukt: 0,
            fields,
            heap: true,
            data: Vec::new(),
        };
        h.atoms = vec![
            pt(0, vec![Val::Unknown, Val::Id(1)]),
            pt(1, vec![next, inner]),
        ];
        Shape::from_heap(h).unwrap()
    };
    let (n, z) = (Val::Null, Val::Id(0));
    let many = Cells {
        common: Vec::new(),
        shapes: vec![owning(n, n), owning(z, n), owning(n, z), owning(z, z)],
    };
    assert_eq!(reduce(many.shapes.clone()).len(), 0);
    let j = Cells::join(&many, cells);
    assert!(j.shapes.is_empty(), "{} shapes", j.shapes.len());
}

#[test]
fn malformed_cells_are_rejected() {
    let (prog, h) = three_nodes();
    let folded = fold::fold(&prog, h);
    assert!(folded.validate(&prog).is_ok());
    let Atom::Ls { cells, .. } = &folded.atoms[0] else {
        panic!()
    };
    let bad = |f: &dyn Fn(&mut Cells)| {
        let mut c = cells.clone();
        f(&mut c);
        validate(&prog, 0, &[0], &c, 0).is_err()
    };
    assert!(validate(&prog, 0, &[0], cells, 0).is_ok());
    // a common value on the link
    assert!(bad(&|c| c.common = vec![(0, Val::Null)]));
    // a shape whose object's link is known
    assert!(bad(&|c| {
        if let Atom::Pt { fields, .. } = &mut c.shapes[0].atoms[0] {
            fields[0] = Val::Null;
        }
    }));
    // shapes out of order
    assert!(bad(&|c| c.shapes.reverse()));
    // a shape that is not canonical
    assert!(bad(&|c| c.shapes[1].atoms.reverse()));
    // too deep: a shape at the deepest level with shapes of its own
    assert!(validate(&prog, 0, &[0], cells, MAX_DEPTH).is_err());
}

#[test]
fn objects_pointing_to_themselves_fold_and_keep_it() {
    let src = "struct n { struct n *next; struct n *me; };
         int main() {
           struct n *l = NULL;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n)); if (!x) abort();
             x->me = x; x->next = l; l = x;
           }
           for (struct n *p = l; p; p = p->next) if (p->me != p) reach_error();
           return 0;
         }";
    let (prog, art, out) = explore(src);
    assert!(matches!(out, BuildOutcome::Complete), "{out:?}");
    let kept = art.nodes.iter().any(|n| {
        n.state
            .atoms
            .iter()
            .any(|a| matches!(a, Atom::Ls { cells, .. } if !cells.shapes.is_empty()))
    });
    assert!(
        kept,
        "{}",
        art.nodes
            .last()
            .map(|n| n.state.render(&prog))
            .unwrap_or_default()
    );
    let (_, _, out) = explore(&src.replace("x->me = x;", "x->me = l;"));
    assert!(matches!(out, BuildOutcome::Error(_)), "{out:?}");
}
