/* Splice a fresh list in behind an arbitrary node of a list (regression for coerce):
 * `last->next = prev->next` must not close a cycle. The cells after `last` are
 * reachable from `last` (r[last] = 1) and `last`'s cell is on no cycle, so none of them
 * may have a next edge back to it, also through summary nodes whose edges are 1/2.
 * With -DBUG prev is linked to the new list before prev->next is read: a cycle. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
void reach_error() { __assert_fail("0", "sll_splice_after.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  struct node *next;
};

static struct node *new_list(void) {
  struct node *h = malloc(sizeof(struct node));
  if (!h) abort();
  h->next = NULL;
  while (__VERIFIER_nondet_int()) {
    struct node *n = malloc(sizeof(struct node));
    if (!n) abort();
    n->next = h;
    h = n;
  }
  return h;
}

int main(void) {
  struct node *head = new_list();
  struct node *prev;
  struct node *list;
  struct node *last;
  struct node *p;
  struct node *mark;
  while (__VERIFIER_nondet_int()) {
    prev = head;
    while (prev->next != NULL && __VERIFIER_nondet_int())
      prev = prev->next;
    list = new_list();
    last = list;
    while (last->next != NULL)
      last = last->next;
#ifdef BUG
    prev->next = list;
#endif
    last->next = prev->next;
#ifndef BUG
    prev->next = list;
#endif
    /* a cycle would bring p back to a node marked earlier */
    mark = NULL;
    p = head;
    while (p != NULL) {
      if (p == mark) reach_error();
      if (__VERIFIER_nondet_int()) mark = p;
      p = p->next;
    }
  }
  return 0;
}
