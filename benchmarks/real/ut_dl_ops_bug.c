/* ut_dl_ops_bug: updates a utlist.h doubly-linked list as ut_dl_ops does, but removes with the
 * wrong macro, the singly-linked LL_DELETE instead of DL_DELETE, which leaves the prev
 * pointers (and the head's pointer to the last element) pointing to the removed element. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_ops_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *prev, *next;
};

static void check_dl(struct el *head, struct el *gone) {
  struct el *p, *last = NULL, *mark = NULL;
  DL_FOREACH(head, p) {
    if (p == mark || p == gone) reach_error();
    if (p->data != 0 && p->data != 1) reach_error();
    if (p->next != NULL && p->next->prev != p) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    last = p;
  }
  if (head != NULL && head->prev != last) reach_error();
}

int main(void) {
  struct el *head = NULL, *e, *p, *tmp;
  while (__VERIFIER_nondet_int()) {
    if (head != NULL && __VERIFIER_nondet_int()) {
      e = head;
      while (e->next != NULL && __VERIFIER_nondet_int())
        e = e->next;
      LL_DELETE(head, e);
      check_dl(head, e);
      free(e);
      continue;
    }
    e = (struct el *) malloc(sizeof(struct el));
    if (!e) abort();
    e->data = __VERIFIER_nondet_int() != 0;
    if (__VERIFIER_nondet_int())
      DL_PREPEND(head, e);
    else
      DL_APPEND(head, e);
    check_dl(head, NULL);
  }
  DL_FOREACH_SAFE(head, p, tmp) {
    DL_DELETE(head, p);
    free(p);
  }
  if (head != NULL) reach_error();
  return 0;
}
