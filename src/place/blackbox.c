/* blackbox.c - the black-box oracle (simulated latency, optional log-normal noise, a measurement count) and
 *              the two black-box baselines that the learned placers are measured against at equal budget:
 *              random search and first-improvement local search from a random placement.
 * Not here: the simulator-aware local search with structural moves and heuristic starts (local.c); these
 *           baselines see nothing but the measurements, like a learner on real hardware.
 * Entry points: hsdag_place_oracle_init/eval, place_bb_random, place_bb_local. */
#include "place_int.h"

#define BB_NOISE_STREAM 0x6e6f697365ull /* "noise": the noise RNG is seeded apart from the search's */

void hsdag_place_oracle_init(hsdag_place_oracle *o, hsdag_place_problem *p, double noise, uint64_t seed)
{
    memset(o, 0, sizeof *o);
    o->p = p;
    o->noise = noise > 0 ? noise : 0;
    hsdag_rng_seed(&o->rng, seed ^ BB_NOISE_STREAM);
}

int hsdag_place_oracle_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible, hsdag_err *e)
{
    hsdag_place_oracle *o = ctx;
    hsdag_sim_result r;
    int rc = hsdag_sim_run(o->p->sim, device, &r);
    if (rc < 0) return hsdag_err_set(e, rc, "oracle: the simulator rejected a placement");
    o->evals++;
    double f = o->noise > 0 ? exp(o->noise * hsdag_rng_normal(&o->rng)) : 1.0;
    *latency_s = r.makespan_s * f;
    *feasible = r.feasible;
    return 0;
}

/* a strictly better measurement than b: feasible beats infeasible, then lower latency among feasible ones.
 * Two infeasible measurements are not ordered (a real machine reports a failure, not how far it was). */
static int bb_better(int fa, double la, int fb, double lb)
{
    if (fa != fb) return fa;
    return fa && la < lb;
}

static int64_t bb_budget(const hsdag_place_opts *o)
{
    return o->budget > 0 ? o->budget : 500;
}

/* every group on a uniformly random allowed device (no memory or cost knowledge) */
static void bb_random_placement(const hsdag_place_problem *p, int32_t *device, hsdag_rng *rng)
{
    int32_t cand[HSDAG_MAX_DEVICES];
    for (int32_t gi = 0; gi < p->n_groups; gi++) {
        int32_t nc = 0;
        for (int32_t d = 0; d < p->k; d++)
            if (place_group_ok(p, gi, d)) cand[nc++] = d;
        place_group_set(p, device, gi,
                        nc ? cand[hsdag_rng_below(rng, (uint32_t)nc)] : place_group_fallback(p, gi));
    }
}

typedef struct bb_best {
    int32_t *dev;
    int feas, have;
    double lat;
} bb_best;

static void bb_offer(const hsdag_place_problem *p, bb_best *b, const int32_t *dev, int feas, double lat)
{
    if (b->have && !bb_better(feas, lat, b->feas, b->lat)) return;
    b->have = 1;
    b->feas = feas;
    b->lat = lat;
    memcpy(b->dev, dev, (size_t)p->n * sizeof *dev);
}

int place_bb_random(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                    hsdag_err *e)
{
    int32_t *cur = hsdag_alloc_n((size_t)p->n, sizeof *cur, "bb-random", e);
    if (!cur) return HSDAG_ENOMEM;
    hsdag_rng rng;
    hsdag_rng_seed(&rng, o->seed);
    hsdag_place_oracle orc;
    hsdag_place_oracle_init(&orc, p, o->noise, o->seed);
    bb_best b = {.dev = device};
    int rc = 0;
    for (int64_t i = 0, n = bb_budget(o); i < n && rc == 0; i++) {
        bb_random_placement(p, cur, &rng);
        double lat;
        int feas;
        if ((rc = hsdag_place_oracle_eval(&orc, cur, &lat, &feas, e)) == 0) bb_offer(p, &b, cur, feas, lat);
    }
    hsdag_free(cur);
    r->evals = orc.evals;
    snprintf(r->note, sizeof r->note, "%lld measurements%s%s", (long long)orc.evals,
             o->noise > 0 ? ", noisy" : "", b.feas ? "" : ", none feasible");
    return rc;
}

/* First-improvement descent: groups in a fresh random order each pass, each to the other allowed devices in
 * random order; a move is kept when its measurement beats the current one. A pass without improvement
 * restarts from a new random placement. Every measurement counts against the budget. */
int place_bb_local(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                   hsdag_err *e)
{
    size_t n1 = (size_t)(p->n ? p->n : 1), g1 = (size_t)(p->n_groups ? p->n_groups : 1);
    int32_t *cur = hsdag_malloc(n1 * sizeof *cur), *perm = hsdag_malloc(g1 * sizeof *perm);
    if (!cur || !perm) {
        hsdag_free(cur);
        hsdag_free(perm);
        return hsdag_err_set(e, HSDAG_ENOMEM, "bb-local: out of memory");
    }
    hsdag_rng rng;
    hsdag_rng_seed(&rng, o->seed);
    hsdag_place_oracle orc;
    hsdag_place_oracle_init(&orc, p, o->noise, o->seed);
    bb_best b = {.dev = device};
    int64_t budget = bb_budget(o);
    int rc = 0, restarts = 0;
    while (orc.evals < budget && rc == 0) {
        bb_random_placement(p, cur, &rng);
        double lat;
        int feas;
        if ((rc = hsdag_place_oracle_eval(&orc, cur, &lat, &feas, e)) < 0) break;
        bb_offer(p, &b, cur, feas, lat);
        for (int improved = 1; improved && orc.evals < budget && rc == 0;) {
            improved = 0;
            for (int32_t i = 0; i < p->n_groups; i++) perm[i] = i;
            for (int32_t i = p->n_groups - 1; i > 0; i--) {
                int32_t j = (int32_t)hsdag_rng_below(&rng, (uint32_t)i + 1), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            for (int32_t i = 0; i < p->n_groups && orc.evals < budget && rc == 0; i++) {
                int32_t gi = perm[i], d0 = cur[p->grp_node[p->grp_off[gi]]];
                int32_t off = (int32_t)hsdag_rng_below(&rng, (uint32_t)p->k);
                for (int32_t t = 0; t < p->k && orc.evals < budget; t++) {
                    int32_t d = (off + t) % p->k;
                    if (d == d0 || !place_group_ok(p, gi, d)) continue;
                    place_group_set(p, cur, gi, d);
                    double l2;
                    int f2;
                    if ((rc = hsdag_place_oracle_eval(&orc, cur, &l2, &f2, e)) < 0) break;
                    if (bb_better(f2, l2, feas, lat)) {
                        feas = f2;
                        lat = l2;
                        improved = 1;
                        bb_offer(p, &b, cur, feas, lat);
                        break;
                    }
                    place_group_set(p, cur, gi, d0);
                }
            }
        }
        restarts++;
    }
    hsdag_free(cur);
    hsdag_free(perm);
    r->evals = orc.evals;
    snprintf(r->note, sizeof r->note, "%lld measurements, %d random starts%s%s", (long long)orc.evals,
             restarts, o->noise > 0 ? ", noisy" : "", b.feas ? "" : ", none feasible");
    return rc;
}
