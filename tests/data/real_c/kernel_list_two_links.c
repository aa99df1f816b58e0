/* One link struct embedded twice in a node: not supported (exit 3, the places named). */
#include <stdlib.h>
#include "../../../benchmarks/real/kernel_list.h"
struct node {
  int data;
  struct list_head by_age;
  struct list_head by_name;
};
int main(void) {
  LIST_HEAD(ages);
  struct node *n = malloc(sizeof *n);
  if (!n)
    abort();
  list_add(&n->by_age, &ages);
  list_del(&n->by_age);
  free(n);
  return 0;
}
