/* A list along `next` whose nodes may hang one cell off `inner` (a tree to the
 * recogniser). Appending at the end must leave `end->next` non-NULL: the cell just
 * linked by `next` and the cells hanging off `inner` need the per-child reachability
 * family (`tree{spine}`) to stay apart; with whole-subtree reachability only they are
 * summarised together and `end->next` may look NULL. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "list_with_cells_safe.c", __LINE__, "reach_error"); }
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
  }
  while (list != NULL) {
    end = list->next;
    if (list->inner != NULL) free(list->inner);
    free(list);
    list = end;
  }
  return 0;
}
