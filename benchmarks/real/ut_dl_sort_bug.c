/* ut_dl_sort_bug: sorts a utlist.h doubly-linked list as ut_dl_sort does, but the comparator
 * passed to DL_SORT returns a boolean "a < b" (1 when a sorts first) instead of a three-way
 * result (negative when a sorts first), so DL_SORT puts the list in descending order. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_sort_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *prev, *next;
};

static int el_cmp(struct el *a, struct el *b) {
  return a->data < b->data;
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
