/* Three separate lists of one type, grown in one loop, then each walked with a mark
 * (acyclic) and freed: statements act on one list at a time. */
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
struct el { int data; struct el *next; };
static struct el *push(struct el *l) {
  struct el *e = malloc(sizeof(struct el));
  if (!e) abort();
  e->data = __VERIFIER_nondet_int() != 0;
  e->next = l;
  return e;
}
static void walk(struct el *l) {
  struct el *p, *mark = NULL;
  for (p = l; p != NULL; p = p->next) {
    if (p == mark) reach_error();
    if (p->next != NULL && p->data > p->next->data + 1) reach_error();
    if (p->data != 0 && p->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
}
int main(void) {
  struct el *a = NULL, *b = NULL, *c = NULL, *t;
  while (__VERIFIER_nondet_int()) {
    if (__VERIFIER_nondet_int()) a = push(a);
    else if (__VERIFIER_nondet_int()) b = push(b);
    else c = push(c);
  }
  walk(a);
  walk(b);
  walk(c);
  while (a) { t = a->next; free(a); a = t; }
  while (b) { t = b->next; free(b); b = t; }
  while (c) { t = c->next; free(c); c = t; }
  return 0;
}
