/* test_sim.c - the simulator against hand-computed schedules (chain, diamond, fork, shared bus, memory
 * overflow),
 * against a naive re-implementation of Tarnawski et al.'s written latency rules on random and expert splits,
 * plus determinism, no allocation per run, bounds below every simulated latency, and the trace.
 * Not here: device-file parsing and the cost table (test_devices.c); the CLI (tests/cli/simulate.sh).
 * Entry points: main.
 */
#include "../src/io/jsonstream.h"
#include "../src/io/placement_int.h"
#include "check.h"
#include "hsdag/codec.h"
#include "hsdag/gen.h"
#include "hsdag/io.h"
#include "hsdag/placement.h"
#include "hsdag/sim.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MS 1e-3
#define TOL 1e-12

/* ---- tiny graphs ---- */

/* Two devices C (cpu) and G (gpu, 3000 bytes); link 0.5 ms + 1 us/byte (1000 bytes = 1.5 ms). */
static const char *dev2_json =
    "{\"name\":\"t2\",\"semantics\":\"sequential\",\"devices\":["
    "{\"name\":\"C\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1e9},"
    "{\"name\":\"G\",\"kind\":\"gpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1e9,\"mem_capacity\":3000}],"
    "\"links\":[{\"from\":\"C\",\"to\":\"G\",\"latency_s\":0.0005,\"bandwidth\":1e6}]}";

/* Three devices C, G1, G2; bus = "pcie" for every link (shared) or none (point to point). */
static hsdag_devices *dev3(int shared)
{
    char js[1024];
    snprintf(js, sizeof js,
             "{\"name\":\"t3\",\"semantics\":\"concurrent\",\"devices\":["
             "{\"name\":\"C\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1e9},"
             "{\"name\":\"G1\",\"kind\":\"gpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1e9},"
             "{\"name\":\"G2\",\"kind\":\"gpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1e9}],"
             "\"default_link\":{\"latency_s\":0.0005,\"bandwidth\":1e6%s}}",
             shared ? ",\"bus\":\"pcie\"" : "");
    hsdag_devices *d = NULL;
    hsdag_err e = {0};
    if (hsdag_devices_parse(&d, js, strlen(js), "dev3", &e) < 0) fprintf(stderr, "%s\n", e.msg);
    return d;
}

static hsdag_devices *dev2(void)
{
    hsdag_devices *d = NULL;
    hsdag_err e = {0};
    if (hsdag_devices_parse(&d, dev2_json, strlen(dev2_json), "dev2", &e) < 0) fprintf(stderr, "%s\n", e.msg);
    return d;
}

typedef struct tnode {
    const char *name;
    double cpu_ms, gpu_ms;
    int64_t out_elems; /* f32 output elements, 0 = none */
    double param;
} tnode;

typedef struct tedge {
    int u, v;
    double bytes;
} tedge;

static hsdag_graph *build(const tnode *n, int nn, const tedge *ed, int ne)
{
    hsdag_gb *b = hsdag_gb_create();
    for (int i = 0; i < nn; i++) {
        int32_t v = hsdag_gb_add_node(b, n[i].name, "MatMul");
        hsdag_gb_set_opclass(b, v, HSDAG_OP_MATMUL);
        hsdag_gb_set_cost(b, v, HSDAG_COST_CPU, n[i].cpu_ms);
        hsdag_gb_set_cost(b, v, HSDAG_COST_ACCEL, n[i].gpu_ms);
        hsdag_gb_set_param_bytes(b, v, n[i].param);
        if (n[i].out_elems) hsdag_gb_add_output(b, v, HSDAG_DT_F32, 1, &n[i].out_elems);
    }
    for (int i = 0; i < ne; i++) hsdag_gb_add_edge(b, ed[i].u, ed[i].v, ed[i].bytes);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) fprintf(stderr, "%s\n", e.msg);
    hsdag_gb_free(b);
    return g;
}

/* Simulates one placement under one semantics; returns the result (arrays valid until s is freed). */
static double sim1(hsdag_sim *s, hsdag_semantics sem, const int32_t *dev, hsdag_sim_result *r)
{
    hsdag_sim_set_semantics(s, sem);
    int rc = hsdag_sim_run(s, dev, r);
    CHECK(rc == 0);
    return r->makespan_s;
}

static hsdag_sim *mksim(const hsdag_graph *g, const hsdag_devices *d, int record)
{
    hsdag_sim *s = NULL;
    hsdag_err e = {0};
    hsdag_sim_config cfg = hsdag_sim_config_default();
    cfg.record_trace = record;
    if (hsdag_sim_create(&s, g, d, &cfg, &e) < 0) fprintf(stderr, "%s\n", e.msg);
    return s;
}

