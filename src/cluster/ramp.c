/* ramp.c - the RAMP pieces of the PAC-ML cluster: per-op split rule, block shapes and first-fit block search,
 *   the RAMP all-reduce time, the beta distributions, and the lookahead (one simulated training step) of a
 *   split, placed job graph.
 * Not here: the episode loop, pool, policies and features (env.c).
 * Entry points: hsdag_ramp_split, hsdag_ramp_find_block, hsdag_ramp_allreduce_time, hsdag_beta_*,
 *   cl_job_place and cl_job_lookahead (internal, cluster_internal.h). */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int32_t hsdag_ramp_split(double compute, double quantum, int32_t a)
{
    double q = ceil(ceil(compute / quantum) / 2.0) * 2.0;
    double k = q < (double)a ? q : (double)a;
    return k < 1.0 ? 1 : (int32_t)k;
}

/* ---- block shapes ---- */
typedef struct cl_shape {
    int32_t c, r, s; /* s < 0: diagonal {(i+n, j+n, k mod ns)} */
} cl_shape;

/* Shapes for degree a in search order. The (4,4,2) RAMP lists of the spec; other cluster shapes get every
 * factorisation c*r*s = a that fits (lexicographic) and whose all-reduce subgroups the transceivers can
 * serve, plus the diagonal when a <= min(nc, nr). */
static int32_t cl_shapes(int32_t nc, int32_t nr, int32_t ns, int32_t a, cl_shape *out, int32_t cap)
{
    int32_t n = 0;
    if (nc == 4 && nr == 4 && ns == 2) {
        static const cl_shape s1[] = {{1, 1, 1}};
        static const cl_shape s2[] = {{2, 1, 1}, {1, 1, 2}, {1, 2, 1}, {2, 2, -1}};
        static const cl_shape s4[] = {{2, 2, 1}, {4, 1, 1}, {2, 1, 2}, {2, 2, 1}, {4, 4, -1}};
        static const cl_shape s6[] = {{3, 1, 2}, {3, 2, 1}};
        static const cl_shape s8[] = {{2, 2, 2}, {4, 1, 2}, {4, 2, 1}};
        static const cl_shape s16[] = {{4, 4, 1}};
        const cl_shape *t = NULL;
        int32_t m = 0;
        switch (a) {
        case 1:
            t = s1;
            m = 1;
            break;
        case 2:
            t = s2;
            m = 4;
            break;
        case 4:
            t = s4;
            m = 5;
            break;
        case 6:
            t = s6;
            m = 2;
            break;
        case 8:
            t = s8;
            m = 3;
            break;
        case 16:
            t = s16;
            m = 1;
            break;
        default:
            break;
        }
        for (int32_t i = 0; i < m && n < cap; i++) out[n++] = t[i];
        return n;
    }
    /* a block's all-reduce runs in subgroups of its c groups, r racks and ceil(s / nc) server sets, each
     * served by the nc transceivers with bandwidth min(x, x / (size - 1)) (hsdag_ramp_allreduce_time, x =
     * nc): a subgroup of more than nc + 1 gets none, so such blocks are not offered (they would never end) */
    for (int32_t c = 1; c <= nc; c++)
        for (int32_t r = 1; r <= nr && r <= nc + 1; r++)
            for (int32_t s = 1; s <= ns; s++)
                if (c * r * s == a && (s + nc - 1) / nc <= nc + 1 && n < cap) out[n++] = (cl_shape){c, r, s};
    if (a > 1 && a <= nc && a <= nr && n < cap) out[n++] = (cl_shape){a, a, -1};
    return n;
}

int hsdag_ramp_find_block(int32_t *out, int32_t nc, int32_t nr, int32_t ns, const uint8_t *busy, int32_t a)
{
    cl_shape sh[64];
    int32_t nsh = cl_shapes(nc, nr, ns, a, sh, 64);
    if (nsh == 0) return -1;
    for (int32_t q = 0; q < nsh; q++) {
        const cl_shape *b = &sh[q];
        if (b->s < 0) {
            int32_t d = b->c;
            for (int32_t i = 0; i <= nc - d; i++)
                for (int32_t j = 0; j <= nr - d; j++)
                    for (int32_t k = 0; k <= 3; k++) {
                        int ok = 1;
                        for (int32_t m = 0; m < d && ok; m++) {
                            int32_t idx = ((i + m) * nr + (j + m)) * ns + (k % ns);
                            if (busy[idx]) ok = 0;
                            out[m] = idx;
                        }
                        if (ok) return 1;
                    }
            continue;
        }
        for (int32_t i = 0; i <= nc - b->c; i++)
            for (int32_t j = 0; j <= nr - b->r; j++)
                for (int32_t k = 0; k <= ns - b->s; k++) {
                    int ok = 1, m = 0;
                    for (int32_t c = 0; c < b->c && ok; c++)
                        for (int32_t r = 0; r < b->r && ok; r++)
                            for (int32_t s = 0; s < b->s && ok; s++) {
                                int32_t idx = ((i + c) * nr + (j + r)) * ns + (k + s);
                                if (busy[idx]) ok = 0;
                                out[m++] = idx;
                            }
                    if (ok) return 1;
                }
    }
    return 0;
}

