/* pacml_gnn.c - the PAC-ML policy/value network: 2-round mean-pool GNN over a job graph, graph module,
 *   policy and value MLPs, masked log-softmax, and the PPO loss with its full backward pass.
 * Not here: rollouts, GAE bookkeeping and Adam scheduling (pacml_ppo.c); the DQN's Q-network (pacml_dqn.c,
 *   which shares the GNN through pacml_internal.h); the kernels (src/nn/).
 * Entry points: hsdag_pacml_net_create/free/params/touch/eval/act/loss, hsdag_pacml_net_config_default,
 *   hsdag_pacml_mask_parse, and for the other learners pm_mod_*, pm_gnn_* and pm_carve (pacml_internal.h).
 */
#include "pacml_internal.h"

#include <math.h>
#include <string.h>

/* Forward cache of one round for one model. */
typedef struct pm_round {
    float *zn, *zn_mean, *zn_rstd; /* LN of the round input (n, din) */
    float *a;                      /* node module output (n, h) */
    float *en, *en_mean, *en_rstd; /* LN of edge features (ne, 2) */
    float *b;                      /* edge module output (ne, h) */
    float *msg;                    /* messages (ne + n, 2h): edges first, then self messages */
    float *mn, *mn_mean, *mn_rstd; /* LN of messages */
    float *r;                      /* reduce module output (ne + n, dout) */
    float *z;                      /* round output (n, dout) */
    float *inv;                    /* 1 / messages per node (n) */
} pm_round;

struct pm_model {
    int32_t n, ne;
    int32_t *src; /* [ne] edge sources */
    int32_t *seg; /* [ne + n] receiver of each message: edge destinations, then 0..n-1 */
    float *x0;    /* [n * 5] node features */
    float *xe;    /* [ne * 2] edge features */
    pm_round rd[2];
    float pool[64]; /* mean of the round-2 outputs (node_out) */
    float pool_inv;
    uint64_t version; /* parameter version of the cache; 0 = never */
    void *block;      /* one allocation for all of the above */
};

struct hsdag_pacml_net {
    hsdag_pacml_net_config c;
    hsdag_nn_params *p;
    pm_gnn gnn;
    pm_mod graph;
    hsdag_nn_linear pi1, pi2, v1, v2;
    int32_t n_models;
    float *bs;      /* batch scratch */
    int32_t bs_cap; /* batch rows it holds */
};

hsdag_pacml_net_config hsdag_pacml_net_config_default(void)
{
    hsdag_pacml_net_config c = {256,         PM_MSG_HALF,  PM_HIDDEN1,
                                PM_NODE_OUT, PM_GRAPH_OUT, HSDAG_PACML_MASK_SPEC};
    return c;
}

int pm_mod_add(hsdag_nn_params *p, pm_mod *m, const char *name, int32_t in, int32_t out, hsdag_err *e)
{
    char nm[64];
    snprintf(nm, sizeof nm, "%s_ln", name);
    int rc = hsdag_nn_layernorm_add(p, &m->ln, nm, in, e);
    if (rc < 0) return rc;
    return hsdag_nn_linear_add(p, &m->lin, name, in, out, 1, e);
}

#define PV(net, id) hsdag_nn_params_value((net)->p, (id))
#define PG(net, id) hsdag_nn_params_grad((net)->p, (id))

void pm_mod_forward(hsdag_nn_params *p, const pm_mod *m, float *y, float *xn, float *mean, float *rstd,
                    const float *x, int32_t rows, int relu)
{
    hsdag_nn_layernorm_forward(xn, mean, rstd, x, hsdag_nn_params_value(p, m->ln.g),
                               hsdag_nn_params_value(p, m->ln.b), rows, m->ln.d, PM_EPS);
    hsdag_nn_linear_forward(y, xn, hsdag_nn_params_value(p, m->lin.w), hsdag_nn_params_value(p, m->lin.b),
                            rows, m->lin.in, m->lin.out);
    if (relu) hsdag_nn_relu_forward(y, y, (size_t)rows * m->lin.out);
}

