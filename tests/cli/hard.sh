# hard.sh - CLI tests of the hard-instance tools: --mem caps, the black-box baselines (budget, noise,
# determinism), compare --suite, the learned methods' JSON keys and --paper. Small graphs, tiny budgets.
# Not here: whether the learner learns (docs/results.md) or its gradients (tests/test_learn.c).
# Entry points: run by tests/run.sh.
. tests/cli_lib.sh
A=tests/data/onnx/alexnet.onnx
S=tests/data/onnx/squeezenet1_1.onnx
# --mem: GPU-only fits the uncapped GPU and not half of it; sizes in bytes, with units or in percent
expect_rc 0 $HSDAG place $A --method gpu-only --json
expect_grep '"feasible": true' "$TMP/out"
expect_rc 0 $HSDAG place $A --method gpu-only --mem GPU=50% --json
expect_grep '"feasible": false' "$TMP/out"
expect_rc 0 $HSDAG place $A --method gpu-only --mem GPU=16G --json
expect_grep '"feasible": true' "$TMP/out"
expect_rc 0 $HSDAG place $A --method heft --mem GPU=50% --json
expect_grep '"feasible": true' "$TMP/out"
for bad_mem in GPU nope=1G GPU=-1 GPU=5X GPU=0%; do
    expect_rc 2 $HSDAG place $A --method heft --mem "$bad_mem"
    one_line "$TMP/err"
done
# the chain-windows bound proves local search's SqueezeNet placement on cpu-igpu (concurrent) optimal: the hard
# suite's igpu-squeezenet1_1 entry says "bound:windows"
expect_rc 0 $HSDAG place $S --devices cpu-igpu --semantics concurrent --method local-search --seed 0 --json
expect_grep '"latency_ms": 1.33011338' "$TMP/out"
expect_grep '"lower_bound_ms": 1.33011338.*"lower_bound_rule": "windows", "gap": [0-9][0-9.e-]*,' "$TMP/out"
expect_grep '^igpu-squeezenet1_1 *1.33011339 *bound:windows ' bench/hard.suite
# black-box baselines: exactly --budget measurements, deterministic per seed; noise changes what they see
for m in bb-random bb-local; do
    expect_rc 0 $HSDAG place $S --method $m --budget 60 --seed 3 --json --out "$TMP/$m.a.json"
    expect_grep '"placements_evaluated": 60' "$TMP/out"
    expect_rc 0 $HSDAG place $S --method $m --budget 60 --seed 3 --json --out "$TMP/$m.b.json"
    cmp -s "$TMP/$m.a.json" "$TMP/$m.b.json" && ok || bad "$m: same seed gave another placement"
    expect_rc 0 $HSDAG place $S --method $m --budget 60 --seed 3 --noise 0.3 --json
    expect_grep '"note": "60 measurements.*noisy' "$TMP/out"