int cl_degree_has_shape(int32_t nc, int32_t nr, int32_t ns, int32_t a)
{
    cl_shape sh[64];
    return cl_shapes(nc, nr, ns, a, sh, 64) > 0;
}

/* ---- communication times ---- */
double hsdag_ramp_allreduce_time(double M, int32_t node_ids, int32_t racks, int32_t cgs, int32_t x,
                                 double data_rate, double latency, double io_latency)
{
    const double mem_frq = 2e12, peak = 130e12, bytes_per_comp = 2.0;
    const int32_t cont_racks = 1; /* ddls counts (group, server) clashes per distinct server: always 1 */
    double sub[4] = {(double)cgs, (double)(cgs < node_ids ? cgs : node_ids), (double)racks,
                     ceil((double)node_ids / x)};
    double msg = ceil(M / sub[0]);
    double comm = 0.0, comp = 0.0;
    for (int st = 0; st < 4; st++) {
        if (st > 0) msg = ceil(msg / sub[st]);
        double g = sub[st];
        if (g <= 1.0) continue;
        int32_t d = (int32_t)g;
        int32_t a1 = x / cont_racks, a2 = x / (d - 1);
        double bw = (double)(a1 < a2 ? a1 : a2) * data_rate / x;
        double n_op = ceil(log2(g));
        double ai = n_op / ((g + 1.0) * bytes_per_comp);
        double rate = mem_frq * ai < peak ? mem_frq * ai : peak;
        comp += n_op * (msg * g / g) / bytes_per_comp / rate;
        comm += latency + 2.0 * io_latency + msg / bw;
    }
    return 2.0 * comm + comp;
}

/* ---- beta distributions ---- */
struct hsdag_beta_dist {
    char which;
    int32_t n;
    double *val; /* support */
    double *cdf; /* cumulative probability */
};

static double cl_round2(double x)
{
    return nearbyint(x * 100.0) / 100.0; /* half-to-even like numpy.round */
}

hsdag_beta_dist *hsdag_beta_create(char which, uint64_t table_seed)
{
    double skew;
    switch (which) {
    case 'A':
        skew = 0;
        break;
    case 'B':
        skew = 5;
        break;
    case 'C':
        skew = 0;
        break;
    case 'D':
        skew = -5;
        break;
    default:
        return NULL;
    }
    hsdag_beta_dist *d = hsdag_calloc(1, sizeof *d);
    if (!d) return NULL;
    d->which = which;
    if (which == 'A') {
        d->n = 91;
        d->val = hsdag_malloc(91 * sizeof(double));
        d->cdf = hsdag_malloc(91 * sizeof(double));
        if (!d->val || !d->cdf) {
            hsdag_beta_free(d);
            return NULL;
        }
        for (int32_t i = 0; i < 91; i++) {
            d->val[i] = cl_round2(0.10 + 0.01 * i);
            d->cdf[i] = (i + 1) / 91.0;
        }
        return d;
    }
    enum { NS = 50000, NB = 1000 };
    double *x = hsdag_malloc(NS * sizeof(double));
    d->n = NB;
    d->val = hsdag_malloc(NB * sizeof(double));
    d->cdf = hsdag_calloc(NB, sizeof(double));
    if (!x || !d->val || !d->cdf) {
        hsdag_free(x);
        hsdag_beta_free(d);
        return NULL;
    }
    hsdag_rng r;
    hsdag_rng_seed(&r, table_seed ^ (uint64_t)(unsigned char)which * 0x9E3779B97F4A7C15ull);
    /* skew-normal(a, loc=1, scale=1) by the delta method: z = delta*|u0| + sqrt(1-delta^2)*u1 */
    double delta = skew / sqrt(1.0 + skew * skew);
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < NS; i++) {
        double u0 = hsdag_rng_normal(&r), u1 = hsdag_rng_normal(&r);
        x[i] = 1.0 + delta * fabs(u0) + sqrt(1.0 - delta * delta) * u1;
        if (x[i] < lo) lo = x[i];
    }
    for (int i = 0; i < NS; i++) {
        x[i] -= lo;
        if (x[i] > hi) hi = x[i];
    }
    lo = INFINITY;
    double top = -INFINITY;
    for (int i = 0; i < NS; i++) {
        x[i] = x[i] / hi * 1.0;      /* max_val = 1 */
        if (x[i] <= 0.1) x[i] = 0.1; /* "resample" mode: uniform(0.1, 0.1) */
        if (x[i] < lo) lo = x[i];
        if (x[i] > top) top = x[i];
    }
    double w = (top - lo) / NB;
    for (int i = 0; i < NS; i++) {
        int32_t b = w > 0 ? (int32_t)((x[i] - lo) / w) : NB - 1;
        if (b >= NB) b = NB - 1;
        if (b < 0) b = 0;
        d->cdf[b] += 1.0;
    }
    double acc = 0;
    for (int32_t b = 0; b < NB; b++) {
        d->val[b] = cl_round2(lo + w * (b + 1));
        acc += d->cdf[b] / NS;
        d->cdf[b] = acc;
    }
    d->cdf[NB - 1] = 1.0;
    hsdag_free(x);
    return d;
}

