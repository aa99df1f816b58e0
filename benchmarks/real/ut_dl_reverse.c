/* ut_dl_reverse: a doubly-linked list built with utlist.h's DL_APPEND (utlist.h vendored
 * unmodified), first elements with data 0, then elements with data 1, is reversed with
 * DL_REVERSE. Checks that the old last element is the new head and the old head the new last
 * element, that p->next->prev == p everywhere, that head->prev is the last element, that the
 * list reads 1...1 0...0 and that it is acyclic; then frees it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_reverse.c", __LINE__, "reach_error"); }
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
  DL_APPEND(*head, e);
}

int main(void) {
  struct el *head = NULL, *first, *oldlast = NULL, *last = NULL, *p, *tmp, *mark = NULL;
  while (__VERIFIER_nondet_int())
    append(&head, 0);
  while (__VERIFIER_nondet_int())
    append(&head, 1);
  first = head;
  if (head != NULL)
    oldlast = head->prev;
  DL_REVERSE(head);
  if (head != oldlast) reach_error();
  if (first != NULL && first->next != NULL) reach_error();
  DL_FOREACH(head, p) {
    if (p == mark) reach_error();
    if (p->next != NULL && (p->next->prev != p || p->data < p->next->data)) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    last = p;
  }
  if (head != NULL && head->prev != last) reach_error();
  DL_FOREACH_SAFE(head, p, tmp)
    free(p);
  return 0;
}
