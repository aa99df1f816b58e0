/* fp_visit_bug: resets a glibc <sys/queue.h> TAILQ through a function-pointer callback as
 * fp_visit does, but the visitor queue_apply stops one element early (off by one: its loop
 * tests TAILQ_NEXT(p) != NULL instead of p != NULL), so the last element keeps data 1 if it
 * had it and queue_all(&q, is_reset) fails. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "fp_visit_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct node {
  int data;
  TAILQ_ENTRY(node) link;
};

TAILQ_HEAD(nodeq, node);

/* call fn on every element of q, first to last */
static void queue_apply(struct nodeq *q, void (*fn)(struct node *)) {
  struct node *p;
  for (p = TAILQ_FIRST(q); p != NULL && TAILQ_NEXT(p, link) != NULL; p = TAILQ_NEXT(p, link))
    fn(p);
}

/* 1 if pred holds for every element of q */
static int queue_all(struct nodeq *q, int (*pred)(struct node *)) {
  struct node *p;
  TAILQ_FOREACH(p, q, link)
    if (!pred(p))
      return 0;
  return 1;
}

static void reset(struct node *n) {
  n->data = 0;
}

static int is_reset(struct node *n) {
  return n->data == 0 && *n->link.tqe_prev == n;
}

int main(void) {
  struct nodeq q;
  struct node *n;
  TAILQ_INIT(&q);
  while (__VERIFIER_nondet_int()) {
    n = (struct node *) malloc(sizeof(struct node));
    if (!n) abort();
    n->data = __VERIFIER_nondet_int() != 0;
    if (__VERIFIER_nondet_int())
      TAILQ_INSERT_HEAD(&q, n, link);
    else
      TAILQ_INSERT_TAIL(&q, n, link);
  }
  queue_apply(&q, reset);
  if (!queue_all(&q, is_reset)) reach_error();
  while (!TAILQ_EMPTY(&q)) {
    n = TAILQ_FIRST(&q);
    TAILQ_REMOVE(&q, n, link);
    free(n);
  }
  return 0;
}
