# pretrain.sh - CLI tests of one policy for many graphs: 'hsdag train --graphs', 'hsdag place --policy'
# (zero-shot and fine-tuned), the shipped-policy lookup, determinism and bad input.
# Not here: quality (docs/results.md, make results). Uses the bundled AlexNet, SqueezeNet and VGG-16 exports.
# Entry points: run by tests/run.sh.
. tests/cli_lib.sh
A=tests/data/onnx/alexnet.onnx; S=tests/data/onnx/squeezenet1_1.onnx; V=tests/data/onnx/vgg16.onnx
strip_wall() { sed 's/"wall_s": [-+.0-9eE]*//' "$1"; } # a JSON result without its timing
expect_rc 0 $HSDAG train --graphs --help
expect_grep "one policy|ONE policy" "$TMP/out"
for m in hsdag placeto; do
    expect_rc 0 $HSDAG train --graphs $A,$S --devices cpu-4gpu --method $m --rounds 2 --out-dir "$TMP/$m" --json
    for k in method devices rounds policy wall_s graphs best_latency_ms; do expect_grep "\"$k\"" "$TMP/out"; done
    [ -s "$TMP/$m/policy.bin" ] && ok || bad "no $TMP/$m/policy.bin"
    # header, HSDAG's imitation target per graph (round -1), then 2 rounds x 2 graphs
    want=5; [ $m = hsdag ] && want=7
    n=$(wc -l < "$TMP/$m/progress.csv"); [ "$n" -eq $want ] && ok || bad "$m: progress.csv has $n lines (want $want)"
    # the same command trains the same policy, bit for bit (the file holds the command, so the same
    # --out-dir, and --force both times)
    expect_rc 0 $HSDAG train --graphs $A,$S --devices cpu-4gpu --method $m --rounds 2 --out-dir "$TMP/$m" --force --json
    cp "$TMP/$m/policy.bin" "$TMP/$m.first.bin"
    # a run directory that is not empty is refused without --force
    expect_rc 2 $HSDAG train --graphs $A,$S --devices cpu-4gpu --method $m --rounds 2 --out-dir "$TMP/$m"
    one_line "$TMP/err"
    expect_rc 0 $HSDAG train --graphs $A,$S --devices cpu-4gpu --method $m --rounds 2 --out-dir "$TMP/$m" --force --json
    cmp -s "$TMP/$m/policy.bin" "$TMP/$m.first.bin" && ok || bad "$m: same seed, different policy"
    # zero-shot on an unseen graph: nothing measured
    expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method $m --policy "$TMP/$m/policy.bin" --json
    expect_grep '"placements_evaluated": 0' "$TMP/out"
    expect_grep 'one forward pass' "$TMP/out"
    # fine-tuned: exactly the budget (30 = the one-pass placement + one episode of 20 + 9 drawn from the policy)
    expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method $m --policy "$TMP/$m/policy.bin" --budget 30 --json
    ev=$(sed -n 's/.*"placements_evaluated": \([0-9]*\).*/\1/p' "$TMP/out"); [ "$ev" = 30 ] && ok || bad "$m fine-tune used $ev evals, not 30"