void pm_mod_backward(hsdag_nn_params *p, const pm_mod *m, float *dx, const float *dy, float *dypre,
                     float *dxn, const float *y, const float *xn, const float *mean, const float *rstd,
                     const float *x, int32_t rows, int relu)
{
    size_t ny = (size_t)rows * m->lin.out, nx = (size_t)rows * m->lin.in;
    const float *g = dy;
    if (relu) {
        memset(dypre, 0, ny * sizeof(float));
        hsdag_nn_relu_backward(dypre, dy, y, ny);
        g = dypre;
    }
    memset(dxn, 0, nx * sizeof(float));
    hsdag_nn_linear_backward(dxn, hsdag_nn_params_grad(p, m->lin.w), hsdag_nn_params_grad(p, m->lin.b), g, xn,
                             hsdag_nn_params_value(p, m->lin.w), rows, m->lin.in, m->lin.out);
    hsdag_nn_layernorm_backward(dx, hsdag_nn_params_grad(p, m->ln.g), hsdag_nn_params_grad(p, m->ln.b), dxn,
                                x, mean, rstd, hsdag_nn_params_value(p, m->ln.g), rows, m->ln.d);
}

static int pm_model_init(pm_gnn *net, pm_model *pm, const hsdag_pacml_job *cm, hsdag_err *e)
{
    const hsdag_graph *g = cm->g;
    int32_t n = g->n_nodes, ne = g->n_edges, h = net->msg_half, nm = ne + n;
    pm->n = n;
    pm->ne = ne;
    int32_t din[2] = {PM_NF, net->hidden1}, dout[2] = {net->hidden1, net->node_out};
    size_t fl = (size_t)n * PM_NF + (size_t)ne * PM_EF;
    for (int r = 0; r < 2; r++)
        fl += (size_t)n * din[r] + 2 * (size_t)n + (size_t)n * h + (size_t)ne * PM_EF + 2 * (size_t)ne +
              (size_t)ne * h + 2 * (size_t)nm * 2 * h + 2 * (size_t)nm + (size_t)nm * dout[r] +
              (size_t)n * dout[r] + (size_t)n;
    size_t bytes = fl * sizeof(float) + (size_t)(ne + nm) * sizeof(int32_t);
    pm->block = hsdag_calloc(1, bytes);
    if (!pm->block) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml: model '%s': out of memory", cm->name);
    float *f = pm->block;
#define TAKE(ptr, cnt) (ptr = f, f += (cnt))
    TAKE(pm->x0, (size_t)n * PM_NF);
    TAKE(pm->xe, (size_t)ne * PM_EF);
    for (int r = 0; r < 2; r++) {
        pm_round *R = &pm->rd[r];
        TAKE(R->zn, (size_t)n * din[r]);
        TAKE(R->zn_mean, n);
        TAKE(R->zn_rstd, n);
        TAKE(R->a, (size_t)n * h);
        TAKE(R->en, (size_t)ne * PM_EF);
        TAKE(R->en_mean, ne);
        TAKE(R->en_rstd, ne);
        TAKE(R->b, (size_t)ne * h);
        TAKE(R->msg, (size_t)nm * 2 * h);
        TAKE(R->mn, (size_t)nm * 2 * h);
        TAKE(R->mn_mean, nm);
        TAKE(R->mn_rstd, nm);
        TAKE(R->r, (size_t)nm * dout[r]);
        TAKE(R->z, (size_t)n * dout[r]);
        TAKE(R->inv, n);
    }
#undef TAKE
    pm->src = (int32_t *)f;
    pm->seg = pm->src + ne;
    memcpy(pm->x0, cm->node_feat, (size_t)n * PM_NF * sizeof(float));
    memcpy(pm->xe, cm->edge_feat, (size_t)ne * PM_EF * sizeof(float));
    for (int32_t k = 0; k < ne; k++) {
        pm->src[k] = g->edge_src[k];
        pm->seg[k] = g->out_dst[k];
    }
    for (int32_t v = 0; v < n; v++) pm->seg[ne + v] = v;
    if (n > net->max_n) net->max_n = n;
    if (ne > net->max_ne) net->max_ne = ne;
    return 0;
}

