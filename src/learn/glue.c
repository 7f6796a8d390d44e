/* glue.c - the HSDAG learner wired to the simulator (reward), the black-box oracle (noise), the heuristics
 *          (warm start), local search (polish) and the placer registry: hsdag, hsdag-learned, hsdag-paper.
 * Not here: the learner itself (train.c) or external measurement commands (tools/cmd_train.c).
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

int hsdag_learn_polish_noisy(hsdag_learn *L, hsdag_place_problem *p, uint64_t seed, int64_t max_evals,
                             double noise, double *polished_s, int64_t *evals, hsdag_err *e)
{
    const int32_t *best;
    double lat;
    *polished_s = NAN;
    if (evals) *evals = 0;
    hsdag_learn_best(L, &best, &lat, NULL);
    if (!best) return 0;
    int32_t *dev = hsdag_malloc(sizeof(int32_t) * (size_t)(p->n ? p->n : 1));
    if (!dev)
        return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)",
                             sizeof(int32_t) * (size_t)p->n);
    hsdag_place_opts o = hsdag_place_opts_default();
    o.seed = seed;
    o.init = best;
    o.max_evals = max_evals;
    o.noise = noise;
    o.time_limit_s = 1e9; /* the evaluation budget ends the search, so the polish is deterministic */
    const hsdag_place_method *m = hsdag_place_method_find("local-search");
    hsdag_place_report rep = {.bound_s = NAN, .objective_s = NAN, .best_episode = -1};
    int rc = m ? m->fn(p, &o, dev, &rep, e) : hsdag_err_set(e, HSDAG_EINVAL, "hsdag: no local-search");
    if (rc == 0) {
        if (evals) *evals = rep.evals;
        /* local search returns the best it measured; its own objective is that (possibly noisy) measurement */
        *polished_s = rep.objective_s;
        hsdag_learn_offer(L, dev, rep.objective_s);
    }
    hsdag_free(dev);
    return rc;
}

/* ---- warm start: the best of the cheap placers, by measurement ----
 * The candidates are local-search's own start (single devices, HEFT, greedy-tarnawski and, on two devices, the
 * min cut: the optimum on cpu-gpu) and m-ETF, so hsdag starts from at least as good a placement as
 * local-search. METIS is not one: as a start it helped on some hard instances and hurt on others
 * (docs/hsdag.md). A placer that does not apply (the min cut on k != 2) is skipped. */

static const char *const warm_methods[] = {"heft", "m-etf", "greedy-tarnawski", "mincut"};

int hsdag_learn_warm_start(hsdag_place_problem *p, hsdag_place_oracle *orc, const hsdag_place_opts *o,
                           int32_t *device, double *lat, int *feas, const char **from, hsdag_err *e)
{
    int32_t *tmp = hsdag_malloc(sizeof(int32_t) * (size_t)(p->n ? p->n : 1));
    if (!tmp)
        return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)",
                             sizeof(int32_t) * (size_t)p->n);
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
            const hsdag_place_method *m = hsdag_place_method_find(name);
            if (!m) continue;
            hsdag_place_opts mo = *o;
            mo.init = NULL;
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
    int32_t *warm = NULL;
    const char *from = NULL;
    double warm_lat = NAN, polished = NAN;
    int warm_feas = 0;
    int64_t polish_evals = 0, warm_evals = 0;
    hsdag_nn_set_threads(1);
    /* the paper's learner knows nothing of colour classes or ops a device may not run (faithful); the
     * project's learner builds them into its policy */
    int rc = kind == RUN_PAPER ? hsdag_learn_create(&L, p->g, p->k, &cfg, e)
                               : hsdag_learn_create_problem(&L, p, &cfg, e);
    if (rc < 0) return rc;
    if (kind == RUN_DEFAULT) {
        warm = hsdag_malloc(sizeof(int32_t) * (size_t)p->n);
        if (!warm) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)",
                               sizeof(int32_t) * (size_t)p->n);
            goto done;
        }
        if ((rc = hsdag_learn_warm_start(p, &orc, o, warm, &warm_lat, &warm_feas, &from, e)) < 0) goto done;
        warm_evals = orc.evals;
        int32_t steps;
        double prob;
        if ((rc = hsdag_learn_imitate(L, warm, &steps, &prob, e)) < 0) goto done;
        if (warm_feas) hsdag_learn_offer(L, warm, warm_lat);
    }
    if ((rc = hsdag_learn_train(L, hsdag_place_oracle_eval, &orc, NULL, NULL, e)) < 0) goto done;
    const int32_t *best;
    double lat;
    int32_t ep;
    hsdag_learn_best(L, &best, &lat, &ep);
    double learned = lat;
    if (kind == RUN_DEFAULT && best &&
        (rc = hsdag_learn_polish_noisy(L, p, o->seed, o->max_evals > 0 ? o->max_evals : 20000, o->noise,
                                       &polished, &polish_evals, e)) < 0)
        goto done;
    hsdag_learn_best(L, &best, &lat, &ep);
    r->evals = orc.evals + polish_evals;
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
    int32_t eps = cfg.episodes;
    long long learned_n = (long long)hsdag_learn_evals(L);
    if (kind == RUN_DEFAULT) {
        char wl[32] = "none feasible";
        if (warm_feas) snprintf(wl, sizeof wl, "%.4g ms", warm_lat * 1e3);
        snprintf(
            r->note, sizeof r->note,
            "warm start %s (%s, %lld measured); learned %lld placements -> %.4g ms%s; local-search polish "
            "(%lld evals) -> %.4g ms%s",
            from ? from : "-", wl, (long long)warm_evals, learned_n, learned * 1e3,
            ep >= 0 ? "" : " (no gain over the warm start)", (long long)polish_evals, polished * 1e3,
            o->noise > 0 ? "; measured with noise" : "");
    } else {
        snprintf(r->note, sizeof r->note,
                 "%s: %d episodes x %d steps x %d samples, %d groups, best at episode %d%s",
                 kind == RUN_PAPER ? "paper REINFORCE" : "learned only", (int)eps, (int)cfg.steps,
                 (int)cfg.samples, (int)hsdag_learn_groups(L), (int)ep,
                 o->noise > 0 ? "; measured with noise" : "");
    }
done:
    hsdag_free(warm);
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
         "HSDAG, the project's learner (src/learn): warm start from the best cheap heuristic, --budget "
         "learned "
         "placements (default 500), local-search polish; the note says what each part gave",
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
