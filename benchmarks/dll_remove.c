/* dll_remove: removes arbitrary nodes (possibly the head) from a doubly-linked list of
 * arbitrary length; checks head->prev == NULL, p->next->prev == p and p->prev->next == p,
 * and that the removed node is no longer reachable, then frees it. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "dll_remove.c", __LINE__, "reach_error"); }
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
  n->next = NULL;
  n->prev = NULL;
  return n;
}

/* a non-empty doubly-linked list of arbitrary length */
static struct dnode *dll_alloc(void) {
  struct dnode *head = dnode_new(), *t = head;
  while (__VERIFIER_nondet_int()) {
    t->next = dnode_new();
    t->next->prev = t;
    t = t->next;
  }
  return head;
}

/* unlink x; returns the new head */
static struct dnode *dll_remove(struct dnode *head, struct dnode *x) {
  if (x->prev != NULL) x->prev->next = x->next; else head = x->next;
  if (x->next != NULL) x->next->prev = x->prev;
  return head;
}

/* head->prev == NULL, p->next->prev == p and p->prev->next == p at every node */
static void check_dll(struct dnode *head) {
  struct dnode *p = head;
  if (p != NULL && p->prev != NULL) reach_error();
  while (p != NULL) {
    if (p->next != NULL && p->next->prev != p) reach_error();
    if (p->prev != NULL && p->prev->next != p) reach_error();
    p = p->next;
  }
}

static void dll_free(struct dnode *p) {
  while (p != NULL) {
    struct dnode *t = p->next;
    free(p);
    p = t;
  }
}

int main(void) {
  struct dnode *head = dll_alloc(), *x, *p;
  while (head != NULL && __VERIFIER_nondet_int()) {
    x = head;
    while (x->next != NULL && __VERIFIER_nondet_int())
      x = x->next;
    head = dll_remove(head, x);
    check_dll(head);
    for (p = head; p != NULL; p = p->next)
      if (p == x) reach_error();
    free(x);
  }
  dll_free(head);
  return 0;
}