int pm_gnn_add(pm_gnn *g, hsdag_nn_params *p, int32_t msg_half, int32_t hidden1, int32_t node_out,
               const hsdag_pacml_job *jobs, int32_t n_jobs, hsdag_err *e)
{
    memset(g, 0, sizeof *g);
    g->p = p;
    g->msg_half = msg_half;
    g->hidden1 = hidden1;
    g->node_out = node_out;
    int32_t h = msg_half, din[2] = {PM_NF, hidden1}, dout[2] = {hidden1, node_out};
    int rc;
    for (int r = 0; r < 2; r++) {
        char nm[32];
        snprintf(nm, sizeof nm, "r%d.node", r + 1);
        if ((rc = pm_mod_add(p, &g->node[r], nm, din[r], h, e)) < 0) return rc;
        snprintf(nm, sizeof nm, "r%d.edge", r + 1);
        if ((rc = pm_mod_add(p, &g->edge[r], nm, PM_EF, h, e)) < 0) return rc;
        snprintf(nm, sizeof nm, "r%d.reduce", r + 1);
        if ((rc = pm_mod_add(p, &g->red[r], nm, 2 * h, dout[r], e)) < 0) return rc;
    }
    g->n_models = n_jobs;
    g->m = hsdag_calloc((size_t)n_jobs + 1, sizeof *g->m);
    g->dpool = hsdag_calloc((size_t)n_jobs * node_out + 1, sizeof(float));
    g->used = hsdag_calloc((size_t)n_jobs + 1, 1);
    if (!g->m || !g->dpool || !g->used) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory");
    for (int32_t i = 0; i < n_jobs; i++)
        if ((rc = pm_model_init(g, &g->m[i], &jobs[i], e)) < 0) return rc;
    /* backward scratch: 13 buffers, each sized by the largest of its uses */
    int32_t mx = hidden1 > 2 * h ? hidden1 : 2 * h;
    if (node_out > mx) mx = node_out;
    if (PM_NF > mx) mx = PM_NF;
    g->gs_slot = (size_t)(g->max_n + g->max_ne) * (size_t)mx;
    g->gs = hsdag_calloc(13 * g->gs_slot + 1, sizeof(float));
    if (!g->gs) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory");
    g->version = 1;
    return 0;
}

void pm_gnn_free(pm_gnn *g)
{
    if (g->m)
        for (int32_t i = 0; i < g->n_models; i++) hsdag_free(g->m[i].block);
    hsdag_free(g->m);
    hsdag_free(g->dpool);
    hsdag_free(g->used);
    hsdag_free(g->gs);
    memset(g, 0, sizeof *g);
}

void pm_gnn_touch(pm_gnn *g)
{
    g->version++;
}

