/* glue.c - the HSDAG learner wired to the simulator (reward), the black-box oracle (noise), the heuristics
 *          (warm start), local search (polish) and the placer registry: hsdag, hsdag-learned, hsdag-paper.
 * Not here: the learner itself (train.c) or external measurement commands (tools/cmd_train.c).
 * The default (hsdag): warm start, learning, local search from two starts, policy-guided iterated local search.
 * Entry points: hsdag_learn_sim_eval, hsdag_learn_polish(_noisy), hsdag_learn_warm_start, hsdag_learn_place,
 *               hsdag_learn_place_learned, hsdag_learn_place_paper, hsdag_learn_episodes_for,
 *               hsdag_learn_register_methods. */
#include "hsdag/learn.h"

#include <math.h>
#include <string.h>

int hsdag_learn_sim_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible, hsdag_err *e)
{
    hsdag_sim_result r;
    int rc = hsdag_sim_run((hsdag_sim *)ctx, device, &r);
    if (rc < 0) return hsdag_err_set(e, rc, "hsdag: simulator rejected a placement");
    *latency_s = r.makespan_s;
    *feasible = r.feasible;
    return 0;
}

int32_t hsdag_learn_episodes_for(const hsdag_learn_config *cfg, int64_t budget)
{
    int64_t per = (int64_t)cfg->steps * cfg->samples;
    int64_t n = (budget + per - 1) / per;
    return (int32_t)(n < 1 ? 1 : (n > 10000000 ? 10000000 : n));
}

int hsdag_learn_polish(hsdag_learn *L, hsdag_place_problem *p, uint64_t seed, int64_t max_evals,
                       double *polished_s, hsdag_err *e)
{
    return hsdag_learn_polish_noisy(L, p, seed, max_evals, 0.0, polished_s, NULL, e);
}

/* One local-search run on p from init (NULL = local-search's own start: with o's seed and max_evals it is
 * exactly the `local-search` row) with at most max_evals evaluations (its start's included); offers the result
 * to L. *obj gets local-search's objective (its best, possibly noisy, measurement), *evals what it used. */
static int polish_from(hsdag_learn *L, hsdag_place_problem *p, const int32_t *init, uint64_t seed,
                       int64_t max_evals, double noise, int32_t *dev, double *obj, int64_t *evals,
                       hsdag_err *e)
{
    hsdag_place_opts o = hsdag_place_opts_default();
    o.seed = seed;
    o.init = init;
    o.max_evals = max_evals;
    o.noise = noise;
    o.time_limit_s = 1e9; /* the evaluation budget ends the search, so the polish is deterministic */
    const hsdag_place_method *m = hsdag_place_method_find("local-search");
    hsdag_place_report rep = {.bound_s = NAN, .objective_s = NAN, .best_episode = -1};
    int rc = m ? m->fn(p, &o, dev, &rep, e) : hsdag_err_set(e, HSDAG_EINVAL, "hsdag: no local-search");
    if (rc < 0) return rc;
    /* local search reports the latency it measured, not the verdict: one more run says whether the placement
     * fits (an infeasible one is never offered), counted as a measurement */
    hsdag_sim_result sr;
    if ((rc = hsdag_sim_run(p->sim, dev, &sr)) < 0)
        return hsdag_err_set(e, rc, "hsdag: simulator rejected a placement");
    *evals += rep.evals + 1;
    *obj = sr.feasible ? rep.objective_s : NAN;
    if (sr.feasible) hsdag_learn_offer(L, dev, rep.objective_s);
    return 0;
}

int hsdag_learn_polish_noisy(hsdag_learn *L, hsdag_place_problem *p, uint64_t seed, int64_t max_evals,
                             double noise, double *polished_s, int64_t *evals, hsdag_err *e)
{
    const int32_t *best;
    double lat;
    int64_t used = 0;
    *polished_s = NAN;
    if (evals) *evals = 0;
    hsdag_learn_best(L, &best, &lat, NULL);
    if (!best) return 0;
    int32_t *dev = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    if (!dev) return HSDAG_ENOMEM;
    /* best points into L, which the offer may overwrite: polish a copy */
    int32_t *init = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    int rc = init ? 0 : HSDAG_ENOMEM;
    if (init) memcpy(init, best, sizeof(int32_t) * (size_t)p->n);
    if (rc == 0) rc = polish_from(L, p, init, seed, max_evals, noise, dev, polished_s, &used, e);
    if (evals) *evals = used;
    hsdag_free(init);
    hsdag_free(dev);
    return rc;
}

