/* a second pointer that may alias a list's second node; the bug frees through both (the safe twin). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

int main(void) {
  struct node *a = malloc(sizeof(struct node));
  struct node *b = malloc(sizeof(struct node));
  a->next = b;
  b->next = NULL;
  struct node *alias = __VERIFIER_nondet_int() ? a->next : NULL;
  if (alias == NULL)
    free(a->next);
  free(a);
  free(alias);
  return 0;
}