int hsdag_pacml_net_create(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                           const hsdag_pacml_net_config *cfg, uint64_t seed, hsdag_err *e)
{
    *out = NULL;
    hsdag_pacml_net_config c = cfg ? *cfg : hsdag_pacml_net_config_default();
    if (c.fc_hidden < 1 || c.fc_hidden > 4096 || c.msg_half < 1 || c.msg_half > 256 || c.hidden1 < 1 ||
        c.hidden1 > 1024 || c.node_out < 1 || c.node_out > 64 || c.graph_out < 1 || c.graph_out > 256 ||
        (int)c.mask_mode < 0 || c.mask_mode > HSDAG_PACML_MASK_PLACE_JCT || n_jobs < 0 || (n_jobs && !jobs))
        return hsdag_err_set(e, HSDAG_EINVAL, "pacml: network config out of range");
    hsdag_pacml_net *n = hsdag_calloc(1, sizeof *n);
    if (!n) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory");
    n->c = c;
    int rc = hsdag_nn_params_create(&n->p, NULL);
    if (rc < 0) goto fail_oom;
    if ((rc = pm_gnn_add(&n->gnn, n->p, c.msg_half, c.hidden1, c.node_out, jobs, n_jobs, e)) < 0) goto fail;
    if ((rc = pm_mod_add(n->p, &n->graph, "graph", PM_GF, c.graph_out, e)) < 0) goto fail;
    int32_t emb = c.node_out + c.graph_out;
    if ((rc = hsdag_nn_linear_add(n->p, &n->pi1, "pi1", emb, c.fc_hidden, 1, e)) < 0) goto fail;
    if ((rc = hsdag_nn_linear_add(n->p, &n->pi2, "pi2", c.fc_hidden, PM_NA, 1, e)) < 0) goto fail;
    if ((rc = hsdag_nn_linear_add(n->p, &n->v1, "v1", emb, c.fc_hidden, 1, e)) < 0) goto fail;
    if ((rc = hsdag_nn_linear_add(n->p, &n->v2, "v2", c.fc_hidden, 1, 1, e)) < 0) goto fail;
    hsdag_rng rng;
    hsdag_rng_seed(&rng, seed);
    if ((rc = hsdag_nn_params_alloc(n->p, &rng, e)) < 0) goto fail;
    /* small logits at the start (RLlib's normc(0.01) on the last layer): a near-uniform masked policy */
    {
        float *w = PV(n, n->pi2.w), *b = PV(n, n->pi2.b);
        for (int32_t i = 0; i < PM_NA * c.fc_hidden; i++) w[i] *= 0.01f;
        for (int32_t i = 0; i < PM_NA; i++) b[i] = 0.f;
    }
    n->n_models = n_jobs;
    *out = n;
    return 0;
fail_oom:
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory");
fail:
    hsdag_pacml_net_free(n);
    return rc;
}

void hsdag_pacml_net_free(hsdag_pacml_net *n)
{
    if (!n) return;
    pm_gnn_free(&n->gnn);
    hsdag_free(n->bs);
    hsdag_nn_params_free(n->p);
    hsdag_free(n);
}

hsdag_nn_params *hsdag_pacml_net_params(hsdag_pacml_net *n)
{
    return n->p;
}
const hsdag_pacml_net_config *hsdag_pacml_net_config_get(const hsdag_pacml_net *n)
{
    return &n->c;
}
void hsdag_pacml_net_touch(hsdag_pacml_net *n)
{
    pm_gnn_touch(&n->gnn);
}

/* ---- GNN over one model ---- */

const float *pm_gnn_pool(pm_gnn *n, int32_t model)
{
    pm_model *pm = &n->m[model];
    if (pm->version == n->version) return pm->pool;
    int32_t N = pm->n, NE = pm->ne, NM = N + NE, h = n->msg_half;
    float *ag = n->gs, *zeros = n->gs + (size_t)NE * h; /* scratch, not needed by backward */
    memset(zeros, 0, (size_t)N * h * sizeof(float));
    const float *zin = pm->x0;
    for (int r = 0; r < 2; r++) {
        pm_round *R = &pm->rd[r];
        int32_t dout = n->red[r].lin.out;
        pm_mod_forward(n->p, &n->node[r], R->a, R->zn, R->zn_mean, R->zn_rstd, zin, N, 1);
        pm_mod_forward(n->p, &n->edge[r], R->b, R->en, R->en_mean, R->en_rstd, pm->xe, NE, 1);
        hsdag_nn_gather_forward(ag, R->a, pm->src, NE, h);
        hsdag_nn_concat_forward(R->msg, ag, R->b, NE, h, h);
        hsdag_nn_concat_forward(R->msg + (size_t)NE * 2 * h, R->a, zeros, N, h, h);
        pm_mod_forward(n->p, &n->red[r], R->r, R->mn, R->mn_mean, R->mn_rstd, R->msg, NM, 1);
        hsdag_nn_segment_mean_forward(R->z, R->inv, R->r, pm->seg, NM, dout, N);
        zin = R->z;
    }
    hsdag_nn_segment_mean_forward(pm->pool, &pm->pool_inv, pm->rd[1].z, NULL, N, n->node_out, 1);
    pm->version = n->version;
    return pm->pool;
}

