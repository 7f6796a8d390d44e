/* test_measure.c - the measurement oracle: the command contract (words, quotes, placeholders, the appended
 *   path), runs without a shell, the memo of measured placements, retries, timeouts with the process group
 *   killed, and allocation failures.
 * Not here: the CLI's options (tests/cli/train.sh, which also checks that a quoted --out cannot inject).
 * Entry points: main. */
#include "check.h"
#include "hsdag/measure.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static hsdag_graph *tiny(void)
{
    hsdag_gb *b = hsdag_gb_create();
    int32_t x = hsdag_gb_add_node(b, "x", "Parameter"), y = hsdag_gb_add_node(b, "y", "Relu");
    hsdag_gb_add_edge(b, x, y, 64);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    hsdag_gb_finish(b, &g, &e);
    hsdag_gb_free(b);
    return g;
}

/* argv of cmd with path P joined by '|' (or the status) */
static int words(const char *cmd, char *out, size_t cap)
{
    hsdag_measure_config c = hsdag_measure_config_default();
    c.cmd = cmd;
    c.path = "P";
    hsdag_measure *m = NULL;
    hsdag_err e = {0};
    int rc = hsdag_measure_create(&m, &c, NULL, NULL, &e);
    out[0] = 0;
    if (rc < 0) return rc;
    int32_t n = 0;
    const char *const *v = hsdag_measure_argv(m, &n);
    for (int32_t i = 0; i < n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", i ? "|" : "", v[i]);
    }
    CHECK(v[n] == NULL);
    hsdag_measure_free(m);
    return 0;
}

static void test_words(void)
{
    static const struct {
        const char *cmd, *want;
    } ok[] = {
        {"a b   c", "a|b|c|P"},
        {"python3 x.py --placement={placement} --again {}", "python3|x.py|--placement=P|--again|P"},
        {"sh -c 'echo \"hi there\"; exit 0'", "sh|-c|echo \"hi there\"; exit 0|P"},
        {"a \"b c\" d\\ e 'f'\"g\"", "a|b c|d e|fg|P"},
        {"a \"x\\\"y\\\\z\" 'p\\q'", "a|x\"y\\z|p\\q|P"},
        {"echo 0.5 # not a comment", "echo|0.5|#|not|a|comment|P"},
        {"cat {placement}{placement}", "cat|PP"},
    };
    char got[512];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        CHECK_EQ_INT(words(ok[i].cmd, got, sizeof got), 0);
        if (strcmp(got, ok[i].want)) fprintf(stderr, "words(%s) = %s, want %s\n", ok[i].cmd, got, ok[i].want);
        CHECK(strcmp(got, ok[i].want) == 0);
    }
    const char *bad[] = {"", "   ", "echo 'x", "echo \"x", "echo x\\"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(words(bad[i], got, sizeof got), HSDAG_EINVAL);
    hsdag_measure_config c = hsdag_measure_config_default();
    hsdag_measure *m = NULL;
    hsdag_err e = {0};
    c.cmd = "true";
    CHECK_EQ_INT(hsdag_measure_create(&m, &c, NULL, NULL, &e), HSDAG_EINVAL); /* no path */
    c.path = "p";
    c.timeout_s = 0;
    CHECK_EQ_INT(hsdag_measure_create(&m, &c, NULL, NULL, &e), HSDAG_EINVAL);
    CHECK(m == NULL);
}

