/* A read through a freed pointer (`d->data` after `free(c)`), whose value decides
 * nothing: reach_error() itself is unreachable on every path that stays defined, so a
 * proof exists, but the read is undefined behaviour, after which C allows anything.
 * Not SAFE: the read is an invalid-dereference target (cfa::add_invalid_deref_checks);
 * before those targets only the random runs before a SAFE answer caught it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "use_after_free_read.c", __LINE__, "reach_error"); }
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
  free(c);
  int x = d->data;
  int k = __VERIFIER_nondet_int();
  if (k > 5 && k < 3)
    reach_error();
  return x;
}
