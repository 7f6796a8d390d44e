/* test_pipedream.c - the PipeDream graph.txt reader and the mirrored PAC-ML job graph on real profiles.
 * Not here: the cluster simulator (test_cluster.c). Expected numbers come from the shared PAC-ML spec table
 *   (five graphs) and from an independent awk pass over the 14 profiles (sums of the four fields).
 * Entry points: main (run from the repository root). */
#include "check.h"
#include "hsdag/io.h"

#include <math.h>
#include <stdlib.h>

typedef struct expect {
    const char *path;
    int n, E;
    double fwd, bwd, jct_seq, mem,
        dep;   /* per-step ms sums, 50-step JCT_seq, total op memory and dep size (2n nodes) */
    int depth; /* ddls max_depth, 0 if not in the spec */
} expect;

static const expect EXP[] = {
    {"tests/data/pacml/alexnet.txt", 23, 23, 680.703, 40.520, 36061.15, 3.04623e9, 2.42216e9, 44},
    {"tests/data/pacml/vgg16.txt", 41, 41, 251.874, 438.633, 34525.35, 3.06253e10, 2.94671e10, 80},
    {"tests/data/pacml/resnet18.txt", 71, 79, 581.071, 152.296, 36668.35, 1.72587e10, 1.87333e10, 60},
    {"tests/data/pacml/squeezenet1_0.txt", 68, 76, 587.884, 172.119, 38000.15, 2.49626e10, 2.79101e10, 102},
    {"tests/data/pacml/gnmt.txt", 48, 58, 33.533, 55.883, 4470.80, 2.36845e9, 1.0278e9, 30},
    {"tests/data/pipedream/alexnet.txt", 23, 23, 680.703, 40.520, 36061.15, 3.04623e9, 2.42216e9, 44},
    {"tests/data/pipedream/densenet121.txt", 429, 487, 186.489, 148.751, 16762.00, 2.51197e10, 2.99629e10, 0},
    {"tests/data/pipedream/gnmt.txt", 48, 58, 33.533, 55.883, 4470.80, 2.36845e9, 1.0278e9, 30},
    {"tests/data/pipedream/gnmt_large.txt", 96, 122, 182.563, 337.890, 26022.65, 4.93302e9, 3.58876e9, 0},
    {"tests/data/pipedream/inception_v3.txt", 326, 362, 310.969, 399.769, 35536.90, 3.35908e10, 4.08104e10,
     0},
    {"tests/data/pipedream/nasnetalarge.txt", 1251, 1468, 416.133, 249.210, 33267.15, 1.79122e10, 2.28563e10,
     0},
    {"tests/data/pipedream/nasnetamobile.txt", 921, 1078, 338.481, 261.363, 29992.20, 2.83257e10, 3.72308e10,
     0},
    {"tests/data/pipedream/resnet101.txt", 347, 380, 207.723, 213.786, 21075.45, 2.92732e10, 3.34779e10, 0},
    {"tests/data/pipedream/resnet18.txt", 71, 79, 581.071, 152.296, 36668.35, 1.72587e10, 1.87333e10, 60},
    {"tests/data/pipedream/resnet50.txt", 177, 193, 201.450, 260.931, 23119.05, 3.88219e10, 4.42457e10, 0},
    {"tests/data/pipedream/resnext101.txt", 347, 380, 249.609, 318.310, 28395.95, 3.69388e10, 4.11464e10, 0},
    {"tests/data/pipedream/resnext50.txt", 177, 193, 238.961, 368.990, 30397.55, 4.89139e10, 5.43419e10, 0},
    {"tests/data/pipedream/squeezenet1_0.txt", 68, 76, 587.884, 172.119, 38000.15, 2.49626e10, 2.79101e10,
     102},
    {"tests/data/pipedream/vgg16.txt", 41, 41, 251.874, 438.633, 34525.35, 3.06253e10, 2.94671e10, 80},
    /* PipeDream partitioner output: node lines carry " -- stage_id=N" */
    {"tests/data/pipedream/resnet50_partitioned.txt", 177, 193, 194.510, 254.802, 22465.60, 3.88219e10,
     4.42457e10, 0},
    {"tests/data/pipedream/vgg16_partitioned.txt", 41, 41, 55.095, 626.153, 34062.40, 3.06253e10, 2.94671e10,
     0},
};

