/* q_slist_remove: builds a glibc <sys/queue.h> SLIST of arbitrary length with
 * SLIST_INSERT_HEAD, then repeatedly removes an arbitrary element (possibly the first) with
 * SLIST_REMOVE. Checks after each removal that the removed element is no longer reachable
 * from the head (SLIST_FOREACH) and that the list is acyclic (nondeterministic mark), then
 * frees it; finally frees the rest with SLIST_REMOVE_HEAD. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_slist_remove.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct node {
  int data;
  SLIST_ENTRY(node) link;
};

SLIST_HEAD(nodelist, node);

int main(void) {
  struct nodelist head = SLIST_HEAD_INITIALIZER(head);
  struct node *n, *p, *victim, *mark;
  while (__VERIFIER_nondet_int()) {
    n = (struct node *) malloc(sizeof(struct node));
    if (!n) abort();
    n->data = 0;
    SLIST_INSERT_HEAD(&head, n, link);
  }
  while (!SLIST_EMPTY(&head) && __VERIFIER_nondet_int()) {
    victim = SLIST_FIRST(&head);
    while (SLIST_NEXT(victim, link) != NULL && __VERIFIER_nondet_int())
      victim = SLIST_NEXT(victim, link);
    SLIST_REMOVE(&head, victim, node, link);
    mark = NULL;
    SLIST_FOREACH(p, &head, link) {
      if (p == victim || p == mark) reach_error();
      if (__VERIFIER_nondet_int()) mark = p;
    }
    free(victim);
  }
  while (!SLIST_EMPTY(&head)) {
    p = SLIST_FIRST(&head);
    SLIST_REMOVE_HEAD(&head, link);
    free(p);
  }
  return 0;
}
