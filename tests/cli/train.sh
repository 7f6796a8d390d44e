# train.sh - CLI tests of 'hsdag train': outputs, JSON keys, determinism, resume, measure command, bad input.
# Not here: learning quality (tests/test_learn.c). Uses the bundled AlexNet ONNX export (20 ops), tiny budgets.
# Entry points: run by tests/run.sh.
. tests/cli_lib.sh
M=tests/data/onnx/alexnet.onnx
expect_rc 0 $HSDAG train --help
expect_grep "measure-cmd" "$TMP/out"
expect_rc 0 $HSDAG train $M --devices cpu-gpu --episodes 4 --steps 5 --out-dir "$TMP/a" --json
for k in latency_ms best_episode placements_evaluated wall_s; do expect_grep "\"$k\"" "$TMP/out"; done
expect_grep '"placements_evaluated": 20' "$TMP/out"
[ -s "$TMP/a/best_placement.json" ] && [ -s "$TMP/a/checkpoint.bin" ] && ok || bad "missing outputs in $TMP/a"
n=$(wc -l < "$TMP/a/curve.csv"); [ "$n" -eq 5 ] && ok || bad "curve.csv has $n lines (want header + 4)"
expect_grep '"format": "hsdag-placement"' "$TMP/a/best_placement.json"
# same seed -> identical curve and placement
expect_rc 0 $HSDAG train $M --devices cpu-gpu --episodes 4 --steps 5 --out-dir "$TMP/b"
cmp -s "$TMP/a/curve.csv" "$TMP/b/curve.csv" && ok || bad "same seed gave a different curve"
cmp -s "$TMP/a/best_placement.json" "$TMP/b/best_placement.json" && ok || bad "same seed gave a different placement"
# interrupted after 2 episodes, resumed to 4 -> identical to the uninterrupted run
expect_rc 0 $HSDAG train $M --devices cpu-gpu --episodes 2 --steps 5 --out-dir "$TMP/c"
expect_rc 0 $HSDAG train $M --devices cpu-gpu --episodes 4 --steps 5 --resume "$TMP/c"
cmp -s "$TMP/a/curve.csv" "$TMP/c/curve.csv" && ok || bad "resumed curve differs"
cmp -s "$TMP/a/best_placement.json" "$TMP/c/best_placement.json" && ok || bad "resumed placement differs"
# killed (SIGKILL) as soon as its first checkpoint exists, then resumed -> identical to an uninterrupted run
S=tests/data/onnx/squeezenet1_1.onnx
expect_rc 0 $HSDAG train $S --episodes 30 --steps 4 --out-dir "$TMP/full"
$HSDAG train $S --episodes 30 --steps 4 --out-dir "$TMP/k" >/dev/null 2>&1 &
pid=$!
i=0; while [ ! -s "$TMP/k/checkpoint.bin" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
eps=$(($(wc -l < "$TMP/k/curve.csv") - 1)); echo "killed after $eps episodes" >&2
expect_rc 0 $HSDAG train $S --episodes 30 --steps 4 --resume "$TMP/k"
cmp -s "$TMP/full/curve.csv" "$TMP/k/curve.csv" && ok || bad "curve after kill + resume differs"
cmp -s "$TMP/full/best_placement.json" "$TMP/k/best_placement.json" && ok || bad "placement after kill + resume differs"
# the killed run's temp files (if the kill hit a write) are gone after the resume
n=$(ls -a "$TMP/k" | grep -c 'hsdag-tmp'); [ "$n" -eq 0 ] && ok || bad "$n temp files left in the resumed run"
# a flipped bit in the checkpoint: one line naming the file, exit 2, nothing written
cp -r "$TMP/c" "$TMP/flip"
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//3]^=4; open(p,'wb').write(b)" "$TMP/flip/checkpoint.bin"
expect_rc 2 $HSDAG train $M --devices cpu-gpu --episodes 4 --steps 5 --resume "$TMP/flip"
expect_grep "flip/checkpoint.bin: .*(checksum mismatch|corrupt)" "$TMP/err"
one_line "$TMP/err"
cmp -s "$TMP/c/curve.csv" "$TMP/flip/curve.csv" && ok || bad "a refused resume changed curve.csv"
# weight units (ViT-B/16 at GPU=50%, where they apply): a run without them continues only without them, and
# the refusal names the option; on AlexNet, where none applies, the option does not stand in the way
V=tests/data/onnx/vit_b_16.onnx
expect_rc 0 $HSDAG train $V --devices cpu-gpu --mem GPU=50% --episodes 1 --steps 1 --weight-units 0 --out-dir "$TMP/wu"
expect_rc 2 $HSDAG train $V --devices cpu-gpu --mem GPU=50% --episodes 2 --steps 1 --resume "$TMP/wu"
one_line "$TMP/err"; expect_grep "other defaults: continue it with --weight-units 0" "$TMP/err"
expect_rc 0 $HSDAG train $V --devices cpu-gpu --mem GPU=50% --episodes 2 --steps 1 --weight-units 0 --resume "$TMP/wu"
expect_rc 0 $HSDAG train $M --devices cpu-gpu --mem GPU=50% --episodes 1 --steps 1 --weight-units 0 --out-dir "$TMP/wa"
expect_rc 0 $HSDAG train $M --devices cpu-gpu --mem GPU=50% --episodes 2 --steps 1 --resume "$TMP/wa"
# ... nor without parsing levels, where every group is a decision already
expect_rc 0 $HSDAG train $V --devices cpu-gpu --mem GPU=50% --levels 0 --episodes 1 --steps 1 --weight-units 0 --out-dir "$TMP/wl"
expect_rc 0 $HSDAG train $V --devices cpu-gpu --mem GPU=50% --levels 0 --episodes 2 --steps 1 --resume "$TMP/wl"
# resume with other options is refused
expect_rc 2 $HSDAG train $M --devices cpu-gpu --episodes 4 --steps 5 --seed 7 --resume "$TMP/c"
expect_grep "different seed" "$TMP/err"
one_line "$TMP/err"
# an external measurement command: the last number printed is the latency (seconds)
expect_rc 0 $HSDAG train $M --episodes 1 --steps 3 --out-dir "$TMP/m" --json --measure-cmd 'echo measured 0.0025 #'
expect_grep '"latency_ms": 2.5' "$TMP/out"
expect_grep '"measure_runs": [1-9]' "$TMP/out"
# a placement measured before is not run again (the memo); --no-measure-memo runs every one
expect_rc 0 $HSDAG train $M --episodes 2 --steps 5 --out-dir "$TMP/mm" --json --force --measure-cmd "sh -c 'echo x >> \"\$0\"; echo 0.001' $TMP/mm.count"
runs=$(sed -n 's/.*"measure_runs": \([0-9]*\).*/\1/p' "$TMP/out")
[ "$runs" = "$(wc -l < "$TMP/mm.count")" ] && [ "$runs" -le 100 ] && ok || bad "measure_runs $runs against $(wc -l < "$TMP/mm.count") runs"
rm -f "$TMP/mm.count"
expect_rc 0 $HSDAG train $M --episodes 2 --steps 5 --out-dir "$TMP/mm" --json --force --no-measure-memo --measure-cmd "sh -c 'echo x >> \"\$0\"; echo 0.001' $TMP/mm.count"
expect_grep '"measure_runs": 100,' "$TMP/out"
[ "$(wc -l < "$TMP/mm.count")" = 100 ] && ok || bad "--no-measure-memo ran $(wc -l < "$TMP/mm.count") of 100"
expect_rc 2 $HSDAG train $M --episodes 1 --out-dir "$TMP/mm2" --no-measure-memo
expect_grep "applies with --measure-cmd only" "$TMP/err"
# (run without a shell: a command that needs one asks for it)
expect_rc 1 $HSDAG train $M --episodes 1 --steps 2 --out-dir "$TMP/m2" --measure-cmd "sh -c 'exit 3'" --measure-retries 1
expect_grep "exit status 3" "$TMP/err"
one_line "$TMP/err"
t0=$(date +%s)
expect_rc 1 $HSDAG train $M --episodes 1 --steps 2 --out-dir "$TMP/m3" --measure-cmd "sh -c 'sleep 5; echo 1'" --measure-timeout 0.2 --measure-retries 0
expect_grep "timed out" "$TMP/err"
[ $(($(date +%s) - t0)) -lt 4 ] && ok || bad "the timed-out command (and its sleep child) was not killed at once"
expect_rc 1 $HSDAG train $M --episodes 1 --steps 2 --out-dir "$TMP/m4" --measure-cmd "no-such-program-hsdag {}" --measure-retries 0
expect_grep "cannot run 'no-such-program-hsdag'" "$TMP/err"
expect_rc 2 $HSDAG train $M --episodes 1 --steps 2 --out-dir "$TMP/m5" --measure-cmd "echo 'unterminated"
expect_grep "unterminated quote" "$TMP/err"
# an output directory with a quote, a semicolon and a space cannot inject shell code: the placement path is
# one argument of its own, placeholder or appended
evil="$TMP/o'; touch pwned-by-hsdag-test; echo 'x y"
expect_rc 0 $HSDAG train $M --episodes 1 --steps 2 --out-dir "$evil" --json --measure-cmd 'echo 0.002'
expect_grep '"latency_ms": 2' "$TMP/out"
expect_rc 0 $HSDAG train $M --episodes 1 --steps 2 --out-dir "$evil" --force --json --measure-cmd "sh -c 'test -s \"\$0\" && echo 0.003' {placement}"
expect_grep '"latency_ms": 3' "$TMP/out"
if [ -e pwned-by-hsdag-test ]; then bad "shell code in --out was run"; rm -f pwned-by-hsdag-test; else ok; fi
[ -s "$evil/measure_placement.json" ] && ok || bad "no placement file in the quoted directory"
# ablation switches and GNN variants run
expect_rc 0 $HSDAG train $M --episodes 1 --steps 2 --out-dir "$TMP/x" --no-shape --no-id --no-struct --gnn gat --levels 2 --baseline moving --entropy 0.01 --polish
# bad input
# self-imitation and the per-decision offsets need fixed clusters: re-parsed ones say which options to add
expect_rc 2 $HSDAG train $M --dynamic-clusters --episodes 1 --out-dir "$TMP/dc"
expect_grep "add --sil 0 --offset-lr 0" "$TMP/err"
one_line "$TMP/err"
expect_rc 0 $HSDAG train $M --dynamic-clusters --sil 0 --offset-lr 0 --episodes 1 --out-dir "$TMP/dc"
expect_rc 2 $HSDAG train $M --gnn nope
expect_rc 2 $HSDAG train $M --steps 0
expect_rc 2 $HSDAG train "$TMP/does-not-exist.onnx" --out-dir "$TMP/y"
one_line "$TMP/err"
expect_rc 2 $HSDAG train
finish
