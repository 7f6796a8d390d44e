/* test_tw_methods.c - the methods of the Tarnawski benchmark: their greedy on hand-made cases (expected
 * splits and latencies recorded from their latency-greedy/greedy.cpp at commit b207b6a on the same inputs).
 * Not here: the reader (test_tarnawski.c), the simulator's latency model (test_sim.c), the other placers
 * (test_place.c). Entry points: main. */
#include "check.h"

#include "hsdag/io.h"
#include "hsdag/place.h"

#include <stdlib.h>

/* ---- small Tarnawski graphs built in code: nodes with (cpu ms, fpga ms, size, colour or -1), edges in
 * file order with their cost (ms) ---- */
typedef struct tw_node {
    double cpu, fpga, size;
    int32_t color;
} tw_node;
typedef struct tw_edge {
    int32_t u, v;
    double cost;
} tw_edge;

static hsdag_graph *tw_graph(const tw_node *nd, int32_t n, const tw_edge *ed, int32_t m, double cap,
                             int32_t k, int32_t l)
{
    hsdag_gb *b = hsdag_gb_create();
    for (int32_t i = 0; i < n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "n%d", (int)i);
        int32_t v = hsdag_gb_add_node(b, nm, "Measured");
        hsdag_gb_set_opclass(b, v, HSDAG_OP_UNKNOWN);
        hsdag_gb_set_cost(b, v, HSDAG_COST_CPU, nd[i].cpu);
        hsdag_gb_set_cost(b, v, HSDAG_COST_ACCEL, nd[i].fpga);
        hsdag_gb_set_mem_bytes(b, v, nd[i].size);
        hsdag_gb_set_color(b, v, nd[i].color);
        hsdag_gb_set_file_id(b, v, i);
    }
    for (int32_t j = 0; j < m; j++)
        hsdag_gb_add_edge_ex(b, ed[j].u, ed[j].v, ed[j].cost * 2147483.648, ed[j].cost);
    hsdag_graph_meta meta = {.format = HSDAG_FMT_TARNAWSKI,
                             .file_nodes = n,
                             .file_edges = m,
                             .ir_version = -1,
                             .opset = -1,
                             .max_accels = k,
                             .max_cpus = l,
                             .max_size_per_accel = cap,
                             .name = "hand"};
    hsdag_gb_set_meta(b, &meta);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) fprintf(stderr, "graph: %s\n", e.msg);
    hsdag_gb_free(b);
    return g;
}

/* Runs `method` on g with its own tarnawski device set; device[] receives the placement, indexed by file id
 * when by_id (the hand-made graphs number their nodes 0..n-1), else by node index. */
static double run_method(const hsdag_graph *g, const char *method, int by_id, int32_t *device,
                         hsdag_place_result *res)
{
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_err e = {0};
    double lat = NAN;
    if (hsdag_devices_preset("tarnawski", g, &d, &e) < 0 ||
        hsdag_place_problem_create(&p, g, d, NULL, &e) < 0) {
        fprintf(stderr, "setup: %s\n", e.msg);
    } else {
        hsdag_place_opts o = hsdag_place_opts_default();
        int32_t *dev = malloc((size_t)g->n_nodes * sizeof *dev);
        hsdag_place_result r;
        if (hsdag_place_run(p, method, &o, dev, &r, &e) < 0) {
            fprintf(stderr, "%s: %s\n", method, e.msg);
        } else {
            lat = r.latency_s * 1e3;
            for (int32_t v = 0; v < g->n_nodes; v++) device[by_id ? g->file_id[v] : v] = dev[v];
            if (res) *res = r;
        }
        free(dev);
    }
    hsdag_place_problem_free(p);
    hsdag_devices_free(d);
    return lat;
}

/* ---- their greedy on hand-made cases ----
 * Device indices of the tarnawski preset: accelerators 0..k-1, then the CPUs (k = the first CPU). Each case
 * lists the expected device of every node (their split: fpgas[j] -> j, cpus[0] -> k) and their latency. */
typedef struct greedy_case {
    const char *what;
    tw_node nodes[8];
    int32_t n;
    tw_edge edges[8];
    int32_t m;
    double cap;
    int32_t k;
    int32_t expect_dev[8];
    double expect_ms;
} greedy_case;