done
# the command that trained it is in the policy file
grep -q "train --graphs" "$TMP/hsdag/policy.bin" && ok || bad "policy.bin does not hold its training command"
# a policy for other devices, or of another method, is refused (exit 2 with one line)
expect_rc 2 $HSDAG place $V --devices cpu-gpu --method hsdag --policy "$TMP/hsdag/policy.bin"
one_line "$TMP/err"
expect_rc 2 $HSDAG place $V --devices cpu-4gpu --method placeto --policy "$TMP/hsdag/policy.bin"
one_line "$TMP/err"
# a corrupt policy file
head -c 200 "$TMP/hsdag/policy.bin" > "$TMP/bad.bin"
expect_rc 2 $HSDAG place $V --devices cpu-4gpu --method hsdag --policy "$TMP/bad.bin"
expect_grep "bad.bin" "$TMP/err"
# --policy shipped: the preset's shipped policy (HSDAG_DATA points at a test tree here)
mkdir -p "$TMP/data/policies/hsdag" && cp "$TMP/hsdag/policy.bin" "$TMP/data/policies/hsdag/cpu-4gpu.bin"
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method hsdag --policy shipped --json
expect_grep "cpu-4gpu.bin" "$TMP/out"
# where the caps bind, the ensemble trained under a cap if the preset has one (members .capped.0, .1, ... of
# one directory, up to the first gap), else the uncapped policy, and the note says which
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem gpu0=50% --method hsdag --policy shipped --json
expect_grep "cpu-4gpu.bin, uncapped: no capped one is shipped" "$TMP/out"
for i in 0 1 3; do cp "$TMP/hsdag/policy.bin" "$TMP/data/policies/hsdag/cpu-4gpu.capped.$i.bin"; done
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem gpu0=50% --method hsdag --policy shipped --json
expect_grep "ensemble of 2 policies trained under a memory cap \(.*/data/policies/hsdag/cpu-4gpu.capped.0-1.bin\)" "$TMP/out"
# a cap on the CPU alone does not bind where the capped ensembles are trained (an accelerator)
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem CPU=50% --method hsdag --policy shipped --json
expect_grep "cpu-4gpu.bin \(cpu-4gpu\)" "$TMP/out"
# the capped members are looked up beside the preset's policy: a data directory with only the latter wins
mkdir -p "$TMP/own/policies/hsdag" && cp "$TMP/hsdag/policy.bin" "$TMP/own/policies/hsdag/cpu-4gpu.bin"
HSDAG_DATA="$TMP/own" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem gpu0=50% --method hsdag --policy shipped --json
expect_grep "own/policies/hsdag/cpu-4gpu.bin, uncapped: no capped one is shipped" "$TMP/out"
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem gpu0=100% --method hsdag --policy shipped --json
expect_grep "cpu-4gpu.bin \(cpu-4gpu\)" "$TMP/out"
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem gpu0=50% --method hsdag --policy shipped --budget 25 --json
expect_grep "fine-tuned \(the first\) with 25" "$TMP/out"
# --budget N without --policy: the preset's shipped policy (here the capped ensemble) fine-tuned with N, the
# same run as --policy shipped --budget N; --policy none, or --max-evals (the budget of the method from
# scratch), learns from scratch, and --max-evals is refused with a policy
strip_wall "$TMP/out" > "$TMP/ship25.json"
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem gpu0=50% --method hsdag --budget 25 --json
strip_wall "$TMP/out" > "$TMP/auto25.json"
cmp -s "$TMP/ship25.json" "$TMP/auto25.json" && ok || bad "--budget without --policy: not the shipped policy's run"
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method hsdag --budget 25 --policy none --json
expect_grep "warm start" "$TMP/out"
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method hsdag --budget 25 --max-evals 100 --json
expect_grep "warm start" "$TMP/out"
HSDAG_DATA="$TMP/data" expect_rc 2 $HSDAG place $V --devices cpu-4gpu --method hsdag --policy shipped --max-evals 100
one_line "$TMP/err"; expect_grep "max-evals does not apply with --policy" "$TMP/err"
# none shipped (Placeto here): from scratch, and the note says why
expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method placeto --budget 20 --json
expect_grep "from scratch: no shipped placeto policy for 'cpu-4gpu'" "$TMP/out"
# a policy the problem cannot take is named in the one-line error
expect_rc 2 $HSDAG place $S --devices cpu-4gpu --method hsdag --policy policies/hsdag/cpu-gpu.bin
one_line "$TMP/err"; expect_grep "policies/hsdag/cpu-gpu.bin" "$TMP/err"
rm "$TMP/data/policies/hsdag/cpu-4gpu.capped.1.bin"
HSDAG_DATA="$TMP/data" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem gpu0=50% --method hsdag --policy shipped --json
expect_grep "cpu-4gpu.capped.0.bin, trained under a memory cap" "$TMP/out"
# a data directory whose path holds a comma (the members are not a --policy list)
cp -r "$TMP/data" "$TMP/da,ta"
HSDAG_DATA="$TMP/da,ta" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --mem gpu0=50% --method hsdag --policy shipped --json
HSDAG_DATA="$TMP/da,ta" expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method hsdag --policy shipped --json
expect_grep "da,ta/policies/hsdag/cpu-4gpu.bin" "$TMP/out"
# a member that is not a policy file is refused, naming it
head -c 100 "$TMP/hsdag/policy.bin" > "$TMP/data/policies/hsdag/cpu-4gpu.capped.1.bin"
HSDAG_DATA="$TMP/data" expect_rc 2 $HSDAG place $V --devices cpu-4gpu --mem gpu0=50% --method hsdag --policy shipped
one_line "$TMP/err"; expect_grep "cpu-4gpu.capped.1.bin" "$TMP/err"
expect_rc 2 $HSDAG place $V --devices cpu-gpu --method placeto --policy shipped   # none shipped for Placeto
expect_grep "shipped placeto policy" "$TMP/err"
one_line "$TMP/err"
# a device file whose name is a path is no preset: nothing is looked up outside policies/<method>/
cat > "$TMP/dotdot.json" <<'EOF'
{"name": "../x", "semantics": "sequential", "devices": [
 {"name": "CPU", "kind": "cpu", "peak_flops": 1e11, "mem_bandwidth": 1e10, "mem_capacity": 0, "launch_overhead_s": 1e-6},
 {"name": "GPU", "kind": "gpu", "peak_flops": 1e13, "mem_bandwidth": 1e11, "mem_capacity": 0, "launch_overhead_s": 1e-5}],
 "links": [{"from": "CPU", "to": "GPU", "symmetric": true, "latency_s": 1e-5, "bandwidth": 1e10}]}
