/* a search that looks one node ahead; the bug dereferences the successor of the last node (the bug). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

int main(void) {
  struct node *head = malloc(sizeof(struct node));
  head->next = NULL;
  head->data = 0;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    n->next = head;
    n->data = __VERIFIER_nondet_int();
    head = n;
  }
  struct node *p = head;
  while (p->next->data != 0) /* bug: p->next may be NULL */
    p = p->next;
  while (head != NULL) {
    struct node *next = head->next;
    free(head);
    head = next;
  }
  return 0;
}
