/* costs.c - the [node x device] cost table (roofline, file-measured costs, profile overrides), the per-node
 * transfer and memory figures.
 * Not here: scheduling (sim.c), bounds (bound.c), the profile CSV reader (src/io/profile.c); the table is
 * computed once and read many times.
 * Entry points: hsdag_costs_create/free, hsdag_costs_config_default, hsdag_costsrc_name/parse,
 *   hsdag_costs_node_work, hsdag_roofline_s, hsdag_roofline_elems_s, hsdag_costs_means, hsdag_costs_upward_rank.
 */
#include "hsdag/sim.h"

#include <math.h>
#include <string.h>

/* ---- roofline ---- */

double hsdag_roofline_elems_s(const hsdag_device *dev, hsdag_opclass cls, double flops, double bytes,
                              double elems)
{
    int ok = cls >= 0 && cls < HSDAG_OP_CLASS_COUNT_;
    double eff = ok ? dev->eff[cls] : 1.0;
    double tc = flops > 0 ? flops / (dev->peak_flops * eff) : 0.0;
    if (ok && elems > 0 && dev->elem_s[cls] > 0) tc += elems * dev->elem_s[cls];
    double tm = bytes > 0 ? bytes / dev->mem_bw : 0.0;
    if (bytes > 0 && dev->cache_bytes > 0 && dev->cache_bw > 0)
        tm = bytes <= dev->cache_bytes
                 ? bytes / dev->cache_bw
                 : dev->cache_bytes / dev->cache_bw + (bytes - dev->cache_bytes) / dev->mem_bw;
    return (tc > tm ? tc : tm) + dev->launch_s;
}

double hsdag_roofline_s(const hsdag_device *dev, hsdag_opclass cls, double flops, double bytes)
{
    return hsdag_roofline_elems_s(dev, cls, flops, bytes, 0);
}

hsdag_costs_config hsdag_costs_config_default(void)
{
    return (hsdag_costs_config){.source = HSDAG_COSTSRC_AUTO, .profile = NULL};
}

static const char *const costsrc_names[] = {"auto", "roofline", "file"};

const char *hsdag_costsrc_name(hsdag_costsrc c)
{
    return c >= 0 && c <= HSDAG_COSTSRC_FILE ? costsrc_names[c] : NULL;
}

int hsdag_costsrc_parse(hsdag_costsrc *out, const char *s, hsdag_err *e)
{
    for (int i = 0; s && i <= HSDAG_COSTSRC_FILE; i++)
        if (strcmp(s, costsrc_names[i]) == 0) {
            *out = (hsdag_costsrc)i;
            return 0;
        }
    return hsdag_err_set(e, HSDAG_EINVAL, "op costs '%.40s': not one of the accepted names", s ? s : "");
}

void hsdag_costs_free(hsdag_costs *c)
{
    if (c) hsdag_arena_free(c->arena);
}

static int is_bookkeeping(const hsdag_graph *g, int32_t v)
{
    return (g->flags[v] & HSDAG_NF_BOOKKEEPING) || g->opclass[v] == HSDAG_OP_BOOKKEEPING;
}

int hsdag_costs_node_work(const hsdag_graph *g, int32_t v, double *flops, double *bytes, double *elems)
{
    double el = 0;
    for (int32_t k = g->out_shape_off[v]; k < g->out_shape_off[v + 1]; k++) {
        double n = hsdag_graph_shape_elems(g, k);
        if (n > 0) el += n;
    }
    *elems = el;
    double in_bytes = 0;
    for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) in_bytes += g->edge_bytes[g->in_eid[k]];
    *bytes = in_bytes + (g->out_bytes[v] > 0 ? g->out_bytes[v] : 0) +
             (g->param_bytes[v] > 0 ? g->param_bytes[v] : 0);
    *flops = g->flops[v] > 0 ? g->flops[v] : 0;
    return is_bookkeeping(g, v);
}

static int col_of(const hsdag_device *d)
{
    return d->kind == HSDAG_DEV_CPU ? HSDAG_COST_CPU : HSDAG_COST_ACCEL;
}

static double file_ms(const hsdag_graph *g, int32_t v, int col)
{
    double x = g->cost_ms[(size_t)v * HSDAG_COST_KINDS_ + col];
    return (isfinite(x) && x >= 0) ? x : NAN;
}

