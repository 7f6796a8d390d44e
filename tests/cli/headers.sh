# headers.sh - every public header's usage example compiles: each "Usage" block of include/hsdag/*.h is
#   extracted into a function body (a few inputs it may use are the function's parameters) and compiled.
# Not here: running the examples (their inputs are not real files); the library's behaviour.
# Entry points: run by tests/run.sh.
. tests/cli_lib.sh
n=0
for h in include/hsdag/*.h; do
    name=$(basename "$h" .h)
    c="$TMP/ex_$name.c"
    # the block from the "Usage" line to the first empty comment line or the end of the comment
    awk '/^ \* Usage/ { on = 1; next } on && (/^ \*$/ || /\*\//) { exit } on { print }' "$h" |
        sed -e 's/^ \*   //' -e 's/^ \* //' > "$TMP/body"
    if [ ! -s "$TMP/body" ]; then bad "$h: no usage example"; continue; fi
    {
        echo '#include <hsdag/hsdag.h>'
        echo '#include <stdio.h>'
        echo '#include <string.h>'
        echo 'int my_action(const hsdag_cluster_obs *o);'
        echo 'int my_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible, hsdag_err *e);'
        echo 'extern void *my_ctx;'
        echo "void example_$name(hsdag_graph *g, hsdag_devices *devs, hsdag_cluster *env, hsdag_learn *L,"
        echo "    const void *buf, size_t len, int32_t v, int32_t k, int32_t a, int32_t b);"
        echo "void example_$name(hsdag_graph *g, hsdag_devices *devs, hsdag_cluster *env, hsdag_learn *L,"
        echo "    const void *buf, size_t len, int32_t v, int32_t k, int32_t a, int32_t b)"
        echo '{'
        echo '{'
        cat "$TMP/body"
        echo '}'
        echo '}'
    } > "$c"
    if cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic -Werror -Wno-unused-parameter \
          -Wno-unused-variable -Wno-unused-but-set-variable -Iinclude -c "$c" -o "$TMP/ex_$name.o" 2> "$TMP/cc.err"; then
        ok; n=$((n + 1))
    else
        bad "$h: the usage example does not compile: $(grep -m 3 error "$TMP/cc.err" | tr '\n' ' ')"
    fi
done
echo "headers.sh: $n usage examples compile"
finish
