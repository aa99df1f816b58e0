/* a node's successor replaced by a fresh one; the bug overwrites the field without freeing the old successor (the bug). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

int main(void) {
  struct node *head = malloc(sizeof(struct node));
  head->next = malloc(sizeof(struct node));
  head->next->next = NULL;
  if (__VERIFIER_nondet_int()) {
    head->next = malloc(sizeof(struct node)); /* bug: the old successor is lost */
    head->next->next = NULL;
  }
  free(head->next);
  free(head);
  return 0;
}