static void test_chain(void)
{
    /* a -> b -> c; CPU 1, 2, 3 ms; GPU 4, 1, 1 ms; 1000-byte tensors (1.5 ms across the link) */
    tnode n[] = {{"a", 1, 4, 0, 0}, {"b", 2, 1, 0, 0}, {"c", 3, 1, 0, 0}};
    tedge ed[] = {{0, 1, 1000}, {1, 2, 1000}};
    hsdag_graph *g = build(n, 3, ed, 2);
    hsdag_devices *d = dev2();
    hsdag_sim *s = mksim(g, d, 0);
    CHECK(g && d && s);
    if (!s) return;
    CHECK(hsdag_sim_costs(s)->source == HSDAG_COSTSRC_FILE);
    hsdag_sim_result r;
    int32_t p1[] = {0, 1, 1}, p2[] = {1, 0, 1}, p3[] = {0, 0, 0};
    for (int sem = 0; sem < HSDAG_SEM_COUNT_; sem++) {
        CHECK_NEAR(sim1(s, sem, p1, &r), 4.5 * MS, TOL); /* 1 + 1.5 + 1 + 1 */
        CHECK_NEAR(r.busy_s[0], 1 * MS, TOL);
        CHECK_NEAR(r.busy_s[1], 2 * MS, TOL);
        CHECK_NEAR(sim1(s, sem, p2, &r), 10 * MS, TOL); /* 4 + 1.5 + 2 + 1.5 + 1 */
        CHECK_NEAR(r.xfer_s, 3 * MS, TOL);
        CHECK_NEAR(sim1(s, sem, p3, &r), 6 * MS, TOL);
        CHECK_EQ_INT(r.n_xfers, 0);
        CHECK(r.feasible);
    }
    sim1(s, HSDAG_SEM_SEQUENTIAL, p1, &r);
    CHECK_EQ_INT(r.n_xfers, 1);
    CHECK_NEAR(r.xfer_bytes, 1000, 0);
    sim1(s, HSDAG_SEM_TARNAWSKI, p2, &r);
    CHECK_EQ_INT(r.n_blocks, 2); /* {a} and {c}: the GPU set is cut in two by b on the CPU */
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

static void test_diamond(void)
{
    /* a -> b, a -> c, b -> d, c -> d; a, b, d on C, c on G */
    tnode n[] = {{"a", 1, 4, 0, 0}, {"b", 2, 4, 0, 0}, {"c", 3, 1, 0, 0}, {"d", 1, 4, 0, 0}};
    tedge ed[] = {{0, 1, 1000}, {0, 2, 1000}, {1, 3, 1000}, {2, 3, 1000}};
    hsdag_graph *g = build(n, 4, ed, 4);
    hsdag_devices *d = dev2();
    hsdag_sim *s = mksim(g, d, 0);
    CHECK(s != NULL);
    if (!s) return;
    hsdag_sim_result r;
    int32_t p[] = {0, 0, 1, 0};
    /* sequential: a 1, copy 1.5, b 2, c 1, copy 1.5, d 1 */
    CHECK_NEAR(sim1(s, HSDAG_SEM_SEQUENTIAL, p, &r), 8 * MS, TOL);
    CHECK_EQ_INT(r.n_xfers, 2);
    /* concurrent: b [1,3] overlaps the copy [1,2.5], c [2.5,3.5], copy back [3.5,5], d [5,6] */
    CHECK_NEAR(sim1(s, HSDAG_SEM_CONCURRENT, p, &r), 6 * MS, TOL);
    CHECK_NEAR(r.busy_s[0], 4 * MS, TOL);
    CHECK_NEAR(r.busy_s[1], 1 * MS, TOL);
    /* tarnawski: block {c} = 1 + 1.5 + 1 + 1.5 = 5; d = max(3, 5) + 1 */
    CHECK_NEAR(sim1(s, HSDAG_SEM_TARNAWSKI, p, &r), 6 * MS, TOL);
    CHECK_EQ_INT(r.n_blocks, 1);
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

static void test_fork(void)
{
    /* a on C feeds b and c on G: one tensor, two remote consumers, paid once */
    tnode n[] = {{"a", 1, 4, 0, 0}, {"b", 5, 1, 0, 0}, {"c", 5, 2, 0, 0}};
    tedge ed[] = {{0, 1, 1000}, {0, 2, 1000}};
    hsdag_graph *g = build(n, 3, ed, 2);
    hsdag_devices *d = dev2();
    hsdag_sim *s = mksim(g, d, 0);
    CHECK(s != NULL);
    if (!s) return;
    hsdag_sim_result r;
    int32_t p[] = {0, 1, 1};
    for (int sem = 0; sem < HSDAG_SEM_COUNT_; sem++) {
        CHECK_NEAR(sim1(s, sem, p, &r), 5.5 * MS, TOL); /* 1 + 1.5 + 1 + 2 */
        CHECK_EQ_INT(r.n_xfers, 1);
        CHECK_NEAR(r.xfer_bytes, 1000, 0);
    }
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    hsdag_graph_free(g);

    /* a on C feeds b on G1 and c on G2: two copies; on a shared bus they queue, point to point they
     * overlap */
    tnode n3[] = {{"a", 1, 1, 0, 0}, {"b", 1, 1, 0, 0}, {"c", 1, 1, 0, 0}};
    g = build(n3, 3, ed, 2);
    int32_t q[] = {0, 1, 2};
    for (int shared = 0; shared < 2; shared++) {
        hsdag_devices *d3 = dev3(shared);
        s = mksim(g, d3, 0);
        CHECK(s != NULL);
        if (!s) continue;
        CHECK_EQ_INT(d3->n_resources, shared ? 1 : 6);
        CHECK_NEAR(sim1(s, HSDAG_SEM_CONCURRENT, q, &r), (shared ? 5.0 : 3.5) * MS, TOL);
        CHECK_EQ_INT(r.n_xfers, 2);
        CHECK_NEAR(sim1(s, HSDAG_SEM_SEQUENTIAL, q, &r), 6 * MS, TOL); /* 1 + 1.5 + 1.5 + 1 + 1 */
        hsdag_sim_free(s);
        hsdag_devices_free(d3);
    }
    hsdag_graph_free(g);
}

static void test_memory(void)
{
    /* a (C) -> b (G) -> c (G); outputs 1000, 2000, 500 bytes; weights b 300, c 100; G holds 3000 bytes.
     * G's peak: weights 400 + a's copy 1000 + b's output 2000 while b runs = 3400: infeasible by 400. */
    tnode n[] = {{"a", 1, 1, 250, 0}, {"b", 1, 1, 500, 300}, {"c", 1, 1, 125, 100}};
    tedge ed[] = {{0, 1, 1000}, {1, 2, 2000}};
    hsdag_graph *g = build(n, 3, ed, 2);
    hsdag_devices *d = dev2();
    hsdag_sim *s = mksim(g, d, 0);
    CHECK(s != NULL);
    if (!s) return;
    hsdag_sim_result r;
    int32_t p[] = {0, 1, 1}, q[] = {0, 0, 1};
    for (int sem = 0; sem < 2; sem++) {
        sim1(s, sem, p, &r);
        CHECK(!r.feasible);
        CHECK_NEAR(r.peak_mem_bytes[1], 3400, 0);
        CHECK_NEAR(r.excess_bytes[1], 400, 0);
        CHECK_NEAR(r.max_excess_bytes, 400, 0);
        CHECK_NEAR(r.peak_mem_bytes[0], 1000, 0);
        CHECK_NEAR(r.excess_bytes[0], 0, 0); /* the CPU has no capacity limit */
        /* b on C: G holds c's weights, b's copy and c's output: 100 + 2000 + 500 */
        sim1(s, sem, q, &r);
        CHECK(r.feasible);
        CHECK_NEAR(r.peak_mem_bytes[1], 2600, 0);
    }
    /* tarnawski counts resident bytes only (Σ size per accelerator) */
    sim1(s, HSDAG_SEM_TARNAWSKI, p, &r);
    CHECK(r.feasible);
    CHECK_NEAR(r.peak_mem_bytes[1], 400, 0);
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

static void test_priority(void)
{
    /* x and y are both ready on G at 0; y feeds z on C. Upward rank runs y first so the copy and z start
     * early: y [0,1], copy [1,2.5], z [2.5,7.5] = 7.5 ms; topological order runs x first: 8.5 ms. */
    tnode n[] = {{"x", 9, 1, 0, 0}, {"y", 9, 1, 0, 0}, {"z", 5, 9, 0, 0}};
    tedge ed[] = {{1, 2, 1000}};
    hsdag_graph *g = build(n, 3, ed, 1);
    hsdag_devices *d = dev2();
    int32_t p[] = {1, 1, 0};
    for (int pr = 0; pr < 2; pr++) {
        hsdag_sim *s = NULL;
        hsdag_err e = {0};
        hsdag_sim_config cfg = hsdag_sim_config_default();
        cfg.semantics = HSDAG_SEM_CONCURRENT;
        cfg.priority = pr ? HSDAG_PRIO_TOPO : HSDAG_PRIO_UPWARD_RANK;
        CHECK(hsdag_sim_create(&s, g, d, &cfg, &e) == 0);
        hsdag_sim_result r;
        CHECK(hsdag_sim_run(s, p, &r) == 0);
        CHECK_NEAR(r.makespan_s, (pr ? 8.5 : 7.5) * MS, TOL);
        hsdag_sim_free(s);
    }
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

/* ---- sequential semantics against a naive re-statement on random DAGs ---- */

static void test_sequential_naive(void)
{
    hsdag_rng r;
    hsdag_rng_seed(&r, 99);
    hsdag_devices *d3 = dev3(0);
    for (int it = 0; it < 40; it++) {
        int n = 2 + (int)hsdag_rng_below(&r, 40);
        hsdag_gb *b = hsdag_gb_create();
        for (int i = 0; i < n; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "n%d", i);
            int32_t v = hsdag_gb_add_node(b, nm, "MatMul");
            hsdag_gb_set_opclass(b, v, HSDAG_OP_MATMUL);
            hsdag_gb_set_cost(b, v, HSDAG_COST_CPU, 0.1 + hsdag_rng_uniform(&r));
            hsdag_gb_set_cost(b, v, HSDAG_COST_ACCEL, 0.1 + hsdag_rng_uniform(&r));
            hsdag_gb_set_param_bytes(b, v, (double)hsdag_rng_below(&r, 1000));
            int64_t el = 1 + hsdag_rng_below(&r, 500);
            hsdag_gb_add_output(b, v, HSDAG_DT_F32, 1, &el);
            for (int u = 0; u < i; u++)
                if (hsdag_rng_uniform(&r) < 3.0 / i)
                    hsdag_gb_add_edge(b, u, v, 4.0 * (double)(1 + hsdag_rng_below(&r, 500)));
        }
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        CHECK(hsdag_gb_finish(b, &g, &e) == 0);
        hsdag_gb_free(b);
        hsdag_sim *s = mksim(g, d3, 0);
        hsdag_sim_set_semantics(s, HSDAG_SEM_SEQUENTIAL);
        const hsdag_costs *c = hsdag_sim_costs(s);
        int32_t V = g->n_nodes, dev[64];
        for (int32_t v = 0; v < V; v++) dev[v] = (int32_t)hsdag_rng_below(&r, it % 2 ? 3 : 2);
        hsdag_sim_result res;
        CHECK(hsdag_sim_run(s, dev, &res) == 0);
        /* naive: time and copies */
        double t = 0, live[3] = {0, 0, 0}, peak[3] = {0, 0, 0}, stat[3] = {0, 0, 0};
        int nx = 0;
        for (int32_t v = 0; v < V; v++) {
            t += c->node_s[v * 3 + dev[v]];
            stat[dev[v]] += c->static_bytes[v];
            live[dev[v]] += c->act_bytes[v];
            if (live[dev[v]] > peak[dev[v]]) peak[dev[v]] = live[dev[v]];
            for (int32_t d = 0; d < 3; d++) { /* one copy per other device with a consumer */
                int any = 0;
                for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++) any |= dev[g->out_dst[k]] == d;
                if (!any || d == dev[v]) continue;
                t += hsdag_costs_xfer_s(c, v, dev[v], d);
                nx++;
                live[d] += c->xfer_bytes[v];
                if (live[d] > peak[d]) peak[d] = live[d];
            }
            /* free every tensor (own output or copy) whose last reader on its device is v, or that nobody
             * local
             * reads once its copies are made */
            for (int32_t u = 0; u <= v; u++)
                for (int32_t d = 0; d < 3; d++) {
                    int32_t last = -1, has_out = g->out_off[u + 1] > g->out_off[u];
                    for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++)
                        if (dev[g->out_dst[k]] == d) last = g->out_dst[k];
                    int own = d == dev[u];
                    if (last == v)
                        live[d] -= own ? c->act_bytes[u] : c->xfer_bytes[u];
                    else if (own && u == v && last < 0 && has_out)
                        live[d] -= c->act_bytes[u];
                }
        }
        CHECK_NEAR(res.makespan_s, t, 1e-12);
        CHECK_EQ_INT(res.n_xfers, nx);
        for (int d = 0; d < 3; d++) {
            CHECK_NEAR(res.peak_mem_bytes[d], stat[d] + peak[d], 1e-6);
            CHECK(live[d] >= -1e-9); /* the naive model frees nothing twice */
        }
        hsdag_sim_free(s);
        hsdag_graph_free(g);
    }
    hsdag_devices_free(d3);
}

/* ---- placement files ---- */

static int parse_pl(const char *js, const hsdag_graph *g, const hsdag_devices *d, int32_t *dev,
                    hsdag_placement_info *pi, hsdag_err *e)
{
    return hsdag_placement_parse(dev, pi, js, strlen(js), "p.json", g, d, e);
}

static void test_placement_io(void)
{
    tnode n[] = {{"a", 1, 4, 0, 0}, {"b", 2, 1, 0, 0}, {"c", 3, 1, 0, 0}};
    tedge ed[] = {{0, 1, 1000}, {1, 2, 1000}};
    hsdag_graph *g = build(n, 3, ed, 2);
    hsdag_devices *d = dev2();
    int32_t dev[3], dev_b[3];
    hsdag_placement_info pi;
    hsdag_err e = {0};
    CHECK(parse_pl("{\"placement\": {\"a\": \"C\", \"b\": 1}, \"default\": \"G\"}", g, d, dev, &pi, &e) == 0);
    CHECK(dev[0] == 0 && dev[1] == 1 && dev[2] == 1);
    CHECK(pi.format == HSDAG_PLF_HSDAG && pi.n_listed == 2);
    CHECK(parse_pl("{\"a\": \"c\", \"b\": \"G\", \"c\": \"G\"}", g, d, dev, &pi, &e) == 0); /* affinity map */
    CHECK(dev[0] == 0 && dev[1] == 1 && dev[2] == 1);
    CHECK(pi.format == HSDAG_PLF_AFFINITY);
    /* writers read back to the same placement */
    for (int w = 0; w < 3; w++) {
        hsdag_buf b = {0};
        int rc = w == 0   ? hsdag_placement_write_json(&b, g, d, dev)
                 : w == 1 ? hsdag_placement_write_affinity(&b, g, d, dev)
                          : hsdag_placement_write_split(&b, g, d, dev);
        CHECK(rc == 0);
        CHECK(hsdag_placement_parse(dev_b, &pi, b.data, b.len, "rt", g, d, &e) == 0);
        CHECK(memcmp(dev, dev_b, sizeof dev) == 0);
        CHECK_EQ_INT(pi.format, w == 0 ? HSDAG_PLF_HSDAG : w == 1 ? HSDAG_PLF_AFFINITY : HSDAG_PLF_SPLIT);
        hsdag_buf_free(&b);
    }
    int32_t bad_dev[3] = {0, 2, 0};
    hsdag_buf b = {0};
    CHECK(hsdag_placement_write_json(&b, g, d, bad_dev) == HSDAG_EINVAL);
    hsdag_buf_free(&b);
    /* a split: file ids are the builder's indices here; fpgas[0] -> G, cpus[0] -> C */
    CHECK(parse_pl("{\"cpus\": [{\"nodes\": [0]}], \"fpgas\": [{\"nodes\": [2, 1]}], \"maxLoad\": -1}", g, d,
                   dev, &pi, &e) == 0);
    CHECK(dev[0] == 0 && dev[1] == 1 && dev[2] == 1);
    CHECK(pi.split_cpus == 1 && pi.split_fpgas == 1);
    struct {
        const char *js, *want;
    } bad[] = {
        {"{\"placement\": {\"zz\": \"C\"}}", "unknown node 'zz'"},
        {"{\"placement\": {\"a\": \"TPU\"}, \"default\": \"C\"}", "node 'a': unknown device 'TPU'"},
        {"{\"placement\": {\"a\": 7}, \"default\": \"C\"}", "node 'a': unknown device"},
        {"{\"placement\": {\"a\": [1]}, \"default\": \"C\"}", "not a string or an index"},
        {"{\"placement\": {\"a\": \"C\"}}", "node 'b' has no device"},
        {"{\"placement\": {}, \"default\": \"X\"}", "\"default\": unknown device 'X'"},
        {"{\"placement\": []}", "\"placement\" is not an object"},
        {"{\"placement\": {} ", "JSON text ends early"},
        {"{} []", "JSON syntax error at line 1, column 4"},
        {"[1]", "top level is not an object"},
        {"{\"cpus\": [{\"nodes\": [0, 1]}], \"fpgas\": [{\"nodes\": [1, 2]}]}",
         "is listed twice (also in fpgas[0])"},
        {"{\"cpus\": [{\"nodes\": [0, 9]}], \"fpgas\": [{\"nodes\": [1, 2]}]}",
         "cpus[0].nodes[1]: id 9 is not a node of the graph"},
        {"{\"cpus\": [{\"nodes\": [0]}], \"fpgas\": [{\"nodes\": [1]}]}",
         "node id 2 ('c') is in no group of the split"},
        {"{\"cpus\": [{\"nodes\": [0]}], \"fpgas\": [{\"nodes\": [1]}, {\"nodes\": [2]}]}",
         "2 accelerator groups"},
        {"{\"cpus\": [{\"nodes\": [\"a\"]}]}", "cpus[0]: nodes[0] is not an integer"},
        {"{\"cpus\": [{\"ids\": [0]}]}", "cpus[0]: nodes is missing"},
        {"{\"fpgas\": 3}", "fpgas is not an array"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&e, 0, sizeof e);
        int rc = parse_pl(bad[i].js, g, d, dev, &pi, &e);
        CHECK(rc == HSDAG_EPARSE || rc == HSDAG_EINVAL || rc == HSDAG_EDANGLING);
        if (!strstr(e.msg, bad[i].want)) fprintf(stderr, "placement case %zu: got '%s'\n", i, e.msg);
        CHECK(strstr(e.msg, bad[i].want) != NULL);
        CHECK(strncmp(e.msg, "p.json: ", 8) == 0 && !strchr(e.msg, '\n'));
    }
    CHECK(pi.split_fpgas == 0); /* the last case: info is reset per call */
    CHECK(parse_pl("{\"cpus\": [{\"nodes\": [0]}], \"fpgas\": [{\"nodes\": [1]}, {\"nodes\": [2]}]}", g, d,
                   dev, &pi, &e) < 0);
    CHECK(pi.split_fpgas == 2 && pi.split_cpus == 1); /* set even on failure, so a caller can widen the set */
    /* shorthands */
    const char *spec[] = {"C", "G-only", "cpu-only", "gpu-only", "g"};
    const int32_t want[] = {0, 1, 0, 1, 1};
    for (int i = 0; i < 5; i++) {
        CHECK(hsdag_placement_from_spec(dev, &pi, spec[i], g, d, &e) == 0);
        CHECK(dev[0] == want[i] && dev[2] == want[i] && pi.format == HSDAG_PLF_SPEC);
    }
    CHECK(hsdag_placement_from_spec(dev, &pi, "accel-only", g, d, &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "neither a device") != NULL);
    CHECK(hsdag_placement_from_spec(dev, &pi, "no/such.json", g, d, &e) == HSDAG_EIO);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

/* 1 if the streaming placement reader takes the text; whatever it takes, the json-c reader takes the same way */
static int pl_stream_vs_tree(const char *t, size_t len, const hsdag_graph *g, const hsdag_devices *d)
{
    int32_t ds[3], dt[3];
    hsdag_placement_info is, it;
    hsdag_err e = {0};
    int rs = hsdag_placement_parse_stream(ds, &is, t, len, g, d);
    CHECK(rs == 0 || rs == HSDAG_JSTREAM_STOP);
    if (rs != 0) return 0;
    int rt = hsdag_placement_parse_tree(dt, &it, t, len, "t", g, d, &e);
    if (rt != 0) fprintf(stderr, "stream took what json-c refuses (%s): %.*s\n", e.msg, (int)len, t);
    CHECK(rt == 0);
    CHECK(memcmp(ds, dt, sizeof ds) == 0);
    CHECK(is.format == it.format && is.n_listed == it.n_listed);
    return 1;
}

/* The streaming placement reader against the json-c one: legal layouts it takes or leaves, texts it must leave
 * (errors, other formats, keys given twice), and seeded mutations of one file. */
static void test_placement_stream(void)
{
    tnode n[] = {{"a", 1, 4, 0, 0}, {"b", 2, 1, 0, 0}, {"c", 3, 1, 0, 0}};
    tedge ed[] = {{0, 1, 1000}, {1, 2, 1000}};
    hsdag_graph *g = build(n, 3, ed, 2);
    hsdag_devices *d = dev2();
    static const char *const take[] = {
        ("{\"format\": \"hsdag-placement\", \"devices\": \"t2\", \"placement\": {\"a\": \"C\", \"b\": \"G\", "
         "\"c\": \"G\"}}"),
        "{\"placement\": {\"c\": 1, \"a\": 0}, \"default\": \"G\"}", /* out of order, indices */
        "{\"default\": \"C\", \"x\": [1, {\"y\": null}], \"placement\": {\"b\": \"g\"}}", /* ov_name */
        " {\"placement\":{\"\\u0061\":\"C\",\"b\":\"C\",\"c\":\"C\"}} \n",                /* escaped key */
        "{\"placement\": {}, \"default\": \"G\"}",
    };
    static const char *const leave[] = {
        "{\"placement\": {\"a\": \"C\", \"a\": \"G\"}, \"default\": \"C\"}", /* json-c keeps the last */
        "{\"placement\": {\"a\": \"C\"}, \"placement\": {}, \"default\": \"C\"}",
        "{\"placement\": {\"a\": \"C\"}}",                   /* b and c have no device */
        "{\"placement\": {\"a\": 1.0}, \"default\": \"C\"}", /* json-c: a double, no index */
        "{\"placement\": {\"a\": \"C\"}, \"default\": 0}",
        "{\"format\": \"other\", \"placement\": {}, \"default\": \"C\"}",
        "{\"devices\": \"t3\", \"placement\": {}, \"default\": \"C\"}",
        "{\"a\": \"C\", \"b\": \"G\", \"c\": \"G\"}", /* an affinity map: json-c's */
        "{\"cpus\": [{\"nodes\": [0, 1, 2]}]}",
        "{\"placement\": {\"zz\": \"C\"}, \"default\": \"C\"}",
        "{\"placement\": {}, \"default\": \"C\"} x",
        "",
    };
    for (size_t i = 0; i < sizeof take / sizeof *take; i++)
        CHECK_EQ_INT(pl_stream_vs_tree(take[i], strlen(take[i]), g, d), 1);
    for (size_t i = 0; i < sizeof leave / sizeof *leave; i++)
        CHECK_EQ_INT(pl_stream_vs_tree(leave[i], strlen(leave[i]), g, d), 0);
    static const char alphabet[] = "{}[]\",:0123456789-.eE+ \n\\uabcCG\x00\x7f\xc3\xa9";
    const char *base = take[1];
    size_t blen = strlen(base);
    char t[128];
    hsdag_rng rng;
    hsdag_rng_seed(&rng, 15);
    int taken = 0;
    for (int it = 0; it < 3000; it++) {
        size_t len = blen;
        memcpy(t, base, len);
        for (int k = 0, edits = 1 + (int)hsdag_rng_below(&rng, 3); k < edits && len > 2; k++) {
            size_t at = hsdag_rng_below(&rng, (uint32_t)len);
            char c = alphabet[hsdag_rng_below(&rng, sizeof alphabet - 1)];
            int op = (int)hsdag_rng_below(&rng, 3);
            if (op == 0) {
                t[at] = c;
            } else if (op == 1 && len + 1 < sizeof t) { /* insert */
                memmove(t + at + 1, t + at, len - at);
                t[at] = c;
                len++;
            } else { /* delete */
                memmove(t + at, t + at + 1, len - at - 1);
                len--;
            }
        }
        taken += pl_stream_vs_tree(t, len, g, d);
    }
    CHECK(taken > 10);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

/* A placement file large enough to be read in pieces (4 MiB and up): the same devices as the whole-text reader,
 * and a damaged copy still gets the whole-file reader's message. */
static void test_placement_file(void)
{
    hsdag_gen_random_config rc = hsdag_gen_random_config_default();
    rc.nodes = 320000;
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_gen_random(&g, &rc, &e) == 0);
    hsdag_devices *d = dev2();
    int32_t n = g ? g->n_nodes : 0;
    int32_t *dev = calloc((size_t)n + 1, sizeof *dev), *df = calloc((size_t)n + 1, sizeof *df),
            *db = calloc((size_t)n + 1, sizeof *db);
    for (int32_t v = 0; v < n; v++) dev[v] = (v * 7 / 3) % 2;
    hsdag_buf w = {0};
    CHECK(g && dev && df && db && hsdag_placement_write_json(&w, g, d, dev) == 0);
    CHECK(w.len >= (size_t)4 << 20);
    char path[] = "/tmp/hsdag_test_sim_plXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    for (int pass = 0; pass < 2 && fd >= 0 && w.data && df && db; pass++) {
        if (pass == 1) memcpy(w.data + w.len / 2, "\"}}", 3); /* a syntax error half-way */
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(w.data, 1, w.len, f) == w.len);
        if (f) fclose(f);
        hsdag_placement_info inf, inb;
        int rf = hsdag_placement_read_file(df, &inf, path, g, d, &e);
        char msg[sizeof e.msg];
        memcpy(msg, e.msg, sizeof msg);
        int rb = hsdag_placement_parse(db, &inb, w.data, w.len, path, g, d, &e);
        CHECK_EQ_INT(rf, rb);
        CHECK_EQ_INT(rf == 0, pass == 0);
        if (rf == 0) {
            CHECK(memcmp(df, db, (size_t)n * sizeof *df) == 0 &&
                  memcmp(df, dev, (size_t)n * sizeof *df) == 0);
            CHECK(inf.format == inb.format && inf.n_listed == inb.n_listed);
        } else {
            CHECK(strcmp(msg, e.msg) == 0);
        }
    }
    if (fd >= 0) close(fd), unlink(path);
    hsdag_free(w.data);
    free(dev), free(df), free(db);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

/* ---- Tarnawski workloads: a test-side reader and a naive re-implementation of the written rules ---- */

typedef struct tw {
    int n, m, k, l;
    double cap;
    int64_t *id;
    double *cpu, *fpga, *size, *cost; /* cost: the node's outgoing edge cost, 0 if none */
    int *ok;                          /* supportedOnFpga */
    int *eu, *ev;                     /* edges by JSON index */
    hsdag_graph *g;
    int32_t *idx_of_node; /* graph node -> JSON index */
} tw;

static int64_t jint(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

static double jdbl(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : 0;
}

static int jbool(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_boolean(v) : 1;
}

static int tw_find(const tw *t, int64_t id)
{
    for (int i = 0; i < t->n; i++)
        if (t->id[i] == id) return i;
    return -1;
}

static void tw_free(tw *t)
{
    free(t->id), free(t->cpu), free(t->fpga), free(t->size), free(t->cost), free(t->ok), free(t->eu),
        free(t->ev);
    free(t->idx_of_node);
    hsdag_graph_free(t->g);
}

static int tw_load(const char *path, tw *t)
{
    memset(t, 0, sizeof *t);
    json_object *root = json_object_from_file(path);
    if (!root) return -1;
    json_object *nodes, *edges;
    json_object_object_get_ex(root, "nodes", &nodes);
    json_object_object_get_ex(root, "edges", &edges);
    t->n = (int)json_object_array_length(nodes);
    t->m = (int)json_object_array_length(edges);
    t->k = (int)jint(root, "maxFPGAs");
    t->l = (int)jint(root, "maxCPUs");
    t->cap = jdbl(root, "maxSizePerFPGA");
    t->id = calloc(t->n, sizeof *t->id);
    t->cpu = calloc(t->n, sizeof(double)), t->fpga = calloc(t->n, sizeof(double));
    t->size = calloc(t->n, sizeof(double)), t->cost = calloc(t->n, sizeof(double));
    t->ok = calloc(t->n, sizeof(int)), t->eu = calloc(t->m, sizeof(int)), t->ev = calloc(t->m, sizeof(int));
    hsdag_gb *b = hsdag_gb_create();
    for (int i = 0; i < t->n; i++) {
        json_object *o = json_object_array_get_idx(nodes, i);
        t->id[i] = jint(o, "id");
        t->cpu[i] = jdbl(o, "cpuLatency");
        t->fpga[i] = jdbl(o, "fpgaLatency");
        t->size[i] = jdbl(o, "size");
        t->ok[i] = jbool(o, "supportedOnFpga");
        char nm[32];
        snprintf(nm, sizeof nm, "n%lld", (long long)t->id[i]);
        int32_t v = hsdag_gb_add_node(b, nm, "Op");
        hsdag_gb_set_file_id(b, v, (int32_t)t->id[i]);
        hsdag_gb_set_cost(b, v, HSDAG_COST_CPU, t->cpu[i]);
        hsdag_gb_set_cost(b, v, HSDAG_COST_ACCEL, t->fpga[i]);
        hsdag_gb_set_mem_bytes(b, v, t->size[i]);
        json_object *cc;
        if (json_object_object_get_ex(o, "colorClass", &cc))
            hsdag_gb_set_color(b, v, json_object_get_int(cc));
        if (!t->ok[i]) hsdag_gb_set_flags(b, v, HSDAG_NF_NO_ACCEL);
    }
    for (int j = 0; j < t->m; j++) {
        json_object *o = json_object_array_get_idx(edges, j);
        t->eu[j] = tw_find(t, jint(o, "sourceId"));
        t->ev[j] = tw_find(t, jint(o, "destId"));
        double c = jdbl(o, "cost");
        t->cost[t->eu[j]] = c;
        hsdag_gb_add_edge_ex(b, t->eu[j], t->ev[j], jdbl(o, "size"), c);
    }
    hsdag_graph_meta meta = {.format = HSDAG_FMT_TARNAWSKI,
                             .file_nodes = t->n,
                             .file_edges = t->m,
                             .ir_version = -1,
                             .opset = -1,
                             .max_accels = t->k,
                             .max_cpus = t->l,
                             .max_size_per_accel = t->cap,
                             .name = path};
    hsdag_gb_set_meta(b, &meta);
    hsdag_err e = {0};
    int rc = hsdag_gb_finish(b, &t->g, &e);
    if (rc < 0) fprintf(stderr, "%s: %s\n", path, e.msg);
    hsdag_gb_free(b);
    json_object_put(root);
    if (rc < 0) return rc;
    t->idx_of_node = calloc(t->n, sizeof *t->idx_of_node);
    for (int32_t v = 0; v < t->g->n_nodes; v++) t->idx_of_node[v] = tw_find(t, t->g->file_id[v]);
    return 0;
}

/* dp of the longest-path cut, by memoised recursion over predecessors, exactly as the rule is written */
static int naive_dp(const tw *t, const int *acc, int a, int v, int *memo)
{
    if (memo[v] >= 0) return memo[v];
    int in = acc[v] == a, best = in ? 1 : 0;
    for (int j = 0; j < t->m; j++)
        if (t->ev[j] == v) {
            int u = t->eu[j], x = naive_dp(t, acc, a, u, memo) + (in && acc[u] != a);
            if (x > best) best = x;
        }
    return memo[v] = best;
}

/* acc[i] = accelerator of JSON node i, -1 for a CPU; order = JSON indices in topological order. Returns the
 * latency in ms; *cuts counts cycle cuts (the extension of docs/simulator.md, 0 when their tool accepts the
 * split). */
static double naive_latency(const tw *t, const int *acc, int k, const int *order, int *cuts)
{
    int n = t->n;
    int *unit = malloc(n * sizeof *unit), *memo = malloc(n * sizeof *memo), *done = calloc(n, sizeof *done);
    int *blocked = malloc(n * sizeof *blocked), *seen = malloc(n * sizeof *seen);
    double *fin = calloc(n, sizeof *fin), lat = 0;
    for (int i = 0; i < n; i++) unit[i] = -1 - i; /* a CPU node is its own unit */
    for (int a = 0; a < k; a++) {
        for (int i = 0; i < n; i++) memo[i] = -1;
        for (int i = 0; i < n; i++)
            if (acc[i] == a) unit[i] = a * (n + 1) + naive_dp(t, acc, a, i, memo);
    }
    int *rep = malloc(n * sizeof *rep); /* the first member of each node's unit */
    for (int i = 0; i < n; i++) {
        rep[i] = i;
        for (int j = 0; j < i; j++)
            if (unit[j] == unit[i]) {
                rep[i] = j;
                break;
            }
    }
    int left = n;
    while (left > 0) {
        for (int i = 0; i < n; i++) blocked[i] = 0;
        /* a unit is blocked while any of its members has an unfinished predecessor outside the unit */
        for (int j = 0; j < t->m; j++) {
            int u = t->eu[j], v = t->ev[j];
            if (unit[u] != unit[v] && !done[u]) blocked[rep[v]] = 1;
        }
        int progress = 0;
        for (int i = 0; i < n; i++) {
            if (done[i] || blocked[rep[i]]) continue;
            if (acc[i] < 0) {
                double m = 0;
                for (int j = 0; j < t->m; j++)
                    if (t->ev[j] == i && fin[t->eu[j]] > m) m = fin[t->eu[j]];
                fin[i] = t->cpu[i] + m;
            } else {
                int U = unit[i];
                double maxp = 0, in = 0, sum = 0, out = 0;
                for (int u = 0; u < n; u++) seen[u] = 0;
                for (int j = 0; j < t->m; j++) {
                    int u = t->eu[j], v = t->ev[j];
                    if (unit[v] == U && unit[u] != U && !seen[u]) {
                        seen[u] = 1;
                        in += t->cost[u];
                        if (fin[u] > maxp) maxp = fin[u];
                    }
                }
                for (int v = 0; v < n; v++) {
                    if (unit[v] != U) continue;
                    sum += t->fpga[v];
                    for (int j = 0; j < t->m; j++)
                        if (t->eu[j] == v && unit[t->ev[j]] != U) {
                            out += t->cost[v];
                            break;
                        }
                }
                for (int v = 0; v < n; v++)
                    if (unit[v] == U) fin[v] = maxp + in + sum + out;
            }
            for (int v = 0; v < n; v++)
                if (!done[v] && unit[v] == unit[i]) {
                    done[v] = 1;
                    left--;
                    if (fin[v] > lat) lat = fin[v];
                }
            progress = 1;
        }
        if (progress) continue;
        /* stalled: the blocks form a cycle. The documented extension: cut from the block of the first
         * unfinished
         * node (topological order) the members whose predecessors are all finished or in that part. */
        int x = -1;
        for (int o = 0; o < n && x < 0; o++)
            if (!done[order[o]]) x = order[o];
        int U = unit[x], fresh = -(n + 1) - (*cuts)++;
        for (int o = 0; o < n; o++) {
            int v = order[o], ok = unit[v] == U;
            for (int j = 0; j < t->m && ok; j++)
                if (t->ev[j] == v) {
                    int u = t->eu[j];
                    ok = unit[u] == U ? 0 : unit[u] == fresh ? 1 : done[u];
                }
            if (ok) unit[v] = fresh;
        }
        for (int i = 0; i < n; i++)
            if (unit[i] == U || unit[i] == fresh) {
                rep[i] = i;
                for (int j = 0; j < i; j++)
                    if (unit[j] == unit[i]) {
                        rep[i] = j;
                        break;
                    }
            }
    }
    CHECK_EQ_INT(left, 0);
    free(unit), free(memo), free(done), free(blocked), free(seen), free(fin), free(rep);
    return lat;
}

static int n_compared, n_with_cuts;

static void tw_compare(const tw *t, hsdag_sim *s, const hsdag_devices *d, const int *acc, int k, int32_t *dev,
                       hsdag_rng *r)
{
    for (int32_t v = 0; v < t->g->n_nodes; v++) {
        int i = t->idx_of_node[v];
        /* CPU nodes go to any of the l CPUs: they are interchangeable in this model */
        dev[v] = acc[i] >= 0 ? acc[i] : k + (int32_t)hsdag_rng_below(r, (uint32_t)(d->n - k));
    }
    hsdag_sim_result res;
    CHECK(hsdag_sim_run(s, dev, &res) == 0);
    int cuts = 0;
    double want = naive_latency(t, acc, k, t->idx_of_node, &cuts);
    CHECK_NEAR(res.makespan_s / MS, want, 1e-9 * (want > 1 ? want : 1));
    CHECK_EQ_INT(res.n_cycle_cuts, cuts);
    n_compared++;
    n_with_cuts += cuts > 0;
}

static void test_tarnawski_file(const char *path, int n_random)
{
    tw t;
    if (tw_load(path, &t) < 0) {
        CHECK(!"cannot load");
        return;
    }
    hsdag_devices *d = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_devices_load(&d, NULL, t.g, &e) == 0); /* the file's own: k accelerators, l CPUs, tarnawski */
    CHECK(d && d->n == t.k + t.l && d->semantics == HSDAG_SEM_TARNAWSKI);
    hsdag_sim *s = mksim(t.g, d, 0);
    CHECK(s != NULL);
    if (!s || !d) goto out;
    CHECK(hsdag_sim_costs(s)->source == HSDAG_COSTSRC_FILE);
    int *acc = malloc(t.n * sizeof *acc);
    int32_t *dev = malloc(t.n * sizeof *dev);
    hsdag_rng r;
    hsdag_rng_seed(&r, 7);
    for (int it = 0; it < n_random; it++) {
        int mode = it % 3;
        int32_t cut[64];
        int ncut = 1 + (int)hsdag_rng_below(&r, (uint32_t)t.k);
        for (int c = 0; c < ncut; c++) cut[c] = (int32_t)hsdag_rng_below(&r, (uint32_t)t.n);
        for (int32_t v = 0; v < t.g->n_nodes; v++) {
            int i = t.idx_of_node[v], a;
            if (mode == 0)
                a = (int)hsdag_rng_below(&r, (uint32_t)t.k + 1) - 1; /* scattered: many pieces */
            else if (mode == 1) {                                    /* topological ranges, some on the CPU */
                a = 0;
                for (int c = 0; c < ncut; c++) a += v >= cut[c];
                a = a % (t.k + 1) - 1;
            } else
                a = hsdag_rng_uniform(&r) < 0.2 ? -1 : (int)hsdag_rng_below(&r, 2); /* two accelerators */
            acc[i] = (t.ok[i] || mode == 0) ? a : -1;
        }
        tw_compare(&t, s, d, acc, t.k, dev, &r);
    }
    for (int i = 0; i < t.n; i++) acc[i] = -1; /* CPU only: the critical path of cpuLatency */
    tw_compare(&t, s, d, acc, t.k, dev, &r);
    for (int i = 0; i < t.n; i++) acc[i] = 0; /* all on one accelerator: Σ fpgaLatency */
    tw_compare(&t, s, d, acc, t.k, dev, &r);
    hsdag_sim_result res;
    hsdag_sim_run(s, dev, &res);
    double sum = 0;
    for (int i = 0; i < t.n; i++) sum += t.fpga[i];
    CHECK_NEAR(res.makespan_s / MS, sum, 1e-9 * sum);
    free(acc);
    free(dev);
out:
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    tw_free(&t);
}

/* Expert splits read through hsdag_placement_parse agree with the naive rules on the split as written. */
static void test_expert(const char *graph, const char *split, double want_excess)
{
    tw t;
    if (tw_load(graph, &t) < 0) {
        CHECK(!"cannot load");
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    hsdag_err e = {0};
    hsdag_devices *d = NULL;
    hsdag_sim *s = NULL;
    int32_t *dev = malloc(t.n * sizeof *dev);
    int *acc = malloc(t.n * sizeof *acc);
    CHECK(hsdag_read_file(&buf, &len, split, 0, &e) == 0);
    CHECK(hsdag_devices_load(&d, NULL, t.g, &e) == 0);
    hsdag_placement_info pi;
    int rc = hsdag_placement_parse(dev, &pi, buf, len, split, t.g, d, &e);
    if (rc < 0) { /* more accelerator groups than maxFPGAs (bert24): widen the set, stay infeasible */
        CHECK(pi.split_fpgas > t.k);
        CHECK(strstr(e.msg, "accelerator groups") != NULL);
        char spec[64];
        snprintf(spec, sizeof spec, "tarnawski:%d", (int)pi.split_fpgas);
        hsdag_devices_free(d);
        CHECK(hsdag_devices_load(&d, spec, t.g, &e) == 0);
        rc = hsdag_placement_parse(dev, &pi, buf, len, split, t.g, d, &e);
    }
    CHECK(rc == 0);
    CHECK(pi.format == HSDAG_PLF_SPLIT);
    s = mksim(t.g, d, 0);
    if (rc == 0 && s) {
        int k = hsdag_devices_first_of(d, HSDAG_DEV_CPU);
        for (int32_t v = 0; v < t.g->n_nodes; v++) acc[t.idx_of_node[v]] = dev[v] < k ? dev[v] : -1;
        hsdag_sim_result res;
        CHECK(hsdag_sim_run(s, dev, &res) == 0);
        int cuts = 0;
        double want = naive_latency(&t, acc, k, t.idx_of_node, &cuts);
        CHECK_NEAR(res.makespan_s / MS, want, 1e-9 * want);
        CHECK_EQ_INT(cuts, 0); /* expert splits are accepted by their tool */
        CHECK_EQ_INT(res.n_cycle_cuts, 0);
        /* the expert splits were made for the throughput inputs (6 accelerators of 16 GiB): under the latency
         * inputs' caps three overflow memory, and bert24 uses 6 accelerators where maxFPGAs is 5 */
        CHECK(!res.feasible);
        CHECK_NEAR(res.max_excess_bytes, want_excess, 0);
        printf("  %s: expert split latency %.6f ms (naive %.6f), %d blocks, feasible %d\n", split,
               res.makespan_s / MS, want, (int)res.n_blocks, res.feasible);
        /* the split written back reads to the same placement */
        hsdag_buf out = {0};
        int32_t *dev2_ = malloc(t.n * sizeof *dev2_);
        CHECK(hsdag_placement_write_split(&out, t.g, d, dev) == 0);
        CHECK(hsdag_placement_parse(dev2_, NULL, out.data, out.len, "rt", t.g, d, &e) == 0);
        CHECK(memcmp(dev, dev2_, t.n * sizeof *dev) == 0);
        free(dev2_);
        hsdag_buf_free(&out);
    }
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    hsdag_free(buf);
    free(dev);
    free(acc);
    tw_free(&t);
}

/* ---- properties on a real workload ---- */

static void test_properties(void)
{
    tw t;
    if (tw_load("tests/data/tarnawski/latency-inputs/LayerGraphs/inceptionv3_inference.json", &t) < 0) {
        CHECK(!"cannot load");
        return;
    }
    const char *sets[] = {"cpu-gpu", "cpu-4gpu", "tarnawski"};
    int32_t *dev = malloc(t.n * sizeof *dev), *dev0 = malloc(t.n * sizeof *dev0);
    hsdag_rng r;
    hsdag_rng_seed(&r, 11);
    for (int si = 0; si < 3; si++) {
        hsdag_devices *d = NULL;
        hsdag_err e = {0};
        CHECK(hsdag_devices_load(&d, sets[si], t.g, &e) == 0);
        hsdag_sim *s = mksim(t.g, d, 1);
        CHECK(s != NULL);
        if (!s) {
            hsdag_devices_free(d);
            continue;
        }
        for (int sem = 0; sem < HSDAG_SEM_COUNT_; sem++) {
            hsdag_bound bd;
            CHECK(hsdag_bound_compute(&bd, hsdag_sim_costs(s), sem, NULL, NULL, &e) == 0);
            /* path-blocks uses memory caps and allowed devices: it holds for feasible placements only (the
             * brute-force test of test_tw_methods checks it); the other terms hold for every placement */
            double any_lb = isnan(bd.path_blocks_s) ? bd.lower_s : bd.critical_path_s;
            hsdag_sim_set_semantics(s, sem);
            for (int it = 0; it < 30; it++) {
                for (int32_t v = 0; v < t.g->n_nodes; v++)
                    dev[v] = (int32_t)hsdag_rng_below(&r, (uint32_t)d->n);
                if (it == 0) memcpy(dev0, dev, t.n * sizeof *dev);
                hsdag_sim_result a, b;
                CHECK(hsdag_sim_run(s, dev, &a) == 0);
                double mk = a.makespan_s, x = a.xfer_s;
                CHECK(mk >= any_lb * (1 - 1e-12));
                if (a.feasible) CHECK(mk >= bd.lower_s * (1 - 1e-12));
                /* determinism: the same placement again gives bit-identical numbers */
                CHECK(hsdag_sim_run(s, dev, &b) == 0);
                CHECK(memcmp(&mk, &b.makespan_s, sizeof mk) == 0 && memcmp(&x, &b.xfer_s, sizeof x) == 0);
                /* no allocation per run: the next allocation would fail, the run must not care */
                hsdag_alloc_fail_after(1);
                int rc = hsdag_sim_run(s, dev, &b);
                hsdag_alloc_fail_after(0);
                CHECK(rc == 0 && b.makespan_s == mk);
            }
            /* single-device placements are never below the bound either */
            for (int32_t k = 0; k < d->n; k++) {
                for (int32_t v = 0; v < t.g->n_nodes; v++) dev[v] = k;
                hsdag_sim_result a;
                CHECK(hsdag_sim_run(s, dev, &a) == 0);
                CHECK(a.makespan_s >= any_lb * (1 - 1e-12));
                if (a.feasible) CHECK(a.makespan_s >= bd.lower_s * (1 - 1e-12));
                CHECK_EQ_INT(a.n_xfers, 0);
            }
            /* the trace of a run is valid JSON with one slice per op and per transfer */
            hsdag_sim_result a;
            hsdag_sim_run(s, dev0, &a);
            hsdag_buf tb = {0};
            CHECK(hsdag_sim_trace_write(s, &tb, &e) == 0);
            json_object *tr = json_tokener_parse(tb.data);
            json_object *evs = NULL;
            CHECK(tr && json_object_object_get_ex(tr, "traceEvents", &evs));
            if (evs) {
                size_t n = json_object_array_length(evs), ops = 0;
                for (size_t i = 0; i < n; i++) {
                    json_object *ph;
                    json_object_object_get_ex(json_object_array_get_idx(evs, i), "ph", &ph);
                    ops += strcmp(json_object_get_string(ph), "X") == 0;
                }
                size_t want = (size_t)t.g->n_nodes + (sem == HSDAG_SEM_TARNAWSKI ? 0 : (size_t)a.n_xfers);
                if (sem == HSDAG_SEM_TARNAWSKI)
                    CHECK(ops >= want);
                else
                    CHECK_EQ_INT(ops, want);
            }
            json_object_put(tr);
            hsdag_buf_free(&tb);
        }
        /* an out-of-range device index is refused */
        dev[0] = d->n;
        hsdag_sim_result a;
        CHECK(hsdag_sim_run(s, dev, &a) == HSDAG_EINVAL);
        hsdag_sim_free(s);
        hsdag_devices_free(d);
    }
    free(dev);
    free(dev0);
    tw_free(&t);
}

/* Creating a simulator under allocation failure fails cleanly at every step (ASan checks for leaks). */
static void test_create_oom(void)
{
    tnode n[] = {{"a", 1, 4, 0, 0}, {"b", 2, 1, 0, 0}, {"c", 3, 1, 0, 0}};
    tedge ed[] = {{0, 1, 1000}, {1, 2, 1000}};
    hsdag_graph *g = build(n, 3, ed, 2);
    hsdag_devices *d = dev2();
    int ok = 0;
    for (long k = 1; k < 200 && !ok; k++) {
        hsdag_sim *s = NULL;
        hsdag_err e = {0};
        hsdag_sim_config cfg = hsdag_sim_config_default();
        cfg.record_trace = 1;
        hsdag_alloc_fail_after(k);
        int rc = hsdag_sim_create(&s, g, d, &cfg, &e);
        hsdag_alloc_fail_after(0);
        if (rc == 0)
            ok = 1;
        else
            CHECK(rc == HSDAG_ENOMEM && s == NULL);
        hsdag_sim_free(s);
    }
    CHECK(ok);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

static void test_feasibility_flags(void)
{
    /* colour classes, unsupported ops and the accelerator count limit make a placement infeasible */
    tw t;
    if (tw_load("tests/data/tarnawski/latency-inputs/LayerGraphs/bert24_inference.json", &t) < 0) {
        CHECK(!"cannot load");
        return;
    }
    hsdag_devices *d = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_devices_load(&d, "tarnawski:7", t.g, &e) == 0);
    CHECK_EQ_INT(d->max_accels_used, 5);
    hsdag_sim *s = mksim(t.g, d, 0);
    int32_t *dev = malloc(t.n * sizeof *dev);
    hsdag_sim_result r;
    for (int32_t v = 0; v < t.g->n_nodes; v++) dev[v] = v % 6; /* six accelerators used, limit five */
    CHECK(hsdag_sim_run(s, dev, &r) == 0);
    CHECK_EQ_INT(r.accels_used, 6);
    CHECK(!r.feasible);
    for (int32_t v = 0; v < t.g->n_nodes; v++) dev[v] = 0;
    CHECK(hsdag_sim_run(s, dev, &r) == 0);
    CHECK_EQ_INT(r.accels_used, 1);
    double sz = 0;
    for (int i = 0; i < t.n; i++) sz += t.size[i];
    CHECK_NEAR(r.peak_mem_bytes[0], sz, 1e-6 * sz);
    CHECK_EQ_INT(r.feasible, sz <= t.cap);
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    free(dev);
    tw_free(&t);
}

/* ---- golden results: bit-identical numbers across optimisations of the simulator ----
 * FNV-1a over the bytes of every result field (and of the trace JSON for a few runs, which pins each op's
 * start
 * and finish and every transfer) for a few hundred seeded placements per model, device set, semantics and
 * priority. The constants were recorded before the concurrent/tarnawski speed-up; any change to a makespan, a
 * busy time, a peak or a transfer total, even in the last bit, changes them. */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    return hsdag_fnv1a64(h, p, n); /* the library's one FNV-1a */
}

static uint64_t fnv_result(uint64_t h, const hsdag_sim_result *r)
{
    h = fnv(h, &r->makespan_s, sizeof r->makespan_s);
    h = fnv(h, &r->feasible, sizeof r->feasible);
    h = fnv(h, r->busy_s, (size_t)r->n_devices * sizeof *r->busy_s);
    h = fnv(h, r->peak_mem_bytes, (size_t)r->n_devices * sizeof *r->peak_mem_bytes);
    h = fnv(h, r->excess_bytes, (size_t)r->n_devices * sizeof *r->excess_bytes);
    h = fnv(h, &r->max_excess_bytes, sizeof r->max_excess_bytes);
    h = fnv(h, &r->xfer_bytes, sizeof r->xfer_bytes);
    h = fnv(h, &r->xfer_s, sizeof r->xfer_s);
    h = fnv(h, &r->n_xfers, sizeof r->n_xfers);
    int32_t ints[] = {r->n_unsupported, r->n_color_violations, r->accels_used, r->n_blocks, r->n_cycle_cuts};
    return fnv(h, ints, sizeof ints);
}

/* Returns the checksum of n_pl placements (half uniform per node, half contiguous topological runs) under
 * each
 * semantics; with traces of the first few. */
static uint64_t golden_one(const char *path, const char *devices, hsdag_priority prio, int n_pl,
                           uint64_t seed)
{
    hsdag_graph *g = NULL;
    hsdag_devices *d = NULL;
    hsdag_sim *s = NULL;
    hsdag_err e = {0};
    uint64_t h = HSDAG_FNV64_BASIS;
    if (hsdag_load_file(&g, path, HSDAG_FMT_UNKNOWN, &e) < 0 || hsdag_devices_load(&d, devices, g, &e) < 0) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(!"cannot load");
        goto out;
    }
    /* the checksums were recorded before the ONNX importer marked constant-folded nodes (HSDAG_NF_FOLDED) as
     * bookkeeping; running them as ops again gives the recorded costs, so the simulator is held to the same numbers */
    for (int32_t v = 0; v < g->n_nodes; v++)
        if ((g->flags[v] & HSDAG_NF_FOLDED) && g->opclass[v] != HSDAG_OP_BOOKKEEPING)
            g->flags[v] &= ~(uint32_t)(HSDAG_NF_FOLDED | HSDAG_NF_BOOKKEEPING);
    hsdag_sim_config cfg = hsdag_sim_config_default();
    cfg.record_trace = 1;
    cfg.priority = prio;
    CHECK(hsdag_sim_create(&s, g, d, &cfg, &e) == 0);
    if (!s) goto out;
    int32_t n = g->n_nodes;
    int32_t *dev = malloc((size_t)n * sizeof *dev);
    hsdag_rng rng;
    hsdag_rng_seed(&rng, seed);
    for (int p = 0; p < n_pl; p++) {
        if (p % 2 == 0) {
            for (int32_t v = 0; v < n; v++) dev[v] = (int32_t)hsdag_rng_below(&rng, (uint32_t)d->n);
        } else {
            int32_t cur = (int32_t)hsdag_rng_below(&rng, (uint32_t)d->n);
            double sw = (1.0 + hsdag_rng_below(&rng, 30)) / n;
            for (int32_t v = 0; v < n; v++) {
                if (hsdag_rng_uniform(&rng) < sw) cur = (int32_t)hsdag_rng_below(&rng, (uint32_t)d->n);
                dev[v] = cur;
            }
        }
        for (int sem = 0; sem < HSDAG_SEM_COUNT_; sem++) {
            hsdag_sim_result r;
            hsdag_sim_set_semantics(s, (hsdag_semantics)sem);
            CHECK(hsdag_sim_run(s, dev, &r) == 0);
            h = fnv_result(h, &r);
            if (p < 4) {
                hsdag_buf tb = {0};
                CHECK(hsdag_sim_trace_write(s, &tb, &e) == 0);
                if (tb.data) h = fnv(h, tb.data, tb.len);
                hsdag_buf_free(&tb);
            }
        }
    }
    free(dev);
out:
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
    return h;
}

