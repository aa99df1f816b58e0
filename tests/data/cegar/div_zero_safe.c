/* div_zero_bug.c with the division guarded: SAFE, the proof covers the division. */
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "div_zero_safe.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);

int main() {
  int d = __VERIFIER_nondet_int();
  int q = 0;
  if (d != 0)
    q = 100 % d + 100 / d;
  if (d == 0 && q != 0)
    reach_error();
  return q;
}
