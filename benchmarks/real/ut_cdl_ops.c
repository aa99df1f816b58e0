/* ut_cdl_ops: circular doubly-linked list with the CDL_ macros of uthash's utlist.h (vendored
 * unmodified): in arbitrary order, elements with data 0 or 1 are added with CDL_PREPEND or
 * CDL_APPEND and an arbitrary element (possibly the head) is removed with CDL_DELETE. Checks
 * that the head is the element just prepended, that p->next->prev == p and
 * p->prev->next == p around the cycle, that the walk (CDL_FOREACH) returns to the head without
 * meeting a node twice, and that a removed element is no longer reachable; then removes
 * everything with CDL_DELETE and checks that the head is NULL. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_cdl_ops.c", __LINE__, "reach_error"); }
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
      CDL_DELETE(head, e);
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