static void test_golden(void)
{
    static const struct {
        const char *path, *devices;
        hsdag_priority prio;
        int n_pl;
        uint64_t want;
    } cases[] = {
        {"tests/data/onnx/bert_base.onnx", "cpu-gpu", HSDAG_PRIO_UPWARD_RANK, 200, 0x2bf63a348d7051c4ull},
        {"tests/data/onnx/bert_base.onnx", "cpu-4gpu", HSDAG_PRIO_UPWARD_RANK, 200, 0xde9ca669c1c0e003ull},
        {"tests/data/onnx/bert_base.onnx", "cpu-4gpu", HSDAG_PRIO_TOPO, 100, 0xc5003c0f50d2e8a2ull},
        {"tests/data/onnx/resnet50.onnx", "cpu-gpu", HSDAG_PRIO_UPWARD_RANK, 300, 0xd1058879077196d6ull},
        {"tests/data/onnx/resnet50.onnx", "cpu-4gpu", HSDAG_PRIO_UPWARD_RANK, 300, 0x2e21d97a3e72edc7ull},
        {"tests/data/onnx/resnet50.onnx", "cpu-gpu", HSDAG_PRIO_TOPO, 100, 0x054bf3607fd2cbeeull},
        {"tests/data/tarnawski/latency-inputs/OperatorGraphs/bert_l-3_inference.json", "tarnawski",
         HSDAG_PRIO_UPWARD_RANK, 100, 0x10441bd2b4504d2cull},
        {"tests/data/tarnawski/latency-inputs/LayerGraphs/gnmt_inference.json", "tarnawski",
         HSDAG_PRIO_UPWARD_RANK, 200, 0xc2b8dba2426efc4dull},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t h = golden_one(cases[i].path, cases[i].devices, cases[i].prio, cases[i].n_pl, 1000 + i);
        if (h != cases[i].want)
            fprintf(stderr, "golden %zu (%s, %s, prio %d): 0x%016llxull\n", i, cases[i].path,
                    cases[i].devices, (int)cases[i].prio, (unsigned long long)h);
        CHECK(h == cases[i].want);
    }
}

