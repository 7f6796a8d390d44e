/* test_learn.c - the HSDAG learner: finite-difference check of the whole policy loss, training reaches a
 * brute-forced optimum, same seed gives a bit-identical run, resume continues bit-identically.
 * Not here: per-layer gradient checks (test_nn.c), coarsening and parsing (test_coarsen.c).
 * Entry points: main. */
#include "check.h"
#include "flip_sweep.h"
#include "gradcheck.h"
#include "oom_sweep.h"
#include "hsdag/io.h"
#include "hsdag/learn.h"

#include <stdlib.h>
#include <string.h>

/* A 24-op graph: v-1 -> v always, v-2 -> v when v % 3 != 0, so two of three ops start a group
 * (17 groups after coarsening) and parsing has choices. */
#define NOPS 24
static hsdag_graph *small_graph(void)
{
    static const char *cyc[] = {"Conv", "Relu", "Add", "MatMul", "Concat", "Relu"};
    hsdag_gb *b = hsdag_gb_create();
    char name[16];
    for (int i = 0; i < NOPS; i++) {
        snprintf(name, sizeof name, "op%d", i);
        hsdag_gb_add_node(b, name, i == 0 ? "Parameter" : i == NOPS - 1 ? "Result" : cyc[i % 6]);
        int64_t dims[4] = {1, 16 * (1 + i % 3), 8, 8};
        hsdag_gb_add_output(b, i, HSDAG_DT_F32, 4, dims);
    }
    for (int v = 1; v < NOPS; v++) {
        hsdag_gb_add_edge(b, v - 1, v, 4096.0);
        if (v >= 2 && v % 3 != 0) hsdag_gb_add_edge(b, v - 2, v, 4096.0);
    }
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) fprintf(stderr, "graph: %s\n", e.msg);
    hsdag_gb_free(b);
    return g;
}

/* Sequential two-device latency: op costs plus a transfer per edge crossing devices (seconds). */
typedef struct {
    const hsdag_graph *g;
    double cost[NOPS][2];
    double xfer;
    long calls;
} toy;

static double toy_latency(const toy *t, const int32_t *dev)
{
    double s = 0;
    for (int v = 0; v < t->g->n_nodes; v++) s += t->cost[v][dev[v]];
    for (int k = 0; k < t->g->n_edges; k++)
        if (dev[t->g->edge_src[k]] != dev[t->g->out_dst[k]]) s += t->xfer;
    return s;
}

static int toy_eval(void *ctx, const int32_t *dev, double *lat, int *feas, hsdag_err *e)
{
    (void)e;
    toy *t = ctx;
    t->calls++;
    *lat = toy_latency(t, dev);
    *feas = 1;
    return 0;
}

static void toy_init(toy *t, const hsdag_graph *g)
{
    memset(t, 0, sizeof *t);
    t->g = g;
    for (int v = 0; v < NOPS; v++) {
        /* the "GPU" (device 1) is faster on convs and matmuls, slower on the rest */
        int heavy = strcmp(g->op[v], "Conv") == 0 || strcmp(g->op[v], "MatMul") == 0;
        t->cost[v][0] = heavy ? 4e-3 : 0.1e-3;
        t->cost[v][1] = heavy ? 1e-3 : 0.9e-3;
    }
    t->xfer = 0.3e-3;
}

static double brute_force_groups(const toy *t, const hsdag_coarse *c)
{
    double best = 1e30;
    int32_t gd[32], od[NOPS];
    for (long mask = 0; mask < (1L << c->n_groups); mask++) {
        for (int k = 0; k < c->n_groups; k++) gd[k] = (int32_t)((mask >> k) & 1);
        hsdag_coarsen_expand(c, od, gd);
        double l = toy_latency(t, od);
        if (l < best) best = l;
    }
    return best;
}

static hsdag_learn_config small_cfg(void)
{
    hsdag_learn_config cfg = hsdag_learn_config_paper();
    cfg.hidden = 32;
    cfg.embed = 8;
    cfg.steps = 5;
    cfg.episodes = 6;
    cfg.min_clusters = 2;
    cfg.levels = 2;
    return cfg;
}

typedef struct learn_gc {
    hsdag_learn *L;
    int32_t *act, nc;
    hsdag_err e;
} learn_gc;

static int learn_gc_loss(void *ctx, double *loss)
{
    learn_gc *c = ctx;
    int32_t n = c->nc;
    /* < 0 when parsing changed the cluster count: not differentiable there */
    return hsdag_learn_debug_loss(c->L, 7, c->act, &n, 0.1, 0, loss, &c->e);
}

static void test_gradcheck(hsdag_nn_gnn_kind kind)
{
    hsdag_graph *g = small_graph();
    hsdag_learn_config cfg = small_cfg();
    cfg.gnn = kind;
    hsdag_learn *L = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_learn_create(&L, g, 2, &cfg, &e), 0);
    if (!L) return;
    hsdag_nn_params *P = hsdag_learn_params(L);
    int32_t act[64], nc = 0;
    double loss = 0;
    CHECK_EQ_INT(hsdag_learn_debug_loss(L, 7, act, &nc, 0.1, 1, &loss, &e), 0);
    CHECK(nc >= 2);
    size_t np = hsdag_nn_params_count(P);
    float *ana = hsdag_malloc(sizeof(float) * np);
    memcpy(ana, hsdag_nn_params_grad(P, -1), sizeof(float) * np);
    /* central differences on every 7th parameter (all tensors are hit) */
    gc_tally t = {0};
    learn_gc c = {.L = L, .act = act, .nc = nc};
    gc_model(&t, P, ana, 0, 7, NULL, learn_gc_loss, &c, hsdag_nn_gnn_kind_name(kind));
    printf("gradcheck %s: %d params checked, %d off, worst rel err %.3g, loss %.4f\n",
           hsdag_nn_gnn_kind_name(kind), t.checked, t.bad, t.worst, loss);
    CHECK(t.checked > 100);
    /* a handful may sit on a ReLU kink or flip a parse; the rest must match */
    CHECK(t.bad * 50 <= t.checked);
    hsdag_free(ana);
    hsdag_learn_free(L);
    hsdag_graph_free(g);
}

