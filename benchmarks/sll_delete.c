/* sll_delete: repeatedly unlinks an arbitrary node x (possibly the head) from a list of
 * arbitrary length; checks that x is no longer reachable from head and the list is acyclic,
 * then frees x. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_delete.c", __LINE__, "reach_error"); }
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

/* a non-empty list of arbitrary length */
static struct node *list_alloc(void) {
  struct node *head = node_new(0);
  while (__VERIFIER_nondet_int()) {
    struct node *n = node_new(0);
    n->next = head;
    head = n;
  }
  return head;
}

/* unlink x (which is in the list) and return the new head */
static struct node *list_delete(struct node *head, struct node *x) {
  struct node *prev = NULL, *p = head;
  while (p != x) {
    prev = p;
    p = p->next;
  }
  if (prev == NULL) head = x->next; else prev->next = x->next;
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
  struct node *head = list_alloc(), *x, *p;
  while (head != NULL && __VERIFIER_nondet_int()) {
    x = head;
    while (x->next != NULL && __VERIFIER_nondet_int())
      x = x->next;
    head = list_delete(head, x);
    for (p = head; p != NULL; p = p->next)
      if (p == x) reach_error();
    check_acyclic(head);
    free(x);
  }
  list_free(head);
  return 0;
}