/* 1 if some non-bookkeeping node has a measured cost for some device kind of the set. */
static int any_measured(const hsdag_graph *g, const hsdag_devices *d)
{
    for (int32_t v = 0; v < g->n_nodes; v++)
        for (int32_t i = 0; i < d->n && !is_bookkeeping(g, v); i++)
            if (!isnan(file_ms(g, v, col_of(&d->dev[i])))) return 1;
    return 0;
}

/* AUTO resolves to FILE when every non-bookkeeping node has the column every device kind in the set needs. */
static hsdag_costsrc resolve_source(const hsdag_graph *g, const hsdag_devices *d)
{
    int need[2] = {0, 0};
    for (int32_t i = 0; i < d->n; i++) need[col_of(&d->dev[i])] = 1;
    int any = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        if (is_bookkeeping(g, v)) continue;
        for (int col = 0; col < 2; col++)
            if (need[col]) {
                if (isnan(file_ms(g, v, col))) return HSDAG_COSTSRC_ROOFLINE;
                any = 1;
            }
    }
    return any ? HSDAG_COSTSRC_FILE : HSDAG_COSTSRC_ROOFLINE;
}

static int apply_profile(hsdag_costs *c, const hsdag_profile *p, hsdag_err *e)
{
    const hsdag_graph *g = c->g;
    hsdag_strmap *m = hsdag_strmap_create();
    if (!m) return hsdag_err_set(e, HSDAG_ENOMEM, "profile: out of memory");
    int rc = 0;
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (hsdag_strmap_put(m, g->name[v], strlen(g->name[v]), v) < 0) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "profile: out of memory");
            goto done;
        }
    int32_t n_ent = 0;
    const hsdag_profile_entry *ent = hsdag_profile_entries(p, &n_ent);
    const char *what = hsdag_profile_what(p);
    for (int32_t i = 0; i < n_ent; i++) {
        const hsdag_profile_entry *en = &ent[i];
        int32_t v = hsdag_strmap_get(m, en->node, strlen(en->node));
        if (v < 0) {
            rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: line %d: unknown node '%.80s'", what, (int)en->line,
                               en->node);
            goto done;
        }
        int32_t d = hsdag_devices_find(c->devs, en->device);
        if (d < 0) {
            rc = hsdag_err_set(e, HSDAG_EINVAL, "%s: line %d: unknown device '%.80s'", what, (int)en->line,
                               en->device);
            goto done;
        }
        c->node_s[(size_t)v * c->n_devices + d] = en->ms * 1e-3;
        c->n_profiled++;
    }
done:
    hsdag_strmap_free(m);
    return rc;
}

#define ALLOC_N(ptr, count)                                                  \
    do {                                                                     \
        (ptr) = hsdag_arena_alloc(a, ((size_t)(count) + 1) * sizeof *(ptr)); \
        if (!(ptr)) goto oom;                                                \
    } while (0)

