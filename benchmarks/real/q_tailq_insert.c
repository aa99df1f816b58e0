/* q_tailq_insert: glibc <sys/queue.h> TAILQ: elements with data 0 or 1 are inserted with
 * TAILQ_INSERT_HEAD, TAILQ_INSERT_TAIL, or after or before an arbitrary element with
 * TAILQ_INSERT_AFTER / TAILQ_INSERT_BEFORE. Checks after each insertion that the new element
 * is where it was put (TAILQ_FIRST, TAILQ_NEXT); at the end appends an element with data 2
 * and checks that TAILQ_FOREACH meets it last (tqh_last is right), that
 * *p->link.tqe_prev == p for every element, that the other elements have data 0 or 1 and
 * that the queue is acyclic; then removes everything with TAILQ_REMOVE. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_tailq_insert.c", __LINE__, "reach_error"); }
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
      TAILQ_INSERT_AFTER(&q, p, n, link);
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
