/* fuzz_compare.c - libFuzzer target for `hsdag compare` over small graphs: the input decodes into a graph of
 * up to 10 ops (measured costs, FLOPs, sizes, colour classes, no-accelerator flags and edges, values drawn
 * from tables that include the extremes the loaders accept: 0, 1e-300, 1e12 ms, 1e18 B, 1e24 FLOP), a device
 * preset and a semantics, then every registered method runs on it with small budgets (the learned one on one
 * input in eight, since it trains 500 placements).
 * Not here: the quality of the placements (tests/test_place.c); this looks for crashes, aborts (GLPK's
 * included), leaks, UB, invalid placements and errors other than a method declining the problem.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/learn.h"
#include "hsdag/place.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

static unsigned fz_byte(fz_in *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

static double fz_pick(fz_in *in, const double *table, size_t count)
{
    return table[fz_byte(in) % count];
}

#define FZ_N(a) (sizeof(a) / sizeof *(a))
static const double fz_ms[] = {NAN, 0, 1e-300, 1e-12, 1e-3, 0.5, 1, 7, 1e3, 1e6, 1e9, 1e12};
static const double fz_bytes[] = {0, 1, 4096, 1e6, 1e9, 3e10, 1e15, 1e18};
static const double fz_flops[] = {0, 1, 1e6, 1e9, 1e12, 1e15, 1e20, 1e24};
static const char *const fz_ops[] = {"Relu", "MatMul", "Conv", "Add", "Constant", "Softmax", "Weird"};
static const char *const fz_presets[] = {"cpu-gpu",       "cpu-igpu",      "cpu-4gpu",     "tarnawski:1:1",
                                         "tarnawski:2:1", "tarnawski:3:2", "tarnawski:1:0"};

static hsdag_graph *fz_graph(fz_in *in)
{
    hsdag_gb *b = hsdag_gb_create();
    if (!b) return NULL;
    int32_t n = 1 + (int32_t)(fz_byte(in) % 10);
    for (int32_t v = 0; v < n; v++) {
        unsigned f = fz_byte(in);
        char nm[16];
        snprintf(nm, sizeof nm, "v%d", (int)v);
        int32_t id = hsdag_gb_add_node(b, nm, fz_ops[f % FZ_N(fz_ops)]);
        if (id < 0) break;
        if (f & 0x08) { /* measured costs (Tarnawski-like) */
            hsdag_gb_set_cost(b, id, HSDAG_COST_CPU, fz_pick(in, fz_ms, FZ_N(fz_ms)));
            hsdag_gb_set_cost(b, id, HSDAG_COST_ACCEL, fz_pick(in, fz_ms, FZ_N(fz_ms)));
        }
        if (f & 0x10) hsdag_gb_set_flops(b, id, fz_pick(in, fz_flops, FZ_N(fz_flops)));
        if (f & 0x20) hsdag_gb_set_mem_bytes(b, id, fz_pick(in, fz_bytes, FZ_N(fz_bytes)));
        if (f & 0x40) hsdag_gb_set_color(b, id, (int32_t)(fz_byte(in) % 3));
        if (f & 0x80) hsdag_gb_set_flags(b, id, HSDAG_NF_NO_ACCEL);
    }
    for (int32_t u = 0; u < n; u++) {
        unsigned mask = fz_byte(in) | (fz_byte(in) << 8);
        for (int32_t v = u + 1; v < n && v - u <= 16; v++)
            if ((mask >> (v - u - 1)) & 1u)
                hsdag_gb_add_edge_ex(b, u, v, fz_pick(in, fz_bytes, FZ_N(fz_bytes)),
                                     (mask & 0x8000u) ? fz_pick(in, fz_ms, FZ_N(fz_ms)) : NAN);
    }
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) HSDAG_ASSERT(g == NULL && e.msg[0] && !strchr(e.msg, '\n'));
    hsdag_gb_free(b);
    return g;
}

/* a method declining a problem is fine; anything else is a finding. Known and reported (docs/fuzzing.md):
 * the learned placer refuses a graph whose every placement takes 0 s (its reward is 1 / latency). */
static int fz_acceptable(const char *method, int rc, const hsdag_err *e)
{
    if (rc == HSDAG_EUNSUPPORTED || rc == HSDAG_EINFEASIBLE || rc == HSDAG_ELIMIT) return 1;
    /* the learned placers (reward from 1/latency or log latency) refuse a graph whose latency is 0 s */
    if (rc == HSDAG_EEXTERNAL && strncmp(method, "hsdag", 5) == 0 && strstr(e->msg, "oracle returned 0 s"))
        return 1;
    return rc == HSDAG_ESOLVER && strstr(e->msg, "time limit") != NULL;
}

/* The learned placer as the registry runs it, at 3 episodes x 4 steps and small widths, then a checkpoint
 * round trip: save, load into a fresh learner, save again: the same bytes. */
