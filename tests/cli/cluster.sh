#!/bin/sh
# cluster.sh - CLI tests of `hsdag cluster run|compare|info` (PAC-ML cluster simulator).
# Not here: the simulator's numbers in depth (tests/test_cluster.c). Run from the repository root.
# Entry points: sourced helpers from tests/cli_lib.sh; ends with finish.
. tests/cli_lib.sh

expect_rc 0 "$HSDAG" cluster --help
expect_grep "cluster train" "$TMP/out"
expect_rc 0 "$HSDAG" cluster run --help
expect_grep "para-max" "$TMP/out"
expect_grep "time-unit-fix" "$TMP/out"
expect_rc 2 "$HSDAG" cluster

# run --json: the required keys, 1001 arrivals
expect_rc 0 "$HSDAG" cluster run --policy para-max --beta A --seed 0 --json
for k in blocking_rate acceptance_rate throughput mean_jct jobs_arrived jobs_blocked wall_s; do
    expect_grep "\"$k\": " "$TMP/out"
done
expect_grep '"jobs_arrived": 1001' "$TMP/out"
cp "$TMP/out" "$TMP/a.json"
# determinism: same seed, same numbers (wall time aside)
expect_rc 0 "$HSDAG" cluster run --policy para-max --beta A --seed 0 --json
if [ "$(sed 's/"wall_s".*//' "$TMP/out")" = "$(sed 's/"wall_s".*//' "$TMP/a.json")" ]; then ok; else bad "run not deterministic"; fi
# para-max never misses a deadline; every policy runs
expect_grep '"blocked_jct": 0' "$TMP/a.json"
for p in para-min random fixed:4 acceptable-jct sequential lookahead lookahead:2:1; do
    expect_rc 0 "$HSDAG" cluster run --policy "$p" --beta B --seed 1 --json
    expect_grep '"jobs_arrived": 1001' "$TMP/out"
done
expect_rc 0 "$HSDAG" cluster run --policy lookahead --beta D --time-unit-fix --repeat 3
expect_grep "median of 3" "$TMP/out"
expect_grep "blocking rate" "$TMP/out"
# options
expect_rc 0 "$HSDAG" cluster run --policy para-max --horizon 10000 --interarrival 500 --json
expect_grep '"jobs_arrived": 21' "$TMP/out"
expect_rc 0 "$HSDAG" cluster run --policy para-max --shape 2,2,2 --bandwidth 1e11 --replication 10 --json
expect_rc 0 "$HSDAG" cluster run --policy para-max --graphs tests/data/pacml/gnmt.txt,tests/data/pipedream/resnet50.txt --json
expect_grep '"jobs_arrived": 1001' "$TMP/out"
# a learned policy that does not exist, and bad options: exit 2, one line
expect_rc 2 "$HSDAG" cluster run --policy learned:models/x
one_line "$TMP/err"
expect_grep "models/x" "$TMP/err"
expect_rc 2 "$HSDAG" cluster run --policy bogus
one_line "$TMP/err"
expect_rc 2 "$HSDAG" cluster run --policy para-max --beta E
expect_rc 2 "$HSDAG" cluster run --policy para-max --seed -1
expect_rc 2 "$HSDAG" cluster run --policy para-max --shape 4,4
expect_rc 2 "$HSDAG" cluster run --policy para-max --nope
expect_rc 2 "$HSDAG" cluster run
expect_rc 2 "$HSDAG" cluster frobnicate
expect_rc 2 "$HSDAG" cluster run --policy para-max --graphs /nonexistent/graph.txt
one_line "$TMP/err"
printf 'node1 -- x -- forward_compute_time=1.0\n' > "$TMP/bad.txt"
expect_rc 2 "$HSDAG" cluster run --policy para-max --graphs "$TMP/bad.txt"
expect_grep "line 1" "$TMP/err"
# compare: table and markdown file
expect_rc 0 "$HSDAG" cluster compare --seeds 0,1 --policies para-max,lookahead --betas AD --markdown "$TMP/t.md" --quiet
expect_grep "\| para-max \|" "$TMP/out"
expect_grep "blocking A" "$TMP/t.md"
expect_grep "±" "$TMP/t.md"
expect_rc 2 "$HSDAG" cluster compare --seeds 0,x
expect_rc 2 "$HSDAG" cluster compare --betas AZ
# info
expect_rc 0 "$HSDAG" cluster info --json
expect_grep '"name": "gnmt", "fwd_nodes": 48, "nodes": 96, "edges": 117' "$TMP/out"
finish
