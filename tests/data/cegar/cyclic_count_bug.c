/* A sentinel cycle built by adding cells after the sentinel; a walk from the sentinel
 * back to it counts the cells and compares with the length counter. The counted cells
 * (from the sentinel up to p) and the rest (from p back to the sentinel) are both
 * reachable from every pointer on a cycle: only the segments rs[head] and rs[p]
 * (cyclic-dll's `seg` family) keep them apart. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "cyclic_count_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  struct node *next, *prev;
};

void add(struct node *head) {
  struct node *n = malloc(sizeof(struct node));
  if (!n) abort();
  n->next = head->next;
  n->prev = head;
  head->next->prev = n;
  head->next = n;
}

int main() {
  struct node *head = malloc(sizeof(struct node));
  struct node *p;
  int len = 0, count = 0;
  if (!head) abort();
  head->next = head;
  head->prev = head;
  while (__VERIFIER_nondet_int()) {
    add(head);
    len++;
  }
  p = head;
  do {
    count++;
    p = p->next;
  } while (p != head);
  if (count != len) reach_error();
  return 0;
}
