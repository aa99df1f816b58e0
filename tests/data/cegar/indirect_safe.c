/* Reads and writes through a pointer to a field of a live cell (`*q`, q = &c->data):
 * safe, the invalid-dereference targets of the accesses are unreachable. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "indirect_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct cell { struct cell *next; int data; };
int main() {
  struct cell *c = malloc(sizeof(struct cell));
  if (!c) abort();
  c->next = NULL;
  c->data = 0;
  int *q = &c->data;
  int x = *q;
  *q = 7;
  free(c);
  if (x != 0) reach_error();
  return 0;
}
