/* Arrays of constant length (frontend::lower::array): a global array of list heads
 * filled through a nondeterministic index (a hash table's buckets), a local array of
 * counters indexed the same way, a struct with an array member; then every bucket is
 * emptied and freed, and the counters add up. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "array_buckets_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
struct node { struct node *next; };
struct node *heads[3];
struct stats { int total; int seen[2]; };
int main(void) {
  int count[3] = {0};
  struct stats st = {0, {0, 0}};
  while (__VERIFIER_nondet_int()) {
    int h = __VERIFIER_nondet_int();
    if (h < 0 || h > 2) continue;
    struct node *n = malloc(sizeof *n);
    if (!n) abort();
    n->next = heads[h];
    heads[h] = n;
    count[h] = 1;
    st.seen[h != 0] = 1;
  }
  for (int b = 0; b < 3; b++) {
    while (heads[b]) {
      struct node *n = heads[b];
      heads[b] = n->next;
      free(n);
    }
  }
  if (heads[0] || heads[1] || heads[2]) reach_error();
  if (count[0] < 0 || count[1] > 1 || st.seen[1] > 1) reach_error();
  return 0;
}
