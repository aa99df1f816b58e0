//! Programs whose states lost a fact the symbolic heaps keep now (one test per bug
//! fixed).

use super::*;

#[test]
fn a_comparison_of_pointer_comparisons_is_decided_by_the_heap() {
    // `(head == NULL) != (tail == NULL)` is an integer comparison of two pointer
    // comparisons: the state knows both sides (two_queues' check), so no path
    // reaches the error (before, both branches stayed feasible)
    let (prog, art, out) = explore(
        "struct q { struct q *head, *tail; };
         int main() {
           struct q *h = malloc(sizeof(struct q));
           if (!h) abort();
           h->head = NULL; h->tail = NULL;
           if (__VERIFIER_nondet_int()) {
             struct q *n = malloc(sizeof(struct q));
             if (!n) abort();
             h->head = n; h->tail = n;
           }
           if ((h->head == NULL) != (h->tail == NULL)) reach_error();
           int same = h->head == h->tail;
           if (!same) reach_error();
           return 0;
         }",
    );
    assert_proved(&prog, &art, &out);
}

#[test]
fn a_cycle_through_a_named_object_keeps_that_object_apart() {
    // folding `head ↦ a * ls(a, head)` into `ls(head, head)` forgot that the cycle
    // has at least two objects, and unfolding it then gave `head ↦ head`
    let (prog, art, out) = explore(
        "struct n { struct n *next; };
         int main() {
           struct n *head = malloc(sizeof(struct n));
           if (!head) abort();
           head->next = head;
           do {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->next = head->next;
             head->next = x;
           } while (__VERIFIER_nondet_int());
           struct n *p = head->next;
           if (p == head) reach_error();
           while (p != head) p = p->next;
           return 0;
         }",
    );
    assert_proved(&prog, &art, &out);
    let whole_cycle = art.nodes.iter().any(|n| {
        n.state
            .atoms
            .iter()
            .any(|a| matches!(a, Atom::Ls { from, to, .. } if *to == Val::Id(*from)))
    });
    assert!(!whole_cycle);
}

#[test]
fn a_tracked_object_with_a_value_of_its_own_is_not_folded_into_the_others() {
    // a stack of 0/1 objects gets an object with 2 pushed: pooling keeps its 2 (no
    // other object has it), but folding merged it with the next object into
    // `ls[data ∈ {0, 2}]`, so the walk could meet a 2 further on; splitting on the
    // field instead kept every 0 and 1 apart too (q_slist_push: 90k nodes, 20 s)
    let (prog, art, out) = explore_tracking(
        "struct n { struct n *next; int data; };
         int main() {
           struct n *top = NULL;
           while (__VERIFIER_nondet_int()) {
             struct n *x = malloc(sizeof(struct n));
             if (!x) abort();
             x->data = __VERIFIER_nondet_int() != 0;
             x->next = top; top = x;
           }
           struct n *y = malloc(sizeof(struct n));
           if (!y) abort();
           y->data = 2; y->next = top; top = y;
           for (struct n *p = top; p; p = p->next)
             if (p != y && p->data != 0 && p->data != 1) reach_error();
           return 0;
         }",
        true,
    );
    assert_proved(&prog, &art, &out);
}