/* The per-decision offsets: the same loss with random nonzero offsets (so the network's gradient goes through
 * their softmax) checked against central differences in both the network and the offsets. */
static void test_gradcheck_offsets(void)
{
    hsdag_graph *g = small_graph();
    hsdag_learn_config cfg = small_cfg();
    cfg.update = HSDAG_LEARN_STEP;
    cfg.baseline = HSDAG_LEARN_BASE_LOO;
    cfg.samples = 4;
    cfg.fixed_clusters = 1;
    cfg.offset_lr = 0.1;
    hsdag_learn *L = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_learn_create(&L, g, 2, &cfg, &e), 0);
    if (!L) return;
    hsdag_nn_params *P = hsdag_learn_params(L), *O = hsdag_learn_offsets(L);
    CHECK(O != NULL);
    hsdag_rng r;
    hsdag_rng_seed(&r, 5);
    size_t no = hsdag_nn_params_count(O);
    gc_rand_f(hsdag_nn_params_value(O, -1), no, &r, -1.5, 1.5);
    int32_t act[64], nc = 0;
    double loss = 0;
    CHECK_EQ_INT(hsdag_learn_debug_loss(L, 7, act, &nc, 0.1, 1, &loss, &e), 0);
    CHECK(nc >= 2);
    size_t np = hsdag_nn_params_count(P);
    float *ana = hsdag_malloc(sizeof(float) * np), *anao = hsdag_malloc(sizeof(float) * no);
    memcpy(ana, hsdag_nn_params_grad(P, -1), sizeof(float) * np);
    memcpy(anao, hsdag_nn_params_grad(O, -1), sizeof(float) * no);
    /* the offsets of the decisions made move the loss (the inherit offsets do not enter this loss) */
    CHECK(gc_sumsq(anao, (size_t)nc * 2) > 1e-6);
    gc_tally t = {0}, to = {0};
    learn_gc c = {.L = L, .act = act, .nc = nc};
    gc_model(&t, P, ana, 0, 7, NULL, learn_gc_loss, &c, "network with offsets");
    gc_model(&to, O, anao, 0, 1, NULL, learn_gc_loss, &c, "offsets");
    printf("gradcheck offsets: network %d checked, %d off (worst %.3g); offsets %d checked, %d off (worst "
           "%.3g)\n",
           t.checked, t.bad, t.worst, to.checked, to.bad, to.worst);
    CHECK(t.checked > 100 && t.bad * 50 <= t.checked);
    CHECK(to.checked >= 2 * nc && to.bad == 0);
    hsdag_free(ana);
    hsdag_free(anao);
    hsdag_learn_free(L);
    hsdag_graph_free(g);
}

static void test_train_optimum(void)
{
    hsdag_graph *g = small_graph();
    toy t;
    toy_init(&t, g);
    hsdag_coarse *c = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_coarsen_create(&c, g, 0, &e), 0);
    double opt = brute_force_groups(&t, c);
    hsdag_learn_config cfg = small_cfg();
    cfg.episodes = 25;
    cfg.steps = 20;
    cfg.hidden = 128;
    cfg.embed = 16;
    cfg.levels = 1;
    hsdag_learn *L = NULL;
    CHECK_EQ_INT(hsdag_learn_create(&L, g, 2, &cfg, &e), 0);
    CHECK_EQ_INT(hsdag_learn_train(L, toy_eval, &t, NULL, NULL, &e), 0);
    const int32_t *best;
    double lat;
    int32_t ep;
    hsdag_learn_best(L, &best, &lat, &ep);
    printf("train: %d groups, optimum %.4f ms, learned %.4f ms (episode %d), %ld evals\n", (int)c->n_groups,
           opt * 1e3, lat * 1e3, (int)ep, t.calls);
    /* all-device-1 and all-device-0 placements, for reference */
    int32_t one[NOPS];
    for (int v = 0; v < NOPS; v++) one[v] = 1;
    double gpu = toy_latency(&t, one);
    for (int v = 0; v < NOPS; v++) one[v] = 0;
    double cpu = toy_latency(&t, one);
    printf("train: single-device %.4f / %.4f ms\n", cpu * 1e3, gpu * 1e3);
    /* the paper's budget does not reliably hit the exact optimum (see docs/hsdag.md); it must beat both
     * single-device placements and land within 5% of the brute-forced optimum */
    CHECK(lat < gpu && lat < cpu);
    CHECK(lat <= opt * 1.05);
    CHECK_EQ_INT(hsdag_learn_evals(L), 500);
    CHECK_NEAR(toy_latency(&t, best), lat, 1e-15);
    hsdag_learn_free(L);
    hsdag_coarsen_free(c);
    hsdag_graph_free(g);
}

/* The paper's settings (seed 42, 25 x 20) on the bundled SqueezeNet 1.1 export with the cpu-gpu simulator
 * reach the exact optimum that the two-device min cut proves. */
