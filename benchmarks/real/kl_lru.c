/* kl_lru: an LRU list with Linux-kernel-style intrusive lists (kernel_list.h): cached entries
 * (key 0) are added with list_add_tail, incoming entries (key 1) to a second list with
 * list_add; an arbitrary cached entry is touched (list_move to the front) any number of times,
 * then the incoming entries are put in front with list_splice and their head is reinitialised.
 * Checks that a touched entry is first, that the first incoming entry is first after the
 * splice, that the list reads 1...1 0...0, that next->prev / prev->next are consistent and
 * that the walk returns to its head without meeting an entry twice; then frees everything. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_lru.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "kernel_list.h"

struct entry {
  int key;
  struct list_head lru;
};

static struct entry *entry_new(int key) {
  struct entry *e = (struct entry *) malloc(sizeof(struct entry));
  if (!e) abort();
  e->key = key;
  return e;
}

int main(void) {
  LIST_HEAD(cache);
  LIST_HEAD(incoming);
  struct entry *e, *n, *first = NULL, *mark = NULL;
  while (__VERIFIER_nondet_int())
    list_add_tail(&entry_new(0)->lru, &cache);
  while (__VERIFIER_nondet_int())
    list_add(&entry_new(1)->lru, &incoming);
  while (!list_empty(&cache) && __VERIFIER_nondet_int()) {
    e = list_first_entry(&cache, struct entry, lru);
    while (!list_is_last(&e->lru, &cache) && __VERIFIER_nondet_int())
      e = list_next_entry(e, lru);
    list_move(&e->lru, &cache);
    if (list_first_entry(&cache, struct entry, lru) != e) reach_error();
  }
  if (!list_empty(&incoming))
    first = list_first_entry(&incoming, struct entry, lru);
  list_splice(&incoming, &cache);
  INIT_LIST_HEAD(&incoming);
  if (first != NULL && list_first_entry(&cache, struct entry, lru) != first) reach_error();
  list_for_each_entry(e, &cache, lru) {
    if (e == mark) reach_error();
    if (e->lru.next->prev != &e->lru || e->lru.prev->next != &e->lru) reach_error();
    if (!list_is_last(&e->lru, &cache) && list_next_entry(e, lru)->key > e->key) reach_error();
    if (__VERIFIER_nondet_int()) mark = e;
  }
  if (!list_empty(&incoming)) reach_error();
  list_for_each_entry_safe(e, n, &cache, lru) {
    list_del(&e->lru);
    free(e);
  }
  return 0;
}
