/* a list with a sentinel node on the stack; the bug frees the sentinel too (the safe twin). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

int main(void) {
  struct node sentinel;
  sentinel.next = NULL;
  struct node *last = &sentinel;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    n->next = NULL;
    last->next = n;
    last = n;
  }
  struct node *p = sentinel.next;
  while (p != NULL) {
    struct node *next = p->next;
    free(p);
    p = next;
  }
  return 0;
}
