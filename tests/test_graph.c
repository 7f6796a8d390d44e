/* test_graph.c - tests of the graph builder and IR: ordering, names, merging, validation, stats,
 * allocation-failure injection. Not here: file formats (tests/test_<format>.c).
 * Entry points: main. */
#include "check.h"
#include "hsdag/graph.h"

#include <math.h>

static hsdag_graph *build_diamond(void)
{
    /* added out of order: d, b, a, c with a->b, a->c, b->d, c->d */
    hsdag_gb *b = hsdag_gb_create();
    int32_t d = hsdag_gb_add_node(b, "d", "Add");
    int32_t bb = hsdag_gb_add_node(b, "b", "Relu");
    int32_t a = hsdag_gb_add_node(b, "a", "Conv");
    int32_t c = hsdag_gb_add_node(b, "c", "Relu");
    int64_t dims[4] = {1, 3, 8, 8};
    hsdag_gb_add_output(b, a, HSDAG_DT_F32, 4, dims);
    hsdag_gb_add_output(b, a, HSDAG_DT_F16, 2, dims);
    hsdag_gb_add_edge(b, a, bb, 100);
    hsdag_gb_add_edge(b, a, c, 100);
    hsdag_gb_add_edge(b, bb, d, 10);
    hsdag_gb_add_edge(b, c, d, 20);
    hsdag_gb_add_edge(b, c, d, 5); /* parallel: merged */
    hsdag_gb_set_cost(b, a, HSDAG_COST_CPU, 1.5);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    int rc = hsdag_gb_finish(b, &g, &e);
    CHECK(rc == 0);
    hsdag_gb_free(b);
    return g;
}

static void test_diamond(void)
{
    hsdag_graph *g = build_diamond();
    if (!g) return;
    CHECK_EQ_INT(g->n_nodes, 4);
    CHECK_EQ_INT(g->n_edges, 4);
    CHECK_STR(g->name[0], "a");
    CHECK_STR(g->name[1], "b"); /* b was added before c: ties by insertion order */
    CHECK_STR(g->name[2], "c");
    CHECK_STR(g->name[3], "d");
    for (int32_t k = 0; k < g->n_edges; k++) CHECK(g->edge_src[k] < g->out_dst[k]);
    int32_t cd = hsdag_graph_edge_id(g, 2, 3);
    CHECK(cd >= 0);
    CHECK_NEAR(g->edge_bytes[cd], 25, 0);
    CHECK_EQ_INT(hsdag_graph_edge_id(g, 1, 2), -1);
    CHECK_EQ_INT(g->in_off[3 + 1] - g->in_off[3], 2);
    CHECK_EQ_INT(g->in_src[g->in_off[3]], 1);
    CHECK_EQ_INT(g->in_eid[g->in_off[3] + 1], cd);
    CHECK_EQ_INT(g->out_shape_off[1] - g->out_shape_off[0], 2);
    CHECK_NEAR(g->out_bytes[0], 192 * 4 + 3 * 2, 0);
    CHECK_NEAR(g->cost_ms[0 * HSDAG_COST_KINDS_ + HSDAG_COST_CPU], 1.5, 0);
    CHECK(isnan(g->cost_ms[1 * HSDAG_COST_KINDS_ + HSDAG_COST_CPU]));
    CHECK_EQ_INT(g->file_id[0], 2);
    CHECK_EQ_INT(hsdag_graph_find(g, "c"), 2);
    hsdag_graph_stats st;
    CHECK(hsdag_graph_stats_compute(g, &st, NULL) == 0);
    CHECK_EQ_INT(st.depth, 3);
    CHECK_EQ_INT(st.max_width, 2);
    CHECK_EQ_INT(st.sources, 1);
    CHECK_EQ_INT(st.sinks, 1);
    CHECK_EQ_INT(st.n_op_types, 3);
    CHECK_STR(st.ops[0].op, "Relu");
    CHECK_EQ_INT(st.ops[0].count, 2);
    hsdag_graph_stats_free(&st);
    hsdag_graph_free(g);
}

