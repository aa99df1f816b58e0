/* Two lists, tagged 1 and 2, are joined (all 1s before the 2s); a walk checks that the
 * tags never decrease (`p->tag < prev`). The proof needs the relation between the
 * variable `prev` and the field `tag`: the field assertions `tag == 1` and `tag == 2`
 * (the constants stored into tag), the loaded tag's value in the explicit domain, and
 * the comparison of a loaded tag with prev's explicit value in the shape domain. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sorted_tags_safe.c", __LINE__, "reach_error"); }
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
  int prev = 1;
  while (__VERIFIER_nondet_int()) a = push(a, 1);
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
