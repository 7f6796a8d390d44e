# place.sh - CLI tests of 'hsdag place' and 'hsdag compare' on bundled models (ONNX and Tarnawski JSON).
# Not here: the placers' exactness (tests/test_place.c checks min cut = MILP = brute force).
# Entry points: run by tests/run.sh; uses tests/cli_lib.sh.
. tests/cli_lib.sh
INC=tests/data/onnx/inception_v3.onnx
SQZ=tests/data/onnx/squeezenet1_1.onnx
TW=tests/data/tarnawski/latency-inputs/OperatorGraphs/bert_l-3_inference.json
num() { grep -o "\"$1\": [-0-9.eE+]*" "$2" | head -n 1 | sed 's/.*: //'; }
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-9 * (a < 0 ? -a : a) + 1e-12) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a <= b * (1 + 1e-9)) }'; }

# help and method list
expect_rc 0 $HSDAG place --help
for m in random round-robin m-topo m-etf m-sct heft metis greedy-tarnawski mincut ilp local-search; do
    expect_grep "^ +$m +\[mem" "$TMP/out"
done
expect_grep "ignores" "$TMP/out"
expect_rc 0 $HSDAG place --list
n=$(wc -l < "$TMP/out"); [ "$n" -eq 16 ] && ok || bad "--list printed $n methods"
expect_rc 0 $HSDAG compare --help

# min cut is exact under sequential semantics on two devices: latency == bound, gap 0, feasible
expect_rc 0 $HSDAG place $INC --devices cpu-gpu --method mincut --json --out "$TMP/p.json" \
    --affinity "$TMP/aff.json" --split "$TMP/split.json" --dot "$TMP/p.dot"
cp "$TMP/out" "$TMP/mincut.json"
expect_grep '"method": "mincut"' "$TMP/mincut.json"
expect_grep '"feasible": true' "$TMP/mincut.json"
expect_grep '"gap": 0[,}]' "$TMP/mincut.json"
lat=$(num latency_ms "$TMP/mincut.json"); lb=$(num lower_bound_ms "$TMP/mincut.json")
same "$lat" "$lb" && ok || bad "mincut latency $lat != bound $lb"
expect_grep '"optimal": true' "$TMP/mincut.json"
# the written placement lists all 316 nodes; the simulator agrees with the latency place reported
expect_grep '"format": "hsdag-placement"' "$TMP/p.json"
n=$(grep -o '": "\(CPU\|GPU\)"' "$TMP/p.json" | wc -l); [ "$n" -eq 316 ] && ok || bad "placement has $n nodes"
n=$(grep -o '": "\(CPU\|GPU\)"' "$TMP/aff.json" | wc -l); [ "$n" -eq 316 ] && ok || bad "affinity has $n nodes"
expect_grep '"fpgas"' "$TMP/split.json"
expect_grep "^digraph " "$TMP/p.dot"
n=$(grep -c "fillcolor=\"#8dd3c7\"\|fillcolor=\"#ffffb3\"" "$TMP/p.dot"); [ "$n" -eq 318 ] && ok || bad "dot has $n device-filled nodes (316 + 2 legend)"
expect_rc 0 $HSDAG simulate $INC --devices cpu-gpu --placement "$TMP/p.json" --json
same "$(num latency_ms "$TMP/out")" "$lat" && ok || bad "simulate disagrees with place: $(num latency_ms "$TMP/out") vs $lat"
# the affinity map reads back to the same latency
expect_rc 0 $HSDAG simulate $INC --devices cpu-gpu --placement "$TMP/aff.json" --json
same "$(num latency_ms "$TMP/out")" "$lat" && ok || bad "affinity map simulates differently"

# ilp agrees with the min cut; no heuristic beats it
expect_rc 0 $HSDAG place $INC --method ilp --time-limit 20 --json
same "$(num latency_ms "$TMP/out")" "$lat" && ok || bad "ilp $(num latency_ms "$TMP/out") != mincut $lat"
for m in heft m-etf greedy-tarnawski local-search cpu-only gpu-only; do
    ev=; [ $m = local-search ] && ev="--max-evals 2000"
    expect_rc 0 $HSDAG place $INC --method $m --json $ev
    le "$lat" "$(num latency_ms "$TMP/out")" && ok || bad "$m beats the optimum: $(num latency_ms "$TMP/out") < $lat"
done

# determinism: same seed, same file; local search from a start never ends worse than the start
expect_rc 0 $HSDAG place $SQZ --devices cpu-4gpu --method random --seed 3 --out "$TMP/r1.json"
expect_rc 0 $HSDAG place $SQZ --devices cpu-4gpu --method random --seed 3 --out "$TMP/r2.json"
cmp -s "$TMP/r1.json" "$TMP/r2.json" && ok || bad "random --seed 3 differs between runs"
expect_rc 0 $HSDAG place $SQZ --devices cpu-4gpu --method random --seed 4 --out "$TMP/r3.json"
cmp -s "$TMP/r1.json" "$TMP/r3.json" && bad "random ignores --seed" || ok
expect_rc 0 $HSDAG place $SQZ --devices cpu-4gpu --method round-robin --json --out "$TMP/rr.json"
rr=$(num latency_ms "$TMP/out")
expect_rc 0 $HSDAG place $SQZ --devices cpu-4gpu --method local-search --init "$TMP/rr.json" --max-evals 500 --json \
    --out "$TMP/ls1.json"
