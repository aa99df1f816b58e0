/* Each branch reaches reach_error() in some concrete execution (or under SV-COMP's
 * nondeterministic uninitialised memory); a sound shape analysis must not prove the
 * program safe. TRAP selects the branch (compiled with -DTRAP=n). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "unsound_traps.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
};

void link(struct node *x, struct node *y) {
  x->next = y;
}

int main(void) {
  struct node *a = malloc(sizeof(struct node));
  if (!a) abort();
  a->next = NULL;
  a->data = 0;
#if TRAP == 1
  /* a freed cell's pointer dangles: not NULL */
  struct node *q = a;
  free(a);
  if (q != NULL) reach_error();
#elif TRAP == 2
  /* malloc'd memory is uninitialised: next may be anything */
  struct node *b = malloc(sizeof(struct node));
  if (!b) abort();
  if (b->next != NULL) reach_error();
#elif TRAP == 3
  /* malloc may fail */
  struct node *c = malloc(sizeof(struct node));
  if (c == NULL) reach_error();
#elif TRAP == 4
  /* a store through an alias changes what the tracked pointer sees */
  struct node *b = malloc(sizeof(struct node));
  if (!b) abort();
  b->next = NULL;
  struct node *u = a;
  u->next = b;
  struct node *w = a->next;
  if (w == b) reach_error();
#elif TRAP == 5
  /* data written through an alias */
  struct node *u = a;
  u->data = 1;
  if (a->data == 1) reach_error();
#elif TRAP == 6
  /* a field that points to a freed cell dangles */
  struct node *b = malloc(sizeof(struct node));
  if (!b) abort();
  a->next = b;
  free(b);
  struct node *w = a->next;
  if (w != NULL) reach_error();
#elif TRAP == 7
  /* an uninitialised pointer may be garbage (non-NULL) */
  struct node *g;
  if (g != NULL) reach_error();
#elif TRAP == 8
  /* a callee links the list through its parameter */
  struct node *b = malloc(sizeof(struct node));
  if (!b) abort();
  b->next = NULL;
  link(a, b);
  if (a->next == b) reach_error();
#endif
  return 0;
}
