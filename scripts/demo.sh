#!/bin/sh
# demo.sh - the main job on bundled real models: import Inception-V3 (ONNX), summarise it, then place it on a
# hard instance - a CPU + GPU whose GPU holds only half of what the model needs - with every method and print
# the comparison table, one line per method saying what it is.
# With CALIBRATE=1, first measures this CPU with ONNX Runtime (hsdag profile on two bundled models), fits it
# (hsdag calibrate --base cpu-gpu) and compares on this CPU + the preset's Arc A770.
# Not here: installing or building (make demo does both first). Usage: [CALIBRATE=1] sh scripts/demo.sh build/hsdag
set -e
HSDAG=${1:-build/hsdag}
MODEL=tests/data/onnx/inception_v3.onnx
echo "== hsdag info $MODEL"
"$HSDAG" info "$MODEL"
echo
echo "== hsdag compare $MODEL --devices cpu-gpu --mem GPU=50%"
echo "   (GPU-only does not fit: the single-device answer is infeasible; the bound ignores memory)"
"$HSDAG" compare "$MODEL" --devices cpu-gpu --mem GPU=50%
if [ "${CALIBRATE:-}" = 1 ]; then
    T=$(mktemp -d)
    for m in tests/data/onnx/resnet50.onnx tests/data/onnx/mobilenet_v2.onnx tests/data/onnx/bert_base.onnx; do
        echo
        echo "== hsdag profile $m --csv $T/$(basename $m .onnx).csv"
        "$HSDAG" profile "$m" --runs 5 --csv "$T/$(basename $m .onnx).csv"
    done
    echo
    echo "== hsdag calibrate (this CPU + the cpu-gpu preset's GPU) --device-set $T/this-cpu-gpu.json"
    "$HSDAG" calibrate "$T/resnet50.csv" "$T/mobilenet_v2.csv" "$T/bert_base.csv" --model tests/data/onnx/resnet50.onnx \
        --model tests/data/onnx/mobilenet_v2.onnx --model tests/data/onnx/bert_base.onnx --base cpu-gpu \
        --device-set "$T/this-cpu-gpu.json"
    echo
    echo "== hsdag compare $MODEL --devices $T/this-cpu-gpu.json"
    "$HSDAG" compare "$MODEL" --devices "$T/this-cpu-gpu.json"
    rm -rf "$T"
fi
