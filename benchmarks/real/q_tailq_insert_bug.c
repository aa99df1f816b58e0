/* q_tailq_insert_bug: inserts into a glibc <sys/queue.h> TAILQ as q_tailq_insert does, but
 * the call meant to insert the new element n after p swaps the element arguments,
 * TAILQ_INSERT_AFTER(&q, n, p, link) (which links p after the unlinked n), so the check
 * TAILQ_NEXT(p) == n fails. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_tailq_insert_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct node {
  int data;
  TAILQ_ENTRY(node) link;
};

TAILQ_HEAD(nodeq, node);

static struct node *node_new(int d) {
  struct node *n = (struct node *) malloc(sizeof(struct node));
  if (!n) abort();
  n->data = d;
  n->link.tqe_next = NULL;
  n->link.tqe_prev = NULL;
  return n;
}

int main(void) {
  struct nodeq q = TAILQ_HEAD_INITIALIZER(q);
  struct node *n, *p, *last = NULL, *mark = NULL;
  while (__VERIFIER_nondet_int()) {
    n = node_new(__VERIFIER_nondet_int() != 0);
    if (TAILQ_EMPTY(&q) || __VERIFIER_nondet_int()) {
      if (__VERIFIER_nondet_int()) {
        TAILQ_INSERT_TAIL(&q, n, link);
        if (TAILQ_NEXT(n, link) != NULL) reach_error();
      } else {
        TAILQ_INSERT_HEAD(&q, n, link);
        if (TAILQ_FIRST(&q) != n) reach_error();
      }
      continue;
    }
    p = TAILQ_FIRST(&q);
    while (TAILQ_NEXT(p, link) != NULL && __VERIFIER_nondet_int())
      p = TAILQ_NEXT(p, link);
    if (__VERIFIER_nondet_int()) {
      TAILQ_INSERT_AFTER(&q, n, p, link);
      if (TAILQ_NEXT(p, link) != n) reach_error();
    } else {
      TAILQ_INSERT_BEFORE(p, n, link);
      if (TAILQ_NEXT(n, link) != p) reach_error();
    }
  }
  n = node_new(2);
  TAILQ_INSERT_TAIL(&q, n, link);
  TAILQ_FOREACH(p, &q, link) {
    if (p == mark || *p->link.tqe_prev != p) reach_error();
    if (p != n && p->data != 0 && p->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    last = p;
  }
  if (last != n) reach_error();
  while (!TAILQ_EMPTY(&q)) {
    p = TAILQ_FIRST(&q);
    TAILQ_REMOVE(&q, p, link);
    free(p);
  }
  return 0;
}
