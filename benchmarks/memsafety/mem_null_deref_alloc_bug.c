/* an allocation wrapper that may fail (returns NULL); the bug uses its result unchecked (the bug). */
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
  n->data = 1; /* bug: n may be NULL */
  n->next = NULL;
  free(n);
  return 0;
}