/* ---- the policy-guided iterated local search ----
 * From the best placement so far: draw a placement from the learned policy, copy its devices onto a fraction
 * of the blocks (p->blk_grp: Tarnawski's inseparable colour-class blocks move whole; on a graph without
 * classes a block is one op), polish that with local search for ILS_CHUNK evaluations, keep it if better
 * (hsdag_learn_offer); until the budget is spent. The fraction cycles through 5%, 10%, 20% of the blocks
 * (at least one). Deterministic for a seed. */
#define ILS_CHUNK 2000

static void copy_block(const hsdag_place_problem *p, int32_t b, const int32_t *from, int32_t *to)
{
    for (int32_t i = p->blk_off[b]; i < p->blk_off[b + 1]; i++) {
        int32_t gi = p->blk_grp[i];
        for (int32_t j = p->grp_off[gi]; j < p->grp_off[gi + 1]; j++)
            to[p->grp_node[j]] = from[p->grp_node[j]];
    }
}

static void ils_perturb(const hsdag_place_problem *p, const int32_t *sample, int32_t *cand, double frac,
                        hsdag_rng *rng)
{
    int any = 0;
    for (int32_t b = 0; b < p->n_blocks; b++)
        if (hsdag_rng_uniform(rng) < frac) {
            copy_block(p, b, sample, cand);
            any = 1;
        }
    if (!any) copy_block(p, (int32_t)hsdag_rng_below(rng, (uint32_t)p->n_blocks), sample, cand);
}

static int learn_ils(hsdag_learn *L, hsdag_place_problem *p, const hsdag_place_opts *o, int64_t budget,
                     int64_t *evals, int32_t *rounds, hsdag_err *e)
{
    static const double fracs[] = {0.05, 0.1, 0.2};
    int32_t *sample = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    int32_t *cand = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    int32_t *dev = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    int rc = sample && cand && dev ? 0 : HSDAG_ENOMEM;
    hsdag_rng rng;
    hsdag_rng_seed(&rng, o->seed ^ 0x696c73ull);
    int64_t used = 0;
    *rounds = 0;
    while (rc == 0 && p->n_blocks > 0 && p->k > 1 && budget - used > 3) {
        const int32_t *best;
        double lat, obj;
        hsdag_learn_best(L, &best, &lat, NULL);
        if (!best) break;
        memcpy(cand, best, sizeof(int32_t) * (size_t)p->n);
        if ((rc = hsdag_learn_sample(L, &rng, sample, e)) < 0) break;
        ils_perturb(p, sample, cand, fracs[*rounds % 3], &rng);
        int64_t chunk = budget - used - 2 < ILS_CHUNK ? budget - used - 2 : ILS_CHUNK;
        rc = polish_from(L, p, cand, o->seed + 1 + (uint64_t)*rounds, chunk, o->noise, dev, &obj, &used, e);
        ++*rounds;
    }
    *evals += used;
    hsdag_free(sample);
    hsdag_free(cand);
    hsdag_free(dev);
    return rc;
}

/* ---- warm start: the best of the cheap placers, by measurement ----
 * The candidates are every heuristic row of `hsdag compare`'s table with the same options (so the same
 * placements: METIS with o's seed): single devices, HEFT, m-ETF, m-SCT, METIS, greedy-tarnawski and, on two
 * devices, the min cut (the optimum on cpu-gpu). A placer that does not apply (the min cut on k != 2) is
 * skipped. Under sequential semantics where the min cut is not the optimum (a memory cap, or more than two
 * devices), also the MILP on an iteration budget (WARM_ILP_ITERATIONS: no clock, so runs stay
 * bit-identical), on models of up to WARM_ILP_MAX_OPS ops. */

static const char *const warm_methods[] = {"heft",   "m-etf", "m-sct", "metis", "greedy-tarnawski",
                                           "mincut", "ilp"};