le "$(num latency_ms "$TMP/out")" "$rr" && ok || bad "local search ended worse than its start"
expect_rc 0 $HSDAG place $SQZ --devices cpu-4gpu --method local-search --init "$TMP/rr.json" --max-evals 500 \
    --out "$TMP/ls2.json"
cmp -s "$TMP/ls1.json" "$TMP/ls2.json" && ok || bad "local-search not deterministic"

# Tarnawski workload: its own devices and semantics; the greedy respects the memory cap, writes a split
expect_rc 0 $HSDAG place $TW --method greedy-tarnawski --json --split "$TMP/tw.json"
expect_grep '"semantics": "tarnawski"' "$TMP/out"
expect_grep '"feasible": true' "$TMP/out"
expect_grep '"cpus"' "$TMP/tw.json"
expect_rc 0 $HSDAG simulate $TW --placement "$TMP/tw.json" --json
expect_grep '"feasible": true' "$TMP/out"

# compare: one row per method, the bound is the min cut, nothing beats the bound
expect_rc 0 $HSDAG compare $SQZ --methods cpu-only,gpu-only,heft,mincut,ilp,metis --json
cp "$TMP/out" "$TMP/cmp.json"
n=$(grep -c '"method":' "$TMP/cmp.json"); [ "$n" -eq 6 ] && ok || bad "compare printed $n rows"
lb=$(num lower_bound_ms "$TMP/cmp.json")
grep -o '"latency_ms": [-0-9.eE+]*' "$TMP/cmp.json" | sed 's/.*: //' > "$TMP/lats"
while read -r l; do le "$lb" "$l" && ok || bad "compare: $l below the bound $lb"; done < "$TMP/lats"
ml=$(grep '"method": "mincut"' "$TMP/cmp.json" | grep -o '"latency_ms": [-0-9.eE+]*' | sed 's/.*: //')
same "$ml" "$lb" && ok || bad "compare: mincut $ml != bound $lb"
expect_rc 0 $HSDAG compare $SQZ --devices cpu-4gpu --methods heft,mincut
expect_grep '^mincut .* n/a .*two devices' "$TMP/out"
expect_grep '^heft ' "$TMP/out"
expect_rc 0 $HSDAG compare $SQZ --max-evals 300 --time-limit 2
for m in cpu-only gpu-only random round-robin m-topo m-etf m-sct heft metis greedy-tarnawski mincut ilp local-search; do
    expect_grep "^$m " "$TMP/out"
done

# bad input: exit 2, one line
expect_rc 2 $HSDAG place $INC --method no-such-method
one_line "$TMP/err"; expect_grep "unknown method 'no-such-method'" "$TMP/err"
expect_rc 2 $HSDAG place --method heft
one_line "$TMP/err"
expect_rc 2 $HSDAG place $INC
one_line "$TMP/err"
expect_rc 2 $HSDAG place $INC --method random --seed -3
one_line "$TMP/err"
expect_rc 2 $HSDAG place $INC --method ilp --time-limit abc
one_line "$TMP/err"
# a method option no method to run reads is refused before any work, naming the methods that read it
expect_rc 2 $HSDAG place $INC --method heft --max-evals 100
one_line "$TMP/err"; expect_grep "max-evals does not apply to --method 'heft': it is read by local-search, hsdag only" "$TMP/err"
expect_rc 2 $HSDAG place $INC --method heft --budget 10
expect_rc 2 $HSDAG place $INC --method mincut --time-limit 5
expect_rc 2 $HSDAG compare $INC --methods heft,cpu-only --noise 0.1
expect_grep "it is read by bb-random, bb-local, hsdag, hsdag-learned, hsdag-paper only" "$TMP/err"
expect_rc 0 $HSDAG compare $SQZ --methods heft,bb-random --budget 5
expect_rc 2 $HSDAG place $INC --method mincut --devices cpu-4gpu
one_line "$TMP/err"; expect_grep "two devices" "$TMP/err"
expect_rc 2 $HSDAG place "$TMP/missing.onnx" --method heft
one_line "$TMP/err"
echo '{"placement": {"nope": "GPU"}}' > "$TMP/badinit.json"
expect_rc 2 $HSDAG place $INC --method local-search --init "$TMP/badinit.json"
one_line "$TMP/err"
expect_rc 2 $HSDAG compare $INC --methods heft,,mincut
one_line "$TMP/err"
expect_rc 2 $HSDAG compare $INC --methods heft,bogus
one_line "$TMP/err"
expect_rc 2 $HSDAG compare
one_line "$TMP/err"
finish
