/* sll_merge: merges two sorted lists of arbitrary length (keys nondeterministic, ascending)
 * into one; checks that the result is sorted and acyclic, and that the last nodes of both
 * inputs are reachable from the result. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_merge.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
};

static struct node *node_new(int d) {
  struct node *n = (struct node *) malloc(sizeof(struct node));
  if (!n) abort();
  n->data = d;
  n->next = NULL;
  return n;
}

/* a key step in 0..100: keys stay ascending and far from overflow (a negative step would
 * make the input unsorted, which the property does not allow) */
static int small_key(void) {
  int k = __VERIFIER_nondet_int();
  if (k < 0 || k > 100) k = 0;
  return k;
}

/* a non-empty sorted list */
static struct node *sorted_alloc(void) {
  struct node *head = node_new(small_key()), *t = head;
  while (__VERIFIER_nondet_int()) {
    t->next = node_new(t->data + small_key());
    t = t->next;
  }
  return head;
}

static struct node *merge(struct node *a, struct node *b) {
  struct node *head, *tail;
  if (a->data <= b->data) { head = a; a = a->next; } else { head = b; b = b->next; }
  tail = head;
  while (a != NULL && b != NULL) {
    if (a->data <= b->data) { tail->next = a; a = a->next; }
    else { tail->next = b; b = b->next; }
    tail = tail->next;
  }
  if (a != NULL) tail->next = a; else tail->next = b;
  return head;
}

/* a cycle would bring p back to a node marked earlier */
static void check_acyclic(struct node *p) {
  struct node *mark = NULL;
  while (p != NULL) {
    if (p == mark) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    p = p->next;
  }
}

static void list_free(struct node *p) {
  while (p != NULL) {
    struct node *t = p->next;
    free(p);
    p = t;
  }
}

int main(void) {
  struct node *a = sorted_alloc(), *b = sorted_alloc(), *la = a, *lb = b, *m, *p;
  int seen_a = 0, seen_b = 0;
  while (la->next != NULL) la = la->next;
  while (lb->next != NULL) lb = lb->next;
  m = merge(a, b);
  check_acyclic(m);
  for (p = m; p != NULL; p = p->next) {
    if (p->next != NULL && p->data > p->next->data) reach_error();
    if (p == la) seen_a = 1;
    if (p == lb) seen_b = 1;
  }
  if (!seen_a || !seen_b) reach_error();
  list_free(m);
  return 0;
}
