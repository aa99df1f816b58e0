/* dll_concat: a list header (first, last) over a doubly-linked list; an arbitrary number of
 * lists of arbitrary length (possibly empty) are appended to the first one; checks
 * first->prev == NULL, p->next->prev == p everywhere, and that last is the last node. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "dll_concat.c", __LINE__, "reach_error"); }
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

struct dlist {
  struct dnode *first;
  struct dnode *last;
};

static struct dlist *dlist_alloc(void) {
  struct dlist *l = (struct dlist *) malloc(sizeof(struct dlist));
  struct dnode *n;
  if (!l) abort();
  l->first = NULL;
  l->last = NULL;
  while (__VERIFIER_nondet_int()) {
    n = dnode_new();
    if (l->last == NULL) l->first = n; else { l->last->next = n; n->prev = l->last; }
    l->last = n;
  }
  return l;
}

/* move all nodes of b to the end of a */
static void concat(struct dlist *a, struct dlist *b) {
  if (b->first == NULL) return;
  if (a->first == NULL) {
    a->first = b->first;
  } else {
    a->last->next = b->first;
    b->first->prev = a->last;
  }
  a->last = b->last;
  b->first = NULL;
  b->last = NULL;
}

static void check_dlist(struct dlist *l) {
  struct dnode *p = l->first;
  if (p == NULL) {
    if (l->last != NULL) reach_error();
    return;
  }
  if (p->prev != NULL) reach_error();
  while (p->next != NULL) {
    if (p->next->prev != p) reach_error();
    p = p->next;
  }
  if (p != l->last) reach_error();
}

int main(void) {
  struct dlist *a = dlist_alloc(), *b;
  struct dnode *p, *t;
  while (__VERIFIER_nondet_int()) {
    b = dlist_alloc();
    concat(a, b);
    free(b);
  }
  check_dlist(a);
  for (p = a->first; p != NULL; p = t) {
    t = p->next;
    free(p);
  }
  free(a);
  return 0;
}
