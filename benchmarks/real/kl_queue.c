/* kl_queue: Linux-kernel-style intrusive list (kernel_list.h, the kernel's list.h API):
 * jobs with data 0 or 1 are added with list_add (front) or list_add_tail (back), then
 * arbitrary jobs are removed with list_del. Checks that list_first_entry / list_last_entry is
 * the job just added, that next->prev and prev->next lead back to every entry, that the walk
 * (list_for_each_entry) returns to the head without meeting an entry twice, that a removed job
 * is no longer reachable and that the first entry's prev is the head after each removal; then
 * frees everything (list_for_each_entry_safe, list_del) and checks list_empty. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_queue.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include "kernel_list.h"

struct job {
  struct list_head link;
  int data;
};

static void check_queue(struct list_head *q, struct job *gone) {
  struct job *j, *mark = NULL;
  list_for_each_entry(j, q, link) {
    if (j == mark || j == gone) reach_error();
    if (j->link.next->prev != &j->link || j->link.prev->next != &j->link) reach_error();
    if (j->data != 0 && j->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = j;
  }
}

int main(void) {
  LIST_HEAD(queue);
  struct job *j, *n, *first, *victim;
  while (__VERIFIER_nondet_int()) {
    j = (struct job *) malloc(sizeof(struct job));
    if (!j) abort();
    j->data = __VERIFIER_nondet_int() != 0;
    if (__VERIFIER_nondet_int()) {
      list_add(&j->link, &queue);
      if (list_first_entry(&queue, struct job, link) != j) reach_error();
    } else {
      list_add_tail(&j->link, &queue);
      if (list_last_entry(&queue, struct job, link) != j) reach_error();
    }
  }
  check_queue(&queue, NULL);
  while (!list_empty(&queue) && __VERIFIER_nondet_int()) {
    first = list_first_entry(&queue, struct job, link);
    victim = first;
    while (!list_is_last(&victim->link, &queue) && __VERIFIER_nondet_int())
      victim = list_next_entry(victim, link);
    list_del(&victim->link);
    check_queue(&queue, victim);
    if (!list_empty(&queue)) {
      first = list_first_entry(&queue, struct job, link);
      if (first->link.prev != &queue) reach_error();
    }
    free(victim);
  }
  list_for_each_entry_safe(j, n, &queue, link) {
    list_del(&j->link);
    free(j);
  }
  if (!list_empty(&queue)) reach_error();
  return 0;
}
