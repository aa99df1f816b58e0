/* kl_lru_bug: the LRU list of kl_lru, but a touched entry is moved with list_move_tail
 * instead of list_move (wrong function), so with two or more cached entries it is not first. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_lru_bug.c", __LINE__, "reach_error"); }
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
    list_move_tail(&e->lru, &cache);
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
