/* sll_sorted_insert: inserts nodes with nondeterministic keys into a sorted list; checks that
 * the list is sorted (p->data <= p->next->data) and acyclic. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_sorted_insert.c", __LINE__, "reach_error"); }
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

static struct node *insert_sorted(struct node *head, struct node *n) {
  struct node *p;
  if (head == NULL || n->data <= head->data) {
    n->next = head;
    return n;
  }
  p = head;
  while (p->next != NULL && p->next->data < n->data)
    p = p->next;
  n->next = p->next;
  p->next = n;
  return head;
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
  struct node *head = NULL, *p;
  while (__VERIFIER_nondet_int())
    head = insert_sorted(head, node_new(__VERIFIER_nondet_int()));
  check_acyclic(head);
  for (p = head; p != NULL; p = p->next)
    if (p->next != NULL && p->data > p->next->data) reach_error();
  list_free(head);
  return 0;
}
