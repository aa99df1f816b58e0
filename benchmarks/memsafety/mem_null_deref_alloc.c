/* an allocation wrapper that may fail (returns NULL); the bug uses its result unchecked (the safe twin). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

static struct node *try_alloc(void) {
  if (__VERIFIER_nondet_int())
    return NULL; /* out of memory */
  return malloc(sizeof(struct node));
}

int main(void) {
  struct node *n = try_alloc();
  if (n == NULL)
    return 1;
  n->data = 1;
  n->next = NULL;
  free(n);
  return 0;
}
