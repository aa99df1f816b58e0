/* A read through a pointer to a field of a freed cell (`*q`, q = &c->data): undefined
 * behaviour whose value decides nothing, so a proof of unreachability exists; the access
 * is an invalid-dereference target (Access::Cell), so the answer is never SAFE. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "use_after_free_indirect.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct cell { struct cell *next; int data; };
int main() {
  struct cell *c = malloc(sizeof(struct cell));
  if (!c) abort();
  c->next = NULL;
  c->data = 0;
  int *q = &c->data;
  free(c);
  int x = *q;
  int k = __VERIFIER_nondet_int();
  if (k > 5 && k < 3)
    reach_error();
  return x;
}
