# schema.sh - every command's --json output against the key tables of docs/formats.md ("Result JSON"):
# the schema field, every documented key present, no undocumented key, each value's type, one type per key
# across tables (tests/schema_check.py). Every command that takes --json (from `hsdag help --table`) runs.
# Not here: the values themselves (the command's own test). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
A=tests/data/onnx/alexnet.onnx
TW=tests/data/tarnawski/latency-inputs/LayerGraphs/resnet50_inference.json
TS=tests/data/tarnawski/human-experts/resnet50_inference_expert.json
tiny_cl="--horizon 20000"
n=0
run_json() { # name, then the command line
    name=$1; shift
    n=$((n + 1))
    expect_rc 0 "$HSDAG" "$@" --json
    cp "$TMP/out" "$TMP/doc_${n}_$name.json"
    echo "$name" >> "$TMP/covered"
}
run_json info info $A
run_json info info tests/data/pacml/resnet18.txt --mirror
run_json simulate simulate $A --placement cpu-only --repeat 5
run_json simulate simulate $TW --placement $TS
run_json place place $A --method heft
run_json place place $A --method mincut --devices cpu-gpu
run_json place place $TW --method greedy-tarnawski
run_json bound bound $A
run_json bound bound $A --devices cpu-4gpu
run_json compare compare $A --methods cpu-only,heft,mincut
run_json compare compare $A --devices cpu-4gpu --methods heft,mincut
run_json compare compare --suite tests/data/suite/tiny.suite --methods heft,hsdag-learned --budget 20
run_json train train $A --episodes 1 --steps 2 --out-dir "$TMP/t1"
run_json train train $A --budget 20 --warm-start auto --noise 0.1 --mem GPU=50% --out-dir "$TMP/t3"
run_json train train $A --episodes 1 --steps 2 --out-dir "$TMP/t2" --polish --out "$TMP/t2.json"
# calibrate on a profile written here (every op 0.1 ms), profile itself where ONNX Runtime runs
base_profile
run_json calibrate calibrate "$TMP/a.csv" --model $A
run_json calibrate calibrate "$TMP/a.csv" --model $A --devices cpu-gpu
if command -v node >/dev/null 2>&1 && node scripts/ort-profile.js --probe >/dev/null 2>&1; then
    run_json profile profile $A --runs 1 --warmup 0 --check-shapes
else
    echo "schema.sh: profile not run: no ONNX Runtime (scripts/install-deps installs it)" >&2
    echo profile >> "$TMP/covered"
fi
run_json "cluster run" cluster run --policy para-max $tiny_cl
run_json "cluster compare" cluster compare --seeds 0,1 --policies para-max,fixed:4 --betas AD $tiny_cl
run_json "cluster info" cluster info
run_json "cluster train" cluster train --batch-episodes 1 --epochs 1 --hidden 16 --eval-episodes 1 --iterations 1 \
    $tiny_cl --out-dir "$TMP/ct"
# every command that takes --json ran
expect_rc 0 "$HSDAG" help --table
for c in $(awk -F'\t' '$1 == "json" { gsub(/ /, "_", $7); gsub(/,/, " ", $7); print $7 }' "$TMP/out"); do
    c=$(echo "$c" | tr _ ' ')
    grep -qx "$c" "$TMP/covered" && ok || bad "schema.sh does not run '$c --json'"
done
if python3 tests/schema_check.py docs/formats.md "$TMP"/doc_*.json > "$TMP/check" 2>&1; then ok
else bad "schema check: $(cat "$TMP/check")"; fi
tail -n 1 "$TMP/check" >&2
# the checker can fail: an undocumented key and a missing one are reported
sed 's/"latency_ms"/"latency_msec"/' "$TMP/doc_5_place.json" > "$TMP/broken.json"
if python3 tests/schema_check.py docs/formats.md "$TMP/broken.json" > "$TMP/check" 2>&1; then bad "checker accepted a renamed key"
else expect_grep "latency_msec' is not documented" "$TMP/check"; expect_grep "'latency_ms' is missing" "$TMP/check"; fi
finish
