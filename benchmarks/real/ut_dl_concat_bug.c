/* ut_dl_concat_bug: joins two utlist.h doubly-linked lists as ut_dl_concat does, but reads the
 * old last element of a (a->prev) after DL_CONCAT instead of before it (misordered); when b
 * was not empty that is b's last element, whose next is NULL, not b's first element. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "ut_dl_concat_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *prev, *next;
};

static struct el *build(int d) {
  struct el *head = NULL, *e;
  while (__VERIFIER_nondet_int()) {
    e = (struct el *) malloc(sizeof(struct el));
    if (!e) abort();
    e->data = d;
    if (__VERIFIER_nondet_int())
      DL_APPEND(head, e);
    else
      DL_PREPEND(head, e);
  }
  return head;
}

int main(void) {
  struct el *a = build(0), *b = build(1), *p, *tmp, *last = NULL, *mark = NULL;
  struct el *lasta = NULL, *firstb = b;
  DL_CONCAT(a, b);
  if (a != NULL)
    lasta = a->prev;
  b = NULL;
  if (lasta != NULL && lasta->next != firstb) reach_error();
  DL_FOREACH(a, p) {
    if (p == mark) reach_error();
    if (p->next != NULL && (p->next->prev != p || p->data > p->next->data)) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    last = p;
  }
  if (a != NULL && a->prev != last) reach_error();
  DL_FOREACH_SAFE(a, p, tmp)
    free(p);
  return 0;
}
