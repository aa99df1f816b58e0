/* utlist's DL convention written out: NULL-terminated along next, the first node's prev
 * is the last node. Appends cells, then walks the list and checks head->prev. */
extern void abort(void);
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
#include <stdlib.h>

struct node {
  struct node *next, *prev;
};

int main(void) {
  struct node *head = NULL, *e, *p, *last = NULL;
  while (__VERIFIER_nondet_int()) {
    e = malloc(sizeof(struct node));
    if (!e) abort();
    e->next = NULL;
    if (head == NULL) {
      e->prev = e;
      head = e;
    } else {
      e->prev = head->prev;
      head->prev->next = e;
      head->prev = e;
    }
  }
  for (p = head; p != NULL; p = p->next) {
    if (p->next != NULL && p->next->prev != p) reach_error();
    last = p;
  }
  if (head != NULL && head->prev != last) reach_error();
  return 0;
}
