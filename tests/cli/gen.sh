#!/bin/sh
# gen.sh - CLI tests of 'hsdag gen': help, option errors (exit 2, one line), --target-ops, files that every
# other command reads, determinism of random-dag, the decode graph's KV cache in info's totals.
# Not here: the generator's numbers against torch (tests/test_gen.c). Run by tests/run.sh with $HSDAG set.
. tests/cli_lib.sh

expect_rc 0 "$HSDAG" gen --help
expect_grep "random-dag" "$TMP/out"
expect_rc 2 "$HSDAG" gen
one_line "$TMP/err"
expect_rc 2 "$HSDAG" gen lstm
expect_rc 2 "$HSDAG" gen transformer --d-model 100 --heads 12
one_line "$TMP/err"
expect_grep "hidden 100 is not a multiple of heads 12" "$TMP/err"
expect_rc 2 "$HSDAG" gen transformer --nodes 10
expect_grep "^hsdag gen transformer: --nodes does not apply to 'hsdag gen transformer'" "$TMP/err"
expect_rc 2 "$HSDAG" gen random-dag --layers 3
expect_rc 2 "$HSDAG" gen random-dag
one_line "$TMP/err"; expect_grep "^hsdag gen random-dag: missing --nodes N" "$TMP/err"
expect_rc 2 "$HSDAG" gen transformer --layers 0
expect_rc 2 "$HSDAG" gen transformer --layers
expect_rc 2 "$HSDAG" gen transformer --dtype f7
expect_grep "^hsdag gen transformer: --dtype 'f7' is not f32, f16" "$TMP/err"
expect_rc 2 "$HSDAG" gen transformer --target-ops 3
one_line "$TMP/err"; expect_grep "one block already has" "$TMP/err"

# --target-ops: the most blocks that stay at or under the target (41 ops a block, 5 around them)
expect_rc 0 "$HSDAG" gen transformer --d-model 64 --heads 4 --kv-heads 2 --seq 16 --vocab 100 --target-ops 1000 \
    --out "$TMP/t.json"
expect_rc 0 "$HSDAG" info --json "$TMP/t.json"
n=$(tr -d ' \n' < "$TMP/out" | sed -n 's/.*"nodes":\([0-9]*\),.*/\1/p')
if [ "$n" = "989" ]; then ok; else bad "--target-ops 1000 gave $n nodes, want 989 (24 blocks)"; fi
for cmd in "bound" "simulate --placement gpu-only" "place --method heft" "place --method m-etf" \
    "place --method metis" "place --method mincut"; do
    # shellcheck disable=SC2086
    expect_rc 0 "$HSDAG" $cmd "$TMP/t.json" --devices cpu-gpu
done

# random-dag: the same seed gives the same bytes, another seed other bytes
expect_rc 0 "$HSDAG" gen random-dag --nodes 300 --seed 3 --out "$TMP/r1.json"
expect_rc 0 "$HSDAG" gen random-dag --nodes 300 --seed 3 --out "$TMP/r2.json"
expect_rc 0 "$HSDAG" gen random-dag --nodes 300 --seed 4 --out "$TMP/r3.json"
if cmp -s "$TMP/r1.json" "$TMP/r2.json"; then ok; else bad "random-dag: same seed, different output"; fi
if cmp -s "$TMP/r1.json" "$TMP/r3.json"; then bad "random-dag: seeds 3 and 4 gave the same graph"; else ok; fi
expect_rc 0 "$HSDAG" gen random-dag --nodes 300 --degree 3 --window 8 --dtype f16 --name r
expect_grep '"name":"r"' "$TMP/out"
expect_rc 2 "$HSDAG" gen random-dag --nodes 30 --degree 20
expect_grep "^hsdag gen random-dag: --degree '20' is not a number in \[1, 16\]" "$TMP/err"

# decode: two cache Concats per block, and the cache read counts as weights (2 layers x K and V x 12 tokens x
# 64 x f16 = 6144 bytes) beside the 1-token prefill's weights: 12 more position rows of 128 bytes, no 1x1 masks)
expect_rc 0 "$HSDAG" gen transformer --layers 2 --d-model 64 --heads 4 --seq 12 --vocab 100 --decode --out "$TMP/d.json"
expect_rc 0 "$HSDAG" info --json "$TMP/d.json"
expect_grep '"Concat": 4' "$TMP/out"
pd=$(sed -n 's/.*"param_bytes": \([0-9]*\),.*/\1/p' "$TMP/out")
expect_rc 0 "$HSDAG" gen transformer --layers 2 --d-model 64 --heads 4 --seq 1 --vocab 100 --out "$TMP/p.json"
expect_rc 0 "$HSDAG" info --json "$TMP/p.json"
pp=$(sed -n 's/.*"param_bytes": \([0-9]*\),.*/\1/p' "$TMP/out")
if [ $((pd - pp)) -eq $((6144 + 12 * 128 - 2 * 2)) ]; then ok; else bad "decode weights $pd, prefill $pp: not 7676 apart"; fi
finish