double hsdag_beta_sample(const hsdag_beta_dist *d, hsdag_rng *r)
{
    double u = hsdag_rng_uniform(r);
    int32_t lo = 0, hi = d->n - 1;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (d->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return d->val[lo];
}

double cl_beta_below(const hsdag_beta_dist *d, double x)
{
    /* support values are nondecreasing: binary search the first value >= x; the mass before it is P(beta <
     * x) */
    int32_t lo = 0, hi = d->n;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (d->val[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? d->cdf[lo - 1] : 0.0;
}

void hsdag_beta_free(hsdag_beta_dist *d)
{
    if (!d) return;
    hsdag_free(d->val);
    hsdag_free(d->cdf);
    hsdag_free(d);
}

/* ---- placement ---- */
int cl_job_place(const cl_model *m, const hsdag_cluster_config *c, const uint8_t *busy, int32_t a,
                 cl_place *p)
{
    int32_t n = m->n, W = c->n_cgs * c->n_racks * c->n_servers;
    int32_t blocks[HSDAG_CLUSTER_MAX_DEGREE + 1][HSDAG_CLUSTER_MAX_DEGREE];
    int8_t have[HSDAG_CLUSTER_MAX_DEGREE + 1];
    memset(have, -1, sizeof have);
    memset(p->used, 0, sizeof p->used);
    p->n_used = 0;
    for (int32_t q = 0; q < n; q++) {
        int32_t id = m->kahn[q];
        int32_t k = hsdag_ramp_split(m->comp[id], c->quantum, a);
        p->k[id] = k;
        int32_t *dst = &p->srv[(size_t)id * HSDAG_CLUSTER_MAX_DEGREE];
        if (k > HSDAG_CLUSTER_MAX_DEGREE || m->mem[id] / k > c->worker_mem) return -1;
        int reused = 0;
        for (int32_t t = m->par_off[id]; t < m->par_off[id + 1] && !reused; t++) {
            int32_t par = m->par[t];
            if (p->k[par] ==
                k) { /* the parent's server set has exactly k servers (distinct by construction) */
                memcpy(dst, &p->srv[(size_t)par * HSDAG_CLUSTER_MAX_DEGREE], (size_t)k * sizeof(int32_t));
                reused = 1;
            }
        }
        if (!reused) {
            if (have[k] < 0)
                have[k] = (int8_t)(hsdag_ramp_find_block(blocks[k], c->n_cgs, c->n_racks, c->n_servers, busy,
                                                         k) == 1);
            if (!have[k]) return -1;
            memcpy(dst, blocks[k], (size_t)k * sizeof(int32_t));
        }
        for (int32_t i = 0; i < k; i++)
            if (!p->used[dst[i]]) {
                p->used[dst[i]] = 1;
                p->n_used++;
            }
    }
    (void)W;
    return 0;
}

int32_t cl_job_need_mask(const cl_model *m, const hsdag_cluster_config *c, int32_t a)
{
    int32_t need = 0;
    for (int32_t q = 0; q < m->n; q++) {
        int32_t id = m->kahn[q], k = hsdag_ramp_split(m->comp[id], c->quantum, a), reused = 0;
        if (k > HSDAG_CLUSTER_MAX_DEGREE || m->mem[id] / k > c->worker_mem) return -1;
        for (int32_t t = m->par_off[id]; t < m->par_off[id + 1] && !reused; t++)
            if (hsdag_ramp_split(m->comp[m->par[t]], c->quantum, a) == k) reused = 1;
        if (!reused) need |= 1 << k;
    }
    return need;
}

/* ---- lookahead: build the split graph and simulate one step ---- */
/* A dependency of the split graph. The graph's deps come first (they are parent dependencies), the backward
 * sync pairs after them (not parent dependencies). x is the size in bytes until the run times are set, then
 * the run time. */
typedef struct cl_dep {
    int32_t src, dst;
    double x;
} cl_dep;

static int32_t cl_fwd_of(int32_t id, int32_t n)
{
    return id <= n ? id : 2 * n - id + 1;
}

static int cl_ord(int32_t id, int32_t n)
{
    return id <= n ? 2 * id : 2 * cl_fwd_of(id, n) + 1;
}

int64_t cl_job_split_deps(const cl_model *m, const cl_place *p)
{
    int32_t n = m->n;
    int64_t nd = 0;
    for (int32_t t = 0; t < m->n_edges; t++)
        nd += (int64_t)p->k[cl_fwd_of(m->eu[t], n)] * p->k[cl_fwd_of(m->ev[t], n)];
    for (int32_t id = 1; id <= n; id++) nd += (int64_t)p->k[id] * (p->k[id] - 1);
    return nd;
}

/* collective run time of the deps idx[0..cnt) (sizes in x) */
static double cl_collective(const cl_dep *deps, const int32_t *idx, int32_t cnt, const int32_t *server,
                            const hsdag_cluster_config *c)
{
    uint8_t seen[HSDAG_CLUSTER_MAX_SERVERS], cg[HSDAG_CLUSTER_MAX_SERVERS], rk[HSDAG_CLUSTER_MAX_SERVERS],
        sv[HSDAG_CLUSTER_MAX_SERVERS];
    memset(seen, 0, sizeof seen);
    memset(cg, 0, sizeof cg);
    memset(rk, 0, sizeof rk);
    memset(sv, 0, sizeof sv);
    int32_t n_srv = 0, n_cg = 0, n_rk = 0, n_sv = 0;
    double M = 0;
    for (int32_t t = 0; t < cnt; t++) {
        const cl_dep *d = &deps[idx[t]];
        int32_t ends[2] = {server[d->src], server[d->dst]};
        M += d->x;
        for (int e = 0; e < 2; e++) {
            int32_t s = ends[e];
            if (seen[s]) continue;
            seen[s] = 1;
            n_srv++;
            int32_t si = s % c->n_servers, ri = (s / c->n_servers) % c->n_racks,
                    ci = s / (c->n_servers * c->n_racks);
            if (!cg[ci]) {
                cg[ci] = 1;
                n_cg++;
            }
            if (!rk[ri]) {
                rk[ri] = 1;
                n_rk++;
            }
            if (!sv[si]) {
                sv[si] = 1;
                n_sv++;
            }
        }
    }
    if (n_srv <= 1) return 0.0;
    return hsdag_ramp_allreduce_time(M, n_sv, n_rk, n_cg, c->n_cgs, c->node_bw / c->n_cgs, c->prop_latency,
                                     c->io_latency);
}

/* same multiset of parent and child servers over the group? bal is W zeros and is left zeroed */
static int cl_symmetric(const cl_dep *deps, const int32_t *idx, int32_t cnt, const int32_t *server,
                        int32_t *bal)
{
    int ok = 1;
    for (int32_t t = 0; t < cnt; t++) {
        bal[server[deps[idx[t]].src]]++;
        bal[server[deps[idx[t]].dst]]--;
    }
    for (int32_t t = 0; t < cnt; t++) {
        int32_t a = server[deps[idx[t]].src], b = server[deps[idx[t]].dst];
        if (bal[a] || bal[b]) ok = 0;
        bal[a] = bal[b] = 0;
    }
    return ok;
}

/* Flow completions in the core heap, one event per group of an op's out-deps that arrive at the same time:
 * the op's flows all start at its completion (rel) and its out-deps are sorted by run time (la_out_csr), so
 * the event at t covers out_dep[pos..] while rel + x == t, then moves on to the next run time. Ordered by
 * (time, pos); pos is unique among live events. */
typedef struct cl_ev {
    double t, rel;
    int32_t pos, end;
} cl_ev;

static int cl_ev_less(const void *a, const void *b, void *ctx)
{
    const cl_ev *x = a, *y = b;
    (void)ctx;
    return x->t < y->t || (x->t == y->t && x->pos < y->pos);
}

/* per-server ready ops in the core heap (ctx = op costs): the smallest compute runs, ties to the later op */
static int cl_op_before(const void *a, const void *b, void *ctx)
{
    const double *cost = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return cost[x] < cost[y] || (cost[x] == cost[y] && x > y);
}

/* ---- cl_job_lookahead, step by step ---- */

/* The split job's ops and deps, shared by the steps below (freed by cl_job_lookahead). */
typedef struct cl_la {
    int32_t n_ops, n_deps, n_graph, n_split;
    int32_t *base; /* ops of ddls id: base[id] .. base[id + 1] */
    double *rem, *cost;
    int32_t *server, *npar, *op_id, *out_off, *out_dep;
    cl_dep *deps;
} cl_la;

/* Ops: copies of every ddls id 1..2n, each with its share of the compute and its server; room for nd64
 * deps. 0 or -1 (ENOMEM). */
static int la_ops(cl_la *s, const cl_model *m, const cl_place *p, int64_t nd64)
{
    int32_t n = m->n, N = 2 * n;
    int32_t *base = s->base;
    base[1] = 0;
    for (int32_t id = 1; id <= N; id++) base[id + 1] = base[id] + p->k[cl_fwd_of(id, n)];
    s->n_ops = base[N + 1];
    s->rem = hsdag_malloc((size_t)s->n_ops * sizeof(double));
    s->cost = hsdag_malloc((size_t)s->n_ops * sizeof(double));
    s->server = hsdag_malloc((size_t)s->n_ops * sizeof(int32_t));
    s->npar = hsdag_calloc((size_t)s->n_ops, sizeof(int32_t));
    s->op_id = hsdag_malloc((size_t)s->n_ops * sizeof(int32_t));
    s->deps = hsdag_malloc(((size_t)nd64 + 1) * sizeof(cl_dep));
    if (!s->rem || !s->cost || !s->server || !s->npar || !s->op_id || !s->deps) return -1;
    s->n_split = 0;
    for (int32_t id = 1; id <= N; id++) {
        int32_t f = cl_fwd_of(id, n), k = p->k[f];
        if (k > 1) s->n_split++;
        for (int32_t i = 0; i < k; i++) {
            int32_t o = base[id] + i;
            s->cost[o] = s->rem[o] = m->comp[id] / k;
            s->server[o] = p->srv[(size_t)f * HSDAG_CLUSTER_MAX_DEGREE + i];
            s->op_id[o] = id;
        }
    }
    return 0;
}

/* Deps of every mirrored edge, with ddls's sizes for the split order fwd 1, bwd 1, fwd 2, bwd 2, ... (n_graph
 * of them), then the backward sync pairs, both directions of a pair adjacent. */
static void la_deps(cl_la *s, const cl_model *m, const cl_place *p)
{
    int32_t n = m->n, N = 2 * n, nd = 0;
    const int32_t *base = s->base;
    cl_dep *deps = s->deps;
    for (int32_t t = 0; t < m->n_edges; t++) {
        int32_t X = m->eu[t], Y = m->ev[t];
        int32_t kx = p->k[cl_fwd_of(X, n)], ky = p->k[cl_fwd_of(Y, n)];
        double size;
        if (kx == 1 && ky == 1)
            size = m->mem[X];
        else if (ky == 1)
            size = m->mem[Y] / kx;
        else if (kx == 1)
            size = m->mem[X] / ky;
        else
            size = (cl_ord(X, n) < cl_ord(Y, n) ? m->mem[X] : m->mem[Y]) / ((double)kx * ky);
        for (int32_t i = 0; i < kx; i++)
            for (int32_t j = 0; j < ky; j++) deps[nd++] = (cl_dep){base[X] + i, base[Y] + j, size};
    }
    s->n_graph = nd;
    for (int32_t id = n + 1; id <= N; id++) {
        int32_t k = p->k[cl_fwd_of(id, n)];
        for (int32_t l = 0; l < k; l++)
            for (int32_t q = l + 1; q < k; q++) {
                deps[nd++] = (cl_dep){base[id] + l, base[id] + q, m->mem[id] / k};
                deps[nd++] = (cl_dep){base[id] + q, base[id] + l, m->mem[id] / k};
            }
    }
    s->n_deps = nd;
}

/* Per graph dep: the time of the last symmetric collective group holding it (groups in id order), else -1,
 * into dt_grp. Group g = X (1..n) holds the forward out-deps of split forward op X, g = Y (n+1..2n) the
 * backward in-deps of split backward op Y. A dep is in at most one group but the join edge n -> n+1 (in
 * both; the later group's time wins, as ddls overwrites in op order). A symmetric group (same server
 * multiset on both ends) gets one all-reduce time from its summed sizes. 0 or -1. */
static int la_groups(double *dt_grp, const cl_la *s, const cl_model *m, const cl_place *p,
                     const hsdag_cluster_config *c)
{
    int32_t n = m->n, N = 2 * n, n_graph = s->n_graph, W = c->n_cgs * c->n_racks * c->n_servers, rc = -1;
    const cl_dep *deps = s->deps;
    int32_t *goff = hsdag_calloc((size_t)N + 2, sizeof(int32_t));
    int32_t *grp = hsdag_malloc(((size_t)2 * n_graph + 1) * sizeof(int32_t));
    double *gT = hsdag_malloc(((size_t)N + 2) * sizeof(double));
    int32_t *bal = hsdag_calloc((size_t)W, sizeof(int32_t));
    if (!goff || !grp || !gT || !bal) goto done;
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t t = 0; t < n_graph; t++) {
            int32_t X = s->op_id[deps[t].src], Y = s->op_id[deps[t].dst];
            int32_t g[2] = {X <= n && p->k[X] > 1 ? X : 0, Y > n && p->k[cl_fwd_of(Y, n)] > 1 ? Y : 0};
            for (int q = 0; q < 2; q++) {
                if (!g[q]) continue;
                if (!pass)
                    goff[g[q] + 1]++;
                else
                    grp[goff[g[q]]++] = t;
            }
        }
        if (!pass)
            for (int32_t id = 1; id <= N; id++) goff[id + 1] += goff[id];
        else /* goff[g] now holds the end of g: shift back */
            for (int32_t id = N; id >= 1; id--) goff[id] = goff[id - 1];
    }
    goff[0] = goff[1] = 0;
    for (int32_t id = 1; id <= N; id++) {
        int32_t cnt = goff[id + 1] - goff[id];
        const int32_t *ix = grp + goff[id];
        gT[id] = cnt && cl_symmetric(deps, ix, cnt, s->server, bal)
                     ? cl_collective(deps, ix, cnt, s->server, c)
                     : -1.0;
    }
    for (int32_t t = 0; t < n_graph; t++) dt_grp[t] = -1.0;
    for (int32_t id = 1; id <= N; id++)
        if (gT[id] >= 0)
            for (int32_t q = goff[id]; q < goff[id + 1]; q++) dt_grp[grp[q]] = gT[id];
    rc = 0;
done:
    hsdag_free(goff);
    hsdag_free(grp);
    hsdag_free(gT);
    hsdag_free(bal);
    return rc;
}

/* Run times (ddls sets one-to-one times, then the collective groups of split ops over them): the groups'
 * (la_groups), every sync pair a 2-dep collective, else one-to-one. A dep on one server or of size 0 is not a
 * flow (time 0; so are times that are not positive). All sizes are read before any time is written; parents counted. 0 or -1. */
static int la_times(cl_la *s, const cl_model *m, const cl_place *p, const hsdag_cluster_config *c)
{
    int32_t n_graph = s->n_graph, nd = s->n_deps;
    cl_dep *deps = s->deps;
    const int32_t *server = s->server;
    double *dt_grp = hsdag_malloc(((size_t)n_graph + 1) * sizeof(double));
    if (!dt_grp || la_groups(dt_grp, s, m, p, c) < 0) {
        hsdag_free(dt_grp);
        return -1;
    }
    double tscale = c->time_unit_fix ? 1e3 : 1.0;
    for (int32_t t = n_graph; t < nd; t += 2) { /* each sync pair is a 2-dep collective */
        int32_t pair[2] = {t, t + 1};
        double T = cl_collective(deps, pair, 2, server, c);
        for (int q = 0; q < 2; q++) {
            cl_dep *d = &deps[t + q];
            d->x = server[d->src] == server[d->dst] || d->x == 0 || !(T * tscale > 0) ? 0.0 : T * tscale;
        }
    }
    for (int32_t t = 0; t < n_graph; t++) {
        cl_dep *d = &deps[t];
        int flow = server[d->src] != server[d->dst] && d->x != 0;
        double T = dt_grp[t] >= 0 ? dt_grp[t]
                                  : c->prop_latency + 2.0 * c->io_latency + d->x / (c->node_bw / c->n_cgs);
        d->x = flow && T * tscale > 0 ? T * tscale : 0.0; /* not a flow, NaN, negative: instant */
        s->npar[d->dst]++;
    }
    hsdag_free(dt_grp);
    return 0;
}

/* (run time, dep) of one out-dep, for sorting an op's flows */
typedef struct cl_flow_key {
    double x;
    int32_t dep;
} cl_flow_key;

static int cl_flow_key_cmp(const void *a, const void *b)
{
    const cl_flow_key *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->dep > q->dep) - (p->dep < q->dep);
}

