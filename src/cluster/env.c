/* env.c - the PAC-ML cluster environment: job models, job pool with beta requirements, deterministic
 * arrivals,
 *   the blocking rules, the RL step API (observe / step) and the episode metrics.
 * Not here: RAMP placement and the lookahead simulation (ramp.c), built-in policies (policy.c).
 * Entry points: hsdag_cluster_config_default, hsdag_cluster_create/free, hsdag_cluster_check_graph,
 * hsdag_cluster_reset/observe/step/done,
 *   hsdag_cluster_metrics_get, hsdag_cluster_try_place, hsdag_cluster_force_next. */
#include "cluster_internal.h"
#include "hsdag/io.h"

#include <math.h>
#include <string.h>

typedef struct cl_run {
    double start, end, jct, jct_seq;
    int32_t n_srv;
    int32_t *srv; /* W slots */
} cl_run;

struct hsdag_cluster {
    hsdag_cluster_config c;
    int32_t W;
    int32_t K;
    cl_model *models;
    hsdag_beta_dist *beta;
    /* pool */
    int32_t pool_n, pool_pos;
    int32_t *pool_model;
    double *pool_beta;
    int32_t *order;
    hsdag_rng rng;
    /* feature normalisation over the pool's models */
    double lo[8], hi[8];
    double mstat[64][6]; /* per model: mean/median of normalised op compute, op memory, dep size (K <= 64) */
    hsdag_pacml_job pjob[64]; /* the models as the PAC-ML learner sees them (hsdag_cluster_pacml_env) */
    /* state */
    int64_t k_arr, n_arrivals_total, n_decisions;
    int done;
    uint8_t busy[HSDAG_CLUSTER_MAX_SERVERS];
    int32_t n_busy;
    cl_run *run;
    int32_t n_run;
    int32_t forced_model;
    double forced_beta;
    hsdag_cluster_obs obs;
    cl_place place;
    /* metrics */
    hsdag_cluster_metrics met;
    double sum_jct, sum_speedup, demand_acc, util_acc;
};

hsdag_cluster_config hsdag_cluster_config_default(void)
{
    hsdag_cluster_config c;
    memset(&c, 0, sizeof c);
    c.n_cgs = 4;
    c.n_racks = 4;
    c.n_servers = 2;
    c.worker_mem = 80e9;
    c.node_bw = 1.6e12;
    c.prop_latency = 50e-9;
    c.io_latency = 100e-9;
    c.interarrival = 1000.0;
    c.horizon = 1e6;
    c.quantum = 0.01;
    c.n_steps = 50;
    c.replication = 1000;
    c.beta = 'A';
    c.time_unit_fix = 0;
    c.beta_table_seed = 19; /* of seeds 0..29, the PMF closest to the spec table (docs/pacml.md) */
    return c;
}

static void cl_model_free(cl_model *m)
{
    hsdag_graph_free(m->job);
    hsdag_free(m->name);
    hsdag_free(m->comp);
    hsdag_free(m->mem);
    hsdag_free(m->eu);
    hsdag_free(m->ev);
    hsdag_free(m->kahn);
    hsdag_free(m->par_off);
    hsdag_free(m->par);
    hsdag_free(m->pub.node_feat);
    hsdag_free(m->pub.edge_feat);
}

static void cl_mean_median(const float *v, int32_t n, int32_t stride, double *mean, double *median)
{
    double *t = hsdag_malloc(((size_t)n + 1) * sizeof(double));
    double s = 0;
    if (!t || n == 0) {
        hsdag_free(t);
        *mean = *median = 0;
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        t[i] = v[(size_t)i * stride];
        s += t[i];
    }
    qsort(t, (size_t)n, sizeof(double), hsdag_cmp_double);
    *mean = s / n;
    *median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    hsdag_free(t);
}

/* ---- one job model, step by step ---- */

/* Per-id compute and memory, the edges in ddls ids and the forward parents (in increasing id: edges are
 * sorted by source index = id order for these graphs). Returns the totals; -1 on ENOMEM. */
static int cl_model_ids(cl_model *m, double *tot_comp, double *tot_mem, double *tot_dep)
{
    const hsdag_graph *g = m->job;
    int32_t N = g->n_nodes, n = m->n;
    *tot_comp = *tot_mem = *tot_dep = 0;
    for (int32_t v = 0; v < N; v++) {
        int32_t id = g->file_id[v];
        double cm = g->cost_ms[(size_t)v * HSDAG_COST_KINDS_ + HSDAG_COST_ACCEL];
        m->comp[id] = isfinite(cm) ? cm : 0.0;
        m->mem[id] = isfinite(g->mem_bytes[v]) ? g->mem_bytes[v] : 0.0;
        *tot_mem += m->mem[id];
        *tot_comp += m->comp[id];
    }
    for (int32_t k = 0; k < g->n_edges; k++) {
        m->eu[k] = g->file_id[g->edge_src[k]];
        m->ev[k] = g->file_id[g->out_dst[k]];
        *tot_dep += g->edge_bytes[k];
        if (m->eu[k] <= n && m->ev[k] <= n) m->par_off[m->ev[k] + 1]++;
    }
    for (int32_t i = 1; i <= n; i++) m->par_off[i + 1] += m->par_off[i];
    int32_t *fill = hsdag_calloc((size_t)n + 2, sizeof(int32_t));
    if (!fill) return -1;
    for (int32_t k = 0; k < g->n_edges; k++)
        if (m->eu[k] <= n && m->ev[k] <= n) m->par[m->par_off[m->ev[k]] + fill[m->ev[k]]++] = m->eu[k];
    hsdag_free(fill);
    return 0;
}