/* Measured with `hsdag place M --devices cpu-gpu --mem GPU=50% --method ilp --ilp-iterations N`: at 20,000
 * the MILP proves 6 of the 9 bundled models optimal (0.02-0.3 s) and reaches its 10-second incumbent on
 * ViT-B/16 (3.7 s) and BERT-base (6.2 s, 1,563 ops); Inception-V3 stops 3.6% above its optimum (3.4 s). On a
 * 6,168-op transformer (tests/gen_transformer.py --layers 76) the 20,000 iterations do not finish the LP
 * relaxation (12.6 s for nothing), hence the limit on ops. */
#define WARM_ILP_ITERATIONS 20000
#define WARM_ILP_MAX_OPS 2000

static int warm_ilp_applies(const hsdag_place_problem *p)
{
    if (p->sem != HSDAG_SEM_SEQUENTIAL || p->obj != HSDAG_OBJ_LATENCY || p->n > WARM_ILP_MAX_OPS) return 0;
    int capped = 0;
    for (int32_t d = 0; d < p->k; d++) capped |= p->cap[d] < INFINITY;
    return capped || p->k > 2;
}

int hsdag_learn_warm_start(hsdag_place_problem *p, hsdag_place_oracle *orc, const hsdag_place_opts *o,
                           int32_t *device, double *lat, int *feas, const char **from, hsdag_err *e)
{
    int32_t *tmp = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    if (!tmp) return HSDAG_ENOMEM;
    int rc = 0, have = 0;
    *from = NULL;
    int32_t ncand = p->k + (int32_t)(sizeof warm_methods / sizeof warm_methods[0]);
    for (int32_t c = 0; c < ncand && rc == 0; c++) {
        const char *name;
        if (c < p->k) {
            /* every op on device c where it may run, else on its first allowed device */
            for (int32_t v = 0; v < p->n; v++) {
                int32_t gi = p->group[v];
                int32_t d = c;
                if (!((p->group_allowed[gi] >> c) & 1u))
                    for (d = 0; d < p->k && !((p->group_allowed[gi] >> d) & 1u); d++) {}
                tmp[v] = d < p->k ? d : 0;
            }
            name = p->devs->dev[c].name;
        } else {
            name = warm_methods[c - p->k];
            int ilp = strcmp(name, "ilp") == 0;
            const hsdag_place_method *m = hsdag_place_method_find(name);
            if (!m || (ilp && !warm_ilp_applies(p))) continue;
            hsdag_place_opts mo = *o;
            mo.init = NULL;
            if (ilp) mo.ilp_iterations = WARM_ILP_ITERATIONS;
            hsdag_place_report rep = {.bound_s = NAN, .objective_s = NAN, .best_episode = -1};
            hsdag_err me = {0};
            if (m->fn(p, &mo, tmp, &rep, &me) < 0) continue; /* a heuristic that does not apply */
        }
        double l;
        int f;
        if ((rc = hsdag_place_oracle_eval(orc, tmp, &l, &f, e)) < 0) break;
        if (!have || (f && !*feas) || (f == *feas && l < *lat)) {
            have = 1;
            *lat = l;
            *feas = f;
            *from = name;
            memcpy(device, tmp, sizeof(int32_t) * (size_t)p->n);
        }
    }
    hsdag_free(tmp);
    return rc;
}

/* ---- the registry entries ---- */

typedef enum { RUN_DEFAULT, RUN_LEARNED, RUN_PAPER } run_kind;

/* What the default's phases gave, for its note. */
typedef struct run_log {
    const char *from; /* the warm start's heuristic */
    double warm_lat, learned, own, mine;
    int warm_feas;
    int64_t warm_evals, own_evals, mine_evals, ils_evals;
    int32_t ils_rounds;
} run_log;

/* The default before learning: the warm start (measured through orc), imitated, offered as the best. */
static int default_warm(hsdag_learn *L, hsdag_place_problem *p, hsdag_place_oracle *orc,
                        const hsdag_place_opts *o, run_log *g, hsdag_err *e)
{
    int32_t *warm = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    if (!warm) return HSDAG_ENOMEM;
    int32_t steps;
    double prob;
    int rc = hsdag_learn_warm_start(p, orc, o, warm, &g->warm_lat, &g->warm_feas, &g->from, e);
    g->warm_evals = orc->evals;
    if (rc == 0) rc = hsdag_learn_imitate(L, warm, &steps, &prob, e);
    if (rc == 0 && g->warm_feas) hsdag_learn_offer(L, warm, g->warm_lat);
    hsdag_free(warm);
    return rc;
}

