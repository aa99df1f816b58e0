/* kl_work_bug: runs the work queue of kl_work, but a finished job is moved to the front of the
 * done list (list_move instead of list_move_tail: wrong function), so once the done list has an
 * entry the job just finished is not its last entry. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_work_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "kernel_list.h"

struct job {
  int state;
  struct list_head link;
};

int main(void) {
  LIST_HEAD(pending);
  LIST_HEAD(done);
  struct job *j, *n, *mark = NULL;
  while (__VERIFIER_nondet_int()) {
    j = (struct job *) malloc(sizeof(struct job));
    if (!j) abort();
    j->state = 0;
    list_add_tail(&j->link, &pending);
  }
  while (!list_empty(&pending) && __VERIFIER_nondet_int()) {
    j = list_first_entry(&pending, struct job, link);
    while (!list_is_last(&j->link, &pending) && __VERIFIER_nondet_int())
      j = list_next_entry(j, link);
    if (__VERIFIER_nondet_int()) {
      j->state = 1;
      list_move(&j->link, &done);
      if (list_last_entry(&done, struct job, link) != j) reach_error();
    } else {
      list_del_init(&j->link);
      if (!list_empty(&j->link)) reach_error();
      list_for_each_entry(n, &pending, link)
        if (n == j) reach_error();
      free(j);
    }
  }
  list_splice_tail_init(&done, &pending);
  if (!list_empty(&done)) reach_error();
  list_for_each_entry(j, &pending, link) {
    if (j == mark) reach_error();
    if (j->link.next->prev != &j->link || j->link.prev->next != &j->link) reach_error();
    if (!list_is_last(&j->link, &pending) && list_next_entry(j, link)->state < j->state)
      reach_error();
    if (__VERIFIER_nondet_int()) mark = j;
  }
  list_for_each_entry_safe(j, n, &pending, link) {
    list_del(&j->link);
    free(j);
  }
  return 0;
}
