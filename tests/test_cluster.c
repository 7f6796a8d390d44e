/* test_cluster.c - the PAC-ML RAMP cluster environment: split counts, block search, a hand-computed JCT, the
 *   beta samplers, every blocking rule on a scripted arrival sequence, determinism and the observation.
 * Not here: the PipeDream reader itself (test_pipedream.c). Numbers are from the shared PAC-ML spec tables.
 * Entry points: main (run from the repository root). */
#include "check.h"
#include "oom_sweep.h"
#include "hsdag/cluster.h"
#include "hsdag/io.h"

#include <math.h>
#include <stdlib.h>

static int idx(int c, int r, int s)
{
    return (c * 4 + r) * 2 + s;
}

static void test_split_counts(void)
{
    /* spec: forward ops not split (zero compute) and the split degrees at a = 16 */
    static const struct {
        const char *name;
        int zero, n6, n8, n16;
    } T[] = {{"alexnet", 4, 0, 0, 19},
             {"vgg16", 4, 0, 0, 37},
             {"resnet18", 10, 0, 0, 61},
             {"squeezenet1_0", 11, 0, 0, 57},
             {"gnmt", 31, 3, 5, 9}};
    for (int i = 0; i < 5; i++) {
        const char *nm = NULL;
        hsdag_buf b = {0};
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        CHECK_EQ_INT(hsdag_cluster_builtin_graph(&nm, &b, i), 0);
        CHECK_STR(nm, T[i].name);
        CHECK_EQ_INT(hsdag_pipedream_read(&g, b.data, b.len, nm, &e), 0);
        if (!g) {
            hsdag_buf_free(&b);
            continue;
        }
        int cnt[17][17] = {{0}}; /* [a][k] */
        for (int32_t v = 0; v < g->n_nodes; v++)
            for (int a = 1; a <= 16; a++)
                cnt[a][hsdag_ramp_split(g->cost_ms[(size_t)v * HSDAG_COST_KINDS_ + HSDAG_COST_ACCEL], 0.01,
                                        a)]++;
        CHECK_EQ_INT(cnt[16][1], T[i].zero);
        CHECK_EQ_INT(cnt[16][6], T[i].n6);
        CHECK_EQ_INT(cnt[16][8], T[i].n8);
        CHECK_EQ_INT(cnt[16][16], T[i].n16);
        CHECK_EQ_INT(cnt[16][2] + cnt[16][4] + cnt[16][10] + cnt[16][12] + cnt[16][14], 0);
        /* a = 2, 4, 8: every nonzero op a-way, except gnmt at 8 (3 six-way, 14 eight-way) */
        int nz = g->n_nodes - T[i].zero;
        CHECK_EQ_INT(cnt[2][2], nz);
        CHECK_EQ_INT(cnt[4][4], nz);
        if (i == 4) {
            CHECK_EQ_INT(cnt[8][6], 3);
            CHECK_EQ_INT(cnt[8][8], 14);
        } else
            CHECK_EQ_INT(cnt[8][8], nz);
        CHECK_EQ_INT(cnt[1][1], g->n_nodes);
        hsdag_graph_free(g);
        hsdag_buf_free(&b);
    }
    CHECK_EQ_INT(hsdag_ramp_split(0.0, 0.01, 16), 1);
    CHECK_EQ_INT(hsdag_ramp_split(0.005, 0.01, 16), 2);
    CHECK_EQ_INT(hsdag_ramp_split(0.05, 0.01, 16), 6);
    CHECK_EQ_INT(hsdag_ramp_split(0.07, 0.01, 16), 8); /* 0.07/0.01 = 7.000000000000001 in IEEE doubles */
    CHECK_EQ_INT(hsdag_ramp_split(635.9, 0.01, 1), 1);
}

