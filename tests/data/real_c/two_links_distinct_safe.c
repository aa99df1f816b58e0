/* One link struct embedded twice in a node (#29): each embedded link is an object of its
 * own, so `&n->by_age != &n->by_name`, and container_of through either link gives the node
 * back; the walk of an empty list stops at its head (container_of of a head). */
#include <stdlib.h>
#include "../../../benchmarks/real/kernel_list.h"
extern void abort(void);
void reach_error(void) { abort(); }
struct node {
  int data;
  struct list_head by_age;
  struct list_head by_name;
};
int main(void) {
  LIST_HEAD(ages);
  LIST_HEAD(names);
  struct node *n = malloc(sizeof *n), *pos;
  if (!n)
    abort();
  n->data = 3;
  list_add(&n->by_age, &ages);
  list_add(&n->by_name, &names);
  if (&n->by_age == &n->by_name)
    reach_error();
  if (list_first_entry(&ages, struct node, by_age) != n)
    reach_error();
  if (list_first_entry(&names, struct node, by_name)->data != 3)
    reach_error();
  list_del(&n->by_age);
  list_for_each_entry(pos, &ages, by_age)
    reach_error();
  list_del(&n->by_name);
  free(n);
  return 0;
}
