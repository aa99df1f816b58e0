/* uninit_field_bug with every field written before it is read (the safe twin). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "uninit_field_safe.c", __LINE__, "reach_error"); }
#include <stdlib.h>
struct item { struct item *next; struct item *prev; int data; };
struct item *alloc(void) {
  struct item *p = malloc(sizeof *p);
  if (!p) abort();
  p->next = NULL;
  p->prev = NULL;
  p->data = 0;
  return p;
}
int main(void) {
  struct item *i = alloc();
  struct { int a, b; } local;
  local.a = 0;
  local.b = 0;
  if (i->prev != NULL && i->data == 7 && local.b == 3) reach_error();
  free(i);
  return 0;
}