static void test_blocks(void)
{
    uint8_t busy[32] = {0};
    int32_t out[16];
    /* a = 16: only the (4,4,1) shape: the s = 0 column, then s = 1 */
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, busy, 16), 1);
    int ok = 1;
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) ok &= out[c * 4 + r] == idx(c, r, 0);
    CHECK(ok);
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) busy[idx(c, r, 0)] = 1;
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, busy, 16), 1);
    CHECK_EQ_INT(out[0], idx(0, 0, 1));
    CHECK_EQ_INT(out[15], idx(3, 3, 1));
    busy[idx(2, 1, 1)] = 1; /* one busy server in each column: no 16-block although 15 are free */
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, busy, 16), 0);
    /* a = 2 on an empty map: (2,1,1) at the origin */
    uint8_t e2[32] = {0};
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, e2, 2), 1);
    CHECK_EQ_INT(out[0], idx(0, 0, 0));
    CHECK_EQ_INT(out[1], idx(1, 0, 0));
    /* only group 0 free: (2,1,1) impossible, (1,1,2) gives both servers of rack 0 */
    uint8_t g0[32];
    for (int i = 0; i < 32; i++) g0[i] = i >= 8;
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, g0, 2), 1);
    CHECK_EQ_INT(out[0], idx(0, 0, 0));
    CHECK_EQ_INT(out[1], idx(0, 0, 1));
    /* only (0,0,0) and (1,1,0) free: only the diagonal shape fits */
    uint8_t dg[32];
    for (int i = 0; i < 32; i++) dg[i] = 1;
    dg[idx(0, 0, 0)] = dg[idx(1, 1, 0)] = 0;
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, dg, 2), 1);
    CHECK_EQ_INT(out[0], idx(0, 0, 0));
    CHECK_EQ_INT(out[1], idx(1, 1, 0));
    dg[idx(1, 1, 0)] = 1;
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, dg, 2), 0);
    /* a = 6: (3,1,2) at the origin */
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, e2, 6), 1);
    CHECK_EQ_INT(out[0], idx(0, 0, 0));
    CHECK_EQ_INT(out[1], idx(0, 0, 1));
    CHECK_EQ_INT(out[5], idx(2, 0, 1));
    /* a = 8: (2,2,2); a = 4: (2,2,1) */
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, e2, 8), 1);
    CHECK_EQ_INT(out[7], idx(1, 1, 1));
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, e2, 4), 1);
    CHECK_EQ_INT(out[3], idx(1, 1, 0));
    /* 10, 12, 14 have no shape in (4,4,2) */
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, e2, 10), -1);
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, e2, 12), -1);
    CHECK_EQ_INT(hsdag_ramp_find_block(out, 4, 4, 2, e2, 14), -1);
}

static void test_allreduce(void)
{
    /* M = 10 B over 2 groups, 1 rack index, 1 server index: one stage, g = 2:
     * m = 5; comm = 50e-9 + 2*100e-9 + 5/4e11; comp = 1 * 5 / 2 / (2e12 / 6); total = 2 comm + comp */
    double want = 2 * (50e-9 + 200e-9 + 5 / 4e11) + 2.5 / (2e12 / 6.0);
    CHECK_NEAR(hsdag_ramp_allreduce_time(10, 1, 1, 2, 4, 4e11, 50e-9, 100e-9), want, 1e-20);
    CHECK_NEAR(hsdag_ramp_allreduce_time(10, 1, 1, 1, 4, 4e11, 50e-9, 100e-9), 0.0,
               0); /* one group, one server */
}

