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
for p in para-min random fixed:4 acceptable-jct para-min-jct sequential lookahead lookahead:2:1; do
    expect_rc 0 "$HSDAG" cluster run --policy "$p" --beta B --seed 1 --json
    expect_grep '"jobs_arrived": 1001' "$TMP/out"
done
expect_rc 0 "$HSDAG" cluster run --policy lookahead --beta D --time-unit-fix --repeat 3
expect_grep "median of 3" "$TMP/out"
expect_grep "blocking_rate" "$TMP/out"
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
# shapes with more racks (or server sets) than the transceivers can serve in one all-reduce subgroup: those
# blocks are not offered, so every job ends (4,8,2 and 2,2,16 aborted on "ops_done == n_ops" before)
for sh in 4,8,2 2,8,2 1,8,1 2,2,16; do
    expect_rc 0 "$HSDAG" cluster run --policy random --shape $sh --beta C --json
    expect_grep '"blocking_rate"' "$TMP/out"
done
expect_rc 2 "$HSDAG" cluster run --policy para-max --nope
expect_rc 2 "$HSDAG" cluster run
expect_rc 2 "$HSDAG" cluster frobnicate
expect_rc 2 "$HSDAG" cluster run --policy para-max --graphs /nonexistent/graph.txt
one_line "$TMP/err"
printf 'node1 -- x -- forward_compute_time=1.0\n' > "$TMP/bad.txt"
expect_rc 2 "$HSDAG" cluster run --policy para-max --graphs "$TMP/bad.txt"
expect_grep "line 1" "$TMP/err"
# every option a subcommand accepts is honoured; another subcommand's option is refused (exit 2, one line)
expect_rc 2 "$HSDAG" cluster run --policy para-max --seeds 7
one_line "$TMP/err"
expect_grep "run takes one --seed" "$TMP/err"
expect_rc 2 "$HSDAG" cluster run --policy para-max --betas C
expect_rc 2 "$HSDAG" cluster run --policy para-max --policies random
expect_rc 2 "$HSDAG" cluster run --policy para-max --out "$TMP/o.md"
expect_rc 2 "$HSDAG" cluster compare --seed 5 --quiet
one_line "$TMP/err"
expect_grep "compare takes --seeds" "$TMP/err"
expect_rc 2 "$HSDAG" cluster compare --policy random --quiet
expect_rc 2 "$HSDAG" cluster compare --beta B --quiet
expect_rc 2 "$HSDAG" cluster compare --repeat 3 --quiet
expect_rc 2 "$HSDAG" cluster info --seeds 1
expect_rc 2 "$HSDAG" cluster info --policy para-max
# --seed and --beta are honoured: a different seed or beta changes the episode, the JSON says which
expect_rc 0 "$HSDAG" cluster run --policy random --beta C --seed 7 --json
expect_grep '"beta": "C", "seed": 7' "$TMP/out"
cp "$TMP/out" "$TMP/c7.json"
expect_rc 0 "$HSDAG" cluster run --policy random --beta A --seed 0 --json
if [ "$(sed 's/"wall_s".*//;s/.*"blocking_rate"//' "$TMP/out")" != "$(sed 's/"wall_s".*//;s/.*"blocking_rate"//' "$TMP/c7.json")" ]; then ok; else bad "--seed/--beta ignored"; fi
# the text output names each metric as the JSON does and says which way is better
expect_rc 0 "$HSDAG" cluster run --policy para-max
for k in jobs_arrived jobs_decided jobs_blocked blocking_rate acceptance_rate throughput mean_jct; do
    expect_grep "^  $k " "$TMP/out"
