/* The only way to reach_error() divides by zero: `d` is 0 when the nondeterministic
 * input is 0, `q = 100 / d` is then undefined behaviour (C allows anything after it).
 * The path formula and the interpreter stopped a path at a division by zero, so the
 * program came out SAFE; now the division is a target and the answer is UNKNOWN. */
extern void __assert_fail(const char *, const char *, unsigned int, const char *) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
void reach_error() { __assert_fail("0", "div_zero_bug.c", __LINE__, "reach_error"); }
extern int __VERIFIER_nondet_int(void);

int main() {
  int d = __VERIFIER_nondet_int();
  int q = 100 / d;
  if (d == 0)
    reach_error();
  return q;
}