/* Kahn BFS over the forward graph, sources seeded in id order (indeg: n + 2 slots of scratch). */
static void cl_model_kahn(cl_model *m, int32_t *indeg)
{
    const hsdag_graph *g = m->job;
    int32_t N = g->n_nodes, n = m->n, qh = 0, qt = 0;
    for (int32_t i = 1; i <= n; i++) {
        indeg[i] = m->par_off[i + 1] - m->par_off[i];
        if (!indeg[i]) m->kahn[qt++] = i;
    }
    while (qh < qt) {
        int32_t u = m->kahn[qh++];
        int32_t v = -1;
        for (v = 0; v < N && g->file_id[v] != u; v++) {}
        for (int32_t t = g->out_off[v]; t < g->out_off[v + 1]; t++) {
            int32_t w = g->file_id[g->out_dst[t]];
            if (w <= n && --indeg[w] == 0) m->kahn[qt++] = w;
        }
    }
    HSDAG_ASSERT(qt == n);
}

/* Node features: compute, is-max, memory, is-max, depth (nodes on the shortest path from the first source);
 * edge features: size, is-max. depth and queue: 2n + 1 slots of scratch. */
static void cl_model_features(cl_model *m, int32_t *depth, int32_t *queue)
{
    const hsdag_graph *g = m->job;
    int32_t N = g->n_nodes;
    double mc = 0, mm = 0;
    for (int32_t v = 0; v < N; v++) {
        double cm = m->comp[g->file_id[v]], me = m->mem[g->file_id[v]];
        if (cm > mc) mc = cm;
        if (me > mm) mm = me;
    }
    int32_t src = -1;
    for (int32_t v = 0; v < N && src < 0; v++)
        if (g->in_off[v + 1] == g->in_off[v] && g->file_id[v] == 1) src = v;
    for (int32_t v = 0; v < N && src < 0; v++)
        if (g->in_off[v + 1] == g->in_off[v]) src = v;
    int32_t qh = 0, qt = 0, maxd = 0;
    depth[src] = 1;
    queue[qt++] = src;
    while (qh < qt) {
        int32_t u = queue[qh++];
        if (depth[u] > maxd) maxd = depth[u];
        for (int32_t t = g->out_off[u]; t < g->out_off[u + 1]; t++)
            if (!depth[g->out_dst[t]]) {
                depth[g->out_dst[t]] = depth[u] + 1;
                queue[qt++] = g->out_dst[t];
            }
    }
    m->pub.max_depth = maxd;
    for (int32_t v = 0; v < N; v++) {
        float *f = &m->pub.node_feat[(size_t)v * HSDAG_CLUSTER_NODE_FEATS];
        double cm = m->comp[g->file_id[v]], me = m->mem[g->file_id[v]];
        f[0] = mc > 0 ? (float)(cm / mc) : 0.f;
        f[1] = cm == mc ? 1.f : 0.f;
        f[2] = mm > 0 ? (float)(me / mm) : 0.f;
        f[3] = me == mm ? 1.f : 0.f;
        f[4] = maxd > 0 ? (float)depth[v] / (float)maxd : 0.f;
    }
    double ms = 0;
    for (int32_t k = 0; k < g->n_edges; k++)
        if (g->edge_bytes[k] > ms) ms = g->edge_bytes[k];
    for (int32_t k = 0; k < g->n_edges; k++) {
        float *f = &m->pub.edge_feat[(size_t)k * HSDAG_CLUSTER_EDGE_FEATS];
        f[0] = ms > 0 ? (float)(g->edge_bytes[k] / ms) : 0.f;
        f[1] = g->edge_bytes[k] == ms ? 1.f : 0.f;
    }
}

/* The dependencies of the split graphs the lookahead simulates (degree 1 and every even degree with a block
 * shape), summed into *sum; refuses (ELIMIT) a degree above HSDAG_CLUSTER_MAX_SPLIT_DEPS. p is scratch of
 * m->n + 1 ops. 0 or -1. */
