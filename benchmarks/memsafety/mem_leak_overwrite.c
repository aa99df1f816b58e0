/* a node's successor replaced by a fresh one; the bug overwrites the field without freeing the old successor (the safe twin). */
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
    free(head->next);
    head->next = malloc(sizeof(struct node));
    head->next->next = NULL;
  }
  free(head->next);
  free(head);
  return 0;
}
