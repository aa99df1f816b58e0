/* list destruction with an off-by-one loop condition: the last node is never freed (the safe twin). */
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
  while (head->next != NULL) {
    struct node *next = head->next;
    free(head);
    head = next;
  }
  free(head);
  return 0;
}
