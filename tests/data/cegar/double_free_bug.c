/* free(c) twice when a nondeterministic k is 12345 (the random runs never pick it):
 * an invalid-free target the search reaches; reach_error() itself is unreachable. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "double_free_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct cell { struct cell *next; int data; };
int main() {
  struct cell *c = malloc(sizeof(struct cell));
  if (!c) abort();
  c->next = NULL;
  int k = __VERIFIER_nondet_int();
  if (k == 12345) free(c);
  free(c);
  if (k > 5 && k < 3) reach_error();
  return 0;
}