static int cl_model_split_deps(int64_t *sum, const cl_model *m, const hsdag_cluster_config *c, cl_place *p,
                               const char *name, hsdag_err *e)
{
    int32_t W = c->n_cgs * c->n_racks * c->n_servers;
    uint8_t busy[HSDAG_CLUSTER_MAX_SERVERS];
    memset(busy, 0, sizeof busy);
    *sum = 0;
    for (int32_t a = 1; a <= HSDAG_CLUSTER_MAX_DEGREE; a += a == 1 ? 1 : 2) {
        if (a > W || !cl_degree_has_shape(c->n_cgs, c->n_racks, c->n_servers, a) ||
            cl_job_place(m, c, busy, a, p) < 0)
            continue;
        long long nd = (long long)cl_job_split_deps(m, p);
        if (nd > HSDAG_CLUSTER_MAX_SPLIT_DEPS)
            return hsdag_err_set(
                e, HSDAG_ELIMIT,
                "%s: split at degree %d the graph has %lld dependencies, above the simulator's "
                "limit of %d",
                name, a, nd, HSDAG_CLUSTER_MAX_SPLIT_DEPS);
        *sum += nd;
    }
    return 0;
}

/* The lookahead JCT of every degree on an empty cluster (ddls caches it per (model, degree)). 0 or -1. */
static int cl_model_jcts(cl_model *m, const hsdag_cluster_config *c, const char *name, hsdag_err *e)
{
    int32_t W = c->n_cgs * c->n_racks * c->n_servers, n = m->n;
    uint8_t busy[HSDAG_CLUSTER_MAX_SERVERS];
    memset(busy, 0, sizeof busy);
    cl_place p;
    memset(&p, 0, sizeof p);
    p.k = hsdag_calloc((size_t)n + 1, sizeof(int32_t));
    p.srv = hsdag_calloc(((size_t)n + 1) * HSDAG_CLUSTER_MAX_DEGREE, sizeof(int32_t));
    int rc = p.k && p.srv ? 0 : hsdag_err_set(e, HSDAG_ENOMEM, "cluster: out of memory");
    int64_t sum = 0;
    /* refuse a graph too large to simulate before simulating any degree */
    if (rc == 0) rc = cl_model_split_deps(&sum, m, c, &p, name, e);
    for (int32_t a = 0; a <= HSDAG_CLUSTER_MAX_DEGREE && rc == 0; a++) {
        m->pub.jct[a] = NAN;
        m->pub.n_servers_empty[a] = -1;
        m->pub.n_split_ops[a] = m->pub.n_part_ops[a] = m->pub.n_part_deps[a] = -1;
        m->need[a] = a ? cl_job_need_mask(m, c, a) : -1;
        if (a == 0 || a > W || (a > 1 && a % 2) ||
            !cl_degree_has_shape(c->n_cgs, c->n_racks, c->n_servers, a))
            continue;
        if (cl_job_place(m, c, busy, a, &p) < 0) continue;
        cl_lookahead la;
        if (cl_job_lookahead(m, c, &p, &la) < 0) { /* ENOMEM: the size was checked above */
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "cluster: out of memory");
            break;
        }
        m->pub.jct[a] = la.jct;
        m->pub.n_servers_empty[a] = p.n_used;
        m->pub.n_split_ops[a] = la.n_split_ops / 2;
        m->pub.n_part_ops[a] = la.n_ops;
        m->pub.n_part_deps[a] = la.n_deps;
    }
    hsdag_free(p.k);
    hsdag_free(p.srv);
    return rc;
}

/* Builds one model from a PipeDream forward graph. */
static int cl_model_build(cl_model *m, const hsdag_cluster_config *c, const hsdag_graph *fwd,
                          const char *name, int with_jcts, hsdag_err *e)
{
    int rc = hsdag_pipedream_mirror(&m->job, fwd, e);
    if (rc < 0) return rc;
    const hsdag_graph *g = m->job;
    int32_t N = g->n_nodes, n = N / 2;
    m->n = n;
    m->n_edges = g->n_edges;
    size_t nlen = strlen(name) + 1;
    m->name = hsdag_malloc(nlen);
    m->comp = hsdag_calloc((size_t)N + 1, sizeof(double));
    m->mem = hsdag_calloc((size_t)N + 1, sizeof(double));
    m->eu = hsdag_malloc(((size_t)g->n_edges + 1) * sizeof(int32_t));
    m->ev = hsdag_malloc(((size_t)g->n_edges + 1) * sizeof(int32_t));
    m->kahn = hsdag_malloc(((size_t)n + 1) * sizeof(int32_t));
    m->par_off = hsdag_calloc((size_t)n + 2, sizeof(int32_t));
    m->par = hsdag_malloc(((size_t)g->n_edges + 1) * sizeof(int32_t));
    m->pub.node_feat = hsdag_calloc((size_t)N * HSDAG_CLUSTER_NODE_FEATS + 1, sizeof(float));
    m->pub.edge_feat = hsdag_calloc((size_t)g->n_edges * HSDAG_CLUSTER_EDGE_FEATS + 1, sizeof(float));
    int32_t *indeg = hsdag_calloc((size_t)n + 2, sizeof(int32_t));
    int32_t *depth = hsdag_calloc((size_t)N + 1, sizeof(int32_t));
    int32_t *queue = hsdag_malloc(((size_t)N + 1) * sizeof(int32_t));
    double tot_comp, tot_mem, tot_dep;
    if (!m->name || !m->comp || !m->mem || !m->eu || !m->ev || !m->kahn || !m->par_off || !m->par ||
        !m->pub.node_feat || !m->pub.edge_feat || !indeg || !depth || !queue)
        goto oom;
    memcpy(m->name, name, nlen);
    if (cl_model_ids(m, &tot_comp, &tot_mem, &tot_dep) < 0) goto oom;
    cl_model_kahn(m, indeg);
    m->pub.name = m->name;
    m->pub.job = g;
    m->pub.n_fwd = n;
    m->pub.jct_seq = c->n_steps * tot_comp;
    m->pub.total_op_mem = tot_mem;
    m->pub.total_dep_size = tot_dep;
    cl_model_features(m, depth, queue);
    if (with_jcts && (rc = cl_model_jcts(m, c, name, e)) < 0) goto done;
    rc = 0;
    goto done;
oom:
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "cluster: out of memory");
done:
    hsdag_free(indeg);
    hsdag_free(depth);
    hsdag_free(queue);
    return rc;
}

