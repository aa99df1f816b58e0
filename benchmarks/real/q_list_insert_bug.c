/* q_list_insert_bug: inserts into a glibc <sys/queue.h> LIST as q_list_insert does, but the
 * branch meant to insert n before p uses the wrong macro, LIST_INSERT_AFTER(p, n, link)
 * instead of LIST_INSERT_BEFORE(p, n, link), so the check LIST_NEXT(n) == p fails. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_list_insert_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct node {
  int data;
  LIST_ENTRY(node) link;
};

LIST_HEAD(nodelist, node);

int main(void) {
  struct nodelist head;
  struct node *n, *p, *mark = NULL;
  LIST_INIT(&head);
  while (__VERIFIER_nondet_int()) {
    n = (struct node *) malloc(sizeof(struct node));
    if (!n) abort();
    n->data = __VERIFIER_nondet_int() != 0;
    if (LIST_EMPTY(&head) || __VERIFIER_nondet_int()) {
      LIST_INSERT_HEAD(&head, n, link);
      if (LIST_FIRST(&head) != n) reach_error();
      continue;
    }
    p = LIST_FIRST(&head);
    while (LIST_NEXT(p, link) != NULL && __VERIFIER_nondet_int())
      p = LIST_NEXT(p, link);
    if (__VERIFIER_nondet_int()) {
      LIST_INSERT_AFTER(p, n, link);
      if (LIST_NEXT(p, link) != n) reach_error();
    } else {
      LIST_INSERT_AFTER(p, n, link);
      if (LIST_NEXT(n, link) != p) reach_error();
    }
  }
  LIST_FOREACH(p, &head, link) {
    if (p == mark || *p->link.le_prev != p) reach_error();
    if (p->data != 0 && p->data != 1) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  while (!LIST_EMPTY(&head)) {
    p = LIST_FIRST(&head);
    LIST_REMOVE(p, link);
    free(p);
  }
  return 0;
}
