/* A nondeterministic value made non-zero (`if (!v) v = 1`) is stored into every cell;
 * the walk finds no zero. The shape domain learns `val == 0` is false at the store only
 * from the predicate cube (`!(v == 0)`): the explicit domain does not know v. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "nonzero_field_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct node { int val; struct node *next; };
int main() {
  struct node *l = NULL, *t;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    if (!n) abort();
    int v = __VERIFIER_nondet_int();
    if (!v) v = 1;
    n->val = v;
    n->next = l;
    l = n;
  }
  while (l != NULL) {
    if (l->val == 0) reach_error();
    t = l->next;
    free(l);
    l = t;
  }
  return 0;
}
