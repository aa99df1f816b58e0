/* The safe twin of head_entry_bug.c: list_entry() of entries only; the head's check
 * (an access of a container field through a pointer equal to the head) never holds. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "head_entry_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>
#include <stddef.h>
struct list_head { struct list_head *next, *prev; };
#define list_entry(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
struct node { int value; struct list_head link; };
struct list_head head = { &head, &head };
static int value_of(struct list_head *l) { return list_entry(l, struct node, link)->value; }
int main(void) {
  struct node *n = malloc(sizeof *n);
  if (!n) abort();
  n->value = 1;
  n->link.next = &head; n->link.prev = &head;
  head.next = &n->link; head.prev = &n->link;
  int v = value_of(head.next);
  if (__VERIFIER_nondet_int()) v = value_of(head.prev);
  free(n);
  return v - v;
}
