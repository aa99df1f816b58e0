/* q_tailq_concat: two glibc <sys/queue.h> TAILQs, a with elements of data 0 and b with data
 * 1, built with TAILQ_INSERT_HEAD / TAILQ_INSERT_TAIL; an arbitrary element of b may be removed
 * with TAILQ_REMOVE; then TAILQ_CONCAT(&a, &b, link). Checks that b is empty afterwards, that
 * a reads 0...0 1...1, that *p->link.tqe_prev == p for every element of a and that a is
 * acyclic; then frees a. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_tailq_concat.c", __LINE__, "reach_error"); }
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
