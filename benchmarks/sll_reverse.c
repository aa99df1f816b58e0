/* sll_reverse: in-place reversal of a list of arbitrary length whose first node is tagged
 * data == 1; checks that the result starts at the old last node, is acyclic, and that the
 * node with next == NULL is the tagged one. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_reverse.c", __LINE__, "reach_error"); }
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

static struct node *reverse(struct node *p) {
  struct node *r = NULL, *t;
  while (p != NULL) {
    t = p->next;
    p->next = r;
    r = p;
    p = t;
  }
  return r;
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
  struct node *head = node_new(1), *last = head, *p;
  while (__VERIFIER_nondet_int()) {
    last->next = node_new(0);
    last = last->next;
  }
  head = reverse(head);
  if (head != last) reach_error();
  check_acyclic(head);
  for (p = head; p != NULL; p = p->next)
    if (p->next == NULL && p->data != 1) reach_error();
  list_free(head);
  return 0;
}
