/* A list tagged 1..1 2..2 3, checked in the wrong order (2s before 1s): reaches the
 * error. `p->h = 3` is the last use of p: a strengthening applied after liveness had
 * nulled p made this state empty, and the run answered SAFE (bug fix). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "tag_order_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int h;
  struct node *n;
};

int main(void) {
  struct node *a = malloc(sizeof(struct node)), *p, *t;
  if (!a) abort();
  p = a;
  while (__VERIFIER_nondet_int()) {
    p->h = 1;
    t = malloc(sizeof(struct node));
    if (!t) abort();
    p->n = t;
    p = p->n;
  }
  while (__VERIFIER_nondet_int()) {
    p->h = 2;
    t = malloc(sizeof(struct node));
    if (!t) abort();
    p->n = t;
    p = p->n;
  }
  p->h = 3;
  p = a;
  while (p->h == 2)
    p = p->n;
  while (p->h == 1)
    p = p->n;
  if (p->h != 3) reach_error();
  return 0;
}
