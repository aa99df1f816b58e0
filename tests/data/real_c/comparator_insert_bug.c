/* A comparator chosen at run time and passed to a sorted-insert routine over a
 * singly-linked list; the descending comparator clobbers a node (`=` for `==`). */
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
#include <stdlib.h>

struct node {
  struct node *next;
  int key;
  int tag;
};

typedef int (*cmp_fn)(struct node *, struct node *);

static int ascending(struct node *a, struct node *b) { return a->key <= b->key; }

static int descending(struct node *a, struct node *b) {
  if (b->tag = 0) /* typo: `=` for `==` */
    return 1;
  return a->key >= b->key;
}

/* inserts n before the first node it comes before (`before(n, p)`) */
static struct node *insert(struct node *head, struct node *n, cmp_fn before) {
  if (head == NULL || before(n, head)) {
    n->next = head;
    return n;
  }
  struct node *p = head;
  while (p->next != NULL && !before(n, p->next))
    p = p->next;
  n->next = p->next;
  p->next = n;
  return head;
}

int main(void) {
  cmp_fn order = __VERIFIER_nondet_int() ? ascending : descending;
  struct node *head = NULL;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof *n);
    if (n == NULL)
      abort();
    n->key = __VERIFIER_nondet_int();
    n->tag = 1;
    head = insert(head, n, order);
  }
  while (head != NULL) {
    struct node *next = head->next;
    if (head->tag != 1)
      reach_error();
    free(head);
    head = next;
  }
  return 0;
}
