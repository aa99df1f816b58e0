/* lol_create_bug: push_down sets o->down before the new element copies it (misordered
 * updates), so the element points to itself and the old sub-list is lost. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "lol_create_bug.c", __LINE__, "reach_error"); }
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

/* push e onto the sub-list of o */
static void push_down(struct outer *o, struct inner *e) {
  o->down = e;
  e->next = o->down;
}

static void check_lol(struct outer *head) {
  struct outer *o;
  struct inner *e, *mark;
  for (o = head; o != NULL; o = o->next) {
    mark = NULL;
    for (e = o->down; e != NULL; e = e->next) {
      if (e == mark || e->owner != o) reach_error();
      if (__VERIFIER_nondet_int()) mark = e;
    }
  }
}

int main(void) {
  struct outer *head = outer_new(), *o;
  struct inner *e;
  while (__VERIFIER_nondet_int()) {
    if (__VERIFIER_nondet_int()) {
      o = outer_new();
      o->next = head;
      head = o;
    } else {
      o = head;
      while (o->next != NULL && __VERIFIER_nondet_int())
        o = o->next;
      push_down(o, inner_new(o));
    }
  }
  check_lol(head);
  while (head != NULL) {
    o = head->next;
    while (head->down != NULL) {
      e = head->down->next;
      free(head->down);
      head->down = e;
    }
    free(head);
    head = o;
  }
  return 0;
}