int32_t hsdag_cluster_n_models(const hsdag_cluster *env)
{
    return env->K;
}
const hsdag_cluster_model *hsdag_cluster_model_get(const hsdag_cluster *env, int32_t i)
{
    return i >= 0 && i < env->K ? &env->models[i].pub : NULL;
}
const hsdag_cluster_config *hsdag_cluster_config_get(const hsdag_cluster *env)
{
    return &env->c;
}
const hsdag_pacml_job *cl_env_jobs(const hsdag_cluster *env)
{
    return env->pjob;
}

void hsdag_cluster_free(hsdag_cluster *env)
{
    if (!env) return;
    if (env->models) /* NULL when its own allocation failed in create */
        for (int32_t i = 0; i < env->K; i++) cl_model_free(&env->models[i]);
    hsdag_free(env->models);
    hsdag_beta_free(env->beta);
    hsdag_free(env->pool_model);
    hsdag_free(env->pool_beta);
    hsdag_free(env->order);
    if (env->run)
        for (int32_t i = 0; i < env->W; i++) hsdag_free(env->run[i].srv);
    hsdag_free(env->run);
    hsdag_free(env->place.k);
    hsdag_free(env->place.srv);
    hsdag_free(env);
}

static int cl_config_check(const hsdag_cluster_config *c, hsdag_err *e)
{
    int64_t W = (int64_t)c->n_cgs * c->n_racks * c->n_servers;
    if (c->n_cgs < 1 || c->n_racks < 1 || c->n_servers < 1 || W > HSDAG_CLUSTER_MAX_SERVERS)
        return hsdag_err_set(e, HSDAG_EINVAL, "cluster: shape %dx%dx%d: need 1..%d servers", c->n_cgs,
                             c->n_racks, c->n_servers, HSDAG_CLUSTER_MAX_SERVERS);
    if (!(c->worker_mem > 0) || !(c->node_bw > 0) || !(c->prop_latency >= 0) || !(c->io_latency >= 0) ||
        !(c->interarrival > 0) || !(c->horizon >= 0) || !(c->quantum > 0) || c->n_steps < 1 ||
        c->replication < 1 || c->replication > HSDAG_CLUSTER_MAX_REPLICATION || !isfinite(c->horizon) ||
        c->horizon / c->interarrival > 1e8)
        return hsdag_err_set(e, HSDAG_EINVAL, "cluster: configuration value out of range");
    if (c->beta < 'A' || c->beta > 'D')
        return hsdag_err_set(e, HSDAG_EINVAL, "cluster: beta must be A, B, C or D");
    return 0;
}

int hsdag_cluster_check_graph(const hsdag_cluster_config *c, const hsdag_graph *fwd, const char *name,
                              size_t src_bytes, hsdag_err *e)
{
    int rc = cl_config_check(c, e);
    if (rc < 0) return rc;
    cl_model m;
    memset(&m, 0, sizeof m);
    cl_place p;
    memset(&p, 0, sizeof p);
    int64_t sum = 0;
    if ((rc = cl_model_build(&m, c, fwd, name, 0, e)) == 0) {
        p.k = hsdag_calloc((size_t)m.n + 1, sizeof(int32_t));
        p.srv = hsdag_calloc(((size_t)m.n + 1) * HSDAG_CLUSTER_MAX_DEGREE, sizeof(int32_t));
        rc = p.k && p.srv ? cl_model_split_deps(&sum, &m, c, &p, name, e)
                          : hsdag_err_set(e, HSDAG_ENOMEM, "cluster: out of memory");
    }
    double cap = HSDAG_CLUSTER_DEPS_BASE + HSDAG_CLUSTER_DEPS_PER_BYTE * (double)src_bytes;
    if (rc == 0 && (double)sum > cap)
        rc = hsdag_err_set(
            e, HSDAG_ELIMIT,
            "%s: the lookahead would simulate %lld dependencies for a %zu-byte graph, above the "
            "limit of %d + %d per byte",
            name, (long long)sum, src_bytes, HSDAG_CLUSTER_DEPS_BASE, HSDAG_CLUSTER_DEPS_PER_BYTE);
    cl_model_free(&m);
    hsdag_free(p.k);
    hsdag_free(p.srv);
    return rc;
}