/* tiny job: node1 (fwd 1, bwd 2, act 10) -> node2 (fwd 3, bwd 4, act 20) */
static void test_tiny_jct(void)
{
    const char *t = "node1 -- Input0 -- forward_compute_time=1.000, backward_compute_time=2.000, "
                    "activation_size=10.0, parameter_size=0.000\n"
                    "node2 -- Linear(2, 2) -- forward_compute_time=3.000, backward_compute_time=4.000, "
                    "activation_size=20.0, parameter_size=0.000\n"
                    "\tnode1 -- node2";
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_pipedream_read(&g, t, strlen(t), "tiny", &e), 0);
    if (!g) return;
    hsdag_cluster_config c = hsdag_cluster_config_default();
    hsdag_cluster *env = NULL;
    const char *names[] = {"tiny"};
    CHECK_EQ_INT(hsdag_cluster_create(&env, &c, (const hsdag_graph *const *)&g, names, 1, &e), 0);
    if (env) {
        const hsdag_cluster_model *m = hsdag_cluster_model_get(env, 0);
        CHECK_NEAR(m->jct_seq, 500.0, 1e-12);
        CHECK_NEAR(m->jct[1], 500.0, 1e-12); /* one server, no communication */
        CHECK_EQ_INT(m->n_servers_empty[1], 1);
        /* a = 2: both ops split 2-way onto servers (0,0,0), (1,0,0); collectives:
         * fwd 1 -> fwd 2: 4 deps of 10/4 B (M = 10); join fwd 2 -> bwd 2: 4 deps of 20/4 B (M = 20);
         * bwd 2 -> bwd 1: 4 deps of 10/4 B (M = 10); sync pairs: bwd 2 M = 20, bwd 1 M = 10.
         * critical path: f1 .5 + T10 + f2 1.5 + T20 + b2 2 + T10 + b1 1 + sync T10 */
        double T10 = 2 * (250e-9 + 5 / 4e11) + 2.5 / (2e12 / 6.0);
        double T20 = 2 * (250e-9 + 10 / 4e11) + 5.0 / (2e12 / 6.0);
        CHECK_NEAR(m->jct[2], 50 * (5.0 + 3 * T10 + T20), 1e-9);
        CHECK_EQ_INT(m->n_servers_empty[2], 2);
        CHECK_EQ_INT(m->n_part_ops[2], 8);
        CHECK_EQ_INT(m->n_part_deps[2], 3 * 4 + 2 * 2);
        hsdag_cluster_free(env);
    }
    /* with --time-unit-fix communication is in ms: x1000 */
    c.time_unit_fix = 1;
    CHECK_EQ_INT(hsdag_cluster_create(&env, &c, (const hsdag_graph *const *)&g, names, 1, &e), 0);
    if (env) {
        double T10 = 2 * (250e-9 + 5 / 4e11) + 2.5 / (2e12 / 6.0);
        double T20 = 2 * (250e-9 + 10 / 4e11) + 5.0 / (2e12 / 6.0);
        CHECK_NEAR(hsdag_cluster_model_get(env, 0)->jct[2], 50 * (5.0 + 1e3 * (3 * T10 + T20)), 1e-9);
        hsdag_cluster_free(env);
    }
    hsdag_graph_free(g);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_beta(void)
{
    /* spec table: mean, q25, q50, q75, P(<0.25), P(<0.5) */
    static const struct {
        char d;
        double mean, q25, q50, q75, p25, p50;
    } T[] = {{'A', 0.55, 0.325, 0.55, 0.775, 15 / 91.0, 40 / 91.0},
             {'B', 0.29, 0.20, 0.27, 0.36, 0.42, 0.93},
             {'C', 0.50, 0.42, 0.50, 0.57, 0.01, 0.49},
             {'D', 0.70, 0.62, 0.72, 0.79, 0.003, 0.08}};
    enum { N = 100000 };
    double *x = malloc(N * sizeof(double));
    for (int i = 0; i < 4; i++) {
        hsdag_beta_dist *d = hsdag_beta_create(T[i].d, hsdag_cluster_config_default().beta_table_seed);
        CHECK(d != NULL);
        if (!d) continue;
        hsdag_rng r;
        hsdag_rng_seed(&r, 7);
        double s = 0, p25 = 0, p50 = 0, lo = 1, hi = 0;
        int two_dec = 1;
        for (int k = 0; k < N; k++) {
            x[k] = hsdag_beta_sample(d, &r);
            s += x[k];
            p25 += x[k] < 0.25;
            p50 += x[k] < 0.5;
            if (x[k] < lo) lo = x[k];
            if (x[k] > hi) hi = x[k];
            if (fabs(x[k] * 100 - nearbyint(x[k] * 100)) > 1e-9) two_dec = 0;
        }
        qsort(x, N, sizeof(double), cmp_d);
        CHECK(two_dec);
        CHECK(lo >= 0.1 - 1e-12 && hi <= 1.0 + 1e-12);
        CHECK_NEAR(s / N, T[i].mean, 0.02);
        /* the spec's numbers come from one seed of a construction that depends on the extreme draws, hence
         * quantiles to 0.025 and probabilities to 0.04 */
        CHECK_NEAR(x[N / 4], T[i].q25, 0.025);
        CHECK_NEAR(x[N / 2], T[i].q50, 0.025);
        CHECK_NEAR(x[3 * N / 4], T[i].q75, 0.025);
        CHECK_NEAR(p25 / N, T[i].p25, 0.04);
        CHECK_NEAR(p50 / N, T[i].p50, 0.04);
        hsdag_beta_free(d);
    }
    free(x);
    CHECK(hsdag_beta_create('E', 0) == NULL);
}

