/* ut_ll_ops_bug: builds a utlist.h singly-linked list as ut_ll_ops does, but the push uses
 * the wrong macro, LL_APPEND instead of LL_PREPEND, so when the list is not empty the head is
 * not the element just pushed. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_ll_ops_bug.c", __LINE__, "reach_error"); }
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
      LL_APPEND(head, e);
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
