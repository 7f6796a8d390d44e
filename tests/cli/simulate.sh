# simulate.sh - CLI checks of 'hsdag simulate' and 'hsdag bound': hand-checkable numbers on bundled models,
# the file's own devices for Tarnawski workloads, placement formats, exports, traces and one-line errors.
# Not here: simulator semantics in depth (tests/test_sim.c). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
M=tests/data/onnx/resnet50.onnx
T=tests/data/tarnawski/latency-inputs/LayerGraphs/resnet50_inference.json
TS=tests/data/tarnawski/human-experts/resnet50_inference_expert.json
B24=tests/data/tarnawski/latency-inputs/LayerGraphs/bert24_inference.json
S24=tests/data/tarnawski/human-experts/bert24_inference_expert.json

# help lists every option
expect_rc 0 $HSDAG simulate --help
for o in --placement --devices --semantics --costs --profile --priority --trace --repeat --json --out --affinity --split --dot --dot-full; do
    expect_grep "$o" "$TMP/out"
done
expect_rc 0 $HSDAG bound --help
expect_grep "critical path" "$TMP/out"

# single-device placements on the default cpu-gpu preset, as JSON
expect_rc 0 $HSDAG simulate $M --placement cpu-only --json
cp "$TMP/out" "$TMP/cpu.json"
expect_grep '"devices": "cpu-gpu"' "$TMP/cpu.json"
expect_grep '"semantics": "sequential"' "$TMP/cpu.json"
expect_grep '"feasible": true' "$TMP/cpu.json"
expect_grep '"transfers": 0,' "$TMP/cpu.json"
expect_grep '"peak_memory_bytes": \{"CPU": [0-9]' "$TMP/cpu.json"
expect_grep '"busy_ms": \{"CPU": [0-9.]+, "GPU": 0\}' "$TMP/cpu.json"
expect_rc 0 $HSDAG simulate $M --placement GPU --json
expect_grep '"busy_ms": \{"CPU": 0, "GPU"' "$TMP/out"
# CPU-only latency equals the CPU's busy time under sequential semantics
lat=$(sed -n 's/.*"latency_ms": \([0-9.e+-]*\).*/\1/p' "$TMP/cpu.json")
busy=$(sed -n 's/.*"busy_ms": {"CPU": \([0-9.e+-]*\),.*/\1/p' "$TMP/cpu.json")
if [ -n "$lat" ] && [ "$lat" = "$busy" ]; then ok; else bad "cpu-only latency $lat != busy $busy"; fi

# --repeat adds evals_per_s; the result is the same evaluation
expect_rc 0 $HSDAG simulate $M --placement gpu-only --repeat 200 --json
expect_grep '"evals_per_s": [1-9][0-9]*' "$TMP/out"

# a placement file round trip: export hsdag JSON, affinity and split, read each back, same latency
expect_rc 0 $HSDAG simulate $M --placement cpu-only --out "$TMP/p.json" --affinity "$TMP/a.json" --json
expect_grep '"format": "hsdag-placement"' "$TMP/p.json"
expect_grep '"CPU"' "$TMP/a.json"
for f in p.json a.json; do
    expect_rc 0 $HSDAG simulate $M --placement "$TMP/$f" --json
    expect_grep "\"latency_ms\": $lat," "$TMP/out"
done

# the old export names point at the new ones (exit 2, one line)
expect_rc 2 $HSDAG simulate $M --placement cpu-only --export-json "$TMP/old.json"
expect_grep "export-json does not apply here: the placement JSON is --out FILE" "$TMP/err"
one_line "$TMP/err"
[ ! -e "$TMP/old.json" ] && ok || bad "--export-json still wrote a file"

# a mixed placement: the first half of the nodes on the GPU via "default"
first=$(sed -n 's/^    "\([^"]*\)": "CPU",*$/\1/p' "$TMP/p.json" | head -n 1)
printf '{"placement": {"%s": "GPU"}, "default": "CPU"}\n' "$first" > "$TMP/mixed.json"
expect_rc 0 $HSDAG simulate $M --placement "$TMP/mixed.json" --json
expect_grep '"transfers": [1-9]' "$TMP/out"

# concurrent on cpu-4gpu and a trace with one track per device and link
expect_rc 0 $HSDAG simulate $M --devices cpu-4gpu --placement gpu0-only --trace "$TMP/t.json" --json
expect_grep '"semantics": "concurrent"' "$TMP/out"
expect_grep '"traceEvents"' "$TMP/t.json"
expect_grep '"thread_name".*"gpu3"' "$TMP/t.json"
expect_grep '"link pcie-down"' "$TMP/t.json"