/* Orders the out-deps od[0..cnt) of one op: the instant ones (run time 0) first, in dep order, then the flows
 * by (run time, dep). od comes in dep order, so when the flows alone are in order (the common case) a stable
 * partition does it; else a sort. 0 or -1 (ENOMEM). */
static int la_sort_out(int32_t *od, int32_t cnt, const cl_dep *deps, cl_flow_key **tmp, size_t *cap_tmp)
{
    int sorted = 1;
    int32_t n_flow = 0, last = -1;
    for (int32_t i = 0; i < cnt; i++) {
        double b = deps[od[i]].x;
        if (b <= 0) continue;
        if (last >= 0 && deps[last].x > b) sorted = 0;
        last = od[i];
        n_flow++;
    }
    if (n_flow == 0 || n_flow == cnt) {
        if (sorted) return 0;
    }
    if (hsdag_grow((void **)tmp, cap_tmp, (size_t)cnt, sizeof(cl_flow_key)) < 0) return -1;
    cl_flow_key *k = *tmp;
    if (sorted) { /* stable partition: instant deps in place, the flows after them */
        int32_t z = 0, f = 0;
        for (int32_t i = 0; i < cnt; i++) {
            if (deps[od[i]].x <= 0)
                od[z++] = od[i];
            else
                k[f++].dep = od[i];
        }
        for (int32_t i = 0; i < f; i++) od[z + i] = k[i].dep;
        return 0;
    }
    for (int32_t i = 0; i < cnt; i++) k[i] = (cl_flow_key){deps[od[i]].x, od[i]};
    qsort(k, (size_t)cnt, sizeof(cl_flow_key), cl_flow_key_cmp);
    for (int32_t i = 0; i < cnt; i++) od[i] = k[i].dep;
    return 0;
}

