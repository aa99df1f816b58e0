/* Bounded recursion (cfa::recursion): a list of unbounded length freed by a recursive
 * function. Safe, but the proof would need every depth: UNKNOWN, never SAFE. */
extern void abort(void);
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct node { struct node *next; };
void drop(struct node *l) { if (l) { drop(l->next); free(l); } }
int main(void) {
  struct node *l = NULL, *n;
  while (__VERIFIER_nondet_int()) {
    n = malloc(sizeof *n);
    if (!n) abort();
    n->next = l; l = n;
  }
  drop(l);
  return 0;
}
