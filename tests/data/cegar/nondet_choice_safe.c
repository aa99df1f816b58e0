/* Two fixed lists, one chosen nondeterministically; the chosen one is walked. */
extern void reach_error(void);
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct cell {
  struct cell *link;
  int key;
};

static struct cell *mk(struct cell *tail, int key) {
  struct cell *c = malloc(sizeof(struct cell));
  if (!c) abort();
  c->link = tail;
  c->key = key;
  return c;
}

int main(void) {
  struct cell *a = mk(mk(NULL, 1), 1);
  struct cell *b = mk(mk(mk(NULL, 2), 2), 2);
  struct cell *x = __VERIFIER_nondet_int() ? a : b;
  while (x != NULL) {
    if (x->key != 1 && x->key != 2) reach_error();
    if (x->link == x) reach_error();
    x = x->link;
  }
  return 0;
}
