/* a list kept in a global; the bug never frees it (still reachable: valid-memsafety holds, valid-memcleanup does not) (the bug). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

struct node *list;

int main(void) {
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    n->next = list;
    list = n;
  }
  return 0; /* bug: the list is still allocated */
}
