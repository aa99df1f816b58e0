/* A queue kept as head/tail: the two are NULL together, compared as truth values
 * ((h == NULL) != (t == NULL)). BUG: dequeueing the last cell leaves t dangling. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "head_tail_agree_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  struct node *next;
};

int main() {
  struct node *h = NULL, *t = NULL;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    if (!n) abort();
    n->next = NULL;
    if (__VERIFIER_nondet_int()) {
      if (t == NULL) h = n; else t->next = n;
      t = n;
    } else if (h != NULL) {
      struct node *x = h;
      h = h->next;
      free(x);
      free(n);
    } else {
      free(n);
    }
    if ((h == NULL) != (t == NULL)) reach_error();
  }
  while (h != NULL) {
    struct node *x = h;
    h = h->next;
    free(x);
  }
  return 0;
}
