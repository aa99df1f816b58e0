/* A visitor called on every node of a list by a generic traversal: one visitor
 * initialises the nodes, the other checks them. */
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
#include <stdlib.h>

struct node {
  struct node *next;
  int data;
};

typedef void (*visitor)(struct node *);

static void for_each(struct node *p, visitor visit) {
  while (p != NULL) {
    visit(p);
    p = p->next;
  }
}

static void set_one(struct node *n) { n->data = 1; }

static void check_one(struct node *n) {
  if (n->data != 1)
    reach_error();
}

int main(void) {
  struct node *head = NULL;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof *n);
    if (n == NULL)
      abort();
    n->next = head;
    n->data = __VERIFIER_nondet_int();
    head = n;
  }
  for_each(head, set_one);
  for_each(head, check_one);
  while (head != NULL) {
    struct node *next = head->next;
    free(head);
    head = next;
  }
  return 0;
}
