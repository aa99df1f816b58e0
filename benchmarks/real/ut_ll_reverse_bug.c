/* ut_ll_reverse_bug: builds and checks a utlist.h singly-linked list as ut_ll_reverse does,
 * but LL_REVERSE is applied to a copy of the head pointer and the head is not updated
 * (misused macro argument), so with two or more elements the head is not the old last. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_ll_reverse_bug.c", __LINE__, "reach_error"); }
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
  p = head;
  LL_REVERSE(p);
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
