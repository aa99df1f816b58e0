/* ut_ll_elem_bug: changes the lists as ut_ll_elem does, but the element that should go before
 * an arbitrary element is put after it, with LL_APPEND_ELEM instead of LL_PREPEND_ELEM (wrong
 * macro), so when the list is not empty the new element's next is not that element. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_ll_elem_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *next;
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
      LL_REPLACE_ELEM(head, e, n);
      LL_FOREACH(head, p)
        if (p == e) reach_error();
      LL_FOREACH(head, p)
        if (p == n) break;
      if (p != n) reach_error();
      free(e);
    } else if (__VERIFIER_nondet_int()) {
      LL_APPEND_ELEM(head, e, n);
      if (e != NULL && n->next != e) reach_error();
    } else {
      LL_APPEND_ELEM(head, e, n);
      if (e != NULL && e->next != n) reach_error();
    }
    if (head == NULL) reach_error();
  }
  LL_FOREACH(head, p) {
    if (p == mark) reach_error();
    if (p->data != 0 && p->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  LL_SEARCH_SCALAR(head, found, data, 1);
  if (found != NULL && found->data != 1) reach_error();
  LL_FOREACH_SAFE(head, p, tmp)
    free(p);
  return 0;
}
