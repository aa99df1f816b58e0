/* A Linux-style intrusive list (kernel_list.h) whose head `queue` is a stack object of
 * the element type: every element is freed after list_del. The shape domain must tell
 * the stack head from the heap elements to prove each `free` valid (an invalid free is
 * an error path under every property). */
#include <stdlib.h>
#include "../../../benchmarks/real/kernel_list.h"
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);

struct job {
  struct list_head link;
  int data;
};

int main(void) {
  LIST_HEAD(queue);
  struct job *j, *n;
  while (__VERIFIER_nondet_int()) {
    j = malloc(sizeof *j);
    if (!j)
      abort();
    list_add_tail(&j->link, &queue);
  }
  list_for_each_entry_safe(j, n, &queue, link) {
    list_del(&j->link);
    free(j);
  }
  if (!list_empty(&queue))
    reach_error();
  return 0;
}
