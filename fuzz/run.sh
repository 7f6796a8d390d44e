#!/bin/sh
# run.sh - smoke-runs each libFuzzer target for FUZZ_SECONDS on its seed corpus fuzz/corpus/<fmt>.
# Not here: building the targets (make fuzz). Exits non-zero if any target finds a crash or leak.
# Usage: FUZZ_SECONDS=10 sh fuzz/run.sh build-fuzz/fuzz_onnx ...
S=${FUZZ_SECONDS:-10}
rc=0
for f in "$@"; do
    name=$(basename "$f" | sed 's/^fuzz_//')
    work=$(mktemp -d)
    [ -d "fuzz/corpus/$name" ] && cp -r fuzz/corpus/"$name"/. "$work"/ 2>/dev/null
    dict=""; [ -f "fuzz/dict/$name.dict" ] && dict="-dict=fuzz/dict/$name.dict"
    if "$f" $dict -max_total_time="$S" -max_len=65536 -rss_limit_mb=2048 -timeout=10 "$work" >"$work.log" 2>&1; then
        echo "fuzz $name: ok ($(grep -c . "$work.log") log lines)"
    else
        echo "fuzz $name: FAILED"; tail -n 30 "$work.log"; rc=1
    fi
    rm -rf "$work" "$work.log"
done
exit $rc
