/* ut_ll_reverse: a singly-linked list built with utlist.h's LL_APPEND (utlist.h vendored
 * unmodified), first elements with data 0, then elements with data 1, is reversed with
 * LL_REVERSE. Checks that the old last element is the new head, that the old head is the new
 * last element, that the list reads 1...1 0...0 and that it is acyclic; then frees it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_ll_reverse.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *next;
};

static void append(struct el **head, struct el **last, int d) {
  struct el *e = (struct el *) malloc(sizeof(struct el));
  if (!e) abort();
  e->data = d;
  LL_APPEND(*head, e);
  *last = e;
}

int main(void) {
  struct el *head = NULL, *first, *last = NULL, *p, *tmp, *mark = NULL;
  while (__VERIFIER_nondet_int())
    append(&head, &last, 0);
  while (__VERIFIER_nondet_int())
    append(&head, &last, 1);
  first = head;
  LL_REVERSE(head);
  if (head != last) reach_error();
  if (first != NULL && first->next != NULL) reach_error();
  LL_FOREACH(head, p) {
    if (p == mark) reach_error();
    if (p->next != NULL && p->data < p->next->data) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  LL_FOREACH_SAFE(head, p, tmp)
    free(p);
  return 0;
}
