/* a list whose root is a local that callees change through a pointer to it (push(&list), pop(&list)); the bug forgets to free the node pop unlinks (the safe twin). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

static void push(struct node **head, int data) {
  struct node *n = malloc(sizeof(struct node));
  if (!n)
    return;
  n->next = *head;
  n->data = data;
  *head = n;
}

static void pop(struct node **head) {
  struct node *n = *head;
  if (!n)
    return;
  *head = n->next;
  free(n);
}

static void clear(struct node **head) {
  while (*head)
    pop(head);
}

int main(void) {
  struct node *list = NULL;
  do
    push(&list, 1);
  while (__VERIFIER_nondet_int());
  pop(&list);
  clear(&list);
  return 0;
}
