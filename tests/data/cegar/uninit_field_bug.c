/* A field malloc leaves uninitialised is read (as in svcomp dll_of_dll-2, whose
 * allocator sets `next` twice and `prev` never): its value is indeterminate, so the
 * error is reachable. The counterexample gives the value the read returned
 * (`Inputs::uninit_loads`), and the replay takes it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "uninit_field_bug.c", __LINE__, "reach_error"); }
#include <stdlib.h>
struct item { struct item *next; struct item *prev; int data; };
struct item *alloc(void) {
  struct item *p = malloc(sizeof *p);
  if (!p) abort();
  p->next = NULL;
  p->next = NULL;
  return p;
}
int main(void) {
  struct item *i = alloc();
  struct { int a, b; } local;
  local.a = 0;
  if (i->prev != NULL && i->data == 7 && local.b == 3) reach_error();
  free(i);
  return 0;
}
