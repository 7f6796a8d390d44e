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

/* The longest path under node weight w (nodes are in topological order) into path (ties: the first input
 * and the first end); len[v] gets the longest path ending at v, arg[v] its previous node (-1). Returns the
 * path's length. */
static int32_t longest_path(const hsdag_graph *g, const double *w, double *len, int32_t *arg, int32_t *path)
{
    int32_t end = 0, n = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        double b = 0;
        arg[v] = -1;
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
            if (len[g->in_src[k]] > b || arg[v] < 0) b = len[g->in_src[k]], arg[v] = g->in_src[k];
        len[v] = b + w[v];
        if (len[v] > len[end]) end = v;
    }
    for (int32_t v = end; v >= 0; v = arg[v]) path[n++] = v;
    for (int32_t i = 0; i < n / 2; i++) {
        int32_t t = path[i];
        path[i] = path[n - 1 - i], path[n - 1 - i] = t;
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
            int32_t np = longest_path(d.g, w[wi], len, d.arg, d.path);
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

/* ---- concurrent latency: windows on a chain, with communication (docs/simulator.md, "windows") ----
 * The devices must form two classes (identical cost and allowed columns within a class). Take the longest
 * path c_0 .. c_{L-1} under the cheapest cost, with a virtual source and sink. The window (i, j), i < j,
 * holds the ops that descend from c_i and lead to c_j: they run after c_i ends and before c_j starts, and
 * the windows between consecutive chosen chain nodes are disjoint in time. Given the classes of c_i and c_j
 * (and, in a class of several devices, whether they share one), an op u of the window has locations: c_i's
 * device (home A), c_j's (B), any other device of each class; and at each a through time: its earliest
 * finish after c_i (the comm-path DP inside the window, copies between locations) plus its latest start
 * before c_j, less its cost. The window lasts at least T, the least value at least every op's least through
 * time, the fractional load of its ops on the two classes (per device) and the load of the homes, where an
 * op whose through time at a location exceeds T is not there. G[j][d] = the least finish of c_j on class
 * d = its cost + the largest over i of the smallest over c_i's class (one device or two) of G[i] + T(i, j);
 * the bound is G at the sink. Windows span up to WIN_SPAN chain nodes and
 * WIN_MAX_OPS ops; past WIN_MAX_WORK the rest of the chain counts its own costs (still a bound). */
#define WIN_SPAN 48
#define WIN_MAX_OPS 1024
#define WIN_MAX_WORK 60000000

typedef struct win_data {
    const hsdag_graph *g;
    int32_t L, *path, *pos, *first, *last;
    int32_t cnt[2];     /* devices per class */
    double *t, *tl, *x; /* [2n] cost on class 0/1; the same per device of the class (load); the cheapest
                         * copy of u's output from class y to the other */
    double *xi;         /* [2n] the cheapest copy of u's output between two devices of class y (INFINITY
                         * when the class has one device) */
    int32_t *rank;      /* [n] position in the order of tl0 / tl1 */
    int32_t *byrank, *byid, n_set; /* the window's ops sorted by rank, by id */
    /* the window's locations (win_span): a device of a class that holds c_i ("home" A), c_j (B, possibly the
     * same device as A), or any other device of the class; at most 4 */
    int nl, la, lb, lcls[4];
    double *ef, *lf, *thrl; /* [4n] per location */
    double *thr, *cand;     /* [2n] the least through time on each class; candidates [4n] */
    int64_t work;
} win_data;

typedef struct win_key {
    double ratio;
    int32_t v;
} win_key;

static int win_key_cmp(const void *x, const void *y)
{
    const win_key *p = x, *q = y;
    return p->ratio < q->ratio ? -1 : p->ratio > q->ratio ? 1 : (p->v > q->v) - (p->v < q->v);
}

static void win_insert(int32_t *a, int32_t n, int32_t u, const int32_t *key)
{
    int32_t k = n;
    while (k > 0 && (key ? key[a[k - 1]] > key[u] : a[k - 1] > u)) a[k] = a[k - 1], k--;
    a[k] = u;
}

static int win_in(const win_data *w, int32_t p, int32_t i, int32_t j)
{
    return w->pos[p] >= 0 ? w->pos[p] > i && w->pos[p] < j : w->last[p] >= i && w->first[p] <= j;
}

/* The window's fractional load with the ops whose through time on a class exceeds T forced to the other. */
static double win_frac_load(const win_data *w, double T)
{
    double A = 0, B = 0;
    int32_t nf = 0;
    for (int32_t k = 0; k < w->n_set; k++) {
        int32_t u = w->byrank[k];
        int ok0 = w->thr[2 * u] <= T, ok1 = w->thr[2 * u + 1] <= T;
        if (!ok0 && !ok1) return INFINITY;
        if (!ok1)
            A += w->tl[2 * u];
        else if (!ok0)
            B += w->tl[2 * u + 1];
        else
            B += w->tl[2 * u + 1], nf++;
    }
    if (A >= B || nf == 0) return A > B ? A : B;
    for (int32_t k = 0; k < w->n_set; k++) {
        int32_t u = w->byrank[k];
        if (!(w->thr[2 * u] <= T && w->thr[2 * u + 1] <= T)) continue;
        double a = w->tl[2 * u], b = w->tl[2 * u + 1];
        if (A + a >= B - b) return A + (B - A) / (a + b) * a;
        A += a, B -= b;
    }
    return A > B ? A : B;
}

/* The load of the homes: the ops whose only location within T is A, or B, or A and B (two devices). */
static double win_home_load(const win_data *w, double T)
{
    if (w->la < 0 && w->lb < 0) return 0;
    double fa = 0, fb = 0, fab = 0;
    for (int32_t k = 0; k < w->n_set; k++) {
        int32_t u = w->byid[k];
        unsigned m = 0;
        for (int l = 0; l < w->nl; l++) m |= (unsigned)(w->thrl[4 * (size_t)u + l] <= T) << l;
        unsigned ma = w->la >= 0 ? 1u << w->la : 0, mb = w->lb >= 0 ? 1u << w->lb : 0;
        if (!m || (m & ~(ma | mb))) continue;
        double ta = ma ? w->t[2 * u + w->lcls[w->la]] : INFINITY,
               tb = mb ? w->t[2 * u + w->lcls[w->lb]] : INFINITY;
        if (m == ma)
            fa += ta;
        else if (m == mb)
            fb += tb;
        else
            fab += fmin(ta, tb);
    }
    double h = fa > fb ? fa : fb;
    if (w->la != w->lb && (fa + fb + fab) / 2 > h) h = (fa + fb + fab) / 2;
    return h;
}

/* The window's fractional load with the ops whose through time on a class exceeds T forced to the other, and
 * at least the load the homes must carry. */
static double win_load(const win_data *w, double T)
{
    double f = win_frac_load(w, T), h = win_home_load(w, T);
    return f > h ? f : h;
}

/* The copy of u's output from location l1 to l2: none within one location (an "other" location may be one
 * device), the cheapest between two devices of one class, or from one class to the other. */
static inline double win_xf(const win_data *w, int32_t u, int l1, int l2)
{
    if (l1 == l2) return 0;
    int y = w->lcls[l1];
    return y == w->lcls[l2] ? w->xi[2 * u + y] : w->x[2 * u + y];
}

/* The least duration of window (i, j) with c_i on class di and c_j on dj (-1: the virtual ends), on one device
 * if same (di == dj), else on two. */
static double win_span(win_data *w, int32_t i, int32_t j, int di, int dj, int same)
{
    const hsdag_graph *g = w->g;
    int32_t ci = i >= 0 ? w->path[i] : -1, cj = j < w->L ? w->path[j] : -1;
    /* the locations: per class, its homes, then the rest of its devices if any */
    w->nl = 0, w->la = w->lb = -1;
    for (int y = 0; y < 2; y++) {
        int homes = 0;
        if (ci >= 0 && di == y) w->la = w->nl, w->lcls[w->nl++] = y, homes++;
        if (cj >= 0 && dj == y) {
            if (w->la >= 0 && di == y && same)
                w->lb = w->la;
            else
                w->lb = w->nl, w->lcls[w->nl++] = y, homes++;
        }
        if (w->cnt[y] > homes) w->lcls[w->nl++] = y;
    }
    int nl = w->nl;
    for (int32_t k = 0; k < w->n_set; k++) {
        int32_t u = w->byid[k];
        for (int l = 0; l < nl; l++) {
            double ready = 0;
            for (int32_t e = g->in_off[u]; e < g->in_off[u + 1]; e++) {
                int32_t p = g->in_src[e];
                double arr;
                if (p == ci) {
                    arr = win_xf(w, p, w->la, l);
                } else if (win_in(w, p, i, j)) {
                    arr = INFINITY;
                    for (int l2 = 0; l2 < nl; l2++)
                        arr = fmin(arr, w->ef[4 * (size_t)p + l2] + win_xf(w, p, l2, l));
                } else {
                    continue;
                }
                if (arr > ready) ready = arr;
            }
            w->ef[4 * (size_t)u + l] = ready + w->t[2 * u + w->lcls[l]];
        }
        w->work += nl + (int64_t)nl * nl * (g->in_off[u + 1] - g->in_off[u]) / 2;
    }
    double lo = 0;
    int32_t nc = 0;
    for (int32_t k = w->n_set - 1; k >= 0; k--) {
        int32_t u = w->byid[k];
        w->thr[2 * u] = w->thr[2 * u + 1] = INFINITY;
        for (int l = 0; l < nl; l++) {
            double after = 0;
            for (int32_t e = g->out_off[u]; e < g->out_off[u + 1]; e++) {
                int32_t s = g->out_dst[e];
                double dep;
                if (s == cj) {
                    dep = win_xf(w, u, l, w->lb);
                } else if (win_in(w, s, i, j)) {
                    dep = INFINITY;
                    for (int l2 = 0; l2 < nl; l2++)
                        dep = fmin(dep, win_xf(w, u, l, l2) + w->lf[4 * (size_t)s + l2]);
                } else {
                    continue;
                }
                if (dep > after) after = dep;
            }
            size_t ul = 4 * (size_t)u + l;
            int y = w->lcls[l];
            w->lf[ul] = after + w->t[2 * u + y];
            w->thrl[ul] = w->ef[ul] + after;
            if (w->thrl[ul] < w->thr[2 * u + y]) w->thr[2 * u + y] = w->thrl[ul];
            if (isfinite(w->thrl[ul])) w->cand[nc++] = w->thrl[ul];
        }
        double m = fmin(w->thr[2 * u], w->thr[2 * u + 1]);
        if (m > lo) lo = m;
        w->work += nl + (int64_t)nl * nl * (g->out_off[u + 1] - g->out_off[u]) / 2;
    }
    if (!isfinite(lo)) return INFINITY;
    double l0 = win_load(w, lo);
    w->work += (int64_t)w->n_set * nl / 2;
    if (l0 <= lo) return lo;
    int32_t m = 0; /* the candidates above lo, sorted */
    for (int32_t k = 0; k < nc; k++)
        if (w->cand[k] > lo) w->cand[m++] = w->cand[k];
    nc = m;
    qsort(w->cand, (size_t)nc, sizeof *w->cand, hsdag_cmp_double);
    int32_t a = 0, b = nc; /* the least k with load(cand[k]) <= cand[k]; nc if none */
    while (a < b) {
        int32_t mid = a + (b - a) / 2;
        w->work += (int64_t)w->n_set * nl / 2;
        if (win_load(w, w->cand[mid]) <= w->cand[mid])
            b = mid;
        else
            a = mid + 1;
    }
    double prev = a > 0 ? w->cand[a - 1] : lo, lp = a > 0 ? win_load(w, prev) : l0;
    return a < nc && w->cand[a] < lp ? w->cand[a] : lp;
}

static int bound_windows(double *out, const hsdag_costs *c, hsdag_err *e)
{
    const hsdag_graph *g = c->g;
    int32_t n = g->n_nodes, D = c->n_devices, cls[2] = {-1, -1}, cnt[2] = {0, 0};
    *out = NAN;
    if (n == 0 || D < 2) return 0;
    uint8_t *memb = hsdag_malloc((size_t)D);
    if (!memb) return hsdag_err_set(e, HSDAG_ENOMEM, "bound: out of memory");
    /* two classes of devices, each with identical cost and allowed columns; their representatives */
    for (int32_t d = 0; d < D; d++) {
        int k = -1;
        for (int q = 0; q < 2 && k < 0; q++) {
            if (cls[q] < 0) {
                cls[q] = d, k = q;
                break;
            }
            int same = 1;
            for (int32_t v = 0; v < n && same; v++) {
                size_t s = (size_t)v * D;
                same =
                    c->node_s[s + d] == c->node_s[s + cls[q]] && c->allowed[s + d] == c->allowed[s + cls[q]];
            }
            if (same) k = q;
        }
        if (k < 0) break; /* three classes or more: no such bound */
        memb[d] = (uint8_t)k;
        cnt[k]++;
    }
    if (cnt[0] + cnt[1] < D || cls[1] < 0) {
        hsdag_free(memb);
        return 0;
    }
    win_data w = {.g = g};
    size_t n2 = 2 * (size_t)n + 2;
    double *len = hsdag_malloc(n2 * sizeof *len), *G = NULL;
    int32_t *arg = hsdag_malloc(((size_t)n + 1) * sizeof *arg),
            *boff = hsdag_malloc(((size_t)n + 2) * sizeof *boff),
            *bkt = hsdag_malloc(((size_t)n + 1) * sizeof *bkt);
    w.path = hsdag_malloc(((size_t)n + 1) * sizeof *w.path);
    w.pos = hsdag_malloc(((size_t)n + 1) * sizeof *w.pos);
    w.first = hsdag_malloc(((size_t)n + 1) * sizeof *w.first);
    w.last = hsdag_malloc(((size_t)n + 1) * sizeof *w.last);
    w.rank = hsdag_malloc(((size_t)n + 1) * sizeof *w.rank);
    w.byrank = hsdag_malloc(((size_t)n + 1) * sizeof *w.byrank);
    w.byid = hsdag_malloc(((size_t)n + 1) * sizeof *w.byid);
    size_t n4 = 2 * n2;
    w.t = hsdag_malloc(n2 * sizeof *w.t), w.tl = hsdag_malloc(n2 * sizeof *w.tl);
    w.x = hsdag_malloc(n2 * sizeof *w.x), w.xi = hsdag_malloc(n2 * sizeof *w.xi);
    w.ef = hsdag_malloc(n4 * sizeof *w.ef), w.lf = hsdag_malloc(n4 * sizeof *w.lf);
    w.thrl = hsdag_malloc(n4 * sizeof *w.thrl), w.thr = hsdag_malloc(n2 * sizeof *w.thr);
    w.cand = hsdag_malloc(n4 * sizeof *w.cand);
    w.cnt[0] = cnt[0], w.cnt[1] = cnt[1];
    int rc = 0;
    if (!len || !arg || !boff || !bkt || !w.path || !w.pos || !w.first || !w.last || !w.rank || !w.byrank ||
        !w.byid || !w.t || !w.tl || !w.x || !w.xi || !w.ef || !w.lf || !w.thrl || !w.thr || !w.cand) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "bound: out of memory");
        goto done;
    }
    for (int32_t v = 0; v < n; v++) {
        size_t s = (size_t)v * D;
        int any = c->allowed[s + cls[0]] || c->allowed[s + cls[1]];
        for (int y = 0; y < 2; y++) {
            int32_t d = cls[y];
            w.t[2 * v + y] = !any || c->allowed[s + d] ? c->node_s[s + d] : INFINITY;
            w.tl[2 * v + y] = w.t[2 * v + y] / cnt[y];
            double best = INFINITY, within = INFINITY;
            for (int32_t a = 0; a < D; a++)
                for (int32_t b = 0; b < D; b++) {
                    if (memb[a] != y || a == b) continue;
                    double t = hsdag_costs_xfer_s(c, v, a, b);
                    if (memb[b] != y && t < best) best = t;
                    if (memb[b] == y && t < within) within = t;
                }
            w.x[2 * v + y] = best;
            w.xi[2 * v + y] = within;
        }
    }
    /* the order of the fractional split: cost ratio class 0 / class 1, per device */
    win_key *key = hsdag_malloc(((size_t)n + 1) * sizeof *key);
    if (!key) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "bound: out of memory");
        goto done;
    }
    for (int32_t v = 0; v < n; v++) {
        double a = w.tl[2 * v], b = w.tl[2 * v + 1];
        key[v].ratio = b > 0 ? a / b : a > 0 ? INFINITY : 1;
        key[v].v = v;
    }
    qsort(key, (size_t)n, sizeof *key, win_key_cmp);
    for (int32_t k = 0; k < n; k++) w.rank[key[k].v] = k;
    hsdag_free(key);
    /* G[2 (j + 1) + d]: the least finish of chain node j on class d; G[0], G[1]: the virtual source */
    G = hsdag_malloc((2 * (size_t)n + 4) * sizeof *G);
    if (!G) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "bound: out of memory");
        goto done;
    }
    /* the chain: the longest path under the cheapest cost (cand as the weights until the windows) */
    for (int32_t v = 0; v < n; v++) w.cand[v] = fmin(w.t[2 * v], w.t[2 * v + 1]);
    int32_t L = w.L = longest_path(g, w.cand, len, arg, w.path);
    for (int32_t v = 0; v < n; v++) w.pos[v] = -1;
    for (int32_t i = 0; i < L; i++) w.pos[w.path[i]] = i;
    /* last: the latest chain node an op descends from (-1: none); first: the earliest it leads to (L: none) */
    for (int32_t v = 0; v < n; v++) {
        w.last[v] = w.pos[v];
        if (w.pos[v] < 0)
            for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
                if (w.last[g->in_src[k]] > w.last[v]) w.last[v] = w.last[g->in_src[k]];
    }
    for (int32_t v = n - 1; v >= 0; v--) {
        w.first[v] = w.pos[v] >= 0 ? w.pos[v] : L;
        if (w.pos[v] < 0)
            for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++)
                if (w.first[g->out_dst[k]] < w.first[v]) w.first[v] = w.first[g->out_dst[k]];
    }
    /* the off-chain ops bucketed by last + 1: bucket b is bkt[boff[b] .. boff[b + 1]) */
    memset(boff, 0, ((size_t)n + 2) * sizeof *boff);
    for (int32_t v = 0; v < n; v++)
        if (w.pos[v] < 0) boff[w.last[v] + 2]++;
    for (int32_t b = 0; b <= L; b++) boff[b + 1] += boff[b];
    for (int32_t v = 0; v < n; v++)
        if (w.pos[v] < 0) bkt[boff[w.last[v] + 1]++] = v;
    for (int32_t b = L; b > 0; b--) boff[b] = boff[b - 1];
    boff[0] = 0;
    G[0] = G[1] = 0;
    for (int32_t j = 0; j <= L; j++) {
        int nd = j < L ? 2 : 1;
        double best[2] = {-INFINITY, -INFINITY};
        w.n_set = 0;
        for (int32_t i = j - 1; i >= -1 && i >= j - 1 - WIN_SPAN; i--) {
            if (i < j - 1) {
                int32_t u = w.path[i + 1];
                win_insert(w.byrank, w.n_set, u, w.rank), win_insert(w.byid, w.n_set, u, NULL), w.n_set++;
            }
            for (int32_t k = boff[i + 1]; k < boff[i + 2]; k++) {
                int32_t u = bkt[k];
                if (w.first[u] > j) continue;
                win_insert(w.byrank, w.n_set, u, w.rank), win_insert(w.byid, w.n_set, u, NULL), w.n_set++;
            }
            for (int dj = 0; dj < nd; dj++) {
                double lo = INFINITY;
                for (int di = 0; di < (i >= 0 ? 2 : 1); di++) {
                    double gi = G[2 * (i + 1) + di];
                    if (!isfinite(gi)) continue;
                    /* c_i and c_j of one class: on one device, and also on two where the class has them */
                    int both = i >= 0 && j < L && di == dj;
                    for (int same = both; same >= (both && cnt[di] > 1 ? 0 : both); same--) {
                        double v = gi + win_span(&w, i, j, i >= 0 ? di : -1, j < L ? dj : -1, same);
                        if (v < lo) lo = v;
                    }
                }
                if (lo > best[dj]) best[dj] = lo;
            }
            if (w.n_set > WIN_MAX_OPS || w.work > WIN_MAX_WORK) break;
        }
        for (int d = 0; d < 2; d++) {
            double t = j < L ? w.t[2 * w.path[j] + d] : 0;
            G[2 * (j + 1) + d] = d < nd ? best[d] + t : best[0] + t;
        }
        if (w.work > WIN_MAX_WORK) { /* the rest of the chain at its own costs: still a bound */
            for (int32_t k = j + 1; k <= L; k++)
                for (int d = 0; d < 2; d++)
                    G[2 * (k + 1) + d] = fmin(G[2 * k], G[2 * k + 1]) + (k < L ? w.t[2 * w.path[k] + d] : 0);
            break;
        }
    }
    /* less a rounding margin: the same sums taken in another order by the simulator may end an ulp lower */
    *out = fmin(G[2 * (L + 1)], G[2 * (L + 1) + 1]) * (1 - 1e-12);