static void test_blocking_rules(void)
{
    hsdag_cluster_config c = hsdag_cluster_config_default();
    c.horizon = 6000; /* arrivals at 0..6000: 7, decisions at 0..5000: 6 */
    c.replication = 3;
    hsdag_cluster *env = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e), 0);
    if (!env) return;
    /* models: 0 alexnet, 1 vgg16, 2 resnet18, 3 squeezenet1_0, 4 gnmt */
    const hsdag_cluster_model *alex = hsdag_cluster_model_get(env, 0);
    double r, ret = 0;
    hsdag_cluster_force_next(env, 0, 1.0);
    hsdag_cluster_reset(env, 1);
    const hsdag_cluster_obs *o = hsdag_cluster_observe(env);
    CHECK_EQ_INT(o->model, 0);
    CHECK_EQ_INT(o->free_workers, 32);
    CHECK(o->mask[0] && o->mask[1] && o->mask[2] && o->mask[4] && o->mask[6] && o->mask[8] && o->mask[16]);
    CHECK(!o->mask[3] && !o->mask[10] && !o->mask[12] && !o->mask[14]);
    CHECK_EQ_INT(hsdag_cluster_try_place(env, 8), 8);
    hsdag_cluster_force_next(env, 1, 1.0);
    CHECK_EQ_INT(hsdag_cluster_step(env, 8, &r), 0); /* t=0: alexnet at 8 ((2,2,2) block): accepted */
    ret += r;
    CHECK_NEAR(r, 1, 0);
    o = hsdag_cluster_observe(env);
    CHECK_EQ_INT(o->free_workers, 24);
    CHECK(o->mask[16]);                                 /* 24 free >= 16 ... */
    CHECK_EQ_INT(hsdag_cluster_try_place(env, 16), -1); /* ... but no (4,4,1) block */
    hsdag_cluster_force_next(env, 0, 0.05);
    hsdag_cluster_step(env, 16, &r); /* t=1000: vgg16: placement fails */
    ret += r;
    CHECK_NEAR(r, -1, 0);
    hsdag_cluster_force_next(env, 4, 1.0);
    hsdag_cluster_step(env, 4, &r); /* t=2000: alexnet at 4: JCT 9016 > 0.05 * 36061 */
    ret += r;
    hsdag_cluster_force_next(env, 2, 1.0);
    hsdag_cluster_step(env, 0, &r); /* t=3000: gnmt, action 0 */
    ret += r;
    hsdag_cluster_force_next(env, 3, 1.0);
    hsdag_cluster_step(env, 3, &r); /* t=4000: resnet18, invalid action 3 -> 0 */
    ret += r;
    CHECK_EQ_INT(hsdag_cluster_done(env), 0);
    o = hsdag_cluster_observe(env);
    CHECK_EQ_INT(o->free_workers, 32); /* the first job ended at 4508.5 */
    hsdag_cluster_step(env, 2, &r);    /* t=5000: squeezenet at 2: accepted, still running at the horizon */
    ret += r;
    CHECK_NEAR(r, 1, 0);
    CHECK_EQ_INT(hsdag_cluster_done(env), 1);
    CHECK_EQ_INT(hsdag_cluster_step(env, 1, &r), HSDAG_EINVAL);
    hsdag_cluster_metrics m;
    hsdag_cluster_metrics_get(env, &m);
    CHECK_EQ_INT(m.jobs_arrived, 7);
    CHECK_EQ_INT(m.blocked_placement, 1);
    CHECK_EQ_INT(m.blocked_jct, 1);
    CHECK_EQ_INT(m.blocked_action0, 2);
    CHECK_EQ_INT(m.blocked_horizon, 1);
    /* both refusals had 24 or 32 workers free and a degree that fit in time: by choice */
    CHECK_EQ_INT(m.refused_by_choice, 2);
    CHECK_EQ_INT(m.refused_no_worker + m.refused_no_fit, 0);
    CHECK_EQ_INT(m.decisions_per_degree[0], 2); /* action 0 and the invalid 3 */
    CHECK_EQ_INT(m.decisions_per_degree[2] + m.decisions_per_degree[4] + m.decisions_per_degree[8] +
                     m.decisions_per_degree[16],
                 4);
    CHECK_EQ_INT(m.decisions_per_degree[3], 0);
    CHECK_EQ_INT(m.jobs_blocked, 5);
    CHECK_EQ_INT(m.jobs_completed, 1);
    CHECK_NEAR(m.blocking_rate, 5 / 7.0, 1e-12);
    CHECK_NEAR(m.acceptance_rate, 1 / 7.0, 1e-12);
    CHECK_NEAR(m.mean_jct, alex->jct[8], 1e-9);
    CHECK_NEAR(m.return_, -2, 0);
    CHECK_NEAR(ret, -2, 0);
    /* alexnet's 8-way JCT is within 0.1% of JCT_seq / 8 (communication is ~1000x under-weighted) */
    CHECK(fabs(alex->jct[8] / (alex->jct_seq / 8) - 1) < 1e-3);
    hsdag_cluster_free(env);
}

