/* sll_insert_bug: insert_after sets p->next before it reads p->next for the new node
 * (misordered pointer updates), so the new node points to itself: a cycle. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_insert_bug.c", __LINE__, "reach_error"); }
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

/* link n in right after p */
static void insert_after(struct node *p, struct node *n) {
  p->next = n;
  n->next = p->next;
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
  struct node *head = list_alloc(), *p;
  while (__VERIFIER_nondet_int()) {
    p = head;
    while (p->next != NULL && __VERIFIER_nondet_int())
      p = p->next;
    insert_after(p, node_new(1));
  }
  check_acyclic(head);
  for (p = head; p != NULL; p = p->next)
    if (p->data != 0 && p->data != 1) reach_error();
  list_free(head);
  return 0;
}
