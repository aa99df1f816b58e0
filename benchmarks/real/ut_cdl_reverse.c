/* ut_cdl_reverse: a circular doubly-linked list built with utlist.h's CDL_APPEND (utlist.h
 * vendored unmodified), first elements with data 0, then elements with data 1, is reversed
 * with CDL_REVERSE. Checks that the old last element (head->prev) is the new head, that
 * p->next->prev == p and p->prev->next == p everywhere, that the walk from the head reads
 * 1...1 0...0 and returns to the head without meeting an element twice; then frees it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_cdl_reverse.c", __LINE__, "reach_error"); }
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
  CDL_REVERSE(head);
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
