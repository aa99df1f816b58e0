/* Flags stored as `nondet() != 0` (0 or 1) in a list: the walk sees only 0 and 1.
 * Needs the range of a comparison's value and integer reasoning across the field
 * assertions of one cell. Bug: a flag may be 2. */
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);

struct node {
  struct node *next;
  int data;
};

int main(void) {
  struct node *head = NULL, *p;
  while (__VERIFIER_nondet_int()) {
    p = malloc(sizeof *p);
    if (!p)
      abort();
    p->data = (__VERIFIER_nondet_int() != 0) + (__VERIFIER_nondet_int() != 0); /* BUG: 0, 1 or 2 */
    p->next = head;
    head = p;
  }
  for (p = head; p != NULL; p = p->next) {
    if (p->data != 0 && p->data != 1)
      reach_error();
  }
  while (head != NULL) {
    p = head->next;
    free(head);
    head = p;
  }
  return 0;
}
