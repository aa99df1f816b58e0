/* ut_ll_sort: two singly-linked lists of elements with data 0 or 1 built with utlist.h's
 * LL_PREPEND (utlist.h vendored unmodified) are joined with LL_CONCAT and sorted with
 * LL_SORT and an ascending comparator. Checks that the result is sorted (no 1 before a 0),
 * that data is 0 or 1 and that the list is acyclic; then frees it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_ll_sort.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *next;
};

static int by_data(struct el *a, struct el *b) {
  return a->data - b->data;
}

static struct el *build(void) {
  struct el *head = NULL, *e;
  while (__VERIFIER_nondet_int()) {
    e = (struct el *) malloc(sizeof(struct el));
    if (!e) abort();
    e->data = __VERIFIER_nondet_int() != 0;
    LL_PREPEND(head, e);
  }
  return head;
}

int main(void) {
  struct el *a = build(), *b = build(), *p, *tmp, *mark = NULL;
  LL_CONCAT(a, b);
  LL_SORT(a, by_data);
  LL_FOREACH(a, p) {
    if (p == mark) reach_error();
    if (p->data != 0 && p->data != 1) reach_error();
    if (p->next != NULL && p->data > p->next->data) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  LL_FOREACH_SAFE(a, p, tmp)
    free(p);
  return 0;
}
