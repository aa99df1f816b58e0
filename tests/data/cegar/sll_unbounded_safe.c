/* An acyclic singly-linked list of unbounded length, walked to its end: needs the
 * shape domain (explicit heaps never close). */
extern void reach_error(void);
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct item {
  struct item *next;
  int val;
};

int main(void) {
  struct item *head = NULL;
  while (__VERIFIER_nondet_int()) {
    struct item *n = malloc(sizeof(struct item));
    if (!n) abort();
    n->next = head;
    n->val = 0;
    head = n;
  }
  struct item *p = head;
  while (p != NULL) {
    if (p->val != 0) reach_error();
    p = p->next;
  }
  return 0;
}