static void test_train_sim_optimum(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *devs = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    CHECK_EQ_INT(hsdag_load_file(&g, "tests/data/onnx/squeezenet1_1.onnx", HSDAG_FMT_UNKNOWN, &e), 0);
    CHECK_EQ_INT(hsdag_devices_load(&devs, "cpu-gpu", g, &e), 0);
    CHECK_EQ_INT(hsdag_place_problem_create(&p, g, devs, NULL, &e), 0);
    if (!p) goto done;
    double opt = 0;
    CHECK_EQ_INT(hsdag_place_mincut_solve(p->c, NULL, &opt, &e), 0);
    hsdag_learn_config cfg = hsdag_learn_config_paper();
    CHECK_EQ_INT(hsdag_learn_create(&L, g, devs->n, &cfg, &e), 0);
    if (!L) goto done;
    CHECK_EQ_INT(hsdag_learn_train(L, hsdag_learn_sim_eval, p->sim, NULL, NULL, &e), 0);
    double lat;
    int32_t ep;
    hsdag_learn_best(L, NULL, &lat, &ep);
    printf("squeezenet cpu-gpu: min cut %.6f ms, HSDAG %.6f ms (episode %d)\n", opt * 1e3, lat * 1e3,
           (int)ep);
    CHECK(fabs(lat - opt) <= 1e-9 * opt);
done:
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    hsdag_devices_free(devs);
    hsdag_graph_free(g);
}

static int same_row(const hsdag_learn_row *a, const hsdag_learn_row *b)
{
    /* field by field: bit equality of the doubles, padding ignored */
    return a->episode == b->episode && a->clusters == b->clusters &&
           memcmp(&a->mean_latency_s, &b->mean_latency_s, 8) == 0 &&
           memcmp(&a->best_latency_s, &b->best_latency_s, 8) == 0 &&
           memcmp(&a->entropy, &b->entropy, 8) == 0 && memcmp(&a->reward, &b->reward, 8) == 0 &&
           memcmp(&a->feasible_frac, &b->feasible_frac, 8) == 0;
}

static int same_curve(const hsdag_learn *a, const hsdag_learn *b)
{
    int32_t na, nb;
    const hsdag_learn_row *ra = hsdag_learn_curve(a, &na), *rb = hsdag_learn_curve(b, &nb);
    if (na != nb || na == 0) return 0;
    for (int32_t i = 0; i < na; i++)
        if (!same_row(&ra[i], &rb[i])) return 0;
    return 1;
}

static int stop_at_3(void *ctx, const hsdag_learn_row *row, int32_t total)
{
    (void)ctx;
    (void)total;
    return row->episode == 2;
}

/* Same seed, same curve and placement; stopped, saved and resumed, the same again: for the paper's episode
 * update (step = 0) and for the default per-step update with its samples, epochs and entropy schedule. */
/* flip_sweep's loader: a learner checkpoint into L */
static int learn_load_into(void *L, const void *buf, size_t len)
{
    hsdag_err e = {0};
    return hsdag_learn_load(L, buf, len, &e);
}

static void test_determinism_resume(int step)
{
    hsdag_graph *g = small_graph();
    toy t;
    toy_init(&t, g);
    hsdag_learn_config cfg = small_cfg();
    cfg.entropy = 0.01;
    if (step) {
        hsdag_learn_config d = hsdag_learn_config_default();
        cfg.update = d.update;
        cfg.samples = 4;
        cfg.steps = 2;
        cfg.baseline = d.baseline;
        cfg.reward = d.reward;
        cfg.normalize = d.normalize;
        cfg.epochs = 3;
        cfg.dropout = 0.1f; /* exercised with PPO epochs too */
        cfg.entropy_end = 0.001;
        cfg.entropy_decay = 40;
        cfg.fixed_clusters = 1;
        cfg.sil = 1.0; /* the self-imitation samples and the offsets are checkpointed too */
        cfg.sil_elite = 3;
        cfg.offset_lr = 0.1;
    }
    hsdag_err e = {0};
    hsdag_learn *A = NULL, *B = NULL, *C = NULL;
    CHECK_EQ_INT(hsdag_learn_create(&A, g, 2, &cfg, &e), 0);
    CHECK_EQ_INT(hsdag_learn_create(&B, g, 2, &cfg, &e), 0);
    CHECK_EQ_INT(hsdag_learn_train(A, toy_eval, &t, NULL, NULL, &e), 0);
    CHECK_EQ_INT(hsdag_learn_train(B, toy_eval, &t, NULL, NULL, &e), 0);
    CHECK(same_curve(A, B));
    const int32_t *pa, *pb;
    double la, lb;
    hsdag_learn_best(A, &pa, &la, NULL);
    hsdag_learn_best(B, &pb, &lb, NULL);
    CHECK(memcmp(pa, pb, sizeof(int32_t) * (size_t)g->n_nodes) == 0);
    CHECK(la == lb);
    hsdag_learn_free(B);

    /* "killed" after 3 episodes (progress asks to stop), checkpoint, fresh learner, resume */
    CHECK_EQ_INT(hsdag_learn_create(&B, g, 2, &cfg, &e), 0);
    CHECK_EQ_INT(hsdag_learn_train(B, toy_eval, &t, stop_at_3, NULL, &e), 1);
    hsdag_buf ck = {0};
    CHECK_EQ_INT(hsdag_learn_save(B, &ck, &e), 0);
    hsdag_learn_free(B);
    CHECK_EQ_INT(hsdag_learn_create(&C, g, 2, &cfg, &e), 0);
    CHECK_EQ_INT(hsdag_learn_load(C, ck.data, ck.len, &e), 0);
    int32_t n3;
    hsdag_learn_curve(C, &n3);
    CHECK_EQ_INT(n3, 3);
    CHECK_EQ_INT(hsdag_learn_train(C, toy_eval, &t, NULL, NULL, &e), 0);
    CHECK(same_curve(A, C));
    const int32_t *pc;
    double lc;
    hsdag_learn_best(C, &pc, &lc, NULL);
    CHECK(memcmp(pa, pc, sizeof(int32_t) * (size_t)g->n_nodes) == 0);
    CHECK(la == lc);
    CHECK_EQ_INT(hsdag_learn_evals(C), hsdag_learn_evals(A));

    /* bad checkpoints: corrupted byte, truncation, other configuration */
    ck.data[100] ^= 1;
    CHECK_EQ_INT(hsdag_learn_load(C, ck.data, ck.len, &e), HSDAG_EPARSE);
    ck.data[100] ^= 1;
    CHECK_EQ_INT(hsdag_learn_load(C, ck.data, ck.len / 2, &e), HSDAG_EPARSE);
    hsdag_learn_config other = cfg;
    other.seed = 43;
    hsdag_learn *D = NULL;
    CHECK_EQ_INT(hsdag_learn_create(&D, g, 2, &other, &e), 0);
    CHECK_EQ_INT(hsdag_learn_load(D, ck.data, ck.len, &e), HSDAG_EINVAL);
    CHECK(strstr(e.msg, "seed") != NULL);
    hsdag_learn_free(D);
    if (step) { /* every flipped bit of a checkpoint with self-imitation samples and offsets is refused */
        int tried = 0;
        CHECK_EQ_INT(flip_sweep_run(ck.data, ck.len, 3, learn_load_into, C, &tried), 0);
        CHECK(tried > 1000);
    }
    hsdag_buf_free(&ck);
    hsdag_learn_free(A);
    hsdag_learn_free(C);
    hsdag_graph_free(g);
}

