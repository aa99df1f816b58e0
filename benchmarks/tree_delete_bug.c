/* tree_delete_bug: for a node with at most one child, bst_delete always splices in p->left
 * (wrong variable), so a node that has only a right child loses that subtree. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "tree_delete_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct tnode {
  int key;
  struct tnode *left;
  struct tnode *right;
};

static struct tnode *tnode_new(int key) {
  struct tnode *n = (struct tnode *) malloc(sizeof(struct tnode));
  if (!n) abort();
  n->key = key;
  n->left = NULL;
  n->right = NULL;
  return n;
}

static int nondet_key(void) {
  int k = __VERIFIER_nondet_int();
  return 4 * k - __VERIFIER_nondet_int();
}

static struct tnode *bst_find(struct tnode *p, int key) {
  while (p != NULL && p->key != key)
    p = key < p->key ? p->left : p->right;
  return p;
}

/* key is not in the tree; returns the root */
static struct tnode *bst_insert(struct tnode *root, int key) {
  struct tnode *p = root;
  if (root == NULL) return tnode_new(key);
  for (;;) {
    if (key < p->key) {
      if (p->left == NULL) { p->left = tnode_new(key); return root; }
      p = p->left;
    } else {
      if (p->right == NULL) { p->right = tnode_new(key); return root; }
      p = p->right;
    }
  }
}

static struct tnode *bst_delete(struct tnode *root, int key) {
  struct tnode *par = NULL, *p = root, *child, *s, *sp;
  while (p != NULL && p->key != key) {
    par = p;
    p = key < p->key ? p->left : p->right;
  }
  if (p == NULL) return root;
  if (p->left != NULL && p->right != NULL) {
    sp = p;
    s = p->right;
    while (s->left != NULL) { sp = s; s = s->left; }
    p->key = s->key;
    if (sp == p) sp->right = s->right; else sp->left = s->right;
    free(s);
    return root;
  }
  child = p->left;
  if (par == NULL) root = child;
  else if (par->left == p) par->left = child;
  else par->right = child;
  free(p);
  return root;
}

static void check_order(struct tnode *p) {
  while (p != NULL) {
    if (p->left != NULL && p->left->key >= p->key) reach_error();
    if (p->right != NULL && p->right->key <= p->key) reach_error();
    if (__VERIFIER_nondet_int()) p = p->left; else p = p->right;
  }
}

/* free leaf by leaf, following only left and right; returns the number of nodes */
static int tree_free(struct tnode *root) {
  int count = 0;
  while (root != NULL) {
    struct tnode *up = NULL, *p = root;
    while (p->left != NULL || p->right != NULL) {
      up = p;
      p = (p->left != NULL) ? p->left : p->right;
    }
    if (up == NULL) root = NULL;
    else if (up->left == p) up->left = NULL;
    else up->right = NULL;
    free(p);
    count++;
  }
  return count;
}

int main(void) {
  struct tnode *root = NULL, *x;
  int n = 0, key;
  while (__VERIFIER_nondet_int()) {
    key = nondet_key();
    if (bst_find(root, key) == NULL) { root = bst_insert(root, key); n++; }
  }
  while (root != NULL && __VERIFIER_nondet_int()) {
    x = root;
    while (__VERIFIER_nondet_int() && (x->left != NULL || x->right != NULL))
      x = (x->left != NULL && (x->right == NULL || __VERIFIER_nondet_int())) ? x->left : x->right;
    key = x->key;
    root = bst_delete(root, key);
    n--;
    if (bst_find(root, key) != NULL) reach_error();
    check_order(root);
  }
  if (tree_free(root) != n) reach_error();
  return 0;
}
