/* A cyclic doubly-linked list with a sentinel (Linux list_head style): add at the
 * front or the back, delete a cell reached after a nondeterministic number of steps,
 * and walk from the sentinel back to it checking p->next->prev == p. Every walk step
 * dereferences p->next, which is only non-NULL because every cell on the cycle has a
 * successor (the `total` family of cyclic-dll). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "cyclic_dll_walk_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next, *prev;
};

void add_between(struct node *n, struct node *prev, struct node *next) {
  next->prev = n;
  n->next = next;
  n->prev = prev;
  prev->next = n;
}

void del(struct node *e) {
  e->next->prev = e->prev;
  e->prev->next = e->next;
  e->next = NULL;
  e->prev = NULL;
}

struct node *alloc(void) {
  struct node *n = malloc(sizeof(struct node));
  if (!n) abort();
  n->next = NULL;
  n->prev = NULL;
  return n;
}

int main() {
  struct node *head = alloc();
  struct node *p;
  head->next = head;
  head->prev = head;
  while (__VERIFIER_nondet_int()) {
    int op = __VERIFIER_nondet_int();
    if (op == 1) {
      add_between(alloc(), head, head->next);
    } else if (op == 2) {
      add_between(alloc(), head->prev, head);
    } else if (head->next != head) {
      p = head->next;
      while (p->next != head && __VERIFIER_nondet_int()) p = p->next;
      del(p);
      free(p);
    }
    p = head;
    do {
      if (p->next->prev != p) reach_error();
      p = p->next;
    } while (p != head);
  }
  while (head->next != head) {
    p = head->next;
    del(p);
    free(p);
  }
  free(head);
  return 0;
}
