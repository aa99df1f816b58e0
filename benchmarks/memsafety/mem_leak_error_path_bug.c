/* two allocations; on the error path (a failed check) the bug returns without freeing the first (the bug). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

static int setup(struct node **out) {
  struct node *a = malloc(sizeof(struct node));
  a->data = 0;
  a->next = NULL;
  if (__VERIFIER_nondet_int()) {
    return -1; /* bug: a is lost */
  }
  struct node *b = malloc(sizeof(struct node));
  b->data = 1;
  b->next = NULL;
  a->next = b;
  *out = a;
  return 0;
}

int main(void) {
  struct node *list = NULL;
  if (setup(&list) != 0)
    return 1;
  free(list->next);
  free(list);
  return 0;
}