done:
    hsdag_free(memb), hsdag_free(len), hsdag_free(arg), hsdag_free(boff), hsdag_free(bkt), hsdag_free(G);
    hsdag_free(w.path), hsdag_free(w.pos), hsdag_free(w.first), hsdag_free(w.last), hsdag_free(w.rank);
    hsdag_free(w.byrank), hsdag_free(w.byid), hsdag_free(w.t), hsdag_free(w.tl), hsdag_free(w.x);
    hsdag_free(w.xi), hsdag_free(w.ef), hsdag_free(w.lf), hsdag_free(w.thrl), hsdag_free(w.thr);
    hsdag_free(w.cand);
    return rc;
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
    out->windows_s = NAN;
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
        rc = bound_windows(&out->windows_s, c, e);
        if (rc < 0) return rc;
        if (out->windows_s > out->lower_s * (1 + 1e-12)) {
            out->lower_s = out->windows_s;
            out->rule = "windows";
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
    hsdag_jw_num(&w, "windows_ms", b->windows_s * 1e3);
    hsdag_jw_num(&w, "memory_bound_ms", b->memory_s * 1e3);
    hsdag_jw_num(&w, "contiguous_bound_ms", contiguous_s * 1e3);
    hsdag_jw_str(&w, "contiguous_method", contiguous_method);
    hsdag_jw_str(&w, "contiguous_note", contiguous_method ? contiguous_note : NULL);
    return hsdag_jw_end(&w);
}
