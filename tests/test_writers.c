/* test_writers.c - tests of the result-document writer (hsdag_jw: exact text, escaping, NaN as null,
 * arrays of objects one per line), the weighted-pair merge and the coarsened DOT drawing (groups bounded,
 * every op in one group, components when few, bands when a placement alternates devices).
 * Not here: which keys a result has (tests/cli/schema.sh against docs/formats.md). Entry points: main.
 */
#include "check.h"

#include "hsdag/io.h"

#include <math.h>
#include <string.h>

static void test_jw(void)
{
    hsdag_buf b = {0};
    hsdag_jw w;
    hsdag_jw_begin(&w, &b, "hsdag-test/1");
    hsdag_jw_num(&w, "x_ms", 1.5);
    hsdag_jw_num(&w, "nan", NAN);
    hsdag_jw_int(&w, "n", -3);
    hsdag_jw_bool(&w, "ok", 1);
    hsdag_jw_str(&w, "s", "a\"b\n");
    hsdag_jw_str(&w, "none", NULL);
    hsdag_jw_object(&w, "per");
    hsdag_jw_num(&w, "GPU \"0\"", 2);
    hsdag_jw_close(&w);
    hsdag_jw_array(&w, "rows");
    hsdag_jw_object(&w, NULL);
    hsdag_jw_int(&w, "i", 0);
    hsdag_jw_close(&w);
    hsdag_jw_object(&w, NULL);
    hsdag_jw_array(&w, "v");
    hsdag_jw_int(&w, NULL, 1);
    hsdag_jw_int(&w, NULL, 2);
    hsdag_jw_close(&w);
    hsdag_jw_close(&w);
    hsdag_jw_close(&w);
    CHECK_EQ_INT(hsdag_jw_end(&w), 0);
    CHECK_STR(b.data, "{\"schema\": \"hsdag-test/1\", \"x_ms\": 1.5, \"nan\": null, \"n\": -3, \"ok\": true, "
                      "\"s\": \"a\\\"b\\n\", \"none\": null, \"per\": {\"GPU \\\"0\\\"\": 2}, \"rows\": [\n"
                      "  {\"i\": 0},\n  {\"v\": [1, 2]}\n]}\n");
    hsdag_buf_free(&b);
    /* end closes whatever is open */
    hsdag_jw_begin(&w, &b, "s/1");
    hsdag_jw_array(&w, "a");
    hsdag_jw_object(&w, NULL);
    CHECK_EQ_INT(hsdag_jw_end(&w), 0);
    CHECK_STR(b.data, "{\"schema\": \"s/1\", \"a\": [\n  {}\n]}\n");
    hsdag_buf_free(&b);
}

static void test_pairs(void)
{
    hsdag_pair p[] = {{2, 1, 1}, {0, 3, 2}, {2, 1, 4}, {0, 1, 8}, {0, 3, 16}};
    int32_t cnt[5];
    int32_t m = hsdag_pairs_merge(p, 5, cnt);
    CHECK_EQ_INT(m, 3);
    CHECK(p[0].a == 0 && p[0].b == 1 && p[0].w == 8 && cnt[0] == 1);
    CHECK(p[1].a == 0 && p[1].b == 3 && p[1].w == 18 && cnt[1] == 2);
    CHECK(p[2].a == 2 && p[2].b == 1 && p[2].w == 5 && cnt[2] == 2);
    CHECK_EQ_INT(hsdag_pairs_merge(p, 0, NULL), 0);
}

/* A chain of n ops with a skip edge every 7. */
static hsdag_graph *chain(int32_t n)
{
    hsdag_gb *b = hsdag_gb_create();
    char name[32];
    for (int32_t v = 0; v < n; v++) {
        snprintf(name, sizeof name, "op%d", (int)v);
        hsdag_gb_add_node(b, name, "Relu");
        if (v) hsdag_gb_add_edge(b, v - 1, v, 1024);
        if (v >= 7 && v % 7 == 0) hsdag_gb_add_edge(b, v - 7, v, 10);
    }
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_gb_finish(b, &g, &e), 0);
    hsdag_gb_free(b);
    return g;
}

/* Groups drawn and the ops they hold, from the labels "NAME: K ops". */
static int32_t groups_of(const char *dot, int32_t *ops)
{
    int32_t n = 0;
    *ops = 0;
    for (const char *p = strstr(dot, "\n  g"); p; p = strstr(p + 1, "\n  g")) {
        const char *lab = strstr(p, "[label=\"");
        const char *nl = strchr(p + 1, '\n');
        if (!lab || (nl && lab > nl)) continue; /* an edge line */
        const char *colon = strstr(lab, ": ");
        if (!colon) continue;
        n++;
        *ops += (int32_t)strtol(colon + 2, NULL, 10);
    }
    return n;
}

static void test_dot_groups(void)
{
    const int32_t n = 1000;
    hsdag_graph *g = chain(n);
    if (!g) return;
    int32_t *dev = hsdag_malloc((size_t)n * sizeof *dev);
    const char *names[2] = {"CPU", "GPU"};
    hsdag_buf b = {0};
    int32_t ops;
    /* one device: one group */
    for (int32_t v = 0; v < n; v++) dev[v] = 1;
    CHECK_EQ_INT(hsdag_dot_write_groups(&b, g, dev, names, 2, 80), 0);
    CHECK_EQ_INT(groups_of(b.data, &ops), 1);
    CHECK_EQ_INT(ops, n);
    CHECK(strstr(b.data, "GPU: 1000 ops\\nop0 .. op999") != NULL);
    hsdag_buf_free(&b);
    /* two halves: two components and one edge between them */
    for (int32_t v = 0; v < n; v++) dev[v] = v < n / 2;
    CHECK_EQ_INT(hsdag_dot_write_groups(&b, g, dev, names, 2, 80), 0);
    CHECK_EQ_INT(groups_of(b.data, &ops), 2);
    CHECK_EQ_INT(ops, n);
    CHECK(strstr(b.data, "connected ops on one device") != NULL);
    hsdag_buf_free(&b);
    /* alternating devices: 1000 components, so bands, and never more than max_groups */
    for (int32_t v = 0; v < n; v++) dev[v] = v % 2;
    CHECK_EQ_INT(hsdag_dot_write_groups(&b, g, dev, names, 2, 80), 0);
    int32_t ng = groups_of(b.data, &ops);
    CHECK(ng >= 2 && ng <= 80);
    CHECK_EQ_INT(ops, n);
    CHECK(strstr(b.data, "within a band of depth levels") != NULL);
    hsdag_buf_free(&b);
    CHECK_EQ_INT(hsdag_dot_write_groups(&b, g, dev, names, 2, 1), 0);
    CHECK(groups_of(b.data, &ops) <= 2); /* one band: one group per device used */
    hsdag_buf_free(&b);
    CHECK_EQ_INT(hsdag_dot_write_groups(&b, g, NULL, names, 2, 80), HSDAG_EINVAL);
    CHECK_EQ_INT(hsdag_dot_write_groups(&b, g, dev, names, 2, 0), HSDAG_EINVAL);
    hsdag_buf_free(&b);
    hsdag_free(dev);
    hsdag_graph_free(g);
}

int main(void)
{
    test_jw();
    test_pairs();
    test_dot_groups();
    return check_summary("test_writers");
}