/* The out-dep CSR of the ops, each op's out-deps ordered by run time (la_sort_out). 0 or -1. */
static int la_out_csr(cl_la *s)
{
    int32_t nd = s->n_deps, n_ops = s->n_ops;
    s->out_off = hsdag_calloc((size_t)n_ops + 1, sizeof(int32_t));
    s->out_dep = hsdag_malloc(((size_t)nd + 1) * sizeof(int32_t));
    if (!s->out_off || !s->out_dep) return -1;
    int32_t *out_off = s->out_off;
    for (int32_t t = 0; t < nd; t++) out_off[s->deps[t].src + 1]++;
    for (int32_t o = 0; o < n_ops; o++) out_off[o + 1] += out_off[o];
    for (int32_t t = 0; t < nd; t++) s->out_dep[out_off[s->deps[t].src]++] = t;
    for (int32_t o = n_ops; o > 0; o--) out_off[o] = out_off[o - 1];
    out_off[0] = 0;
    cl_flow_key *tmp = NULL;
    size_t cap_tmp = 0;
    int rc = 0;
    for (int32_t o = 0; o < n_ops && rc == 0; o++)
        rc = la_sort_out(s->out_dep + out_off[o], out_off[o + 1] - out_off[o], s->deps, &tmp, &cap_tmp);
    hsdag_free(tmp);
    return rc;
}

