/* bound.c - lower bounds on the latency of any placement, per semantics (the proofs are in
 * docs/simulator.md).
 * Not here: exact solvers (the placers provide them through hsdag_bound_exact_fn) or memory-aware bounds.
 * Entry points: hsdag_bound_compute, hsdag_bound_objective, hsdag_bound_write_json,
 *   hsdag_costs_write_json_head.
 */
#include "hsdag/sim.h"

#include <math.h>
#include <stdlib.h>

static int key_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

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

/* Throughput: the costliest colour class (a class without others is its own node) at its cheapest device
 * that every member may use, and the work per device that may hold ops. */
static int bound_throughput(const hsdag_costs *c, hsdag_bound *out, hsdag_err *e)
{
    const hsdag_graph *g = c->g;
    int32_t n = g->n_nodes, D = c->n_devices, cpus = 0, accels = 0;
    for (int32_t d = 0; d < D; d++) {
        if (c->devs->dev[d].kind == HSDAG_DEV_CPU)
            cpus++;
        else
            accels++;
    }
    if (c->devs->max_accels_used >= 0 && accels > c->devs->max_accels_used) accels = c->devs->max_accels_used;
    /* colour classes: sort (colour, node) and sum each run per device */
    int64_t *key = hsdag_malloc(((size_t)n + 1) * sizeof *key);
    double *sum = hsdag_malloc(((size_t)D + 1) * sizeof *sum);
    if (!key || !sum) {
        hsdag_free(key);
        hsdag_free(sum);
        return hsdag_err_set(e, HSDAG_ENOMEM, "bound: out of memory");
    }
    int32_t nk = 0;
    double best = 0;
    for (int32_t v = 0; v < n; v++) {
        if (g->color[v] >= 0) {
            key[nk++] = ((int64_t)g->color[v] << 32) | v;
        } else {
            double m = min_cost(c, v);
            if (m > best) best = m;
        }
    }
    qsort(key, (size_t)nk, sizeof *key, key_cmp);
    for (int32_t i = 0; i < nk;) {
        int32_t j = i;
        uint64_t ok = ~(uint64_t)0;
        for (int32_t d = 0; d < D; d++) sum[d] = 0;
        for (; j < nk && (key[j] >> 32) == (key[i] >> 32); j++) {
            int32_t v = (int32_t)(key[j] & 0xffffffff);
            uint64_t m = 0;
            for (int32_t d = 0; d < D; d++) {
                sum[d] += c->node_s[(size_t)v * D + d];
                if (c->allowed[(size_t)v * D + d]) m |= (uint64_t)1 << d;
            }
            ok &= m;
        }
        double m = INFINITY, any = INFINITY;
        for (int32_t d = 0; d < D; d++) {
            if (sum[d] < any) any = sum[d];
            if (((ok >> d) & 1u) && sum[d] < m) m = sum[d];
        }
        if (!isfinite(m)) m = any;
        if (m > best) best = m;
        i = j;
    }
    hsdag_free(key);
    hsdag_free(sum);
    int32_t nd = cpus + accels > 0 ? cpus + accels : 1;
    out->max_class_s = best;
    out->work_per_device_s = out->work_s / nd;
    out->lower_s = best >= out->work_per_device_s ? best : out->work_per_device_s;
    out->rule = best >= out->work_per_device_s ? "max-class" : "work/devices";
    return 0;
}

int hsdag_bound_compute(hsdag_bound *out, const hsdag_costs *c, hsdag_semantics sem,
                        hsdag_bound_exact_fn exact, void *ctx, hsdag_err *e)
{
    return hsdag_bound_objective(out, c, sem, HSDAG_OBJ_LATENCY, exact, ctx, e);
}

int hsdag_bound_objective(hsdag_bound *out, const hsdag_costs *c, hsdag_semantics sem, hsdag_objective obj,
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
    out->objective = obj == HSDAG_OBJ_THROUGHPUT ? HSDAG_OBJ_THROUGHPUT : HSDAG_OBJ_LATENCY;
    out->max_class_s = NAN;
    out->critical_path_s = crit;
    out->work_s = work;
    out->work_per_device_s = sem == HSDAG_SEM_CONCURRENT ? work / c->n_devices : NAN;
    out->exact_s = NAN;
    if (out->objective == HSDAG_OBJ_THROUGHPUT) return bound_throughput(c, out, e);
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

void hsdag_costs_write_json_head(hsdag_jw *w, const hsdag_costs *c, hsdag_semantics sem, hsdag_objective obj,
                                 const char *model)
{
    if (sem == HSDAG_SEM_AUTO) sem = c->devs->semantics;
    hsdag_jw_str(w, "model", model);
    hsdag_jw_int(w, "nodes", c->g->n_nodes);
    hsdag_jw_int(w, "edges", c->g->n_edges);
    hsdag_jw_str(w, "devices", c->devs->name ? c->devs->name : "");
    hsdag_jw_str(w, "semantics", hsdag_semantics_name(sem));
    hsdag_jw_str(w, "objective", hsdag_objective_name(obj));
    hsdag_jw_str(w, "op_costs", hsdag_costsrc_name(c->source));
    hsdag_jw_int(w, "profiled", c->n_profiled);
}

int hsdag_bound_write_json(hsdag_buf *out, const hsdag_costs *c, const hsdag_bound *b, const char *model,
                           double contiguous_s, const char *contiguous_method, const char *contiguous_note)
{
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-bound/1");
    hsdag_costs_write_json_head(&w, c, b->semantics, b->objective, model);
    hsdag_jw_num(&w, "lower_bound_ms", b->lower_s * 1e3);
    hsdag_jw_str(&w, "lower_bound_rule", b->rule);
    hsdag_jw_num(&w, "critical_path_ms", b->critical_path_s * 1e3);
    hsdag_jw_num(&w, "work_ms", b->work_s * 1e3);
    hsdag_jw_num(&w, "work_per_device_ms", b->work_per_device_s * 1e3);
    hsdag_jw_num(&w, "exact_ms", b->exact_s * 1e3);
    hsdag_jw_num(&w, "max_class_ms", b->max_class_s * 1e3);
    hsdag_jw_num(&w, "contiguous_bound_ms", contiguous_s * 1e3);
    hsdag_jw_str(&w, "contiguous_method", contiguous_method);
    hsdag_jw_str(&w, "contiguous_note", contiguous_method ? contiguous_note : NULL);
    return hsdag_jw_end(&w);
}
