/* A Linux-style intrusive list (kernel_list.h: list_add, list_for_each_entry,
 * list_for_each_entry_safe, list_del, container_of) whose link is not at offset 0.
 * Bug: one job may hold 2 where the walk expects only 1s. */
#include <stdlib.h>
#include "../../../benchmarks/real/kernel_list.h"
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);

struct job {
  int data;
  struct list_head link;
};

int main(void) {
  LIST_HEAD(queue);
  struct job *j, *n;
  while (__VERIFIER_nondet_int()) {
    j = malloc(sizeof *j);
    if (!j)
      abort();
    j->data = __VERIFIER_nondet_int() ? 1 : 2;
    list_add(&j->link, &queue);
  }
  list_for_each_entry(j, &queue, link) {
    if (j->data != 1)
      reach_error();
  }
  list_for_each_entry_safe(j, n, &queue, link) {
    list_del(&j->link);
    free(j);
  }
  if (!list_empty(&queue))
    reach_error();
  return 0;
}
