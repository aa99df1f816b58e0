#!/usr/bin/env bash
# validate.sh DIR [RUNS]  -- checks every DIR/NAME.yml task (SV-COMP unreach-call, C).
# 1. gcc -std=gnu11 -Wall -fsyntax-only NAME.c must pass without errors or warnings.
# 2. NAME.c (unchanged) is linked with a random __VERIFIER_nondet_int and run RUNS times
#    (default 300, seeds 1..RUNS) under ASan+UBSan+LSan.  Each call site of
#    __VERIFIER_nondet_int gets its own bias per seed: nonzero with probability drawn
#    from NONDET_PCTS (default "25 50 75 95" percent); after 100000 calls it returns 0.
#    A run "hits" when __assert_fail reports reach_error.
# Output: one line per task: name expected runs hits asan_errors other verdict.
# Exit status nonzero on any violation: syntax error/warning, sanitizer report (any task),
# timeout/crash, a hit in a safe task, fewer than 5% hits in a bug task, bad .yml.
# Copied unchanged from ../shared/bench/gdsl/validate.sh (the shared generic task validator).
set -u
dir=${1:?usage: validate.sh DIR [RUNS]}
runs=${2:-300}
jobs=$(nproc 2>/dev/null || echo 2)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/nondet.c" <<'CEOF'
#include <stdlib.h>
#include <stdint.h>
static unsigned long long seed;
static long calls;
static int ready;
static unsigned pcts[16], npcts;
static unsigned long long mix(unsigned long long x) { /* splitmix64 */
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
int __VERIFIER_nondet_int(void) {
  uintptr_t site = (uintptr_t)__builtin_return_address(0) - (uintptr_t)&__VERIFIER_nondet_int;
  unsigned long long r;
  unsigned pct;
  if (!ready) {
    const char *s = getenv("NONDET_SEED"), *p = getenv("NONDET_PCTS");
    char *end;
    seed = s ? strtoull(s, 0, 10) : 1;
    if (!p) p = "25 50 75 95";
    while (npcts < 16) {
      unsigned long v = strtoul(p, &end, 10);
      if (end == p) break;
      pcts[npcts++] = (unsigned)v;
      p = end;
    }
    if (npcts == 0) pcts[npcts++] = 75;
    ready = 1;
  }
  if (++calls > 100000) return 0;           /* every loop ends eventually */
  pct = pcts[mix(seed * 1000003ULL + site) % npcts];
  r = mix(seed ^ mix((unsigned long long)calls));
  if (r % 100 >= pct) return 0;
  return 1 + (int)((r >> 32) % 4);
}
CEOF

cat > "$tmp/run1.sh" <<'SEOF'
#!/usr/bin/env bash
# run1.sh BIN SEED -> "SEED hit|ok|san|timeout|crash"
out=$(NONDET_SEED=$2 ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
      LSAN_OPTIONS=use_stacks=0:use_registers=0 UBSAN_OPTIONS=print_stacktrace=1 \
      timeout 10 "$1" 2>&1)
rc=$?
if grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' <<<"$out"; then echo "$2 san"
elif grep -q 'reach_error' <<<"$out"; then echo "$2 hit"
elif [ $rc -eq 124 ]; then echo "$2 timeout"
elif [ $rc -ne 0 ]; then echo "$2 crash"
else echo "$2 ok"; fi
SEOF
chmod +x "$tmp/run1.sh"

status=0
fmt='%-32s %-8s %5s %5s %6s %6s %s\n'
printf "$fmt" task expected runs hits asan other verdict
for yml in "$dir"/*.yml; do
  [ -e "$yml" ] || continue
  name=$(basename "$yml" .yml)
  src="$dir/$name.c"
  note=""
  exp=$(sed -n 's/^ *expected_verdict: *\([a-z]*\).*/\1/p' "$yml" | head -1)
  grep -q "^input_files: '$name.c'\$" "$yml" || note="$note yml-input_files"
  grep -q "^format_version: '2.0'\$" "$yml" || note="$note yml-format_version"
  grep -q "data_model: ILP32" "$yml" || note="$note yml-data_model"
  prp=$(sed -n 's/^ *- property_file: *//p' "$yml" | head -1)
  [ -n "$prp" ] && [ -f "$dir/$prp" ] || note="$note missing-property-file"
  if [ ! -f "$src" ]; then
    printf "$fmt" "$name" "$exp" - - - - "FAIL: missing $name.c"; status=1; continue
  fi
  if ! warn=$(gcc -std=gnu11 -Wall -fsyntax-only "$src" 2>&1) || [ -n "$warn" ]; then
    printf "$fmt" "$name" "$exp" - - - - "FAIL: gcc: $(head -1 <<<"$warn")"; status=1; continue
  fi
  if ! gcc -std=gnu11 -g -O0 -fsanitize=address,undefined -fno-omit-frame-pointer \
       "$src" "$tmp/nondet.c" -o "$tmp/$name" 2>"$tmp/$name.cc"; then
    printf "$fmt" "$name" "$exp" - - - - "FAIL: compile: $(head -1 "$tmp/$name.cc")"; status=1; continue
  fi
  seq 1 "$runs" | xargs -P "$jobs" -I{} "$tmp/run1.sh" "$tmp/$name" {} > "$tmp/$name.res"
  total=$(wc -l < "$tmp/$name.res")
  hits=$(grep -c ' hit$' "$tmp/$name.res")
  san=$(grep -c ' san$' "$tmp/$name.res")
  other=$(grep -c ' timeout$\| crash$' "$tmp/$name.res")
  [ "$total" -eq "$runs" ] || note="$note incomplete"
  [ "$san" -eq 0 ] || note="$note sanitizer(seeds $(grep ' san$' "$tmp/$name.res" | head -3 | cut -d' ' -f1 | tr '\n' ' '))"
  [ "$other" -eq 0 ] || note="$note timeout/crash(seeds $(grep ' timeout$\| crash$' "$tmp/$name.res" | head -3 | cut -d' ' -f1 | tr '\n' ' '))"
  case "$exp" in
    true)  [ "$hits" -eq 0 ] || note="$note reach_error-in-safe-task" ;;
    false) [ $((hits * 100)) -ge $((runs * 5)) ] || note="$note too-few-hits" ;;
    *)     note="$note no-expected-verdict" ;;
  esac
  if [ -z "$note" ]; then verdict=OK; else verdict="FAIL:$note"; status=1; fi
  printf "$fmt" "$name" "$exp" "$runs" "$hits" "$san" "$other" "$verdict"
done
exit $status
