/* A list of exactly three nodes built in a helper; explicit heaps decide it. */
extern void reach_error(void);
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct node {
  int data;
  struct node *next;
  struct node *prev;
};

static struct node *push(struct node *head, int v) {
  struct node *n = malloc(sizeof(struct node));
  if (!n) abort();
  n->data = v;
  n->next = head;
  n->prev = NULL;
  if (head) head->prev = n;
  return n;
}

int main(void) {
  struct node *l = push(push(push(NULL, 0), 1), 2);
  int len = 0;
  struct node *p = l;
  while (p) {
    if (p->next && p->next->prev != p) reach_error();
    len++;
    p = p->next;
  }
  if (len != 3) reach_error();
  if (l->data != 2) reach_error();
  return 0;
}
