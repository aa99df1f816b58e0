//! Unit tests: HeapToShape on the paper's Fig. 1(b), precision bookkeeping, serde.

use super::*;
use crate::explicit::testutil::{fig1b, heap, heap_prog, pv};
use crate::explicit::{ExplicitState, Value};
use crate::tvla::Kleene;

/// The `dll` class over `succ`/`pred` of struct 0 with `families` and `assertions`.
pub(crate) fn dll_class(prog: &Program, families: &[&str], assertions: &[&str]) -> ShapeClass {
    let lattice = Lattice::load(None).unwrap_or_else(|e| panic!("{e:?}"));
    let scg = Scg::new(
        "dll",
        families.iter().copied(),
        [("next", "succ"), ("prev", "pred")]
            .iter()
            .map(|(r, f)| (r.to_string(), f.to_string()))
            .collect(),
    );
    let vars = pointer_vars(prog, 0);
    let d = TrackingDef::new(vars.clone(), vars, assertions.iter().map(|s| s.to_string()));
    class_for(prog, 0, &lattice, &scg, &d)
}

fn unary(s: &Structure, p: &PredSym, u: usize) -> Kleene {
    s.value(p, &[u])
}

#[test]
fn fig1b_heap_to_shape_has_one_summary_node_and_cancellation() {
    let (prog, h) = fig1b();
    let class = dll_class(&prog, &["cancel", "reach"], &["data == 0"]);
    let comp = heap_to_shape(&prog, &h, 0, &class);
    assert_eq!(comp.region.len(), 1, "a single shape graph");
    let s = comp
        .region
        .structures()
        .next()
        .unwrap_or_else(|| unreachable!());
    assert_eq!(s.len(), 2, "the head and one summary node: {s}");
    let summaries: Vec<usize> = (0..2).filter(|u| s.is_summary(*u)).collect();
    assert_eq!(summaries.len(), 1, "{s}");
    let head = 1 - summaries[0];
    assert_eq!(unary(s, &PredSym::with("pt", &["x0"]), head), Kleene::True);
    for u in 0..2 {
        for c in [
            PredSym::with("cancel", &["succ", "pred"]),
            PredSym::with("cancel", &["pred", "succ"]),
            PredSym::with("r", &["x0", "succ"]),
        ] {
            assert_eq!(unary(s, &c, u), Kleene::True, "{c} at u{u}: {s}");
        }
        // data is ⊤ in Fig. 1(b)
        assert_eq!(
            unary(s, &PredSym::with("fd", &["data == 0"]), u),
            Kleene::Half
        );
    }
    assert!(comp.wild_vars.is_empty() && comp.wild_fields.is_empty());
    // the head's pred is NULL, its succ goes into the summary node
    assert_eq!(
        s.value(&PredSym::plain("pred"), &[head, summaries[0]]),
        Kleene::False
    );
    assert_eq!(
        s.value(&PredSym::plain("succ"), &[head, summaries[0]]),
        Kleene::Half
    );
}

/// x0 -> 1 -> 2 over fields (data, succ, pred); cell 2's data and succ are ⊤, x1 is ⊤.
fn heap_with_top_fields() -> (Program, ExplicitState) {
    let prog = heap_prog(&["succ", "pred"], 2, 0);
    let t = Value::Top;
    let h = heap(
        &prog,
        &[(0, pv(1))],
        &[
            (1, vec![Value::Int(0), pv(2), pv(0)]),
            (2, vec![t, t, pv(1)]),
        ],
    );
    (prog, h)
}

/// The one structure of a component built from one explicit heap.
fn only_structure(comp: &ShapeComp) -> &Structure {
    comp.region
        .structures()
        .next()
        .unwrap_or_else(|| unreachable!())
}

/// The nodes of cells 1 (x0's) and 2 in a structure of [`heap_with_top_fields`].
fn cells_1_and_2(s: &Structure) -> (usize, usize) {
    let x0 = PredSym::with("pt", &["x0"]);
    let n1 = (0..2)
        .find(|u| unary(s, &x0, *u) == Kleene::True)
        .unwrap_or(9);
    assert!(n1 < 2, "{s}");
    (n1, 1 - n1)
}