/* Accumulates parameter gradients for dL/dpool (node_out) of one model. The cache must be current. */
static void pm_gnn_backward_one(pm_gnn *n, pm_model *pm, const float *dpool)
{
    int32_t N = pm->n, NE = pm->ne, NM = N + NE, h = n->msg_half;
    size_t S = n->gs_slot;
    float *dz = n->gs, *dzin = dz + S, *dR = dzin + S, *dRpre = dR + S, *dMn = dRpre + S, *dMsg = dMn + S,
          *dAg = dMsg + S, *dB = dAg + S, *dA = dB + S, *dBpre = dA + S, *dEn = dBpre + S, *dApre = dEn + S,
          *dZn = dApre + S;
    memset(dz, 0, (size_t)N * n->node_out * sizeof(float));
    hsdag_nn_segment_mean_backward(dz, dpool, &pm->pool_inv, NULL, N, n->node_out);
    for (int r = 1; r >= 0; r--) {
        pm_round *R = &pm->rd[r];
        int32_t dout = n->red[r].lin.out;
        memset(dR, 0, (size_t)NM * dout * sizeof(float));
        hsdag_nn_segment_mean_backward(dR, dz, R->inv, pm->seg, NM, dout);
        memset(dMsg, 0, (size_t)NM * 2 * h * sizeof(float));
        pm_mod_backward(n->p, &n->red[r], dMsg, dR, dRpre, dMn, R->r, R->mn, R->mn_mean, R->mn_rstd, R->msg,
                        NM, 1);
        memset(dAg, 0, (size_t)NE * h * sizeof(float));
        memset(dB, 0, (size_t)NE * h * sizeof(float));
        memset(dA, 0, (size_t)N * h * sizeof(float));
        hsdag_nn_concat_backward(dAg, dB, dMsg, NE, h, h);
        hsdag_nn_concat_backward(dA, NULL, dMsg + (size_t)NE * 2 * h, N, h, h);
        hsdag_nn_gather_backward(dA, dAg, pm->src, NE, h);
        pm_mod_backward(n->p, &n->edge[r], NULL, dB, dBpre, dEn, R->b, R->en, R->en_mean, R->en_rstd, pm->xe,
                        NE, 1);
        float *dx = NULL;
        if (r == 1) {
            dx = dzin;
            memset(dx, 0, (size_t)N * n->hidden1 * sizeof(float));
        }
        pm_mod_backward(n->p, &n->node[r], dx, dA, dApre, dZn, R->a, R->zn, R->zn_mean, R->zn_rstd,
                        r ? pm->rd[0].z : pm->x0, N, 1);
        if (r == 1) {
            float *t = dz;
            dz = dzin;
            dzin = t;
        }
    }
}

void pm_gnn_backward(pm_gnn *g, const int32_t *model, const float *dpool, int32_t B)
{
    int32_t no = g->node_out;
    memset(g->dpool, 0, (size_t)g->n_models * no * sizeof(float));
    memset(g->used, 0, (size_t)g->n_models);
    hsdag_nn_gather_backward(g->dpool, dpool, model, B, no);
    for (int32_t i = 0; i < B; i++) g->used[model[i]] = 1;
    for (int32_t m = 0; m < g->n_models; m++)
        if (g->used[m]) pm_gnn_backward_one(g, &g->m[m], g->dpool + (size_t)m * no);
}