/* A learner made for a problem never asks to measure a placement that splits a colour class or puts an op on a
 * device it may not run on (Tarnawski BERT-3 operator graph: 224 coloured ops in 117 classes), and with memory
 * masks never overfills an accelerator with static bytes (Tarnawski semantics count nothing else). */
typedef struct check_ctx {
    hsdag_place_problem *p;
    long calls, bad_color, bad_allowed, infeasible;
} check_ctx;

static int check_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible, hsdag_err *e)
{
    check_ctx *c = ctx;
    hsdag_place_problem *p = c->p;
    c->calls++;
    for (int32_t v = 0; v < p->n; v++) {
        int32_t r = p->grp_node[p->grp_off[p->group[v]]];
        if (device[v] != device[r]) c->bad_color++;
        if (!p->c->allowed[(size_t)v * p->k + device[v]]) c->bad_allowed++;
    }
    int rc = hsdag_learn_sim_eval(p->sim, device, latency_s, feasible, e);
    if (!*feasible) c->infeasible++;
    return rc;
}

static void test_constraints(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *devs = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    CHECK_EQ_INT(hsdag_load_file(&g,
                                 "tests/data/tarnawski/latency-inputs/OperatorGraphs/bert_l-3_inference.json",
                                 HSDAG_FMT_UNKNOWN, &e),
                 0);
    CHECK_EQ_INT(hsdag_devices_load(&devs, NULL, g, &e), 0);
    CHECK_EQ_INT(hsdag_place_problem_create(&p, g, devs, NULL, &e), 0);
    if (!p) goto done;
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.episodes = 3;
    cfg.hidden = 32;
    CHECK_EQ_INT(hsdag_learn_create_problem(&L, p, &cfg, &e), 0);
    if (!L) goto done;
    check_ctx c = {.p = p};
    CHECK_EQ_INT(hsdag_learn_train(L, check_eval, &c, NULL, NULL, &e), 0);
    printf("constraints: %ld placements, %ld colour splits, %ld forbidden devices, %ld infeasible\n", c.calls,
           c.bad_color, c.bad_allowed, c.infeasible);
    CHECK_EQ_INT(c.calls, 60);
    CHECK_EQ_INT(c.bad_color, 0);
    CHECK_EQ_INT(c.bad_allowed, 0);
    CHECK_EQ_INT(c.infeasible, 0);
done:
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    hsdag_devices_free(devs);
    hsdag_graph_free(g);
}

/* ---- checkpoints of earlier versions (tests/data/legacy): the tiny graph on cpu-gpu, the checkpoint and the
 * curve the run that wrote it went on to print ---- */
typedef struct legacy_fix {
    hsdag_graph *g;
    hsdag_devices *d;
    hsdag_sim *sim;
    char *ck, *want; /* the checkpoint (len bytes) and its .expect curve */
    size_t len;
} legacy_fix;

/* Loads the fixture of checkpoint bin and curve expect; 1 when everything loaded (each failure a CHECK). */
static int legacy_open(legacy_fix *f, const char *bin, const char *expect)
{
    hsdag_err e = {0};
    size_t wlen = 0;
    memset(f, 0, sizeof *f);
    CHECK_EQ_INT(hsdag_load_file(&f->g, "tests/data/legacy/tiny.json", HSDAG_FMT_UNKNOWN, &e), 0);
    CHECK_EQ_INT(hsdag_read_file(&f->ck, &f->len, bin, 0, &e), 0);
    CHECK_EQ_INT(hsdag_read_file(&f->want, &wlen, expect, 0, &e), 0);
    if (!f->g || !f->ck || !f->want) return 0;
    hsdag_sim_config sc = hsdag_sim_config_default();
    CHECK_EQ_INT(hsdag_devices_preset(&f->d, "cpu-gpu", f->g, &e), 0);
    CHECK_EQ_INT(hsdag_sim_create(&f->sim, f->g, f->d, &sc, &e), 0);
    return f->sim != NULL;
}

static void legacy_close(legacy_fix *f)
{
    hsdag_sim_free(f->sim);
    hsdag_devices_free(f->d);
    hsdag_graph_free(f->g);
    hsdag_free(f->ck);
    hsdag_free(f->want);
}

/* The rows of L's curve equal to the fixture's, bit for bit: episode, mean, best, entropy, reward, clusters
 * and, with feasible (version 3 on), the feasible fraction. */
