#!/bin/sh
# run.sh - runs every unit-test binary given, then every CLI test script tests/cli/*.sh and the hostile-input
# suite tests/hostile/*.sh.
# Not here: building (the Makefile does it). Prints one closing line "N passed, N failed".
# Usage: BUILD=build sh tests/run.sh build/tests/test_*
BUILD=${BUILD:-build}
export HSDAG="$BUILD/hsdag"
pass=0; fail=0; failed=""
for t in "$@" tests/cli/*.sh tests/hostile/*.sh; do
    [ -e "$t" ] || continue
    case "$t" in *.sh) cmd="sh $t";; *) cmd="$t";; esac
    out=$($cmd 2>&1); rc=$?
    line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    p=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9][0-9]*\) passed.*/\1/p')
    f=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p')
    [ -n "$p" ] || p=0; [ -n "$f" ] || f=0
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    pass=$((pass + p)); fail=$((fail + f))
    if [ $rc -ne 0 ] || [ "$f" -ne 0 ]; then
        failed="$failed $t"; printf '%s\n' "$out" | tail -n 40
    fi
    printf '%-40s %s\n' "$(basename "$t")" "${line:-exit $rc}"
done
[ -n "$failed" ] && echo "FAILED:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
