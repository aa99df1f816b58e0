/* dll_reverse: reverses a doubly-linked list of arbitrary length in place by swapping next
 * and prev in every node; checks that the result starts at the old last node, head->prev ==
 * NULL, p->next->prev == p and p->prev->next == p everywhere. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "dll_reverse.c", __LINE__, "reach_error"); }
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

static struct dnode *dll_reverse(struct dnode *p) {
  struct dnode *r = NULL, *t;
  while (p != NULL) {
    t = p->next;
    p->next = p->prev;
    p->prev = t;
    r = p;
    p = t;
  }
  return r;
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
  struct dnode *head = dll_alloc(), *last = head;
  while (last->next != NULL)
    last = last->next;
  head = dll_reverse(head);
  if (head != last) reach_error();
  check_dll(head);
  dll_free(head);
  return 0;
}
