/* null_read_bug.c with the NULL read behind a choice random runs never make (12345):
 * a proof that ignores the NULL-dereference targets checks, and the random runs before
 * SAFE miss the read; verify finds it through the targets (UNKNOWN, undefined
 * behaviour), and check-certificate rejects that proof. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "null_read_deep_bug.c", __LINE__, "reach_error"); }
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
  if (__VERIFIER_nondet_int() == 12345)
    c = c->next;
  if (c->data == 7)
    reach_error();
  free(head);
  return 0;
}
