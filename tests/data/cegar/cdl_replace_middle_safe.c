/* A circular doubly-linked list in which an element other than the head is replaced by a
 * new one (utlist's CDL_REPLACE_ELEM, written out) any number of times. The store
 * `prev->next = add` breaks the cycle through the replaced cell; without reachability
 * predicates the shape domain then only knows each cell is on a cycle because `next` is
 * total and cancels with `prev` (a permutation). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "cdl_replace_middle_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct el {
  struct el *prev, *next;
};

static struct el *el_new(void) {
  struct el *e = (struct el *) malloc(sizeof(struct el));
  if (!e) abort();
  return e;
}

int main(void) {
  struct el *head = el_new(), *e, *n, *p;
  head->next = head;
  head->prev = head;
  while (__VERIFIER_nondet_int()) {
    n = el_new();
    e = head;
    while (e->next != head && __VERIFIER_nondet_int())
      e = e->next;
    if (e != head && __VERIFIER_nondet_int()) {
      n->next = e->next;
      n->prev = e->prev;
      n->next->prev = n;
      n->prev->next = n;
      e->next = NULL;
      e->prev = NULL;
      free(e);
    } else {
      n->next = e->next;
      n->prev = e;
      e->next = n;
      n->next->prev = n;
    }
  }
  p = head;
  do {
    if (p->next->prev != p || p->prev->next != p) reach_error();
    p = p->next;
  } while (p != head);
  while (head->next != head) {
    e = head->next;
    head->next = e->next;
    e->next->prev = head;
    free(e);
  }
  free(head);
  return 0;
}
