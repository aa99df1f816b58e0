/* glibc <sys/queue.h> SLIST with its head struct on the stack (`&head` passed to
 * every macro): every node pushed holds 1, the walk sees only 1s, and the list is
 * emptied from the front. Bug: a node may hold 2. */
#include <stdlib.h>
#include <sys/queue.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);

struct entry {
  int data;
  SLIST_ENTRY(entry) entries;
};
SLIST_HEAD(slisthead, entry);

int main(void) {
  struct slisthead head;
  SLIST_INIT(&head);
  while (__VERIFIER_nondet_int()) {
    struct entry *e = malloc(sizeof *e);
    if (!e)
      abort();
    e->data = __VERIFIER_nondet_int() ? 1 : 2; /* BUG: some nodes hold 2 */
    SLIST_INSERT_HEAD(&head, e, entries);
  }
  struct entry *np;
  SLIST_FOREACH(np, &head, entries) {
    if (np->data != 1)
      reach_error();
  }
  while (!SLIST_EMPTY(&head)) {
    struct entry *n1 = SLIST_FIRST(&head);
    SLIST_REMOVE_HEAD(&head, entries);
    free(n1);
  }
  return 0;
}
