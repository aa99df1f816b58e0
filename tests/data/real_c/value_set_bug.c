/* Cells with data 0 or 1 (and 2 for the third cell: the bug) are inserted at the head or after an arbitrary cell, so that
 * the values interleave; then every cell is checked to hold 0 or 1, the way C code
 * writes it (`p->data != 0 && p->data != 1`: the field read twice). */
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) { abort(); }

struct el {
  int data;
  struct el *next;
};

int main(void) {
  struct el *head = NULL, *e, *p;
  while (__VERIFIER_nondet_int()) {
    e = malloc(sizeof(struct el));
    if (!e) abort();
    e->data = (__VERIFIER_nondet_int() != 0) + (head != NULL && head->next == NULL);
    if (head == NULL || __VERIFIER_nondet_int()) {
      e->next = head;
      head = e;
    } else {
      p = head;
      while (p->next != NULL && __VERIFIER_nondet_int())
        p = p->next;
      e->next = p->next;
      p->next = e;
    }
  }
  for (p = head; p != NULL; p = p->next)
    if (p->data != 0 && p->data != 1) reach_error();
  while (head != NULL) {
    p = head->next;
    free(head);
    head = p;
  }
  return 0;
}
