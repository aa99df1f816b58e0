/* alloc_wrapper_safe with a wrong expectation: the first cell holds 0, not 1. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "alloc_wrapper_bug.c", __LINE__, "reach_error"); }
#include <stdlib.h>
struct list { int n; struct list *next; };
void *kzalloc(int size, int flags) { (void) flags; return calloc(1, size); }
void *allocate_memory(void) { return malloc(sizeof(struct list)); }
struct list *append(struct list *l, int n) {
  struct list *e = allocate_memory();
  if (!e) abort();
  e->n = n;
  e->next = l;
  return e;
}
int main(void) {
  struct list *l = kzalloc(sizeof(struct list), 1);
  if (!l) return 0;
  if (l->n != 0 || l->next != NULL) reach_error();
  l = append(l, 1);
  l = append(l, 2);
  if (l->next->next->n == 0) reach_error();
  return 0;
}
