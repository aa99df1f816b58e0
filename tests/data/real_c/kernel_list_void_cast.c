/* A link at a nonzero offset converted to `void *` (its address is not its container's):
 * refused (exit 3). */
#include <stdlib.h>
#include "../../../benchmarks/real/kernel_list.h"
struct job {
  int data;
  struct list_head link;
};
int main(void) {
  LIST_HEAD(queue);
  struct job *j = malloc(sizeof *j);
  if (!j)
    abort();
  list_add(&j->link, &queue);
  void *v = &j->link;
  list_del(&j->link);
  free(j);
  return v == 0;
}