static int legacy_curve_same(const legacy_fix *f, const hsdag_learn *L, int feasible)
{
    int32_t n = 0;
    const hsdag_learn_row *rows = hsdag_learn_curve(L, &n);
    int same = 0;
    char *s = f->want;
    for (int32_t i = 0; i < n; i++) {
        long ep = strtol(s, &s, 10);
        double m = strtod(s, &s), b = strtod(s, &s), h = strtod(s, &s), r = strtod(s, &s);
        long c = strtol(s, &s, 10);
        double fr = feasible ? strtod(s, &s) : rows[i].feasible_frac;
        same += ep == rows[i].episode && m == rows[i].mean_latency_s && b == rows[i].best_latency_s &&
                h == rows[i].entropy && r == rows[i].reward && c == rows[i].clusters &&
                fr == rows[i].feasible_frac;
    }
    return same;
}

/* ---- a version-1 checkpoint continues exactly like the run that wrote it ---- */
static void test_legacy_checkpoint(void)
{
    hsdag_err e = {0};
    legacy_fix f;
    hsdag_learn *L = NULL, *M = NULL;
    if (!legacy_open(&f, "tests/data/legacy/learn_v1.bin", "tests/data/legacy/learn_v1.expect")) goto done;
    hsdag_learn_config cfg = hsdag_learn_config_paper(); /* the learner of the build that wrote it */
    cfg.hidden = 8;
    cfg.embed = 4;
    cfg.steps = 3;
    cfg.seed = 7;
    cfg.episodes = 3;
    CHECK_EQ_INT(hsdag_learn_create(&L, f.g, f.d->n, &cfg, &e), 0);
    if (!L) goto done;
    CHECK_EQ_INT(hsdag_learn_load(L, f.ck, f.len, &e), 0);
    CHECK_EQ_INT(hsdag_learn_train(L, hsdag_learn_sim_eval, f.sim, NULL, NULL, &e), 0);
    int32_t n = 0;
    hsdag_learn_curve(L, &n);
    CHECK_EQ_INT(n, 3);
    /* bit-identical to the uninterrupted run of the build that wrote the file */
    CHECK_EQ_INT(legacy_curve_same(&f, L, 0), 3);
    /* read old, write new: a version-4 checkpoint of the continued run; every flipped bit is refused */
    hsdag_buf b2 = {0};
    CHECK_EQ_INT(hsdag_learn_save(L, &b2, &e), 0);
    CHECK(b2.len > 12 && ((const unsigned char *)b2.data)[8] == 4);
    CHECK_EQ_INT(hsdag_learn_create(&M, f.g, f.d->n, &cfg, &e), 0);
    if (M) {
        CHECK_EQ_INT(hsdag_learn_load(M, b2.data, b2.len, &e), 0);
        CHECK_EQ_INT(hsdag_learn_evals(M), hsdag_learn_evals(L));
        int tried = 0;
        CHECK_EQ_INT(flip_sweep_run(b2.data, b2.len, 5, learn_load_into, M, &tried), 0);
        CHECK(tried > 1000);
        CHECK_EQ_INT(flip_sweep_run(f.ck, f.len, 5, learn_load_into, M, &tried), 0);
    }
    hsdag_buf_free(&b2);
done:
    hsdag_learn_free(L);
    hsdag_learn_free(M);
    legacy_close(&f);
}

/* ---- a version-3 checkpoint (the default learner before self-imitation and offsets) is refused by today's
 * default with the options that continue it, and continues exactly with them ---- */
static void test_v3_checkpoint(void)
{
    hsdag_err e = {0};
    legacy_fix f;
    hsdag_learn *L = NULL, *M = NULL;
    if (!legacy_open(&f, "tests/data/legacy/learn_v3.bin", "tests/data/legacy/learn_v3.expect")) goto done;
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.hidden = 8, cfg.embed = 4, cfg.steps = 1, cfg.samples = 4, cfg.seed = 7, cfg.episodes = 3;
    CHECK_EQ_INT(hsdag_learn_create(&L, f.g, f.d->n, &cfg, &e), 0);
    if (!L) goto done;
    CHECK_EQ_INT(hsdag_learn_load(L, f.ck, f.len, &e), HSDAG_EINVAL);
    /* one message names every default changed since: 2 devices, so the old min-clusters was 4 */
    CHECK(strstr(e.msg, "--sil 0 --offset-lr 0 --min-clusters 4") != NULL);
    hsdag_learn_free(L);
    L = NULL;
    cfg.sil = 0, cfg.sil_elite = 0, cfg.offset_lr = 0, cfg.min_clusters = 4;
    CHECK_EQ_INT(hsdag_learn_create(&L, f.g, f.d->n, &cfg, &e), 0);
    if (!L) goto done;
    CHECK_EQ_INT(hsdag_learn_load(L, f.ck, f.len, &e), 0);
    CHECK_EQ_INT(hsdag_learn_train(L, hsdag_learn_sim_eval, f.sim, NULL, NULL, &e), 0);
    int32_t n = 0;
    hsdag_learn_curve(L, &n);
    CHECK_EQ_INT(n, 3);
    /* bit-identical to the uninterrupted run of the build that wrote the file */
    CHECK_EQ_INT(legacy_curve_same(&f, L, 1), 3);
    hsdag_buf b2 = {0}; /* written again as version 4, it loads into the same configuration */
    CHECK_EQ_INT(hsdag_learn_save(L, &b2, &e), 0);
    CHECK(b2.len > 12 && ((const unsigned char *)b2.data)[8] == 4);
    CHECK_EQ_INT(hsdag_learn_create(&M, f.g, f.d->n, &cfg, &e), 0);
    if (M) CHECK_EQ_INT(hsdag_learn_load(M, b2.data, b2.len, &e), 0);
    hsdag_learn_free(M);
    M = NULL;
    /* min-clusters 0 is 2 x devices: it continues the 4 the file was written with; any other value is named */
    cfg.min_clusters = 0;
    CHECK_EQ_INT(hsdag_learn_create(&M, f.g, f.d->n, &cfg, &e), 0);
    if (M) CHECK_EQ_INT(hsdag_learn_load(M, b2.data, b2.len, &e), 0);
    hsdag_learn_free(M);
    M = NULL;
    cfg.min_clusters = 32;
    CHECK_EQ_INT(hsdag_learn_create(&M, f.g, f.d->n, &cfg, &e), 0);
    if (M) {
        CHECK_EQ_INT(hsdag_learn_load(M, b2.data, b2.len, &e), HSDAG_EINVAL);
        CHECK(strstr(e.msg, "continue it with --min-clusters 4") != NULL);
    }
    hsdag_buf_free(&b2);
done:
    hsdag_learn_free(L);
    hsdag_learn_free(M);
    legacy_close(&f);
}

