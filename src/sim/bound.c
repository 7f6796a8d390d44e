/* bound.c - lower bounds on the latency of any placement, per semantics (the proofs are in
 * docs/simulator.md), and the tarnawski path-blocks bound that also uses memory caps and communication.
 * Not here: exact solvers (the placers provide them through hsdag_bound_exact_fn).
 * Entry points: hsdag_bound_compute, hsdag_bound_objective, hsdag_bound_write_json,
 *   hsdag_costs_write_json_head.
 */
#include "hsdag/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- tarnawski latency: one path's cheapest run with memory-capped accelerator blocks ----
 * Along any path of the graph, every accelerator block's nodes on the path are consecutive (a path never
 * re-enters a block: contiguity, docs/simulator.md), the block's finish is at least its path predecessor's
 * finish + the comm of each distinct node before it on the path that feeds it + the accelerator cost of its
 * path nodes + the comm of each of its path nodes that feeds a later path node, and its path nodes fit one
 * accelerator's memory; a CPU node adds its cpuLatency. The cheapest split of the path into CPU nodes and
 * such segments (a DP over segment ends) is therefore a lower bound on the latency of every feasible
 * placement. */
typedef struct pb_data {
    const hsdag_graph *g;
    double *cpu, *acc, *comm, *size; /* [n] cheapest CPU / accelerator cost, comm to the host, static bytes */
    double cap;                      /* the largest accelerator memory (INFINITY = unlimited) */
    int32_t *path, *pos, *arg;       /* [n] the path, each node's position on it (-1 off it), scratch */
    uint32_t *mark, gen;             /* [n] distinct-feeder marks */
    double *F, *G;                   /* [n + 1] best prefix ending on a CPU node / a segment */
} pb_data;

/* Segments ending at path position j, from the shortest; stops at an unsupported node or the memory cap.
 * Returns the work done: nodes and edges looked at. */
static int64_t pb_segments(pb_data *d, int32_t j)
{
    const hsdag_graph *g = d->g;
    const int32_t *P = d->path, *pos = d->pos;
    double m = 0, fs = 0, ex = 0, ent = 0, best = INFINITY;
    int64_t work = 0;
    if (++d->gen == 0) memset(d->mark, 0, (size_t)g->n_nodes * sizeof *d->mark), d->gen = 1;
    for (int32_t i = j; i >= 0; i--) {
        int32_t u = P[i];
        work += 1 + (g->out_off[u + 1] - g->out_off[u]) + (g->in_off[u + 1] - g->in_off[u]);
        if (!isfinite(d->acc[u])) break;
        m += d->size[u];
        if (m > d->cap) break;
        fs += d->acc[u];
        for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++)
            if (pos[g->out_dst[k]] > j) {
                ex += d->comm[u];
                break;
            }
        if (d->mark[u] == d->gen) ent -= d->comm[u]; /* a feeder of the segment is now inside it */
        d->mark[u] = 0;
        for (int32_t k = g->in_off[u]; k < g->in_off[u + 1]; k++) {
            int32_t w = g->in_src[k];
            if (pos[w] >= 0 && pos[w] < i && d->mark[w] != d->gen) d->mark[w] = d->gen, ent += d->comm[w];
        }
        double pre = d->F[i] < d->G[i] ? d->F[i] : d->G[i], val = pre + (ent > 0 ? ent : 0) + fs + ex;
        if (val < best) best = val;
    }
    d->G[j + 1] = best;
    return work;
}

/* The DP over the path d->path[0..n) (positions set in d->pos); NAN once *work, shared by the paths, passes
 * PB_MAX_WORK (a long path without a binding memory cap: no bound rather than quadratic time). */
#define PB_MAX_WORK 20000000
static double pb_path(pb_data *d, int32_t n, int64_t *work)
{
    d->F[0] = d->G[0] = 0;
    for (int32_t j = 0; j < n; j++) {
        int32_t v = d->path[j];
        double pre = d->F[j] < d->G[j] ? d->F[j] : d->G[j];
        d->F[j + 1] = pre + d->cpu[v];
        if ((*work += pb_segments(d, j)) > PB_MAX_WORK) return NAN;
    }
    return d->F[n] < d->G[n] ? d->F[n] : d->G[n];
}

