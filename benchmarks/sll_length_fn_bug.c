/* sll_length_fn_bug: the function miscounts lists of more than two nodes.
 * Otherwise as sll_length_fn: builds a list of arbitrary length while counting its nodes in `len`,
 * then a function walks the list and returns the number of nodes it saw; the two counts
 * must agree. The count crosses a call: the callee's counter, its return value and the
 * caller's variable are related to the list's length. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_length_fn_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
};

int length(struct node *p) {
  int k = 0;
  while (p != NULL) {
    k++;
    p = p->next;
  }
  return k + (k > 2);
}

int main() {
  struct node *head = NULL, *n;
  int len = 0, got;
  while (__VERIFIER_nondet_int()) {
    n = (struct node *) malloc(sizeof(struct node));
    if (!n) abort();
    n->data = len;
    n->next = head;
    head = n;
    len++;
  }
  got = length(head);
  if (got != len) reach_error();
  while (head != NULL) {
    n = head->next;
    free(head);
    head = n;
  }
  return 0;
}
