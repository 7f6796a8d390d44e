# lib.sh - helpers sourced by the CLI test scripts tests/cli/*.sh (not a test itself).
# Not here: the tests; each script sources this, runs $HSDAG and ends with `finish`.
# Entry points: expect_rc RC CMD..., expect_out PATTERN CMD..., json_get FILE KEY, finish.
HSDAG=${HSDAG:-build/hsdag}
PASS=0; FAIL=0
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
ok()  { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }
# expect_rc RC CMD...: runs CMD, checks its exit status; stdout in $TMP/out, stderr in $TMP/err.
expect_rc() {
    want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else bad "exit $rc (want $want): $* :: $(head -c 300 "$TMP/err")"; fi
}
# expect_grep PATTERN FILE: FILE contains PATTERN (grep -E).
expect_grep() {
    if grep -Eq -- "$1" "$2"; then ok; else bad "no /$1/ in $2: $(head -c 300 "$2")"; fi
}
# one_line FILE: FILE has exactly one line (one-line error messages).
one_line() {
    n=$(wc -l < "$1"); if [ "$n" -eq 1 ]; then ok; else bad "$1 has $n lines: $(head -c 300 "$1")"; fi
}
finish() { echo "$(basename "$0"): $PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; }
