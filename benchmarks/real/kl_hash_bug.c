/* kl_hash_bug: a hash table of Linux-kernel-style intrusive lists (kernel_list.h): a static
 * array of NBUCKETS list heads, each set up with INIT_LIST_HEAD(&table[b]); entries with
 * a nondeterministic key in 0..NBUCKETS-1 are added with list_add_tail(&e->link,
 * &table[e->key]) (an array of heads indexed by a computed value). Checks that every
 * entry of bucket b has key b, that each bucket's walk (list_for_each_entry) returns to
 * its head without meeting an entry twice and that next->prev leads back; then empties
 * every bucket (list_for_each_entry_safe, list_del, free) and checks list_empty. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_hash_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "kernel_list.h"

#define NBUCKETS 2

struct entry {
  int key;
  struct list_head link;
};

static struct list_head table[NBUCKETS];

static int hash(int key) {
  return key > 0 ? key - 1 : key;  /* bug: key 1 lands in bucket 0 */
}

int main(void) {
  struct entry *e, *n, *mark;
  int b;
  for (b = 0; b < NBUCKETS; b++)
    INIT_LIST_HEAD(&table[b]);
  while (__VERIFIER_nondet_int()) {
    e = (struct entry *) malloc(sizeof(struct entry));
    if (!e) abort();
    e->key = __VERIFIER_nondet_int();
    if (e->key < 0 || e->key >= NBUCKETS) e->key = 0;
    list_add_tail(&e->link, &table[hash(e->key)]);
  }
  for (b = 0; b < NBUCKETS; b++) {
    mark = NULL;
    list_for_each_entry(e, &table[b], link) {
      if (e == mark || e->key != b) reach_error();
      if (e->link.next->prev != &e->link) reach_error();
      if (__VERIFIER_nondet_int()) mark = e;
    }
  }
  for (b = 0; b < NBUCKETS; b++) {
    list_for_each_entry_safe(e, n, &table[b], link) {
      list_del(&e->link);
      free(e);
    }
  }
  for (b = 0; b < NBUCKETS; b++)
    if (!list_empty(&table[b])) reach_error();
  return 0;
}
