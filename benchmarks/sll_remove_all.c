/* sll_remove_all: removes (and frees) every node whose key equals a given key (0) from a
 * list of arbitrary length with nondeterministic keys; checks that no node with that key
 * remains and that the list is acyclic. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_remove_all.c", __LINE__, "reach_error"); }
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

static struct node *remove_all(struct node *head, int key) {
  struct node *p, *t;
  while (head != NULL && head->data == key) {
    t = head;
    head = head->next;
    free(t);
  }
  p = head;
  while (p != NULL && p->next != NULL) {
    if (p->next->data == key) {
      t = p->next;
      p->next = t->next;
      free(t);
    } else {
      p = p->next;
    }
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
  struct node *head = NULL, *p, *n;
  int key = 0;
  while (__VERIFIER_nondet_int()) {
    n = node_new(__VERIFIER_nondet_int());
    n->next = head;
    head = n;
  }
  head = remove_all(head, key);
  check_acyclic(head);
  for (p = head; p != NULL; p = p->next)
    if (p->data == key) reach_error();
  list_free(head);
  return 0;
}