EOF
HSDAG_DATA="$TMP/data" expect_rc 2 $HSDAG place $V --devices "$TMP/dotdot.json" --method hsdag --policy shipped
one_line "$TMP/err"; expect_grep "not a file name" "$TMP/err"
# a device file is no preset, even one that calls itself "cpu-gpu": --budget learns from scratch
sed 's|"name": "../x"|"name": "cpu-gpu"|' "$TMP/dotdot.json" > "$TMP/named.json"
expect_rc 0 $HSDAG place $S --devices "$TMP/named.json" --method hsdag --budget 20 --json
expect_grep "from scratch: devices from a file have no shipped policy; warm start" "$TMP/out"
# --budget 0 is zero-shot, the same placement as a policy without --budget (the shipped one without
# --policy); every other use of a zero budget is refused
expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method hsdag --policy "$TMP/hsdag/policy.bin" --json
strip_wall "$TMP/out" > "$TMP/zs.json"
expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method hsdag --policy "$TMP/hsdag/policy.bin" --budget 0 --json
strip_wall "$TMP/out" | cmp -s - "$TMP/zs.json" && ok || bad "--budget 0 is not the zero-shot placement"
expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method hsdag --policy shipped --json
strip_wall "$TMP/out" > "$TMP/zs.json"
expect_rc 0 $HSDAG place $V --devices cpu-4gpu --method hsdag --budget 0 --json
strip_wall "$TMP/out" | cmp -s - "$TMP/zs.json" && ok || bad "--budget 0 without --policy: not the shipped zero-shot"
expect_grep "one forward pass, nothing measured" "$TMP/out"
for m in "hsdag --policy none" hsdag-learned bb-random; do
    expect_rc 2 $HSDAG place $V --devices cpu-4gpu --method $m --budget 0
    one_line "$TMP/err"; expect_grep "budget 0" "$TMP/err"
