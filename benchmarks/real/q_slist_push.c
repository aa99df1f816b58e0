/* q_slist_push: glibc <sys/queue.h> SLIST (unmodified, included from the system) used as a
 * stack. Elements with data 0 or 1 are pushed with SLIST_INSERT_HEAD or inserted after an
 * arbitrary element with SLIST_INSERT_AFTER; then a new element (data 2) is pushed.
 * Checks that SLIST_FIRST is the element just pushed and SLIST_NEXT of it is the old first
 * element, that every other element has data 0 or 1 and that the list is acyclic
 * (SLIST_FOREACH with a nondeterministic mark); then pops everything with SLIST_REMOVE_HEAD. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_slist_push.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct node {
  int data;
  SLIST_ENTRY(node) link;
};

SLIST_HEAD(stack, node);

static struct node *node_new(int d) {
  struct node *n = (struct node *) malloc(sizeof(struct node));
  if (!n) abort();
  n->data = d;
  return n;
}

int main(void) {
  struct stack st;
  struct node *n, *p, *old, *mark = NULL;
  SLIST_INIT(&st);
  while (__VERIFIER_nondet_int()) {
    n = node_new(__VERIFIER_nondet_int() != 0);
    if (SLIST_EMPTY(&st) || __VERIFIER_nondet_int()) {
      SLIST_INSERT_HEAD(&st, n, link);
    } else {
      p = SLIST_FIRST(&st);
      while (SLIST_NEXT(p, link) != NULL && __VERIFIER_nondet_int())
        p = SLIST_NEXT(p, link);
      SLIST_INSERT_AFTER(p, n, link);
    }
  }
  n = node_new(2);
  old = SLIST_FIRST(&st);
  SLIST_INSERT_HEAD(&st, n, link);
  if (SLIST_FIRST(&st) != n || SLIST_NEXT(n, link) != old) reach_error();
  SLIST_FOREACH(p, &st, link) {
    if (p == mark) reach_error();
    if (p != n && p->data != 0 && p->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  while (!SLIST_EMPTY(&st)) {
    p = SLIST_FIRST(&st);
    SLIST_REMOVE_HEAD(&st, link);
    free(p);
  }
  return 0;
}
