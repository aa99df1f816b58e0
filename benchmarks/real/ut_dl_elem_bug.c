/* ut_dl_elem_bug: changes the list as ut_dl_elem does, but the element that should go before
 * an arbitrary element is put after it, with DL_APPEND_ELEM instead of DL_PREPEND_ELEM (wrong
 * macro), so when the list is not empty the new element's next is not that element. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_elem_bug.c", __LINE__, "reach_error"); }
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
      DL_APPEND_ELEM(head, e, n);
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
