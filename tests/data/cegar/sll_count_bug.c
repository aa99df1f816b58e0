extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_count_bug.c", __LINE__, "reach_error"); }
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
  if (p != NULL) p = p->next;   /* bug: the first cell is not counted */
  while (p != NULL) {
    count++;
    p = p->next;
  }
  if (count != len) reach_error();
  while (h != NULL) { p = h->next; free(h); h = p; }
  return 0;
}
