#!/bin/sh
# demo.sh - the main job on a bundled real model: import Inception-V3 (ONNX), summarise it, then place it on
# a hard instance - a CPU + GPU whose GPU holds only half of what the model needs - with every method and
# print the comparison table, one line per method saying what it is.
# Not here: installing or building (make demo does both first). Usage: sh scripts/demo.sh build/hsdag
set -e
HSDAG=${1:-build/hsdag}
MODEL=tests/data/onnx/inception_v3.onnx
echo "== hsdag info $MODEL"
"$HSDAG" info "$MODEL"
echo
echo "== hsdag compare $MODEL --devices cpu-gpu --mem GPU=50%"
echo "   (GPU-only does not fit: the single-device answer is infeasible; the bound ignores memory)"
"$HSDAG" compare "$MODEL" --devices cpu-gpu --mem GPU=50%
