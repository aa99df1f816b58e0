/* An array index one past the end (frontend::lower::array): the write is undefined
 * behaviour (valid-deref), and `&a[n]` with n == 4 is one past the end, which the
 * model has no object for. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "array_index_oob.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
int main(void) {
  int a[4] = {0};
  int i = __VERIFIER_nondet_int();
  if (i < 0 || i > 4) return 0;
  a[i] = 1;
  return 0;
}
