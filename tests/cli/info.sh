#!/bin/sh
# info.sh - CLI tests of 'hsdag info' and 'hsdag convert': exact node and edge counts (as in the file)
# for every bundled real graph, counted independently (python onnx / json / grep), plus help and options.
# Not here: the bad-input suite (tests/cli/badinput.sh). Run by tests/run.sh with $HSDAG set.
. tests/cli_lib.sh

# file format nodes edges
while read -r f fmt n e; do
    expect_rc 0 "$HSDAG" info --json "$f"
    got=$(tr -d ' \n' < "$TMP/out" | sed -n 's/.*"format":"\([^"]*\)","nodes":\([0-9]*\),"edges":\([0-9]*\),.*/\1 \2 \3/p')
    if [ "$got" = "$fmt $n $e" ]; then ok; else bad "$f: want '$fmt $n $e', got '$got'"; fi
done <<'TABLE'
tests/data/tarnawski/latency-inputs/LayerGraphs/bert24_inference.json tarnawski 32 55
tests/data/tarnawski/latency-inputs/LayerGraphs/gnmt_inference.json tarnawski 96 122
tests/data/tarnawski/latency-inputs/LayerGraphs/inceptionv3_inference.json tarnawski 326 363
tests/data/tarnawski/latency-inputs/LayerGraphs/resnet50_inference.json tarnawski 177 193
tests/data/tarnawski/latency-inputs/OperatorGraphs/bert_l-12_inference.json tarnawski 783 843
tests/data/tarnawski/latency-inputs/OperatorGraphs/bert_l-3_inference.json tarnawski 235 250
tests/data/tarnawski/latency-inputs/OperatorGraphs/bert_l-6_inference.json tarnawski 418 448
tests/data/tarnawski/latency-inputs/OperatorGraphs/resnet50_inference.json tarnawski 604 619
tests/data/tarnawski/throughput-inputs/LayerGraphs/bert24_inference.json tarnawski 32 55
tests/data/tarnawski/throughput-inputs/LayerGraphs/bert24_training.json tarnawski 64 110
tests/data/tarnawski/throughput-inputs/LayerGraphs/gnmt_inference.json tarnawski 96 122
tests/data/tarnawski/throughput-inputs/LayerGraphs/gnmt_training.json tarnawski 192 244
tests/data/tarnawski/throughput-inputs/LayerGraphs/inceptionv3_inference.json tarnawski 326 363
tests/data/tarnawski/throughput-inputs/LayerGraphs/inceptionv3_training.json tarnawski 652 726
tests/data/tarnawski/throughput-inputs/LayerGraphs/resnet50_inference.json tarnawski 177 193
tests/data/tarnawski/throughput-inputs/LayerGraphs/resnet50_training.json tarnawski 354 386
tests/data/tarnawski/throughput-inputs/OperatorGraphs/bert_L-12_training.json tarnawski 2012 2751
tests/data/tarnawski/throughput-inputs/OperatorGraphs/bert_l-12_inference.json tarnawski 783 843
tests/data/tarnawski/throughput-inputs/OperatorGraphs/bert_l-3_inference.json tarnawski 235 250
tests/data/tarnawski/throughput-inputs/OperatorGraphs/bert_l-3_training.json tarnawski 600 817
tests/data/tarnawski/throughput-inputs/OperatorGraphs/bert_l-6_inference.json tarnawski 418 448
tests/data/tarnawski/throughput-inputs/OperatorGraphs/bert_l-6_training.json tarnawski 1071 1462
tests/data/tarnawski/throughput-inputs/OperatorGraphs/resnet50_inference.json tarnawski 604 619
tests/data/tarnawski/throughput-inputs/OperatorGraphs/resnet50_training.json tarnawski 1243 1806
tests/data/pipedream/alexnet.txt pipedream 23 23
tests/data/pipedream/densenet121.txt pipedream 429 487
tests/data/pipedream/gnmt.txt pipedream 48 58
tests/data/pipedream/gnmt_large.txt pipedream 96 122
tests/data/pipedream/inception_v3.txt pipedream 326 362
tests/data/pipedream/nasnetalarge.txt pipedream 1251 1468
tests/data/pipedream/nasnetamobile.txt pipedream 921 1078
tests/data/pipedream/resnet101.txt pipedream 347 380
tests/data/pipedream/resnet18.txt pipedream 71 79
tests/data/pipedream/resnet50.txt pipedream 177 193
tests/data/pipedream/resnet50_partitioned.txt pipedream 177 193
tests/data/pipedream/resnext101.txt pipedream 347 380
tests/data/pipedream/resnext50.txt pipedream 177 193
tests/data/pipedream/squeezenet1_0.txt pipedream 68 76
tests/data/pipedream/vgg16.txt pipedream 41 41
tests/data/pipedream/vgg16_partitioned.txt pipedream 41 41
tests/data/pacml/alexnet.txt pipedream 23 23
tests/data/pacml/gnmt.txt pipedream 48 58
tests/data/pacml/resnet18.txt pipedream 71 79
tests/data/pacml/squeezenet1_0.txt pipedream 68 76
tests/data/pacml/vgg16.txt pipedream 41 41
tests/data/nncf/onnx/resnet18.dot dot 51 58
tests/data/nncf/onnx_quantized/resnet50_cpu_spr.dot dot 348 363
tests/data/nncf/openvino/mobilenet-v3-small.dot dot 207 221
tests/data/nncf/openvino/resnet-18.dot dot 76 83
tests/data/nncf/torch_fx/resnet18.dot dot 193 180
tests/data/nncf/torch_hook/model_graph_resnext50_32x4d.dot dot 444 459
tests/data/nncf/torch_hook/model_graph_vgg16.dot dot 74 73
tests/data/openvino/quirks-v10.xml openvino-ir 17 18
tests/data/openvino/resnet-50-pytorch.xml openvino-ir 399 414
tests/data/onnx-light/light_bvlc_alexnet.onnx onnx 40 39
tests/data/onnx-light/light_densenet121.onnx onnx 1746 1803
tests/data/onnx-light/light_inception_v1.onnx onnx 237 263
tests/data/onnx-light/light_inception_v2.onnx onnx 916 943
tests/data/onnx-light/light_resnet50.onnx onnx 415 430
tests/data/onnx-light/light_shufflenet.onnx onnx 446 461
tests/data/onnx-light/light_squeezenet.onnx onnx 105 112
tests/data/onnx-light/light_vgg19.onnx onnx 82 81
tests/data/onnx-light/light_zfnet512.onnx onnx 38 37
tests/data/onnx/alexnet.onnx onnx 20 19
tests/data/onnx/bert_base.onnx onnx 1563 1828
tests/data/onnx/googlenet.onnx onnx 179 205
tests/data/onnx/inception_v3.onnx onnx 316 350
tests/data/onnx/mobilenet_v2.onnx onnx 209 218
tests/data/onnx/resnet50.onnx onnx 169 184
tests/data/onnx/squeezenet1_1.onnx onnx 83 90
tests/data/onnx/vgg16.onnx onnx 48 47
tests/data/onnx/vit_b_16.onnx onnx 1523 1792
TABLE

