/* Like sorted_tags_safe.c, but the first list mixes the tags 0 and 1 in any order: a
 * walk over a 1 followed by a 0 reaches the error. The loaded tag takes both values
 * from the shape domain's field assertions, so the proof must fail here. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sorted_tags_mixed_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct node { int tag; struct node *next; };
struct node *push(struct node *l, int tag) {
  struct node *n = malloc(sizeof(struct node));
  if (!n) abort();
  n->tag = tag;
  n->next = l;
  return n;
}
int main() {
  struct node *a = NULL, *b = NULL, *p, *t;
  int prev = 0;
  while (__VERIFIER_nondet_int()) { if (__VERIFIER_nondet_int()) a = push(a, 1); else a = push(a, 0); }
  while (__VERIFIER_nondet_int()) b = push(b, 2);
  if (a == NULL) {
    a = b;
  } else {
    p = a;
    while (p->next != NULL) p = p->next;
    p->next = b;
  }
  p = a;
  while (p != NULL) {
    if (p->tag < prev) reach_error();
    prev = p->tag;
    p = p->next;
  }
  while (a != NULL) {
    t = a->next;
    free(a);
    a = t;
  }
  return 0;
}