#[test]
fn top_values_become_half_and_wild() {
    // x0 -> 1 -> 2 (2.succ is ⊤), x1 = ⊤, data of 1 is 0
    let (prog, h) = heap_with_top_fields();
    let class = dll_class(&prog, &["cancel"], &["data == 0"]);
    let comp = heap_to_shape(&prog, &h, 0, &class);
    let s = only_structure(&comp);
    assert_eq!(s.len(), 2);
    assert!(comp.wild_vars.contains("x1"), "{:?}", comp.wild_vars);
    assert!(comp.wild_fields.contains("succ"));
    assert!(!comp.wild_fields.contains("pred"));
    let (n1, n2) = cells_1_and_2(s);
    assert_eq!(unary(s, &PredSym::with("pt", &["x1"]), n1), Kleene::Half);
    assert_eq!(
        unary(s, &PredSym::with("fd", &["data == 0"]), n1),
        Kleene::True
    );
    assert_eq!(
        unary(s, &PredSym::with("fd", &["data == 0"]), n2),
        Kleene::Half
    );
    assert_eq!(s.value(&PredSym::plain("succ"), &[n2, n1]), Kleene::Half);
}

#[test]
fn top_fields_are_unknown_per_cell_with_un_predicates() {
    // x0 -> 1 -> 2, 2.succ is ⊤ (uninitialised)
    let (prog, h) = heap_with_top_fields();
    let class = super::with_uninit_preds(dll_class(&prog, &["cancel"], &[]));
    assert_eq!(super::with_uninit_preds(class.clone()), class, "idempotent");
    let comp = heap_to_shape(&prog, &h, 0, &class);
    let s = only_structure(&comp);
    assert!(comp.wild_fields.is_empty(), "{:?}", comp.wild_fields);
    let (n1, n2) = cells_1_and_2(s);
    let un = PredSym::with("un", &["succ"]);
    assert_eq!(unary(s, &un, n2), Kleene::True);
    assert_eq!(unary(s, &un, n1), Kleene::False);
    assert_eq!(s.value(&PredSym::plain("succ"), &[n2, n1]), Kleene::False);
    assert_eq!(unary(s, &PredSym::with("un", &["pred"]), n2), Kleene::False);
}

#[test]
fn dangling_and_foreign_pointers_are_wild() {
    let prog = heap_prog(&["succ", "pred"], 2, 0);
    // x0 points to a freed cell (7), x1 into the middle of cell 1; 1.succ dangles
    let h = heap(
        &prog,
        &[(0, pv(7)), (1, Value::Ptr { obj: 1, off: 4 })],
        &[(1, vec![Value::Int(0), pv(7), pv(0)])],
    );
    let class = dll_class(&prog, &["cancel"], &[]);
    let comp = heap_to_shape(&prog, &h, 0, &class);
    assert_eq!(
        comp.wild_vars,
        ["x0", "x1"].iter().map(|s| s.to_string()).collect()
    );
    assert!(comp.wild_fields.contains("succ"));
    let s = comp
        .region
        .structures()
        .next()
        .unwrap_or_else(|| unreachable!());
    assert_eq!(s.len(), 1);
    assert_eq!(unary(s, &PredSym::with("pt", &["x0"]), 0), Kleene::False);
}

#[test]
fn states_round_trip_through_json_and_order() {
    let (prog, h) = fig1b();
    let class = dll_class(&prog, &["cancel"], &[]);
    let mut m = BTreeMap::new();
    m.insert(0, &class);
    let st = heap_to_shape_state(&prog, &h, &m);
    let json = serde_json::to_string(&st).unwrap_or_default();
    let back: ShapeState = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, st);
    let prec = ShapePrec::single(0, class.clone());
    let pj = serde_json::to_string(&prec).unwrap_or_default();
    let pb: ShapePrec = serde_json::from_str(&pj).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pb, prec);
    // the initial (empty) heap is not covered by the five-node list, and vice versa
    let init = ShapeState::initial(&prec, prog.entry);
    assert!(st.subsumed_by(&st) && init.subsumed_by(&init));
    assert!(!init.subsumed_by(&st) && !st.subsumed_by(&init));
    let j = st.join(&init).unwrap_or_else(|| unreachable!());
    assert!(st.subsumed_by(&j) && init.subsumed_by(&j));
    assert_eq!(j.split().len(), 2);
    // a state with a wild variable is not covered by one without
    let mut w = st.clone();
    if let Some(c) = w.comps.get_mut(&0) {
        c.wild_vars.insert("x0".into());
    }
    assert!(st.subsumed_by(&w) && !w.subsumed_by(&st));
}

