/* One node whose field is toggled in an unbounded loop: the explicit heaps repeat, so
 * the ART closes by coverage. */
extern void reach_error(void);
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct s {
  int d;
  struct s *self;
};

int main(void) {
  struct s *p = malloc(sizeof(struct s));
  if (!p) return 0;
  p->d = 0;
  p->self = p;
  while (__VERIFIER_nondet_int()) {
    p->d = 1 - p->d;
    p = p->self;
  }
  if (p->d != 0 && p->d != 1) reach_error();
  if (p->self != p) reach_error();
  return 0;
}
