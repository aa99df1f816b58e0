/* A list library parameterised by a struct of callbacks (allocation, validation,
 * release); the allocator and the validator disagree. */
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
#include <stdlib.h>

struct node {
  struct node *next;
  int data;
};

struct list_ops {
  struct node *(*make)(void);
  int (*valid)(struct node *);
  void (*release)(struct node *);
};

static struct node *make_node(void) {
  struct node *n = malloc(sizeof *n);
  if (n == NULL)
    abort();
  n->next = NULL;
  n->data = 8; /* the validator expects 7 */
  return n;
}

static int is_seven(struct node *n) { return n->data == 7; }

static void release_node(struct node *n) { free(n); }

static struct node *build(const struct list_ops *ops) {
  struct node *head = NULL;
  while (__VERIFIER_nondet_int()) {
    struct node *n = ops->make();
    n->next = head;
    head = n;
  }
  return head;
}

static void destroy(struct node *head, const struct list_ops *ops) {
  while (head != NULL) {
    struct node *next = head->next;
    if (!ops->valid(head))
      reach_error();
    ops->release(head);
    head = next;
  }
}

int main(void) {
  struct list_ops ops = { make_node, is_seven, release_node };
  struct node *l = build(&ops);
  destroy(l, &ops);
  return 0;
}