static const greedy_case greedy_cases[] = {
    /* nodes 1 and 3 share colour 7: 1 -> 2 -> 3 makes {1, 2, 3} one block (size 30 = the cap) */
    {"colour classes fused into a block",
     {{4, 1, 10, -1}, {4, 1, 10, 7}, {4, 1, 10, -1}, {4, 1, 10, 7}, {4, 1, 10, -1}, {4, 1, 10, -1}},
     6,
     {{0, 1, 0.5}, {1, 2, 0.25}, {2, 3, 0.5}, {3, 4, 0.125}, {4, 5, 0.5}},
     5,
     30,
     2,
     {0, 1, 1, 1, 2, 2},
     13.125},
    /* classes {0, 2} and {1, 3} reach each other: one block of 20 bytes with source 5 (other class) */
    {"two classes reaching each other",
     {{1, 1, 5, 1}, {2, 1, 5, 2}, {3, 1, 5, 1}, {2, 1, 5, 2}, {2, 1, 6, -1}, {1, 1, 5, 3}},
     6,
     {{0, 1, 0.5}, {1, 2, 0.5}, {2, 3, 0.5}, {3, 4, 0.5}, {5, 1, 0.5}},
     5,
     26,
     2,
     {0, 0, 0, 0, 1, 0},
     7.0},
    /* 0 -> 2 is listed before 0 -> 1, so the depth-first order takes 1 first: [0, 1, 3] then [2, 4, 5] */
    {"file edge order decides the depth-first order",
     {{2, 1, 10, -1}, {6, 1, 10, -1}, {5, 2, 10, -1}, {6, 1, 10, -1}, {5, 2, 10, -1}, {2, 1, 10, -1}},
     6,
     {{0, 2, 0.5}, {0, 1, 0.5}, {1, 3, 0.25}, {2, 4, 0.75}, {3, 5, 0.5}, {4, 5, 0.5}},
     6,
     30,
     2,
     {0, 0, 1, 0, 1, 1},
     10.0},
    /* 8 blocks of 10 bytes, 2 accelerators of 20: the last four go to the CPU */
    {"more blocks than accelerators",
     {{2, 1, 10, -1},
      {2.5, 1, 10, -1},
      {3, 1, 10, -1},
      {3.5, 1, 10, -1},
      {4, 1, 10, -1},
      {4.5, 1, 10, -1},
      {5, 1, 10, -1},
      {5.5, 1, 10, -1}},
     8,
     {{0, 1, 0.25}, {1, 2, 0.25}, {2, 3, 0.25}, {3, 4, 0.25}, {4, 5, 0.25}, {5, 6, 0.25}, {6, 7, 0.25}},
     7,
     20,
     2,
     {0, 0, 1, 1, 2, 2, 2, 2},
     23.75},
    /* node 2 (100 bytes) fits no accelerator of 40: it goes to the CPU and closes accelerator 0, which had
     * room left; 3 and 4 fill accelerator 1, 5 opens accelerator 2 */
    {"a block too large for any accelerator",
     {{3, 1, 20, -1}, {3, 1, 10, -1}, {5, 1, 100, -1}, {3, 1, 10, -1}, {3, 1, 30, -1}, {3, 1, 10, -1}},
     6,
     {{0, 1, 0.5}, {1, 2, 0.5}, {2, 3, 0.5}, {3, 4, 0.5}, {4, 5, 0.5}},
     5,
     40,
     3,
     {0, 0, 3, 1, 1, 2},
     12.0},
};

static void test_greedy_hand_made(void)
{
    for (size_t c = 0; c < sizeof greedy_cases / sizeof greedy_cases[0]; c++) {
        const greedy_case *x = &greedy_cases[c];
        hsdag_graph *g = tw_graph(x->nodes, x->n, x->edges, x->m, x->cap, x->k, 1);
        CHECK(g != NULL);
        if (!g) continue;
        int32_t dev[8];
        double ms = run_method(g, "greedy-tarnawski", 1, dev, NULL);
        CHECK_NEAR(ms, x->expect_ms, 1e-9 * x->expect_ms);
        int same = 1;
        for (int32_t v = 0; v < x->n; v++) same &= dev[v] == x->expect_dev[v];
        if (!same) fprintf(stderr, "greedy case '%s': split differs from theirs\n", x->what);
        CHECK(same);
        hsdag_graph_free(g);
    }
}

/* The eight latency workloads: their greedy's published figures (README table of issue 9, reproduced by
 * their greedy.exe), to 0.1%. */
static void test_greedy_published(void)
{
    static const struct {
        const char *path;
        double ms;
    } pub[] = {
        {"LayerGraphs/bert24_inference.json", 100.219},
        {"LayerGraphs/gnmt_inference.json", 268.5},
        {"LayerGraphs/inceptionv3_inference.json", 2485.24},
        {"LayerGraphs/resnet50_inference.json", 4197.06},
        {"OperatorGraphs/bert_l-3_inference.json", 416.204},
        {"OperatorGraphs/bert_l-6_inference.json", 494.135},
        {"OperatorGraphs/bert_l-12_inference.json", 867.839},
        {"OperatorGraphs/resnet50_inference.json", 839.536},
    };
    for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/data/tarnawski/latency-inputs/%s", pub[i].path);
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        if (hsdag_load_file(path, HSDAG_FMT_UNKNOWN, &g, &e) < 0) {
            fprintf(stderr, "%s\n", e.msg);
            CHECK(0);
            continue;
        }
        int32_t *dev = malloc((size_t)g->n_nodes * sizeof *dev);
        hsdag_place_result r;
        double ms = run_method(g, "greedy-tarnawski", 0, dev, &r);
        if (fabs(ms - pub[i].ms) > 1e-3 * pub[i].ms)
            fprintf(stderr, "%s: %.6f ms, theirs %.6f\n", path, ms, pub[i].ms);
        CHECK_NEAR(ms, pub[i].ms, 1e-3 * pub[i].ms);
        CHECK(r.feasible);
        free(dev);
        hsdag_graph_free(g);
    }
}

int main(void)
{
    test_greedy_hand_made();
    test_greedy_published();
    return check_summary("test_tw_methods");
}
