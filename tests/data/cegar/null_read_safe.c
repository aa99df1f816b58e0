/* null_read_bug.c with the missing check: `c` is tested before it is read, so no
 * dereference can hit NULL and reach_error() is unreachable. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "null_read_safe.c", __LINE__, "reach_error"); }
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
  if (c != NULL && c->data == 7)
    reach_error();
  free(head);
  return 0;
}