int hsdag_cluster_create(hsdag_cluster **out, const hsdag_cluster_config *c, const hsdag_graph *const *graphs,
                         const char *const *names, int32_t n_graphs, hsdag_err *e)
{
    *out = NULL;
    int rc = cl_config_check(c, e);
    if (rc < 0) return rc;
    if (graphs && (n_graphs < 1 || n_graphs > 64))
        return hsdag_err_set(e, HSDAG_EINVAL, "cluster: need 1..64 graphs");
    hsdag_cluster *env = hsdag_calloc(1, sizeof *env);
    if (!env) return hsdag_err_set(e, HSDAG_ENOMEM, "cluster: out of memory");
    env->c = *c;
    env->W = c->n_cgs * c->n_racks * c->n_servers;
    env->K = graphs ? n_graphs : 5;
    env->forced_model = -1;
    env->models = hsdag_calloc((size_t)env->K, sizeof(cl_model));
    env->beta = hsdag_beta_create(c->beta, c->beta_table_seed);
    env->run = hsdag_calloc((size_t)env->W, sizeof(cl_run));
    if (!env->models || !env->beta || !env->run) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "cluster: out of memory");
        goto fail;
    }
    for (int32_t i = 0; i < env->W; i++) {
        env->run[i].srv = hsdag_malloc((size_t)env->W * sizeof(int32_t));
        if (!env->run[i].srv) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "cluster: out of memory");
            goto fail;
        }
    }
    int32_t maxn = 1;
    for (int32_t i = 0; i < env->K; i++) {
        if (graphs) {
            char nm[32];
            snprintf(nm, sizeof nm, "graph%d", i);
            rc = cl_model_build(&env->models[i], c, graphs[i], names && names[i] ? names[i] : nm, 1, e);
        } else {
            const char *nm = NULL;
            hsdag_buf b = {0};
            hsdag_graph *fwd = NULL;
            rc = hsdag_cluster_builtin_graph(&nm, &b, i);
            if (rc == 0)
                rc = hsdag_pipedream_read(&fwd, b.data, b.len, nm, e);
            else
                hsdag_err_set(e, rc, "cluster: out of memory");
            if (rc == 0) rc = cl_model_build(&env->models[i], c, fwd, nm, 1, e);
            hsdag_graph_free(fwd);
            hsdag_buf_free(&b);
        }
        if (rc < 0) goto fail;
        if (env->models[i].n > maxn) maxn = env->models[i].n;
    }
    env->place.k = hsdag_calloc((size_t)maxn + 1, sizeof(int32_t));
    env->place.srv = hsdag_calloc(((size_t)maxn + 1) * HSDAG_CLUSTER_MAX_DEGREE, sizeof(int32_t));
    if ((int64_t)env->K * c->replication > INT32_MAX / (int64_t)sizeof(double)) {
        rc = hsdag_err_set(e, HSDAG_EINVAL, "cluster: a job pool of %d graphs x %d copies is too large",
                           (int)env->K, (int)c->replication);
        goto fail;
    }
    env->pool_n = env->K * c->replication;
    env->pool_model = hsdag_malloc((size_t)env->pool_n * sizeof(int32_t));
    env->pool_beta = hsdag_malloc((size_t)env->pool_n * sizeof(double));
    env->order = hsdag_malloc((size_t)env->pool_n * sizeof(int32_t));
    if (!env->place.k || !env->place.srv || !env->pool_model || !env->pool_beta || !env->order) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "cluster: out of memory");
        goto fail;
    }
    /* min-max over the pool's models: ops, deps, jct_seq, max acceptable jct, op memory, dep size */
    for (int q = 0; q < 8; q++) {
        env->lo[q] = INFINITY;
        env->hi[q] = -INFINITY;
    }
    for (int32_t i = 0; i < env->K; i++) {
        const hsdag_cluster_model *m = &env->models[i].pub;
        double v[8] = {m->job->n_nodes, m->job->n_edges,   m->jct_seq, 0.1 * m->jct_seq,
                       m->total_op_mem, m->total_dep_size, c->n_steps, m->jct_seq};
        for (int q = 0; q < 8; q++) {
            if (v[q] < env->lo[q]) env->lo[q] = v[q];
            if (v[q] > env->hi[q]) env->hi[q] = v[q];
        }
        const hsdag_graph *g = m->job;
        cl_mean_median(m->node_feat + 0, g->n_nodes, HSDAG_CLUSTER_NODE_FEATS, &env->mstat[i][0],
                       &env->mstat[i][1]);
        cl_mean_median(m->node_feat + 2, g->n_nodes, HSDAG_CLUSTER_NODE_FEATS, &env->mstat[i][2],
                       &env->mstat[i][3]);
        cl_mean_median(m->edge_feat + 0, g->n_edges, HSDAG_CLUSTER_EDGE_FEATS, &env->mstat[i][4],
                       &env->mstat[i][5]);
    }
    env->hi[3] = env->hi[7]; /* max acceptable JCT spans [0.1 min jct_seq, 1.0 max jct_seq] */
    for (int32_t i = 0; i < env->K; i++) {
        const hsdag_cluster_model *m = &env->models[i].pub;
        hsdag_pacml_job j = {m->name, m->job, m->node_feat, m->edge_feat};
        env->pjob[i] = j;
    }
    env->done = 1;
    *out = env;
    return 0;
