/* Move-to-front on a doubly-linked list (regression for the TVLA transfer functions):
 * the search `n = n->nxt` must keep r[n] on the list tail, unlinking `n` must keep the
 * predecessor reachable from `head` (r[head] of the source of a removed edge) and the
 * cancellation of the nodes before `n` (cancel[nxt, prv] when only prv(n, _) is
 * removed). Otherwise the abstract list becomes cyclic after `n->nxt = head`.
 * With -DBUG the node is not unlinked first: moving it to the front then closes a
 * cycle, which the acyclicity check must find. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
void reach_error() { __assert_fail("0", "dll_move_to_front.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct qnode {
  struct qnode *prv;
  struct qnode *nxt;
};

static struct qnode *alloc_node(void) {
  struct qnode *n = malloc(sizeof(struct qnode));
  if (!n) abort();
  n->prv = NULL;
  n->nxt = NULL;
  return n;
}

int main(void) {
  struct qnode *head = alloc_node();
  struct qnode *t = head;
  struct qnode *n;
  struct qnode *p;
  struct qnode *mark;
  while (__VERIFIER_nondet_int()) {
    t->nxt = alloc_node();
    t->nxt->prv = t;
    t = t->nxt;
  }
  t = NULL;
  while (__VERIFIER_nondet_int()) {
    n = head;
    while (n->nxt != NULL && __VERIFIER_nondet_int())
      n = n->nxt;
    if (n != head) {
#ifndef BUG
      if (n->prv != NULL)
        n->prv->nxt = n->nxt;
      if (n->nxt != NULL)
        n->nxt->prv = n->prv;
      n->nxt = NULL;
      n->prv = NULL;
#endif
      n->nxt = head;
      head->prv = n;
      head = n;
    }
    /* a cycle would bring p back to a node marked earlier */
    mark = NULL;
    p = head;
    while (p != NULL) {
      if (p == mark) reach_error();
      if (__VERIFIER_nondet_int()) mark = p;
      p = p->nxt;
    }
  }
  return 0;
}
