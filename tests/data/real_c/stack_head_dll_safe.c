/* A cyclic doubly-linked list whose sentinel head is a plain stack struct used in place
 * (`head.next`, `&head`, no functions): the ART's samples at its sampling threshold
 * hold only the fields its precision tracks (unknown elsewhere) and show no data
 * structure; the program's own samples show a cyclic DLL. */
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);

struct n {
  struct n *next, *prev;
  int data;
};

int main(void) {
  struct n head;
  head.next = &head;
  head.prev = &head;
  while (__VERIFIER_nondet_int()) {
    struct n *e = malloc(sizeof(struct n));
    if (!e)
      abort();
    e->next = head.next;
    e->prev = &head;
    head.next->prev = e;
    head.next = e;
  }
  while (head.next != &head) {
    struct n *e = head.next;
    e->next->prev = &head;
    head.next = e->next;
    free(e);
  }
  if (head.prev != &head)
    reach_error();
  return 0;
}
