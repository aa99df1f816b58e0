/* ut_dl_sort: a doubly-linked list of elements with data 0 or 1 built with utlist.h's
 * DL_APPEND / DL_PREPEND (utlist.h vendored unmodified) is sorted with DL_SORT and a
 * three-way ascending comparator. Checks that the result is sorted, that p->next->prev == p
 * everywhere, that head->prev is the last element and that the list is acyclic; then frees
 * it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_sort.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *prev, *next;
};

static int el_cmp(struct el *a, struct el *b) {
  if (a->data < b->data) return -1;
  if (a->data > b->data) return 1;
  return 0;
}

int main(void) {
  struct el *head = NULL, *e, *p, *tmp, *last = NULL, *mark = NULL;
  while (__VERIFIER_nondet_int()) {
    e = (struct el *) malloc(sizeof(struct el));
    if (!e) abort();
    e->data = __VERIFIER_nondet_int() != 0;
    if (__VERIFIER_nondet_int())
      DL_APPEND(head, e);
    else
      DL_PREPEND(head, e);
  }
  DL_SORT(head, el_cmp);
  DL_FOREACH(head, p) {
    if (p == mark) reach_error();
    if (p->next != NULL && (p->next->prev != p || p->data > p->next->data)) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    last = p;
  }
  if (head != NULL && head->prev != last) reach_error();
  DL_FOREACH_SAFE(head, p, tmp) {
    DL_DELETE(head, p);
    free(p);
  }
  return 0;
}
