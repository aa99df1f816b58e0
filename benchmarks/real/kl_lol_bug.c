/* kl_lol_bug: builds a list of kernel-style lists (kernel_list.h) as kl_lol does, but adds a
 * new item to the items of the most recently created bucket (cur) instead of the bucket the
 * walk chose (b): wrong variable, so an item can sit in a bucket whose id differs from its
 * data. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_lol_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "kernel_list.h"

struct item {
  int data;
  struct list_head link;
};

struct bucket {
  int id;
  struct list_head items;
  struct list_head link;
};

static void check_links(struct list_head *l) {
  if (l->next->prev != l || l->prev->next != l) reach_error();
}

int main(void) {
  LIST_HEAD(buckets);
  struct bucket *b, *cur = NULL, *nb, *bmark = NULL;
  struct item *it, *ni, *imark;
  while (__VERIFIER_nondet_int()) {
    if (list_empty(&buckets) || __VERIFIER_nondet_int()) {
      cur = (struct bucket *) malloc(sizeof(struct bucket));
      if (!cur) abort();
      cur->id = __VERIFIER_nondet_int() != 0;
      INIT_LIST_HEAD(&cur->items);
      list_add(&cur->link, &buckets);
    } else {
      b = list_first_entry(&buckets, struct bucket, link);
      while (!list_is_last(&b->link, &buckets) && __VERIFIER_nondet_int())
        b = list_next_entry(b, link);
      it = (struct item *) malloc(sizeof(struct item));
      if (!it) abort();
      it->data = b->id;
      list_add_tail(&it->link, &cur->items);
    }
  }
  list_for_each_entry(b, &buckets, link) {
    if (b == bmark) reach_error();
    check_links(&b->link);
    imark = NULL;
    list_for_each_entry(it, &b->items, link) {
      if (it == imark || it->data != b->id) reach_error();
      check_links(&it->link);
      if (__VERIFIER_nondet_int()) imark = it;
    }
    if (__VERIFIER_nondet_int()) bmark = b;
  }
  list_for_each_entry_safe(b, nb, &buckets, link) {
    list_for_each_entry_safe(it, ni, &b->items, link) {
      list_del(&it->link);
      free(it);
    }
    list_del(&b->link);
    free(b);
  }
  if (!list_empty(&buckets)) reach_error();
  return 0;
}
