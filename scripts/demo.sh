#!/bin/sh
# demo.sh - the main job on bundled real models: import Inception-V3 (ONNX), summarise it, then
# place it on the cpu-gpu preset with several methods and print the comparison table.
# Not here: installing or building (make demo does both first). Usage: sh scripts/demo.sh build/hsdag
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
