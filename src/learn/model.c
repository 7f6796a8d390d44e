/* model.c - the HSDAG policy network: per-kind feature embeddings, input MLP, 2 GCN layers with residual
 * LayerNorm, GPN pooling levels (own GCN branch, edge-score MLP, parsing, deepsets cluster features) and the
 * per-cluster placer MLP; forward and backward side by side, one arena of caches per step.
 * Not here: sampling, rewards and the REINFORCE update (train.c); the kernels (src/nn).
 * Entry points: lmodel_create/free, lmodel_step_forward/backward/end (model.h). */
#include "model.h"

#include <math.h>
#include <string.h>

#define LN_EPS 1e-5f

/* Step scratch kept across steps: a bump allocator over blocks that are reused, never returned until
 * lmodel_free, so a step costs no page faults once the first step has sized it. Grows without a cap (a
 * block is at least the total held so far, so there are O(log) blocks); a failed allocation records the
 * bytes that were asked for (fail_bytes) for the error message.
 * Invariant: blk[i] has cap[i] bytes, used[i] <= cap[i], i < nb <= nb_cap. */
typedef struct pool {
    unsigned char **blk;
    size_t *cap, *used;
    int nb, nb_cap, cur;
    size_t total, fail_bytes;
} pool;

static void *pool_alloc(pool *p, size_t n, int zero)
{
    n = (n + 63) & ~(size_t)63;
    while (p->cur < p->nb && p->cap[p->cur] - p->used[p->cur] < n) p->cur++;
    if (p->cur == p->nb) {
        if (p->nb == p->nb_cap) {
            int nc = p->nb_cap ? 2 * p->nb_cap : 8;
            unsigned char **b = hsdag_realloc(p->blk, sizeof *b * (size_t)nc);
            if (b) p->blk = b;
            size_t *c = b ? hsdag_realloc(p->cap, sizeof *c * (size_t)nc) : NULL;
            if (c) p->cap = c;
            size_t *u = c ? hsdag_realloc(p->used, sizeof *u * (size_t)nc) : NULL;
            if (u) p->used = u;
            if (!u) {
                p->fail_bytes = sizeof(void *) * (size_t)nc;
                return NULL;
            }
            p->nb_cap = nc;
        }
        size_t cap = n > ((size_t)1 << 20) ? n : ((size_t)1 << 20);
        if (cap < p->total) cap = p->total;
        p->blk[p->nb] = hsdag_malloc(cap);
        if (!p->blk[p->nb]) {
            p->fail_bytes = cap;
            return NULL;
        }
        p->cap[p->nb] = cap;
        p->used[p->nb] = 0;
        p->total += cap;
        p->nb++;
    }
    void *r = p->blk[p->cur] + p->used[p->cur];
    p->used[p->cur] += n;
    if (zero) memset(r, 0, n);
    return r;
}

static void pool_reset(pool *p)
{
    for (int i = 0; i < p->nb; i++) p->used[i] = 0;
    p->cur = 0;
}

static void pool_free(pool *p)
{
    for (int i = 0; i < p->nb; i++) hsdag_free(p->blk[i]);
    hsdag_free(p->blk);
    hsdag_free(p->cap);
    hsdag_free(p->used);
    memset(p, 0, sizeof *p);
}

/* The out-of-memory message of a step: what was asked for and what the pool holds. */
static int pool_oom(const pool *p, hsdag_err *e)
{
    return hsdag_err_set(e, HSDAG_ENOMEM,
                         "hsdag: out of memory (a step's scratch asked for %zu more bytes, holding %zu)",
                         p->fail_bytes, p->total);
}

struct lmodel {
    pool pool;
    hsdag_nn_params *P;
    hsdag_coarse *c;
    int32_t N, H, K, EMB, d0;            /* groups, hidden, devices, per-kind embedding, concatenated width */
    int32_t nk;                          /* feature kinds on */
    int32_t kdim[HSDAG_FEAT_KINDS_ + 1]; /* width of each kind that is on (compacted; + the cost kind) */
    float *kfeat[HSDAG_FEAT_KINDS_ + 1]; /* (N, kdim) contiguous copies of each kind's columns */
    hsdag_nn_linear emb[HSDAG_FEAT_KINDS_ + 1];
    hsdag_nn_linear in1, in2, sc1, sc2, pre, post, pl1, pl2;
    hsdag_nn_linear inh; /* cfg->inherit: the inherit logit head on the placer's hidden layer */
    int inherit;
    hsdag_nn_layernorm ln_in1, ln_in2, ln_g1, ln_g2, ln_sc, ln_pre, ln_post;
    hsdag_nn_gnn *g1, *g2, *gp;
    hsdag_nn_adj *adj0; /* symmetrised group graph with self loops */
    int32_t m0;         /* group edges */
    float dropout;
    int32_t levels, min_clusters;
    /* fixed clusters (lmodel_fix_clusters): the parse of every applied level, kept and reused by every step */
    int fixed;
    int32_t fixed_nl;
    hsdag_gpn_parse_result fixed_pr[16];
    uint8_t *gmask;  /* (N, K) devices each group may use (every member may), NULL = all */
    double *gstatic; /* (N) static bytes (weights) per group when the problem caps a device, else NULL */
    uint8_t *apart;  /* (N) cfg->weight_unit_frac: groups that parsing never merges (weights fed through an op
                      * of their own), NULL = none */
    /* The encoder's dropout-free prefix (embeddings, in1, LN, ReLU) depends on the parameters only: while
     * frozen (lmodel_params_frozen) it is computed once, at the first step, into these buffers. */
    int frozen, enc_ready;
    float *X0c, *a1c, *n1c, *mean1c, *rstd1c;
};

/* ---- one level of GPN pooling: caches ---- */
typedef struct lvl {
    int32_t n, m, nc;
    const int32_t *u, *v;
    hsdag_nn_adj *adj;
    int own_adj;
    const float *xpool, *xpre; /* (n, H) */
    float *gcache, *hp;        /* pool GCN cache; hp = relu(GCN(xpool)) (n, H) */
    float *zu, *zv, *z, *a1, *m1, *r1, *mean1, *rstd1, *logit, *s; /* edge MLP (m, .) */
    hsdag_gpn_parse_result pr;
    float *lpre, *sum1, *q, *meanq, *rstdq;               /* pre: (n, H) */
    float *Q, *lpost, *sum2, *P, *meanP, *rstdP, *f, *hc; /* post: (nc, H); f (nc) */
    int has_f_grad;                                       /* clusters with intra edges exist */
    const hsdag_gpn_parse_result *fixed_pr;               /* the kept parse of this level, or NULL */
    const uint8_t *apart;                                 /* (n) nodes kept out of merges, or NULL */
} lvl;

