/* kl_splice: Linux-kernel-style intrusive list (kernel_list.h), the struct list_head placed
 * after an int field: items with data 0 or 1 are queued on "todo" with list_add_tail; every
 * item with data 1 is moved to "done" with list_move_tail during list_for_each_entry_safe;
 * then done is put back in front of todo with list_splice_init. Checks that todo holds only
 * data 0 and done only data 1 after the moves, that done is empty after the splice and todo
 * reads 1...1 0...0, and that next->prev / prev->next are consistent and each walk returns to
 * its head without meeting an entry twice; then frees everything. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_splice.c", __LINE__, "reach_error"); }
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
  list_splice_init(&done, &todo);
  if (!list_empty(&done)) reach_error();
  check_list(&todo, 0, 1);
  list_for_each_entry_safe(it, n, &todo, link) {
    list_del(&it->link);
    free(it);
  }
  return 0;
}