done
expect_rc 2 $HSDAG place $V --devices cpu-4gpu --method placeto --budget 0   # none shipped for Placeto
expect_grep "no shipped one" "$TMP/err"
expect_rc 2 $HSDAG train $V --budget 0 --out-dir "$TMP/z0"
# options of the other method, --warm-start other than auto, --graphs not first, the old --out
expect_rc 2 $HSDAG train --graphs $A --method placeto --steps 2 --out-dir "$TMP/y"
expect_grep "steps applies with --method hsdag only" "$TMP/err"
expect_rc 2 $HSDAG train --graphs $A --units 4 --out-dir "$TMP/y"
expect_rc 2 $HSDAG train --graphs $A --method placeto --weight-units 0 --out-dir "$TMP/y"
expect_grep "weight-units applies with --method hsdag only" "$TMP/err"
expect_rc 2 $HSDAG train --graphs $A --warm-start heft --out-dir "$TMP/y"
expect_grep "auto or none" "$TMP/err"
# without the imitation: no target rows, 10 rounds unless told
expect_rc 0 $HSDAG train --graphs $A,$S --devices cpu-4gpu --warm-start none --out-dir "$TMP/none" --json
expect_grep '"rounds": 10' "$TMP/out"
grep -q '^-1,' "$TMP/none/progress.csv" && bad "--warm-start none imitated" || ok
# a memory-capped zero-shot placement is made to fit: feasible, and the note says how many decisions moved
expect_rc 0 $HSDAG train --graphs $A,$V --devices cpu-gpu --mem GPU=50% --out-dir "$TMP/cap" --json
expect_rc 0 $HSDAG place $S --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$TMP/cap/policy.bin" --json
expect_grep '"feasible": true' "$TMP/out"
# an ensemble (--policy A,B): one forward pass each, log-probabilities averaged; one member twice is that
# member; the order of the members does not matter; bad lists are refused with one line
expect_rc 0 $HSDAG train --graphs $A,$V --devices cpu-gpu --mem GPU=50% --seed 1 --out-dir "$TMP/cap1" --json
lat() { sed -n 's/.*"latency_ms": \([0-9.e+-]*\).*/\1/p' "$TMP/out"; }
C0="$TMP/cap/policy.bin"; C1="$TMP/cap1/policy.bin"
expect_rc 0 $HSDAG place $S --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$C0" --json; one=$(lat)
expect_rc 0 $HSDAG place $S --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$C0,$C0" --json
[ "$(lat)" = "$one" ] && ok || bad "ensemble of one policy twice: $(lat) ms, the policy alone $one"
expect_grep 'ensemble of 2 pre-trained policies' "$TMP/out"
expect_grep '"placements_evaluated": 0' "$TMP/out"
expect_rc 0 $HSDAG place $S --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$C0,$C1" --out "$TMP/e01.json"
expect_rc 0 $HSDAG place $S --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$C1,$C0" --out "$TMP/e10.json"
cmp -s "$TMP/e01.json" "$TMP/e10.json" && ok || bad "ensemble: the order of the members changed the placement"
expect_rc 0 $HSDAG place $S --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$C0,$C1" --budget 25 --json
ev=$(sed -n 's/.*"placements_evaluated": \([0-9]*\).*/\1/p' "$TMP/out"); [ "$ev" = 25 ] && ok || bad "ensemble fine-tune used $ev evals, not 25"
for bad_list in "$C0," ",$C0" "$C0,$TMP/placeto/policy.bin" "$C0,$TMP/hsdag/policy.bin" "$C0,$TMP/nonexistent.bin" \
        "$(printf "$C0,%.0s" $(seq 16))$C0"; do
    expect_rc 2 $HSDAG place $S --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$bad_list"
    one_line "$TMP/err"
