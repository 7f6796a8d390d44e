# why.sh - one check per case listed under "Why" in issue 14 (the CLI vocabulary), each of which failed
# before the option table: output names, seed defaults, JSON key names, range-error wording, exit-status
# slips, outputs that lost work or clobbered files, the small gaps and the lower bound simulate printed.
# Not here: the general walks (walk.sh, outputs.sh, schema.sh) or the drawing (dot.sh).
# Entry points: run by tests/run.sh.
. tests/cli_lib.sh
A=tests/data/onnx/alexnet.onnx
R=tests/data/onnx/resnet50.onnx
num() { sed -n "s/.*\"$1\": \([-0-9.eE+]*\).*/\1/p" "$2" | head -n 1; }

# 1. outputs are named the same in every command: simulate takes --out, --affinity, --split and --dot;
#    compare can save every placement; --out is a file and --out-dir a run directory everywhere
expect_rc 0 $HSDAG simulate $A --placement cpu-only --out "$TMP/s.json" --affinity "$TMP/s.aff" \
    --split "$TMP/s.split" --dot "$TMP/s.dot"
for f in s.json s.aff s.split s.dot; do [ -s "$TMP/$f" ] && ok || bad "simulate wrote no $f"; done
expect_rc 0 $HSDAG compare $A --methods cpu-only,heft --save-dir "$TMP/saved"
for f in cpu-only.json heft.json heft.affinity.json heft.split.json heft.dot heft.trace.json; do
    [ -s "$TMP/saved/$f" ] && ok || bad "compare --save-dir wrote no $f"
done
expect_rc 0 $HSDAG train $A --episodes 1 --steps 2 --out-dir "$TMP/run" --out "$TMP/best.json"
expect_grep '"format": "hsdag-placement"' "$TMP/best.json"
[ -s "$TMP/run/checkpoint.bin" ] && ok || bad "train --out-dir wrote no checkpoint"
expect_rc 0 $HSDAG cluster compare --seeds 0 --policies para-max --betas A --horizon 20000 --markdown "$TMP/t.md"
expect_grep '^\| policy \|' "$TMP/t.md"

# 2. one seed default, documented the same way by every command; place no longer claims it only affects
#    random, metis and local-search
for c in place compare train "cluster run" "cluster train"; do
    # shellcheck disable=SC2086
    $HSDAG $c --help | awk '/^  --seed/ { p = 1 } p && /^  --/ && !/^  --seed/ { exit } p' > "$TMP/seed_$(echo $c | tr ' ' _)"
    expect_grep "\(default 0\)" "$TMP/seed_$(echo $c | tr ' ' _)"
    cmp -s "$TMP/seed_place" "$TMP/seed_$(echo $c | tr ' ' _)" && ok || bad "--seed reads differently in $c"
done
if $HSDAG place --help | grep -q "seed of random, metis and local-search"; then bad "place --help: old seed text"; else ok; fi

# 3. one JSON key per quantity: the bound's rule, time and work
expect_rc 0 $HSDAG bound $A --json; expect_grep '"lower_bound_rule": ' "$TMP/out"
expect_rc 0 $HSDAG compare $A --methods heft --json; expect_grep '"lower_bound_rule": ' "$TMP/out"
expect_rc 0 $HSDAG simulate $A --placement cpu-only --json; expect_grep '"lower_bound_rule": ' "$TMP/out"
for c in "place $A --method local-search --max-evals 50" "train $A --episodes 1 --steps 2 --out-dir $TMP/r3"; do
    # shellcheck disable=SC2086
    expect_rc 0 $HSDAG $c --json
    expect_grep '"wall_s": ' "$TMP/out"; expect_grep '"placements_evaluated": [1-9]' "$TMP/out"
    grep -q '"place_s"\|"train_s"\|"evals"\|"bound_rule"\|"rule"' "$TMP/out" && bad "$c: an old key" || ok
done

# 4. range errors have one wording naming the option, the value and the range
expect_rc 2 $HSDAG train $A --episodes 1e9
expect_grep "^hsdag train: --episodes '1e9' is not an integer in \[1, 10000000\]" "$TMP/err"
expect_rc 2 $HSDAG place $A --method heft --seed -3
expect_grep "^hsdag place: --seed '-3' is not an integer in \[0, 2147483647\]" "$TMP/err"
expect_rc 2 $HSDAG simulate $A --placement cpu-only --repeat 0
expect_grep "^hsdag simulate: --repeat '0' is not an integer in \[1, 1000000000\]" "$TMP/err"
expect_rc 2 $HSDAG cluster train --out-dir "$TMP/x" --lr 50
expect_grep "^hsdag cluster train: --lr '50' is not a number in \[1e-09, 10\]" "$TMP/err"