typedef struct stepc {
    pool *ar;
    int train;
    float *X0;                           /* (N, d0) */
    float *e_out[HSDAG_FEAT_KINDS_ + 1]; /* (N, EMB) */
    float *a1, *n1, *mean1, *rstd1, *mask1, *o1;
    float *a2, *n2, *mean2, *rstd2, *mask2, *o2;
    float *S; /* (N, H) = o2 + D */
    float *c1, *t1, *mk1, *u1, *s1, *mg1, *rg1, *h1;
    float *c2, *t2, *mk2, *u2, *s2, *mg2, *rg2, *h2;
    lvl lv[16];
    int32_t nl;
    int32_t *cluster;               /* (N) final */
    uint8_t *cmask;                 /* (C, K) devices each cluster may use, NULL without masks */
    float *pa, *pr, *logits, *logp; /* placer */
    float *q;                       /* (C) inherit logits, NULL without the head */
} stepc;

#define WV(id) hsdag_nn_params_value(M->P, (id))
#define GV(id) hsdag_nn_params_grad(M->P, (id))

/* fz: zeroed (gradients, which backward kernels accumulate into); fa: uninitialised (forward outputs,
 * which forward kernels overwrite). */
static float *fz(stepc *c, size_t n)
{
    return pool_alloc(c->ar, sizeof(float) * (n ? n : 1), 1);
}
static float *fa(stepc *c, size_t n)
{
    return pool_alloc(c->ar, sizeof(float) * (n ? n : 1), 0);
}

/* ---- create ---- */

void lmodel_free(lmodel *M)
{
    if (!M) return;
    for (int l = 0; l < 16; l++) hsdag_gpn_parse_free(&M->fixed_pr[l]);
    pool_free(&M->pool);
    hsdag_nn_params_free(M->P);
    hsdag_coarsen_free(M->c);
    hsdag_free(M->gmask);
    hsdag_free(M->gstatic);
    hsdag_free(M->apart);
    for (int k = 0; k <= HSDAG_FEAT_KINDS_; k++) hsdag_free(M->kfeat[k]);
    hsdag_nn_gnn_free(M->g1);
    hsdag_nn_gnn_free(M->g2);
    hsdag_nn_gnn_free(M->gp);
    hsdag_nn_adj_free(M->adj0);
    hsdag_free(M->X0c);
    hsdag_free(M->a1c);
    hsdag_free(M->n1c);
    hsdag_free(M->mean1c);
    hsdag_free(M->rstd1c);
    hsdag_free(M);
}

hsdag_nn_params *lmodel_params(lmodel *M)
{
    return M->P;
}

void lmodel_params_frozen(lmodel *M, int frozen)
{
    M->frozen = frozen;
    M->enc_ready = 0;
}
const hsdag_coarse *lmodel_coarse(const lmodel *M)
{
    return M->c;
}

/* The cost kind (HSDAG_LEARN_FEAT_COST): per group, from the problem's cost table, every column scale-free
 * (a ratio or a share, so graphs of any size and speed look alike): log of the group's time on each device
 * over its fastest (K), log of its mean time over the mean group's (1), its static bytes over each device's
 * capacity (K), the static bytes of the groups up to it in topological order over each capacity (K), and
 * log(1 + the time to send what leaves it over its own time) (1). Returns a (N, 3K + 2) array or NULL. */
static float *cost_features(const hsdag_coarse *c, const hsdag_place_problem *p, int32_t K, int32_t *width)
{
    const hsdag_costs *cs = p->c;
    const hsdag_graph *g = p->g;
    int32_t N = c->n_groups, W = 3 * K + 2;
    *width = W;
    float *x = hsdag_calloc((size_t)(N ? N : 1) * (size_t)W, sizeof(float));
    double *t = hsdag_calloc((size_t)(N ? N : 1) * (size_t)(K + 2), sizeof(double));
    if (!x || !t) {
        hsdag_free(x);
        hsdag_free(t);
        return NULL;
    }
    const double eps = 1e-7;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        int32_t gi = c->group_of[v];
        double *r = t + (size_t)gi * (K + 2);
        for (int32_t d = 0; d < K; d++) r[d] += cs->node_s[(size_t)v * K + d];
        r[K] += cs->static_bytes[v];
        int leaves = 0;
        for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++)
            leaves |= c->group_of[g->out_dst[k]] != gi;
        if (leaves) r[K + 1] += p->mean_xfer[v];
    }
    double tsum = 0;
    for (int32_t i = 0; i < N; i++) {
        const double *r = t + (size_t)i * (K + 2);
        double m = 0;
        for (int32_t d = 0; d < K; d++) m += r[d];
        tsum += m / K;
    }
    double tbar = N ? tsum / N : 0, cum = 0;
    for (int32_t i = 0; i < N; i++) {
        const double *r = t + (size_t)i * (K + 2);
        float *o = x + (size_t)i * W;
        double tmin = INFINITY, m = 0;
        for (int32_t d = 0; d < K; d++) {
            tmin = fmin(tmin, r[d]);
            m += r[d];
        }
        m /= K;
        for (int32_t d = 0; d < K; d++) o[d] = (float)fmin(6.0, log((r[d] + eps) / (tmin + eps)));
        o[K] = (float)fmax(-8.0, fmin(8.0, log((m + eps) / (tbar + eps))));
        cum += r[K];
        for (int32_t d = 0; d < K; d++) {
            double cap = p->cap[d];
            int fin = isfinite(cap) && cap > 0;
            o[K + 1 + d] = fin ? (float)fmin(4.0, r[K] / cap) : 0.0f;
            o[2 * K + 1 + d] = fin ? (float)fmin(4.0, cum / cap) : 0.0f;
        }
        o[3 * K + 1] = (float)fmin(10.0, log1p(r[K + 1] / (m + eps)));
    }
    hsdag_free(t);
    return x;
}

double lmodel_min_capacity(const hsdag_place_problem *p)
{
    double mc = INFINITY;
    for (int32_t d = 0; d < p->k; d++) mc = fmin(mc, p->cap[d]);
    return mc;
}

/* M->gstatic: each group's static bytes (weights), when p caps a device (else it stays NULL): the learner's
 * memory masks (train.c) and the weight units below. */
static int group_static(lmodel *M, const hsdag_graph *g, const hsdag_place_problem *p, hsdag_err *e)
{
    if (!isfinite(lmodel_min_capacity(p))) return 0;
    M->gstatic = hsdag_calloc((size_t)M->N + 1, sizeof(double));
    if (!M->gstatic)
        return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)",
                             sizeof(double) * ((size_t)M->N + 1));
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (p->c->static_bytes[v] > 0) M->gstatic[M->c->group_of[v]] += p->c->static_bytes[v];
    return 0;
}