/* ---- batch heads ---- */

typedef struct pm_batch { /* views into n->bs for B rows */
    float *g0, *gn, *gmean, *grstd, *g, *emb, *h1, *logit, *lp, *v1, *v;
    float *dlp, *dlogit, *dh1, *dh1pre, *demb, *dv1, *dv1pre, *dv, *dg, *dgn, *dp;
} pm_batch;

int pm_carve(float **block, int32_t *cap, int32_t rows, int32_t min_rows, const pm_slice *s, int32_t n)
{
    size_t per = 0;
    for (int32_t k = 0; k < n; k++) per += s[k].width;
    if (rows > *cap) {
        int32_t c = rows < min_rows ? min_rows : rows;
        size_t floats = (size_t)c * per;
        float *nb = hsdag_realloc(*block, (floats ? floats : 1) * sizeof(float));
        if (!nb) return -1;
        *block = nb;
        *cap = c;
    }
    float *f = *block;
    for (int32_t k = 0; k < n; k++) {
        *s[k].p = f;
        f += (size_t)rows * s[k].width;
    }
    return 0;
}

static int pm_batch_get(hsdag_pacml_net *n, int32_t B, pm_batch *b, hsdag_err *e)
{
    size_t H = (size_t)n->c.fc_hidden, E = (size_t)(n->c.node_out + n->c.graph_out),
           go = (size_t)n->c.graph_out, no = (size_t)n->c.node_out;
    const pm_slice s[] = {
        {&b->g0, PM_GF},  {&b->gn, PM_GF},  {&b->gmean, 1},      {&b->grstd, 1},  {&b->g, go},
        {&b->emb, E},     {&b->h1, H},      {&b->logit, PM_NA},  {&b->lp, PM_NA}, {&b->v1, H},
        {&b->v, 1},       {&b->dlp, PM_NA}, {&b->dlogit, PM_NA}, {&b->dh1, H},    {&b->dh1pre, H},
        {&b->demb, E},    {&b->dv1, H},     {&b->dv1pre, H},     {&b->dv, 1},     {&b->dg, go},
        {&b->dgn, PM_GF}, {&b->dp, no},
    };
    if (pm_carve(&n->bs, &n->bs_cap, B, 256, s, (int32_t)(sizeof s / sizeof s[0])) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "pacml: batch of %d: out of memory", B);
    return 0;
}

/* Forward of B rows: gfeat rows (B, 34), models (B), masks (B, 17) -> lp, v in b. */
static void pm_heads_forward(hsdag_pacml_net *n, pm_batch *b, int32_t B, const int32_t *model,
                             const uint8_t *mask)
{
    int32_t H = n->c.fc_hidden, no = n->c.node_out, go = n->c.graph_out, E = no + go;
    pm_mod_forward(n->p, &n->graph, b->g, b->gn, b->gmean, b->grstd, b->g0, B, 0);
    for (int32_t i = 0; i < B; i++)
        hsdag_nn_concat_forward(b->emb + (size_t)i * E, pm_gnn_pool(&n->gnn, model[i]), b->g + (size_t)i * go,
                                1, no, go);
    hsdag_nn_linear_forward(b->h1, b->emb, PV(n, n->pi1.w), PV(n, n->pi1.b), B, E, H);
    hsdag_nn_relu_forward(b->h1, b->h1, (size_t)B * H);
    hsdag_nn_linear_forward(b->logit, b->h1, PV(n, n->pi2.w), PV(n, n->pi2.b), B, H, PM_NA);
    hsdag_nn_log_softmax_forward(b->lp, b->logit, mask, B, PM_NA);
    hsdag_nn_linear_forward(b->v1, b->emb, PV(n, n->v1.w), PV(n, n->v1.b), B, E, H);
    hsdag_nn_relu_forward(b->v1, b->v1, (size_t)B * H);
    hsdag_nn_linear_forward(b->v, b->v1, PV(n, n->v2.w), PV(n, n->v2.b), B, H, 1);
}

