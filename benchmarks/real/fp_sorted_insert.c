/* fp_sorted_insert: library-style sorted_insert(head, e, cmp) and is_sorted(head, cmp) over a
 * utlist.h singly-linked list (utlist.h vendored unmodified; sorted_insert is
 * LL_INSERT_INORDER), taking the comparator as a function pointer. Two lists of elements with
 * data 0 or 1 are built, one with the ascending comparator and one with the descending one.
 * Checks that each list is sorted by its comparator and acyclic; then frees both. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "fp_sorted_insert.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "utlist.h"

struct el {
  int data;
  struct el *next;
};

static void sorted_insert(struct el **head, struct el *e, int (*cmp)(struct el *, struct el *)) {
  LL_INSERT_INORDER(*head, e, cmp);
}

/* 1 if no element compares greater than its successor; 0 on a repeated element (cycle) */
static int is_sorted(struct el *head, int (*cmp)(struct el *, struct el *)) {
  struct el *p, *mark = NULL;
  LL_FOREACH(head, p) {
    if (p == mark) return 0;
    if (p->next != NULL && cmp(p, p->next) > 0) return 0;
    if (__VERIFIER_nondet_int()) mark = p;
  }
  return 1;
}

static int ascending(struct el *a, struct el *b) {
  return a->data - b->data;
}

static int descending(struct el *a, struct el *b) {
  return b->data - a->data;
}

static struct el *el_new(void) {
  struct el *e = (struct el *) malloc(sizeof(struct el));
  if (!e) abort();
  e->data = __VERIFIER_nondet_int() != 0;
  e->next = NULL;
  return e;
}

int main(void) {
  struct el *up = NULL, *down = NULL, *p, *tmp;
  while (__VERIFIER_nondet_int()) {
    if (__VERIFIER_nondet_int())
      sorted_insert(&up, el_new(), ascending);
    else
      sorted_insert(&down, el_new(), descending);
  }
  if (!is_sorted(up, ascending) || !is_sorted(down, descending)) reach_error();
  LL_FOREACH_SAFE(up, p, tmp)
    free(p);
  LL_FOREACH_SAFE(down, p, tmp)
    free(p);
  return 0;
}
