/* sll_copy_bug: copy links the original node p instead of its copy c behind tail (wrong
 * variable), so the copy runs into the original list. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_copy_bug.c", __LINE__, "reach_error"); }
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

static struct node *copy(struct node *p) {
  struct node *head = NULL, *tail = NULL, *c;
  while (p != NULL) {
    c = node_new(p->data);
    if (tail == NULL) head = c; else tail->next = p;
    tail = c;
    p = p->next;
  }
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
  struct node *orig = NULL, *cp, *p, *q, *n;
  while (__VERIFIER_nondet_int()) {
    n = node_new(__VERIFIER_nondet_int());
    n->next = orig;
    orig = n;
  }
  cp = copy(orig);
  check_acyclic(cp);
  for (p = cp; p != NULL; p = p->next)
    for (q = orig; q != NULL; q = q->next)
      if (p == q) reach_error();
  q = cp;
  for (p = orig; p != NULL; p = p->next) {
    if (q == NULL) reach_error();
    if (p->data != q->data) reach_error();
    q = q->next;
  }
  if (q != NULL) reach_error();
  list_free(orig);
  list_free(cp);
  return 0;
}
