/* A list of three nodes built and updated by loops bounded by a constant: node i
 * gets i + N, then every node is checked. The loop counters' states merge at the loop
 * heads, so the counters must keep their bounds (i in [0, N-1] inside the loops) for
 * `i + N` to be known not to overflow; the values written are no constants of the
 * program, so the precision must keep them across the loop heads. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "sll_update_bounded.c", __LINE__, "reach_error"); }
#include <stdlib.h>

#define N 3

struct node {
  struct node *next;
  int data;
};

struct node *nth(struct node *head, int index) {
  while (index > 0) {
    head = head->next;
    index--;
  }
  return head;
}

int main() {
  struct node *head = NULL;
  int i;
  for (i = 0; i < N; i++) {
    struct node *n = malloc(sizeof(struct node));
    if (!n) abort();
    n->next = head;
    n->data = 0;
    head = n;
  }
  for (i = 0; i < N; i++) {
    int v = i + N;
    nth(head, i)->data = v;
  }
  for (i = 0; i < N; i++) {
    int expected = i + N;
    if (nth(head, i)->data != expected) reach_error();
  }
  while (head) {
    struct node *next = head->next;
    free(head);
    head = next;
  }
  return 0;
}