/* One step of the event loop at the next event: ops completing (their heaps popped) and flows arriving go on
 * the stack; the rest of the running ops advance. *now becomes the event's time; 1 if there was an event, 0 if
 * none is left, -1 on ENOMEM. */
static int la_advance(double *now, cl_la *s, hsdag_heap *rh, int32_t W, hsdag_heap *flows, int32_t **stack,
                      size_t *cap_stack, int32_t *sp, int32_t *ops_done)
{
    /* the running op of each server is the top of its heap; the next event */
    double next = INFINITY;
    for (int32_t w = 0; w < W; w++)
        if (rh[w].n) {
            double f = *now + s->rem[*(const int32_t *)hsdag_heap_top(&rh[w])];
            if (f < next) next = f;
        }
    const cl_ev *first = hsdag_heap_top(flows);
    if (first && first->t < next) next = first->t;
    if (next == INFINITY) return 0;
    double dt = next - *now;
    for (int32_t w = 0; w < W; w++) {
        if (!rh[w].n) continue;
        int32_t o = *(const int32_t *)hsdag_heap_top(&rh[w]);
        if (*now + s->rem[o] <= next) { /* completes now */
            s->rem[o] = 0.0;
            hsdag_heap_pop(&rh[w], &o);
            (*ops_done)++;
            if (hsdag_grow((void **)stack, cap_stack, (size_t)*sp + 1, sizeof(int32_t)) < 0) return -1;
            (*stack)[(*sp)++] = o;
        } else {
            s->rem[o] -= dt;
        }
    }
    *now = next;
    for (const cl_ev *top; (top = hsdag_heap_top(flows)) && top->t <= *now;) {
        cl_ev ev;
        hsdag_heap_pop(flows, &ev);
        int32_t q = ev.pos;
        while (q < ev.end && ev.rel + s->deps[s->out_dep[q]].x <= ev.t) q++;
        if (hsdag_grow((void **)stack, cap_stack, (size_t)*sp + (size_t)(q - ev.pos), sizeof(int32_t)) < 0)
            return -1;
        for (int32_t i = ev.pos; i < q; i++) (*stack)[(*sp)++] = -1 - s->out_dep[i];
        if (q < ev.end) { /* the op's next run time */
            ev.pos = q;
            ev.t = ev.rel + s->deps[s->out_dep[q]].x;
            if (hsdag_heap_push(flows, &ev) < 0) return -1;
        }
    }
    return 1;
}

