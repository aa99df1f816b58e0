/* cdll_insert_bug: cdll_insert_after sets p->next before it updates the old successor's prev
 * (misordered updates), so the new node's prev points to itself. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "cdll_insert_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct dnode {
  int data;
  struct dnode *next;
  struct dnode *prev;
};

static struct dnode *dnode_new(void) {
  struct dnode *n = (struct dnode *) malloc(sizeof(struct dnode));
  if (!n) abort();
  n->data = 0;
  n->next = n;
  n->prev = n;
  return n;
}

/* link n in right after p */
static void cdll_insert_after(struct dnode *p, struct dnode *n) {
  n->prev = p;
  n->next = p->next;
  p->next = n;
  p->next->prev = n;
}

static void check_cdll(struct dnode *head) {
  struct dnode *p = head, *mark = NULL;
  do {
    if (p == mark) reach_error();
    if (p->next->prev != p) reach_error();
    if (p->prev->next != p) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    p = p->next;
  } while (p != head);
}

int main(void) {
  struct dnode *head = dnode_new(), *p, *t;
  while (__VERIFIER_nondet_int()) {
    p = head;
    while (__VERIFIER_nondet_int())
      p = p->next;
    cdll_insert_after(p, dnode_new());
  }
  check_cdll(head);
  for (p = head->next; p != head; p = t) {
    t = p->next;
    free(p);
  }
  free(head);
  return 0;
}