done
expect_rc 2 $HSDAG place $S --method bb-random --budget 0
expect_rc 2 $HSDAG place $S --method bb-random --noise -1
# the learned methods: the issue's JSON keys, their budget, and the note saying what each part did
expect_rc 0 $HSDAG place $A --method hsdag-learned --budget 40 --json
for k in latency_ms best_episode placements_evaluated wall_s; do expect_grep "\"$k\"" "$TMP/out"; done
expect_grep '"placements_evaluated": 40' "$TMP/out"
expect_rc 0 $HSDAG place $A --method hsdag --policy none --budget 40 --max-evals 200 --mem GPU=50% --json
expect_grep '"feasible": true' "$TMP/out"
expect_grep 'warm start .*learned 40 placements.*local-search from its start.*from the best.*policy ILS' "$TMP/out"
# --max-evals is the whole run's budget: warm start, learning and every local search
n=$(sed -n 's/.*"placements_evaluated": \([0-9]*\).*/\1/p' "$TMP/out")
[ "${n:-999}" -le 200 ] && ok || bad "hsdag --max-evals 200 made ${n:-no} measurements"
# under a memory cap its warm start holds the MILP on an iteration budget: SqueezeNet's proven optimum
expect_rc 0 $HSDAG place $S --method hsdag --policy none --budget 20 --max-evals 200 --mem GPU=50% --json
expect_grep '"latency_ms": 1\.04461' "$TMP/out"
expect_grep 'warm start ilp' "$TMP/out"
# the iteration budget replaces the clock (sequential model only)
expect_rc 0 $HSDAG place $S --method ilp --mem GPU=50% --ilp-iterations 20000 --json
expect_grep '"note": "proven optimal' "$TMP/out"
expect_rc 0 $HSDAG place $S --method ilp --mem GPU=50% --ilp-iterations 50 --json
expect_grep 'within 50 simplex iterations|iteration limit' "$TMP/out"
expect_rc 2 $HSDAG place tests/data/tarnawski/latency-inputs/LayerGraphs/bert24_inference.json --method ilp --ilp-iterations 50
expect_grep "sequential model only" "$TMP/err"
expect_rc 2 $HSDAG place $S --method heft --ilp-iterations 50
expect_rc 0 $HSDAG place $A --method hsdag-paper --budget 40 --json
expect_grep 'paper REINFORCE' "$TMP/out"
# train: the paper's algorithm, noise, a warm start; same seed and noise, same curve
expect_rc 0 $HSDAG train $S --paper --episodes 2 --steps 5 --out-dir "$TMP/p" --json
expect_grep '"mode": "paper"' "$TMP/out"
expect_rc 0 $HSDAG train $S --budget 40 --noise 0.02 --out-dir "$TMP/n1" --json
expect_grep '"placements_evaluated": 40' "$TMP/out"
expect_rc 0 $HSDAG train $S --budget 40 --noise 0.02 --out-dir "$TMP/n2"
cmp -s "$TMP/n1/curve.csv" "$TMP/n2/curve.csv" && ok || bad "noisy training is not reproducible"
expect_rc 0 $HSDAG train $S --budget 40 --out-dir "$TMP/n3"
cmp -s "$TMP/n1/curve.csv" "$TMP/n3/curve.csv" && bad "noise changed nothing" || ok
expect_rc 0 $HSDAG train $A --budget 40 --mem GPU=50% --warm-start auto --out-dir "$TMP/w" --json
expect_grep '"warm_start": "' "$TMP/out"
# memory masks: SqueezeNet's largest op working set (6.3 MB) exceeds half its GPU (5.6 MB); the masks keep
# room only for working sets a device can hold, so the learner still uses the GPU (it sampled CPU-only,
# 1.4583 ms, 20 times of 20 when every device kept room for the graph's largest); with 12 pooled decisions
# (--min-clusters 0) it finds a faster placement within those 20, where 55 per-group ones need more
expect_rc 0 $HSDAG train $S --budget 20 --mem GPU=50% --min-clusters 0 --out-dir "$TMP/sq" --json
expect_grep '"feasible": true' "$TMP/out"
python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['latency_ms'] < 1.458 else 1)" "$TMP/out" \
    && ok || bad "the learner never left the CPU under SqueezeNet's 50% GPU cap"
