/* ut_cdl_ops_bug: updates a utlist.h circular doubly-linked list as ut_cdl_ops does, but
 * removes with the wrong macro, the non-circular DL_DELETE instead of CDL_DELETE; removing
 * the head then leaves the last element's next pointing to the removed element, which stays
 * reachable from the new head. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_cdl_ops_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *prev, *next;
};

static void check_cdl(struct el *head, struct el *gone) {
  struct el *p, *mark = NULL;
  CDL_FOREACH(head, p) {
    if (p == mark || p == gone) reach_error();
    if (p->next->prev != p || p->prev->next != p) reach_error();
    if (p->data != 0 && p->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
}

int main(void) {
  struct el *head = NULL, *e;
  while (__VERIFIER_nondet_int()) {
    if (head != NULL && __VERIFIER_nondet_int()) {
      e = head;
      while (e->next != head && __VERIFIER_nondet_int())
        e = e->next;
      DL_DELETE(head, e);
      check_cdl(head, e);
      free(e);
      continue;
    }
    e = (struct el *) malloc(sizeof(struct el));
    if (!e) abort();
    e->data = __VERIFIER_nondet_int() != 0;
    if (__VERIFIER_nondet_int()) {
      CDL_PREPEND(head, e);
      if (head != e) reach_error();
    } else {
      CDL_APPEND(head, e);
    }
    check_cdl(head, NULL);
  }
  while (head != NULL) {
    e = head;
    CDL_DELETE(head, e);
    free(e);
  }
  return 0;
}
