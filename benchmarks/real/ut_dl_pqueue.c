/* ut_dl_pqueue: a priority queue over a doubly-linked list of uthash's utlist.h (vendored
 * unmodified): pq_push(q, e, cmp) is DL_INSERT_INORDER with the comparator passed as a
 * function pointer, pq_pop(q) takes the first element with DL_DELETE. In arbitrary order,
 * elements with data 0 or 1 are pushed or the first one is popped and freed. Checks that a
 * popped element does not compare greater than the new first one, that the queue is sorted by
 * the comparator, that next->prev is the element, that the head's prev is the last element and
 * that the list is acyclic; then pops and frees everything. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_pqueue.c", __LINE__, "reach_error"); }
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
  struct el *e = *q;
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