static void test_names(void)
{
    hsdag_gb *b = hsdag_gb_create();
    hsdag_gb_add_node(b, "x", "Relu");
    hsdag_gb_add_node(b, "x", "Relu");   /* duplicate -> x_1 */
    hsdag_gb_add_node(b, NULL, "Conv");  /* unnamed -> Conv_2 */
    hsdag_gb_add_node(b, "x_1", "Relu"); /* given name wins over the generated one */
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_gb_finish(b, &g, &e) == 0);
    hsdag_gb_free(b);
    if (!g) return;
    CHECK_STR(g->name[0], "x");
    CHECK_STR(g->name[1], "x_2");
    CHECK_STR(g->name[2], "Conv_2");
    CHECK_STR(g->name[3], "x_1");
    CHECK(g->flags[1] & HSDAG_NF_RENAMED);
    CHECK(!(g->flags[3] & HSDAG_NF_RENAMED));
    CHECK(g->op[0] == g->op[1]); /* interned */
    hsdag_graph_free(g);
}

/* Reference naming: probe every suffix from the start (the documented rule, quadratic on purpose). */
static void names_reference(int n, const char *const *nm, const char *const *op, char (*out)[64])
{
    hsdag_strmap *m = hsdag_strmap_create();
    for (int v = 0; v < n; v++) {
        out[v][0] = 0;
        if (*nm[v] && hsdag_strmap_put(m, nm[v], strlen(nm[v]), v) == 0) snprintf(out[v], 64, "%s", nm[v]);
    }
    for (int v = 0; v < n; v++) {
        if (out[v][0]) continue;
        for (long k = *nm[v] ? 1 : v;; k++) {
            snprintf(out[v], 64, "%s_%ld", *nm[v] ? nm[v] : op[v], k);
            if (hsdag_strmap_get(m, out[v], strlen(out[v])) < 0) break;
        }
        hsdag_strmap_put(m, out[v], strlen(out[v]), v);
    }
    hsdag_strmap_free(m);
}

static void test_many_duplicates(void)
{
    /* 20,000 nodes named "x": probing every suffix from 1 was O(n^2) (43 s for 10,000) */
    enum { N = 20000 };
    hsdag_gb *b = hsdag_gb_create();
    for (int i = 0; i < N; i++) hsdag_gb_add_node(b, "x", "Relu");
    hsdag_graph *g = NULL;
    double t0 = hsdag_now();
    CHECK(hsdag_gb_finish(b, &g, NULL) == 0);
    double dt = hsdag_now() - t0;
    hsdag_gb_free(b);
    if (!g) return;
    CHECK_STR(g->name[0], "x");
    CHECK_STR(g->name[1], "x_1");
    CHECK_STR(g->name[N - 1], "x_19999");
    CHECK(dt < 5.0); /* ~10 ms in O(n); the quadratic version needed minutes */
    hsdag_graph_free(g);

    /* a random mix of duplicates, empty names and given names that look generated must match the
     * probe-from-the-start reference exactly */
    enum { M = 3000 };
    static const char *const pool[] = {"x", "y", "x_1", "x_2", "Relu_5", "Relu_7", "Add_3", "y_1", "x_9", ""};
    static const char *const ops[] = {"Relu", "Add", "x"};
    static char given[M][16], expect[M][64];
    const char *nm[M], *op[M];
    hsdag_rng r;
    hsdag_rng_seed(&r, 7);
    b = hsdag_gb_create();
    for (int v = 0; v < M; v++) {
        uint32_t c = hsdag_rng_below(&r, 14);
        if (c < 10)
            snprintf(given[v], sizeof given[v], "%s", pool[c]);
        else if (c < 12)
            snprintf(given[v], sizeof given[v], "Relu_%u", hsdag_rng_below(&r, M));
        else
            snprintf(given[v], sizeof given[v], "%s", "");
        nm[v] = given[v];
        op[v] = ops[hsdag_rng_below(&r, 3)];
        hsdag_gb_add_node(b, nm[v], op[v]);
    }
    names_reference(M, nm, op, expect);
    CHECK(hsdag_gb_finish(b, &g, NULL) == 0);
    hsdag_gb_free(b);
    if (!g) return;
    int same = 1;
    for (int v = 0; v < M; v++) same &= strcmp(g->name[v], expect[v]) == 0;
    CHECK(same);
    hsdag_graph_free(g);
}

