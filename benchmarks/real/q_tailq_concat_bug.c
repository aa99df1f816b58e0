/* q_tailq_concat_bug: concatenates two glibc <sys/queue.h> TAILQs as q_tailq_concat does, but
 * guards TAILQ_CONCAT with a too narrow if (only when a is not empty), so when a is empty the
 * elements of b stay in b. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_tailq_concat_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct elem {
  int data;
  TAILQ_ENTRY(elem) link;
};

TAILQ_HEAD(elemq, elem);

static void add_new(struct elemq *q, int d) {
  struct elem *e = (struct elem *) malloc(sizeof(struct elem));
  if (!e) abort();
  e->data = d;
  if (__VERIFIER_nondet_int())
    TAILQ_INSERT_HEAD(q, e, link);
  else
    TAILQ_INSERT_TAIL(q, e, link);
}

int main(void) {
  struct elemq a, b;
  struct elem *p, *victim, *mark = NULL;
  int seen = 0;
  TAILQ_INIT(&a);
  TAILQ_INIT(&b);
  while (__VERIFIER_nondet_int())
    add_new(&a, 0);
  while (__VERIFIER_nondet_int())
    add_new(&b, 1);
  if (!TAILQ_EMPTY(&b) && __VERIFIER_nondet_int()) {
    victim = TAILQ_FIRST(&b);
    while (TAILQ_NEXT(victim, link) != NULL && __VERIFIER_nondet_int())
      victim = TAILQ_NEXT(victim, link);
    TAILQ_REMOVE(&b, victim, link);
    free(victim);
  }
  if (!TAILQ_EMPTY(&a))
    TAILQ_CONCAT(&a, &b, link);
  if (!TAILQ_EMPTY(&b)) reach_error();
  TAILQ_FOREACH(p, &a, link) {
    if (p == mark || *p->link.tqe_prev != p) reach_error();
    if (p->data < seen) reach_error();
    seen = p->data;
    if (__VERIFIER_nondet_int()) mark = p;
  }
  while (!TAILQ_EMPTY(&a)) {
    p = TAILQ_FIRST(&a);
    TAILQ_REMOVE(&a, p, link);
    free(p);
  }
  return 0;
}
