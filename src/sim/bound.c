/* bound.c - lower bounds on the latency of any placement, per semantics (the proofs are in
 * docs/simulator.md).
 * Not here: exact solvers (the placers provide them through hsdag_bound_exact_fn) or memory-aware bounds.
 * Entry points: hsdag_bound_compute, hsdag_bound_write_json, hsdag_costs_write_json_head.
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

/* ---- result JSON ---- */

void hsdag_costs_write_json_head(hsdag_jw *w, const hsdag_costs *c, hsdag_semantics sem, const char *model)
{
    if (sem == HSDAG_SEM_AUTO) sem = c->devs->semantics;
    hsdag_jw_str(w, "model", model);
    hsdag_jw_int(w, "nodes", c->g->n_nodes);
    hsdag_jw_int(w, "edges", c->g->n_edges);
    hsdag_jw_str(w, "devices", c->devs->name ? c->devs->name : "");
    hsdag_jw_str(w, "semantics", hsdag_semantics_name(sem));
    hsdag_jw_str(w, "op_costs", hsdag_costsrc_name(c->source));
    hsdag_jw_int(w, "profiled", c->n_profiled);
}

int hsdag_bound_write_json(hsdag_buf *out, const hsdag_costs *c, const hsdag_bound *b, const char *model)
{
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-bound/1");
    hsdag_costs_write_json_head(&w, c, b->semantics, model);
    hsdag_jw_num(&w, "lower_bound_ms", b->lower_s * 1e3);
    hsdag_jw_str(&w, "lower_bound_rule", b->rule);
    hsdag_jw_num(&w, "critical_path_ms", b->critical_path_s * 1e3);
    hsdag_jw_num(&w, "work_ms", b->work_s * 1e3);
    hsdag_jw_num(&w, "work_per_device_ms", b->work_per_device_s * 1e3);
    hsdag_jw_num(&w, "exact_ms", b->exact_s * 1e3);
    return hsdag_jw_end(&w);
}
