/* Bounded recursion (cfa::recursion): a list of two cells summed and freed by
 * recursive functions, three activations deep at most. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "recursive_free_safe.c", __LINE__, "reach_error"); }
#include <stdlib.h>
struct node { struct node *next; int v; };
int sum(struct node *l) { return l ? l->v + sum(l->next) : 0; }
void drop(struct node *l) { if (l) { drop(l->next); free(l); } }
/* mutual recursion: even -> odd stays on a level, odd -> even starts the next one */
int even(int n);
int odd(int n) { return n == 0 ? 0 : even(n - 1); }
int even(int n) { return n == 0 ? 1 : odd(n - 1); }
int main(void) {
  struct node *l = NULL, *n;
  int i;
  for (i = 0; i < 2; i++) {
    n = malloc(sizeof *n);
    if (!n) abort();
    n->v = 1; n->next = l; l = n;
  }
  if (sum(l) != 2) reach_error();
  if (!even(4)) reach_error();
  drop(l);
  return 0;
}