/* ---- allocation failures: create, train, save and load answer ENOMEM with a message, nothing leaks ---- */
typedef struct learn_oom {
    const hsdag_graph *g;
    toy *t;
    hsdag_learn_config cfg;
} learn_oom;

static int learn_oom_call(void *ctx, hsdag_err *e)
{
    learn_oom *c = ctx;
    hsdag_learn *L = NULL, *M = NULL;
    hsdag_buf ck = {0};
    int rc = hsdag_learn_create(&L, c->g, 2, &c->cfg, e);
    if (rc == 0) rc = hsdag_learn_train(L, toy_eval, c->t, NULL, NULL, e);
    if (rc == 0) rc = hsdag_learn_save(L, &ck, e);
    if (rc == 0) rc = hsdag_learn_create(&M, c->g, 2, &c->cfg, e);
    if (rc == 0) rc = hsdag_learn_load(M, ck.data, ck.len, e);
    hsdag_buf_free(&ck);
    hsdag_learn_free(L);
    hsdag_learn_free(M);
    return rc;
}

static void test_oom(int step)
{
    hsdag_graph *g = small_graph();
    toy t;
    toy_init(&t, g);
    learn_oom c = {g, &t, step ? hsdag_learn_config_default() : small_cfg()};
    c.cfg.episodes = 2;
    c.cfg.steps = 2;
    if (step) c.cfg.samples = 3;
    c.cfg.hidden = 8;
    c.cfg.embed = 4;
    oom_sweep s = oom_sweep_call(learn_oom_call, &c, 100000, 1);
    CHECK(s.ok && s.oom > 0);
    CHECK_EQ_INT(s.other, 0);
    CHECK_EQ_INT(s.oom_bad_msg, 0);
    hsdag_graph_free(g);
}

/* ---- the one-pass placement made to fit (hsdag_learn_greedy_fit): SqueezeNet 1.1 on a CPU + GPU whose GPU
 * holds half of what the model needs, a policy taught to want the GPU everywhere ---- */
static int excess(hsdag_sim *sim, const int32_t *dev)
{
    hsdag_sim_result r;
    return hsdag_sim_run(sim, dev, &r) == 0 && r.max_excess_bytes > 0;
}

/* The cpu-gpu problem of g, its GPU capped by cap ("GPU=50%") or not (NULL); *d holds the devices. */
static void fit_problem(hsdag_place_problem **p, hsdag_devices **d, const hsdag_graph *g, const char *cap,
                        hsdag_err *e)
{
    hsdag_sim_config sc = hsdag_sim_config_default();
    CHECK_EQ_INT(hsdag_devices_preset(d, "cpu-gpu", g, e), 0);
    if (*d && cap) CHECK_EQ_INT(hsdag_devices_mem_override(*d, g, &sc, cap, e), 0);
    if (*d) CHECK_EQ_INT(hsdag_place_problem_create(p, g, *d, &sc, e), 0);
}

/* A small learner with one decision per group, as pre-training, that imitates a target nearly exactly. */
static hsdag_learn_config fit_config(void)
{
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.levels = 0;
    cfg.hidden = 32;
    cfg.imitate_steps = 40;
    cfg.imitate_prob = 0.99;
    return cfg;
}

