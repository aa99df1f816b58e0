/* a list built in a loop; the bug forgets to link each new node (lost at the next iteration) (the bug). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

int main(void) {
  struct node *head = NULL;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    n->data = 1;
    n->next = NULL; /* bug: should be head */
    head = n;
  }
  while (head != NULL) {
    struct node *next = head->next;
    free(head);
    head = next;
  }
  return 0;
}
