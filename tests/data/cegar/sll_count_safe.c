/* Counting (shape::numeric): the walk counts as many cells as were pushed; the proof needs
 * count + |cells after p| == len at the walk's loop head. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_count_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct node { int data; struct node *next; };
int main() {
  struct node *h = NULL, *p;
  int len = 0, count = 0;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    if (!n) abort();
    n->next = h;
    h = n;
    len++;
  }
  p = h;
  while (p != NULL) {
    count++;
    p = p->next;
  }
  if (count != len) reach_error();
  while (h != NULL) { p = h->next; free(h); h = p; }
  return 0;
}
