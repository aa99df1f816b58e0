/* ut_dl_elem: doubly-linked list with the element macros of uthash's utlist.h (vendored
 * unmodified; the head's prev is the last element): in arbitrary order, a new element with
 * data 0 or 1 is put after (DL_APPEND_ELEM) or before (DL_PREPEND_ELEM) an arbitrary element of
 * the list (into the empty list when there is none), or replaces an arbitrary element
 * (DL_REPLACE_ELEM), which is then freed. Checks that the new element is linked where it was
 * put, that a replaced element is no longer reachable from the head, that next->prev is the
 * element, that the head's prev is the last element, that data is 0 or 1 and that the list is
 * acyclic; an element DL_SEARCH_SCALAR finds has the data searched for; then frees everything
 * (DL_FOREACH_SAFE and DL_DELETE) and checks that the head is NULL. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_elem.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *prev, *next;
};

int main(void) {
  struct el *head = NULL, *e, *n, *p, *tmp, *mark = NULL, *found;
  while (__VERIFIER_nondet_int()) {
    n = (struct el *) malloc(sizeof(struct el));
    if (!n) abort();
    n->data = __VERIFIER_nondet_int() != 0;
    e = head;
    if (e != NULL)
      while (e->next != NULL && __VERIFIER_nondet_int())
        e = e->next;
    if (e != NULL && __VERIFIER_nondet_int()) {
      DL_REPLACE_ELEM(head, e, n);
      DL_FOREACH(head, p)
        if (p == e) reach_error();
      free(e);
    } else if (__VERIFIER_nondet_int()) {
      DL_PREPEND_ELEM(head, e, n);
      if (e != NULL && (n->next != e || e->prev != n)) reach_error();
    } else {
      DL_APPEND_ELEM(head, e, n);
      if (e != NULL && (e->next != n || n->prev != e)) reach_error();
    }
    if (head == NULL) reach_error();
  }
  DL_FOREACH(head, p) {
    if (p == mark) reach_error();
    if (p->data != 0 && p->data != 1) reach_error();
    if (p->next != NULL && p->next->prev != p) reach_error();
    if (p->next == NULL && head->prev != p) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  DL_SEARCH_SCALAR(head, found, data, 0);
  if (found != NULL && found->data != 0) reach_error();
  DL_FOREACH_SAFE(head, p, tmp) {
    DL_DELETE(head, p);
    free(p);
  }
  if (head != NULL) reach_error();
  return 0;
}
