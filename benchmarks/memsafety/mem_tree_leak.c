/* a binary tree node with two children; the bug frees the root before its children (the safe twin). */
#include <stdlib.h>

extern int __VERIFIER_nondet_int(void);

struct node {
  struct node *next;
  int data;
};

struct tree {
  struct tree *left;
  struct tree *right;
};

static struct tree *leaf(void) {
  struct tree *t = malloc(sizeof(struct tree));
  t->left = NULL;
  t->right = NULL;
  return t;
}

int main(void) {
  struct tree *root = leaf();
  if (__VERIFIER_nondet_int())
    root->left = leaf();
  if (__VERIFIER_nondet_int())
    root->right = leaf();
  if (root->left != NULL)
    free(root->left);
  if (root->right != NULL)
    free(root->right);
  free(root);
  return 0;
}
