/* A callback that may be NULL when it is called: undefined behaviour, never SAFE
 * (the error itself is unreachable). */
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
#include <stdlib.h>

struct node {
  struct node *next;
  int data;
};

static void set_one(struct node *n) { n->data = 1; }

int main(void) {
  void (*visit)(struct node *) = __VERIFIER_nondet_int() ? set_one : NULL;
  struct node *n = malloc(sizeof *n);
  if (n == NULL)
    return 0;
  n->data = 1;
  visit(n);
  if (n->data != 1)
    reach_error();
  free(n);
  return 0;
}