done
expect_rc 2 $HSDAG place $S --devices cpu-4gpu --method placeto --policy "$TMP/placeto/policy.bin,$TMP/placeto/policy.bin"
expect_grep "only HSDAG policies make an ensemble" "$TMP/err"
# the cost feature kind is train --graphs' default: --no-cost-features trains a policy without it, whose
# network differs (so it cannot join an ensemble with a default one); both flags at once are refused
expect_rc 0 $HSDAG train --graphs $A,$S --devices cpu-gpu --mem GPU=50% --no-cost-features --rounds 1 --out-dir "$TMP/nocost" --json
expect_rc 0 $HSDAG place $V --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$TMP/nocost/policy.bin" --json
expect_grep '"feasible": true' "$TMP/out"
expect_rc 2 $HSDAG place $S --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$C0,$TMP/nocost/policy.bin"
one_line "$TMP/err"; expect_grep "another network" "$TMP/err"
expect_rc 2 $HSDAG train --graphs $A,$S --devices cpu-gpu --cost-features --no-cost-features --out-dir "$TMP/y"
one_line "$TMP/err"; expect_grep "no-cost-features" "$TMP/err"
expect_rc 2 $HSDAG train $A --devices cpu-gpu --no-cost-features --out-dir "$TMP/y"
one_line "$TMP/err"
# --mem-also: each graph once more per cap (header, 2 targets + 2 rounds x 2 graphs per variant); the
# extra rows are labelled FILE@DEV=SIZE; a malformed value or an unknown device is refused with one line
expect_rc 0 $HSDAG train --graphs $A,$S --devices cpu-gpu --mem GPU=50% --mem-also GPU=30%,70% --mem-also GPU=40% --cost-features --rounds 2 --out-dir "$TMP/also" --json
n=$(wc -l < "$TMP/also/progress.csv"); [ "$n" -eq 25 ] && ok || bad "--mem-also: progress.csv has $n lines (want 25)"
for c in 30 70 40; do expect_grep "squeezenet1_1.onnx@GPU=$c%" "$TMP/also/progress.csv"; done
expect_grep "alexnet.onnx@GPU=30%" "$TMP/out"
expect_rc 0 $HSDAG place $V --devices cpu-gpu --mem GPU=50% --method hsdag --policy "$TMP/also/policy.bin" --json
expect_grep '"feasible": true' "$TMP/out"
for bad_also in GPU GPU= =30% "GPU=30%,,40%"; do
    expect_rc 2 $HSDAG train --graphs $A --mem-also "$bad_also" --out-dir "$TMP/y"
    one_line "$TMP/err"; expect_grep "mem-also" "$TMP/err"
done
expect_rc 2 $HSDAG train --graphs $A --mem-also XPU=30% --out-dir "$TMP/y"
one_line "$TMP/err"; expect_grep "XPU" "$TMP/err"
# many short sizes after a long device name (more bytes than the value itself once expanded)
expect_rc 2 $HSDAG train --graphs $A --mem-also longdevicename=1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9 --out-dir "$TMP/y"
one_line "$TMP/err"; expect_grep "longdevicename=1'" "$TMP/err"
expect_rc 2 $HSDAG train $A --graphs $A,$S
one_line "$TMP/err"; expect_grep "train --graphs LIST" "$TMP/err"
expect_rc 2 $HSDAG train --graphs $A --out "$TMP/y"
expect_grep "out-dir" "$TMP/err"
# the shipped policies (policies/hsdag/P.bin, found from the repository root) load and place; their
# zero-shot AlexNet placement is the one policies/hsdag/README.md shows
for P in cpu-gpu cpu-igpu cpu-4gpu; do
    expect_rc 0 $HSDAG place $A --devices $P --method hsdag --policy shipped --json
    expect_grep "policies/hsdag/$P.bin" "$TMP/out"
done
expect_rc 0 $HSDAG place $A --devices cpu-gpu --method hsdag --policy shipped --json
expect_grep '"latency_ms": 0.70582968' "$TMP/out"
expect_rc 0 $HSDAG place $A --devices cpu-igpu --method hsdag --policy shipped --json
expect_grep '"latency_ms": 4.75311' "$TMP/out"
# cpu-gpu ships an ensemble trained under a cap: with a binding --mem, all three members
expect_rc 0 $HSDAG place $A --devices cpu-gpu --mem GPU=50% --method hsdag --policy shipped --json
expect_grep "ensemble of 3 policies trained under a memory cap \(.*policies/hsdag/cpu-gpu.capped.0-2.bin\)" "$TMP/out"
# --policy with another method, a bad list
expect_rc 2 $HSDAG place $V --method heft --policy "$TMP/hsdag/policy.bin"
expect_rc 2 $HSDAG train --graphs , --out-dir "$TMP/x"
expect_rc 2 $HSDAG train --graphs $A,tests/data/onnx/missing.onnx --out-dir "$TMP/x"
one_line "$TMP/err"
finish
