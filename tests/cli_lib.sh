# lib.sh - helpers sourced by the CLI test scripts tests/cli/*.sh (not a test itself).
# Not here: the tests; each script sources this, runs $HSDAG and ends with `finish`.
# Entry points: expect_rc RC CMD..., expect_grep PATTERN FILE, one_line FILE, base_cmd CMD, finish.
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
# base_cmd CMD: a quick valid invocation of command CMD ("place", "cluster run", ...), its words first, for
# the scripts that walk every command (walk.sh, outputs.sh); calibrate reads $TMP/a.csv (base_profile).
BASE_MODEL=tests/data/onnx/alexnet.onnx
base_cmd() {
    A=$BASE_MODEL
    case "$1" in
    info) echo "info $A" ;;
    convert) echo "convert $A $TMP/conv.json" ;;
    simulate) echo "simulate $A --placement cpu-only" ;;
    place) echo "place $A --method heft" ;;
    bound) echo "bound $A" ;;
    compare) echo "compare $A --methods cpu-only,heft" ;;
    train) echo "train $A --episodes 1 --steps 2 --out-dir $(mktemp -d -u "$TMP/run.XXXXXX")" ;;
    "train --graphs") echo "train --graphs $A --method placeto --units 4 --rounds 1 --out-dir $(mktemp -d -u "$TMP/prun.XXXXXX")" ;;
    profile) echo "profile $A --runs 1 --warmup 0" ;;
    calibrate) echo "calibrate $TMP/a.csv --model $A" ;;
    "gen transformer") echo "gen transformer --layers 1 --d-model 64 --heads 4 --seq 8 --vocab 100" ;;
    "gen random-dag") echo "gen random-dag --nodes 50" ;;
    "cluster run") echo "cluster run --policy para-max --horizon 20000" ;;
    "cluster compare") echo "cluster compare --seeds 0 --policies para-max --betas A --horizon 20000" ;;
    "cluster info") echo "cluster info --horizon 20000" ;;
    "cluster train") echo "cluster train --batch-episodes 1 --epochs 1 --hidden 16 --eval-episodes 1 --iterations 1 --horizon 20000 --out-dir $(mktemp -d -u "$TMP/crun.XXXXXX")" ;;
    *) echo "" ;;
    esac
}
# base_profile: $TMP/a.csv, a per-op profile of $BASE_MODEL (every op 0.1 ms) for calibrate
base_profile() {
    "$HSDAG" convert $BASE_MODEL "$TMP/a.json" && python3 -c '
import json, sys
print("node,device,ms")
for n in json.load(open(sys.argv[1]))["nodes"]:
    print("%s,CPU,0.1" % n["name"])' "$TMP/a.json" > "$TMP/a.csv"
}