fail:
    hsdag_cluster_free(env);
    return rc;
}

/* ---- episode ---- */
static double cl_norm(const hsdag_cluster *env, int q, double v)
{
    double d = env->hi[q] - env->lo[q];
    return d > 0 ? (v - env->lo[q]) / d : 0.0;
}

static void cl_shuffle(hsdag_cluster *env)
{
    for (int32_t i = env->pool_n - 1; i > 0; i--) {
        int32_t j = (int32_t)hsdag_rng_below(&env->rng, (uint32_t)i + 1);
        int32_t t = env->order[i];
        env->order[i] = env->order[j];
        env->order[j] = t;
    }
    env->pool_pos = 0;
}

static void cl_fill_obs(hsdag_cluster *env)
{
    hsdag_cluster_obs *o = &env->obs;
    const hsdag_cluster_config *c = &env->c;
    const hsdag_cluster_model *m = &env->models[o->model].pub;
    o->m = m;
    o->max_jct = o->beta * m->jct_seq;
    o->free_workers = env->W - env->n_busy;
    o->jobs_running = env->n_run;
    memset(o->mask, 0, sizeof o->mask);
    o->mask[0] = 1;
    for (int32_t a = 1; a <= HSDAG_CLUSTER_MAX_DEGREE; a++)
        o->mask[a] = a <= o->free_workers && (a == 1 || a % 2 == 0) &&
                     cl_degree_has_shape(c->n_cgs, c->n_racks, c->n_servers, a);
    float *f = o->graph_feat;
    f[0] = (float)cl_norm(env, 0, m->job->n_nodes);
    f[1] = (float)cl_norm(env, 1, m->job->n_edges);
    f[2] = (float)cl_norm(env, 2, m->jct_seq);
    f[3] = (float)cl_norm(env, 3, o->max_jct);
    f[4] = (float)((o->beta - 0.1) / 0.9);
    f[5] = (float)o->beta;
    f[6] = (float)cl_norm(env, 4, m->total_op_mem);
    f[7] = (float)cl_norm(env, 5, m->total_dep_size);
    f[8] = (float)cl_norm(env, 6, c->n_steps);
    for (int q = 0; q < 6; q++) f[9 + q] = (float)env->mstat[o->model][q];
    f[15] = (float)env->n_busy / (float)env->W;
    f[16] = (float)env->n_run / (float)env->W;
    for (int32_t a = 0; a < HSDAG_CLUSTER_N_ACTIONS; a++) f[HSDAG_CLUSTER_GRAPH_FEATS + a] = o->mask[a];
}

static void cl_next_job(hsdag_cluster *env)
{
    if (env->pool_pos >= env->pool_n) cl_shuffle(env); /* remove and repeat */
    int32_t j = env->order[env->pool_pos++];
    env->obs.model = env->pool_model[j];
    env->obs.beta = env->pool_beta[j];
    if (env->forced_model >= 0) {
        env->obs.model = env->forced_model;
        env->obs.beta = env->forced_beta;
        env->forced_model = -1;
    }
    env->obs.now = (double)env->k_arr * env->c.interarrival;
    cl_fill_obs(env);
}

/* completes running jobs with end <= t */
static void cl_complete_until(hsdag_cluster *env, double t)
{
    for (int32_t i = 0; i < env->n_run;) {
        cl_run *r = &env->run[i];
        if (r->end <= t) {
            env->met.jobs_completed++;
            env->sum_jct += r->jct;
            env->sum_speedup += r->jct > 0 ? r->jct_seq / r->jct : 1.0; /* a zero-compute job: no speed-up */
            for (int32_t s = 0; s < r->n_srv; s++) env->busy[r->srv[s]] = 0;
            env->n_busy -= r->n_srv;
            /* swap with the last (the srv buffers move with it) */
            cl_run tmp = env->run[i];
            env->run[i] = env->run[env->n_run - 1];
            env->run[env->n_run - 1] = tmp;
            env->n_run--;
        } else {
            i++;
        }
    }
}

void hsdag_cluster_reset(hsdag_cluster *env, uint64_t seed)
{
    hsdag_rng_seed(&env->rng, seed);
    for (int32_t i = 0; i < env->pool_n; i++) {
        env->pool_model[i] = i % env->K;
        env->pool_beta[i] = hsdag_beta_sample(env->beta, &env->rng);
        env->order[i] = i;
    }
    cl_shuffle(env);
    memset(env->busy, 0, sizeof env->busy);
    env->n_busy = 0;
    env->n_run = 0;
    memset(&env->met, 0, sizeof env->met);
    env->sum_jct = env->sum_speedup = env->demand_acc = env->util_acc = 0;
    env->k_arr = 0;
    /* arrivals at k * interarrival for every k with k * interarrival <= horizon; those before the horizon are
     * decided */
    env->n_arrivals_total = (int64_t)floor(env->c.horizon / env->c.interarrival * (1 + 1e-12)) + 1;
    env->n_decisions = 0;
    while ((double)env->n_decisions * env->c.interarrival < env->c.horizon) env->n_decisions++;
    env->done = env->n_decisions == 0;
    if (env->done) {
        env->met.jobs_arrived = env->n_arrivals_total;
        return;
    }
    cl_next_job(env);
}