static void fz_learner(hsdag_place_problem *p, unsigned seed)
{
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.episodes = 3;
    cfg.steps = 4;
    cfg.hidden = 8;
    cfg.embed = 4;
    cfg.seed = seed;
    hsdag_learn *L = NULL, *L2 = NULL;
    hsdag_err e = {0};
    hsdag_buf a = {0}, b = {0};
    if (hsdag_learn_create(&L, p->g, p->k, &cfg, &e) < 0) {
        HSDAG_ASSERT(e.msg[0] && !strchr(e.msg, '\n'));
        goto done;
    }
    int rc = hsdag_learn_train(L, hsdag_learn_sim_eval, p->sim, NULL, NULL, &e);
    if (rc < 0) {
        HSDAG_ASSERT(fz_acceptable("hsdag", rc, &e) && e.msg[0] && !strchr(e.msg, '\n'));
        goto done;
    }
    /* Known and reported (docs/fuzzing.md): with no feasible placement sampled yet, the best-placement
     * array is saved uninitialised, and the checkpoint does not load ("device index out of range"). */
    const int32_t *best = NULL;
    hsdag_learn_best(L, &best, NULL, NULL);
    if (!best) goto done;
    HSDAG_ASSERT(hsdag_learn_save(L, &a, &e) == 0);
    HSDAG_ASSERT(hsdag_learn_create(&L2, p->g, p->k, &cfg, &e) == 0);
    if (hsdag_learn_load(L2, a.data, a.len, &e) < 0) {
        fprintf(stderr, "fuzz_compare: a checkpoint does not load into its own configuration: %s\n", e.msg);
        abort();
    }
    HSDAG_ASSERT(hsdag_learn_save(L2, &b, &e) == 0);
    HSDAG_ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
done:
    hsdag_buf_free(&a);
    hsdag_buf_free(&b);
    hsdag_learn_free(L);
    hsdag_learn_free(L2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int registered;
    if (!registered) {
        hsdag_err e = {0};
        HSDAG_ASSERT(hsdag_learn_register_methods(&e) == 0);
        registered = 1;
    }
    fz_in in = {data, size};
    unsigned hdr = fz_byte(&in);
    hsdag_graph *g = fz_graph(&in);
    if (!g) return 0;
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_err e = {0};
    if (hsdag_devices_preset(&d, fz_presets[hdr % FZ_N(fz_presets)], g, &e) < 0) {
        HSDAG_ASSERT(e.msg[0] && !strchr(e.msg, '\n'));
        goto done;
    }
    hsdag_sim_config cfg = hsdag_sim_config_default();
    static const hsdag_semantics sems[] = {HSDAG_SEM_AUTO, HSDAG_SEM_SEQUENTIAL, HSDAG_SEM_CONCURRENT,
                                           HSDAG_SEM_TARNAWSKI};
    cfg.semantics = sems[(hdr >> 3) % 4];
    if (hsdag_place_problem_create(&p, g, d, &cfg, &e) < 0) {
        HSDAG_ASSERT(p == NULL && e.msg[0] && !strchr(e.msg, '\n'));
        goto done;
    }
    int32_t count = 0;
    const hsdag_place_method *m = hsdag_place_methods(&count);
    int32_t *dev = calloc((size_t)g->n_nodes + 1, sizeof *dev);
    HSDAG_ASSERT(dev != NULL);
    for (int32_t i = 0; i < count; i++) {
        if (m[i].fn == hsdag_learn_place) continue; /* 500 placements: run small below instead */
        hsdag_place_opts o = hsdag_place_opts_default();
        o.seed = hdr;
        o.time_limit_s = 0.02;
        o.max_evals = 60;
        o.budget = 20; /* black-box methods and the other learned placers: 20 measurements */
        hsdag_place_result r;
        hsdag_err me = {0};
        int rc = hsdag_place_run(p, m[i].name, &o, dev, &r, &me);
        if (rc < 0) {
            if (!fz_acceptable(m[i].name, rc, &me) || !me.msg[0] || strchr(me.msg, '\n')) {
                fprintf(stderr, "fuzz_compare: %s: status %d: %s\n", m[i].name, rc, me.msg);
                abort();
            }
            continue;
        }
        for (int32_t v = 0; v < g->n_nodes; v++) HSDAG_ASSERT(dev[v] >= 0 && dev[v] < d->n);
        HSDAG_ASSERT(!r.feasible || (isfinite(r.latency_s) && r.latency_s >= 0));
        HSDAG_ASSERT(!strchr(r.rep.note, '\n'));
    }
    free(dev);
    if ((hdr >> 5) == 0) fz_learner(p, hdr); /* one input in eight */
done:
    hsdag_place_problem_free(p);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
    return 0;
}
