/* a list is destroyed; the bug frees the head once more on one branch (the bug). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

int main(void) {
  struct node *head = malloc(sizeof(struct node));
  head->next = NULL;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    n->next = head;
    head = n;
  }
  struct node *first = head;
  while (head != NULL) {
    struct node *next = head->next;
    free(head);
    head = next;
  }
  if (__VERIFIER_nondet_int())
    free(first); /* bug: freed in the loop already */
  return 0;
}
