/* A link struct embedded in several places is an object of its own: converting its
 * address to `void *` is refused (exit 3). */
#include <stdlib.h>
#include "../../../benchmarks/real/kernel_list.h"
struct node {
  int data;
  struct list_head a;
  struct list_head b;
};
int main(void) {
  struct node *n = malloc(sizeof *n);
  if (!n)
    return 0;
  void *p = &n->b;
  free(n);
  return p == 0;
}
