/* sll_split_bug: split forgets to terminate the first half (slow->next = NULL missing), so the
 * two halves overlap. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_split_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
};

static struct node *node_new(int d) {
  struct node *n = (struct node *) malloc(sizeof(struct node));
  if (!n) abort();
  n->data = d;
  n->next = NULL;
  return n;
}

/* cut the list after its middle node; returns the second half */
static struct node *split(struct node *head) {
  struct node *slow = head, *fast = head->next, *second;
  while (fast != NULL && fast->next != NULL) {
    slow = slow->next;
    fast = fast->next->next;
  }
  second = slow->next;
  return second;
}

/* a cycle would bring p back to a node marked earlier */
static void check_acyclic(struct node *p) {
  struct node *mark = NULL;
  while (p != NULL) {
    if (p == mark) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    p = p->next;
  }
}

static void list_free(struct node *p) {
  while (p != NULL) {
    struct node *t = p->next;
    free(p);
    p = t;
  }
}

int main(void) {
  struct node *head = node_new(0), *last = head, *second, *p;
  while (__VERIFIER_nondet_int()) {
    last->next = node_new(0);
    last = last->next;
  }
  second = split(head);
  check_acyclic(head);
  check_acyclic(second);
  for (p = head; p != NULL; p = p->next)
    if (p == second) reach_error();
  for (p = second; p != NULL; p = p->next)
    if (p->next == NULL && p != last) reach_error();
  list_free(head);
  list_free(second);
  return 0;
}