static void test_merge_order(void)
{
    /* parallel edges are summed in insertion order, whatever the platform's qsort does with ties:
     * 1 + 1e16 + 1 + 1 is 1e16 in that order (each 1 rounds away), 1e16 + 4 if the ones came first */
    hsdag_gb *b = hsdag_gb_create();
    int32_t x = hsdag_gb_add_node(b, "x", "Relu"), y = hsdag_gb_add_node(b, "y", "Relu");
    const double bytes[] = {1, 1e16, 1, 1};
    for (int i = 0; i < 4; i++) hsdag_gb_add_edge_ex(b, x, y, bytes[i], (double)i);
    hsdag_graph *g = NULL;
    CHECK(hsdag_gb_finish(b, &g, NULL) == 0);
    hsdag_gb_free(b);
    if (!g) return;
    CHECK_EQ_INT(g->n_edges, 1);
    CHECK(g->edge_bytes[0] == 1e16);
    CHECK(g->edge_cost_ms[0] == 3.0);
    hsdag_graph_free(g);
}

/* edge_seq ranks the edges in the order they were added (the file's order), merged ones by their first copy */
static void test_edge_seq(void)
{
    hsdag_gb *b = hsdag_gb_create();
    int32_t a = hsdag_gb_add_node(b, "a", "Relu"), c = hsdag_gb_add_node(b, "c", "Relu");
    int32_t d = hsdag_gb_add_node(b, "d", "Relu");
    hsdag_gb_add_edge(b, c, d, 1); /* added first, sorted last: (c, d) */
    hsdag_gb_add_edge(b, a, d, 1);
    hsdag_gb_add_edge(b, a, c, 1);
    hsdag_gb_add_edge(b, a, d, 1); /* merged into the second */
    hsdag_graph *g = NULL;
    CHECK(hsdag_gb_finish(b, &g, NULL) == 0);
    hsdag_gb_free(b);
    if (!g) return;
    CHECK_EQ_INT(g->n_edges, 3);
    int32_t ac = hsdag_graph_edge_id(g, a, c), ad = hsdag_graph_edge_id(g, a, d),
            cd = hsdag_graph_edge_id(g, c, d);
    CHECK_EQ_INT(g->edge_seq[cd], 0);
    CHECK_EQ_INT(g->edge_seq[ad], 1);
    CHECK_EQ_INT(g->edge_seq[ac], 2);
    hsdag_graph_free(g);
}

