# install.sh - the installed library is fit to link against: make install into a temporary prefix, then a
#   small program built through pkg-config, shared and static, runs; only public hsdag_* symbols are exported.
# Not here: the library's behaviour (the unit tests). Skipped for sanitizer builds (their objects need the
#   sanitizer runtime at link time). Entry points: run by tests/run.sh.
. tests/cli_lib.sh
BUILD=$(dirname "$HSDAG")
if nm "$BUILD/libhsdag.a" 2>/dev/null | grep -q "__asan\|__ubsan"; then
    echo "install.sh: sanitizer build, skipped"; finish; exit $?
fi
P="$TMP/prefix"
expect_rc 0 make --no-print-directory -s install BUILD="$BUILD" PREFIX="$P"
ver=$(sed -n 's/^#define HSDAG_VERSION "\(.*\)"/\1/p' include/hsdag/common.h)
major=${ver%%.*}
for f in "lib/libhsdag.a" "lib/libhsdag.so.$ver" "lib/libhsdag.so.$major" "lib/libhsdag.so" \
         "include/hsdag/hsdag.h" "lib/pkgconfig/hsdag.pc" "bin/hsdag" "share/hsdag/policies/pacml/beta_A.bin" \
         "share/hsdag/scripts/ort-profile.js"; do
    if [ -e "$P/$f" ]; then ok; else bad "missing $P/$f"; fi
done
# the SONAME is libhsdag.so.MAJOR, and libhsdag.so.MAJOR -> the versioned file
expect_rc 0 readelf -d "$P/lib/libhsdag.so.$ver"
expect_grep "SONAME.*\[libhsdag.so.$major\]" "$TMP/out"
[ "$(readlink "$P/lib/libhsdag.so.$major")" = "libhsdag.so.$ver" ] && ok || bad "libhsdag.so.$major is not a link to .so.$ver"
# exported symbols: hsdag_* only, each declared in a public header
nm -D --defined-only "$P/lib/libhsdag.so" | awk '{print $3}' > "$TMP/syms"
n=$(wc -l < "$TMP/syms")
[ "$n" -gt 100 ] && ok || bad "only $n exported symbols"
if grep -v '^hsdag_' "$TMP/syms" > "$TMP/other"; then bad "non-hsdag symbols exported: $(head -5 "$TMP/other" | tr '\n' ' ')"; else ok; fi
priv=""
for s in $(cat "$TMP/syms"); do grep -qw "$s" include/hsdag/*.h || priv="$priv $s"; done
[ -z "$priv" ] && ok || bad "exported but not in a public header:$priv"
# a small program through the umbrella header, several layers deep
cat > "$TMP/prog.c" <<'PROG'
#include <hsdag/hsdag.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    hsdag_err e = {0};
    hsdag_gb *b = hsdag_gb_create();
    int32_t x = hsdag_gb_add_node(b, "x", "Parameter"), c = hsdag_gb_add_node(b, "conv", "Conv");
    int64_t dims[4] = {1, 64, 56, 56};
    hsdag_gb_add_output(b, c, HSDAG_DT_F32, 4, dims);
    hsdag_gb_set_flops(b, c, 2e9);
    hsdag_gb_add_edge(b, x, c, 802816.0);
    hsdag_graph *g = NULL;
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    if (hsdag_gb_finish(b, &g, &e) < 0 || hsdag_devices_preset(&d, "cpu-gpu", g, &e) < 0 ||
        hsdag_place_problem_create(&p, g, d, NULL, &e) < 0 || hsdag_learn_register_methods(&e) < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    int32_t dev[2];
    hsdag_place_opts o = hsdag_place_opts_default();
    hsdag_place_result r;
    if (hsdag_place_run(p, "heft", &o, dev, &r, &e) < 0 || !hsdag_place_method_find("hsdag")) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    printf("hsdag %s: heft %.6f ms\n", HSDAG_VERSION, r.latency_s * 1e3);
    hsdag_place_problem_free(p);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
    hsdag_gb_free(b);
    return 0;
}
PROG
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
expect_rc 0 pkg-config --exists hsdag
expect_rc 0 pkg-config --modversion hsdag
expect_grep "^$ver\$" "$TMP/out"
# shared: against libhsdag.so.MAJOR
expect_rc 0 sh -c "cc -std=c11 -o '$TMP/prog_shared' '$TMP/prog.c' \$(pkg-config --cflags --libs hsdag)"
expect_rc 0 env LD_LIBRARY_PATH="$P/lib" "$TMP/prog_shared"
expect_grep "^hsdag $ver: heft " "$TMP/out"
expect_rc 0 env LD_LIBRARY_PATH="$P/lib" ldd "$TMP/prog_shared"
expect_grep "libhsdag.so.$major => $P/lib/libhsdag.so.$major" "$TMP/out"
# static: libhsdag.a with everything pkg-config --static lists (its dependencies stay shared: Debian ships
# no static METIS or graphviz)
expect_rc 0 pkg-config --static --libs hsdag
libs=$(sed 's/-lhsdag/-Wl,-Bstatic -lhsdag -Wl,-Bdynamic/' "$TMP/out")
expect_rc 0 sh -c "cc -std=c11 -o '$TMP/prog_static' '$TMP/prog.c' \$(pkg-config --cflags hsdag) $libs"
expect_rc 0 "$TMP/prog_static"
expect_grep "^hsdag $ver: heft " "$TMP/out"
if ldd "$TMP/prog_static" | grep -q libhsdag; then bad "prog_static links libhsdag.so"; else ok; fi
finish
