#!/bin/sh
# onnx.sh - CLI tests of the ONNX importer: totals of `hsdag info --json` on bundled exports and the hand-made
# bad ONNX files (absurd shape, rank 17, cycle, dangling input, duplicate output, empty graph, deep nesting).
# Not here: per-node numbers (tests/test_onnx.c). Run by tests/run.sh with $HSDAG set.
. tests/cli_lib.sh

# file flops param_bytes (tests/data/onnx/expect.py --infer)
while read -r f flops params; do
    expect_rc 0 "$HSDAG" info --json "$f"
    expect_grep "\"flops\": $flops," "$TMP/out"
    expect_grep "\"param_bytes\": $params," "$TMP/out"
    expect_grep '"unknown_ops": 0,' "$TMP/out"
done <<'TABLE'
tests/data/onnx/resnet50.onnx 8195403264 102121888
tests/data/onnx/vit_b_16.onnx 35271667654 346270624
tests/data/onnx/bert_base.onnx 22435744444 437928960
tests/data/onnx-light/light_resnet50.onnx 8250978184 10376
TABLE

# bad FILE PATTERN: exit 2, one line naming the file and matching PATTERN, nothing on stdout
bad_onnx() {
    expect_rc 2 "$HSDAG" info "$1"
    one_line "$TMP/err"
    expect_grep "$(basename "$1")" "$TMP/err"
    expect_grep "$2" "$TMP/err"
    if [ -s "$TMP/out" ]; then bad "$1: printed on stdout"; else ok; fi
}
bad_onnx tests/data/onnx/bad/shape_1e12.onnx "tensor 'big': shape has 1e\\+12 elements"
bad_onnx tests/data/onnx/bad/rank17.onnx "tensor 'r': rank 17"
bad_onnx tests/data/onnx/bad/cycle.onnx 'cycle'
bad_onnx tests/data/onnx/bad/dangling.onnx "node 'orphan': input 'nowhere'"
bad_onnx tests/data/onnx/bad/dup_output.onnx "'y' is also produced"
bad_onnx tests/data/onnx/bad/no_graph_nodes.onnx 'no nodes'
bad_onnx tests/data/onnx/bad/deep_nesting.onnx 'nested deeper'
finish