static void test_errors(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_gb *b = hsdag_gb_create();
    int32_t p = hsdag_gb_add_node(b, "p", "Relu");
    int32_t q = hsdag_gb_add_node(b, "q", "Relu");
    int32_t r = hsdag_gb_add_node(b, "r", "Relu");
    int32_t s = hsdag_gb_add_node(b, "s", "Relu");
    hsdag_gb_add_edge(b, s, p, 1); /* s is upstream of the cycle p->q->r->p */
    hsdag_gb_add_edge(b, p, q, 1);
    hsdag_gb_add_edge(b, q, r, 1);
    hsdag_gb_add_edge(b, r, p, 1);
    CHECK_EQ_INT(hsdag_gb_finish(b, &g, &e), HSDAG_ECYCLE);
    CHECK(g == NULL);
    CHECK(strstr(e.msg, "cycle") != NULL);
    CHECK(strstr(e.msg, "'p'") || strstr(e.msg, "'q'") || strstr(e.msg, "'r'"));
    hsdag_gb_free(b);

    /* the first unfinished node is 200 steps downstream of the cycle: the message must still name a
     * node on the cycle (it named 'd135', not on any cycle, when the walk stopped after 64 steps) */
    b = hsdag_gb_create();
    char nm[16];
    for (int i = 0; i < 200; i++) {
        snprintf(nm, sizeof nm, "d%d", i);
        hsdag_gb_add_node(b, nm, "Relu");
        if (i > 0) hsdag_gb_add_edge(b, i, i - 1, 1); /* d199 -> ... -> d0 */
    }
    p = hsdag_gb_add_node(b, "cyc_a", "Relu");
    q = hsdag_gb_add_node(b, "cyc_b", "Relu");
    hsdag_gb_add_edge(b, p, q, 1);
    hsdag_gb_add_edge(b, q, p, 1);
    hsdag_gb_add_edge(b, q, 199, 1);
    CHECK_EQ_INT(hsdag_gb_finish(b, &g, &e), HSDAG_ECYCLE);
    CHECK(strstr(e.msg, "through node 'cyc_") != NULL);
    CHECK(strncmp(e.msg, "graph has a cycle", 17) == 0); /* unnamed graph: no "graph: " prefix */
    hsdag_gb_free(b);

    b = hsdag_gb_create();
    p = hsdag_gb_add_node(b, "p", "Relu");
    hsdag_gb_add_edge(b, p, 7, 1);
    CHECK_EQ_INT(hsdag_gb_finish(b, &g, &e), HSDAG_EDANGLING);
    CHECK(strstr(e.msg, "'p'") != NULL);
    hsdag_gb_free(b);

    b = hsdag_gb_create();
    p = hsdag_gb_add_node(b, "p", "Relu");
    hsdag_gb_add_edge(b, p, p, 1);
    CHECK_EQ_INT(hsdag_gb_finish(b, &g, &e), HSDAG_ECYCLE);
    hsdag_gb_free(b);
}

static void test_alloc_failures(void)
{
    /* every allocation failure point must give ENOMEM (or succeed) without leaking or crashing */
    int failures = 0, successes = 0;
    for (long k = 1; k < 400; k++) {
        hsdag_alloc_fail_after(k);
        hsdag_gb *b = hsdag_gb_create();
        hsdag_graph *g = NULL;
        int rc = HSDAG_ENOMEM;
        if (b) {
            int32_t prev = -1;
            for (int i = 0; i < 40; i++) {
                int32_t v = hsdag_gb_add_node(b, i % 3 ? "n" : NULL, "Relu");
                if (v >= 0 && prev >= 0) hsdag_gb_add_edge(b, prev, v, 1);
                if (v >= 0) prev = v;
            }
            hsdag_err e = {0};
            rc = hsdag_gb_finish(b, &g, &e);
        }
        hsdag_alloc_fail_after(0);
        if (rc == 0) {
            successes++;
            CHECK_EQ_INT(g->n_nodes, 40);
        } else {
            failures++;
            CHECK_EQ_INT(rc, HSDAG_ENOMEM);
        }
        hsdag_graph_free(g);
        hsdag_gb_free(b);
    }
    CHECK(failures > 10);
    CHECK(successes > 0);
}

static void test_stats_alloc_failures(void)
{
    /* 300 op types: the op-type map grows several times; every failure point gives ENOMEM, never a
     * histogram with op types missing */
    hsdag_gb *b = hsdag_gb_create();
    char op[32];
    for (int i = 0; i < 300; i++) {
        snprintf(op, sizeof op, "Op%d", i);
        hsdag_gb_add_node(b, NULL, op);
    }
    hsdag_graph *g = NULL;
    CHECK(hsdag_gb_finish(b, &g, NULL) == 0);
    hsdag_gb_free(b);
    if (!g) return;
    int ok = 0, bad = 0;
    for (long k = 1; k < 200; k++) {
        hsdag_graph_stats st;
        hsdag_err e = {0};
        hsdag_alloc_fail_after(k);
        int rc = hsdag_graph_stats_compute(g, &st, &e);
        hsdag_alloc_fail_after(0);
        if (rc == 0) {
            ok++;
            if (st.n_op_types != 300) bad++;
            hsdag_graph_stats_free(&st);
        } else if (rc != HSDAG_ENOMEM || !strstr(e.msg, "out of memory")) {
            bad++;
        }
    }
    CHECK(ok > 0);
    CHECK_EQ_INT(bad, 0);
    hsdag_graph_free(g);
}

