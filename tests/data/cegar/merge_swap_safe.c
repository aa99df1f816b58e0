/* Merging at a loop head joins a->next == b with b->next == a: the merged state has
 * both links 1/2, so after the loop both may be NULL, which no single run allows.
 * The path through the merge does not replay step by step, no class recovers what the
 * join lost, so merging stops at that loop head ("no merge at 25:3"). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "merge_swap_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct node { struct node *next; };
int main() {
  struct node *h = NULL, *n, *a, *b;
  while (__VERIFIER_nondet_int()) {
    n = malloc(sizeof(struct node));
    if (!n) abort();
    n->next = h;
    h = n;
  }
  a = malloc(sizeof(struct node));
  if (!a) abort();
  b = malloc(sizeof(struct node));
  if (!b) abort();
  a->next = b;
  b->next = NULL;
  while (__VERIFIER_nondet_int()) {
    if (__VERIFIER_nondet_int()) { a->next = b; b->next = NULL; }
    else { b->next = a; a->next = NULL; }
  }
  if (a->next != b && b->next != a) reach_error();
  free(a);
  free(b);
  while (h != NULL) { n = h->next; free(h); h = n; }
  return 0;
}
