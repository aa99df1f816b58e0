/* ut_ll_ops: singly-linked list with the LL_ macros of uthash's utlist.h (vendored unmodified):
 * in arbitrary order, elements with data 0 or 1 are pushed with LL_PREPEND or added with
 * LL_APPEND, and an arbitrary element is removed with LL_DELETE. Checks that the head is the
 * element just prepended, that a removed element is no longer reachable from the head, that
 * data is 0 or 1 and that the list is acyclic; then deletes everything (LL_FOREACH_SAFE and
 * LL_DELETE) and checks that the head is NULL. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_ll_ops.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *next;
};

int main(void) {
  struct el *head = NULL, *e, *p, *tmp, *mark = NULL;
  while (__VERIFIER_nondet_int()) {
    if (head != NULL && __VERIFIER_nondet_int()) {
      e = head;
      while (e->next != NULL && __VERIFIER_nondet_int())
        e = e->next;
      LL_DELETE(head, e);
      LL_FOREACH(head, p)
        if (p == e) reach_error();
      free(e);
      continue;
    }
    e = (struct el *) malloc(sizeof(struct el));
    if (!e) abort();
    e->data = __VERIFIER_nondet_int() != 0;
    if (__VERIFIER_nondet_int()) {
      LL_PREPEND(head, e);
      if (head != e) reach_error();
    } else {
      LL_APPEND(head, e);
    }
  }
  LL_FOREACH(head, p) {
    if (p == mark) reach_error();
    if (p->data != 0 && p->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  LL_FOREACH_SAFE(head, p, tmp) {
    LL_DELETE(head, p);
    free(p);
  }
  if (head != NULL) reach_error();
  return 0;
}
