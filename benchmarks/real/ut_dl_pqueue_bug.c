/* ut_dl_pqueue_bug: the priority queue of ut_dl_pqueue, but pq_pop takes the last element
 * (the head's prev) instead of the first (off by one end), so once the queue holds a 0 and a 1
 * the element popped compares greater than the new first one. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_pqueue_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *prev, *next;
};

typedef int (*el_cmp)(struct el *, struct el *);

static int by_data(struct el *a, struct el *b) {
  return a->data - b->data;
}

static void pq_push(struct el **q, struct el *e, el_cmp cmp) {
  DL_INSERT_INORDER(*q, e, cmp);
}

static struct el *pq_pop(struct el **q) {
  struct el *e = *q ? (*q)->prev : NULL;
  if (e != NULL)
    DL_DELETE(*q, e);
  return e;
}

int main(void) {
  struct el *q = NULL, *e, *p, *mark = NULL;
  while (__VERIFIER_nondet_int()) {
    if (q != NULL && __VERIFIER_nondet_int()) {
      e = pq_pop(&q);
      if (q != NULL && by_data(e, q) > 0) reach_error();
      free(e);
      continue;
    }
    e = (struct el *) malloc(sizeof(struct el));
    if (!e) abort();
    e->data = __VERIFIER_nondet_int() != 0;
    pq_push(&q, e, by_data);
  }
  DL_FOREACH(q, p) {
    if (p == mark) reach_error();
    if (p->next != NULL && (p->next->prev != p || by_data(p, p->next) > 0)) reach_error();
    if (p->next == NULL && q->prev != p) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  while ((e = pq_pop(&q)) != NULL)
    free(e);
  return 0;
}