/* nodes on the longest shortest path from the node with file id 1 (ddls max_depth) */
static int bfs_depth(const hsdag_graph *g)
{
    int32_t *d = calloc((size_t)g->n_nodes, sizeof(int32_t)),
            *q = malloc((size_t)g->n_nodes * sizeof(int32_t));
    int32_t qh = 0, qt = 0, best = 0;
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (g->file_id[v] == 1) {
            d[v] = 1;
            q[qt++] = v;
        }
    while (qh < qt) {
        int32_t u = q[qh++];
        if (d[u] > best) best = d[u];
        for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++)
            if (!d[g->out_dst[k]]) {
                d[g->out_dst[k]] = d[u] + 1;
                q[qt++] = g->out_dst[k];
            }
    }
    free(d);
    free(q);
    return best;
}

static int32_t edge_between(const hsdag_graph *g, int32_t u, int32_t v)
{
    for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++)
        if (g->out_dst[k] == v) return k;
    return -1;
}

static void check_file(const expect *x)
{
    char *buf = NULL;
    size_t len = 0;
    hsdag_err e = {0};
    CHECK(hsdag_read_file(&buf, &len, x->path, 0, &e) == 0);
    if (!buf) {
        fprintf(stderr, "cannot read %s: %s\n", x->path, e.msg);
        return;
    }
    hsdag_graph *g = NULL, *m = NULL;
    int rc = hsdag_pipedream_read(&g, buf, len, x->path, &e);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) {
        fprintf(stderr, "%s\n", e.msg);
        hsdag_free(buf);
        return;
    }
    CHECK_EQ_INT(g->n_nodes, x->n);
    CHECK_EQ_INT(g->n_edges, x->E);
    CHECK_EQ_INT(g->meta.file_nodes, x->n);
    CHECK_EQ_INT(g->meta.file_edges, x->E);
    CHECK_EQ_INT(g->meta.format, HSDAG_FMT_PIPEDREAM);
    double fwd = 0, bwd = 0, act = 0, par = 0;
    int names_ok = 1;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        fwd += g->cost_ms[(size_t)v * HSDAG_COST_KINDS_ + HSDAG_COST_ACCEL];
        bwd += g->cost_ms[(size_t)v * HSDAG_COST_KINDS_ + HSDAG_COST_BWD];
        act += g->out_bytes[v];
        par += g->param_bytes[v];
        char nm[32];
        snprintf(nm, sizeof nm, "node%d", g->file_id[v]);
        if (strcmp(nm, g->name[v]) != 0 || fabs(g->mem_bytes[v] - g->out_bytes[v] - g->param_bytes[v]) > 0.5)
            names_ok = 0;
    }
    CHECK(names_ok);
    CHECK_NEAR(fwd, x->fwd, 1e-6);
    CHECK_NEAR(bwd, x->bwd, 1e-6);
    CHECK_NEAR(2 * (act + par), x->mem, x->mem * 1e-5);
    for (int32_t k = 0; k < g->n_edges; k++) CHECK_NEAR(g->edge_bytes[k], g->out_bytes[g->edge_src[k]], 0.0);
    rc = hsdag_pipedream_mirror(&m, g, &e);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0) {
        CHECK_EQ_INT(m->n_nodes, 2 * x->n);
        CHECK_EQ_INT(m->n_edges, 2 * x->E + 1);
        double c = 0, mem = 0, dep = 0;
        int ids_ok = 1;
        for (int32_t v = 0; v < m->n_nodes; v++) {
            c += m->cost_ms[(size_t)v * HSDAG_COST_KINDS_ + HSDAG_COST_ACCEL];
            mem += m->mem_bytes[v];
            if ((m->file_id[v] > x->n) != !!(m->flags[v] & HSDAG_NF_BACKWARD)) ids_ok = 0;
        }
        for (int32_t k = 0; k < m->n_edges; k++) dep += m->edge_bytes[k];
        CHECK(ids_ok);
        CHECK_NEAR(50 * c, x->jct_seq, 1e-6);
        CHECK_NEAR(mem, x->mem, x->mem * 1e-5);
        CHECK_NEAR(dep, x->dep, x->dep * 1e-5);
        /* the join edge n -> n+1 */
        int32_t vn = -1, vn1 = -1;
        for (int32_t v = 0; v < m->n_nodes; v++) {
            if (m->file_id[v] == x->n) vn = v;
            if (m->file_id[v] == x->n + 1) vn1 = v;
        }
        CHECK(vn >= 0 && vn1 >= 0 && edge_between(m, vn, vn1) >= 0);
        if (x->depth) CHECK_EQ_INT(bfs_depth(m), x->depth);
        hsdag_graph_free(m);
    }
    hsdag_graph_free(g);
    hsdag_free(buf);
}

