/* Cells linked before their fields are written (`end->next = malloc(..)`, the
 * temporary holding the new cell dies at once) and a cell freed while another still
 * points to it: both leave one cell's field unknown, not the field of every cell
 * (before the per-cell `un[f]` predicate every `next` / `inner` became unknown and
 * the run ended UNKNOWN). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "uninit_cells_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct cell {
  struct cell *next;
  struct cell *inner;
};

int main() {
  struct cell *list = malloc(sizeof(struct cell));
  if (!list) abort();
  list->next = NULL;
  list->inner = NULL;
  struct cell *end = list;
  while (__VERIFIER_nondet_int()) {
    end->next = malloc(sizeof(struct cell));
    if (!end->next) abort();
    end = end->next;
    end->next = NULL;
    if (__VERIFIER_nondet_int()) {
      end->inner = malloc(sizeof(struct cell));
      if (!end->inner) abort();
      end->inner->next = NULL;
      end->inner->inner = NULL;
    } else {
      end->inner = NULL;
    }
  }
  while (list != NULL) {
    end = list->inner;
    if (end != NULL) {
      if (end->next != NULL || end->inner != NULL) reach_error();
      free(end);
    }
    end = list->next;
    free(list);
    list = end;
  }
  return 0;
}
