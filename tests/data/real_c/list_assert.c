/* A list of nondeterministic length built with malloc and checked with assert():
 * the program tests/real_c.rs preprocesses with gcc (glibc's <stdlib.h> and
 * <assert.h> as gcc sees them) and verifies both ways. BUG selects the faulty
 * variant. */
#include <stdlib.h>
#include <assert.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

int main(void) {
  struct node *head = NULL;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof *n);
    if (n == NULL)
      abort();
    n->next = head;
    n->data = 1;
    head = n;
  }
#ifdef BUG
  if (head != NULL)
    head->data = 0;
#endif
  while (head != NULL) {
    struct node *t = head->next;
    assert(head->data == 1);
    free(head);
    head = t;
  }
  return 0;
}