expect_rc 2 $HSDAG train $S --budget 40 --episodes 3
expect_rc 2 $HSDAG train $S --baseline nope
# compare --suite: every instance, then the summary against the best known; bad suites exit 2
expect_rc 0 $HSDAG compare --suite tests/data/suite/tiny.suite --methods gpu-only,heft,bb-local --budget 30
expect_grep '== alex-mem50: .*best known 2.413 ms \(best:local-search\)' "$TMP/out"
expect_grep '== summary: .*2 instances' "$TMP/out"
expect_grep 'heft +[+-][0-9.]+%' "$TMP/out"
expect_rc 0 $HSDAG compare --suite tests/data/suite/tiny.suite --methods heft --json
expect_grep '"instances": \[' "$TMP/out"
expect_grep '"best_known_ms": 2.413' "$TMP/out"
printf 'a 1 x %s\na 2 y %s\n' $A $A > "$TMP/dup.suite"
expect_rc 2 $HSDAG compare --suite "$TMP/dup.suite" --methods heft
expect_grep 'duplicate name' "$TMP/err"
one_line "$TMP/err"
printf 'a zz x %s\n' $A > "$TMP/bad.suite"
expect_rc 2 $HSDAG compare --suite "$TMP/bad.suite" --methods heft
one_line "$TMP/err"
expect_rc 2 $HSDAG compare --suite "$TMP/none.suite"
# --suite NAME is bench/NAME.suite of the binary's tree, and its relative models are read from there: any
# working directory
abs=$(cd "$(dirname "$HSDAG")" && pwd)/$(basename "$HSDAG")
n_inst=$(grep -v '^#' bench/hard.suite | grep -c .)
if (cd "$TMP" && "$abs" compare --suite hard --methods heft --json --quiet > "$TMP/suite.json" 2> "$TMP/err"); then
    [ "$(grep -c '"best_known_ms"' "$TMP/suite.json")" -eq "$n_inst" ] && ok ||
        bad "--suite hard from $TMP: not $n_inst instances"
else
    bad "--suite hard from $TMP failed: $(cat "$TMP/err")"
fi
expect_rc 2 $HSDAG compare --suite tests/data/suite/tiny.suite $A
# the option table's rules for the learner's options: a companion without its option, contradicting pairs,
# --noise on a real measurement, an unknown warm start; --suite with a MODEL or --mem; --save-dir per instance
expect_rc 2 $HSDAG train $S --polish-evals 10 --out-dir "$TMP/c1"
expect_grep 'polish-evals applies with --polish only' "$TMP/err"
expect_rc 2 $HSDAG train $S --imitate-steps 3 --out-dir "$TMP/c1"
expect_rc 2 $HSDAG train $S --fixed-clusters --dynamic-clusters --out-dir "$TMP/c1"
expect_grep 'contradict each other' "$TMP/err"
expect_rc 2 $HSDAG train $S --noise 0.1 --measure-cmd true --out-dir "$TMP/c1"
expect_rc 2 $HSDAG train $S --warm-start nope --out-dir "$TMP/c1"
one_line "$TMP/err"
[ -e "$TMP/c1" ] && bad "a refused train created its run directory" || ok
expect_rc 2 $HSDAG compare --suite tests/data/suite/tiny.suite --mem GPU=50%
printf 'a 1 x %s --semantics nope\n' $A > "$TMP/sem.suite"
expect_rc 2 $HSDAG compare --suite "$TMP/sem.suite" --methods heft
one_line "$TMP/err"; expect_grep "sem.suite:1: a: --semantics 'nope' is not auto, " "$TMP/err"
printf 'a 1 x %s --costs nope\n' $A > "$TMP/costs.suite"
expect_rc 2 $HSDAG compare --suite "$TMP/costs.suite" --methods heft
one_line "$TMP/err"
expect_rc 0 $HSDAG train --help
expect_grep '^ +bb-local ' "$TMP/out"
expect_rc 2 $HSDAG compare
expect_rc 0 $HSDAG compare --suite tests/data/suite/tiny.suite --methods heft --save-dir "$TMP/sv"
[ -s "$TMP/sv/alex-mem50/heft.json" ] && ok || bad "compare --suite --save-dir: no DIR/INSTANCE/METHOD.json"
# --budget and --noise reach the learned methods of place and compare; --paper's defaults are the paper's
expect_rc 0 $HSDAG compare $S --methods bb-random --budget 25 --json
expect_grep '"placements_evaluated": 25' "$TMP/out"
expect_rc 0 $HSDAG train $S --paper --episodes 1 --out-dir "$TMP/pp" --json
expect_grep '"steps": 20, "samples": 1' "$TMP/out"
finish
