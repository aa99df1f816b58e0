/* kl_queue_bug: removes jobs from a kernel-style list (kernel_list.h) as kl_queue does, but
 * after list_del checks the first entry through the pointer read before the removal instead
 * of re-reading list_first_entry; when the removed job was the first one, its prev is the
 * value list_del left there (NULL here, LIST_POISON2 in the kernel), not the head. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "kl_queue_bug.c", __LINE__, "reach_error"); }
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