/* blocked_action0 = refused_no_worker + refused_no_fit + refused_by_choice, each by its rule. */
static void test_refusal_split(void)
{
    hsdag_cluster_config c = hsdag_cluster_config_default();
    c.horizon = 6000;
    c.replication = 3;
    hsdag_cluster *env = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e), 0);
    if (!env) return;
    double r;
    hsdag_cluster_force_next(env, 0, 1.0);
    hsdag_cluster_reset(env, 1);
    hsdag_cluster_force_next(env, 1, 1.0);
    hsdag_cluster_step(env, 16, &r); /* t=0: alexnet on one (4,4,1) block, ends 2254.9 */
    CHECK_NEAR(r, 1, 0);
    hsdag_cluster_force_next(env, 2, 1.0);
    hsdag_cluster_step(env, 16, &r); /* t=1000: vgg16 on the other, ends 3168.6 */
    CHECK_NEAR(r, 1, 0);
    CHECK_EQ_INT(hsdag_cluster_observe(env)->free_workers, 0);
    hsdag_cluster_force_next(env, 3, 0.05);
    hsdag_cluster_step(env, 0, &r); /* t=2000: resnet18, nothing free */
    CHECK_EQ_INT(hsdag_cluster_observe(env)->free_workers, 16);
    hsdag_cluster_force_next(env, 4, 1.0);
    hsdag_cluster_step(env, 0, &r); /* t=3000: squeezenet, beta 0.05: no degree is in time */
    hsdag_cluster_step(env, 0, &r); /* t=4000: gnmt, beta 1: refused with 32 free */
    hsdag_cluster_metrics m;
    hsdag_cluster_metrics_get(env, &m);
    CHECK_EQ_INT(m.refused_no_worker, 1);
    CHECK_EQ_INT(m.refused_no_fit, 1);
    CHECK_EQ_INT(m.refused_by_choice, 1);
    CHECK_EQ_INT(m.blocked_action0, 3);
    CHECK_EQ_INT(m.decisions_per_degree[0], 3);
    CHECK_EQ_INT(m.decisions_per_degree[16], 2);
    hsdag_cluster_free(env);
}

