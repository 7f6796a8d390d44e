/* lnodes.c - decision units of the learned baselines (co-location groups merged into contiguous runs) and
 * their measurement bookkeeping (budget, best placement and when it was found).
 * Not here: the networks or the update rules (placeto.c, rnnplace.c).
 * Entry points: lnodes_create/free/expand, ltrack_init/free/eval (lnodes.h). */
#include "lnodes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void lnodes_free(lnodes *u)
{
    if (!u) return;
    hsdag_free(u->unit_of);
    hsdag_free(u->off);
    hsdag_free(u->ops);
    hsdag_free(u->out_off);
    hsdag_free(u->out_dst);
    hsdag_free(u->in_off);
    hsdag_free(u->in_src);
    hsdag_free(u);
}

void lnodes_expand(const lnodes *u, int32_t *op_dev, const int32_t *unit_dev)
{
    for (int32_t v = 0; v < u->n_ops; v++) op_dev[v] = unit_dev[u->unit_of[v]];
}

static int cmp_edge(const void *x, const void *y)
{
    const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* run[k] = the unit of group k: cuts at the quantiles of w = 0.5 cost / total cost + 0.5 / groups */
static int32_t make_runs(int32_t *run, const hsdag_coarse *c, const hsdag_place_problem *p, int32_t max_units)
{
    int32_t G = c->n_groups;
    if (max_units <= 0 || G <= max_units) {
        for (int32_t k = 0; k < G; k++) run[k] = k;
        return G;
    }
    double tot = 0;
    for (int32_t v = 0; v < c->n_nodes; v++) tot += p->mean_cost[v];
    double acc = 0;
    int32_t u = 0;
    for (int32_t k = 0; k < G; k++) {
        double w = 0;
        for (int32_t j = c->off[k]; j < c->off[k + 1]; j++) w += p->mean_cost[c->ops[j]];
        w = (tot > 0 ? 0.5 * w / tot : 0.0) + (tot > 0 ? 0.5 : 1.0) / G;
        /* a group starts a new unit once the weight before it passed the current unit's quantile */
        if (k > 0 && acc >= (double)(u + 1) / max_units - 1e-12 && u + 1 < max_units) u++;
        run[k] = u;
        acc += w;
    }
    return u + 1;
}

int lnodes_create(lnodes **out, const hsdag_place_problem *p, int32_t max_units, int no_coarsen, hsdag_err *e)
{
    *out = NULL;
    hsdag_coarse *c = NULL;
    int64_t *ek = NULL;
    int32_t *run = NULL;
    int rc = hsdag_coarsen_create(&c, p->g, no_coarsen, e);
    if (rc < 0) return rc;
    lnodes *u = hsdag_calloc(1, sizeof *u);
    int32_t n_ops = p->n, G = c->n_groups;
    run = hsdag_malloc(sizeof(int32_t) * (size_t)(G ? G : 1));
    ek = hsdag_malloc(sizeof(int64_t) * (size_t)(c->n_edges ? c->n_edges : 1));
    if (!u || !run || !ek) goto oom;
    int32_t n = make_runs(run, c, p, max_units);
    u->n = n;
    u->n_ops = n_ops;
    u->n_groups = G;
    u->unit_of = hsdag_malloc(sizeof(int32_t) * (size_t)(n_ops ? n_ops : 1));
    u->off = hsdag_calloc((size_t)n + 1, sizeof(int32_t));
    u->ops = hsdag_malloc(sizeof(int32_t) * (size_t)(n_ops ? n_ops : 1));
    u->out_off = hsdag_calloc((size_t)n + 1, sizeof(int32_t));
    u->in_off = hsdag_calloc((size_t)n + 1, sizeof(int32_t));
    if (!u->unit_of || !u->off || !u->ops || !u->out_off || !u->in_off) goto oom;
    for (int32_t v = 0; v < n_ops; v++) {
        u->unit_of[v] = run[c->group_of[v]];
        u->off[u->unit_of[v] + 1]++;
    }
    for (int32_t k = 0; k < n; k++) u->off[k + 1] += u->off[k];
    {
        int32_t *fill = hsdag_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
        if (!fill) goto oom;
        memcpy(fill, u->off, sizeof(int32_t) * (size_t)n);
        for (int32_t v = 0; v < n_ops; v++) u->ops[fill[u->unit_of[v]]++] = v;
        hsdag_free(fill);
    }
    /* unit edges: group edges between different runs, as sorted unique (a, b) keys */
    int32_t m = 0;
    for (int32_t k = 0; k < c->n_edges; k++) {
        int32_t a = run[c->edge_src[k]], b = run[c->out_dst[k]];
        if (a != b) ek[m++] = (int64_t)a * n + b;
    }
    qsort(ek, (size_t)m, sizeof *ek, cmp_edge);
    int32_t mu = 0;
    for (int32_t k = 0; k < m; k++)
        if (mu == 0 || ek[mu - 1] != ek[k]) ek[mu++] = ek[k];
    u->m = mu;
    u->out_dst = hsdag_malloc(sizeof(int32_t) * (size_t)(mu ? mu : 1));
    u->in_src = hsdag_malloc(sizeof(int32_t) * (size_t)(mu ? mu : 1));
    if (!u->out_dst || !u->in_src) goto oom;
    for (int32_t k = 0; k < mu; k++) {
        int32_t a = (int32_t)(ek[k] / n), b = (int32_t)(ek[k] % n);
        HSDAG_ASSERT(a < b);
        u->out_off[a + 1]++;
        u->in_off[b + 1]++;
        u->out_dst[k] = b;
    }
    for (int32_t k = 0; k < n; k++) {
        u->out_off[k + 1] += u->out_off[k];
        u->in_off[k + 1] += u->in_off[k];
    }
    {
        int32_t *fill = hsdag_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
        if (!fill) goto oom;
        memcpy(fill, u->in_off, sizeof(int32_t) * (size_t)n);
        for (int32_t k = 0; k < mu; k++) u->in_src[fill[ek[k] % n]++] = (int32_t)(ek[k] / n);
        hsdag_free(fill);
    }
    hsdag_free(ek);
    hsdag_free(run);
    hsdag_coarsen_free(c);
    *out = u;
    return 0;
oom:
    hsdag_free(ek);
    hsdag_free(run);
    hsdag_coarsen_free(c);
    lnodes_free(u);
    return hsdag_err_set(e, HSDAG_ENOMEM, "learned placer: out of memory grouping %d ops", (int)p->n);
}

/* ---- measurement bookkeeping ---- */

int ltrack_init(ltrack *t, int32_t n_ops, hsdag_learn_eval_fn eval, void *ctx, double penalty, hsdag_err *e)
{
    memset(t, 0, sizeof *t);
    t->best = hsdag_malloc(sizeof(int32_t) * (size_t)(n_ops ? n_ops : 1));
    if (!t->best) return hsdag_err_set(e, HSDAG_ENOMEM, "learned placer: out of memory");
    t->eval = eval;
    t->ctx = ctx;
    t->n_ops = n_ops;
    t->penalty = penalty >= 1 ? penalty : 1;
    t->best_lat = INFINITY;
    t->t0 = hsdag_now();
    return 0;
}

void ltrack_free(ltrack *t)
{
    hsdag_free(t->best);
    t->best = NULL;
}

int ltrack_eval(ltrack *t, const int32_t *op_dev, double *lat, int *feas, double *cost, hsdag_err *e)
{
    int rc = t->eval(t->ctx, op_dev, lat, feas, e);
    if (rc < 0) return rc;
    t->evals++;
    if (!(*lat > 0) || !isfinite(*lat))
        return hsdag_err_set(e, HSDAG_EEXTERNAL, "learned placer: the latency oracle returned %g s", *lat);
    *cost = *feas ? *lat : *lat * t->penalty;
    if (*feas && *lat < t->best_lat) {
        t->best_lat = *lat;
        t->best_at = t->evals;
        t->best_s = hsdag_now() - t->t0;
        memcpy(t->best, op_dev, sizeof(int32_t) * (size_t)t->n_ops);
    }
    return 0;
}