# 5. exit-status slips
expect_rc 0 $HSDAG train -h
expect_rc 2 $HSDAG train $A --episodes 0 --out-dir "$TMP/e0"
expect_grep "^hsdag train: --episodes '0' is not an integer in \[1, " "$TMP/err"
expect_rc 2 $HSDAG cluster train --iterations 0 --out-dir "$TMP/i0"
expect_grep "^hsdag cluster train: --iterations '0' is not an integer in \[1, " "$TMP/err"
[ ! -e "$TMP/i0" ] && ok || bad "cluster train --iterations 0 left a directory"
expect_rc 2 $HSDAG place $A --method heft --costs file
one_line "$TMP/err"; expect_grep "costs file does not apply: the graph has no measured op costs" "$TMP/err"
expect_rc 2 $HSDAG simulate $A --placement cpu-only --costs file
expect_rc 2 $HSDAG bound $A --costs file

# 6. outputs that lost work or clobbered files: refused before the work with exit 2, no temp file named
for c in "place $A --method heft --out" "place $A --method heft --trace" "place $A --method heft --affinity" \
         "convert $A" "cluster compare --seeds 0 --policies para-max --betas A --horizon 20000 --markdown"; do
    # shellcheck disable=SC2086
    expect_rc 2 $HSDAG $c /no/such/dir/p.json
    one_line "$TMP/err"; expect_grep "directory /no/such/dir does not exist" "$TMP/err"
    grep -q 'tmp[0-9]' "$TMP/err" && bad "a temp file is named: $(cat "$TMP/err")" || ok
done
expect_rc 2 $HSDAG place $A --method heft --out /tmp
expect_grep "/tmp: is a directory" "$TMP/err"
echo keep > "$TMP/ro.json"; chmod 0444 "$TMP/ro.json"
expect_rc 2 $HSDAG place $A --method heft --out "$TMP/ro.json"
[ "$(cat "$TMP/ro.json")" = keep ] && [ "$(stat -c %a "$TMP/ro.json")" = 444 ] && ok || bad "read-only file replaced"
expect_rc 0 $HSDAG train $A --episodes 1 --steps 2 --out-dir "$TMP/first"
cp "$TMP/first/checkpoint.bin" "$TMP/ck"
expect_rc 2 $HSDAG train $A --episodes 1 --steps 2 --out-dir "$TMP/first"
cmp -s "$TMP/ck" "$TMP/first/checkpoint.bin" && ok || bad "train overwrote an earlier run's checkpoint"

# 7. small gaps: --profile on compare and train; --semantics auto in every command that takes it; every
#    preset in --help; simulate's bound is the one place, compare and bound print
printf 'node,device,ms\n' > "$TMP/p.csv"
expect_rc 0 $HSDAG compare $A --methods heft --profile "$TMP/p.csv"
expect_rc 0 $HSDAG train $A --episodes 1 --steps 2 --out-dir "$TMP/prof" --profile "$TMP/p.csv"
for c in simulate place bound compare train; do
    $HSDAG $c --help > "$TMP/h"
    expect_grep "auto \| sequential \| concurrent \| tarnawski" "$TMP/h"
    for p in cpu-gpu cpu-igpu cpu-4gpu tarnawski; do expect_grep "^ +$p +" "$TMP/h"; done
done
expect_rc 0 $HSDAG bound $R --json; b=$(num lower_bound_ms "$TMP/out")
expect_grep '"lower_bound_rule": "exact"' "$TMP/out"
expect_rc 0 $HSDAG simulate $R --placement cpu-only --json
[ "$(num lower_bound_ms "$TMP/out")" = "$b" ] && ok || bad "simulate's bound $(num lower_bound_ms "$TMP/out") != bound's $b"
expect_grep '"lower_bound_rule": "exact"' "$TMP/out"
expect_rc 0 $HSDAG place $R --method heft --json
[ "$(num lower_bound_ms "$TMP/out")" = "$b" ] && ok || bad "place's bound differs"
expect_rc 0 $HSDAG compare $R --methods heft --json
[ "$(num lower_bound_ms "$TMP/out")" = "$b" ] && ok || bad "compare's bound differs"
expect_rc 0 $HSDAG simulate $R --placement cpu-only
expect_grep "lower bound $(awk -v b="$b" 'BEGIN { printf "%.6f", b }') ms, exact" "$TMP/out"
finish