void hsdag_pacml_net_eval(hsdag_pacml_net *n, const hsdag_pacml_obs *o, float *lp, float *value)
{
    pm_batch b;
    if (pm_batch_get(n, 1, &b, NULL) < 0) { /* out of memory: fall back to "do not place" */
        for (int a = 0; a < PM_NA; a++) lp[a] = a ? -INFINITY : 0.f;
        *value = 0.f;
        return;
    }
    memcpy(b.g0, o->graph_feat, PM_GF * sizeof(float));
    int32_t model = o->model;
    pm_heads_forward(n, &b, 1, &model, o->mask);
    memcpy(lp, b.lp, PM_NA * sizeof(float));
    *value = b.v[0];
}

int hsdag_pacml_mask_parse(hsdag_pacml_mask_mode *out, const char *s, hsdag_err *e)
{
    if (!strcmp(s, "spec"))
        *out = HSDAG_PACML_MASK_SPEC;
    else if (!strcmp(s, "place"))
        *out = HSDAG_PACML_MASK_PLACE;
    else if (!strcmp(s, "place-jct"))
        *out = HSDAG_PACML_MASK_PLACE_JCT;
    else
        return hsdag_err_set(e, HSDAG_EINVAL, "mask '%.40s': spec, place or place-jct", s);
    return 0;
}

int hsdag_pacml_net_act(hsdag_pacml_net *n, const hsdag_pacml_obs *o, int greedy, hsdag_rng *rng)
{
    float lp[PM_NA], v;
    hsdag_pacml_net_eval(n, o, lp, &v);
    int32_t a = 0;
    int rc = greedy ? hsdag_nn_categorical_argmax(&a, lp, o->mask, PM_NA)
                    : hsdag_nn_categorical_sample_logits(&a, NULL, lp, o->mask, PM_NA, rng);
    return rc < 0 ? 0 : a;
}

/* ---- PPO loss ---- */