#[test]
fn a_join_is_covered_by_the_union_of_its_parts_only() {
    let (prog, h) = fig1b();
    let class = dll_class(&prog, &["cancel"], &[]);
    let mut m = BTreeMap::new();
    m.insert(0, &class);
    let list = heap_to_shape_state(&prog, &h, &m);
    let init = ShapeState::initial(&ShapePrec::single(0, class.clone()), prog.entry);
    let j = list.join(&init).unwrap_or_else(|| unreachable!());
    // neither part alone covers the join, the two together do
    assert!(!j.subsumed_by(&list) && !j.subsumed_by(&init));
    assert_eq!(j.covered_by_union(&[&list, &init]), Some(vec![0, 1]));
    assert_eq!(j.covered_by_union(&[&init, &list, &init]), Some(vec![0, 1]));
    assert_eq!(list.covered_by_union(&[&init, &list]), Some(vec![1]));
    assert_eq!(j.covered_by_union(&[&list]), None);
    assert_eq!(j.covered_by_union(&[]), None);
    // a wild variable only the join has: no candidate agrees on the flags
    let mut w = j.clone();
    if let Some(c) = w.comps.get_mut(&0) {
        c.wild_vars.insert("x0".into());
    }
    assert_eq!(w.covered_by_union(&[&list, &init]), None);
    // the CPA's stop-join is this test
    let cpa = ShapeCpa::new(&prog);
    assert_eq!(cpa.covers_union(&[&list, &init], &j), Some(vec![0, 1]));
    // the stop: a single coverer first, the union only when asked
    assert_eq!(j.covered_by(&[&list, &init], true), Some(vec![0, 1]));
    assert_eq!(j.covered_by(&[&list, &init], false), None);
    assert_eq!(list.covered_by(&[&init, &j, &list], true), Some(vec![1]));
    assert_eq!(cpa.stop(&[&init, &list], &list), Some(vec![1]));
    assert_eq!(cpa.stop(&[&list], &j), None);
}

#[test]
fn class_conversion_adds_predicates_soundly() {
    let (prog, h) = fig1b();
    let coarse = dll_class(&prog, &[], &[]);
    let fine = dll_class(&prog, &["cancel"], &["data == 0"]);
    let c = heap_to_shape(&prog, &h, 0, &coarse);
    let fine = std::sync::Arc::new(fine);
    let f = convert_comp(&c, &fine);
    assert_eq!(f.region.class, fine);
    assert!(!f.region.is_empty());
    // back to the coarse class: the facts kept are those of the coarse abstraction
    let back = convert_comp(&f, &std::sync::Arc::new(coarse));
    assert!(c.subsumed_by(&back), "{:?}\n{:?}", c, back);
    // the precise abstraction embeds into the converted one
    let direct = heap_to_shape(&prog, &h, 0, &fine);
    assert!(direct.subsumed_by(&f), "{direct:?}\n{f:?}");
    // a new pointer predicate makes its variable wild
    let mut more = (*fine).clone();
    more.core.push(crate::tvla::families::pt("extra"));
    let g = convert_comp(&f, &std::sync::Arc::new(more));
    assert!(g.wild_vars.contains("extra"));
}

#[test]
fn precision_overrides_per_location() {
    let (prog, _) = fig1b();
    let a = dll_class(&prog, &[], &[]);
    let b = dll_class(&prog, &["cancel"], &[]);
    let mut p = ShapePrec::single(0, a.clone());
    let l = crate::cfa::Node::new(3);
    assert!(p.set_at(l, 0, b.clone()));
    assert!(!p.set_at(l, 0, b.clone()));
    assert_eq!(**p.classes_at(l)[&0], b);
    assert_eq!(**p.classes_at(crate::cfa::Node::new(4))[&0], a);
}

#[test]
fn states_share_the_class_objects_of_their_precision() {
    use std::sync::Arc;
    let (prog, h) = fig1b();
    let a = dll_class(&prog, &[], &[]);
    let mut p = ShapePrec::single(0, a.clone());
    let object = p.global[&0].clone();
    // setting an equal class keeps its object
    assert!(!p.set_global(0, a.clone()));
    assert!(Arc::ptr_eq(&p.global[&0], &object));
    let init = ShapeState::initial(&p, prog.entry);
    assert!(Arc::ptr_eq(&init.comps[&0].region.class, &object));
    // a state over an equal class in another object is converted to the precision's
    let other = heap_to_shape(&prog, &h, 0, &a);
    assert!(!Arc::ptr_eq(&other.region.class, &object));
    let conv = convert_comp(&other, &object);
    assert!(Arc::ptr_eq(&conv.region.class, &object));
    assert_eq!(conv.region, other.region);
}