int main(void)
{
    test_chain();
    test_diamond();
    test_fork();
    test_memory();
    test_create_oom();
    test_placement_io();
    test_placement_stream();
    test_placement_file();
    test_priority();
    test_sequential_naive();
    const char *dir = "tests/data/tarnawski/latency-inputs/";
    char p[256];
    const char *files[] = {"LayerGraphs/bert24_inference.json", "LayerGraphs/resnet50_inference.json",
                           "LayerGraphs/gnmt_inference.json", "LayerGraphs/inceptionv3_inference.json",
                           "OperatorGraphs/bert_l-3_inference.json"};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s%s", dir, files[i]);
        test_tarnawski_file(p, i == 4 ? 6 : 30);
    }
    const char *ex[] = {"bert24", "resnet50", "gnmt", "inceptionv3"};
    /* largest accelerator's Σ size minus maxSizePerFPGA (computed from the files independently) */
    const double excess[] = {0, 7605136384.0 - 2147483648.0, 754940160.0 - 629145600.0,
                             6852132864.0 - 2147483648.0};
    for (int i = 0; i < 4; i++) {
        char gpath[256], spath[256];
        snprintf(gpath, sizeof gpath, "%sLayerGraphs/%s_inference.json", dir, ex[i]);
        snprintf(spath, sizeof spath, "tests/data/tarnawski/human-experts/%s_inference_expert.json", ex[i]);
        test_expert(gpath, spath, excess[i]);
    }
    printf("  tarnawski: %d random splits agree with the naive rules (%d needed cycle cuts)\n", n_compared,
           n_with_cuts);
    test_properties();
    test_feasibility_flags();
    test_golden();
    return check_summary("test_sim");
}