static void test_models_and_determinism(void)
{
    static const struct {
        int ops, deps, depth;
        double jct_seq;
    } T[] = {{46, 47, 44, 36061.15},
             {82, 83, 80, 34525.35},
             {142, 159, 60, 36668.35},
             {136, 153, 102, 38000.15},
             {96, 117, 30, 4470.80}};
    hsdag_cluster_config c = hsdag_cluster_config_default();
    c.beta = 'C';
    hsdag_cluster *env = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e), 0);
    if (!env) return;
    for (int i = 0; i < 5; i++) {
        const hsdag_cluster_model *m = hsdag_cluster_model_get(env, i);
        CHECK_EQ_INT(m->job->n_nodes, T[i].ops);
        CHECK_EQ_INT(m->job->n_edges, T[i].deps);
        CHECK_EQ_INT(m->max_depth, T[i].depth);
        CHECK_NEAR(m->jct_seq, T[i].jct_seq, 1e-6);
        for (int a = 1; a <= 16; a++) {
            int valid = a == 1 || a == 2 || a == 4 || a == 6 || a == 8 || a == 16;
            CHECK(valid == !isnan(m->jct[a]));
            if (valid) CHECK(m->jct[a] >= m->jct_seq / a - 1e-6); /* never faster than perfect scaling */
        }
        /* node features in [0, 1], one is-max set */
        int ok = 1, maxc = 0;
        for (int32_t v = 0; v < m->job->n_nodes * HSDAG_CLUSTER_NODE_FEATS; v++)
            ok &= m->node_feat[v] >= 0.f && m->node_feat[v] <= 1.f;
        for (int32_t v = 0; v < m->job->n_nodes; v++)
            maxc += m->node_feat[v * HSDAG_CLUSTER_NODE_FEATS + 1] == 1.f;
        CHECK(ok);
        CHECK(maxc >= 1);
    }
    /* observation: mask appended to the 17 graph features */
    hsdag_cluster_reset(env, 3);
    const hsdag_cluster_obs *o = hsdag_cluster_observe(env);
    int ok = 1;
    for (int a = 0; a < HSDAG_CLUSTER_N_ACTIONS; a++)
        ok &= o->graph_feat[HSDAG_CLUSTER_GRAPH_FEATS + a] == o->mask[a];
    CHECK(ok);
    CHECK_NEAR(o->graph_feat[5], o->beta, 1e-6);
    CHECK_NEAR(o->graph_feat[15], 0.0, 0);
    /* determinism: same seed, same episode (actions, rewards, metrics); another seed differs */
    hsdag_cluster_policy p;
    CHECK_EQ_INT(hsdag_cluster_policy_parse(&p, "random", &e), 0);
    hsdag_cluster_metrics m1, m2, m3;
    CHECK_EQ_INT(hsdag_cluster_run(env, &p, 11, &m1, &e), 0);
    CHECK_EQ_INT(hsdag_cluster_run(env, &p, 11, &m2, &e), 0);
    CHECK_EQ_INT(hsdag_cluster_run(env, &p, 12, &m3, &e), 0);
    CHECK(memcmp(&m1, &m2, sizeof m1) == 0);
    CHECK(m1.jobs_blocked != m3.jobs_blocked || m1.throughput != m3.throughput);
    CHECK_EQ_INT(m1.jobs_arrived, 1001);
    /* every built-in policy runs; para-max never misses a deadline (a = 16 gives JCT < 0.1 JCT_seq) */
    const char *pols[] = {"para-max",     "para-min",   "random",    "fixed:4",
                          "para-min-jct", "sequential", "lookahead", "lookahead:2:1"};
    for (int i = 0; i < 8; i++) {
        hsdag_cluster_metrics m;
        CHECK_EQ_INT(hsdag_cluster_policy_parse(&p, pols[i], &e), 0);
        CHECK_EQ_INT(hsdag_cluster_run(env, &p, 0, &m, &e), 0);
        CHECK_EQ_INT(m.jobs_arrived, 1001);
        CHECK_EQ_INT(m.jobs_blocked + m.jobs_completed, 1000);
        CHECK(m.blocking_rate > 0 && m.blocking_rate < 1);
        if (i == 0) CHECK_EQ_INT(m.blocked_jct, 0);
        if (i == 4 || i == 6) CHECK_EQ_INT(m.blocked_jct, 0);
    }
    /* acceptable-jct is ddls's class name of para-min */
    CHECK_EQ_INT(hsdag_cluster_policy_parse(&p, "acceptable-jct", &e), 0);
    CHECK_EQ_INT(p.kind, HSDAG_POL_PARA_MIN);
    CHECK(hsdag_cluster_policy_parse(&p, "fixed:17", &e) < 0);
    CHECK(hsdag_cluster_policy_parse(&p, "bogus", &e) < 0);
    CHECK_EQ_INT(hsdag_cluster_policy_parse(&p, "learned:dir", &e), 0);
    int a = 0;
    CHECK_EQ_INT(hsdag_cluster_policy_act(&p, env, NULL, &a, &e), HSDAG_EINVAL); /* episode is done */
    hsdag_cluster_reset(env, 0);
    CHECK_EQ_INT(hsdag_cluster_policy_act(&p, env, NULL, &a, &e), HSDAG_EUNSUPPORTED);
    hsdag_cluster_free(env);
    /* bad configuration; a replication past the bound (a fuzzed checkpoint asked for a 5 GB job pool) */
    hsdag_cluster_config good = c;
    c.n_cgs = 0;
    CHECK_EQ_INT(hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e), HSDAG_EINVAL);
    c = good;
    c.replication = HSDAG_CLUSTER_MAX_REPLICATION + 1;
    CHECK_EQ_INT(hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e), HSDAG_EINVAL);
    CHECK(env == NULL);
    c.replication = INT32_MAX;
    CHECK_EQ_INT(hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e), HSDAG_EINVAL);
}

