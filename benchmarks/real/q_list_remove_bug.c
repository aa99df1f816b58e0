/* q_list_remove_bug: removes the elements with data 1 from a glibc <sys/queue.h> LIST as
 * q_list_remove does, but the removal walk starts at the second element (off by one, as if
 * the list had a sentinel first element), so a first element with data 1 stays. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "q_list_remove_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <sys/queue.h>

struct node {
  int data;
  LIST_ENTRY(node) link;
};

LIST_HEAD(nodelist, node);

int main(void) {
  struct nodelist head = LIST_HEAD_INITIALIZER(head);
  struct node *n, *p, *next, *mark = NULL;
  while (__VERIFIER_nondet_int()) {
    n = (struct node *) malloc(sizeof(struct node));
    if (!n) abort();
    n->data = __VERIFIER_nondet_int() != 0;
    LIST_INSERT_HEAD(&head, n, link);
  }
  for (p = LIST_EMPTY(&head) ? NULL : LIST_NEXT(LIST_FIRST(&head), link); p != NULL; p = next) {
    next = LIST_NEXT(p, link);
    if (p->data == 1) {
      LIST_REMOVE(p, link);
      free(p);
    }
  }
  LIST_FOREACH(p, &head, link) {
    if (p == mark || *p->link.le_prev != p) reach_error();
    if (p->data != 0) reach_error();
    if (__VERIFIER_nondet_int()) mark = p;
  }
  while (!LIST_EMPTY(&head)) {
    p = LIST_FIRST(&head);
    LIST_REMOVE(p, link);
    free(p);
  }
  return 0;
}
