/* Build an acyclic list of arbitrary length, reverse it in place, then walk it.
 * The shape fixpoint must keep the list acyclic at every location; the reversed
 * list is not empty. (That the old last node becomes the head needs binary
 * reachability, which the sll class does not have.) */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_reverse.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
};

struct node *reverse(struct node *p) {
  struct node *r = NULL, *t;
  while (p != NULL) {
    t = p->next;
    p->next = r;
    r = p;
    p = t;
  }
  return r;
}

int main(void) {
  struct node *head = malloc(sizeof(struct node)), *last, *p;
  if (!head) abort();
  head->next = NULL;
  last = head;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    if (!n) abort();
    n->next = NULL;
    last->next = n;
    last = n;
  }
  head = reverse(head);
  if (head == NULL) reach_error(); /* the list has at least one node */
  for (p = head; p != NULL; p = p->next) {
  }
  while (head != NULL) {
    p = head->next;
    free(head);
    head = p;
  }
  return 0;
}
