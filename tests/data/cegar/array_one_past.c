/* The address one past the end of an array (valid C, not modelled: UNKNOWN, never
 * SAFE or UNSAFE), frontend::lower::array. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "array_one_past.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
int main(void) {
  int a[4] = {0};
  int i = __VERIFIER_nondet_int();
  if (i < 0 || i > 4) return 0;
  int *p = &a[i];
  if (i < 4 && *p != 0) reach_error();
  return 0;
}
