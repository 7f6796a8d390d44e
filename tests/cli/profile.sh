# profile.sh - CLI checks of 'hsdag profile' and 'hsdag calibrate': one-line errors (missing runtime, a model ORT
# cannot run, bad options), then, where ONNX Runtime is installed (scripts/install-deps), a real profile of two
# small bundled models with the shape check, --profile simulation, a calibration and scoring a fitted device.
# Not here: the library's parsing and fitting in depth (tests/test_calibrate.c). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
SQ=tests/data/onnx/squeezenet1_1.onnx
MB=tests/data/onnx-export/mobilenet_v3_small.onnx
SKIPPED=0

# help lists every option
expect_rc 0 $HSDAG profile --help
for o in --csv --runs --warmup --threads --opt --clock --weights --device --check-shapes --seed --json; do expect_grep "$o" "$TMP/out"; done
expect_rc 0 $HSDAG calibrate --help
for o in --model --device-set --name --base --devices --device --json; do expect_grep "$o" "$TMP/out"; done

# bad input: exit 2 and one line on stderr, whether or not the runtime is there
expect_rc 2 $HSDAG profile
one_line "$TMP/err"
expect_rc 2 $HSDAG profile $SQ --runs 0
one_line "$TMP/err"
expect_rc 2 $HSDAG profile $SQ --opt fastest
one_line "$TMP/err"
expect_rc 2 $HSDAG profile tests/data/onnx/no-such-model.onnx
one_line "$TMP/err"
expect_rc 2 $HSDAG profile tests/data/tarnawski/latency-inputs/LayerGraphs/resnet50_inference.json
expect_grep "not an ONNX model" "$TMP/err"
one_line "$TMP/err"
# the runtime missing: no node executable, or no onnxruntime-node where the bridge is told to look
HSDAG_NODE=/nonexistent/node expect_rc 2 $HSDAG profile $SQ
expect_grep "Node.js missing" "$TMP/err"
one_line "$TMP/err"
if command -v node >/dev/null 2>&1; then
    HSDAG_ORT_MODULES="$TMP/nothing" expect_rc 2 $HSDAG profile $SQ
    expect_grep "ONNX Runtime is not installed" "$TMP/err"
    one_line "$TMP/err"
fi
expect_rc 2 $HSDAG calibrate
one_line "$TMP/err"
expect_rc 2 $HSDAG calibrate "$TMP/a.csv"
expect_grep "1 profiles but 0 --model" "$TMP/err"
printf 'node,device,ms\nno_such_node,CPU,1\n' > "$TMP/bad.csv"
expect_rc 2 $HSDAG calibrate "$TMP/bad.csv" --model $SQ
expect_grep "no_such_node" "$TMP/err"
one_line "$TMP/err"

if ! command -v node >/dev/null 2>&1 || ! node scripts/ort-profile.js --probe >"$TMP/probe" 2>&1; then
    echo "profile.sh: SKIP the ONNX Runtime checks: $(tail -n 1 "$TMP/probe" 2>/dev/null || echo 'node not found') (scripts/install-deps installs it)"
    SKIPPED=21
else
    echo "profile.sh: $(cat "$TMP/probe")"
    # a model ORT rejects: exit 2, one line naming the file
    expect_rc 2 $HSDAG profile tests/data/onnx/bad/ort_unknown_op.onnx
    expect_grep "ort_unknown_op.onnx: ONNX Runtime cannot run the model" "$TMP/err"
    one_line "$TMP/err"
    # two small models: profile with the shape check (every inferred shape equals ORT's)
    for m in $SQ $MB; do
        b=$(basename $m .onnx)
        expect_rc 0 $HSDAG profile $m --runs 3 --warmup 1 --check-shapes --csv "$TMP/$b.csv" --json
        expect_grep '"shape_diffs": 0,' "$TMP/out"
        expect_grep '"latency_ms": [0-9]' "$TMP/out"
        # one CSV row per node, plus the header line
        n=$($HSDAG info --json $m | sed -n 's/.*"nodes": \([0-9]*\),.*/\1/p')
        rows=$(grep -vc '^#' "$TMP/$b.csv")
        if [ "$rows" -eq $((n + 1)) ]; then ok; else bad "$b.csv: $rows rows for $n nodes"; fi
        # --profile: the simulated CPU-only latency is the sum of the measured per-op times
        expect_rc 0 $HSDAG simulate $m --placement cpu-only --profile "$TMP/$b.csv" --json
        expect_grep '"latency_ms": [0-9]' "$TMP/out"
    done
    # fusion is reported: squeezenet's Relus run inside ORT's FusedConv kernels
    expect_grep '^#fused,.*Relu' "$TMP/squeezenet1_1.csv"
    # calibrate on both, then score the fitted device and simulate with it
    expect_rc 0 $HSDAG calibrate "$TMP/squeezenet1_1.csv" "$TMP/mobilenet_v3_small.csv" --model $SQ --model $MB \
        --device-set "$TMP/cpu.json" --json
    expect_grep '"spearman": 0\.[5-9]' "$TMP/out"
    expect_rc 0 $HSDAG calibrate "$TMP/squeezenet1_1.csv" --model $SQ --devices "$TMP/cpu.json"
    expect_grep 'squeezenet1_1' "$TMP/out"
    expect_rc 0 $HSDAG simulate $SQ --devices "$TMP/cpu.json" --placement cpu-only
fi
echo "$(basename "$0"): $PASS passed, $FAIL failed, $SKIPPED skipped"
[ "$FAIL" -eq 0 ]
