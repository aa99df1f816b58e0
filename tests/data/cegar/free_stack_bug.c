/* free of a stack object (p = &s when k is 12345): an invalid-free target; reach_error()
 * itself is unreachable. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "free_stack_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct cell { struct cell *next; int data; };
int main() {
  struct cell s;
  struct cell *p = malloc(sizeof(struct cell));
  if (!p) abort();
  int k = __VERIFIER_nondet_int();
  if (k == 12345) { free(p); p = &s; }
  p->next = NULL;
  free(p);
  if (k > 5 && k < 3) reach_error();
  return 0;
}
