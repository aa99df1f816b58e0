/* The only way to reach_error() reads through NULL: `c` becomes NULL when the
 * nondeterministic branch is taken, and `c->data` is then undefined behaviour (C allows
 * anything after it, SV-COMP counts reach_error() as reachable, like forester-heap
 * sll-01-2). A path that stops at the invalid read must not make the program SAFE. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "null_read_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct cell {
  struct cell *next;
  int data;
};

int main() {
  struct cell *head = malloc(sizeof(struct cell));
  if (!head) abort();
  head->next = NULL;
  head->data = 0;
  struct cell *c = head;
  if (__VERIFIER_nondet_int())
    c = c->next;
  if (c->data == 7)
    reach_error();
  free(head);
  return 0;
}
