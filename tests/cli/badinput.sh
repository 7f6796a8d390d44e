#!/bin/sh
# badinput.sh - the bad-input suite through the CLI: truncated files, random bytes, a cycle, a dangling
# edge, a 10^12-element shape, an XML entity bomb and an external entity, in every format. Each must
# exit 2 with one clear line naming the file, quickly and in bounded memory (ASan runs check leaks).
# Not here: per-format unit tests (tests/test_<format>.c). Run by tests/run.sh with $HSDAG set.
. tests/cli_lib.sh

# Address-space cap (not under ASan, which reserves terabytes of shadow memory).
case "$HSDAG" in *asan*) LIMIT="" ;; *) LIMIT="ulimit -v 1048576;" ;; esac

# bad FILE PATTERN: hsdag info FILE exits 2 within 10 s of CPU time and 1 GiB, one line on stderr naming FILE
# (a CPU-time limit, which a loaded machine does not stretch; the wall-clock timeout only catches a hang).
badfile() {
    f=$1; pat=$2
    sh -c "$LIMIT ulimit -t 10; exec timeout 300 \"$HSDAG\" info \"$f\"" >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" -eq 2 ]; then ok; else bad "$f: exit $rc (want 2): $(head -c 300 "$TMP/err")"; fi
    one_line "$TMP/err"
    expect_grep "$(basename "$f")" "$TMP/err"
    expect_grep "$pat" "$TMP/err"
    if [ -s "$TMP/out" ]; then bad "$f: printed on stdout"; else ok; fi
}

# deterministic pseudo-random bytes (LCG in awk), n bytes
randbytes() {
    awk -v n="$1" -v s="$2" 'BEGIN { for (i = 0; i < n; i++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%c", 1 + int(s / 8388608) % 255 } }'
}

# truncated files of every format
head -c 20000 tests/data/onnx/resnet50.onnx > "$TMP/trunc.onnx"
badfile "$TMP/trunc.onnx" 'trunc.onnx'
head -c 3001 tests/data/onnx/alexnet.onnx > "$TMP/trunc2.onnx"
badfile "$TMP/trunc2.onnx" 'trunc2.onnx'
head -c 50000 tests/data/openvino/resnet-50-pytorch.xml > "$TMP/trunc.xml"
badfile "$TMP/trunc.xml" 'XML|truncated|line'
head -c 5000 tests/data/tarnawski/latency-inputs/LayerGraphs/resnet50_inference.json > "$TMP/trunc.json"
badfile "$TMP/trunc.json" 'JSON|json|truncated|parse'
head -c 1000 tests/data/pacml/vgg16.txt > "$TMP/trunc.txt"
badfile "$TMP/trunc.txt" 'line'
# random bytes (detected as nothing, or as ONNX by their first byte)
randbytes 4096 7 > "$TMP/random.bin"
badfile "$TMP/random.bin" 'random.bin'
{ printf '\010\007'; randbytes 4096 11; } > "$TMP/random.onnx"
badfile "$TMP/random.onnx" 'random.onnx'
: > "$TMP/empty.onnx"
badfile "$TMP/empty.onnx" 'empty'
# cycle and dangling edge in each text format
printf 'node1 -- Input -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=4.0, parameter_size=0.0\nnode2 -- ReLU -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=4.0, parameter_size=0.0\n\tnode1 -- node2\n\tnode2 -- node1' > "$TMP/cycle.txt"
badfile "$TMP/cycle.txt" 'cycle'
printf 'node1 -- Input -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=4.0, parameter_size=0.0\n\tnode1 -- node9' > "$TMP/dangling.txt"
badfile "$TMP/dangling.txt" 'node9'
printf '{"maxSizePerFPGA":1e9,"maxFPGAs":1,"maxCPUs":1,"nodes":[{"id":1,"cpuLatency":1,"fpgaLatency":1,"supportedOnFpga":1,"size":1},{"id":2,"cpuLatency":1,"fpgaLatency":1,"supportedOnFpga":1,"size":1}],"edges":[{"sourceId":1,"destId":2,"cost":0},{"sourceId":2,"destId":1,"cost":0}]}' > "$TMP/cycle.json"
badfile "$TMP/cycle.json" 'cycle'
printf '{"maxSizePerFPGA":1e9,"maxFPGAs":1,"maxCPUs":1,"nodes":[{"id":1,"cpuLatency":1,"fpgaLatency":1,"supportedOnFpga":1,"size":1}],"edges":[{"sourceId":1,"destId":42,"cost":0}]}' > "$TMP/dangling.json"
badfile "$TMP/dangling.json" '42'
badfile tests/data/openvino/bad/cycle.xml 'cycle'
badfile tests/data/openvino/bad/dangling_edge.xml 'no such layer'
badfile tests/data/nncf/hand/cycle.dot 'cycle'
# absurd sizes
badfile tests/data/openvino/bad/shape_1e12.xml 'elements'
badfile tests/data/nncf/hand/shape_1e12.dot 'elements'
badfile tests/data/openvino/bad/rank17.xml 'rank'
# XML attacks: entity bomb and external entities are refused before any expansion or fetch
badfile tests/data/openvino/bad/entity_bomb.xml 'DOCTYPE|entit'
badfile tests/data/openvino/bad/xxe.xml 'DOCTYPE|entit'
badfile tests/data/openvino/bad/xxe_dtd.xml 'DOCTYPE|entit'
badfile tests/data/openvino/bad/entity_bomb_bad_decl.xml 'DOCTYPE|entit'
# names carrying control characters (a terminal escape, a tab) are quoted as spaces: one printable line
printf 'digraph { "a\033[31m\tb" -> c; c -> "a\033[31m\tb" }' > "$TMP/escape.dot"
badfile "$TMP/escape.dot" "cycle through node 'a .31m b'"
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$TMP/err"; then bad "escape.dot: control character on stderr"; else ok; fi
# unreadable paths
badfile "$TMP/does-not-exist.onnx" 'cannot open'
badfile "$TMP" 'directory'
finish
