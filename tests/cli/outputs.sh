# outputs.sh - the output-path rules of every command, for every output option of the table (`hsdag help
# --table`, kinds out and dir) and convert's OUT: checked before any work (a long run fails at once), never a
# temp file named in a message, a directory / read-only file / symlink out of the directory / missing
# directory refused with exit 2, the same file twice or an input as output refused; no temp file left
# behind; run directories of train and cluster train refused when not empty unless --resume or --force; the
# state a kill -9 during the first checkpoint write leaves (made by hand, and by a real kill through strace)
# resumes from the beginning and ends as the uninterrupted run; its temp file goes.
# Not here: the atomic write itself (tests/test_file.c). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
A=tests/data/onnx/alexnet.onnx
base_profile
base() { base_cmd "$@"; }
no_temp_named() { # FILE: no temp file name in the message
    if grep -Eq 'hsdag-tmp|\.tmp[0-9]' "$1"; then bad "a temp file is named: $(cat "$1")"; else ok; fi
}
no_temp_left() { # DIR
    n=$(ls -a "$1" | grep -c 'hsdag-tmp\|\.tmp[0-9]'); [ "$n" -eq 0 ] && ok || bad "$n temp files left in $1"
}
same_run() { # DIR REF: the run in DIR ended as the uninterrupted one in REF (result file, curve but wall time)
    for fl in best_placement.json policy.bin; do
        [ -e "$2/$fl" ] || continue
        cmp -s "$1/$fl" "$2/$fl" && ok || bad "$1/$fl differs from the uninterrupted run's"
    done
    if cmp -s "$1/curve.csv" "$2/curve.csv" || [ "$(sed 's/,[^,]*$//' "$1/curve.csv")" = "$(sed 's/,[^,]*$//' "$2/curve.csv")" ]
    then ok; else bad "$1/curve.csv differs from the uninterrupted run's"; fi
}
STRACE=$(command -v strace) # the kill -9 test needs it (scripts/install-deps installs it) and ptrace
if [ -n "$STRACE" ] && ! "$STRACE" -f -o /dev/null true 2>/dev/null; then STRACE=""; fi
[ -n "$STRACE" ] || echo "outputs.sh: no working strace: the real kill -9 test is skipped" >&2
"$HSDAG" help --table > "$TMP/table"
mkdir -p "$TMP/ro" "$TMP/outside"
echo keep > "$TMP/ro/readonly.json"; chmod 0444 "$TMP/ro/readonly.json"
echo victim > "$TMP/outside/victim"
ln -s "$TMP/outside/victim" "$TMP/ro/link.json"
awk -F'\t' '$3 == "out" { print $1 "\t" $7 }' "$TMP/table" > "$TMP/outs"
while IFS="$(printf '\t')" read -r opt cmds; do
    echo "$cmds" | tr ',' '\n' > "$TMP/cmds"
    while read -r c; do
        b=$(base "$c")
        # shellcheck disable=SC2086
        set -- $b
        for bad_path in /no/such/dir/x.json "$TMP" "$TMP/ro/readonly.json" "$TMP/ro/link.json"; do
            expect_rc 2 "$HSDAG" "$@" --"$opt" "$bad_path"
            one_line "$TMP/err"; no_temp_named "$TMP/err"
            expect_grep "$opt: " "$TMP/err"
        done
        expect_grep "symbolic link out of its directory" "$TMP/err"
        # the same file for two outputs, and an input as an output
        if [ "$opt" != out ] && awk -F'\t' -v c="$c" '$1 == "out" && ("," $7 ",") ~ ("," c ",")' "$TMP/table" | grep -q .; then
            expect_rc 2 "$HSDAG" "$@" --out "$TMP/same.json" --"$opt" "$TMP/same.json"
            expect_grep "name the same file" "$TMP/err"
        fi
        case "$c" in info|convert|simulate|place|bound|compare|train)
            cp $A "$TMP/model.onnx"
            set -- $(echo "$b" | sed "s|$A|$TMP/model.onnx|")
            expect_rc 2 "$HSDAG" "$@" --"$opt" "$TMP/model.onnx"
            expect_grep "is also the input" "$TMP/err"
            cmp -s $A "$TMP/model.onnx" && ok || bad "$c --$opt overwrote its input"
        esac
    done < "$TMP/cmds"
done < "$TMP/outs"
# nothing was touched
[ "$(cat "$TMP/ro/readonly.json")" = keep ] && ok || bad "a read-only file was replaced"
[ "$(stat -c %a "$TMP/ro/readonly.json")" = 444 ] && ok || bad "a read-only file changed mode"
[ "$(cat "$TMP/outside/victim")" = victim ] && ok || bad "a symlink out of the directory was followed"
# convert's OUT follows the same rules
for bad_path in /no/such/dir/x.json "$TMP/ro/readonly.json" "$TMP/ro/link.json"; do
    expect_rc 2 "$HSDAG" convert $A "$bad_path"; one_line "$TMP/err"; no_temp_named "$TMP/err"
done
expect_rc 2 "$HSDAG" convert $A "$TMP/" ; one_line "$TMP/err"

