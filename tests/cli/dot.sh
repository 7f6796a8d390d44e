# dot.sh - drawings that render: --dot of the largest bundled model (found by `hsdag info`) is the coarsened
# group graph and `dot -Tsvg` lays it out within 30 s of CPU, for a sensible placement and for a random one (the
# densest group graph); groups hold every op once; --dot-full draws every op; small graphs keep the op-level
# drawing. Not here: the DOT reader (tests/test_dot.c). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
if ! command -v dot >/dev/null 2>&1; then echo "dot.sh: skipped: no Graphviz dot"; finish; exit $?; fi
# the largest bundled graph
best=0; big=
for f in $(find tests/data -type f \( -name '*.onnx' -o -name '*.json' -o -name '*.txt' -o -name '*.xml' \
           -o -name '*.dot' \) -not -path '*/bad/*' -not -path '*human-experts*' | sort); do
    n=$("$HSDAG" info "$f" --json 2>/dev/null | sed -n 's/.*"graph_nodes": \([0-9]*\).*/\1/p')
    [ -n "$n" ] && [ "$n" -gt "$best" ] && best=$n && big=$f
done
echo "largest bundled model: $big ($best ops)" >&2
[ "$best" -gt 1500 ] && ok || bad "largest bundled model has $best ops"
for m in greedy-tarnawski heft random; do
    expect_rc 0 "$HSDAG" place "$big" --method "$m" --dot "$TMP/$m.dot" --quiet
    [ $? -eq 0 ] || continue
    g=$(grep -c '^  g[0-9]* \[label=' "$TMP/$m.dot")
    [ "$g" -ge 1 ] && [ "$g" -le 80 ] && ok || bad "$m: $g groups (want 1..80)"
    # every op is in exactly one group
    s=$(sed -n 's/^  g[0-9]* \[label="[^:]*: \([0-9]*\) ops*\\n.*/\1/p' "$TMP/$m.dot" | awk '{ s += $1 } END { print s }')
    [ "$s" = "$best" ] && ok || bad "$m: groups hold $s ops of $best"
    start=$(date +%s)
    # 30 s of CPU time (SIGXCPU past it), not of wall time, which a loaded machine stretches; the wall-clock
    # timeout only catches a hang that burns no CPU
    if (ulimit -t 30; timeout 600 dot -Tsvg "$TMP/$m.dot" -o "$TMP/$m.svg"); then ok; else
        bad "$m: dot -Tsvg did not finish within 30 s of CPU"
    fi
    echo "dot -Tsvg $m: $(($(date +%s) - start)) s" >&2
    expect_grep '<svg' "$TMP/$m.svg"
done
# --dot-full: every op
expect_rc 0 "$HSDAG" place "$big" --method heft --dot-full "$TMP/full.dot" --quiet
n=$(grep -c '^  n[0-9]* \[label=' "$TMP/full.dot"); [ "$n" -eq "$best" ] && ok || bad "--dot-full drew $n of $best ops"
# a small model keeps the op-level drawing under --dot
expect_rc 0 "$HSDAG" place tests/data/onnx/alexnet.onnx --method heft --dot "$TMP/small.dot"
n=$(grep -c '^  n[0-9]* \[label=' "$TMP/small.dot"); [ "$n" -eq 20 ] && ok || bad "alexnet --dot drew $n ops"
finish