int hsdag_cluster_done(const hsdag_cluster *env)
{
    return env->done;
}
const hsdag_cluster_obs *hsdag_cluster_observe(const hsdag_cluster *env)
{
    return env->done ? NULL : &env->obs;
}

void hsdag_cluster_force_next(hsdag_cluster *env, int32_t model, double beta)
{
    if (model >= env->K) return;
    env->forced_model = model;
    env->forced_beta = beta;
}

int32_t hsdag_cluster_try_place(const hsdag_cluster *env, int a)
{
    if (env->done || a < 1 || a > HSDAG_CLUSTER_MAX_DEGREE) return -1;
    cl_place *p = (cl_place *)&env->place; /* scratch only */
    if (cl_job_place(&env->models[env->obs.model], &env->c, env->busy, a, p) < 0) return -1;
    return p->n_used;
}

int32_t hsdag_cluster_try_place_servers(const hsdag_cluster *env, int a, uint8_t *used)
{
    int32_t k = hsdag_cluster_try_place(env, a);
    if (used) {
        memset(used, 0, (size_t)env->W);
        if (k >= 0) memcpy(used, env->place.used, (size_t)env->W);
    }
    return k;
}

void hsdag_cluster_server_until(const hsdag_cluster *env, double *until)
{
    for (int32_t s = 0; s < env->W; s++) until[s] = 0.0;
    for (int32_t i = 0; i < env->n_run; i++)
        for (int32_t s = 0; s < env->run[i].n_srv; s++) until[env->run[i].srv[s]] = env->run[i].end;
}

/* Which of refused_no_worker / _no_fit / _by_choice the current job's refusal is (env->place as scratch). */
static void cl_count_refusal(hsdag_cluster *env)
{
    const hsdag_cluster_obs *o = &env->obs;
    if (o->free_workers == 0) {
        env->met.refused_no_worker++;
        return;
    }
    for (int d = 1; d < HSDAG_CLUSTER_N_ACTIONS; d++)
        if (o->mask[d] && o->m->jct[d] <= o->max_jct && hsdag_cluster_try_place(env, d) >= 0) {
            env->met.refused_by_choice++;
            return;
        }
    env->met.refused_no_fit++;
}

int hsdag_cluster_step(hsdag_cluster *env, int action, double *reward)
{
    if (env->done) return HSDAG_EINVAL;
    const hsdag_cluster_obs *o = &env->obs;
    const cl_model *cm = &env->models[o->model];
    int a = action >= 0 && action < HSDAG_CLUSTER_N_ACTIONS && o->mask[action] ? action : 0;
    int accepted = 0;
    env->met.decisions_per_degree[a]++;
    if (a == 0) {
        env->met.blocked_action0++;
        cl_count_refusal(env);
    } else if (cl_job_place(cm, &env->c, env->busy, a, &env->place) < 0) {
        env->met.blocked_placement++;
    } else if (!(cm->pub.jct[a] <= o->max_jct)) { /* blocked if JCT > beta * JCT_seq (or not computable) */
        env->met.blocked_jct++;
    } else {
        accepted = 1;
        cl_run *r = &env->run[env->n_run++];
        r->start = o->now;
        r->jct = cm->pub.jct[a];
        r->end = o->now + r->jct;
        r->jct_seq = cm->pub.jct_seq;
        r->n_srv = 0;
        for (int32_t s = 0; s < env->W; s++)
            if (env->place.used[s]) {
                HSDAG_ASSERT(!env->busy[s]);
                env->busy[s] = 1;
                r->srv[r->n_srv++] = s;
            }
        env->n_busy += r->n_srv;
        double span = (r->end < env->c.horizon ? r->end : env->c.horizon) - r->start;
        env->demand_acc += r->jct > 0 ? (cm->pub.total_op_mem + cm->pub.total_dep_size) * span / r->jct : 0.0;
        env->util_acc += r->n_srv * span;
        env->met.jobs_accepted_at_decision++;
    }
    double rw = accepted ? 1.0 : -1.0;
    env->met.return_ += rw;
    if (reward) *reward = rw;
    env->k_arr++;
    if (env->k_arr < env->n_decisions) {
        cl_complete_until(env, (double)env->k_arr * env->c.interarrival);
        cl_next_job(env);
        return 0;
    }
    /* end of episode: finish what ends by the horizon, block the rest */
    cl_complete_until(env, env->c.horizon);
    env->met.blocked_horizon = env->n_run;
    for (int32_t i = 0; i < env->n_run; i++) {
        for (int32_t s = 0; s < env->run[i].n_srv; s++) env->busy[env->run[i].srv[s]] = 0;
    }
    env->n_busy = 0;
    env->n_run = 0;
    env->met.jobs_arrived = env->n_arrivals_total;
    env->done = 1;
    return 0;
}