/* The longest path under weight w (nodes are in topological order) into d->path; returns its length. */
static int32_t pb_longest(pb_data *d, const double *w, double *len)
{
    const hsdag_graph *g = d->g;
    int32_t end = 0, n = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        double b = 0;
        d->arg[v] = -1;
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
            if (len[g->in_src[k]] > b || d->arg[v] < 0) b = len[g->in_src[k]], d->arg[v] = g->in_src[k];
        len[v] = b + w[v];
        if (len[v] > len[end]) end = v;
    }
    for (int32_t v = end; v >= 0; v = d->arg[v]) d->path[n++] = v;
    for (int32_t i = 0; i < n / 2; i++) {
        int32_t t = d->path[i];
        d->path[i] = d->path[n - 1 - i], d->path[n - 1 - i] = t;
    }
    return n;
}

/* Per-node costs of the bound: 0, or 1 when some node may run nowhere (no bound). */
static int pb_costs(pb_data *d, const hsdag_costs *c)
{
    int32_t D = c->n_devices;
    d->cap = 0;
    for (int32_t a = 0; a < D; a++) {
        double m = c->devs->dev[a].mem_capacity;
        if (c->devs->dev[a].kind == HSDAG_DEV_CPU) continue;
        if (m <= 0)
            d->cap = INFINITY; /* unlimited */
        else if (m > d->cap)
            d->cap = m;
    }
    for (int32_t v = 0; v < c->n_nodes; v++) {
        d->cpu[v] = d->acc[v] = d->comm[v] = INFINITY;
        for (int32_t a = 0; a < D; a++) {
            size_t i = (size_t)v * D + a;
            int cpu = c->devs->dev[a].kind == HSDAG_DEV_CPU;
            double *t = cpu ? &d->cpu[v] : &d->acc[v];
            if (c->allowed[i] && c->node_s[i] < *t) *t = c->node_s[i];
            if (!cpu && hsdag_costs_host_xfer_s(c, v, a) < d->comm[v])
                d->comm[v] = hsdag_costs_host_xfer_s(c, v, a);
        }
        if (!isfinite(d->comm[v])) d->comm[v] = 0;
        d->size[v] = c->static_bytes[v];
        if (!isfinite(d->cpu[v]) && !isfinite(d->acc[v])) return 1;
    }
    return 0;
}

/* The path-blocks bound: the DP on the longest paths under the cheapest cost, the CPU cost and the memory
 * size; NAN when it does not apply. Work is about the paths' lengths times the longest segment that fits. */
static int bound_path_blocks(double *out, const hsdag_costs *c, hsdag_err *e)
{
    int32_t n = c->n_nodes;
    hsdag_err le = {0};
    pb_data d = {.g = c->g};
    double *buf = hsdag_alloc_n((size_t)n * 8 + 2, sizeof *buf, "bound", &le);
    int32_t *ibuf = hsdag_alloc_n((size_t)n * 3 + 1, sizeof *ibuf, "bound", &le);
    d.mark = hsdag_alloc_n((size_t)n + 1, sizeof *d.mark, "bound", &le);
    *out = NAN;
    if (le.status < 0) {
        hsdag_free(buf), hsdag_free(ibuf), hsdag_free(d.mark);
        return hsdag_err_set(e, le.status, "%s", le.msg);
    }
    d.cpu = buf, d.acc = buf + n, d.comm = buf + 2 * (size_t)n, d.size = buf + 3 * (size_t)n;
    d.F = buf + 4 * (size_t)n, d.G = buf + 5 * (size_t)n + 1;
    double *len = buf + 6 * (size_t)n + 2, *mc = buf + 7 * (size_t)n + 2, *w[3] = {mc, d.cpu, d.size};
    d.path = ibuf, d.pos = ibuf + n, d.arg = ibuf + 2 * (size_t)n;
    if (n > 0 && !pb_costs(&d, c)) {
        double best = NAN;
        int64_t work = 0;
        for (int32_t v = 0; v < n; v++) mc[v] = d.cpu[v] < d.acc[v] ? d.cpu[v] : d.acc[v], d.pos[v] = -1;
        for (int wi = 0; wi < 3; wi++) {
            int32_t np = pb_longest(&d, w[wi], len);
            for (int32_t i = 0; i < np; i++) d.pos[d.path[i]] = i;
            double val = pb_path(&d, np, &work);
            for (int32_t i = 0; i < np; i++) d.pos[d.path[i]] = -1;
            if (!isnan(val) && !(val <= best)) best = val;
        }
        *out = isfinite(best) ? best : NAN; /* an infinite one: no feasible run of some path */
    }
    hsdag_free(buf), hsdag_free(ibuf), hsdag_free(d.mark);
    return 0;
}