done
expect_grep "lower is better" "$TMP/out"
expect_grep "B per time unit" "$TMP/out"
expect_grep "no decision" "$TMP/out"
expect_grep '"jobs_decided": 1000' "$TMP/a.json"
# compare honours --seeds, --policies, --betas, --json
expect_rc 0 "$HSDAG" cluster compare --seeds 5 --policies random --betas C --json --quiet
expect_grep '"seeds": \[5\]' "$TMP/out"
expect_grep '"policy": "random", "beta": "C"' "$TMP/out"
if grep -q '"beta": "A"' "$TMP/out" || grep -q para-max "$TMP/out"; then bad "compare ignored --betas/--policies"; else ok; fi
expect_rc 0 "$HSDAG" cluster run --policy random --beta C --seed 5 --json
br=$(sed 's/.*"blocking_rate": \([0-9.e-]*\).*/\1/' "$TMP/out")
expect_rc 0 "$HSDAG" cluster compare --seeds 5 --policies random --betas C --json --quiet
expect_grep "\"blocking_rate_per_seed\": \\[$br\\]" "$TMP/out"
expect_rc 0 "$HSDAG" cluster --help
expect_grep "lower is better" "$TMP/out"
if grep -q reserved "$TMP/out"; then bad "--help still calls a policy reserved"; else ok; fi
# wide PipeDream graphs (issue 16): a 30k fan-out + fan-in runs in ~1.3 s of CPU (the per-server ready lists are
# heaps; the old linear scan took 43 s); a 20k star, whose split graph at degree 16 has 15M dependencies, is
# refused at once with one line naming the graph and the limit
awk 'BEGIN { n = 30000
  print "node1 -- Input0 -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1000.0, parameter_size=0.0"
  for (i = 2; i <= n + 2; i++) print "node" i " -- ReLU() -- forward_compute_time=0.005, backward_compute_time=0.005, activation_size=1000.0, parameter_size=0.0"
  for (i = 2; i <= n + 1; i++) print "\tnode1 -- node" i
  for (i = 2; i <= n + 1; i++) print "\tnode" i " -- node" n + 2 }' > "$TMP/fan.txt"
case "$HSDAG" in *asan*) LIMIT="" ;; *) LIMIT="ulimit -v 1000000;" ;; esac
# 20 s of CPU time (SIGXCPU past it: the run fails), so a loaded machine does not fail it; a hang that burns no
# CPU is caught by the generous wall-clock timeout
CPU_LIMIT="ulimit -t 20; timeout 600"
expect_rc 0 sh -c "$LIMIT $CPU_LIMIT '$HSDAG' cluster run --policy para-max --graphs '$TMP/fan.txt' --json"
expect_grep '"jobs_arrived": 1001' "$TMP/out"
awk 'BEGIN { n = 20000
  print "node1 -- Input0 -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1000.0, parameter_size=0.0"
  for (i = 2; i <= n + 1; i++) print "node" i " -- ReLU() -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1000.0, parameter_size=0.0"
  for (i = 2; i <= n + 1; i++) print "\tnode1 -- node" i }' > "$TMP/star.txt"
expect_rc 2 sh -c "$LIMIT $CPU_LIMIT '$HSDAG' cluster run --policy para-max --graphs '$TMP/star.txt'"
one_line "$TMP/err"
expect_grep "star.txt: split at degree 16 .* above the simulator's limit" "$TMP/err"
# compare: table and markdown file
expect_rc 0 "$HSDAG" cluster compare --seeds 0,1 --policies para-max,lookahead --betas AD --markdown "$TMP/t.md" --quiet
expect_grep "\| para-max \|" "$TMP/out"
expect_grep "blocking_rate A" "$TMP/t.md"
expect_grep "lower is better" "$TMP/t.md"
expect_grep "±" "$TMP/t.md"
expect_rc 2 "$HSDAG" cluster compare --seeds 0,x
expect_rc 2 "$HSDAG" cluster compare --betas AZ
# info
expect_rc 0 "$HSDAG" cluster info --json
expect_grep '"name": "gnmt", "fwd_nodes": 48, "nodes": 96, "edges": 117' "$TMP/out"
finish
