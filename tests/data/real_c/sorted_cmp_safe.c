/* Insertion into a list kept in non-decreasing order of 0/1 data, compared cell with
 * cell through a comparator (`a->data - b->data`), then a check of the order. */
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) { abort(); }

struct el {
  int data;
  struct el *next;
};

static int cmp(struct el *a, struct el *b) { return a->data - b->data; }

int main(void) {
  struct el *head = NULL, *e, *p;
  while (__VERIFIER_nondet_int()) {
    e = malloc(sizeof(struct el));
    if (!e) abort();
    e->data = __VERIFIER_nondet_int() != 0;
    if (head == NULL || cmp(head, e) >= 0) {
      e->next = head;
      head = e;
    } else {
      p = head;
      while (p->next != NULL && cmp(p->next, e) < 0)
        p = p->next;
      e->next = p->next;
      p->next = e;
    }
  }
  for (p = head; p != NULL && p->next != NULL; p = p->next)
    if (cmp(p, p->next) > 0) reach_error();
  while (head != NULL) {
    p = head->next;
    free(head);
    head = p;
  }
  return 0;
}
