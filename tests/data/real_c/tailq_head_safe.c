/* glibc <sys/queue.h> TAILQ (tqe_prev and tqh_last are `struct entry **` into the
 * head or an element) with its head on the stack: nodes inserted at either end hold
 * 1, the walk sees only 1s, and every node is removed with TAILQ_REMOVE. */
#include <stdlib.h>
#include <sys/queue.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);

struct entry {
  int data;
  TAILQ_ENTRY(entry) entries;
};
TAILQ_HEAD(tailhead, entry);

int main(void) {
  struct tailhead head;
  TAILQ_INIT(&head);
  while (__VERIFIER_nondet_int()) {
    struct entry *e = malloc(sizeof *e);
    if (!e)
      abort();
    e->data = 1;
    if (__VERIFIER_nondet_int())
      TAILQ_INSERT_HEAD(&head, e, entries);
    else
      TAILQ_INSERT_TAIL(&head, e, entries);
  }
  struct entry *np;
  TAILQ_FOREACH(np, &head, entries) {
    if (np->data != 1)
      reach_error();
  }
  while (!TAILQ_EMPTY(&head)) {
    struct entry *n1 = TAILQ_FIRST(&head);
    TAILQ_REMOVE(&head, n1, entries);
    free(n1);
  }
  return 0;
}
