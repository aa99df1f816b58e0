/* cyclic_list_delete: removes arbitrary nodes (possibly the one head points to) from a
 * circular singly-linked list with at least two nodes; checks that walking next from head
 * returns to head without meeting the removed node or revisiting a node. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "cyclic_list_delete.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct cnode {
  int data;
  struct cnode *next;
};

static struct cnode *cnode_new(void) {
  struct cnode *n = (struct cnode *) malloc(sizeof(struct cnode));
  if (!n) abort();
  n->data = 0;
  n->next = n;
  return n;
}

/* unlink x from the cycle through head (x != x->next); returns the new head */
static struct cnode *cycle_delete(struct cnode *head, struct cnode *x) {
  struct cnode *q = x;
  while (q->next != x)
    q = q->next;
  q->next = x->next;
  if (x == head) head = x->next;
  return head;
}

/* walk the cycle from head: it must come back to head without revisiting a marked node */
static void check_cycle(struct cnode *head, struct cnode *gone) {
  struct cnode *p = head->next, *mark = NULL;
  while (p != head) {
    if (p == NULL || p == mark || p == gone) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    p = p->next;
  }
}

static void cycle_free(struct cnode *head) {
  struct cnode *p = head->next, *t;
  while (p != head) {
    t = p->next;
    free(p);
    p = t;
  }
  free(head);
}

int main(void) {
  struct cnode *head = cnode_new(), *n, *x;
  do {
    n = cnode_new();
    n->next = head->next;
    head->next = n;
  } while (__VERIFIER_nondet_int());
  while (head->next != head && __VERIFIER_nondet_int()) {
    x = head;
    while (__VERIFIER_nondet_int())
      x = x->next;
    head = cycle_delete(head, x);
    check_cycle(head, x);
    free(x);
  }
  cycle_free(head);
  return 0;
}
