/* Two lists built one after the other, joined through a tail pointer, then counted
 * (five_lists_join with two lists and only the counting check). The loop heads merge
 * (the counts of a list being built generalise there), and a path through a merge is
 * spurious first because the class cannot tell the walked cells from the others:
 * FineTune from the merged state finds `reach`, instead of merging being switched off. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "two_lists_count_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int tag;
  struct node *next;
};

struct node *push(struct node *l, int tag) {
  struct node *n = malloc(sizeof(struct node));
  if (!n) abort();
  n->tag = tag;
  n->next = l;
  return n;
}

struct node *res = NULL;
struct node *tail = NULL;

void join(struct node *l) {
  if (l == NULL) return;
  if (res == NULL) res = l;
  else tail->next = l;
  tail = l;
  while (tail->next != NULL) tail = tail->next;
}

int main() {
  struct node *l1 = NULL, *l2 = NULL;
  struct node *p;
  int total = 0, count = 0;

  while (__VERIFIER_nondet_int()) { l1 = push(l1, 1); total++; }
  while (__VERIFIER_nondet_int()) { l2 = push(l2, 2); total++; }

  join(l1);
  join(l2);

  p = res;
  while (p != NULL) {
    if (count >= total) reach_error();
    count++;
    p = p->next;
  }
  if (count != total) reach_error();

  while (res != NULL) {
    p = res->next;
    free(res);
    res = p;
  }
  return 0;
}