/* cfg->weight_unit_frac (with parsing levels: without, every group is a decision already): M->apart marks the
 * groups without inputs whose static bytes exceed frac x the smallest capacity, when a device is capped (a
 * weight fed to its consumer through an op of its own, such as ONNX's Transpose before a MatMul: merged into
 * the consumer's cluster, it could not stay on the host while the consumer runs on the accelerator). None
 * marked: M->apart stays NULL. */
static int weight_units(lmodel *M, const hsdag_place_problem *p, double frac, hsdag_err *e)
{
    if (!M->gstatic) return 0; /* nothing is capped */
    double mc = lmodel_min_capacity(p);
    uint8_t *a = hsdag_calloc((size_t)M->N + 1, 1);
    if (!a) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)", (size_t)M->N + 1);
    int any = 0;
    for (int32_t x = 0; x < M->N; x++)
        if (M->c->in_off[x + 1] == M->c->in_off[x] && M->gstatic[x] > frac * mc) a[x] = 1, any = 1;
    if (any)
        M->apart = a;
    else
        hsdag_free(a);
    return 0;
}

int lmodel_create(lmodel **out, const hsdag_graph *g, int32_t n_devices, const hsdag_learn_config *cfg,
                  const hsdag_coarsen_opts *co, const uint8_t *allowed, const hsdag_place_problem *p,
                  hsdag_rng *init_rng, hsdag_err *e)
{
    *out = NULL;
    int rc;
    hsdag_features f = {0};
    lmodel *M = hsdag_calloc(1, sizeof *M);
    if (!M) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)", sizeof *M);
    M->H = cfg->hidden;
    M->K = n_devices;
    M->EMB = cfg->embed;
    M->dropout = cfg->dropout;
    M->levels = cfg->levels < 0 ? 0 : (cfg->levels > 16 ? 16 : cfg->levels);
    M->min_clusters = cfg->min_clusters > 0 ? cfg->min_clusters : 2 * n_devices;
    hsdag_coarsen_opts cdef = {.disable = cfg->no_coarsen};
    if ((rc = hsdag_coarsen_create_opts(&M->c, g, co ? co : &cdef, e)) < 0) goto fail;
    M->N = M->c->n_groups;
    hsdag_features_config fc = {.kinds = cfg->features & HSDAG_FEAT_ALL};
    if ((rc = hsdag_features_compute(&f, g, M->c, &fc, e)) < 0) goto fail;
    if ((rc = hsdag_nn_params_create(&M->P, NULL)) < 0) goto oom;
    char name[32];
    for (int k = 0; k < HSDAG_FEAT_KINDS_; k++) {
        if (!f.kind_dim[k]) continue;
        int32_t j = M->nk, w = f.kind_dim[k];
        M->kdim[j] = w;
        M->kfeat[j] = hsdag_malloc(sizeof(float) * (size_t)(M->N ? M->N : 1) * (size_t)w);
        if (!M->kfeat[j]) goto oom;
        for (int32_t r = 0; r < M->N; r++)
            memcpy(M->kfeat[j] + (size_t)r * w, f.x + (size_t)r * f.dim + f.kind_off[k],
                   sizeof(float) * (size_t)w);
        snprintf(name, sizeof name, "emb_%s", hsdag_feat_kind_name((hsdag_feat_kind)k));
        if ((rc = hsdag_nn_linear_add(M->P, &M->emb[j], name, w, M->EMB, 1, e)) < 0) goto fail;
        M->nk++;
    }
    if ((cfg->features & HSDAG_LEARN_FEAT_COST) && p) {
        int32_t j = M->nk;
        if (!(M->kfeat[j] = cost_features(M->c, p, M->K, &M->kdim[j]))) goto oom;
        if ((rc = hsdag_nn_linear_add(M->P, &M->emb[j], "emb_cost", M->kdim[j], M->EMB, 1, e)) < 0) goto fail;
        M->nk++;
    }
    M->d0 = M->nk * M->EMB;
    int32_t H = M->H;
    if ((rc = hsdag_nn_linear_add(M->P, &M->in1, "in1", M->d0, H, 1, e)) < 0 ||
        (rc = hsdag_nn_layernorm_add(M->P, &M->ln_in1, "ln_in1", H, e)) < 0 ||
        (rc = hsdag_nn_linear_add(M->P, &M->in2, "in2", H, H, 1, e)) < 0 ||
        (rc = hsdag_nn_layernorm_add(M->P, &M->ln_in2, "ln_in2", H, e)) < 0)
        goto fail;
    hsdag_nn_gnn_config gc = hsdag_nn_gnn_config_default();
    gc.kind = cfg->gnn;
    gc.in = H;
    gc.out = H;
    if ((rc = hsdag_nn_gnn_create(&M->g1, M->P, "gnn1", &gc, e)) < 0 ||
        (rc = hsdag_nn_layernorm_add(M->P, &M->ln_g1, "ln_g1", H, e)) < 0 ||
        (rc = hsdag_nn_gnn_create(&M->g2, M->P, "gnn2", &gc, e)) < 0 ||
        (rc = hsdag_nn_layernorm_add(M->P, &M->ln_g2, "ln_g2", H, e)) < 0 ||
        (rc = hsdag_nn_gnn_create(&M->gp, M->P, "gnn_pool", &gc, e)) < 0 ||
        (rc = hsdag_nn_linear_add(M->P, &M->sc1, "score1", H, H, 1, e)) < 0 ||
        (rc = hsdag_nn_layernorm_add(M->P, &M->ln_sc, "ln_score", H, e)) < 0 ||
        (rc = hsdag_nn_linear_add(M->P, &M->sc2, "score2", H, 1, 1, e)) < 0 ||
        (rc = hsdag_nn_linear_add(M->P, &M->pre, "pre", H, H, 1, e)) < 0 ||
        (rc = hsdag_nn_layernorm_add(M->P, &M->ln_pre, "ln_pre", H, e)) < 0 ||
        (rc = hsdag_nn_linear_add(M->P, &M->post, "post", H, H, 1, e)) < 0 ||
        (rc = hsdag_nn_layernorm_add(M->P, &M->ln_post, "ln_post", H, e)) < 0 ||
        (rc = hsdag_nn_linear_add(M->P, &M->pl1, "placer1", H, H, 1, e)) < 0 ||
        (rc = hsdag_nn_linear_add(M->P, &M->pl2, "placer2", H, M->K, 1, e)) < 0)
        goto fail;
    M->inherit = cfg->inherit;
    if (M->inherit && (rc = hsdag_nn_linear_add(M->P, &M->inh, "inherit", H, 1, 1, e)) < 0) goto fail;
    if ((rc = hsdag_nn_params_alloc(M->P, init_rng, e)) < 0) goto fail;
    if (M->inherit) WV(M->inh.b)[0] = (float)cfg->inherit_init; /* the initial inherit logit */
    {
        size_t n1 = (size_t)(M->N ? M->N : 1);
        M->X0c = hsdag_malloc(sizeof(float) * n1 * (size_t)(M->d0 ? M->d0 : 1));
        M->a1c = hsdag_malloc(sizeof(float) * n1 * (size_t)H);
        M->n1c = hsdag_malloc(sizeof(float) * n1 * (size_t)H);
        M->mean1c = hsdag_malloc(sizeof(float) * n1);
        M->rstd1c = hsdag_malloc(sizeof(float) * n1);
        if (!M->X0c || !M->a1c || !M->n1c || !M->mean1c || !M->rstd1c) goto oom;
    }
    M->m0 = M->c->n_und;
    if (p && (rc = group_static(M, g, p, e)) < 0) goto fail;
    if (p && cfg->weight_unit_frac > 0 && M->levels > 0 &&
        (rc = weight_units(M, p, cfg->weight_unit_frac, e)) < 0)
        goto fail;
    if (allowed) {
        /* a group may use a device only if every member may */
        size_t gk = (size_t)M->N * (size_t)M->K;
        M->gmask = hsdag_malloc(gk ? gk : 1);
        if (!M->gmask) goto oom;
        memset(M->gmask, 1, gk);
        for (int32_t v = 0; v < g->n_nodes; v++)
            for (int32_t d = 0; d < M->K; d++)
                if (!allowed[(size_t)v * (size_t)M->K + (size_t)d])
                    M->gmask[(size_t)M->c->group_of[v] * (size_t)M->K + (size_t)d] = 0;
    }
    if (M->N > 0 && (rc = hsdag_nn_adj_create_csr(&M->adj0, M->N, M->c->out_off, M->c->out_dst,
                                                  HSDAG_NN_ADJ_SYMMETRIC, e)) < 0)
        goto fail;
    hsdag_features_free(&f);
    *out = M;
    return 0;
