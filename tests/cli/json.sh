# json.sh - CLI checks of the Tarnawski and hsdag JSON readers and the DOT writer through `hsdag convert`:
# Tarnawski -> hsdag JSON -> hsdag JSON is byte-identical, DOT output renders with Graphviz, bad JSON exits 2
# with one line. Not here: the parsers' unit tests (tests/test_tarnawski.c, tests/test_json.c).
. tests/cli_lib.sh
D=tests/data/tarnawski
if ! "$HSDAG" convert --help >/dev/null 2>&1; then
    echo "json.sh: skipped: 'hsdag convert' is not built yet"
    finish
    exit $?
fi
for f in latency-inputs/LayerGraphs/bert24_inference.json throughput-inputs/OperatorGraphs/resnet50_training.json; do
    expect_rc 0 "$HSDAG" convert "$D/$f" "$TMP/a.json"
    expect_rc 0 "$HSDAG" convert "$TMP/a.json" "$TMP/b.json"
    if cmp -s "$TMP/a.json" "$TMP/b.json"; then ok; else bad "$f: hsdag JSON not stable under re-conversion"; fi
    expect_grep '"source_format":"tarnawski"' "$TMP/b.json"
done
expect_rc 0 "$HSDAG" convert "$D/latency-inputs/LayerGraphs/bert24_inference.json" "$TMP/g.dot"
expect_rc 0 dot -Tsvg "$TMP/g.dot" -o "$TMP/g.svg"
expect_grep '<svg' "$TMP/g.svg"
# bad inputs: exit 2, one line naming the file and the element
printf '{"nodes":[{"id":77,"supportedOnFpga":1,"cpuLatency":NaN,"fpgaLatency":1,"size":0}],"edges":[]}' > "$TMP/nan.json"
expect_rc 2 "$HSDAG" convert "$TMP/nan.json" "$TMP/x.json"
expect_grep 'nan.json: nodes\[0\] \(id 77\): cpuLatency is not a finite number' "$TMP/err"
one_line "$TMP/err"
head -c 300 "$TMP/a.json" > "$TMP/cut.json"
expect_rc 2 "$HSDAG" convert "$TMP/cut.json" "$TMP/x.json"
expect_grep 'cut.json: JSON text ends early' "$TMP/err"
one_line "$TMP/err"
finish
