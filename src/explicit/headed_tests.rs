//! Unit tests of the `headed_dll` invariant (utlist's DL lists) and its recognition.

use super::infer::classify;
use super::invariants::{Invariant, Verdict};
use super::testutil::*;
use super::*;

const T: Value = Value::Top;

#[test]
fn headed_dll_needs_the_first_prev_to_reach_the_last_node() {
    let prog = heap_prog(&["next", "prev"], 1, 0);
    let h = |cells: &[(Addr, Vec<Value>)]| heap(&prog, &[(0, pv(1))], cells);
    // utlist's DL: 1 -> 2 -> 3, 1.prev = 3 (the last), 2.prev = 1, 3.prev = 2
    let headed = h(&[
        (1, vec![T, pv(2), pv(3)]),
        (2, vec![T, pv(3), pv(1)]),
        (3, vec![T, pv(0), pv(2)]),
    ]);
    assert_eq!(
        verdict(&prog, &headed, Invariant::HeadedDll, &[1, 2]),
        Verdict::Holds
    );
    assert_eq!(
        verdict(&prog, &headed, Invariant::DoublyLinked, &[1, 2]),
        Verdict::Violated
    );
    // a NULL-terminated DLL satisfies the rest but does not support it
    let plain = h(&[
        (1, vec![T, pv(2), pv(0)]),
        (2, vec![T, pv(3), pv(1)]),
        (3, vec![T, pv(0), pv(2)]),
    ]);
    assert_eq!(
        verdict(&prog, &plain, Invariant::HeadedDll, &[1, 2]),
        Verdict::Vacuous
    );
    // the first node's prev points into the middle, or a middle node's prev skips one
    for cells in [
        [
            (1, vec![T, pv(2), pv(2)]),
            (2, vec![T, pv(3), pv(1)]),
            (3, vec![T, pv(0), pv(2)]),
        ],
        [
            (1, vec![T, pv(2), pv(3)]),
            (2, vec![T, pv(3), pv(1)]),
            (3, vec![T, pv(0), pv(1)]),
        ],
    ] {
        assert_eq!(
            verdict(&prog, &h(&cells), Invariant::HeadedDll, &[1, 2]),
            Verdict::Violated
        );
    }
    // a ⊤ on the way to the last node is no witness of a violation
    let partial = h(&[
        (1, vec![T, pv(2), pv(3)]),
        (2, vec![T, T, pv(1)]),
        (3, vec![T, pv(0), T]),
    ]);
    assert_eq!(
        verdict(&prog, &partial, Invariant::HeadedDll, &[1, 2]),
        Verdict::Vacuous
    );
}

#[test]
fn a_utlist_dl_list_is_recognised_as_a_headed_dll() {
    let prog = heap_prog(&["next", "prev"], 1, 0);
    let h = heap(
        &prog,
        &[(0, pv(1))],
        &[
            (1, vec![T, pv(2), pv(3)]),
            (2, vec![T, pv(3), pv(1)]),
            (3, vec![T, pv(0), pv(2)]),
        ],
    );
    let c = classify(&prog, 0, &[&h]);
    assert_eq!(c.chosen.name(), "headed_dll");
    assert_eq!(c.chosen.invariant(), Some(Invariant::HeadedDll));
}