int hsdag_costs_create(hsdag_costs **out, const hsdag_graph *g, const hsdag_devices *d,
                       const hsdag_costs_config *cfg, hsdag_err *e)
{
    *out = NULL;
    hsdag_costs_config def = hsdag_costs_config_default();
    if (!cfg) cfg = &def;
    if (!g || !d || d->n < 1 || d->n > HSDAG_MAX_DEVICES)
        return hsdag_err_set(e, HSDAG_EINVAL, "costs: no graph or a device set of %d devices",
                             d ? (int)d->n : 0);
    hsdag_arena *a = hsdag_arena_create(0);
    if (!a) return hsdag_err_set(e, HSDAG_ENOMEM, "costs: out of memory");
    hsdag_costs *c = hsdag_arena_alloc(a, sizeof *c);
    if (!c) goto oom;
    c->arena = a;
    c->g = g;
    c->devs = d;
    const int32_t V = g->n_nodes, D = d->n;
    c->n_nodes = V;
    c->n_devices = D;
    c->source = cfg->source == HSDAG_COSTSRC_AUTO ? resolve_source(g, d) : cfg->source;
    if (c->source == HSDAG_COSTSRC_FILE && !any_measured(g, d)) {
        hsdag_arena_free(a);
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED,
                             "the graph has no measured op costs (cost_ms) for these devices");
    }
    ALLOC_N(c->node_s, (size_t)V * D);
    ALLOC_N(c->allowed, (size_t)V * D);
    ALLOC_N(c->xfer_bytes, V);
    ALLOC_N(c->file_xfer_s, V);
    ALLOC_N(c->static_bytes, V);
    ALLOC_N(c->act_bytes, V);
    ALLOC_N(c->link_lat_s, D * D);
    ALLOC_N(c->link_inv_bw, D * D);
    ALLOC_N(c->link_file_factor, D * D);

    for (int32_t v = 0; v < V; v++) {
        double xb = 0, fx = NAN;
        for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
            if (g->edge_bytes[k] > xb) xb = g->edge_bytes[k];
            double ec = g->edge_cost_ms[k];
            if (isfinite(ec) && ec >= 0 && (isnan(fx) || ec * 1e-3 > fx)) fx = ec * 1e-3;
        }
        if (xb <= 0 && g->out_off[v + 1] > g->out_off[v] && g->out_bytes[v] > 0) xb = g->out_bytes[v];
        c->xfer_bytes[v] = xb;
        c->file_xfer_s[v] = fx;
        double mb = g->mem_bytes[v];
        int has_mem = isfinite(mb) && mb >= 0;
        c->static_bytes[v] = has_mem ? mb : (g->param_bytes[v] > 0 ? g->param_bytes[v] : 0);
        c->act_bytes[v] = has_mem ? 0 : (g->out_bytes[v] > 0 ? g->out_bytes[v] : 0);
        double flops, bytes, elems;
        int bk = hsdag_costs_node_work(g, v, &flops, &bytes, &elems);
        for (int32_t k = 0; k < D; k++) {
            const hsdag_device *dv = &d->dev[k];
            size_t at = (size_t)v * D + k;
            c->allowed[at] = !((g->flags[v] & HSDAG_NF_NO_ACCEL) && dv->kind != HSDAG_DEV_CPU);
            double t;
            if (bk)
                t = 0;
            else {
                double f = c->source == HSDAG_COSTSRC_FILE ? file_ms(g, v, col_of(dv)) : NAN;
                t = isnan(f) ? hsdag_roofline_elems_s(dv, (hsdag_opclass)g->opclass[v], flops, bytes, elems)
                             : f * 1e-3;
            }
            c->node_s[at] = t;
        }
    }
    for (int32_t x = 0; x < D; x++)
        for (int32_t y = 0; y < D; y++) {
            const hsdag_link *l = &d->link[x * D + y];
            int32_t k = x * D + y;
            if (x == y) {
                c->link_lat_s[k] = 0;
                c->link_inv_bw[k] = 0;
                c->link_file_factor[k] = 0;
                continue;
            }
            c->link_lat_s[k] = l->latency_s;
            c->link_inv_bw[k] = l->bandwidth > 0 ? 1.0 / l->bandwidth : 0.0;
            c->link_file_factor[k] = l->file_factor;
        }
    if (cfg->profile) {
        int rc = apply_profile(c, cfg->profile, e);
        if (rc < 0) {
            hsdag_arena_free(a);
            return rc;
        }
    }
    *out = c;
    return 0;
oom:
    hsdag_arena_free(a);
    return hsdag_err_set(e, HSDAG_ENOMEM, "costs: out of memory for %d nodes x %d devices", (int)g->n_nodes,
                         (int)d->n);
}

/* ---- HEFT's averages and upward rank ---- */

void hsdag_costs_means(double *mean_cost, double *mean_xfer, const hsdag_costs *c)
{
    const int32_t V = c->n_nodes, D = c->n_devices;
    for (int32_t v = 0; v < V; v++) {
        if (mean_cost) {
            double sum = 0, all = 0;
            int n = 0;
            for (int32_t d = 0; d < D; d++) {
                double t = c->node_s[(size_t)v * D + d];
                all += t;
                if (c->allowed[(size_t)v * D + d]) sum += t, n++;
            }
            mean_cost[v] = n ? sum / n : all / D;
        }
        if (mean_xfer) {
            double xm = 0;
            if (D > 1) {
                for (int32_t a = 0; a < D; a++)
                    for (int32_t b = 0; b < D; b++)
                        if (a != b) xm += hsdag_costs_xfer_s(c, v, a, b);
                xm /= (double)D * (double)(D - 1);
            }
            mean_xfer[v] = xm;
        }
    }
}

void hsdag_costs_upward_rank(double *rank, const hsdag_graph *g, const double *mean_cost,
                             const double *mean_xfer)
{
    for (int32_t v = g->n_nodes - 1; v >= 0; v--) {
        double best = 0;
        for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
            double r = mean_xfer[v] + rank[g->out_dst[k]];
            if (r > best) best = r;
        }
        rank[v] = mean_cost[v] + best;
    }
}
