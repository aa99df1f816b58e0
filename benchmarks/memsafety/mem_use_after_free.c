/* list destruction that reads the next pointer of the node it has just freed (the safe twin). */
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
    n->next = head;
    head = n;
  }
  while (head != NULL) {
    struct node *p = head;
    head = p->next;
    free(p);
  }
  return 0;
}