oom:
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory building the model");
fail:
    hsdag_features_free(&f);
    lmodel_free(M);
    return rc;
}

/* ---- dense blocks: y = dropout(relu(LN(x W^T + b))) ---- */

/* the block up to its dropout: nrm = relu(LN(x W^T + b)) */
static void mlp_pre_fwd(lmodel *M, const hsdag_nn_linear *l, const hsdag_nn_layernorm *ln, float *a,
                        float *nrm, float *mean, float *rstd, const float *x, int32_t n)
{
    hsdag_nn_linear_forward(a, x, WV(l->w), WV(l->b), n, l->in, l->out);
    hsdag_nn_layernorm_forward(nrm, mean, rstd, a, WV(ln->g), WV(ln->b), n, l->out, LN_EPS);
    hsdag_nn_relu_forward(nrm, nrm, (size_t)n * l->out);
}

static void mlp_block_fwd(lmodel *M, const hsdag_nn_linear *l, const hsdag_nn_layernorm *ln, float *a,
                          float *nrm, float *mean, float *rstd, float *mask, float *y, const float *x,
                          int32_t n, int train, hsdag_rng *rng)
{
    mlp_pre_fwd(M, l, ln, a, nrm, mean, rstd, x, n);
    hsdag_nn_dropout_forward(y, mask, nrm, M->dropout, train, rng, (size_t)n * l->out);
}

/* dx = (y > 0) ? dy * mask : 0 (mask NULL: 1), overwriting dx: the backward of y = relu(.) followed by
 * dropout with mask
 * (or dropout followed by relu of the same sign), in one pass and without zeroing buffers first. Gives the
 * values of dropout_backward then relu_backward into zeroed buffers (up to the sign of zeros). */
typedef float v4f_ __attribute__((vector_size(16)));
typedef int32_t v4i_ __attribute__((vector_size(16)));
static void drop_relu_bwd(float *restrict dx, const float *restrict dy, const float *restrict mask,
                          const float *restrict y, size_t len)
{
    size_t i = 0;
    const v4f_ zero = {0.0f, 0.0f, 0.0f, 0.0f};
    if (!mask) {
        for (; i + 4 <= len; i += 4) {
            v4f_ a, c;
            memcpy(&a, dy + i, sizeof a);
            memcpy(&c, y + i, sizeof c);
            v4i_ keep = c > zero;
            v4f_ r = (v4f_)((v4i_)a & keep);
            memcpy(dx + i, &r, sizeof r);
        }
        for (; i < len; i++) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
        return;
    }
    for (; i + 4 <= len; i += 4) {
        v4f_ a, b, c;
        memcpy(&a, dy + i, sizeof a);
        memcpy(&b, mask + i, sizeof b);
        memcpy(&c, y + i, sizeof c);
        v4i_ keep = c > zero;
        v4f_ r = (v4f_)((v4i_)(a * b) & keep);
        memcpy(dx + i, &r, sizeof r);
    }
    for (; i < len; i++) dx[i] = y[i] > 0.0f ? dy[i] * mask[i] : 0.0f;
}

static void mlp_block_bwd(lmodel *M, const hsdag_nn_linear *l, const hsdag_nn_layernorm *ln, float *dx,
                          const float *dy, const float *a, const float *nrm, const float *mean,
                          const float *rstd, const float *mask, const float *x, int32_t n, float *tmp1,
                          float *tmp2)
{
    size_t len = (size_t)n * l->out;
    drop_relu_bwd(tmp2, dy, mask, nrm, len);
    memset(tmp1, 0, sizeof(float) * len);
    hsdag_nn_layernorm_backward(tmp1, GV(ln->g), GV(ln->b), tmp2, a, mean, rstd, WV(ln->g), n, l->out);
    hsdag_nn_linear_backward(dx, GV(l->w), GV(l->b), tmp1, x, WV(l->w), n, l->in, l->out);
}

