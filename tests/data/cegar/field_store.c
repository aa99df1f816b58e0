/* A field written and read back: predicate abstraction alone cannot see heap contents. */
extern void reach_error(void);
#include <stdlib.h>

struct s {
  int d;
};

int main(void) {
  struct s *p = malloc(sizeof(struct s));
  if (!p) return 0;
  p->d = 1;
  if (p->d != 1) reach_error();
  return 0;
}
