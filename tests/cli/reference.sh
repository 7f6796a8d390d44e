# reference.sh - the README's CLI reference is the option table's (`hsdag help --reference`, written by
# `make cli-reference`): a row added to tools/opt.c without regenerating the README fails here.
# Not here: the table's contents (walk.sh). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
if python3 scripts/cli-reference.py --check "$HSDAG" > "$TMP/check" 2>&1; then ok; else bad "$(cat "$TMP/check")"; fi
finish