/* GCN layer with residual LayerNorm: t = gnn(x); t = relu(t); u = dropout(t); s = x + u; h = LN(s). */
static int gcn_res_fwd(lmodel *M, stepc *c, hsdag_nn_gnn *gn, const hsdag_nn_layernorm *ln, float **cache,
                       float **t, float **mk, float **u, float **s, float **mg, float **rg, float **h,
                       const float *x, hsdag_rng *rng, hsdag_err *e)
{
    int32_t N = M->N, H = M->H;
    size_t len = (size_t)N * H;
    *cache = fa(c, hsdag_nn_gnn_cache_floats(gn, N, M->adj0->nnz));
    *t = fa(c, len), *mk = fa(c, len), *u = fa(c, len), *s = fa(c, len), *h = fa(c, len);
    *mg = fa(c, (size_t)N), *rg = fa(c, (size_t)N);
    if (!*cache || !*t || !*mk || !*u || !*s || !*h || !*mg || !*rg) return pool_oom(c->ar, e);
    int rc = hsdag_nn_gnn_forward(gn, M->P, *t, *cache, x, M->adj0, e);
    if (rc < 0) return rc;
    hsdag_nn_relu_forward(*t, *t, len);
    hsdag_nn_dropout_forward(*u, *mk, *t, M->dropout, c->train, rng, len);
    hsdag_nn_add_forward(*s, x, *u, len);
    hsdag_nn_layernorm_forward(*h, *mg, *rg, *s, WV(ln->g), WV(ln->b), N, H, LN_EPS);
    return 0;
}

static int gcn_res_bwd(lmodel *M, hsdag_nn_gnn *gn, const hsdag_nn_layernorm *ln, float *dx, const float *dh,
                       const float *cache, const float *t, const float *mk, const float *s, const float *mg,
                       const float *rg, const float *x, float *tmp1, float *tmp2, hsdag_err *e)
{
    int32_t N = M->N, H = M->H;
    size_t len = (size_t)N * H;
    memset(tmp1, 0, sizeof(float) * len);
    hsdag_nn_layernorm_backward(tmp1, GV(ln->g), GV(ln->b), dh, s, mg, rg, WV(ln->g), N, H);
    hsdag_nn_add_backward(dx, NULL, tmp1, len); /* residual */
    drop_relu_bwd(tmp2, tmp1, mk, t, len);
    return hsdag_nn_gnn_backward(gn, M->P, dx, tmp2, cache, x, M->adj0, e);
}

/* ---- GPN level ---- */

/* Scores, parses and pools one level. L->n, m, u, v, adj, xpool, xpre are set by the caller. */
static int level_fwd(lmodel *M, stepc *c, lvl *L, hsdag_err *e)
{
    int32_t n = L->n, m = L->m, H = M->H;
    size_t nh = (size_t)n * H, mh = (size_t)m * H;
    L->gcache = fa(c, hsdag_nn_gnn_cache_floats(M->gp, n, L->adj->nnz));
    L->hp = fa(c, nh);
    L->zu = fa(c, mh), L->zv = fa(c, mh), L->z = fa(c, mh), L->a1 = fa(c, mh), L->m1 = fa(c, mh);
    L->r1 = fa(c, mh);
    L->mean1 = fa(c, (size_t)m), L->rstd1 = fa(c, (size_t)m), L->logit = fa(c, (size_t)m),
    L->s = fa(c, (size_t)m);
    L->lpre = fa(c, nh), L->sum1 = fa(c, nh), L->q = fa(c, nh), L->meanq = fa(c, (size_t)n);
    L->rstdq = fa(c, (size_t)n);
    if (!L->gcache || !L->hp || !L->zu || !L->zv || !L->z || !L->a1 || !L->m1 || !L->r1 || !L->mean1 ||
        !L->rstd1 || !L->logit || !L->s || !L->lpre || !L->sum1 || !L->q || !L->meanq || !L->rstdq)
        return pool_oom(c->ar, e);
    int rc = hsdag_nn_gnn_forward(M->gp, M->P, L->hp, L->gcache, L->xpool, L->adj, e);
    if (rc < 0) return rc;
    hsdag_nn_relu_forward(L->hp, L->hp, nh);
    /* edge scores s = sigmoid(MLP(h_u * h_v)) */
    if (m > 0) {
        hsdag_nn_gather_forward(L->zu, L->hp, L->u, m, H);
        hsdag_nn_gather_forward(L->zv, L->hp, L->v, m, H);
        hsdag_nn_mul_forward(L->z, L->zu, L->zv, mh);
        hsdag_nn_linear_forward(L->a1, L->z, WV(M->sc1.w), WV(M->sc1.b), m, H, H);
        hsdag_nn_layernorm_forward(L->m1, L->mean1, L->rstd1, L->a1, WV(M->ln_sc.g), WV(M->ln_sc.b), m, H,
                                   LN_EPS);
        hsdag_nn_relu_forward(L->r1, L->m1, mh);
        hsdag_nn_linear_forward(L->logit, L->r1, WV(M->sc2.w), WV(M->sc2.b), m, H, 1);
        hsdag_nn_sigmoid_forward(L->s, L->logit, (size_t)m);
    }
    if (L->fixed_pr) {
        L->pr = *L->fixed_pr; /* borrowed: lmodel_step_end leaves it alone */
    } else {
        /* an edge at a node kept apart is scored NaN for the parse only: never dominant, never merged along */
        const float *ps = L->s;
        if (L->apart && m > 0) {
            float *t = fa(c, (size_t)m);
            if (!t) return pool_oom(c->ar, e);
            for (int32_t k = 0; k < m; k++) t[k] = L->apart[L->u[k]] || L->apart[L->v[k]] ? NAN : L->s[k];
            ps = t;
        }
        if ((rc = hsdag_gpn_parse(&L->pr, n, m, L->u, L->v, ps, e)) < 0) return rc;
    }
    int32_t nc = L->pr.n_clusters;
    L->nc = nc;
    /* pre: q = LN(x + relu(x W^T + b)) */
    hsdag_nn_linear_forward(L->lpre, L->xpre, WV(M->pre.w), WV(M->pre.b), n, H, H);
    hsdag_nn_relu_forward(L->lpre, L->lpre, nh);
    hsdag_nn_add_forward(L->sum1, L->xpre, L->lpre, nh);
    hsdag_nn_layernorm_forward(L->q, L->meanq, L->rstdq, L->sum1, WV(M->ln_pre.g), WV(M->ln_pre.b), n, H,
                               LN_EPS);
    size_t ch = (size_t)nc * H;
    L->Q = fa(c, ch), L->lpost = fa(c, ch), L->sum2 = fa(c, ch), L->P = fa(c, ch),
    L->meanP = fa(c, (size_t)nc);
    L->rstdP = fa(c, (size_t)nc), L->f = fa(c, (size_t)nc), L->hc = fa(c, ch);
    if (!L->Q || !L->lpost || !L->sum2 || !L->P || !L->meanP || !L->rstdP || !L->f || !L->hc)
        return pool_oom(c->ar, e);
    hsdag_nn_segment_sum_forward(L->Q, L->q, L->pr.cluster, n, H, nc);
    hsdag_nn_linear_forward(L->lpost, L->Q, WV(M->post.w), WV(M->post.b), nc, H, H);
    hsdag_nn_relu_forward(L->lpost, L->lpost, ch);
    hsdag_nn_add_forward(L->sum2, L->Q, L->lpost, ch);
    hsdag_nn_layernorm_forward(L->P, L->meanP, L->rstdP, L->sum2, WV(M->ln_post.g), WV(M->ln_post.b), nc, H,
                               LN_EPS);
    /* factor = mean intra score x intra count = sum of intra scores; 1 for clusters without intra edges */
    for (int32_t k = 0; k < nc; k++) L->f[k] = L->pr.intra_count[k] ? 0.0f : 1.0f;
    for (int32_t k = 0; k < m; k++)
        if (L->pr.intra[k]) L->f[L->pr.cluster[L->u[k]]] += L->s[k];
    hsdag_nn_rowscale_forward(L->hc, L->P, L->f, nc, H);
    return 0;
}

