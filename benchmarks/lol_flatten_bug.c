/* lol_flatten_bug: flatten forgets to advance tail to the end of the sub-list it just
 * appended, so the next sub-list overwrites the first element's next and elements are lost. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "lol_flatten_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct outer;

struct inner {
  int data;
  struct inner *next;
  struct outer *owner;
};

struct outer {
  struct outer *next;
  struct inner *down;
};

static struct outer *outer_new(void) {
  struct outer *o = (struct outer *) malloc(sizeof(struct outer));
  if (!o) abort();
  o->next = NULL;
  o->down = NULL;
  return o;
}

static struct inner *inner_new(struct outer *owner) {
  struct inner *e = (struct inner *) malloc(sizeof(struct inner));
  if (!e) abort();
  e->data = 0;
  e->next = NULL;
  e->owner = owner;
  return e;
}

static struct inner *flatten(struct outer *head) {
  struct inner *res = NULL, *tail = NULL;
  struct outer *o;
  for (o = head; o != NULL; o = o->next) {
    if (o->down == NULL) continue;
    if (tail == NULL) res = o->down; else tail->next = o->down;
    tail = o->down;
    o->down = NULL;
  }
  return res;
}

int main(void) {
  struct outer *head = NULL, *o;
  struct inner *e, *r, *mark = NULL;
  int n = 0;
  while (__VERIFIER_nondet_int()) {
    o = outer_new();
    o->next = head;
    head = o;
    while (__VERIFIER_nondet_int()) {
      e = inner_new(o);
      e->next = o->down;
      o->down = e;
      n++;
    }
  }
  r = flatten(head);
  for (o = head; o != NULL; o = o->next)
    if (o->down != NULL) reach_error();
  for (e = r; e != NULL; e = e->next) {
    if (e == mark) reach_error();
    if (__VERIFIER_nondet_int()) mark = e;
    n--;
  }
  if (n != 0) reach_error();
  while (head != NULL) {
    o = head->next;
    free(head);
    head = o;
  }
  while (r != NULL) {
    e = r->next;
    free(r);
    r = e;
  }
  return 0;
}