static void test_greedy_fit(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *capped = NULL, *free_ = NULL;
    hsdag_place_problem *p = NULL, *q = NULL;
    hsdag_learn *L = NULL, *L2 = NULL;
    CHECK_EQ_INT(hsdag_load_file(&g, "tests/data/onnx/squeezenet1_1.onnx", HSDAG_FMT_UNKNOWN, &e), 0);
    if (!g) return;
    fit_problem(&p, &capped, g, "GPU=50%", &e);
    fit_problem(&q, &free_, g, NULL, &e);
    if (!p || !q) goto done;
    hsdag_learn_config cfg = fit_config();
    int32_t n = g->n_nodes, gpu = 1, steps, moved = -1, moved2 = -1;
    int32_t *want = calloc((size_t)n, sizeof *want), *d0 = calloc((size_t)n, sizeof *d0),
            *d1 = calloc((size_t)n, sizeof *d1), *d2 = calloc((size_t)n, sizeof *d2);
    double prob;
    for (int32_t v = 0; v < n; v++) want[v] = gpu;
    CHECK_EQ_INT(hsdag_learn_create_problem(&L, p, &cfg, &e), 0);
    if (!L || !want || !d0 || !d1 || !d2) goto out;
    CHECK_EQ_INT(hsdag_learn_imitate(L, want, &steps, &prob, &e), 0);
    CHECK_EQ_INT(hsdag_learn_greedy(L, d0, &e), 0);
    /* the memory masks count static bytes and one working set: the live activations overflow */
    CHECK(excess(p->sim, d0));
    CHECK_EQ_INT(hsdag_learn_greedy_fit(L, p->sim, d1, &moved, &e), 0);
    CHECK(!excess(p->sim, d1));
    CHECK(moved > 0);
    int32_t back = 0, kept = 0;
    for (int32_t v = 0; v < n; v++) {
        back += d1[v] != d0[v] && d0[v] != gpu; /* only moves off the over-full GPU */
        kept += d1[v] == gpu;
    }
    CHECK_EQ_INT(back, 0);
    CHECK(kept > 0); /* not simply everything on the CPU */
    CHECK_EQ_INT(hsdag_learn_greedy_fit(L, p->sim, d2, &moved2, &e), 0); /* deterministic */
    CHECK(moved2 == moved && memcmp(d1, d2, sizeof(int32_t) * (size_t)n) == 0);
    printf("greedy fit: %d decisions moved, %d of %d ops stay on the GPU\n", (int)moved, (int)kept, (int)n);
    /* nothing capped: the greedy placement itself */
    CHECK_EQ_INT(hsdag_learn_create_problem(&L2, q, &cfg, &e), 0);
    if (L2) {
        CHECK_EQ_INT(hsdag_learn_imitate(L2, want, &steps, &prob, &e), 0);
        CHECK_EQ_INT(hsdag_learn_greedy(L2, d0, &e), 0);
        CHECK_EQ_INT(hsdag_learn_greedy_fit(L2, q->sim, d1, &moved, &e), 0);
        CHECK(moved == 0 && memcmp(d0, d1, sizeof(int32_t) * (size_t)n) == 0);
    }
out:
    free(want);
    free(d0);
    free(d1);
    free(d2);
done:
    hsdag_learn_free(L);
    hsdag_learn_free(L2);
    hsdag_place_problem_free(p);
    hsdag_place_problem_free(q);
    hsdag_devices_free(capped);
    hsdag_devices_free(free_);
    hsdag_graph_free(g);
}

/* ---- weight units (cfg.weight_unit_frac): ViT-B/16 at GPU=50%, where the MILP's optimum keeps the weights
 * that reach their MatMuls through ops of their own (Transposes without inputs) on the CPU and runs the rest
 * on the GPU. A learner with weight units can express that placement (taught it, it places it); without
 * them graph parsing pools such weights into their consumers' clusters, and it cannot ---- */
static void test_weight_units(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    CHECK_EQ_INT(hsdag_load_file(&g, "tests/data/onnx/vit_b_16.onnx", HSDAG_FMT_UNKNOWN, &e), 0);
    if (!g) return;
    fit_problem(&p, &d, g, "GPU=50%", &e);
    int32_t n = g->n_nodes, cpu = 0, gpu = 1, nw = 0, split[2] = {-1, -1};
    int32_t *want = calloc((size_t)n, sizeof *want), *dev = calloc((size_t)n, sizeof *dev);
    if (!p || !want || !dev) goto done;
    double mc = fmin(p->cap[0], p->cap[1]);
    for (int32_t v = 0; v < n; v++) {
        /* an op without inputs holding weights, whose consumers all take other inputs too */
        int w = g->in_off[v + 1] == g->in_off[v] && p->c->static_bytes[v] > 0.01 * mc;
        for (int32_t k = g->out_off[v]; k < g->out_off[v + 1] && w; k++)
            w = g->in_off[g->out_dst[k] + 1] - g->in_off[g->out_dst[k]] >= 2;
        want[v] = w ? cpu : gpu;
        nw += w;
    }
    CHECK(nw >= 24); /* the 24 MLP weights at least (one Transpose each) */
    hsdag_sim_result r;
    CHECK_EQ_INT(hsdag_sim_run(p->sim, want, &r), 0);
    /* 21.1 ms, where the default learner without weight units stalls at 34.8 (docs/hsdag.md); the MILP's
     * 16.14 ms keeps the attention weights on the GPU too */
    CHECK(r.feasible && r.makespan_s < 0.025);
    for (int on = 0; on < 2; on++) {
        hsdag_learn_config cfg = hsdag_learn_config_default();
        cfg.imitate_steps = 200, cfg.imitate_prob = 0.99;
        if (!on) cfg.weight_unit_frac = 0;
        int32_t steps;
        double prob;
        CHECK_EQ_INT(hsdag_learn_create_problem(&L, p, &cfg, &e), 0);
        if (!L) break;
        CHECK_EQ_INT(hsdag_learn_imitate(L, want, &steps, &prob, &e), 0);
        CHECK_EQ_INT(hsdag_learn_greedy(L, dev, &e), 0);
        /* the weights on the CPU with every consumer on the GPU */
        split[on] = 0;
        for (int32_t v = 0; v < n; v++) {
            if (want[v] != cpu) continue;
            int ok = dev[v] == cpu;
            for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++) ok &= dev[g->out_dst[k]] == gpu;
            split[on] += ok;
        }
        hsdag_learn_free(L);
        L = NULL;
    }
    printf(
        "weight units: %d weights fed through ops of their own; placed apart from their consumers: %d with "
        "weight units, %d without\n",
        (int)nw, (int)split[1], (int)split[0]);
    CHECK_EQ_INT(split[1], nw);
    CHECK(split[0] >= 0 && split[0] < nw);
done:
    free(want);
    free(dev);
    hsdag_place_problem_free(p);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

/* ---- the one-pass placement of an ensemble (hsdag_learn_greedy_fit_mean): two parameter sets of one network,
 * A taught the GPU everywhere and B the CPU for the first half of the ops; SqueezeNet 1.1, GPU capped ---- */
