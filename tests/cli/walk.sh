# walk.sh - walks every command (from `hsdag --help`) x every option of the table (`hsdag help --table`):
# --help / -h exit 0 and list exactly the command's options; an unknown option, an option of another
# command, a missing value, a value out of range or not among the choices exit 2 with one line in the one
# wording; every common option with a valid value exits 0 (and --json prints a schema); a result that cannot
# be written (standard output on a full disk) exits 1.
# Not here: output-path rules (outputs.sh), JSON keys (schema.sh). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
A=tests/data/onnx/alexnet.onnx
base_profile
printf 'node,device,ms\n' > "$TMP/empty.csv"
base() { base_cmd "$@"; }
# good OPT: a valid value for a common option
good() {
    case "$1" in
    seed) echo 5 ;; devices) echo cpu-4gpu ;; semantics) echo concurrent ;; costs) echo roofline ;;
    profile) echo "$TMP/empty.csv" ;; repeat) echo 3 ;; save-dir) echo "$TMP/save" ;;
    out|affinity|split|dot|dot-full|trace|markdown|csv|device-set|kernels) mktemp -u "$TMP/o.XXXXXX" ;;
    esac
}
# the options every command either takes with one meaning or refuses
COMMON="json quiet seed devices semantics costs profile out affinity split dot dot-full trace out-dir resume force repeat save-dir markdown"
"$HSDAG" --help > "$TMP/help"
sed -n '/^commands:/,/^$/p' "$TMP/help" | sed -n 's/^  \(.\{16\}\) .*/\1/p' | sed 's/ *$//' > "$TMP/cmds"
[ "$(wc -l < "$TMP/cmds")" -ge 11 ] && ok || bad "hsdag --help lists $(wc -l < "$TMP/cmds") commands"
"$HSDAG" help --table > "$TMP/table"
while read -r c; do
    set -- $c
    expect_rc 0 "$HSDAG" "$@" --help
    expect_grep "^usage: hsdag $c" "$TMP/out"
    cp "$TMP/out" "$TMP/cmdhelp"
    expect_rc 0 "$HSDAG" "$@" -h
    expect_rc 0 "$HSDAG" help "$@"
    expect_rc 2 "$HSDAG" "$@" --no-such-option
    one_line "$TMP/err"; expect_grep "^hsdag $c: unknown option '--no-such-option'" "$TMP/err"
    expect_rc 2 "$HSDAG" "$@" -x
    one_line "$TMP/err"
    while IFS="$(printf '\t')" read -r name arg kind lo hi choices cmds; do
        case ",$cmds," in *",$c,"*) takes=1 ;; *) takes=0 ;; esac
        if [ $takes -eq 0 ]; then
            grep -q -- "^  --$name\( \|$\)" "$TMP/cmdhelp" && bad "$c --help lists --$name, which it does not take" || ok
            case " $COMMON " in *" $name "*) ;; *) continue ;; esac
            expect_rc 2 "$HSDAG" "$@" --"$name" 1
            one_line "$TMP/err"; expect_grep "does not apply" "$TMP/err"
            continue
        fi
        grep -q -- "^  --$name\( \|$\)" "$TMP/cmdhelp" && ok || bad "$c --help does not list --$name"
        [ "$arg" = - ] && continue
        expect_rc 2 "$HSDAG" "$@" --"$name"
        one_line "$TMP/err"; expect_grep "^hsdag $c: --$name needs a value \($arg\)" "$TMP/err"
        case "$kind" in
        int|number)
            w=$([ "$kind" = int ] && echo "an integer" || echo "a number")
            big=$([ "$kind" = int ] && awk -v h="$hi" 'BEGIN { printf "%.0f", h * 10 + 10 }' || echo 1e99)
            expect_rc 2 "$HSDAG" "$@" --"$name" "$big"
            one_line "$TMP/err"; expect_grep "^hsdag $c: --$name '$big' is not $w in \[" "$TMP/err"
            expect_rc 2 "$HSDAG" "$@" --"$name" 12abc
            expect_grep "^hsdag $c: --$name '12abc' is not $w in \[" "$TMP/err" ;;
        choice)
            expect_rc 2 "$HSDAG" "$@" --"$name" nope
            one_line "$TMP/err"; expect_grep "^hsdag $c: --$name 'nope' is not " "$TMP/err" ;;
        esac
    done < "$TMP/table"
    # every common option with a valid value: exit 0 (profile's runs take ONNX Runtime seconds each: they are
    # tests/cli/profile.sh's and schema.sh's)
    [ "$c" = profile ] && continue
    b=$(base "$c")
    [ -n "$b" ] || { bad "walk.sh has no invocation of '$c'"; continue; }
    set -- $b
    expect_rc 0 "$HSDAG" "$@"
    for o in json quiet seed devices semantics costs profile out affinity split dot dot-full trace save-dir markdown repeat \
             csv device-set kernels; do
        awk -F'\t' -v o="$o" -v c="$c" '$1 == o && ("," $7 ",") ~ ("," c ",")' "$TMP/table" | grep -q . || continue
        set -- $(base "$c")
        v=$(good "$o")
        if [ -n "$v" ]; then expect_rc 0 "$HSDAG" "$@" --"$o" "$v"; else expect_rc 0 "$HSDAG" "$@" --"$o"; fi
        [ "$o" = json ] && expect_grep '^\{"schema": "hsdag-' "$TMP/out"
        case "$o" in out|affinity|split|dot|dot-full|trace|markdown|csv|device-set|kernels)
            [ -s "$v" ] && ok || bad "$c --$o wrote nothing" ;; esac
    done
    # a result that cannot be written: exit 1, one line
    set -- $(base "$c")
    [ "$c" = convert ] && set -- convert $A - --to json
    "$HSDAG" "$@" > /dev/full 2> "$TMP/err"; rc=$?
    [ $rc -eq 1 ] && ok || bad "$c > /dev/full: exit $rc (want 1)"
    one_line "$TMP/err"
done < "$TMP/cmds"
# the dispatcher itself
expect_rc 2 "$HSDAG"
expect_rc 2 "$HSDAG" nonsense
expect_rc 2 "$HSDAG" cluster nonsense
expect_rc 0 "$HSDAG" --help
expect_rc 0 "$HSDAG" help
expect_rc 0 "$HSDAG" cluster --help
finish
