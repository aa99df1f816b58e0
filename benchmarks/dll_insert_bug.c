/* dll_insert_bug: dll_insert_after forgets to set the old successor's prev to the new node,
 * so p->next->prev != p when inserting in the middle. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "dll_insert_bug.c", __LINE__, "reach_error"); }
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

/* link n in right after p */
static void dll_insert_after(struct dnode *p, struct dnode *n) {
  n->prev = p;
  n->next = p->next;
  p->next = n;
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
  struct dnode *head = dll_alloc(), *p;
  while (__VERIFIER_nondet_int()) {
    p = head;
    while (p->next != NULL && __VERIFIER_nondet_int())
      p = p->next;
    dll_insert_after(p, dnode_new());
  }
  check_dll(head);
  dll_free(head);
  return 0;
}
