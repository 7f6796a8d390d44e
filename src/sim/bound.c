/* bound.c - lower bounds on the latency of any placement, per semantics (the proofs are in
 * docs/simulator.md).
 * Not here: exact solvers (the placers provide them through hsdag_bound_exact_fn) or memory-aware bounds.
 * Entry points: hsdag_bound_compute.
 */
#include "hsdag/sim.h"

#include <math.h>

/* Cheapest allowed cost of v (any device if none is allowed: a forced placement still pays at least that). */
static double min_cost(const hsdag_costs *c, int32_t v)
{
    double best = INFINITY, any = INFINITY;
    for (int32_t d = 0; d < c->n_devices; d++) {
        double t = c->node_s[(size_t)v * c->n_devices + d];
        if (t < any) any = t;
        if (c->allowed[(size_t)v * c->n_devices + d] && t < best) best = t;
    }
    return isfinite(best) ? best : any;
}

int hsdag_bound_compute(hsdag_bound *out, const hsdag_costs *c, hsdag_semantics sem,
                        hsdag_bound_exact_fn exact, void *ctx, hsdag_err *e)
{
    const hsdag_graph *g = c->g;
    if (sem == HSDAG_SEM_AUTO) sem = c->devs->semantics;
    if (sem < 0 || sem >= HSDAG_SEM_COUNT_) return hsdag_err_set(e, HSDAG_EINVAL, "bound: unknown semantics");
    double *cp = hsdag_malloc(((size_t)g->n_nodes + 1) * sizeof *cp);
    if (!cp) return hsdag_err_set(e, HSDAG_ENOMEM, "bound: out of memory");
    double work = 0, crit = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        double m = min_cost(c, v), p = 0;
        work += m;
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
            if (cp[g->in_src[k]] > p) p = cp[g->in_src[k]];
        cp[v] = p + m;
        if (cp[v] > crit) crit = cp[v];
    }
    hsdag_free(cp);
    out->semantics = sem;
    out->critical_path_s = crit;
    out->work_s = work;
    out->work_per_device_s = sem == HSDAG_SEM_CONCURRENT ? work / c->n_devices : NAN;
    out->exact_s = NAN;
    switch (sem) {
    case HSDAG_SEM_SEQUENTIAL:
        out->lower_s = work;
        out->rule = "sum-min-cost";
        break;
    case HSDAG_SEM_CONCURRENT:
        out->lower_s = crit >= out->work_per_device_s ? crit : out->work_per_device_s;
        out->rule = crit >= out->work_per_device_s ? "critical-path" : "work/devices";
        break;
    default:
        out->lower_s = crit;
        out->rule = "critical-path";
        break;
    }
    if (exact) {
        double opt = NAN;
        int rc = exact(ctx, &opt, c, sem, e);
        if (rc < 0 && rc != HSDAG_EUNSUPPORTED) return rc;
        if (rc == 0 && isfinite(opt)) {
            out->exact_s = opt;
            if (opt >= out->lower_s) {
                out->lower_s = opt;
                out->rule = "exact";
            }
        }
    }
    return 0;
}