static void test_greedy_fit_mean(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *capped = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    CHECK_EQ_INT(hsdag_load_file(&g, "tests/data/onnx/squeezenet1_1.onnx", HSDAG_FMT_UNKNOWN, &e), 0);
    if (!g) return;
    fit_problem(&p, &capped, g, "GPU=50%", &e);
    hsdag_learn_config cfg = fit_config();
    cfg.offset_lr = 0; /* the network's parameters alone say what a member wants, as in pre-training */
    if (p) CHECK_EQ_INT(hsdag_learn_create_problem(&L, p, &cfg, &e), 0);
    int32_t n = g->n_nodes, steps, moved;
    size_t cnt = L ? hsdag_nn_params_count(hsdag_learn_params(L)) : 0;
    int32_t *want = calloc((size_t)n, sizeof *want), *da = calloc((size_t)n, sizeof *da),
            *db = calloc((size_t)n, sizeof *db), *d1 = calloc((size_t)n, sizeof *d1),
            *d2 = calloc((size_t)n, sizeof *d2);
    float *va = calloc(cnt ? cnt : 1, sizeof *va), *vb = calloc(cnt ? cnt : 1, sizeof *vb);
    double prob;
    if (!L || !want || !da || !db || !d1 || !d2 || !va || !vb) goto out;
    float *w = hsdag_nn_params_value(hsdag_learn_params(L), -1);
    for (int32_t v = 0; v < n; v++) want[v] = 1;
    CHECK_EQ_INT(hsdag_learn_imitate(L, want, &steps, &prob, &e), 0);
    memcpy(va, w, sizeof(float) * cnt);
    CHECK_EQ_INT(hsdag_learn_greedy_fit(L, p->sim, da, &moved, &e), 0);
    for (int32_t v = 0; v < n; v++) want[v] = v >= n / 2;
    CHECK_EQ_INT(hsdag_learn_imitate(L, want, &steps, &prob, &e), 0);
    memcpy(vb, w, sizeof(float) * cnt);
    CHECK_EQ_INT(hsdag_learn_greedy_fit(L, p->sim, db, &moved, &e), 0);
    CHECK(memcmp(da, db, sizeof(int32_t) * (size_t)n) != 0); /* two members that disagree */
    memcpy(w, va, sizeof(float) * cnt);
    const float *one[1] = {va}, *bb[2] = {vb, vb}, *ab[2] = {va, vb}, *ba[2] = {vb, va};
    /* one member: its own placement; two copies of B, with L holding A: B's (the members are used) */
    CHECK_EQ_INT(hsdag_learn_greedy_fit_mean(L, one, 1, p->sim, d1, &moved, &e), 0);
    CHECK(memcmp(d1, da, sizeof(int32_t) * (size_t)n) == 0);
    CHECK_EQ_INT(hsdag_learn_greedy_fit_mean(L, bb, 2, p->sim, d1, &moved, &e), 0);
    CHECK(memcmp(d1, db, sizeof(int32_t) * (size_t)n) == 0);
    CHECK(memcmp(w, va, sizeof(float) * cnt) == 0); /* L's own parameters are kept */
    /* the order of the members does not matter, and the placement fits */
    CHECK_EQ_INT(hsdag_learn_greedy_fit_mean(L, ab, 2, p->sim, d1, &moved, &e), 0);
    CHECK_EQ_INT(hsdag_learn_greedy_fit_mean(L, ba, 2, p->sim, d2, &moved, &e), 0);
    CHECK(memcmp(d1, d2, sizeof(int32_t) * (size_t)n) == 0);
    CHECK(!excess(p->sim, d1));
    int32_t on_a = 0, on_b = 0;
    for (int32_t v = 0; v < n; v++) on_a += d1[v] == da[v], on_b += d1[v] == db[v];
    printf("greedy fit of an ensemble: %d of %d ops where A puts them, %d where B does\n", (int)on_a, (int)n,
           (int)on_b);
    CHECK_EQ_INT(hsdag_learn_greedy_fit(L, p->sim, d2, &moved, &e), 0); /* L itself: A's, as before */
    CHECK(memcmp(d2, da, sizeof(int32_t) * (size_t)n) == 0);
    CHECK_EQ_INT(hsdag_learn_greedy_fit_mean(L, one, -1, p->sim, d1, &moved, &e), HSDAG_EINVAL);
out:
    free(want);
    free(da);
    free(db);
    free(d1);
    free(d2);
    free(va);
    free(vb);
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    hsdag_devices_free(capped);
    hsdag_graph_free(g);
}

static void test_bad_config(void)
{
    hsdag_graph *g = small_graph();
    hsdag_learn_config cfg = hsdag_learn_config_default();
    hsdag_learn *L = NULL;
    hsdag_err e = {0};
    cfg.steps = 0;
    CHECK_EQ_INT(hsdag_learn_create(&L, g, 2, &cfg, &e), HSDAG_EINVAL);
    cfg = hsdag_learn_config_default();
    cfg.features = 0;
    CHECK_EQ_INT(hsdag_learn_create(&L, g, 2, &cfg, &e), HSDAG_EINVAL);
    CHECK(L == NULL);
    hsdag_graph_free(g);
}

int main(void)
{
    hsdag_nn_set_threads(1);
    test_gradcheck(HSDAG_NN_GNN_GCN);
    test_gradcheck(HSDAG_NN_GNN_SAGE);
    test_gradcheck_offsets();
    test_train_optimum();
    test_train_sim_optimum();
    test_determinism_resume(0);
    test_determinism_resume(1);
    test_legacy_checkpoint();
    test_v3_checkpoint();
    test_oom(0);
    test_oom(1);
    test_constraints();
    test_greedy_fit();
    test_greedy_fit_mean();
    test_weight_units();
    test_bad_config();
    return check_summary("test_learn");
}
