/* sll_create: builds a singly-linked list of arbitrary length by nondeterministically
 * prepending at head or appending at tail; checks that the list is acyclic and that the
 * only node with next == NULL is the one tail points to. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_create.c", __LINE__, "reach_error"); }
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
  struct node *head = NULL, *tail = NULL, *p;
  while (__VERIFIER_nondet_int()) {
    struct node *n = node_new(0);
    if (head == NULL) {
      head = n;
      tail = n;
    } else if (__VERIFIER_nondet_int()) {
      n->next = head;
      head = n;
    } else {
      tail->next = n;
      tail = n;
    }
  }
  check_acyclic(head);
  for (p = head; p != NULL; p = p->next)
    if (p->next == NULL && p != tail) reach_error();
  list_free(head);
  return 0;
}
