/* A ring of n doubly-linked cells built by a loop bounded by a parameter (n = 4 here);
 * a walk forwards numbers the cells 1..n, a walk backwards checks the numbers and frees
 * the cells. The numbers (cell i holds i) are beyond the shape domain, so the proof is
 * on explicit heaps, which needs the loop counter n tracked exactly. Bug: the check of
 * the second cell is inverted. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "numbered_ring_bug.c", __LINE__, "reach_error"); }
#include <stdlib.h>

struct cell {
  int num;
  struct cell *next;
  struct cell *prev;
};

static struct cell *ring(int n) {
  struct cell *first = malloc(sizeof(struct cell));
  if (!first) abort();
  first->num = 0;
  first->next = first;
  first->prev = first;
  struct cell *head = first;
  while (n > 1) {
    struct cell *c = malloc(sizeof(struct cell));
    if (!c) abort();
    c->num = 0;
    c->next = head;
    head->prev = c;
    head = c;
    n--;
  }
  first->next = head;
  head->prev = first;
  return head;
}

int main(void) {
  struct cell *head = ring(4);
  struct cell *p = head;
  int k = 0;
  do {
    if (p->num != 0) reach_error();
    k++;
    p->num = k;
    p = p->next;
  } while (p != head);
  p = p->prev;
  head->prev = NULL;
  while (p != NULL) {
    if (p->num != k && k != 2) reach_error();
    if (k == 2 && p->num == 2) reach_error();
    k--;
    struct cell *q = p->prev;
    free(p);
    p = q;
  }
  return 0;
}