/* The default after learning (used = the measurements so far): local search from its own start (exactly the
 * `local-search` row: same seed and budget), local search from the best so far (warm start or learned; the
 * copy taken before the first), then the policy-guided iterated local search from the best of all. Each has
 * HSDAG_LEARN_POLISH_EVALS evaluations; with o->max_evals > 0 the whole run has o->max_evals and what is
 * left after learning is split in three. */
static int default_search(hsdag_learn *L, hsdag_place_problem *p, const hsdag_place_opts *o, int64_t used,
                          run_log *g, hsdag_err *e)
{
    int64_t each = HSDAG_LEARN_POLISH_EVALS, last = each;
    if (o->max_evals > 0) {
        int64_t left = o->max_evals > used ? o->max_evals - used : 0;
        each = left / 3;
        last = left - 2 * each;
        each -=
            2; /* each polish's feasibility check is one more measurement; local search may overrun by one */
    }
    const int32_t *best;
    double lat;
    hsdag_learn_best(L, &best, &lat, NULL);
    int32_t *mine = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    int32_t *dev = hsdag_alloc_n((size_t)p->n, sizeof(int32_t), "hsdag", e);
    int rc = mine && dev ? 0 : HSDAG_ENOMEM;
    if (rc == 0 && best) memcpy(mine, best, sizeof(int32_t) * (size_t)p->n);
    if (rc == 0 && each > 0)
        rc = polish_from(L, p, NULL, o->seed, each, o->noise, dev, &g->own, &g->own_evals, e);
    if (rc == 0 && best && each > 0)
        rc = polish_from(L, p, mine, o->seed ^ 0x6d696e65ull, each, o->noise, dev, &g->mine, &g->mine_evals,
                         e);
    if (rc == 0 && last > 0) rc = learn_ils(L, p, o, last, &g->ils_evals, &g->ils_rounds, e);
    hsdag_free(mine);
    hsdag_free(dev);
    return rc;
}

static void default_note(hsdag_place_report *r, const run_log *g, long long learned_n, int32_t ep,
                         double noise)
{
    char wl[32] = "none feasible";
    if (g->warm_feas) snprintf(wl, sizeof wl, "%.4g ms", g->warm_lat * 1e3);
    snprintf(r->note, sizeof r->note,
             "warm start %s (%s, %lld measured); learned %lld placements -> %.4g ms%s; local-search from its "
             "start %.4g ms "
             "(%lld), from the best %.4g ms (%lld); policy ILS %d rounds (%lld)%s",
             g->from ? g->from : "-", wl, (long long)g->warm_evals, learned_n, g->learned * 1e3,
             ep >= 0 ? "" : " (no gain)", g->own * 1e3, (long long)g->own_evals, g->mine * 1e3,
             (long long)g->mine_evals, (int)g->ils_rounds, (long long)g->ils_evals,
             noise > 0 ? "; noisy" : "");
}

