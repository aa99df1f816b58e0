/* A NULL read is reachable (`d->data` when `d` took `c->next`), and so is
 * reach_error() on a path without it: the answer is UNSAFE with the second path,
 * not UNKNOWN for the undefined behaviour found on the way. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "null_read_then_error_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct cell {
  struct cell *next;
  int data;
};

int main() {
  struct cell *c = malloc(sizeof(struct cell));
  if (!c) abort();
  c->next = NULL;
  c->data = 0;
  struct cell *d = c;
  if (__VERIFIER_nondet_int())
    d = c->next;
  int x = d->data;
  if (x == 0 && __VERIFIER_nondet_int())
    reach_error();
  free(c);
  return 0;
}