/* dhc (nc, H) -> dxpool, dxpre (n, H) (accumulated; may be the same buffer). */
static int level_bwd(lmodel *M, stepc *c, lvl *L, const float *dhc, float *dxpool, float *dxpre, hsdag_err *e)
{
    int32_t n = L->n, m = L->m, nc = L->nc, H = M->H;
    size_t nh = (size_t)n * H, mh = (size_t)m * H, ch = (size_t)nc * H;
    size_t big = nh > mh ? nh : mh;
    if (ch > big) big = ch;
    /* t1..t3 are zeroed (or overwritten) right before each use, t1 and t2 only as far as the first one
     * reads */
    float *t1 = fa(c, big), *t2 = fa(c, big), *t3 = fa(c, big), *df = fz(c, (size_t)nc),
          *ds = fz(c, (size_t)m);
    float *dhp = fz(c, nh), *dq = fz(c, nh), *dQ = fz(c, ch);
    if (!t1 || !t2 || !t3 || !df || !ds || !dhp || !dq || !dQ) return pool_oom(c->ar, e);
    memset(t1, 0, sizeof(float) * ch);
    memset(t2, 0, sizeof(float) * ch);
    /* hc = P * f */
    hsdag_nn_rowscale_backward(t1, df, dhc, L->P, L->f, nc, H); /* t1 = dP */
    for (int32_t k = 0; k < m; k++)
        if (L->pr.intra[k]) ds[k] = df[L->pr.cluster[L->u[k]]];
    /* post */
    hsdag_nn_layernorm_backward(t2, GV(M->ln_post.g), GV(M->ln_post.b), t1, L->sum2, L->meanP, L->rstdP,
                                WV(M->ln_post.g), nc, H); /* t2 = dsum2 */
    hsdag_nn_add_backward(dQ, NULL, t2, ch);
    drop_relu_bwd(t1, t2, NULL, L->lpost, ch);
    hsdag_nn_linear_backward(dQ, GV(M->post.w), GV(M->post.b), t1, L->Q, WV(M->post.w), nc, H, H);
    hsdag_nn_segment_sum_backward(dq, dQ, L->pr.cluster, n, H);
    /* pre */
    memset(t2, 0, sizeof(float) * nh);
    hsdag_nn_layernorm_backward(t2, GV(M->ln_pre.g), GV(M->ln_pre.b), dq, L->sum1, L->meanq, L->rstdq,
                                WV(M->ln_pre.g), n, H); /* t2 = dsum1 */
    hsdag_nn_add_backward(dxpre, NULL, t2, nh);
    drop_relu_bwd(t1, t2, NULL, L->lpre, nh);
    hsdag_nn_linear_backward(dxpre, GV(M->pre.w), GV(M->pre.b), t1, L->xpre, WV(M->pre.w), n, H, H);
    /* edge scores */
    if (m > 0) {
        float *dlogit = fz(c, (size_t)m);
        if (!dlogit) return pool_oom(c->ar, e);
        hsdag_nn_sigmoid_backward(dlogit, ds, L->s, (size_t)m);
        memset(t1, 0, sizeof(float) * mh);
        hsdag_nn_linear_backward(t1, GV(M->sc2.w), GV(M->sc2.b), dlogit, L->r1, WV(M->sc2.w), m, H, 1);
        drop_relu_bwd(t2, t1, NULL, L->r1, mh);
        memset(t1, 0, sizeof(float) * mh);
        hsdag_nn_layernorm_backward(t1, GV(M->ln_sc.g), GV(M->ln_sc.b), t2, L->a1, L->mean1, L->rstd1,
                                    WV(M->ln_sc.g), m, H);
        memset(t2, 0, sizeof(float) * mh);
        hsdag_nn_linear_backward(t2, GV(M->sc1.w), GV(M->sc1.b), t1, L->z, WV(M->sc1.w), m, H, H); /* dz */
        hsdag_nn_mul_forward(t1, t2, L->zv, mh); /* = mul_backward into zeroed t1, t3 */
        hsdag_nn_mul_forward(t3, t2, L->zu, mh);
        hsdag_nn_gather_backward(dhp, t1, L->u, m, H);
        hsdag_nn_gather_backward(dhp, t3, L->v, m, H);
    }
    drop_relu_bwd(t1, dhp, NULL, L->hp, nh);
    return hsdag_nn_gnn_backward(M->gp, M->P, dxpool, t1, L->gcache, L->xpool, L->adj, e);
}

/* ---- the step ---- */

void lmodel_step_end(lstep *st)
{
    stepc *c = st->priv;
    if (!c) return;
    for (int32_t l = 0; l < 16; l++) {
        if (!c->lv[l].fixed_pr) hsdag_gpn_parse_free(&c->lv[l].pr);
        if (c->lv[l].own_adj) hsdag_nn_adj_free(c->lv[l].adj);
    }
    pool_reset(c->ar);
    hsdag_free(c);
    st->priv = NULL;
}

