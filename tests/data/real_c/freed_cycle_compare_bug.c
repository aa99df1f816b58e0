/* The twin of freed_cycle_compare_safe.c with the sense of the check reversed: a freed
 * cell that was not the only one compares unequal with the last cell, and the list is
 * not empty then. */
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) { abort(); }

struct el {
  int data;
  struct el *prev, *next;
};

int main(void) {
  struct el *head = NULL, *e, *p, *last;
  while (__VERIFIER_nondet_int()) {
    e = malloc(sizeof(struct el));
    if (!e) abort();
    if (head == NULL) {
      e->prev = e;
      e->next = e;
    } else {
      e->next = head;
      e->prev = head->prev;
      head->prev->next = e;
      head->prev = e;
    }
    head = e;
  }
  if (head != NULL) {
    p = head;
    last = head->prev;
    if (head->next == head) {
      head = NULL;
    } else {
      head->next->prev = head->prev;
      head->prev->next = head->next;
      head = head->next;
    }
    free(p);
    if ((p == last) != (head != NULL)) reach_error();
  }
  return 0;
}
