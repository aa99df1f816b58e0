/* cyclic_list_insert_bug: insert_after overwrites p->next before the new node copies it
 * (misordered updates): the new node points to itself and the cycle no longer returns to head. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "cyclic_list_insert_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct cnode {
  int data;
  struct cnode *next;
};

static struct cnode *cnode_new(void) {
  struct cnode *n = (struct cnode *) malloc(sizeof(struct cnode));
  if (!n) abort();
  n->data = 0;
  n->next = n;
  return n;
}

/* link n in right after p */
static void insert_after(struct cnode *p, struct cnode *n) {
  p->next = n;
  n->next = p->next;
}

/* walk the cycle from head: it must come back to head without revisiting a marked node */
static void check_cycle(struct cnode *head, struct cnode *gone) {
  struct cnode *p = head->next, *mark = NULL;
  while (p != head) {
    if (p == NULL || p == mark || p == gone) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
    p = p->next;
  }
}

static void cycle_free(struct cnode *head) {
  struct cnode *p = head->next, *t;
  while (p != head) {
    t = p->next;
    free(p);
    p = t;
  }
  free(head);
}

int main(void) {
  struct cnode *head = cnode_new(), *p;
  while (__VERIFIER_nondet_int()) {
    p = head;
    while (__VERIFIER_nondet_int())
      p = p->next;
    insert_after(p, cnode_new());
  }
  check_cycle(head, NULL);
  cycle_free(head);
  return 0;
}
