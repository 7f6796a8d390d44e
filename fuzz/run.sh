#!/bin/sh
# run.sh - runs each libFuzzer target for FUZZ_SECONDS on its seed corpus fuzz/corpus/<fmt> (and its dictionary
# fuzz/dict/<fmt>.dict), FUZZ_JOBS targets at a time; prints one result line per target: executions, exec/s,
# CPU seconds, coverage (cov = edges, ft = features), corpus size, and ok / FAILED with the log's tail.
# Not here: building the targets (make fuzz). Exits non-zero if any target finds a crash, leak or timeout.
# Usage: FUZZ_SECONDS=10 sh fuzz/run.sh build-fuzz/fuzz_onnx ...
#   FUZZ_JOBS=2            targets run at once (default 1)
#   FUZZ_CORPUS_DIR=DIR    keep each target's growing corpus in DIR/<fmt> across runs (default: a temp dir)
#   FUZZ_REPORT=FILE       append one markdown table row per target to FILE
#   FUZZ_ARTIFACTS=DIR     where crash/leak/timeout inputs are written (default: a temp dir, printed)
#   FUZZ_TIMEOUT=S         an input running longer than S s of wall time is a failure (default 10; libFuzzer
#                          counts wall time, so a fuzzer starved of CPU on a loaded machine needs more)
#   FUZZ_CPU_SECONDS=C     after the FUZZ_SECONDS run, fuzz again (same corpus, C - CPU so far wall seconds, at
#                          least 30) until the target has used C CPU seconds: libFuzzer's -max_total_time is
#                          wall time, which a loaded machine turns into a fraction of that in fuzzing
S=${FUZZ_SECONDS:-10}
C=${FUZZ_CPU_SECONDS:-0}
JOBS=${FUZZ_JOBS:-1}
ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT

run_one() {
    f=$1
    name=$(basename "$f" | sed 's/^fuzz_//')
    if [ -n "$FUZZ_CORPUS_DIR" ]; then work="$FUZZ_CORPUS_DIR/$name"; else work="$ROOT/corpus-$name"; fi
    mkdir -p "$work"
    [ -d "fuzz/corpus/$name" ] && cp -r fuzz/corpus/"$name"/. "$work"/ 2>/dev/null
    art=${FUZZ_ARTIFACTS:-$ROOT/artifacts}/$name/
    mkdir -p "$art"
    dict=""; [ -f "fuzz/dict/$name.dict" ] && dict="-dict=fuzz/dict/$name.dict"
    log="$ROOT/$name.log"
    # each run in a subshell, so that `times` reports this fuzzer's CPU time alone (on a loaded machine far
    # below its wall budget); with FUZZ_CPU_SECONDS, rerun on the grown corpus until the CPU total reaches it
    cpu=0; wall=0; budget=$S; execs_sum=0; rounds=0; : >"$log"
    while [ "$rounds" -lt 20 ]; do
        rounds=$((rounds + 1))
        one=$( (
            "$f" $dict -max_total_time="$budget" -max_len=65536 -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" \
                -print_final_stats=1 -artifact_prefix="$art" "$work" >"$log.1" 2>&1
            echo $? >"$ROOT/$name.rc"
            times
        ) | tail -n 1 | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] } printf "%.1f", t }')
        cat "$log.1" >>"$log"
        n=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log.1" | tail -n 1 | sed -n 's/^#\([0-9]*\).*/\1/p')
        execs_sum=$((execs_sum + ${n:-0}))
        cpu=$(awk -v a="$cpu" -v b="${one:-0}" 'BEGIN { printf "%.1f", a + b }')
        wall=$((wall + budget))
        [ "$(cat "$ROOT/$name.rc")" = 0 ] || break
        budget=$(awk -v c="$C" -v u="$cpu" 'BEGIN { r = c - u; if (r <= 0) print 0; else if (r < 30) print 30; else printf "%d", r + 0.5 }')
        [ "$budget" -gt 0 ] || break
    done
    if [ "$(cat "$ROOT/$name.rc")" = 0 ]; then res=ok; else res=FAILED; fi
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
    [ -n "$done_line" ] || done_line=$(grep -E '^#[0-9]+[[:space:]]+(pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1)
    execs=$execs_sum; [ "$execs" -gt 0 ] || execs=$(printf '%s\n' "$done_line" | sed -n 's/^#\([0-9]*\).*/\1/p')
    cov=$(printf '%s\n' "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    ft=$(printf '%s\n' "$done_line" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
    corp=$(printf '%s\n' "$done_line" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
    eps=$(grep -E 'stat::average_exec_per_sec' "$log" | sed 's/.*: *//' | tail -n 1)
    [ -n "$eps" ] || eps=$(printf '%s\n' "$done_line" | sed -n 's/.*exec\/s: \([0-9]*\).*/\1/p')
    printf 'fuzz %s: %s (%s s, %s s CPU, %s execs, %s exec/s, cov %s, ft %s, corpus %s)\n' "$name" "$res" "$wall" \
        "${cpu:-?}" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}"
    if [ "$res" = FAILED ]; then
        tail -n 40 "$log"
        echo "fuzz $name: inputs kept in $art"; ls "$art"
        touch "$ROOT/failed"
    fi
    [ -n "$FUZZ_REPORT" ] && printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$wall" "${cpu:-?}" \
        "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$res" >>"$FUZZ_REPORT"
    return 0
}

running=0
for f in "$@"; do
    if [ "$JOBS" -le 1 ]; then
        run_one "$f"
    else
        run_one "$f" &
        running=$((running + 1))
        if [ "$running" -ge "$JOBS" ]; then
            wait
            running=0
        fi
    fi
done
wait
if [ -e "$ROOT/failed" ]; then
    [ -z "$FUZZ_ARTIFACTS" ] && cp -r "$ROOT/artifacts" fuzz-artifacts 2>/dev/null && echo "fuzz: failing inputs in fuzz-artifacts/"
    exit 1
fi
exit 0
