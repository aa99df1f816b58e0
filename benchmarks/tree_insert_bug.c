/* tree_insert_bug: bst_insert sets the new node's parent to the root instead of the node it
 * hangs from (wrong variable). */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "tree_insert_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
#include <stdlib.h>

struct tnode {
  int key;
  struct tnode *left;
  struct tnode *right;
  struct tnode *parent;
};

static struct tnode *tnode_new(int key) {
  struct tnode *n = (struct tnode *) malloc(sizeof(struct tnode));
  if (!n) abort();
  n->key = key;
  n->left = NULL;
  n->right = NULL;
  n->parent = NULL;
  return n;
}

static int nondet_key(void) {
  int k = __VERIFIER_nondet_int();
  return 4 * k - __VERIFIER_nondet_int();
}

/* insert key unless it is present; returns the root */
static struct tnode *bst_insert(struct tnode *root, int key) {
  struct tnode *p = root, *n;
  if (root == NULL) return tnode_new(key);
  for (;;) {
    if (key == p->key) return root;
    if (key < p->key) {
      if (p->left == NULL) break;
      p = p->left;
    } else {
      if (p->right == NULL) break;
      p = p->right;
    }
  }
  n = tnode_new(key);
  n->parent = root;
  if (key < p->key) p->left = n; else p->right = n;
  return root;
}

/* along an arbitrary path from the root: parent pointers point back, keys are ordered */
static void check_tree(struct tnode *root) {
  struct tnode *p = root;
  if (root != NULL && root->parent != NULL) reach_error();
  while (p != NULL) {
    if (p->left != NULL && (p->left->parent != p || p->left->key >= p->key)) reach_error();
    if (p->right != NULL && (p->right->parent != p || p->right->key <= p->key)) reach_error();
    if (__VERIFIER_nondet_int()) p = p->left; else p = p->right;
  }
}

/* free leaf by leaf, following only left and right; every left/right link is followed
 * at least once, and its target's parent pointer must point back */
static void tree_free(struct tnode *root) {
  while (root != NULL) {
    struct tnode *up = NULL, *p = root;
    while (p->left != NULL || p->right != NULL) {
      up = p;
      p = (p->left != NULL) ? p->left : p->right;
      if (p->parent != up) reach_error();
    }
    if (up == NULL) root = NULL;
    else if (up->left == p) up->left = NULL;
    else up->right = NULL;
    free(p);
  }
}

int main(void) {
  struct tnode *root = NULL;
  while (__VERIFIER_nondet_int())
    root = bst_insert(root, nondet_key());
  check_tree(root);
  tree_free(root);
  return 0;
}
