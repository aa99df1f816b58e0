/* Flags stored as `nondet() != 0` (0 or 1) in a list: the walk sees only 0 and 1.
 * Needs the range of a comparison's value and integer reasoning across the field
 * assertions `data == 0`, `data == 1`, `data >= 0`, `data <= 1` of one cell. */
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
    p->data = __VERIFIER_nondet_int() != 0;
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
