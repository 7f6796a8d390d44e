# tarnawski.sh - CLI checks of the Tarnawski benchmark: --objective on simulate/place/compare/bound and the
# "objective"/"objective_ms" keys, the expert splits' max-load (their dp.exe's numbers), a training split
# completed by colour class, dp/pipedream/ilp (and --cpu-time), bound --contiguous, compare's contiguous
# bound, bad options.
# Not here: the solvers in depth (tests/test_tw_methods.c). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
TP=tests/data/tarnawski/throughput-inputs/LayerGraphs
LT=tests/data/tarnawski/latency-inputs/LayerGraphs
EX=tests/data/tarnawski/human-experts

# simulate: the expert split's max-load is their -expert figure (20.084 ms), latency stays beside it
expect_rc 0 $HSDAG simulate $TP/bert24_inference.json --placement $EX/bert24_inference_expert.json --objective throughput --json
expect_grep '"objective": "throughput"' "$TMP/out"
expect_grep '"objective_ms": 20\.08395' "$TMP/out"
expect_grep '"latency_ms": 92\.4255' "$TMP/out"
expect_grep '"load_ms": \{' "$TMP/out"
expect_rc 0 $HSDAG simulate $TP/bert24_inference.json --placement $EX/bert24_inference_expert.json --objective throughput
expect_grep '^throughput +20\.08' "$TMP/out"
# the inference split on the training graph: backward nodes follow their colour class (theirs: 112.108)
expect_rc 0 $HSDAG simulate $TP/resnet50_training.json --placement $EX/resnet50_inference_expert.json --objective throughput --json
expect_grep '"objective_ms": 112\.1075' "$TMP/out"
# latency is the default objective
expect_rc 0 $HSDAG simulate $LT/bert24_inference.json --placement cpu-only --json
expect_grep '"objective": "latency"' "$TMP/out"
expect_grep '"objective_ms": 924\.06' "$TMP/out"
expect_grep '"load_ms": null' "$TMP/out"

# place: the exact contiguous optimum (their dp.exe: 17.78990625) and the chain DP
expect_rc 0 $HSDAG place $TP/bert24_inference.json --method dp --objective throughput --json
expect_grep '"objective": "throughput"' "$TMP/out"
expect_grep '"objective_ms": 17\.78990' "$TMP/out"
expect_grep '"contiguous": true' "$TMP/out"
expect_grep '"method_bound_contiguous": true' "$TMP/out"
expect_grep '"optimal": true' "$TMP/out"
expect_rc 0 $HSDAG place $TP/bert24_inference.json --method pipedream --objective throughput --json
expect_grep '"objective_ms": 17\.78990' "$TMP/out"
# their greedy's published figure
expect_rc 0 $HSDAG place $LT/bert24_inference.json --method greedy-tarnawski --json
expect_grep '"objective": "latency"' "$TMP/out"
expect_grep '"objective_ms": 100\.218' "$TMP/out"
# their latency IP: a bound over contiguous splits, never above its incumbent
expect_rc 0 $HSDAG place $LT/bert24_inference.json --method ilp --time-limit 1 --json
expect_grep '"note": "(optimal|time limit|LP relaxation)' "$TMP/out"
# --cpu-time: the limit counts the thread's CPU seconds (cpu_s); the LP's and branch-and-cut's CPU seconds are
# fields, not in the note (which stays the same run to run); methods that read no time limit refuse it
expect_rc 0 $HSDAG place $LT/bert24_inference.json --method ilp --time-limit 1 --cpu-time --json
expect_grep '"cpu_s": [01]\.[0-9]+' "$TMP/out"
expect_grep '"lp_cpu_s": [0-9.e-]+, "branch_and_cut_cpu_s": [0-9.e-]+' "$TMP/out"
if grep -Eq '"note": "[^"]*(CPU|wall) s' "$TMP/out"; then bad "seconds in the note: $(cat "$TMP/out")"; else ok; fi
expect_rc 2 $HSDAG place $LT/bert24_inference.json --method greedy-tarnawski --cpu-time
one_line "$TMP/err"

# bound: the latency bound with memory caps (path-blocks) reaches their greedy's 100.2185 ms on BERT-24, which
# proves it optimal; the ilp takes it as its objective's floor and proves it too
expect_rc 0 $HSDAG bound $LT/bert24_inference.json --json
expect_grep '"lower_bound_rule": "path-blocks"' "$TMP/out"
expect_grep '"path_blocks_ms": 100\.2185' "$TMP/out"
expect_grep '"critical_path_ms": 92\.406' "$TMP/out"
expect_rc 0 $HSDAG place $LT/bert24_inference.json --method ilp --time-limit 30 --cpu-time --json
expect_grep '"optimal": true' "$TMP/out"

# bound: throughput terms, and --contiguous runs the DP
expect_rc 0 $HSDAG bound $TP/bert24_inference.json --objective throughput --json
expect_grep '"objective": "throughput"' "$TMP/out"
expect_grep '"lower_bound_rule": "(max-class|work/devices)"' "$TMP/out"
expect_grep '"max_class_ms": [0-9.]+' "$TMP/out"
expect_grep '"contiguous_method": null' "$TMP/out"
expect_grep '"contiguous_bound_ms": null' "$TMP/out"
expect_rc 0 $HSDAG bound $TP/bert24_inference.json --objective throughput --contiguous --json
expect_grep '"contiguous_bound_ms": 17\.78990' "$TMP/out"
expect_grep '"contiguous_method": "dp"' "$TMP/out"

# compare: the contiguous bound applies to contiguous rows
expect_rc 0 $HSDAG compare $TP/bert24_inference.json --objective throughput --methods greedy-tarnawski,dp,pipedream --json
expect_grep '"objective": "throughput"' "$TMP/out"
expect_grep '"contiguous_bound_ms": 17\.78990' "$TMP/out"
expect_grep '"method": "dp", "error": null, "objective_ms": 17\.78990[0-9]*, "latency_ms": [0-9.]+, "feasible": true, "contiguous": true' "$TMP/out"

# --contiguous: tarnawski semantics only; --time-limit only with it
expect_rc 2 $HSDAG bound tests/data/onnx/alexnet.onnx --contiguous
one_line "$TMP/err"
expect_grep "contiguous" "$TMP/err"
expect_rc 2 $HSDAG bound $TP/bert24_inference.json --time-limit 5
one_line "$TMP/err"
expect_grep "does not apply" "$TMP/err"
# text output: the max-load column and the contiguous bound
expect_rc 0 $HSDAG compare $TP/bert24_inference.json --objective throughput --methods greedy-tarnawski,dp
expect_grep 'max_load_ms' "$TMP/out"
expect_grep '^bound over contiguous splits 17\.7899' "$TMP/out"

# bad --objective values: one line, exit 2, on every command
for cmd in simulate place compare bound; do
    case $cmd in
    simulate) expect_rc 2 $HSDAG simulate $TP/bert24_inference.json --placement cpu-only --objective speed ;;
    place) expect_rc 2 $HSDAG place $TP/bert24_inference.json --method dp --objective speed ;;
    *) expect_rc 2 $HSDAG $cmd $TP/bert24_inference.json --objective speed ;;
    esac
    one_line "$TMP/err"
    expect_grep "objective" "$TMP/err"
done
# a split whose colour class sits on two devices leaves its unlisted nodes without one
printf '{"cpus": [{"nodes": []}], "fpgas": [{"nodes": [1]}]}' > "$TMP/bad.json"
expect_rc 2 $HSDAG simulate $TP/bert24_training.json --placement "$TMP/bad.json"
one_line "$TMP/err"
finish
