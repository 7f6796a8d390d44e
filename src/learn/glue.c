/* glue.c - the HSDAG learner wired to the simulator (reward), local search (polish) and the placer registry.
 * Not here: the learner itself (train.c) or external measurement commands (tools/cmd_train.c).
 * Entry points: hsdag_learn_sim_eval, hsdag_learn_polish, hsdag_learn_place, hsdag_learn_register_methods. */
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

int hsdag_learn_polish(hsdag_learn *L, hsdag_place_problem *p, uint64_t seed, int64_t max_evals,
                       double *polished_s, hsdag_err *e)
{
    const int32_t *best;
    double lat;
    *polished_s = NAN;
    hsdag_learn_best(L, &best, &lat, NULL);
    if (!best) return 0;
    int32_t *dev = hsdag_malloc(sizeof(int32_t) * (size_t)(p->n ? p->n : 1));
    if (!dev) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
    hsdag_place_opts o = hsdag_place_opts_default();
    o.seed = seed;
    o.init = best;
    o.max_evals = max_evals;
    o.time_limit_s = 1e9; /* the evaluation budget ends the search, so the polish is deterministic */
    hsdag_place_result r;
    int rc = hsdag_place_run(p, "local-search", &o, dev, &r, e);
    if (rc == 0) {
        *polished_s = r.latency_s;
        if (r.feasible) hsdag_learn_offer(L, dev, r.latency_s);
    }
    hsdag_free(dev);
    return rc;
}

int hsdag_learn_place(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                      hsdag_place_report *r, hsdag_err *e)
{
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.seed = o->seed;
    hsdag_learn *L = NULL;
    hsdag_nn_set_threads(1);
    int rc = hsdag_learn_create(&L, p->g, p->k, &cfg, e);
    if (rc < 0) return rc;
    rc = hsdag_learn_train(L, hsdag_learn_sim_eval, p->sim, NULL, NULL, e);
    if (rc >= 0) {
        const int32_t *best;
        double lat;
        int32_t ep;
        hsdag_learn_best(L, &best, &lat, &ep);
        r->evals = hsdag_learn_evals(L);
        if (!best) {
            /* Like the other placers, always return a placement: with nothing feasible sampled (tight
             * memory),
             * fall back to HEFT, which skips full devices, and say so. */
            hsdag_place_opts ho = *o;
            hsdag_place_result hr;
            rc = hsdag_place_run(p, "heft", &ho, device, &hr, e);
            if (rc == 0)
                snprintf(r->note, sizeof r->note, "no feasible placement in %lld sampled: returned HEFT's",
                         (long long)r->evals);
        } else {
            memcpy(device, best, sizeof(int32_t) * (size_t)p->n);
            snprintf(r->note, sizeof r->note, "%d episodes x %d steps, %d groups, best at episode %d",
                     (int)cfg.episodes, (int)cfg.steps, (int)hsdag_learn_groups(L), (int)ep);
            rc = 0;
        }
    }
    hsdag_learn_free(L);
    return rc;
}

int hsdag_learn_register_methods(hsdag_err *e)
{
    static const hsdag_place_method hsdag_method = {"hsdag",
                                                    hsdag_learn_place,
                                                    "HSDAG (NeurIPS 2024): GCN + graph-parsing pooling + "
                                                    "REINFORCE, 25 x 20 simulated placements (src/learn)",
                                                    HSDAG_PLACE_PARTIAL,
                                                    HSDAG_PLACE_PARTIAL,
                                                    1};
    return hsdag_place_register(&hsdag_method, e);
}