static void test_runs(void)
{
    hsdag_graph *g = tiny();
    hsdag_devices *d = NULL;
    hsdag_err e = {0};
    CHECK(g != NULL);
    CHECK_EQ_INT(hsdag_devices_preset(&d, "cpu-gpu", g, &e), 0);
    if (!g || !d) return;
    char dir[] = "/tmp/hsdag_test_measure_XXXXXX", path[256], mark[256], cmd[1024];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/p l'a;c e.json", dir);
    snprintf(mark, sizeof mark, "%s/mark", dir);
    int32_t dev[2] = {0, 1};
    double lat = 0;
    int feas = 0;
    /* the placement file arrives as one argument, its contents written before the run */
    hsdag_measure_config c = hsdag_measure_config_default();
    c.cmd = "sh -c 'grep -q \"\\\"y\\\": \\\"GPU\\\"\" \"$0\" && echo measured 0.00125 s' {placement}";
    c.path = path;
    hsdag_measure *m = NULL;
    CHECK_EQ_INT(hsdag_measure_create(&m, &c, g, d, &e), 0);
    if (m) {
        int rc = hsdag_measure_eval(m, dev, &lat, &feas, &e);
        if (rc) fprintf(stderr, "%s\n", e.msg);
        CHECK_EQ_INT(rc, 0);
        CHECK(lat == 0.00125 && feas == 1);
    }
    hsdag_measure_free(m);
    /* the memo: a placement measured before is not run again (the command counts its runs in mark); a
     * failed run is not remembered; without the memo every evaluation runs */
    snprintf(cmd, sizeof cmd, "sh -c 'echo x >> \"$1\"; wc -l < \"$1\"' x %s", mark);
    for (int memo = 1; memo >= 0; memo--) {
        unlink(mark);
        c.cmd = cmd;
        c.memo = memo;
        CHECK_EQ_INT(hsdag_measure_create(&m, &c, g, d, &e), 0);
        if (!m) continue;
        int32_t other[2] = {1, 1};
        double l1 = 0, l2 = 0, l3 = 0, l4 = 0;
        CHECK_EQ_INT(hsdag_measure_eval(m, dev, &l1, &feas, &e), 0);
        CHECK_EQ_INT(hsdag_measure_eval(m, other, &l2, &feas, &e), 0);
        CHECK_EQ_INT(hsdag_measure_eval(m, dev, &l3, &feas, &e), 0);
        CHECK_EQ_INT(hsdag_measure_eval(m, other, &l4, &feas, &e), 0);
        int64_t runs = -1, repeats = -1;
        hsdag_measure_counts(m, &runs, &repeats);
        if (memo) {
            CHECK(l1 == 1 && l2 == 2 && l3 == 1 && l4 == 2 && feas == 1); /* the first latencies again */
            CHECK(runs == 2 && repeats == 2);
        } else {
            CHECK(l1 == 1 && l2 == 2 && l3 == 3 && l4 == 4);
            CHECK(runs == 4 && repeats == 0);
        }
        hsdag_measure_free(m);
    }
    c.memo = 1;
    /* retries: the first attempt fails, the second succeeds */
    snprintf(cmd, sizeof cmd, "sh -c 'if [ -e \"$1\" ]; then echo 0.25; else touch \"$1\"; exit 1; fi' x %s",
             mark);
    c.cmd = cmd;
    c.retries = 1;
    CHECK_EQ_INT(hsdag_measure_create(&m, &c, g, d, &e), 0);
    if (m) {
        CHECK_EQ_INT(hsdag_measure_eval(m, dev, &lat, &feas, &e), 0);
        CHECK(lat == 0.25);
    }
    hsdag_measure_free(m);
    /* no retries left: the exit status is reported */
    unlink(mark);
    c.retries = 0;
    CHECK_EQ_INT(hsdag_measure_create(&m, &c, g, d, &e), 0);
    if (m) {
        CHECK_EQ_INT(hsdag_measure_eval(m, dev, &lat, &feas, &e), HSDAG_EEXTERNAL);
        CHECK(strstr(e.msg, "exit status 1") != NULL);
        unlink(mark); /* and a failure is not remembered: the same placement runs (and fails) again */
        CHECK_EQ_INT(hsdag_measure_eval(m, dev, &lat, &feas, &e), HSDAG_EEXTERNAL);
        int64_t runs = -1, repeats = -1;
        hsdag_measure_counts(m, &runs, &repeats);
        CHECK(runs == 0 && repeats == 0);
    }
    hsdag_measure_free(m);
    /* a timeout kills the whole group: the grandchild sleep does not keep the pipe open */
    c.cmd = "sh -c 'sleep 30 & sleep 30; echo 1'";
    c.timeout_s = 0.2;
    double t0 = hsdag_now();
    CHECK_EQ_INT(hsdag_measure_create(&m, &c, g, d, &e), 0);
    if (m) {
        CHECK_EQ_INT(hsdag_measure_eval(m, dev, &lat, &feas, &e), HSDAG_EEXTERNAL);
        CHECK(strstr(e.msg, "timed out after 0.2 s") != NULL);
    }
    CHECK(hsdag_now() - t0 < 5);
    hsdag_measure_free(m);
    /* no number, and no such program */
    c.cmd = "echo no latency here";
    c.timeout_s = 10;
    CHECK_EQ_INT(hsdag_measure_create(&m, &c, g, d, &e), 0);
    if (m) {
        CHECK_EQ_INT(hsdag_measure_eval(m, dev, &lat, &feas, &e), HSDAG_EEXTERNAL);
        CHECK(strstr(e.msg, "no positive latency") != NULL);
    }
    hsdag_measure_free(m);
    c.cmd = "/nonexistent/hsdag-measure";
    CHECK_EQ_INT(hsdag_measure_create(&m, &c, g, d, &e), 0);
    if (m) {
        CHECK_EQ_INT(hsdag_measure_eval(m, dev, &lat, &feas, &e), HSDAG_EEXTERNAL);
        CHECK(strstr(e.msg, "cannot run '/nonexistent/hsdag-measure'") != NULL);
    }
    hsdag_measure_free(m);
    /* allocation failures in create: ENOMEM with a message, nothing leaked (ASan), then success */
    int ok = 0, oom = 0, other = 0;
    c.cmd = "sh -c 'echo 1' {} --x={placement}";
    for (long n = 1; n < 100 && !ok; n++) {
        hsdag_err ee = {0};
        hsdag_alloc_fail_after(n);
        int rc = hsdag_measure_create(&m, &c, g, d, &ee);
        hsdag_alloc_fail_after(0);
        if (rc == 0)
            ok = 1;
        else if (rc == HSDAG_ENOMEM && strstr(ee.msg, "out of memory") && !m)
            oom++;
        else
            other++;
        hsdag_measure_free(m);
        m = NULL;
    }
    CHECK(ok && oom > 0 && other == 0);
    unlink(path);
    unlink(mark);
    rmdir(dir);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

int main(void)
{
    test_words();
    test_runs();
    return check_summary("test_measure");
}