/* The encoder of one step: embeddings, the input MLP, the state, the two residual GCN layers (c->h2). */
static int step_encode(lmodel *M, stepc *c, const float *D, int train, hsdag_rng *rng, hsdag_err *e)
{
    int32_t N = M->N, H = M->H;
    size_t nh = (size_t)N * H;
    int rc;
    /* embeddings, concatenated, and the input MLP's first block up to its dropout: from the frozen-parameter
     * buffers when already computed */
    if (M->frozen) {
        c->X0 = M->X0c, c->a1 = M->a1c, c->n1 = M->n1c, c->mean1 = M->mean1c, c->rstd1 = M->rstd1c;
    } else {
        c->X0 = fa(c, (size_t)N * M->d0);
        c->a1 = fa(c, nh), c->n1 = fa(c, nh), c->mean1 = fa(c, N), c->rstd1 = fa(c, N);
        if (!c->X0 || !c->a1 || !c->n1 || !c->mean1 || !c->rstd1) goto oom;
    }
    if (!M->frozen || !M->enc_ready) {
        for (int32_t j = 0; j < M->nk; j++) {
            c->e_out[j] = fa(c, (size_t)N * M->EMB);
            if (!c->e_out[j]) goto oom;
            hsdag_nn_linear_forward(c->e_out[j], M->kfeat[j], WV(M->emb[j].w), WV(M->emb[j].b), N, M->kdim[j],
                                    M->EMB);
            for (int32_t r = 0; r < N; r++)
                memcpy(c->X0 + (size_t)r * M->d0 + (size_t)j * M->EMB, c->e_out[j] + (size_t)r * M->EMB,
                       sizeof(float) * (size_t)M->EMB);
        }
        mlp_pre_fwd(M, &M->in1, &M->ln_in1, c->a1, c->n1, c->mean1, c->rstd1, c->X0, N);
        M->enc_ready = M->frozen;
    }
    /* input MLP */
    c->mask1 = fa(c, nh);
    c->o1 = fa(c, nh), c->a2 = fa(c, nh), c->n2 = fa(c, nh), c->mean2 = fa(c, N), c->rstd2 = fa(c, N);
    c->mask2 = fa(c, nh), c->o2 = fa(c, nh), c->S = fa(c, nh);
    if (!c->mask1 || !c->o1 || !c->a2 || !c->n2 || !c->mean2 || !c->rstd2 || !c->mask2 || !c->o2 || !c->S)
        goto oom;
    hsdag_nn_dropout_forward(c->o1, c->mask1, c->n1, M->dropout, train, rng, nh);
    mlp_block_fwd(M, &M->in2, &M->ln_in2, c->a2, c->n2, c->mean2, c->rstd2, c->mask2, c->o2, c->o1, N, train,
                  rng);
    /* state: x_v + accumulated cluster features (constants) */
    if (D)
        hsdag_nn_add_forward(c->S, c->o2, D, nh);
    else
        memcpy(c->S, c->o2, sizeof(float) * nh);
    if ((rc = gcn_res_fwd(M, c, M->g1, &M->ln_g1, &c->c1, &c->t1, &c->mk1, &c->u1, &c->s1, &c->mg1, &c->rg1,
                          &c->h1, c->S, rng, e)) < 0)
        return rc;
    if ((rc = gcn_res_fwd(M, c, M->g2, &M->ln_g2, &c->c2, &c->t2, &c->mk2, &c->u2, &c->s2, &c->mg2, &c->rg2,
                          &c->h2, c->h1, rng, e)) < 0)
        return rc;
    return 0;
oom:
    return pool_oom(c->ar, e);
}

/* The GPN levels over the encoder's output: c->lv, c->nl and every group's final cluster c->cluster. */
static int step_levels(lmodel *M, stepc *c, hsdag_err *e)
{
    int32_t N = M->N;
    int rc;
    c->cluster = pool_alloc(c->ar, sizeof(int32_t) * (size_t)(N ? N : 1), 0);
    if (!c->cluster) goto oom;
    for (int32_t v = 0; v < N; v++) c->cluster[v] = v;
    const float *hin = NULL;
    for (int32_t l = 0; l < M->levels; l++) {
        lvl *L = &c->lv[l];
        if (l == 0) {
            L->n = N;
            L->m = M->m0;
            L->u = M->c->und_u;
            L->v = M->c->und_v;
            L->adj = M->adj0;
            L->xpool = c->S;
            L->xpre = c->h2;
            L->apart = M->apart;
        } else {
            lvl *P = &c->lv[l - 1];
            if (P->pr.m_pooled == 0) break;
            L->n = P->nc;
            L->m = P->pr.m_pooled;
            L->u = P->pr.pu;
            L->v = P->pr.pv;
            if ((rc = hsdag_nn_adj_create(&L->adj, L->n, L->m, L->u, L->v, HSDAG_NN_ADJ_SYMMETRIC, e)) < 0)
                return rc;
            L->own_adj = 1;
            L->xpool = L->xpre = hin;
            if (P->apart) {
                /* a node kept apart is a singleton cluster of its level: still apart at the next */
                uint8_t *a = pool_alloc(c->ar, (size_t)L->n, 1);
                if (!a) goto oom;
                for (int32_t x = 0; x < P->n; x++)
                    if (P->apart[x]) a[P->pr.cluster[x]] = 1;
                L->apart = a;
            }
        }
        if (M->fixed) {
            if (l >= M->fixed_nl) break;
            L->fixed_pr = &M->fixed_pr[l];
        }
        if ((rc = level_fwd(M, c, L, e)) < 0) return rc;
        if (!M->fixed && L->nc < M->min_clusters) {
            /* stopping rule: this level would leave too few clusters; drop it (at level 1 the groups
             * themselves are placed, with the encoder output as their features) */
            hsdag_gpn_parse_free(&L->pr);
            if (L->own_adj) hsdag_nn_adj_free(L->adj);
            L->own_adj = 0;
            L->adj = NULL;
            break;
        }
        c->nl = l + 1;
        hin = L->hc;
        for (int32_t v = 0; v < N; v++) c->cluster[v] = L->pr.cluster[c->cluster[v]];
    }
    return 0;
oom:
    return pool_oom(c->ar, e);
}

/* The placer head over the last level's clusters: logits, the device masks, log-probabilities, into st. */
static int step_place(lmodel *M, stepc *c, lstep *st, hsdag_err *e)
{
    int32_t N = M->N, H = M->H, K = M->K;
    int32_t C = c->nl ? c->lv[c->nl - 1].nc : N;
    const float *hfin = c->nl ? c->lv[c->nl - 1].hc : c->h2;
    /* placer */
    c->pa = fa(c, (size_t)C * H), c->logits = fa(c, (size_t)C * K), c->logp = fa(c, (size_t)C * K);
    if (!c->pa || !c->logits || !c->logp) goto oom;
    hsdag_nn_linear_forward(c->pa, hfin, WV(M->pl1.w), WV(M->pl1.b), C, H, H);
    hsdag_nn_relu_forward(c->pa, c->pa, (size_t)C * H);
    hsdag_nn_linear_forward(c->logits, c->pa, WV(M->pl2.w), WV(M->pl2.b), C, H, K);
    if (M->inherit) {
        if (!(c->q = fa(c, (size_t)C))) goto oom;
        hsdag_nn_linear_forward(c->q, c->pa, WV(M->inh.w), WV(M->inh.b), C, H, 1);
    }
    if (M->gmask) {
        /* a cluster may use a device every group in it may; a cluster whose groups share none gets every
         * device, and the learner moves the groups that may not run there (lmodel_group_mask) */
        c->cmask = pool_alloc(c->ar, (size_t)C * (size_t)K, 0);
        if (!c->cmask) goto oom;
        memset(c->cmask, 1, (size_t)C * (size_t)K);
        for (int32_t v = 0; v < N; v++)
            for (int32_t d = 0; d < K; d++)
                c->cmask[(size_t)c->cluster[v] * K + d] &= M->gmask[(size_t)v * K + d];
        for (int32_t k = 0; k < C; k++) {
            int any = 0;
            for (int32_t d = 0; d < K; d++) any |= c->cmask[(size_t)k * K + d];
            if (!any) memset(c->cmask + (size_t)k * K, 1, (size_t)K);
        }
    }
    hsdag_nn_log_softmax_forward(c->logp, c->logits, c->cmask, C, K);
    st->n_clusters = C;
    st->levels = c->nl;
    st->cluster = c->cluster;
    st->logp = c->logp;
    st->hc = hfin;
    st->mask = c->cmask;
    st->q = c->q;
    return 0;
oom:
    return pool_oom(c->ar, e);
}