pub(crate) mod props {
    use super::*;
    use proptest::prelude::*;

    /// A pointer value for a heap of `n` cells: NULL, ⊤ or one of the cells.
    fn ptr_val(n: u32) -> impl Strategy<Value = Value> {
        prop_oneof![Just(Value::NULL), Just(Value::Top), (1..=n).prop_map(pv),]
    }

    /// Random struct-0 heaps (`data`, `succ`, `pred`) of 1..=4 cells and two variables.
    pub(crate) fn heaps() -> impl Strategy<Value = crate::explicit::ExplicitState> {
        (1u32..=4).prop_flat_map(|n| {
            let cell = (
                prop_oneof![Just(Value::Int(0)), Just(Value::Int(1)), Just(Value::Top)],
                ptr_val(n),
                ptr_val(n),
            );
            (
                proptest::collection::vec(cell, n as usize),
                ptr_val(n),
                ptr_val(n),
            )
                .prop_map(move |(cells, a, b)| {
                    let prog = heap_prog(&["succ", "pred"], 2, 0);
                    let cells: Vec<(u32, Vec<Value>)> = cells
                        .into_iter()
                        .enumerate()
                        .map(|(i, (d, s, p))| (i as u32 + 1, vec![d, s, p]))
                        .collect();
                    heap(&prog, &[(0, a), (1, b)], &cells)
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Coverage is reflexive, join is an upper bound, split parts are covered, and
        /// states survive JSON; the abstraction under a finer class embeds into the
        /// conversion of the coarser abstraction (conversion is sound).
        #[test]
        fn laws_of_states(h1 in heaps(), h2 in heaps()) {
            let prog = heap_prog(&["succ", "pred"], 2, 0);
            let coarse = dll_class(&prog, &[], &[]);
            let fine = dll_class(&prog, &["cancel", "reach"], &["data == 0"]);
            let mut m = BTreeMap::new();
            m.insert(0, &fine);
            let a = heap_to_shape_state(&prog, &h1, &m);
            let b = heap_to_shape_state(&prog, &h2, &m);
            prop_assert!(a.subsumed_by(&a));
            // the stop decides as a single check then the stop-join would
            for cands in [vec![&a, &b], vec![&b, &a], vec![&b], vec![&b, &b]] {
                let single = cands.iter().position(|t| a.subsumed_by(t)).map(|i| vec![i]);
                let want = single.or_else(|| a.covered_by_union(&cands));
                prop_assert_eq!(a.covered_by(&cands, true), want);
            }
            if let Some(j) = a.join(&b) {
                prop_assert!(a.subsumed_by(&j) && b.subsumed_by(&j));
                for part in j.split() {
                    prop_assert!(part.subsumed_by(&j));
                }
            }
            let json = serde_json::to_string(&a).unwrap_or_default();
            let back: ShapeState = serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&back, &a);
            let c = heap_to_shape(&prog, &h1, 0, &coarse);
            let conv = convert_comp(&c, &std::sync::Arc::new(fine.clone()));
            let direct = heap_to_shape(&prog, &h1, 0, &fine);
            prop_assert!(direct.subsumed_by(&conv), "direct {:?}\nconverted {:?}", direct, conv);
        }

        /// What the abstraction of a heap decides about `x0 == x1`, `x0 == NULL` and
        /// `x1 == NULL` holds in that heap (a ⊤ variable is wild and decides nothing).
        #[test]
        fn pointer_comparisons_decided_by_a_state_hold_in_its_heap(h in heaps()) {
            let prog = heap_prog(&["succ", "pred"], 2, 0);
            let class = dll_class(&prog, &["cancel", "reach"], &[]);
            let mut m = BTreeMap::new();
            m.insert(0, &class);
            let a = heap_to_shape_state(&prog, &h, &m);
            let val = |x: usize| h.vars.get(x).copied();
            for (l, r) in [(Some("x0"), Some("x1")), (Some("x0"), None), (None, Some("x1"))] {
                let Some(decided) = a.decide_ptr_eq(l, r) else { continue };
                let side = |n: Option<&str>| match n {
                    None => Some(Value::NULL),
                    Some(n) => val(if n == "x0" { 0 } else { 1 }),
                };
                let (lv, rv) = (side(l), side(r));
                prop_assert!(lv != Some(Value::Top) && rv != Some(Value::Top), "{:?} {:?}: {:?}", l, r, h);
                prop_assert_eq!(lv == rv, decided, "{:?} == {:?} in {:?}", l, r, h);
            }
        }
    }
}

#[test]
fn a_field_value_splits_the_state_by_its_assertions() {
    // Fig. 1(b): x0's cell has data ⊤; the class tells data == 0 and data == 1 apart
    let (prog, h) = fig1b();
    let class = dll_class(&prog, &[], &["data == 0", "data == 1"]);
    let comp = heap_to_shape(&prog, &h, 0, &class);
    let s = ShapeState {
        comps: [(0, comp)].into_iter().collect(),
        loaded: BTreeMap::new(),
    };
    let data = crate::cfa::FieldRef {
        strukt: 0,
        field: 0,
    };
    assert_eq!(prog.field(data).name, "data");
    let x0 = PredSym::with("pt", &["x0"]);
    let fd = |k: i64| PredSym::with("fd", &[&format!("data == {k}")]);
    let at_x0 = |t: &ShapeState, p: &PredSym| -> Vec<Kleene> {
        t.comps[&0]
            .region
            .structures()
            .flat_map(|st| {
                (0..st.len())
                    .filter(|&u| st.value(&x0, &[u]) == Kleene::True)
                    .map(|u| st.value(p, &[u]))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let parts = s.split_field_value(&prog, 0, data);
    let vals: Vec<Option<i64>> = parts.iter().map(|(v, _)| *v).collect();
    assert_eq!(vals, vec![Some(0), Some(1), None]);
    for (v, t) in &parts {
        for k in [0, 1] {
            let want = Kleene::from_bool(*v == Some(k));
            assert!(at_x0(t, &fd(k)).iter().all(|&b| b == want), "{v:?}: {k}");
        }
    }
    // a state whose value is known splits into that value alone
    let (_, one) = &parts[1];
    let again: Vec<Option<i64>> = one
        .split_field_value(&prog, 0, data)
        .iter()
        .map(|(v, _)| *v)
        .collect();
    assert_eq!(again, vec![Some(1)]);
}

/// Issue #32: a struct on the stack (`struct node s; x0 = &s`, `x0` only ever holds
/// stack addresses) is no heap object: it neither counts as allocated nor as lost, and
/// it is a root only inside its frame.
#[test]
fn leak_proofs_do_not_count_stack_nodes() {
    use crate::cfa::LeakCheck::{Unfreed, Unreachable};
    let prog = heap_prog(&["succ", "pred"], 2, 0);
    let class = dll_class(&prog, &["reach"], &[]);
    let none = BTreeSet::new();
    let stack: BTreeSet<String> = ["x0".to_string()].into();
    let t = Value::Top;
    // x0 -> stack node 1 -> heap node 2; x1 NULL
    let h = heap(
        &prog,
        &[(0, pv(1)), (1, pv(0))],
        &[(1, vec![t, pv(2), pv(0)]), (2, vec![t, pv(0), pv(0)])],
    );
    let mut comp = heap_to_shape(&prog, &h, 0, &class);
    comp.complete = true;
    assert!(comp.proves_no_leak(Unreachable, &stack, &stack));
    assert!(comp.proves_no_leak(Unreachable, &none, &none));
    assert!(
        !comp.proves_no_leak(Unreachable, &stack, &none),
        "at the frame's end the stack node reaches nothing"
    );
    assert!(
        !comp.proves_no_leak(Unfreed, &stack, &stack),
        "node 2 is heap"
    );
    // only the stack node: nothing allocated, nothing lost, wherever it is checked
    let h = heap(
        &prog,
        &[(0, pv(1)), (1, pv(0))],
        &[(1, vec![t, pv(0), pv(0)])],
    );
    let mut comp = heap_to_shape(&prog, &h, 0, &class);
    comp.complete = true;
    for roots in [&stack, &none] {
        assert!(comp.proves_no_leak(Unfreed, &stack, roots));
        assert!(comp.proves_no_leak(Unreachable, &stack, roots));
    }
    assert!(!comp.proves_no_leak(Unfreed, &none, &none));
    // x0 may hold another value: its node may be a heap object
    let mut wild = comp.clone();
    wild.wild_vars.insert("x0".into());
    assert!(!wild.proves_no_leak(Unfreed, &stack, &stack));
    assert!(!wild.proves_no_leak(Unreachable, &stack, &none));
}

#[test]
fn leak_proofs_need_a_complete_component() {
    use crate::cfa::LeakCheck::{Unfreed, Unreachable};
    let none = BTreeSet::new();
    let (prog, h) = fig1b();
    let class = dll_class(&prog, &["reach"], &[]);
    let mut comp = heap_to_shape(&prog, &h, 0, &class);
    assert!(!comp.complete, "built from an explicit heap: no claim");
    assert!(!comp.proves_no_leak(Unreachable, &none, &none));
    comp.complete = true;
    assert!(
        comp.proves_no_leak(Unreachable, &none, &none),
        "r[x0, succ] holds everywhere"
    );
    assert!(
        !comp.proves_no_leak(Unfreed, &none, &none),
        "the list is allocated"
    );
    // x0 may hold an outside value: its reach proves nothing
    let mut wild = comp.clone();
    wild.wild_vars.insert("x0".into());
    assert!(!wild.proves_no_leak(Unreachable, &none, &none));
    // no node: nothing allocated
    let mut empty = ShapeComp::initial(class.clone());
    assert!(!empty.proves_no_leak(Unfreed, &none, &none));
    empty.complete = true;
    assert!(
        empty.proves_no_leak(Unfreed, &none, &none)
            && empty.proves_no_leak(Unreachable, &none, &none)
    );
    // ⊤ claims nothing; a complete component does not cover an incomplete one
    assert!(!ShapeComp::top(class.clone()).complete);
    let incomplete = ShapeComp::initial(class.clone());
    assert!(!incomplete.subsumed_by(&empty) && empty.subsumed_by(&incomplete));
}

/// Issue #32 (forester sll-01-1, dll-01-2): a reach predicate over several fields
/// (`r[x, inner, next]` of the tree classes) proves reachability where the edges into a
/// summary node are only 1/2; one whose root is wild or not a root proves nothing.
#[test]
fn leak_proofs_use_reachability_along_several_fields() {
    use crate::cfa::LeakCheck::Unreachable;
    use crate::tvla::families as fam;
    use crate::tvla::structure::Fact;
    let class = fam::simple_class(
        &["l"],
        &["inner", "next"],
        vec![fam::reach("l", &["inner", "next"])],
    );
    let next = PredSym::plain("next");
    let facts = vec![
        Fact::Unary(PredSym::with("pt", &["l"]), 0),
        Fact::Binary(PredSym::plain("inner"), 1, 2),
        Fact::Binary(next.clone(), 0, 1),
        Fact::Binary(next.clone(), 1, 3),
        Fact::Binary(PredSym::plain("inner"), 3, 4),
    ];
    let mut s = Structure::from_concrete(&class, 5, &facts)
        .unwrap_or_else(|e| panic!("{e}"))
        .blur();
    let fi = s.vocab().field("next").unwrap();
    let l = s.vocab().pt("l").unwrap();
    let l = (0..s.len())
        .find(|&u| s.get1(l, u) == Kleene::True)
        .unwrap();
    for u in 0..s.len() {
        if s.get2(fi, l, u) != Kleene::False {
            s.set2(fi, l, u, Kleene::Half);
        }
    }
    assert!(s.len() < 5, "summary nodes: {s}");
    let mut comp = ShapeComp::initial(class.clone());
    comp.region = ShapeRegion::from_structures(class.clone(), [s]);
    comp.complete = true;
    let none = BTreeSet::new();
    assert!(comp.proves_no_leak(Unreachable, &none, &none));
    comp.wild_vars.insert("l".into());
    assert!(!comp.proves_no_leak(Unreachable, &none, &none));
}

#[test]
fn a_field_equality_is_covered_only_by_a_range_around_its_value() {
    let phi = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<BTreeSet<_>>();
    let all = phi(&[
        "data == 0",
        "data == 1",
        "data == 5",
        "data >= 0",
        "data < 2",
        "key == 0",
    ]);
    assert!(covered_by_range("data == 0", &all));
    assert!(covered_by_range("data == 1", &all));
    // outside the range, another field, not an equality
    assert!(!covered_by_range("data == 5", &all));
    assert!(!covered_by_range("key == 0", &all));
    assert!(!covered_by_range("data >= 0", &all));
    // one bound is not a range
    assert!(!covered_by_range(
        "data == 0",
        &phi(&["data == 0", "data >= 0"])
    ));
    assert!(!covered_by_range(
        "data == 0",
        &phi(&["data == 0", "data <= 1"])
    ));
    assert!(!covered_by_range("data == NULL", &phi(&["data >= 0"])));
}