# the table output names the same numbers
expect_rc 0 "$HSDAG" info tests/data/onnx/resnet50.onnx
expect_grep '^nodes +169$' "$TMP/out"
expect_grep '^format +onnx$' "$TMP/out"
expect_grep '^depth +118$' "$TMP/out"
# PAC-ML job graph: 2n nodes, 2E+1 edges
expect_rc 0 "$HSDAG" info --json --mirror tests/data/pacml/resnet18.txt
expect_grep '"nodes": 142, "edges": 159' "$TMP/out"
# detection by content, not extension
cp tests/data/openvino/resnet-50-pytorch.xml "$TMP/model.bin"
expect_rc 0 "$HSDAG" info --json "$TMP/model.bin"
expect_grep '"format": "openvino-ir", "nodes": 399, "edges": 414' "$TMP/out"
# convert: hsdag JSON round trip keeps every count and total; DOT is valid for graphviz
expect_rc 0 "$HSDAG" convert tests/data/onnx/inception_v3.onnx "$TMP/g.json"
expect_rc 0 "$HSDAG" info --json tests/data/onnx/inception_v3.onnx
sed 's/"file": "[^"]*", "format": "[^"]*", "nodes": [0-9]*, "edges": [0-9]*, //' "$TMP/out" > "$TMP/a"
expect_rc 0 "$HSDAG" info --json "$TMP/g.json"
sed 's/"file": "[^"]*", "format": "[^"]*", "nodes": [0-9]*, "edges": [0-9]*, //' "$TMP/out" > "$TMP/b"
if cmp -s "$TMP/a" "$TMP/b"; then ok; else bad "info differs after JSON round trip: $(diff "$TMP/a" "$TMP/b" | head -5)"; fi
expect_rc 0 "$HSDAG" convert "$TMP/g.json" "$TMP/g2.json"
if cmp -s "$TMP/g.json" "$TMP/g2.json"; then ok; else bad "hsdag JSON is not a fixed point of convert"; fi
expect_rc 0 "$HSDAG" convert tests/data/pacml/gnmt.txt "$TMP/g.dot"
if command -v dot >/dev/null 2>&1; then expect_rc 0 dot -Tsvg -o "$TMP/g.svg" "$TMP/g.dot"; fi
"$HSDAG" info --json tests/data/nncf/hand/quirks.dot > "$TMP/quirks.json"
# detection by content: a UTF-8 byte-order mark, comments before a DOT graph, no telling extension;
# the counts are those of the plain file
bom=$(printf '\357\273\277')
{ printf '%s' "$bom"; cat tests/data/tarnawski/latency-inputs/LayerGraphs/bert24_inference.json; } > "$TMP/bom_tw"
{ printf '%s' "$bom"; cat tests/data/pipedream/alexnet.txt; } > "$TMP/bom_pd"
{ printf '%s/* exported */\n// by hand\n# 1 "x.dot"\n' "$bom"; cat tests/data/nncf/hand/quirks.dot; } > "$TMP/bom_dot"
while read -r f fmt n e; do
    expect_rc 0 "$HSDAG" info --json "$TMP/$f"
    got=$(tr -d ' \n' < "$TMP/out" | sed -n 's/.*"format":"\([^"]*\)","nodes":\([0-9]*\),"edges":\([0-9]*\),.*/\1 \2 \3/p')
    if [ "$got" = "$fmt $n $e" ]; then ok; else bad "$f: want '$fmt $n $e', got '$got' $(head -c 200 "$TMP/err")"; fi