int lmodel_step_forward(lmodel *M, lstep *st, const float *D, int train, hsdag_rng *rng, hsdag_err *e)
{
    memset(st, 0, sizeof *st);
    stepc *c = hsdag_calloc(1, sizeof *c);
    if (!c) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)", sizeof *c);
    st->priv = c;
    c->train = train;
    c->ar = &M->pool; /* one step at a time per model */
    pool_reset(c->ar);
    int rc = step_encode(M, c, D, train, rng, e);
    if (rc == 0) rc = step_levels(M, c, e);
    if (rc == 0) rc = step_place(M, c, st, e);
    return rc;
}

int lmodel_step_backward(lmodel *M, lstep *st, const float *dlogp, const float *dq, hsdag_err *e)
{
    stepc *c = st->priv;
    int32_t N = M->N, H = M->H, K = M->K, C = st->n_clusters;
    size_t nh = (size_t)N * H;
    int rc;
    const float *hfin = c->nl ? c->lv[c->nl - 1].hc : c->h2;
    float *dlog = fz(c, (size_t)C * K), *dpa = fz(c, (size_t)C * H), *dpr = fa(c, (size_t)C * H);
    float *dhc = fz(c, (size_t)C * H);
    if (!dlog || !dpa || !dpr || !dhc) goto oom;
    hsdag_nn_log_softmax_backward(dlog, dlogp, c->logp, C, K);
    hsdag_nn_linear_backward(dpa, GV(M->pl2.w), GV(M->pl2.b), dlog, c->pa, WV(M->pl2.w), C, H, K);
    if (M->inherit && dq)
        hsdag_nn_linear_backward(dpa, GV(M->inh.w), GV(M->inh.b), dq, c->pa, WV(M->inh.w), C, H, 1);
    drop_relu_bwd(dpr, dpa, NULL, c->pa, (size_t)C * H);
    hsdag_nn_linear_backward(dhc, GV(M->pl1.w), GV(M->pl1.b), dpr, hfin, WV(M->pl1.w), C, H, H);
    /* levels, last to first */
    float *dS = fz(c, nh), *dh2 = fz(c, nh), *dh1 = fz(c, nh), *tmp1 = fa(c, nh), *tmp2 = fa(c, nh);
    if (!dS || !dh2 || !dh1 || !tmp1 || !tmp2) goto oom;
    const float *dcur = dhc;
    if (c->nl == 0) hsdag_nn_add_backward(dh2, NULL, dhc, nh);
    for (int32_t l = c->nl - 1; l >= 0; l--) {
        lvl *L = &c->lv[l];
        if (l == 0) {
            if ((rc = level_bwd(M, c, L, dcur, dS, dh2, e)) < 0) return rc;
        } else {
            float *dprev = fz(c, (size_t)L->n * H);
            if (!dprev) goto oom;
            if ((rc = level_bwd(M, c, L, dcur, dprev, dprev, e)) < 0) return rc;
            dcur = dprev;
        }
    }
    /* GCN layers */
    if ((rc = gcn_res_bwd(M, M->g2, &M->ln_g2, dh1, dh2, c->c2, c->t2, c->mk2, c->s2, c->mg2, c->rg2, c->h1,
                          tmp1, tmp2, e)) < 0)
        return rc;
    if ((rc = gcn_res_bwd(M, M->g1, &M->ln_g1, dS, dh1, c->c1, c->t1, c->mk1, c->s1, c->mg1, c->rg1, c->S,
                          tmp1, tmp2, e)) < 0)
        return rc;
    /* input MLP (D is a constant) */
    float *do1 = fz(c, nh), *dX0 = fz(c, (size_t)N * M->d0), *de = fa(c, (size_t)N * M->EMB);
    if (!do1 || !dX0 || !de) goto oom;
    mlp_block_bwd(M, &M->in2, &M->ln_in2, do1, dS, c->a2, c->n2, c->mean2, c->rstd2, c->mask2, c->o1, N, tmp1,
                  tmp2);
    mlp_block_bwd(M, &M->in1, &M->ln_in1, dX0, do1, c->a1, c->n1, c->mean1, c->rstd1, c->mask1, c->X0, N,
                  tmp1, tmp2);
    for (int32_t j = 0; j < M->nk; j++) {
        for (int32_t r = 0; r < N; r++)
            memcpy(de + (size_t)r * M->EMB, dX0 + (size_t)r * M->d0 + (size_t)j * M->EMB,
                   sizeof(float) * (size_t)M->EMB);
        hsdag_nn_linear_backward(NULL, GV(M->emb[j].w), GV(M->emb[j].b), de, M->kfeat[j], WV(M->emb[j].w), N,
                                 M->kdim[j], M->EMB);
    }
    return 0;
oom:
    return pool_oom(c->ar, e);
}

int lmodel_fix_clusters(lmodel *M, hsdag_err *e)
{
    if (M->fixed) return 0;
    lstep st;
    /* a dropout-free pass with the current parameters and a zero state decides the clusters */
    int rc = lmodel_step_forward(M, &st, NULL, 0, NULL, e);
    if (rc == 0) {
        stepc *c = st.priv;
        for (int32_t l = 0; l < c->nl; l++) {
            M->fixed_pr[l] = c->lv[l].pr; /* ownership moves to the model */
            memset(&c->lv[l].pr, 0, sizeof c->lv[l].pr);
        }
        M->fixed_nl = c->nl;
        M->fixed = 1;
    }
    lmodel_step_end(&st);
    return rc;
}

const uint8_t *lmodel_group_mask(const lmodel *M)
{
    return M->gmask;
}

const double *lmodel_group_static(const lmodel *M)
{
    return M->gstatic;
}

const uint8_t *lmodel_apart(const lmodel *M)
{
    return M->apart;
}
