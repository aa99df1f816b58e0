/* utlist's idiom for emptying a circular doubly-linked list: CDL_FOREACH_SAFE walks it
 * (its end test compares the element just freed with the last one, read before the
 * walk) while CDL_DELETE unlinks and frees each element; the list is then empty. */
#include <stdlib.h>
#include "../../../benchmarks/real/utlist.h"
extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) { abort(); }

struct el {
  int data;
  struct el *prev, *next;
};

static void append(struct el **head) {
  struct el *e = (struct el *) malloc(sizeof(struct el));
  if (!e) abort();
  CDL_APPEND(*head, e);
}

int main(void) {
  struct el *head = NULL, *p, *tmp1, *tmp2;
  while (__VERIFIER_nondet_int())
    append(&head);
  CDL_FOREACH_SAFE(head, p, tmp1, tmp2) {
    CDL_DELETE(head, p);
    free(p);
  }
  if (head != NULL) reach_error();
  return 0;
}
