/* A binary tree with parent pointers of arbitrary shape (each new leaf hangs at the
 * end of a random path, as in gdsl/treep_rotate_left.c); rotate left at the root,
 * then check along an arbitrary root path that l->father and r->father point back
 * and root->father == NULL. The shape fixpoint must keep parent cancellation. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "treep_rotate_root.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

typedef struct tp {
  struct tp *l;
  struct tp *r;
  struct tp *father;
} *treep_t;

static treep_t tp_alloc(treep_t father) {
  treep_t n = (treep_t) malloc(sizeof(struct tp));
  if (!n) abort();
  n->l = NULL;
  n->r = NULL;
  n->father = father;
  return n;
}

int main(void) {
  treep_t root = tp_alloc(NULL);
  while (__VERIFIER_nondet_int()) {
    treep_t p = root;
    for (;;) {
      if (__VERIFIER_nondet_int()) {
        if (p->l == NULL) { p->l = tp_alloc(p); break; }
        p = p->l;
      } else {
        if (p->r == NULL) { p->r = tp_alloc(p); break; }
        p = p->r;
      }
    }
  }
  if (root->r != NULL) {
    treep_t t = root;
    treep_t rn = t->r;
    t->r = rn->l;
    if (rn->l != NULL)
      rn->l->father = t;
    rn->father = t->father;
    rn->l = t;
    t->father = rn;
    root = rn;
  }
  if (root->father != NULL) reach_error();
  treep_t p = root;
  while (p != NULL) {
    if (p->l != NULL && p->l->father != p) reach_error();
    if (p->r != NULL && p->r->father != p) reach_error();
    if (__VERIFIER_nondet_int()) p = p->l; else p = p->r;
  }
  return 0;
}
