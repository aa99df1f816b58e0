/* The bug twin of param_flag_safe.c: a node with data 0 fails the check `data == 1`. */
extern void abort(void);
extern int __VERIFIER_nondet_int(void);
void reach_error(void) { abort(); }
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
};

static struct node *node_new(int d, struct node *next) {
  struct node *n = malloc(sizeof(struct node));
  if (!n) abort();
  n->data = d;
  n->next = next;
  return n;
}

int main(void) {
  struct node *head = NULL, *p;
  while (__VERIFIER_nondet_int())
    head = node_new(__VERIFIER_nondet_int() != 0, head);
  for (p = head; p != NULL; p = p->next)
    if (p->data != 1) reach_error();
  while (head != NULL) {
    p = head->next;
    free(head);
    head = p;
  }
  return 0;
}