int hsdag_pacml_net_loss(hsdag_pacml_net *n, const hsdag_pacml_loss_config *c, const hsdag_pacml_sample *s,
                         const int32_t *idx, int32_t B, int grad, hsdag_pacml_loss_stats *st, hsdag_err *e)
{
    hsdag_pacml_loss_stats z = {0};
    if (st) *st = z;
    if (B <= 0) return 0;
    pm_batch b;
    int rc = pm_batch_get(n, B, &b, e);
    if (rc < 0) return rc;
    int32_t *model = hsdag_malloc((size_t)B * (sizeof(int32_t) + PM_NA));
    if (!model) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory");
    uint8_t *mask = (uint8_t *)(model + B);
    for (int32_t i = 0; i < B; i++) {
        const hsdag_pacml_sample *x = &s[idx ? idx[i] : i];
        model[i] = x->model;
        memcpy(mask + (size_t)i * PM_NA, x->mask, PM_NA);
        memcpy(b.g0 + (size_t)i * PM_GF, x->gfeat, PM_GF * sizeof(float));
    }
    pm_heads_forward(n, &b, B, model, mask);
    double inv = 1.0 / B, pl = 0, vl = 0, ent = 0, kl = 0, clipped = 0;
    float eps = c->clip;
    memset(b.dlp, 0, (size_t)B * PM_NA * sizeof(float));
    memset(b.dv, 0, (size_t)B * sizeof(float));
    for (int32_t i = 0; i < B; i++) {
        const hsdag_pacml_sample *x = &s[idx ? idx[i] : i];
        const float *lp = b.lp + (size_t)i * PM_NA;
        float *dlp = b.dlp + (size_t)i * PM_NA;
        int a = x->action;
        double ratio = exp((double)lp[a] - (double)x->lp_old[a]);
        double cr = ratio < 1 - eps ? 1 - eps : ratio > 1 + eps ? 1 + eps : ratio;
        double s1 = ratio * x->adv, s2 = cr * x->adv;
        if (fabs(ratio - 1) > eps) clipped += 1;
        pl -= (s1 <= s2 ? s1 : s2) * inv;
        if (s1 <= s2) dlp[a] += (float)(-x->adv * ratio * inv);
        float h;
        hsdag_nn_entropy_forward(&h, lp, 1, PM_NA);
        ent += h * inv;
        float dh = (float)(-c->ent_coeff * inv);
        hsdag_nn_entropy_backward(dlp, &dh, lp, 1, PM_NA);
        double k = 0;
        for (int j = 0; j < PM_NA; j++) {
            if (!x->mask[j] || !(x->lp_old[j] > -INFINITY)) continue;
            double po = exp((double)x->lp_old[j]);
            k += po * ((double)x->lp_old[j] - (double)lp[j]);
            dlp[j] += (float)(-c->kl_coeff * po * inv);
        }
        kl += k * inv;
        double err = (double)b.v[i] - (double)x->ret;
        vl += 0.5 * err * err * inv;
        b.dv[i] = (float)(c->vf_coeff * err * inv);
    }
    if (st) {
        st->policy_loss = pl;
        st->value_loss = vl;
        st->entropy = ent;
        st->kl = kl;
        st->clip_frac = clipped * inv;
        st->loss = pl + c->vf_coeff * vl - c->ent_coeff * ent + c->kl_coeff * kl;
    }
    if (grad) {
        int32_t H = n->c.fc_hidden, no = n->c.node_out, go = n->c.graph_out, E = no + go;
        hsdag_nn_params_zero_grad(n->p);
        memset(b.dlogit, 0, (size_t)B * PM_NA * sizeof(float));
        hsdag_nn_log_softmax_backward(b.dlogit, b.dlp, b.lp, B, PM_NA);
        memset(b.dh1, 0, (size_t)B * H * sizeof(float));
        memset(b.demb, 0, (size_t)B * E * sizeof(float));
        hsdag_nn_linear_backward(b.dh1, PG(n, n->pi2.w), PG(n, n->pi2.b), b.dlogit, b.h1, PV(n, n->pi2.w), B,
                                 H, PM_NA);
        memset(b.dh1pre, 0, (size_t)B * H * sizeof(float));
        hsdag_nn_relu_backward(b.dh1pre, b.dh1, b.h1, (size_t)B * H);
        hsdag_nn_linear_backward(b.demb, PG(n, n->pi1.w), PG(n, n->pi1.b), b.dh1pre, b.emb, PV(n, n->pi1.w),
                                 B, E, H);
        memset(b.dv1, 0, (size_t)B * H * sizeof(float));
        hsdag_nn_linear_backward(b.dv1, PG(n, n->v2.w), PG(n, n->v2.b), b.dv, b.v1, PV(n, n->v2.w), B, H, 1);
        memset(b.dv1pre, 0, (size_t)B * H * sizeof(float));
        hsdag_nn_relu_backward(b.dv1pre, b.dv1, b.v1, (size_t)B * H);
        hsdag_nn_linear_backward(b.demb, PG(n, n->v1.w), PG(n, n->v1.b), b.dv1pre, b.emb, PV(n, n->v1.w), B,
                                 E, H);
        memset(b.dp, 0, (size_t)B * no * sizeof(float));
        memset(b.dg, 0, (size_t)B * go * sizeof(float));
        hsdag_nn_concat_backward(b.dp, b.dg, b.demb, B, no, go);
        pm_mod_backward(n->p, &n->graph, NULL, b.dg, NULL, b.dgn, b.g, b.gn, b.gmean, b.grstd, b.g0, B, 0);
        /* per model: sum the pooled-embedding gradients of its samples, then one GNN backward */
        pm_gnn_backward(&n->gnn, model, b.dp, B);
    }
    hsdag_free(model);
    return 0;
}