/* Concurrent latency, the critical path with communication: EF[v,d] = v's earliest finish on device d =
 * node_s[v,d] + the latest over v's inputs u of the earliest arrival min over d' of EF[u,d'] + the transfer
 * d' -> d (none when d' = d); the bound is the largest over v of min over d of EF[v,d]. Devices as min_cost:
 * the allowed ones, or any if none is. O(E * D^2). */
static int bound_comm_path(double *out, const hsdag_costs *c, hsdag_err *e)
{
    const hsdag_graph *g = c->g;
    int32_t n = g->n_nodes, D = c->n_devices;
    double *ef = hsdag_malloc(((size_t)n * D + 1) * sizeof *ef);
    if (!ef) return hsdag_err_set(e, HSDAG_ENOMEM, "bound: out of memory");
    double best = 0;
    for (int32_t v = 0; v < n; v++) {
        const uint8_t *al = c->allowed + (size_t)v * D;
        int any = 0;
        for (int32_t d = 0; d < D; d++) any |= al[d];
        double fin = INFINITY;
        for (int32_t d = 0; d < D; d++) {
            double *x = &ef[(size_t)v * D + d];
            if (any && !al[d]) {
                *x = INFINITY;
                continue;
            }
            double ready = 0;
            for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
                int32_t u = g->in_src[k];
                double arrive = INFINITY;
                for (int32_t d2 = 0; d2 < D; d2++) {
                    double t = ef[(size_t)u * D + d2];
                    if (t < INFINITY && d2 != d) t += hsdag_costs_xfer_s(c, u, d2, d);
                    if (t < arrive) arrive = t;
                }
                if (arrive > ready) ready = arrive;
            }
            *x = ready + c->node_s[(size_t)v * D + d];
            if (*x < fin) fin = *x;
        }
        if (fin > best) best = fin;
    }
    hsdag_free(ef);
    *out = best;
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
    out->path_blocks_s = NAN;
    out->memory_s = NAN;
    out->comm_path_s = NAN;
    if (out->objective == HSDAG_OBJ_THROUGHPUT) return bound_throughput(c, out, e);
    switch (sem) {
    case HSDAG_SEM_SEQUENTIAL:
        out->lower_s = work;
        out->rule = "sum-min-cost";
        break;
    case HSDAG_SEM_CONCURRENT: {
        out->lower_s = crit >= out->work_per_device_s ? crit : out->work_per_device_s;
        out->rule = crit >= out->work_per_device_s ? "critical-path" : "work/devices";
        int rc = bound_comm_path(&out->comm_path_s, c, e);
        if (rc < 0) return rc;
        if (out->comm_path_s > out->lower_s) {
            out->lower_s = out->comm_path_s;
            out->rule = "comm-path";
        }
        break;
    }
    default: {
        out->lower_s = crit;
        out->rule = "critical-path";
        int rc = bound_path_blocks(&out->path_blocks_s, c, e);
        if (rc < 0) return rc;
        if (out->path_blocks_s > out->lower_s) {
            out->lower_s = out->path_blocks_s;
            out->rule = "path-blocks";
        }
        break;
    }
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
    hsdag_jw_num(&w, "path_blocks_ms", b->path_blocks_s * 1e3);
    hsdag_jw_num(&w, "comm_path_ms", b->comm_path_s * 1e3);
    hsdag_jw_num(&w, "memory_bound_ms", b->memory_s * 1e3);
    hsdag_jw_num(&w, "contiguous_bound_ms", contiguous_s * 1e3);
    hsdag_jw_str(&w, "contiguous_method", contiguous_method);
    hsdag_jw_str(&w, "contiguous_note", contiguous_method ? contiguous_note : NULL);
    return hsdag_jw_end(&w);
}
