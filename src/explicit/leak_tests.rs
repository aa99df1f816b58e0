//! Unit tests of leak tracking in explicit heaps ([`super::ExplicitState::leak`]).

use super::post::{Domain, ExplicitError};
use super::testutil::*;
use super::*;
use crate::cfa::*;

fn one(r: Result<Vec<ExplicitState>, ExplicitError>) -> ExplicitState {
    let mut v = r.unwrap_or_else(|e| panic!("post failed: {e}"));
    assert_eq!(v.len(), 1);
    v.pop().unwrap_or_else(|| unreachable!())
}

#[test]
fn leak_checks_need_every_heap_object_of_the_kind_represented() {
    use crate::cfa::LeakCheck::{Unfreed, Unreachable};
    let (_, mut h) = fig1b();
    // without leak tracking nothing is proved
    assert!(!h.proves_no_leak(Unreachable, Some(0)));
    h.leak = Some(0);
    assert!(
        h.proves_no_leak(Unreachable, Some(0)),
        "every cell is reachable"
    );
    assert!(!h.proves_no_leak(Unfreed, Some(0)), "cells are allocated");
    assert!(h.proves_no_leak(Unfreed, None), "no cell of another kind");
    // l1 forgets the list: its cells are dropped and the kind's bit is set
    let mut lost = h.clone();
    lost.vars.set(0, Value::NULL);
    lost.canonicalize();
    assert!(lost.heap.is_empty());
    assert_eq!(lost.leak, Some(leak_bit(Some(0))));
    assert!(!lost.proves_no_leak(Unfreed, Some(0)));
    assert!(!lost.proves_no_leak(Unreachable, Some(0)));
    assert!(lost.proves_no_leak(Unfreed, None));
    // coverage: what lost an object is not covered by what claims it lost none
    let mut clean = lost.clone();
    clean.leak = Some(0);
    assert!(!lost.leq(&clean) && clean.leq(&lost));
    // a state claiming every object of the kind is a cell must match the cells
    let mut claims = clean.clone();
    claims.vars.set(0, Value::Top);
    assert!(!h.leq(&claims), "h's cells are not among claims' (none)");
    claims.leak = Some(leak_bit(Some(0)));
    assert!(h.leq(&claims));
    // untracked (None) covers everything, and is covered by nothing tracked
    let mut none = claims.clone();
    none.leak = None;
    assert!(h.leq(&none) && !none.leq(&claims));
}

#[test]
fn allocating_into_an_untracked_variable_loses_the_object() {
    use crate::cfa::LeakCheck::Unfreed;
    let prog = heap_prog(&["succ", "pred"], 2, 0);
    let d = Domain::for_program(&prog);
    let mut s = ExplicitState::initial(&prog);
    s.leak = Some(0);
    let op = Op::Alloc {
        dst: 1,
        pointee: Ty::Struct(0),
        bytes: None,
        kind: AllocKind::Heap { zeroed: false },
    };
    let tracked = one(d.post_op(&s, &op, &|x| x == 0));
    assert_eq!(tracked.leak, Some(leak_bit(Some(0))), "x1 is not tracked");
    let all = d.post_op(&s, &op, &|_| true).unwrap_or_default();
    assert!(all.iter().all(|t| t.leak == Some(0)));
    assert!(all.iter().any(|t| !t.proves_no_leak(Unfreed, Some(0))));
    // the leak check edge is blocked exactly when the state proves no leak
    let check = Op::AssumeLeak {
        check: Unfreed,
        of: Some(0),
    };
    assert_eq!(
        d.post_op(&s, &check, &|_| true).map(|v| v.len()).ok(),
        Some(0)
    );
    for t in &all {
        let n = d.post_op(t, &check, &|_| true).map(|v| v.len()).ok();
        assert_eq!(n, Some(usize::from(!t.heap.is_empty())));
    }
}