void hsdag_cluster_metrics_get(const hsdag_cluster *env, hsdag_cluster_metrics *m)
{
    *m = env->met;
    m->jobs_arrived = env->done ? env->n_arrivals_total : env->k_arr + 1;
    m->jobs_decided = env->done ? env->n_decisions : env->k_arr;
    m->jobs_blocked = m->blocked_action0 + m->blocked_placement + m->blocked_jct + m->blocked_horizon;
    m->blocking_rate = m->jobs_arrived ? (double)m->jobs_blocked / (double)m->jobs_arrived : 0.0;
    m->acceptance_rate = m->jobs_arrived ? (double)m->jobs_completed / (double)m->jobs_arrived : 0.0;
    m->mean_jct = m->jobs_completed ? env->sum_jct / (double)m->jobs_completed : NAN;
    m->mean_speedup = m->jobs_completed ? env->sum_speedup / (double)m->jobs_completed : NAN;
    double T = env->c.horizon > 0 ? env->c.horizon : 1.0;
    m->throughput = env->demand_acc / T;
    m->utilisation = env->util_acc / (T * env->W);
}

/* ---- the lookahead heuristic (policy "lookahead") ----
 * For each degree the waiting job could take now (valid, meets beta * JCT_seq by its cached JCT, placeable
 * now,
 * finishes by the horizon), look at the next horizon_steps arrival times: which servers would still be busy
 * (running jobs by their known end times, plus this job), which block sizes first fit could still find, and
 * so
 * the probability that an arriving job (uniform over the pool's models, beta from the env's distribution)
 * could be accepted at its best degree. Take the degree with the highest summed probability; ties go to the
 * least worker-time (servers x JCT), then the smaller degree. No candidate: action 0. */
int cl_env_lookahead_action(const hsdag_cluster *env, int horizon_steps, int floor_degree)
{
    const hsdag_cluster_obs *o = &env->obs;
    const hsdag_cluster_config *c = &env->c;
    const cl_model *cm = &env->models[o->model];
    double until[HSDAG_CLUSTER_MAX_SERVERS];
    uint8_t fut[HSDAG_CLUSTER_MAX_SERVERS];
    int32_t blk[HSDAG_CLUSTER_MAX_DEGREE];
    for (int32_t s = 0; s < env->W; s++) until[s] = 0.0;
    for (int32_t i = 0; i < env->n_run; i++)
        for (int32_t s = 0; s < env->run[i].n_srv; s++) until[env->run[i].srv[s]] = env->run[i].end;
    int best = 0;
    double best_score = -1.0, best_cost = INFINITY;
    cl_place *p = (cl_place *)&env->place;
    for (int pass = 0; pass < 2 && best == 0; pass++)
        for (int a = 1; a < HSDAG_CLUSTER_N_ACTIONS; a++) {
            double jct = cm->pub.jct[a];
            if (!o->mask[a] || !(jct <= o->max_jct) || o->now + jct > c->horizon) continue;
            if (pass == 0 && a < floor_degree) continue;
            if (cl_job_place(cm, c, env->busy, a, p) < 0) continue;
            double cost = p->n_used * jct, score = 0.0;
            for (int h = 1; h <= horizon_steps; h++) {
                double t = o->now + h * c->interarrival;
                if (t >= c->horizon) break;
                int32_t nfree = 0;
                for (int32_t s = 0; s < env->W; s++) {
                    fut[s] = until[s] > t || (p->used[s] && o->now + jct > t);
                    nfree += !fut[s];
                }
                int32_t avail = 0;
                for (int32_t k = 1; k <= HSDAG_CLUSTER_MAX_DEGREE; k++)
                    if ((k == 1 || k % 2 == 0) && k <= nfree &&
                        hsdag_ramp_find_block(blk, c->n_cgs, c->n_racks, c->n_servers, fut, k) == 1)
                        avail |= 1 << k;
                double acc = 0.0;
                for (int32_t mi = 0; mi < env->K; mi++) {
                    const cl_model *mm = &env->models[mi];
                    double rmin = INFINITY;
                    for (int32_t k = 1; k <= HSDAG_CLUSTER_MAX_DEGREE; k++) {
                        if (!(avail >> k & 1) || mm->need[k] < 0 || (mm->need[k] & ~avail)) continue;
                        double r = mm->pub.jct[k] / mm->pub.jct_seq;
                        if (r < rmin) rmin = r;
                    }
                    if (isfinite(rmin)) acc += 1.0 - cl_beta_below(env->beta, rmin);
                }
                score += acc / env->K;
            }
            if (score > best_score + 1e-12 ||
                (fabs(score - best_score) <= 1e-12 && cost < best_cost * (1 - 1e-9))) {
                best = a;
                best_score = score;
                best_cost = cost;
            }
        }
    return best;
}