/* ---- allocation failures: the env, a heuristic episode and a learned one answer ENOMEM with a message ---- */
typedef struct cluster_oom {
    const hsdag_graph *g;
    const char *policy;
} cluster_oom;

static int cluster_oom_call(void *ctx, hsdag_err *e)
{
    const cluster_oom *c = ctx;
    hsdag_cluster_config cc = hsdag_cluster_config_default();
    cc.horizon = 8000;
    cc.replication = 3;
    const char *names[] = {"alexnet"};
    hsdag_cluster *env = NULL;
    int rc = hsdag_cluster_create(&env, &cc, &c->g, names, 1, e);
    hsdag_cluster_policy p;
    if (rc == 0) rc = hsdag_cluster_policy_parse(&p, c->policy, e);
    hsdag_cluster_metrics m;
    if (rc == 0) rc = hsdag_cluster_run(env, &p, 1, &m, e);
    hsdag_cluster_free(env);
    return rc;
}

static void test_oom(void)
{
    char *buf = NULL;
    size_t len = 0;
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    CHECK_EQ_INT(hsdag_read_file(&buf, &len, "tests/data/pacml/alexnet.txt", 0, &e), 0);
    if (buf) CHECK_EQ_INT(hsdag_pipedream_read(&g, buf, len, "alexnet", &e), 0);
    hsdag_free(buf);
    if (!g) return;
    const char *pols[] = {"lookahead", "acceptable-jct", "learned:policies/pacml/beta_A.bin"};
    for (int i = 0; i < 3; i++) {
        cluster_oom c = {g, pols[i]};
        oom_sweep s = oom_sweep_call(cluster_oom_call, &c, 100000, 1);
        if (!s.ok || s.other || s.oom_bad_msg) fprintf(stderr, "oom sweep of policy %s\n", pols[i]);
        CHECK(s.ok && s.oom > 0);
        CHECK_EQ_INT(s.other, 0);
        CHECK_EQ_INT(s.oom_bad_msg, 0);
    }
    hsdag_graph_free(g);
}

/* The paper's baselines against the authors' figures (issue 11): mean blocking rate over seeds 0, 1, 2,
 * 1001 arrivals, reference units, within 0.02. Para_min is ddls's AcceptableJCT (docs/pacml.md). */
static void test_paper_baselines(void)
{
    static const char *pols[] = {"para-max", "para-min", "random"};
    static const double paper[3][4] = {
        {0.2624, 0.2631, 0.2674, 0.2631}, {0.3087, 0.3956, 0.3074, 0.1419}, {0.5172, 0.6011, 0.5055, 0.4652}};
    hsdag_err e = {0};
    for (int b = 0; b < 4; b++) {
        hsdag_cluster_config c = hsdag_cluster_config_default();
        c.beta = (char)('A' + b);
        hsdag_cluster *env = NULL;
        CHECK_EQ_INT(hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e), 0);
        if (!env) return;
        for (int i = 0; i < 3; i++) {
            hsdag_cluster_policy p;
            CHECK_EQ_INT(hsdag_cluster_policy_parse(&p, pols[i], &e), 0);
            double sum = 0;
            for (uint64_t seed = 0; seed < 3; seed++) {
                hsdag_cluster_metrics m;
                CHECK_EQ_INT(hsdag_cluster_run(env, &p, seed, &m, &e), 0);
                sum += m.blocking_rate;
            }
            CHECK_NEAR(sum / 3, paper[i][b], 0.02);
        }
        hsdag_cluster_free(env);
    }
}

int main(void)
{
    hsdag_nn_set_threads(1);
    test_split_counts();
    test_blocks();
    test_allreduce();
    test_tiny_jct();
    test_beta();
    test_blocking_rules();
    test_refusal_split();
    test_models_and_determinism();
    test_paper_baselines();
    test_oom();
    return check_summary("test_cluster");
}