static int learn_run(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                     hsdag_place_report *r, hsdag_err *e, run_kind kind)
{
    hsdag_learn_config cfg = kind == RUN_PAPER ? hsdag_learn_config_paper() : hsdag_learn_config_default();
    int64_t budget = o->budget > 0 ? o->budget : 500;
    cfg.seed = o->seed;
    cfg.episodes = hsdag_learn_episodes_for(&cfg, budget);
    hsdag_learn *L = NULL;
    hsdag_place_oracle orc;
    hsdag_place_oracle_init(&orc, p, o->noise, o->seed);
    run_log g = {.warm_lat = NAN, .own = NAN, .mine = NAN};
    hsdag_nn_set_threads(1);
    /* the paper's learner knows nothing of colour classes or ops a device may not run (faithful); the
     * project's learner builds them into its policy */
    int rc = kind == RUN_PAPER ? hsdag_learn_create(&L, p->g, p->k, &cfg, e)
                               : hsdag_learn_create_problem(&L, p, &cfg, e);
    if (rc < 0) return rc;
    if (kind == RUN_DEFAULT && (rc = default_warm(L, p, &orc, o, &g, e)) < 0) goto done;
    if ((rc = hsdag_learn_train(L, hsdag_place_oracle_eval, &orc, NULL, NULL, e)) < 0) goto done;
    const int32_t *best;
    int32_t ep;
    hsdag_learn_best(L, &best, &g.learned, &ep);
    if (kind == RUN_DEFAULT && (rc = default_search(L, p, o, orc.evals, &g, e)) < 0) goto done;
    double lat;
    hsdag_learn_best(L, &best, &lat, &ep);
    r->evals = orc.evals + g.own_evals + g.mine_evals + g.ils_evals;
    r->best_episode = ep;
    if (!best) {
        /* Like the other placers, always return a placement: with nothing feasible sampled (tight memory),
         * fall back to HEFT, which skips full devices, and say so. */
        const hsdag_place_method *m = hsdag_place_method_find("heft");
        hsdag_place_report hr = {.bound_s = NAN, .objective_s = NAN, .best_episode = -1};
        rc = m ? m->fn(p, o, device, &hr, e) : HSDAG_EINVAL;
        if (rc == 0)
            snprintf(r->note, sizeof r->note, "no feasible placement in %lld sampled: returned HEFT's",
                     (long long)r->evals);
        goto done;
    }
    memcpy(device, best, sizeof(int32_t) * (size_t)p->n);
    if (kind == RUN_DEFAULT)
        default_note(r, &g, (long long)hsdag_learn_evals(L), ep, o->noise);
    else
        snprintf(r->note, sizeof r->note,
                 "%s: %d episodes x %d steps x %d samples, %d groups, best at episode %d%s",
                 kind == RUN_PAPER ? "paper REINFORCE" : "learned only", (int)cfg.episodes, (int)cfg.steps,
                 (int)cfg.samples, (int)hsdag_learn_groups(L), (int)ep,
                 o->noise > 0 ? "; measured with noise" : "");
done:
    hsdag_learn_free(L);
    return rc;
}

int hsdag_learn_place(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                      hsdag_place_report *r, hsdag_err *e)
{
    return learn_run(p, o, device, r, e, RUN_DEFAULT);
}

int hsdag_learn_place_learned(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                              hsdag_place_report *r, hsdag_err *e)
{
    return learn_run(p, o, device, r, e, RUN_LEARNED);
}

int hsdag_learn_place_paper(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                            hsdag_place_report *r, hsdag_err *e)
{
    return learn_run(p, o, device, r, e, RUN_PAPER);
}

int hsdag_learn_register_methods(hsdag_err *e)
{
    static const hsdag_place_method methods[] = {
        {"hsdag", hsdag_learn_place,
         "HSDAG, the project's learner (src/learn): warm start from the best heuristic (and, under a memory "
         "cap, the MILP on an iteration budget), --budget learned placements (default 500), local search "
         "from its own start and from the best, policy-guided "
         "iterated local search (--max-evals caps the whole run); the note says what each part gave",
         HSDAG_PLACE_PARTIAL, HSDAG_PLACE_RESPECTS, 1, HSDAG_PLACE_USES_BUDGET | HSDAG_PLACE_USES_MAX_EVALS},
        {"hsdag-learned", hsdag_learn_place_learned,
         "HSDAG learner alone: no warm start, no polish; --budget placements (default 500)",
         HSDAG_PLACE_PARTIAL, HSDAG_PLACE_RESPECTS, 1, HSDAG_PLACE_USES_BUDGET},
        {"hsdag-paper", hsdag_learn_place_paper,
         "HSDAG as published (NeurIPS 2024): GCN + graph-parsing pooling + REINFORCE, --budget placements in "
         "episodes of 20",
         HSDAG_PLACE_IGNORES, HSDAG_PLACE_IGNORES, 1, HSDAG_PLACE_USES_BUDGET},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int rc = hsdag_place_register(&methods[i], e);
        if (rc < 0) return rc;
    }
    return 0;
}