/* The event loop: per server, the ready op with the smallest compute cost runs (ties: the later op),
 * preemptive (a per-server heap); every ready flow runs at full rate from its source op's completion (no
 * sharing under RAMP rules). *step gets the time of one training step. 0 or -1. */
static int la_run(double *step, cl_la *s, const hsdag_cluster_config *c)
{
    int32_t n_ops = s->n_ops, nd = s->n_deps, W = c->n_cgs * c->n_racks * c->n_servers, rc = -1;
    const cl_dep *deps = s->deps;
    int32_t *ready = hsdag_malloc(((size_t)n_ops + 1) * sizeof(int32_t)); /* per-server heaps, packed */
    hsdag_heap *rh = hsdag_malloc((size_t)W * sizeof(hsdag_heap));        /* over slices of ready[] */
    int32_t *roff = hsdag_calloc((size_t)W + 1, sizeof(int32_t)), *stack = NULL;
    size_t cap_stack = 0;
    hsdag_heap flows; /* flow completions (own storage, grown on push) */
    hsdag_heap_init(&flows, sizeof(cl_ev), NULL, 0, cl_ev_less, NULL);
    if (!ready || !rh || !roff) goto done;
    for (int32_t o = 0; o < n_ops; o++) roff[s->server[o] + 1]++;
    for (int32_t w = 0; w < W; w++) roff[w + 1] += roff[w];
    for (int32_t w = 0; w < W; w++)
        hsdag_heap_init(&rh[w], sizeof(int32_t), ready + roff[w], (size_t)(roff[w + 1] - roff[w]),
                        cl_op_before, s->cost);
    int32_t sp = 0, ops_done = 0, deps_done = 0, st;
    double now = 0.0;
    for (int32_t o = 0; o < n_ops; o++) /* a server's heap holds at most its own ops: never full */
        if (s->npar[o] == 0) hsdag_heap_push(&rh[s->server[o]], &o);
    while ((st = la_advance(&now, s, rh, W, &flows, &stack, &cap_stack, &sp, &ops_done)) > 0) {
        /* cascade: finished ops release their deps; finished deps release their children */
        while (sp > 0) {
            int32_t x = stack[--sp];
            if (x >= 0) {
                int32_t t = s->out_off[x], end = s->out_off[x + 1];
                if (hsdag_grow((void **)&stack, &cap_stack, (size_t)sp + (end - t) + 1, sizeof(int32_t)) < 0)
                    goto done;
                for (; t < end && deps[s->out_dep[t]].x <= 0; t++) stack[sp++] = -1 - s->out_dep[t];
                if (t < end) { /* the flows: one event per distinct arrival time */
                    cl_ev ev = {now + deps[s->out_dep[t]].x, now, t, end};
                    if (hsdag_heap_push(&flows, &ev) < 0) goto done;
                }
            } else {
                int32_t d = -1 - x;
                deps_done++;
                if (d < s->n_graph && --s->npar[deps[d].dst] == 0) {
                    int32_t o = deps[d].dst;
                    hsdag_heap_push(&rh[s->server[o]], &o);
                }
            }
        }
    }
    if (st < 0) goto done;
    HSDAG_ASSERT(ops_done == n_ops && deps_done == nd);
    *step = now;
    rc = 0;
done:
    hsdag_heap_free(&flows);
    hsdag_free(stack);
    hsdag_free(ready);
    hsdag_free(rh);
    hsdag_free(roff);
    return rc;
}