# checked before the work: a run that would take minutes fails at once, within 10 s of CPU time (killed past
# it, so exit 137: a wall-clock bound would flake on a loaded machine); the wall timeout only catches a hang
CPU10="ulimit -t 10; exec timeout 600"
expect_rc 2 sh -c "$CPU10 '$HSDAG' place $A --method local-search --max-evals 1000000000 --time-limit 1000 --out /no/such/dir/p.json"
expect_rc 2 sh -c "$CPU10 '$HSDAG' train $A --episodes 10000000 --out-dir '$TMP/long' --trace /no/such/dir/t.json"
[ ! -e "$TMP/long" ] && ok || bad "train created its run directory before refusing an output"
expect_rc 2 sh -c "$CPU10 '$HSDAG' cluster compare --markdown /no/such/dir/t.md"

# successful writes leave no temp file, keep a replaced file's mode
mkdir -p "$TMP/w"; echo old > "$TMP/w/p.json"; chmod 0640 "$TMP/w/p.json"
expect_rc 0 "$HSDAG" place $A --method heft --out "$TMP/w/p.json" --affinity "$TMP/w/a.json" --split "$TMP/w/s.json" \
    --dot "$TMP/w/p.dot" --dot-full "$TMP/w/f.dot" --trace "$TMP/w/t.json"
[ "$(stat -c %a "$TMP/w/p.json")" = 640 ] && ok || bad "replacing p.json changed its mode"
expect_grep '"format": "hsdag-placement"' "$TMP/w/p.json"
no_temp_left "$TMP/w"
# a symlink within the directory is followed: the target is replaced, the link stays
ln -s p.json "$TMP/w/l.json"
expect_rc 0 "$HSDAG" place $A --method cpu-only --out "$TMP/w/l.json"
[ -L "$TMP/w/l.json" ] && ok || bad "the link was replaced"
expect_grep '"CPU"' "$TMP/w/p.json"
# one output may go to standard output, not two, not with --json
expect_rc 0 "$HSDAG" place $A --method heft --out -
expect_grep '"format": "hsdag-placement"' "$TMP/out"
expect_rc 2 "$HSDAG" place $A --method heft --out - --json
expect_rc 2 "$HSDAG" place $A --method heft --out - --affinity -

# run directories: not empty -> refused unless --resume or --force
for c in train "cluster train"; do
    b=$(base "$c" | sed 's/ --out-dir .*//'); set -- $b
    d="$TMP/rd_$(echo "$c" | tr ' ' _)"
    expect_rc 0 "$HSDAG" "$@" --out-dir "$d"
    cp "$d/checkpoint.bin" "$TMP/ck.bin"
    expect_rc 2 "$HSDAG" "$@" --out-dir "$d"
    one_line "$TMP/err"; expect_grep "is not empty .*--resume .*--force" "$TMP/err"
    cmp -s "$d/checkpoint.bin" "$TMP/ck.bin" && ok || bad "$c overwrote a checkpoint it refused"
    expect_rc 0 "$HSDAG" "$@" --out-dir "$d" --force
    expect_rc 2 "$HSDAG" "$@" --resume "$d" --force
    expect_rc 2 "$HSDAG" "$@" --resume "$d" --out-dir "$d"
    expect_rc 2 "$HSDAG" "$@" --out-dir "$TMP/ro/readonly.json"
    expect_grep "not a directory" "$TMP/err"
    # the state a kill -9 during the first checkpoint write leaves: no checkpoint, a dead writer's temp file,
    # the curve written just before: --resume starts the run over and ends as the uninterrupted run
    k="$TMP/killed_$(echo "$c" | tr ' ' _)"; mkdir -p "$k"
    sh -c 'exit 0' & dead=$!; wait $dead
    echo half > "$k/.checkpoint.bin~hsdag-tmp-$dead-AbC123"
    echo "episode" > "$k/curve.csv"
    expect_rc 0 "$HSDAG" "$@" --resume "$k"
    one_line "$TMP/err"; expect_grep "no checkpoint yet .*starting it from the beginning" "$TMP/err"
    no_temp_left "$k"
    same_run "$k" "$d"
    # a directory without a checkpoint holding files a run does not write is still refused
    f="$TMP/foreign_$(echo "$c" | tr ' ' _)"; mkdir -p "$f"; echo notes > "$f/notes.txt"
    expect_rc 2 "$HSDAG" "$@" --resume "$f"
    one_line "$TMP/err"; expect_grep "no checkpoint.bin to resume from .*--force" "$TMP/err"
    expect_rc 2 "$HSDAG" "$@" --resume "$TMP/no_such_run"
    # a real kill -9, at the rename of the first checkpoint (its temp file complete, not yet in place)
    if [ -n "$STRACE" ]; then
        r="$TMP/kill9_$(echo "$c" | tr ' ' _)"
        case "$c" in train) nth=2 ;; *) nth=3 ;; esac # renames before it: curve (train); curve, policy
        expect_rc 137 "$STRACE" -f -o /dev/null -e trace=rename -e inject=rename:signal=KILL:when=$nth "$HSDAG" "$@" \
            --out-dir "$r"
        [ ! -e "$r/checkpoint.bin" ] && [ -e "$r/curve.csv" ] && ok || bad "$c: kill -9 not at the first checkpoint"
        expect_rc 0 "$HSDAG" "$@" --resume "$r"
        no_temp_left "$r"
        same_run "$r" "$d"
    fi
    # only stale temp files: the directory counts as empty
    s="$TMP/stale_$(echo "$c" | tr ' ' _)"; mkdir -p "$s"
    echo half > "$s/.curve.csv~hsdag-tmp-$dead-XyZ789"
    expect_rc 0 "$HSDAG" "$@" --out-dir "$s"
    no_temp_left "$s"
    [ -s "$s/checkpoint.bin" ] && ok || bad "no checkpoint after the restart"
done
finish
