/* reach_error() only after a read through a freed pointer: `d` still points to the cell
 * `c` pointed to. The read is undefined behaviour (the freed cell may hold anything,
 * 7 included); the analyses stop a path at it, so without a further check this
 * program came out SAFE. Every run hits the read, so random runs find it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "use_after_free_bug.c", __LINE__, "reach_error"); }
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
  if (d->data == 7)
    reach_error();
  return 0;
}
