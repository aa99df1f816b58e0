/* list_with_cells_safe.c with a reachable error: the head's cell exists while the
 * list grows. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "list_with_cells_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct cell {
  struct cell *next;
  struct cell *inner;
};

struct cell *mk(void) {
  struct cell *c = malloc(sizeof(struct cell));
  if (!c) abort();
  c->next = NULL;
  c->inner = NULL;
  return c;
}

int main() {
  struct cell *list = mk(), *end;
  if (__VERIFIER_nondet_int()) list->inner = mk();
  end = list;
  while (__VERIFIER_nondet_int()) {
    struct cell *e = mk();
    end->next = e;
    end = end->next;
    if (end == NULL) reach_error();
    if (__VERIFIER_nondet_int()) end->inner = mk();
    if (list->inner != NULL && end != list) reach_error();
  }
  while (list != NULL) {
    end = list->next;
    if (list->inner != NULL) free(list->inner);
    free(list);
    list = end;
  }
  return 0;
}
