#!/bin/sh
# demo.sh - the main job on bundled real models: import Inception-V3 (ONNX), summarise it, then
# place it on the cpu-gpu preset with several methods and print the comparison table.
# With CALIBRATE=1, first measures this CPU with ONNX Runtime (hsdag profile on two bundled models), fits it
# (hsdag calibrate --base cpu-gpu) and compares on this CPU + the preset's Arc A770.
# Not here: installing or building (make demo does both first). Usage: [CALIBRATE=1] sh scripts/demo.sh build/hsdag
set -e
HSDAG=${1:-build/hsdag}
MODEL=tests/data/onnx/inception_v3.onnx
echo "== hsdag info $MODEL"
"$HSDAG" info "$MODEL"
if "$HSDAG" compare --help >/dev/null 2>&1; then
    echo
    echo "== hsdag compare $MODEL --devices cpu-gpu"
    "$HSDAG" compare "$MODEL" --devices cpu-gpu
fi
if [ "${CALIBRATE:-}" = 1 ]; then
    T=$(mktemp -d)
    for m in tests/data/onnx/resnet50.onnx tests/data/onnx/mobilenet_v2.onnx tests/data/onnx/bert_base.onnx; do
        echo
        echo "== hsdag profile $m --out $T/$(basename $m .onnx).csv"
        "$HSDAG" profile "$m" --runs 5 --out "$T/$(basename $m .onnx).csv"
    done
    echo
    echo "== hsdag calibrate (this CPU + the cpu-gpu preset's GPU) --out $T/this-cpu-gpu.json"
    "$HSDAG" calibrate "$T/resnet50.csv" "$T/mobilenet_v2.csv" "$T/bert_base.csv" --model tests/data/onnx/resnet50.onnx \
        --model tests/data/onnx/mobilenet_v2.onnx --model tests/data/onnx/bert_base.onnx --base cpu-gpu \
        --out "$T/this-cpu-gpu.json"
    echo
    echo "== hsdag compare $MODEL --devices $T/this-cpu-gpu.json"
    "$HSDAG" compare "$MODEL" --devices "$T/this-cpu-gpu.json"
    rm -rf "$T"
fi