int cl_job_lookahead(const cl_model *m, const hsdag_cluster_config *c, const cl_place *p, cl_lookahead *out)
{
    int64_t nd64 = cl_job_split_deps(m, p);
    if (nd64 > HSDAG_CLUSTER_MAX_SPLIT_DEPS) return HSDAG_ELIMIT;
    int rc = HSDAG_ENOMEM;
    cl_la s;
    memset(&s, 0, sizeof s);
    s.base = hsdag_malloc(((size_t)2 * m->n + 2) * sizeof(int32_t));
    double step = 0;
    if (s.base && la_ops(&s, m, p, nd64) == 0) {
        la_deps(&s, m, p);
        HSDAG_ASSERT(s.n_deps == nd64);
        if (la_times(&s, m, p, c) == 0 && la_out_csr(&s) == 0 && la_run(&step, &s, c) == 0) {
            out->step_time = step;
            out->jct = step * c->n_steps;
            out->n_ops = s.n_ops;
            out->n_deps = s.n_deps;
            out->n_split_ops = s.n_split;
            rc = 0;
        }
    }
    hsdag_free(s.base);
    hsdag_free(s.rem);
    hsdag_free(s.cost);
    hsdag_free(s.server);
    hsdag_free(s.npar);
    hsdag_free(s.op_id);
    hsdag_free(s.out_off);
    hsdag_free(s.out_dep);
    hsdag_free(s.deps);
    return rc;
}
