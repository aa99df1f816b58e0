/* ut_cdl_elem_bug: changes the cycle as ut_cdl_elem does, but a replacement is made with the
 * non-circular DL_REPLACE_ELEM instead of CDL_REPLACE_ELEM (wrong macro); replacing the head
 * then leaves the last element's next pointing to the replaced one, which stays reachable. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_cdl_elem_bug.c", __LINE__, "reach_error"); }
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
      DL_REPLACE_ELEM(head, e, n);
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
