/* q_list_hash_bug: a hash table of glibc <sys/queue.h> LISTs: a global array of NBUCKETS
 * list heads (LIST_HEAD), each set up with LIST_INIT(&table[b]); elements with a
 * nondeterministic key in 0..NBUCKETS-1 are added with LIST_INSERT_HEAD(&table[key], ...)
 * and some are looked up and removed again with LIST_REMOVE (le_prev points into the
 * array's head or into the previous element). Checks that every element of bucket b has
 * key b, that *p->link.le_prev == p and that each bucket is acyclic; then empties every
 * bucket and checks LIST_EMPTY. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_list_hash_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

#define NBUCKETS 2

struct node {
  int key;
  LIST_ENTRY(node) link;
};

LIST_HEAD(bucket, node);

struct bucket table[NBUCKETS];

static int hash(int key) {
  return key > 0 ? key - 1 : key;  /* bug: key 1 lands in bucket 0 */
}

int main(void) {
  struct node *n, *p, *next, *mark;
  int b;
  for (b = 0; b < NBUCKETS; b++)
    LIST_INIT(&table[b]);
  while (__VERIFIER_nondet_int()) {
    n = (struct node *) malloc(sizeof(struct node));
    if (!n) abort();
    n->key = __VERIFIER_nondet_int();
    if (n->key < 0 || n->key >= NBUCKETS) n->key = 0;
    LIST_INSERT_HEAD(&table[hash(n->key)], n, link);
    if (__VERIFIER_nondet_int()) {
      /* look the first element of a bucket up again and remove it */
      b = __VERIFIER_nondet_int() != 0;
      p = LIST_FIRST(&table[b]);
      if (p != NULL) {
        LIST_REMOVE(p, link);
        free(p);
      }
    }
  }
  for (b = 0; b < NBUCKETS; b++) {
    mark = NULL;
    LIST_FOREACH(p, &table[b], link) {
      if (p == mark || p->key != b || *p->link.le_prev != p) reach_error();
      if (__VERIFIER_nondet_int()) mark = p;
    }
  }
  for (b = 0; b < NBUCKETS; b++) {
    for (p = LIST_FIRST(&table[b]); p != NULL; p = next) {
      next = LIST_NEXT(p, link);
      LIST_REMOVE(p, link);
      free(p);
    }
    if (!LIST_EMPTY(&table[b])) reach_error();
  }
  return 0;
}
