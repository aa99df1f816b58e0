/* sll_length_bug: builds a list of arbitrary length at its tail while counting the nodes in
 * `len`, removes a nondeterministic number of nodes from the front (decrementing `len`),
 * and checks that a walk over the list counts exactly `len` nodes.
 * Bug: the removal decrements `len` only while nodes remain (too narrow `if`). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_length_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
};

int main() {
  struct node *head = NULL, *tail = NULL, *n, *p;
  int len = 0, count = 0;
  while (__VERIFIER_nondet_int()) {
    n = (struct node *) malloc(sizeof(struct node));
    if (!n) abort();
    n->data = 0;
    n->next = NULL;
    if (tail == NULL) head = n; else tail->next = n;
    tail = n;
    len++;
  }
  while (head != NULL && __VERIFIER_nondet_int()) {
    p = head;
    head = head->next;
    if (head == NULL) tail = NULL;
    free(p);
    if (head != NULL) len--;
  }
  p = head;
  while (p != NULL) {
    count++;
    p = p->next;
  }
  if (!(count == len)) reach_error();
  while (head != NULL) {
    p = head->next;
    free(head);
    head = p;
  }
  return 0;
}