/* bad input must fail with the given status and a one-line message that contains `needle` */
static void bad(const char *text, int status, const char *needle)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    int rc = hsdag_pipedream_read(&g, text, strlen(text), "bad.txt", &e);
    CHECK_EQ_INT(rc, status);
    CHECK(g == NULL);
    CHECK(strchr(e.msg, '\n') == NULL);
    if (!strstr(e.msg, needle)) {
        CHECK(0);
        fprintf(stderr, "  message '%s' lacks '%s'\n", e.msg, needle);
    }
    hsdag_graph_free(g);
}

#define L1                                                                                               \
    "node1 -- Input0 -- forward_compute_time=1.000, backward_compute_time=0.000, activation_size=10.0, " \
    "parameter_size=0.000"
#define L2                                                                               \
    "node2 -- Conv2d(3, 4) -- forward_compute_time=2.000, backward_compute_time=3.000, " \
    "activation_size=[4.0; 6.0], parameter_size=5.000"

int main(void)
{
    for (size_t i = 0; i < sizeof EXP / sizeof EXP[0]; i++) check_file(&EXP[i]);

    /* a tiny graph by hand: bracketed list summed, trailing LF tolerated, ids 1..n */
    {
        const char *t = L2 "\n" L1 "\n\tnode1 -- node2\n";
        hsdag_graph *g = NULL, *m = NULL;
        hsdag_err e = {0};
        CHECK_EQ_INT(hsdag_pipedream_read(&g, t, strlen(t), "tiny", &e), 0);
        if (g) {
            CHECK_EQ_INT(g->n_nodes, 2);
            int32_t v2 = g->file_id[0] == 2 ? 0 : 1;
            CHECK_NEAR(g->out_bytes[v2], 10.0, 0);
            CHECK_NEAR(g->mem_bytes[v2], 15.0, 0);
            CHECK_STR(g->op[v2], "Conv2d");
            CHECK_EQ_INT(hsdag_pipedream_mirror(&m, g, &e), 0);
            if (m) {
                CHECK_EQ_INT(m->n_nodes, 4);
                CHECK_EQ_INT(m->n_edges, 3);
                /* backward of node2 is id 3, of node1 id 4; edge 3 -> 4 carries node2's activation */
                for (int32_t k = 0; k < m->n_edges; k++) {
                    int32_t u = m->file_id[m->edge_src[k]], v = m->file_id[m->out_dst[k]];
                    if (u == 1) {
                        CHECK_EQ_INT(v, 2);
                        CHECK_NEAR(m->edge_bytes[k], 10.0, 0);
                    }
                    if (u == 2) {
                        CHECK_EQ_INT(v, 3);
                        CHECK_NEAR(m->edge_bytes[k], 10.0, 0);
                    }
                    if (u == 3) {
                        CHECK_EQ_INT(v, 4);
                        CHECK_NEAR(m->edge_bytes[k], 10.0, 0);
                    }
                }
                for (int32_t v = 0; v < 4; v++)
                    if (m->file_id[v] == 3)
                        CHECK_NEAR(m->cost_ms[(size_t)v * HSDAG_COST_KINDS_ + HSDAG_COST_ACCEL], 3.0, 0);
                hsdag_graph_free(m);
            }
            hsdag_graph_free(g);
        }
    }

    /* bad inputs */
    bad("", HSDAG_EPARSE, "empty");
    bad(L1 "\n\tnode1 -- node7", HSDAG_EDANGLING, "line 2: edge refers to node7");
    bad(L1 "\n" L1, HSDAG_EPARSE, "line 2: duplicate node id 1");
    bad(L1 "\n" L2 "\n\tnode1 -- node2\n\tnode1 -- node2", HSDAG_EPARSE, "line 4: duplicate edge");
    bad(L1 "\n" L2 "\n\tnode1 -- node2\n\tnode2 -- node1", HSDAG_ECYCLE, "cycle");
    bad(L1 "\n\tnode1 -- node1", HSDAG_ECYCLE, "self-loop");
    bad("node1 -- Input0 -- forward_compute_time=abc, backward_compute_time=0.000, activation_size=10.0, "
        "parameter_size=0.000",
        HSDAG_EPARSE, "line 1: 'forward_compute_time=' is not");
    bad("node1 -- Input0 -- forward_compute_time=-1.0, backward_compute_time=0.000, activation_size=10.0, "
        "parameter_size=0.000",
        HSDAG_EPARSE, "line 1");
    bad("node1 -- Input0 -- forward_compute_time=1e999, backward_compute_time=0.000, activation_size=10.0, "
        "parameter_size=0.000",
        HSDAG_EPARSE, "line 1");
    bad("node1 -- Input0 -- forward_compute_time=1.0, backward_compute_time=0.000, activation_size=[1.0; x], "
        "parameter_size=0.000",
        HSDAG_EPARSE, "activation list");
    bad("node1 -- Input0 -- forward_compute_time=1.0, backward_compute_time=0.000, activation_size=[1.0; "
        "2.0, parameter_size=0.000",
        HSDAG_EPARSE, "line 1");
    bad("node1 -- Input0 -- forward_compute_time=1.0, backward_co", HSDAG_EPARSE, "line 1"); /* truncated */
    bad(L1 "\n" L2 "\n\tnode1 -- no", HSDAG_EPARSE, "line 3"); /* truncated edge */
    bad("node99999999999 -- x -- forward_compute_time=1.0, backward_compute_time=0.000, activation_size=1.0, "
        "parameter_size=0.000",
        HSDAG_ELIMIT, "node id exceeds");
    bad("node5 -- x -- forward_compute_time=1.0, backward_compute_time=0.000, activation_size=1.0, "
        "parameter_size=0.000",
        HSDAG_EPARSE, "outside 1..1");
    bad(L1 "\n\tnode1 -- node2\n" L2, HSDAG_EPARSE, "line 3: node line after the edge lines");
    bad(L1 "\n\n" L2, HSDAG_EPARSE, "line 2: empty line");
    bad(L1 "\r\n" L2, HSDAG_EPARSE, "CR");
    bad("node1 - x - forward_compute_time=1.0", HSDAG_EPARSE, "line 1");
    bad(L1 " trailing", HSDAG_EPARSE, "unexpected text");
    bad("hello world", HSDAG_EPARSE, "line 1");
    bad("node1 -- x -- forward_compute_time=1.0, backward_compute_time=0.0, activation_size=2e11, "
        "parameter_size=0.0",
        HSDAG_ELIMIT, "line 1: activation_size 2e+11 B is above");
    bad("node1 -- x -- forward_compute_time=1.0, backward_compute_time=0.0, activation_size=[6e10; 6e10], "
        "parameter_size=0.0",
        HSDAG_ELIMIT, "activation_size");
    bad("node1 -- x -- forward_compute_time=1.0, backward_compute_time=0.0, activation_size=1.0, "
        "parameter_size=1e12",
        HSDAG_ELIMIT, "parameter_size");
    {
        /* random bytes: no crash, an error */
        unsigned char junk[4096];
        uint64_t x = 88172645463325252ull;
        for (size_t i = 0; i < sizeof junk; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            junk[i] = (unsigned char)x;
        }
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        CHECK(hsdag_pipedream_read(&g, junk, sizeof junk, "junk", &e) < 0);
        CHECK(g == NULL);
    }
    return check_summary("test_pipedream");
}
