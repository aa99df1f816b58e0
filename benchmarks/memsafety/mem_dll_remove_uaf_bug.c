/* removal of a node from a doubly-linked list; the bug unlinks it after freeing it (the bug). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

struct dnode {
  struct dnode *next;
  struct dnode *prev;
};

int main(void) {
  struct dnode *a = malloc(sizeof(struct dnode));
  struct dnode *b = malloc(sizeof(struct dnode));
  struct dnode *c = malloc(sizeof(struct dnode));
  a->prev = NULL;
  a->next = b;
  b->prev = a;
  b->next = c;
  c->prev = b;
  c->next = NULL;
  struct dnode *x = __VERIFIER_nondet_int() ? b : c;
  free(x);
  x->prev->next = x->next; /* bug: x is freed */
  if (x->next != NULL)
    x->next->prev = x->prev;
  while (a != NULL) {
    struct dnode *n = a->next;
    free(a);
    a = n;
  }
  return 0;
}
