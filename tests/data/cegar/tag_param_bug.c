/* The first node is tagged through a parameter (n->data = d with d == 1): the shape
 * domain sees the stored value only through the explicit domain (strengthening). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "tag_param_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
};

static struct node *mk(int d, struct node *nx) {
  struct node *n = (struct node *) malloc(sizeof(struct node));
  if (!n) abort();
  n->data = d;
  n->next = nx;
  return n;
}

int main(void) {
  struct node *l = mk(2, NULL), *p;
  while (__VERIFIER_nondet_int())
    l = mk(0, l);
  p = l;
  while (p->next != NULL)
    p = p->next;
  if (p->data != 1) reach_error();
  while (l != NULL) {
    p = l->next;
    free(l);
    l = p;
  }
  return 0;
}
