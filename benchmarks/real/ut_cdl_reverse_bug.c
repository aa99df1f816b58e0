/* ut_cdl_reverse_bug: builds and checks a utlist.h circular doubly-linked list as
 * ut_cdl_reverse does, but CDL_REVERSE is applied to a copy of the head pointer (misused macro
 * argument): the head stays the old first element, whose successor is now the old last. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_cdl_reverse_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *prev, *next;
};

static void append(struct el **head, int d) {
  struct el *e = (struct el *) malloc(sizeof(struct el));
  if (!e) abort();
  e->data = d;
  CDL_APPEND(*head, e);
}

int main(void) {
  struct el *head = NULL, *oldlast = NULL, *p, *tmp1, *tmp2, *mark = NULL;
  while (__VERIFIER_nondet_int())
    append(&head, 0);
  while (__VERIFIER_nondet_int())
    append(&head, 1);
  if (head != NULL)
    oldlast = head->prev;
  p = head;
  CDL_REVERSE(p);
  if (head != oldlast) reach_error();
  CDL_FOREACH(head, p) {
    if (p == mark) reach_error();
    if (p->next->prev != p || p->prev->next != p) reach_error();
    if (p->next != head && p->data < p->next->data) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  CDL_FOREACH_SAFE(head, p, tmp1, tmp2) {
    CDL_DELETE(head, p);
    free(p);
  }
  return 0;
}