static void test_large_chain_order(void)
{
    /* nodes added in reverse; the result must be the chain order, and levels must equal ids */
    enum { N = 5000 };
    hsdag_gb *b = hsdag_gb_create();
    for (int i = 0; i < N; i++) hsdag_gb_add_node(b, NULL, "Relu");
    for (int i = 0; i < N - 1; i++) hsdag_gb_add_edge(b, N - 1 - i, N - 2 - i, 4);
    hsdag_graph *g = NULL;
    CHECK(hsdag_gb_finish(b, &g, NULL) == 0);
    hsdag_gb_free(b);
    if (!g) return;
    CHECK_EQ_INT(g->file_id[0], N - 1);
    CHECK_EQ_INT(g->file_id[N - 1], 0);
    hsdag_graph_stats st;
    hsdag_graph_stats_compute(g, &st, NULL);
    CHECK_EQ_INT(st.depth, N);
    CHECK_EQ_INT(st.max_width, 1);
    hsdag_graph_stats_free(&st);
    hsdag_graph_free(g);
}

static void test_common(void)
{
    hsdag_rng r1, r2;
    hsdag_rng_seed(&r1, 42);
    hsdag_rng_seed(&r2, 42);
    int same = 1;
    double mean = 0;
    for (int i = 0; i < 10000; i++) {
        uint64_t a = hsdag_rng_u64(&r1), c = hsdag_rng_u64(&r2);
        same &= a == c;
    }
    for (int i = 0; i < 10000; i++) mean += hsdag_rng_uniform(&r1);
    CHECK(same);
    CHECK_NEAR(mean / 10000, 0.5, 0.02);
    hsdag_strmap *m = hsdag_strmap_create();
    char key[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        CHECK(hsdag_strmap_put(m, key, strlen(key), i) == 0);
    }
    CHECK_EQ_INT(hsdag_strmap_get(m, "k777", 4), 777);
    CHECK_EQ_INT(hsdag_strmap_get(m, "k1000", 5), -1);
    CHECK_EQ_INT(hsdag_strmap_put(m, "k5", 2, 9), 1);
    CHECK_EQ_INT(hsdag_strmap_count(m), 1000);
    hsdag_strmap_free(m);
    hsdag_buf b = {0};
    hsdag_buf_double(&b, 0.1);
    hsdag_buf_append(&b, " ", 1);
    hsdag_buf_double(&b, 1.0 / 3.0);
    hsdag_buf_append(&b, " ", 1);
    hsdag_buf_json_str(&b, "a\"b\n");
    CHECK_STR(b.data, "0.1 0.3333333333333333 \"a\\\"b\\n\"");
    hsdag_buf_free(&b);
    CHECK_EQ_INT(hsdag_dtype_parse("FP16"), HSDAG_DT_F16);
    CHECK_EQ_INT(hsdag_dtype_parse("i64"), HSDAG_DT_I64);
    CHECK_STR(hsdag_status_str(HSDAG_ECYCLE), "graph has a cycle");
    /* messages are one printable line whatever the quoted names hold */
    hsdag_err e = {0};
    hsdag_err_set(&e, HSDAG_EPARSE, "node '%s': bad", "a\tb\x1b[31m\nc\x7f");
    CHECK_STR(e.msg, "node 'a b [31m c ': bad");
    hsdag_err_prefix(&e, "dir\n/f.json");
    CHECK_STR(e.msg, "dir /f.json: node 'a b [31m c ': bad");
    hsdag_err_prefix(&e, "dir\n/f.json"); /* already there: not repeated */
    CHECK_STR(e.msg, "dir /f.json: node 'a b [31m c ': bad");
}

int main(void)
{
    test_common();
    test_diamond();
    test_names();
    test_many_duplicates();
    test_merge_order();
    test_edge_seq();
    test_errors();
    test_alloc_failures();
    test_stats_alloc_failures();
    test_large_chain_order();
    return check_summary("test_graph");
}
