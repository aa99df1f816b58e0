/* q_stailq_concat_bug: concatenates two glibc <sys/queue.h> STAILQs as q_stailq_concat does,
 * but with the arguments swapped, STAILQ_CONCAT(&b, &a), so unless both queues are empty b is
 * not empty afterwards (and a's elements are no longer in a). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_stailq_concat_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct elem {
  int data;
  STAILQ_ENTRY(elem) link;
};

STAILQ_HEAD(elemq, elem);

static void append_new(struct elemq *q, int d) {
  struct elem *e = (struct elem *) malloc(sizeof(struct elem));
  if (!e) abort();
  e->data = d;
  STAILQ_INSERT_TAIL(q, e, link);
}

int main(void) {
  struct elemq a, b;
  struct elem *p, *victim, *last = NULL, *mark = NULL;
  int seen = 0;
  STAILQ_INIT(&a);
  STAILQ_INIT(&b);
  while (__VERIFIER_nondet_int())
    append_new(&a, 0);
  while (__VERIFIER_nondet_int())
    append_new(&b, 1);
  if (!STAILQ_EMPTY(&a) && __VERIFIER_nondet_int()) {
    victim = STAILQ_FIRST(&a);
    while (STAILQ_NEXT(victim, link) != NULL && __VERIFIER_nondet_int())
      victim = STAILQ_NEXT(victim, link);
    STAILQ_REMOVE(&a, victim, elem, link);
    free(victim);
  }
  STAILQ_CONCAT(&b, &a);
  if (!STAILQ_EMPTY(&b)) reach_error();
  append_new(&a, 2);
  STAILQ_FOREACH(p, &a, link) {
    if (p == mark) reach_error();
    if (p->data < seen) reach_error();
    seen = p->data;
    if (__VERIFIER_nondet_int()) mark = p;
    last = p;
  }
  if (last == NULL || last->data != 2) reach_error();
  while (!STAILQ_EMPTY(&a)) {
    p = STAILQ_FIRST(&a);
    STAILQ_REMOVE_HEAD(&a, link);
    free(p);
  }
  return 0;
}
