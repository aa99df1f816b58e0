/* ut_cdl_elem: circular doubly-linked list with the element macros of uthash's utlist.h
 * (vendored unmodified): in arbitrary order, a new element with data 0 or 1 is put after
 * (CDL_APPEND_ELEM) or before (CDL_PREPEND_ELEM) an arbitrary element of the cycle (into the
 * empty list when there is none), or replaces an arbitrary element, possibly the head
 * (CDL_REPLACE_ELEM), which is then freed. Checks that the new element is linked where it was
 * put, that p->next->prev == p and p->prev->next == p around the cycle, that the walk
 * (CDL_FOREACH) returns to the head without meeting a node twice, and that a replaced element
 * is no longer reachable; then removes everything with CDL_DELETE. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_cdl_elem.c", __LINE__, "reach_error"); }
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
  struct el *head = NULL, *e, *n;
  while (__VERIFIER_nondet_int()) {
    n = (struct el *) malloc(sizeof(struct el));
    if (!n) abort();
    n->data = __VERIFIER_nondet_int() != 0;
    e = head;
    if (e != NULL)
      while (e->next != head && __VERIFIER_nondet_int())
        e = e->next;
    if (e != NULL && __VERIFIER_nondet_int()) {
      CDL_REPLACE_ELEM(head, e, n);
      check_cdl(head, e);
      free(e);
      continue;
    }
    if (__VERIFIER_nondet_int()) {
      CDL_PREPEND_ELEM(head, e, n);
      if (e != NULL && (n->next != e || e->prev != n)) reach_error();
    } else {
      CDL_APPEND_ELEM(head, e, n);
      if (e != NULL && (e->next != n || n->prev != e)) reach_error();
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