done <<TABLE
bom_tw tarnawski 32 55
bom_pd pipedream 23 23
bom_dot dot $(sed -n 's/.*"nodes": \([0-9]*\), "edges": \([0-9]*\),.*/\1 \2/p' "$TMP/quirks.json")
TABLE
# op names from the file cannot drive the terminal or break the table's lines
printf 'digraph { a [type="Re\033[31mlu\nx"]; a -> b }' > "$TMP/opesc.dot"
expect_rc 0 "$HSDAG" info "$TMP/opesc.dot"
expect_grep 'Re.\[31mlu.x +1' "$TMP/out"
if LC_ALL=C grep -q "$(printf '\033')" "$TMP/out"; then bad "opesc.dot: escape character on stdout"; else ok; fi
# help and option errors
expect_rc 0 "$HSDAG" --help
expect_grep 'info' "$TMP/out"
for c in info convert simulate place bound compare cluster; do
    expect_rc 0 "$HSDAG" "$c" --help
    expect_grep 'usage' "$TMP/out"
done
expect_rc 2 "$HSDAG" info
expect_rc 2 "$HSDAG" info --bogus tests/data/onnx/vgg16.onnx
one_line "$TMP/err"
expect_rc 2 "$HSDAG" info --format nonsense tests/data/onnx/vgg16.onnx
expect_rc 2 "$HSDAG" convert tests/data/onnx/vgg16.onnx "$TMP/out.xyz"
expect_rc 2 "$HSDAG" nosuchcommand
# an op whose output shape is unknown is counted and warned about (never silently costed from nothing)
expect_rc 0 "$HSDAG" info tests/data/openvino/quirks-v10.xml
expect_grep '^unshaped ops  1 ' "$TMP/out"
expect_grep 'warning: .*quirks-v10.xml: 1 ops have an output of unknown shape' "$TMP/err"
expect_rc 0 "$HSDAG" info tests/data/openvino/quirks-v10.xml --json
expect_grep '"unshaped_ops": 1,' "$TMP/out"
# the Swin-T export (window partition/merge through computed shapes): every shape known, the published ~9 GFLOP
expect_rc 0 "$HSDAG" info tests/data/onnx-export/swin_t.onnx --json
expect_grep '"unshaped_ops": 0,' "$TMP/out"
expect_grep '"flops": 909[0-9]{7},' "$TMP/out"
finish
