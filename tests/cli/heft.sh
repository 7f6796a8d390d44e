#!/bin/sh
# heft.sh - HEFT's output before and after its slot search became a binary search (issue 15): the placements
# and latencies of tests/data/heft-golden.txt (made by the linear scan) on generated graphs, byte for byte.
# Not here: HEFT's rules (tests/test_place.c). Run by tests/run.sh with $HSDAG set.
. tests/cli_lib.sh

grep -v '^#' tests/data/heft-golden.txt > "$TMP/golden"
while IFS='|' read -r spec devs sum lat; do
    # shellcheck disable=SC2086
    "$HSDAG" gen $spec --out "$TMP/g.json" 2>"$TMP/err" || bad "gen $spec: $(cat "$TMP/err")"
    expect_rc 0 "$HSDAG" place "$TMP/g.json" --method heft --devices "$devs" --out "$TMP/p.json"
    got=$(cksum < "$TMP/p.json" | cut -d' ' -f1,2)
    if [ "$got" = "$sum" ]; then ok; else bad "heft on $spec ($devs): placement cksum $got, want $sum"; fi
    if grep -qxF "$lat" "$TMP/out"; then ok; else bad "heft on $spec ($devs): no '$lat' in the table"; fi
done < "$TMP/golden"
finish