# Tarnawski workloads: the file's own devices and semantics; expert splits
expect_rc 0 $HSDAG simulate $T --placement $TS --json
expect_grep '"devices": "tarnawski"' "$TMP/out"
expect_grep '"semantics": "tarnawski"' "$TMP/out"
expect_grep '"placement_format": "tarnawski-split"' "$TMP/out"
expect_grep '"latency_ms": 1014.92656' "$TMP/out"
expect_grep '"feasible": false' "$TMP/out"
expect_grep '"max_excess_bytes": 5457652736' "$TMP/out"
expect_rc 0 $HSDAG simulate $B24 --placement $S24 --json
expect_grep '"latency_ms": 111.93725' "$TMP/out"
expect_grep '"accelerators_used": 6, "max_accelerators": 5' "$TMP/out"
expect_grep 'simulating on tarnawski:6:8' "$TMP/err"
expect_rc 0 $HSDAG simulate $T --placement cpu-only --semantics sequential --json
expect_grep '"semantics": "sequential"' "$TMP/out"
expect_rc 0 $HSDAG bound $T --json
expect_grep '"critical_path_ms": 187.45(5|49)' "$TMP/out"
expect_grep '"lower_bound_ms": 997.373' "$TMP/out" # path-blocks: 2 GiB accelerators and 96 ms transfers
expect_grep '"lower_bound_rule": "path-blocks"' "$TMP/out"
# --mem caps the bound too: the static bytes on a capped device bind (a Lagrangian min cut)
expect_rc 0 $HSDAG bound tests/data/onnx/alexnet.onnx --devices cpu-gpu --json
expect_grep '"lower_bound_rule": "exact"' "$TMP/out"
expect_grep '"memory_bound_ms": null' "$TMP/out"
expect_rc 0 $HSDAG bound tests/data/onnx/alexnet.onnx --devices cpu-gpu --mem GPU=50% --json
expect_grep '"lower_bound_rule": "mincut-memory"' "$TMP/out"
expect_grep '"memory_bound_ms": 2\.049' "$TMP/out"
expect_rc 0 $HSDAG bound $M --devices cpu-4gpu --json
expect_grep '"semantics": "concurrent"' "$TMP/out"
expect_grep '"work_per_device_ms": [0-9]' "$TMP/out"

# a profile overrides one op's cost
printf 'node,device,ms\n%s,CPU,1000\n' "$first" > "$TMP/prof.csv"
expect_rc 0 $HSDAG simulate $M --placement cpu-only --profile "$TMP/prof.csv" --json
expect_grep '"profiled": 1' "$TMP/out"
expect_grep '"latency_ms": 10[0-9][0-9]\.' "$TMP/out"

# errors: exit 2, one line
printf '{"placement": {"no_such_node": "CPU"}, "default": "CPU"}\n' > "$TMP/badnode.json"
printf '{"placement": {"%s": "TPU"}, "default": "CPU"}\n' "$first" > "$TMP/baddev.json"
printf '{"placement": ' > "$TMP/badjson.json"
printf '{"placement": {"%s": "GPU"}}\n' "$first" > "$TMP/missing.json"
printf '{"devices": [{"name": "x"}]}\n' > "$TMP/baddevs.json"
for args in "--placement $TMP/badnode.json" "--placement $TMP/baddev.json" "--placement $TMP/badjson.json" \
            "--placement $TMP/missing.json" "--placement tpu-only" "--placement cpu-only --devices nosuch" \
            "--placement cpu-only --devices $TMP/baddevs.json" "--placement cpu-only --semantics parallel" \
            "--placement cpu-only --repeat 0" "--placement cpu-only --profile /no/such.csv" "--bogus" "" \
            "--placement $TS --devices cpu-gpu"; do
    expect_rc 2 $HSDAG simulate $M $args
    one_line "$TMP/err"
done
expect_grep "fpgas|accelerator groups|unknown node id" "$TMP/err"
expect_rc 2 $HSDAG simulate $M --placement "$TMP/badnode.json"
expect_grep "unknown node 'no_such_node'" "$TMP/err"
expect_rc 2 $HSDAG simulate $M --placement "$TMP/missing.json"
expect_grep "has no device" "$TMP/err"
expect_rc 2 $HSDAG simulate /no/such/model.onnx --placement cpu-only
one_line "$TMP/err"
expect_rc 2 $HSDAG bound $M --devices nosuch
one_line "$TMP/err"
finish
