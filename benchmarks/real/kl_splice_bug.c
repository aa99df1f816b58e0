/* kl_splice_bug: moves and splices kernel-style lists (kernel_list.h) as kl_splice does, but
 * uses list_splice instead of list_splice_init, which leaves "done" pointing at the entries
 * now in todo instead of reinitialising it, so done is not empty afterwards. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_splice_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "kernel_list.h"

struct item {
  int data;
  struct list_head link;
};

/* every entry of l has data lo..hi, in non-increasing order; links consistent; no repeats */
static void check_list(struct list_head *l, int lo, int hi) {
  struct item *it, *mark = NULL;
  list_for_each_entry(it, l, link) {
    if (it == mark || it->data < lo || it->data > hi) reach_error();
    if (it->link.next->prev != &it->link || it->link.prev->next != &it->link) reach_error();
    if (!list_is_last(&it->link, l) && list_next_entry(it, link)->data > it->data) reach_error();
    if (__VERIFIER_nondet_int()) mark = it;
  }
}

int main(void) {
  LIST_HEAD(todo);
  LIST_HEAD(done);
  struct item *it, *n;
  while (__VERIFIER_nondet_int()) {
    it = (struct item *) malloc(sizeof(struct item));
    if (!it) abort();
    it->data = __VERIFIER_nondet_int() != 0;
    list_add_tail(&it->link, &todo);
  }
  list_for_each_entry_safe(it, n, &todo, link) {
    if (it->data == 1)
      list_move_tail(&it->link, &done);
  }
  check_list(&todo, 0, 0);
  check_list(&done, 1, 1);
  list_splice(&done, &todo);
  if (!list_empty(&done)) reach_error();
  check_list(&todo, 0, 1);
  list_for_each_entry_safe(it, n, &todo, link) {
    list_del(&it->link);
    free(it);
  }
  return 0;
}
