/* placeto.c - Placeto (Addanki et al., NeurIPS 2019): the MDP over decision units in topological order, the
 * message-passing policy (node transform, forward and backward passes over the DAG, parent / child / parallel
 * aggregators, classifier; forward next to backward) and REINFORCE with incremental rewards and a per-step
 * baseline over the last episodes.
 * Not here: the units and the measurement bookkeeping (lnodes.c), the kernels (src/nn), the simulator.
 * Entry points: hsdag_placeto_* (placeto.h). */
#include "hsdag/placeto.h"

#include "lnodes.h"
#include "memfit.h"

#include <math.h>
#include <string.h>

#define NQ 3 /* aggregated unit groups: 0 parents (ancestors), 1 children (descendants), 2 parallel */

hsdag_placeto_config hsdag_placeto_config_default(void)
{
    return (hsdag_placeto_config){
        .budget = 500,
        .seed = 1,
        .hidden = 16,
        .max_units = 32,
        .no_coarsen = 0,
        .lr = 1e-3f,
        .gamma = 1.0,
        .baseline_window = 10,
        .entropy = 0.0,
        .init = HSDAG_PLACETO_INIT_RANDOM,
        .infeasible_penalty = 10.0,
    };
}

/* ---- the policy ---- */

/* y = relu(L2 relu(L1 x)): the f and g networks of the aggregators (Placeto's FNN with one hidden layer) */
typedef struct mlp2 {
    hsdag_nn_linear a, b;
} mlp2;

struct hsdag_placeto_policy {
    hsdag_nn_params *P;
    int32_t K, H, F;            /* devices, hidden width, input features per unit (2K + 4) */
    hsdag_nn_linear t1, t2, t3; /* node transform F -> H -> H -> H */
    mlp2 ff, fg, bf, bg;        /* forward / backward pass: f (per message), g (on the message sum) */
    mlp2 af[NQ], ag[NQ];        /* parent, child, parallel aggregators on 2H */
    mlp2 cls;                   /* classifier 8H -> 16H -> 8H (relu) ... */
    hsdag_nn_linear c3;         /* ... -> K */
    float lr;
};

#define WV(pol, id) hsdag_nn_params_value((pol)->P, (id))
#define GV(pol, id) hsdag_nn_params_grad((pol)->P, (id))

static int lin_add(hsdag_nn_params *P, hsdag_nn_linear *l, const char *name, int32_t in, int32_t out,
                   hsdag_err *e)
{
    char nm[64];
    snprintf(nm, sizeof nm, "%s.w", name);
    int32_t w = hsdag_nn_params_add(P, nm, out, in, HSDAG_NN_INIT_GLOROT, 0.0f, e);
    if (w < 0) return w;
    snprintf(nm, sizeof nm, "%s.b", name);
    int32_t b = hsdag_nn_params_add(P, nm, 1, out, HSDAG_NN_INIT_ZERO, 0.0f, e);
    if (b < 0) return b;
    *l = (hsdag_nn_linear){.w = w, .b = b, .in = in, .out = out};
    return 0;
}

static int mlp2_add(hsdag_nn_params *P, mlp2 *m, const char *name, int32_t in, int32_t mid, int32_t out,
                    hsdag_err *e)
{
    char nm[48];
    snprintf(nm, sizeof nm, "%s.1", name);
    int rc = lin_add(P, &m->a, nm, in, mid, e);
    if (rc < 0) return rc;
    snprintf(nm, sizeof nm, "%s.2", name);
    return lin_add(P, &m->b, nm, mid, out, e);
}

void hsdag_placeto_policy_free(hsdag_placeto_policy *pol)
{
    if (!pol) return;
    hsdag_nn_params_free(pol->P);
    hsdag_free(pol);
}

int hsdag_placeto_policy_create(hsdag_placeto_policy **out, int32_t n_devices,
                                const hsdag_placeto_config *cfg, hsdag_err *e)
{
    *out = NULL;
    if (n_devices < 1 || n_devices > 64)
        return hsdag_err_set(e, HSDAG_EINVAL, "placeto: %d devices (need 1..64)", (int)n_devices);
    if (cfg->hidden < 1 || cfg->hidden > 1024)
        return hsdag_err_set(e, HSDAG_EINVAL, "placeto: hidden width %d out of range 1..1024",
                             (int)cfg->hidden);
    if (!(cfg->lr > 0)) return hsdag_err_set(e, HSDAG_EINVAL, "placeto: learning rate must be > 0");
    hsdag_placeto_policy *pol = hsdag_calloc(1, sizeof *pol);
    if (!pol) return hsdag_err_set(e, HSDAG_ENOMEM, "placeto: out of memory");
    int32_t K = n_devices, H = cfg->hidden, H2 = 2 * H;
    pol->K = K;
    pol->H = H;
    pol->F = 2 * K + 4;
    pol->lr = cfg->lr;
    int rc = hsdag_nn_params_create(&pol->P, NULL);
    if (rc < 0) {
        hsdag_free(pol);
        return hsdag_err_set(e, rc, "placeto: out of memory");
    }
    static const char *qn[NQ] = {"parents", "children", "parallel"};
    char nm[32];
    if ((rc = lin_add(pol->P, &pol->t1, "transform1", pol->F, H, e)) < 0 ||
        (rc = lin_add(pol->P, &pol->t2, "transform2", H, H, e)) < 0 ||
        (rc = lin_add(pol->P, &pol->t3, "transform3", H, H, e)) < 0 ||
        (rc = mlp2_add(pol->P, &pol->ff, "fwd_f", H, H, H, e)) < 0 ||
        (rc = mlp2_add(pol->P, &pol->fg, "fwd_g", H, H, H, e)) < 0 ||
        (rc = mlp2_add(pol->P, &pol->bf, "bwd_f", H, H, H, e)) < 0 ||
        (rc = mlp2_add(pol->P, &pol->bg, "bwd_g", H, H, H, e)) < 0)
        goto fail;
    for (int q = 0; q < NQ; q++) {
        snprintf(nm, sizeof nm, "%s_f", qn[q]);
        if ((rc = mlp2_add(pol->P, &pol->af[q], nm, H2, H2, H2, e)) < 0) goto fail;
        snprintf(nm, sizeof nm, "%s_g", qn[q]);
        if ((rc = mlp2_add(pol->P, &pol->ag[q], nm, H2, H2, H2, e)) < 0) goto fail;
    }
    if ((rc = mlp2_add(pol->P, &pol->cls, "classifier", 4 * H2, 8 * H2, 4 * H2, e)) < 0 ||
        (rc = lin_add(pol->P, &pol->c3, "classifier.3", 4 * H2, K, e)) < 0)
        goto fail;
    hsdag_rng r;
    hsdag_rng_seed(&r, cfg->seed ^ 0x706c616365746fULL); /* "placeto": a stream of its own */
    if ((rc = hsdag_nn_params_alloc(pol->P, &r, e)) < 0) goto fail;
    *out = pol;
    return 0;
fail:
    hsdag_placeto_policy_free(pol);
    return rc;
}

int32_t hsdag_placeto_policy_devices(const hsdag_placeto_policy *pol)
{
    return pol->K;
}
hsdag_nn_params *hsdag_placeto_policy_params(hsdag_placeto_policy *pol)
{
    return pol->P;
}
int hsdag_placeto_policy_save(const hsdag_placeto_policy *pol, hsdag_buf *out, hsdag_err *e)
{
    return hsdag_nn_params_save(pol->P, out, e);
}
int hsdag_placeto_policy_load(hsdag_placeto_policy *pol, const void *buf, size_t len, hsdag_err *e)
{
    return hsdag_nn_params_load(pol->P, buf, len, NULL, e);
}

/* ---- dense pieces: forward next to backward ---- */

static void lin_fwd(hsdag_placeto_policy *pol, const hsdag_nn_linear *l, float *y, const float *x, int32_t n)
{
    hsdag_nn_linear_forward(y, x, WV(pol, l->w), WV(pol, l->b), n, l->in, l->out);
}

/* dx (n, in) += ..., parameter grads += ... from dy (n, out) */
static void lin_bwd(hsdag_placeto_policy *pol, const hsdag_nn_linear *l, float *dx, const float *dy,
                    const float *x, int32_t n)
{
    hsdag_nn_linear_backward(dx, GV(pol, l->w), GV(pol, l->b), dy, x, WV(pol, l->w), n, l->in, l->out);
}

/* y1 (n, mid) = relu(a x), y (n, out) = relu(b y1) */
static void mlp2_fwd(hsdag_placeto_policy *pol, const mlp2 *m, float *y1, float *y, const float *x, int32_t n)
{
    lin_fwd(pol, &m->a, y1, x, n);
    hsdag_nn_relu_forward(y1, y1, (size_t)n * m->a.out);
    lin_fwd(pol, &m->b, y, y1, n);
    hsdag_nn_relu_forward(y, y, (size_t)n * m->b.out);
}

/* dx (n, in) += ... from dy (n, out); s1 (n, out) and s2 (n, mid) are scratch */
static void mlp2_bwd(hsdag_placeto_policy *pol, const mlp2 *m, float *dx, const float *dy, const float *y1,
                     const float *y, const float *x, int32_t n, float *s1, float *s2)
{
    size_t no = (size_t)n * m->b.out, nm = (size_t)n * m->a.out;
    memset(s1, 0, sizeof(float) * no);
    hsdag_nn_relu_backward(s1, dy, y, no);
    memset(s2, 0, sizeof(float) * nm);
    lin_bwd(pol, &m->b, s2, s1, y1, n);
    memset(s1, 0, sizeof(float) * nm);
    hsdag_nn_relu_backward(s1, s2, y1, nm);
    lin_bwd(pol, &m->a, dx, s1, x, n);
}

/* ---- one graph's MDP ---- */

/* One direction of message passing: emb_v = T_v + g(sum_{u in nb(v)} f(emb_u)) (g term only when v has
 * neighbours), nodes visited so that every neighbour comes first. */
typedef struct mpass {
    float *emb, *f1, *ff, *s, *g1, *gg; /* (N, H) each */
} mpass;

typedef struct agg {
    float *a1, *a2;    /* (N, 2H) f over every unit */
    float *s, *o1, *o; /* (2H) the masked sum and g */
} agg;

struct hsdag_placeto {
    hsdag_placeto_config cfg;
    hsdag_place_problem *p;
    lnodes *u;
    int32_t N, K, H, F, W; /* units, devices, hidden, features, bitset words per unit */
    uint64_t *desc;        /* [N * W] descendants of each unit */
    float *stat;           /* [N * (K + 2)] normalised per-device cost, output bytes, memory */
    hsdag_rng rng;         /* sampling */
    hsdag_rng init_rng;    /* the random start placement */
    int32_t *start;        /* [N] */
    int start_ready;
    double start_cost;
    int32_t *best_unit; /* [N] best feasible unit placement (for INIT_BEST) */
    double best_unit_cost;
    ltrack tr;
    double *ring; /* [baseline_window * N] returns of the last episodes */
    int32_t ring_n, ring_pos, episodes;
    /* per-step scratch (one state at a time) */
    float *X, *ta, *tb, *T;
    mpass mp[2];
    float *E;
    agg ag[NQ];
    float *z, *c1, *c2, *logits, *logp;
    int32_t *seg;
    float *dT, *demb[2], *dff, *dE, *dA, *s1, *s2, *dz, *dsmall, *dlogp;
    int32_t *cur, *acts, *op_dev;
    double *rew, *ret;
};

void hsdag_placeto_free(hsdag_placeto *P)
{
    if (!P) return;
    lnodes_free(P->u);
    ltrack_free(&P->tr);
    void *bufs[] = {P->desc, P->stat,    P->start,   P->best_unit, P->ring, P->X,      P->ta,   P->tb,
                    P->T,    P->E,       P->z,       P->c1,        P->c2,   P->logits, P->logp, P->seg,
                    P->dT,   P->demb[0], P->demb[1], P->dff,       P->dE,   P->dA,     P->s1,   P->s2,
                    P->dz,   P->dsmall,  P->dlogp,   P->cur,       P->acts, P->op_dev, P->rew,  P->ret};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) hsdag_free(bufs[i]);
    for (int d = 0; d < 2; d++) {
        mpass *m = &P->mp[d];
        float *mb[] = {m->emb, m->f1, m->ff, m->s, m->g1, m->gg};
        for (int i = 0; i < 6; i++) hsdag_free(mb[i]);
    }
    for (int q = 0; q < NQ; q++) {
        float *ab[] = {P->ag[q].a1, P->ag[q].a2, P->ag[q].s, P->ag[q].o1, P->ag[q].o};
        for (int i = 0; i < 5; i++) hsdag_free(ab[i]);
    }
    hsdag_free(P);
}

/* static features: cost of the unit on each device (one scale for all devices), bytes leaving the unit and
 * memory, each divided by its maximum over the units (Placeto normalises its columns the same way) */
static int static_features(hsdag_placeto *P, hsdag_err *e)
{
    const hsdag_costs *c = P->p->c;
    int32_t N = P->N, K = P->K, S = K + 2;
    double mc = 0, mo = 0, mm = 0;
    double *acc = hsdag_calloc((size_t)N * S, sizeof(double));
    if (!acc) return hsdag_err_set(e, HSDAG_ENOMEM, "placeto: out of memory (%d units)", (int)N);
    for (int32_t v = 0; v < P->u->n_ops; v++) {
        int32_t un = P->u->unit_of[v];
        double *a = acc + (size_t)un * S;
        for (int32_t d = 0; d < K; d++) a[d] += c->node_s[(size_t)v * K + d];
        int leaves = 0;
        for (int32_t k = P->p->g->out_off[v]; k < P->p->g->out_off[v + 1]; k++)
            leaves |= P->u->unit_of[P->p->g->out_dst[k]] != un;
        if (leaves) a[K] += c->xfer_bytes[v];
        a[K + 1] += P->p->mem[v];
    }
    for (int32_t i = 0; i < N; i++) {
        const double *a = acc + (size_t)i * S;
        for (int32_t d = 0; d < K; d++) mc = fmax(mc, a[d]);
        mo = fmax(mo, a[K]);
        mm = fmax(mm, a[K + 1]);
    }
    for (int32_t i = 0; i < N; i++) {
        const double *a = acc + (size_t)i * S;
        float *s = P->stat + (size_t)i * S;
        for (int32_t d = 0; d < K; d++) s[d] = mc > 0 ? (float)(a[d] / mc) : 0.0f;
        s[K] = mo > 0 ? (float)(a[K] / mo) : 0.0f;
        s[K + 1] = mm > 0 ? (float)(a[K + 1] / mm) : 0.0f;
    }
    hsdag_free(acc);
    return 0;
}

/* The working arrays of N units, K devices and hidden width H (zeroed). 0 or HSDAG_ENOMEM. */
static int placeto_buffers(hsdag_placeto *P, int32_t N, int32_t K, int32_t H, hsdag_err *e)
{
    int32_t H2 = 2 * H;
    hsdag_err oom = {0}; /* any of the arrays failed */
    size_t nh = (size_t)N * H, nh2 = (size_t)N * H2;
    size_t wide = (size_t)N * (size_t)(P->F > 16 * H ? P->F : 16 * H);
    P->desc = hsdag_calloc((size_t)N * P->W, sizeof(uint64_t));
    P->stat = hsdag_alloc_n((size_t)N * (K + 2), sizeof(float), "placeto", &oom);
    P->start = hsdag_calloc((size_t)N, sizeof(int32_t));
    P->best_unit = hsdag_calloc((size_t)N, sizeof(int32_t));
    P->ring = hsdag_calloc((size_t)P->cfg.baseline_window * N, sizeof(double));
    P->X = hsdag_alloc_n((size_t)N * P->F, sizeof(float), "placeto", &oom);
    P->ta = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
    P->tb = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
    P->T = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
    for (int d = 0; d < 2; d++) {
        mpass *m = &P->mp[d];
        m->emb = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
        m->f1 = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
        m->ff = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
        m->s = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
        m->g1 = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
        m->gg = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
        P->demb[d] = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
    }
    P->E = hsdag_alloc_n(nh2, sizeof(float), "placeto", &oom);
    for (int q = 0; q < NQ; q++) {
        P->ag[q].a1 = hsdag_alloc_n(nh2, sizeof(float), "placeto", &oom);
        P->ag[q].a2 = hsdag_alloc_n(nh2, sizeof(float), "placeto", &oom);
        P->ag[q].s = hsdag_alloc_n((size_t)H2, sizeof(float), "placeto", &oom);
        P->ag[q].o1 = hsdag_alloc_n((size_t)H2, sizeof(float), "placeto", &oom);
        P->ag[q].o = hsdag_alloc_n((size_t)H2, sizeof(float), "placeto", &oom);
    }
    P->z = hsdag_alloc_n((size_t)4 * H2, sizeof(float), "placeto", &oom);
    P->c1 = hsdag_alloc_n((size_t)8 * H2, sizeof(float), "placeto", &oom);
    P->c2 = hsdag_alloc_n((size_t)4 * H2, sizeof(float), "placeto", &oom);
    P->logits = hsdag_alloc_n((size_t)K, sizeof(float), "placeto", &oom);
    P->logp = hsdag_alloc_n((size_t)K, sizeof(float), "placeto", &oom);
    P->dlogp = hsdag_alloc_n((size_t)K, sizeof(float), "placeto", &oom);
    P->dT = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
    P->dff = hsdag_alloc_n(nh, sizeof(float), "placeto", &oom);
    P->dE = hsdag_alloc_n(nh2, sizeof(float), "placeto", &oom);
    P->dA = hsdag_alloc_n(nh2, sizeof(float), "placeto", &oom);
    P->s1 = hsdag_alloc_n(wide, sizeof(float), "placeto", &oom);
    P->s2 = hsdag_alloc_n(wide, sizeof(float), "placeto", &oom);
    P->dz = hsdag_alloc_n((size_t)16 * H2, sizeof(float), "placeto", &oom);
    P->dsmall = hsdag_alloc_n((size_t)K + (size_t)16 * H2, sizeof(float), "placeto", &oom);
    P->seg = hsdag_malloc(sizeof(int32_t) * (size_t)N);
    P->cur = hsdag_malloc(sizeof(int32_t) * (size_t)N);
    P->acts = hsdag_malloc(sizeof(int32_t) * (size_t)N);
    P->op_dev = hsdag_malloc(sizeof(int32_t) * (size_t)P->p->n);
    P->rew = hsdag_malloc(sizeof(double) * (size_t)N);
    P->ret = hsdag_malloc(sizeof(double) * (size_t)N);
    if (oom.status || !P->desc || !P->start || !P->best_unit || !P->ring || !P->seg || !P->cur || !P->acts ||
        !P->op_dev || !P->rew || !P->ret)
        return hsdag_err_set(e, HSDAG_ENOMEM, "placeto: out of memory (%d units)", (int)N);
    return 0;
}

int hsdag_placeto_create(hsdag_placeto **out, hsdag_place_problem *p, const hsdag_placeto_config *cfg,
                         hsdag_err *e)
{
    *out = NULL;
    if (p->k < 1 || p->k > 64)
        return hsdag_err_set(e, HSDAG_EINVAL, "placeto: %d devices (need 1..64)", (int)p->k);
    if (cfg->hidden < 1 || cfg->hidden > 1024 || cfg->baseline_window < 1 || cfg->baseline_window > 100000 ||
        !(cfg->gamma >= 0 && cfg->gamma <= 1) || !(cfg->entropy >= 0) || !(cfg->infeasible_penalty >= 1))
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "placeto: hidden, baseline window, gamma, entropy or penalty out of range");
    if (p->n < 1) return hsdag_err_set(e, HSDAG_EINVAL, "placeto: the graph has no nodes");
    hsdag_placeto *P = hsdag_calloc(1, sizeof *P);
    if (!P) return hsdag_err_set(e, HSDAG_ENOMEM, "placeto: out of memory");
    P->cfg = *cfg;
    P->p = p;
    int rc = lnodes_create(&P->u, p, cfg->max_units, cfg->no_coarsen, e);
    if (rc < 0) goto fail;
    if ((rc = ltrack_init(&P->tr, p->n, NULL, NULL, cfg->infeasible_penalty, e)) < 0) goto fail;
    int32_t N = P->u->n, K = p->k, H = cfg->hidden;
    P->N = N;
    P->K = K;
    P->H = H;
    P->F = 2 * K + 4;
    P->W = (N + 63) / 64;
    if ((double)N * P->W * 8 > 512e6) {
        rc = hsdag_err_set(e, HSDAG_ELIMIT, "placeto: %d decision units is too many (set max_units)", (int)N);
        goto fail;
    }
    hsdag_rng_seed(&P->rng, cfg->seed);
    hsdag_rng_seed(&P->init_rng, cfg->seed ^ 0x5374617274ULL);
    if ((rc = placeto_buffers(P, N, K, H, e)) < 0) goto fail;
    /* descendants, last unit first: desc[v] = union over successors w of {w} and desc[w] */
    for (int32_t v = N - 1; v >= 0; v--) {
        uint64_t *dv = P->desc + (size_t)v * P->W;
        for (int32_t k = P->u->out_off[v]; k < P->u->out_off[v + 1]; k++) {
            int32_t w = P->u->out_dst[k];
            const uint64_t *dw = P->desc + (size_t)w * P->W;
            for (int32_t j = 0; j < P->W; j++) dv[j] |= dw[j];
            dv[w >> 6] |= 1ull << (w & 63);
        }
    }
    if ((rc = static_features(P, e)) < 0) goto fail;
    P->best_unit_cost = INFINITY;
    *out = P;
    return 0;
fail:
    hsdag_placeto_free(P);
    return rc;
}

void hsdag_placeto_best(const hsdag_placeto *P, const int32_t **device, double *latency_s, int64_t *at_eval,
                        double *at_s)
{
    int have = isfinite(P->tr.best_lat);
    if (device) *device = have ? P->tr.best : NULL;
    if (latency_s) *latency_s = P->tr.best_lat;
    if (at_eval) *at_eval = P->tr.best_at;
    if (at_s) *at_s = P->tr.best_s;
}
int64_t hsdag_placeto_evals(const hsdag_placeto *P)
{
    return P->tr.evals;
}
int32_t hsdag_placeto_units(const hsdag_placeto *P)
{
    return P->N;
}
const int32_t *hsdag_placeto_unit_of(const hsdag_placeto *P)
{
    return P->u->unit_of;
}
int32_t hsdag_placeto_episodes(const hsdag_placeto *P)
{
    return P->episodes;
}

/* ---- the network on one state: placement cur, current unit v, units < v done ---- */

static int bit_(const uint64_t *row, int32_t i)
{
    return (int)((row[i >> 6] >> (i & 63)) & 1u);
}

static void mp_forward(hsdag_placeto *P, hsdag_placeto_policy *pol, int dir)
{
    int32_t N = P->N, H = P->H;
    mpass *m = &P->mp[dir];
    const mlp2 *f = dir ? &pol->bf : &pol->ff, *g = dir ? &pol->bg : &pol->fg;
    const int32_t *off = dir ? P->u->out_off : P->u->in_off, *nb = dir ? P->u->out_dst : P->u->in_src;
    for (int32_t i = 0; i < N; i++) {
        int32_t v = dir ? N - 1 - i : i;
        float *emb = m->emb + (size_t)v * H, *s = m->s + (size_t)v * H;
        memcpy(emb, P->T + (size_t)v * H, sizeof(float) * (size_t)H);
        if (off[v + 1] > off[v]) {
            memset(s, 0, sizeof(float) * (size_t)H);
            for (int32_t k = off[v]; k < off[v + 1]; k++)
                hsdag_nn_add_forward(s, s, m->ff + (size_t)nb[k] * H, (size_t)H);
            mlp2_fwd(pol, g, m->g1 + (size_t)v * H, m->gg + (size_t)v * H, s, 1);
            hsdag_nn_add_forward(emb, emb, m->gg + (size_t)v * H, (size_t)H);
        }
        mlp2_fwd(pol, f, m->f1 + (size_t)v * H, m->ff + (size_t)v * H, emb, 1);
    }
}

/* demb (N, H) holds the gradient from outside the pass and is completed in place; dT += */
static void mp_backward(hsdag_placeto *P, hsdag_placeto_policy *pol, int dir, float *demb)
{
    int32_t N = P->N, H = P->H;
    mpass *m = &P->mp[dir];
    const mlp2 *f = dir ? &pol->bf : &pol->ff, *g = dir ? &pol->bg : &pol->fg;
    const int32_t *off = dir ? P->u->out_off : P->u->in_off, *nb = dir ? P->u->out_dst : P->u->in_src;
    memset(P->dff, 0, sizeof(float) * (size_t)N * H);
    float *ds = P->dsmall;
    for (int32_t i = N - 1; i >= 0; i--) {
        int32_t v = dir ? N - 1 - i : i;
        size_t o = (size_t)v * H;
        /* every consumer of ff[v] came later in the pass, so dff[v] is complete */
        mlp2_bwd(pol, f, demb + o, P->dff + o, m->f1 + o, m->ff + o, m->emb + o, 1, P->s1, P->s2);
        hsdag_nn_add_backward(P->dT + o, NULL, demb + o, (size_t)H);
        if (off[v + 1] > off[v]) {
            memset(ds, 0, sizeof(float) * (size_t)H);
            mlp2_bwd(pol, g, ds, demb + o, m->g1 + o, m->gg + o, m->s + o, 1, P->s1, P->s2);
            for (int32_t k = off[v]; k < off[v + 1]; k++)
                hsdag_nn_add_backward(P->dff + (size_t)nb[k] * H, NULL, ds, (size_t)H);
        }
    }
}

static void state_forward(hsdag_placeto *P, hsdag_placeto_policy *pol, const int32_t *cur, int32_t v)
{
    int32_t N = P->N, K = P->K, H = P->H, H2 = 2 * H, F = P->F, S = K + 2;
    /* features: static | placement one-hot | current | done */
    for (int32_t i = 0; i < N; i++) {
        float *x = P->X + (size_t)i * F;
        memcpy(x, P->stat + (size_t)i * S, sizeof(float) * (size_t)S);
        for (int32_t d = 0; d < K; d++) x[S + d] = cur[i] == d ? 1.0f : 0.0f;
        x[S + K] = i == v ? 1.0f : 0.0f;
        x[S + K + 1] = i < v ? 1.0f : 0.0f;
        const uint64_t *dv = P->desc + (size_t)v * P->W, *di = P->desc + (size_t)i * P->W;
        P->seg[i] = i == v ? NQ : bit_(di, v) ? 0 : bit_(dv, i) ? 1 : 2;
    }
    /* node transform */
    lin_fwd(pol, &pol->t1, P->ta, P->X, N);
    hsdag_nn_relu_forward(P->ta, P->ta, (size_t)N * H);
    lin_fwd(pol, &pol->t2, P->tb, P->ta, N);
    hsdag_nn_relu_forward(P->tb, P->tb, (size_t)N * H);
    lin_fwd(pol, &pol->t3, P->T, P->tb, N);
    /* message passing forward and backward over the DAG */
    mp_forward(P, pol, 0);
    mp_forward(P, pol, 1);
    hsdag_nn_concat_forward(P->E, P->mp[0].emb, P->mp[1].emb, N, H, H);
    /* parent / child / parallel aggregation, then the classifier on [p | c | r | self] */
    for (int q = 0; q < NQ; q++) {
        agg *a = &P->ag[q];
        mlp2_fwd(pol, &pol->af[q], a->a1, a->a2, P->E, N);
        memset(a->s, 0, sizeof(float) * (size_t)H2);
        for (int32_t i = 0; i < N; i++)
            if (P->seg[i] == q) hsdag_nn_add_forward(a->s, a->s, a->a2 + (size_t)i * H2, (size_t)H2);
        mlp2_fwd(pol, &pol->ag[q], a->o1, a->o, a->s, 1);
        memcpy(P->z + (size_t)q * H2, a->o, sizeof(float) * (size_t)H2);
    }
    memcpy(P->z + (size_t)NQ * H2, P->E + (size_t)v * H2, sizeof(float) * (size_t)H2);
    mlp2_fwd(pol, &pol->cls, P->c1, P->c2, P->z, 1);
    lin_fwd(pol, &pol->c3, P->logits, P->c2, 1);
    hsdag_nn_log_softmax_forward(P->logp, P->logits, NULL, 1, K);
}

/* parameter gradients += from dlogp (K) of the last state_forward */
static void state_backward(hsdag_placeto *P, hsdag_placeto_policy *pol, const float *dlogp, int32_t v)
{
    int32_t N = P->N, K = P->K, H = P->H, H2 = 2 * H;
    size_t nh = (size_t)N * H, nh2 = (size_t)N * H2;
    float *dl = P->dsmall, *dc2 = P->dsmall + K, *dz = P->dz;
    memset(dl, 0, sizeof(float) * (size_t)(K + 4 * H2));
    hsdag_nn_log_softmax_backward(dl, dlogp, P->logp, 1, K);
    lin_bwd(pol, &pol->c3, dc2, dl, P->c2, 1);
    memset(dz, 0, sizeof(float) * (size_t)4 * H2);
    mlp2_bwd(pol, &pol->cls, dz, dc2, P->c1, P->c2, P->z, 1, P->s1, P->s2);
    memset(P->dE, 0, sizeof(float) * nh2);
    hsdag_nn_add_backward(P->dE + (size_t)v * H2, NULL, dz + (size_t)NQ * H2, (size_t)H2);
    for (int q = 0; q < NQ; q++) {
        agg *a = &P->ag[q];
        float *dsq = P->dsmall; /* dl and dc2 are no longer needed */
        memset(dsq, 0, sizeof(float) * (size_t)H2);
        mlp2_bwd(pol, &pol->ag[q], dsq, dz + (size_t)q * H2, a->o1, a->o, a->s, 1, P->s1, P->s2);
        memset(P->dA, 0, sizeof(float) * nh2);
        for (int32_t i = 0; i < N; i++)
            if (P->seg[i] == q) memcpy(P->dA + (size_t)i * H2, dsq, sizeof(float) * (size_t)H2);
        mlp2_bwd(pol, &pol->af[q], P->dE, P->dA, a->a1, a->a2, P->E, N, P->s1, P->s2);
    }
    memset(P->demb[0], 0, sizeof(float) * nh);
    memset(P->demb[1], 0, sizeof(float) * nh);
    hsdag_nn_concat_backward(P->demb[0], P->demb[1], P->dE, N, H, H);
    memset(P->dT, 0, sizeof(float) * nh);
    mp_backward(P, pol, 1, P->demb[1]);
    mp_backward(P, pol, 0, P->demb[0]);
    /* node transform (the features are constants) */
    memset(P->s1, 0, sizeof(float) * nh);
    lin_bwd(pol, &pol->t3, P->s1, P->dT, P->tb, N);
    memset(P->s2, 0, sizeof(float) * nh);
    hsdag_nn_relu_backward(P->s2, P->s1, P->tb, nh);
    memset(P->s1, 0, sizeof(float) * nh);
    lin_bwd(pol, &pol->t2, P->s1, P->s2, P->ta, N);
    memset(P->s2, 0, sizeof(float) * nh);
    hsdag_nn_relu_backward(P->s2, P->s1, P->ta, nh);
    lin_bwd(pol, &pol->t1, NULL, P->s2, P->X, N);
}

/* ---- episodes ---- */

static int check_policy(const hsdag_placeto *P, const hsdag_placeto_policy *pol, hsdag_err *e)
{
    if (pol->K != P->K || pol->H != P->H)
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "placeto: policy for %d devices / width %d, problem has %d devices / width %d",
                             (int)pol->K, (int)pol->H, (int)P->K, (int)P->H);
    return 0;
}

static void draw_start(hsdag_placeto *P)
{
    if (P->start_ready) return;
    for (int32_t i = 0; i < P->N; i++)
        P->start[i] = P->cfg.init == HSDAG_PLACETO_INIT_DEVICE0
                          ? 0
                          : (int32_t)hsdag_rng_below(&P->init_rng, (uint32_t)P->K);
    P->start_ready = 1;
    P->start_cost = NAN;
}

/* the measured latency a learner sees (infeasible ones scaled by the penalty) */
static int measure_units(hsdag_placeto *P, const int32_t *unit_dev, double *cost, int *feasible, hsdag_err *e)
{
    double lat;
    int feas = 0;
    lnodes_expand(P->u, P->op_dev, unit_dev);
    int rc = ltrack_eval(&P->tr, P->op_dev, &lat, &feas, cost, e);
    if (feasible) *feasible = feas;
    if (rc == 0 && feas && lat < P->best_unit_cost) {
        P->best_unit_cost = lat;
        memcpy(P->best_unit, unit_dev, sizeof(int32_t) * (size_t)P->N);
    }
    return rc;
}

static int run_episode(hsdag_placeto *P, hsdag_placeto_policy *pol, int64_t limit, int *complete,
                       hsdag_err *e)
{
    int32_t N = P->N, K = P->K;
    *complete = 0;
    draw_start(P);
    const int32_t *s0 = P->start;
    double c0;
    if (P->cfg.init == HSDAG_PLACETO_INIT_BEST && isfinite(P->best_unit_cost)) {
        s0 = P->best_unit;
        c0 = P->best_unit_cost;
    } else {
        if (isnan(P->start_cost)) {
            if (P->tr.evals >= limit) return 0;
            int feas, rc = measure_units(P, P->start, &P->start_cost, &feas, e);
            if (rc < 0) return rc;
            /* an infeasible random start (a memory cap) would make every episode start from a placement
             * the budget cannot repair: start from everything on the CPU instead (one more measurement) */
            if (!feas && P->cfg.init == HSDAG_PLACETO_INIT_RANDOM && P->p->cpu >= 0 && P->tr.evals < limit) {
                for (int32_t i = 0; i < N; i++) P->start[i] = P->p->cpu;
                if ((rc = measure_units(P, P->start, &P->start_cost, NULL, e)) < 0) return rc;
            }
        }
        c0 = P->start_cost;
    }
    memcpy(P->cur, s0, sizeof(int32_t) * (size_t)N);
    int32_t *start = hsdag_malloc(sizeof(int32_t) * (size_t)N);
    if (!start) return hsdag_err_set(e, HSDAG_ENOMEM, "placeto: out of memory");
    memcpy(start, s0, sizeof(int32_t) * (size_t)N);
    double prev = c0;
    int rc = 0;
    int32_t t = 0;
    for (; t < N; t++) {
        if (P->tr.evals >= limit) break;
        state_forward(P, pol, P->cur, t);
        int32_t a;
        if (hsdag_nn_categorical_sample_logits(&a, NULL, P->logp, NULL, K, &P->rng) < 0) {
            rc = hsdag_err_set(e, HSDAG_ESOLVER, "placeto: the policy has no valid device (NaN parameters?)");
            break;
        }
        P->acts[t] = a;
        P->cur[t] = a;
        double cost;
        if ((rc = measure_units(P, P->cur, &cost, NULL, e)) < 0) break;
        /* the incremental reward: the step's improvement, on log latency so graphs of any scale compare */
        P->rew[t] = log(prev) - log(cost);
        prev = cost;
    }
    if (rc < 0 || t < N) {
        hsdag_free(start);
        return rc;
    }
    /* returns, the per-step baseline over the last episodes (this one included, as the reference) */
    double G = 0;
    for (int32_t i = N - 1; i >= 0; i--) P->ret[i] = G = P->rew[i] + P->cfg.gamma * G;
    int32_t Wn = P->cfg.baseline_window;
    memcpy(P->ring + (size_t)P->ring_pos * N, P->ret, sizeof(double) * (size_t)N);
    P->ring_pos = (P->ring_pos + 1) % Wn;
    if (P->ring_n < Wn) P->ring_n++;
    int any = P->cfg.entropy > 0;
    for (int32_t i = 0; i < N; i++) {
        double b = 0;
        for (int32_t r = 0; r < P->ring_n; r++) b += P->ring[(size_t)r * N + i];
        P->ret[i] -= b / P->ring_n; /* now the advantage */
        any |= P->ret[i] != 0.0;
    }
    /* replay the episode: loss = -sum_t adv_t log pi(a_t | s_t) - entropy sum_t H_t; one Adam step */
    if (any) {
        hsdag_nn_params_zero_grad(pol->P);
        memcpy(P->cur, start, sizeof(int32_t) * (size_t)N);
        for (int32_t i = 0; i < N; i++) {
            state_forward(P, pol, P->cur, i);
            memset(P->dlogp, 0, sizeof(float) * (size_t)K);
            P->dlogp[P->acts[i]] = (float)-P->ret[i];
            if (P->cfg.entropy > 0) {
                float dh = (float)-P->cfg.entropy;
                hsdag_nn_entropy_backward(P->dlogp, &dh, P->logp, 1, K);
            }
            state_backward(P, pol, P->dlogp, i);
            P->cur[i] = P->acts[i];
        }
        hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
        ac.lr = pol->lr;
        hsdag_nn_adam_step(pol->P, &ac, NULL);
    }
    hsdag_free(start);
    P->episodes++;
    *complete = 1;
    return 0;
}

int hsdag_placeto_train(hsdag_placeto *P, hsdag_placeto_policy *pol, hsdag_learn_eval_fn eval, void *ctx,
                        int64_t max_evals, int32_t max_episodes, hsdag_err *e)
{
    int rc = check_policy(P, pol, e);
    if (rc < 0) return rc;
    P->tr.eval = eval;
    P->tr.ctx = ctx;
    int64_t limit = P->tr.evals + (max_evals > 0 ? max_evals : 0);
    for (int32_t ep = 0; max_episodes < 0 || ep < max_episodes; ep++) {
        if (P->tr.evals >= limit) break;
        int complete;
        if ((rc = run_episode(P, pol, limit, &complete, e)) < 0) return rc;
        if (!complete) break;
    }
    return 0;
}

/* The greedy episode into P->cur; with lp (N x K), each step's log-probabilities. */
static int greedy_pass(hsdag_placeto *P, hsdag_placeto_policy *pol, float *lp, hsdag_err *e)
{
    int rc = check_policy(P, pol, e);
    if (rc < 0) return rc;
    draw_start(P);
    const int32_t *s0 =
        P->cfg.init == HSDAG_PLACETO_INIT_BEST && isfinite(P->best_unit_cost) ? P->best_unit : P->start;
    memcpy(P->cur, s0, sizeof(int32_t) * (size_t)P->N);
    for (int32_t t = 0; t < P->N; t++) {
        state_forward(P, pol, P->cur, t);
        int32_t a;
        if (hsdag_nn_categorical_argmax(&a, P->logp, NULL, P->K) < 0)
            return hsdag_err_set(e, HSDAG_ESOLVER,
                                 "placeto: the policy has no valid device (NaN parameters?)");
        P->cur[t] = a;
        if (lp) memcpy(lp + (size_t)t * P->K, P->logp, sizeof(float) * (size_t)P->K);
    }
    return 0;
}

int hsdag_placeto_greedy(hsdag_placeto *P, hsdag_placeto_policy *pol, int32_t *device, hsdag_err *e)
{
    int rc = greedy_pass(P, pol, NULL, e);
    if (rc == 0) lnodes_expand(P->u, device, P->cur);
    return rc;
}

static void fit_expand(void *ctx, const int32_t *a, int32_t *device)
{
    lnodes_expand(ctx, device, a);
}

int hsdag_placeto_greedy_fit(hsdag_placeto *P, hsdag_placeto_policy *pol, hsdag_sim *sim, int32_t *device,
                             int32_t *moved, hsdag_err *e)
{
    *moved = 0;
    int32_t N = P->N, K = P->K;
    const hsdag_place_problem *p = P->p;
    float *lp = hsdag_alloc_n((size_t)N * K, sizeof(float), "placeto", e);
    double *mem = hsdag_alloc_n((size_t)N * 2, sizeof(double), "placeto", e);
    uint8_t *mask = hsdag_alloc_n((size_t)N * K, 1, "placeto", e);
    int rc = lp && mem && mask ? greedy_pass(P, pol, lp, e) : HSDAG_ENOMEM;
    if (rc == 0) {
        /* per unit: static bytes, + output bytes (what a move frees); the devices every member may use */
        double *frees = mem + N;
        memset(mem, 0, sizeof(double) * (size_t)N * 2);
        memset(mask, 1, (size_t)N * K);
        for (int32_t v = 0; v < P->u->n_ops; v++) {
            int32_t un = P->u->unit_of[v];
            mem[un] += p->c->static_bytes[v];
            frees[un] += p->c->static_bytes[v] + p->g->out_bytes[v];
            for (int32_t d = 0; d < K; d++)
                if (!p->c->allowed[(size_t)v * K + d]) mask[(size_t)un * K + d] = 0;
        }
        memfit_units u = {.C = N,
                          .K = K,
                          .mem = mem,
                          .frees = frees,
                          .logp = lp,
                          .mask = mask,
                          .cap = p->cap,
                          .expand = fit_expand,
                          .ctx = P->u,
                          .who = "placeto"};
        rc = memfit_run(&u, sim, P->cur, device, moved, e);
    }
    hsdag_free(lp);
    hsdag_free(mem);
    hsdag_free(mask);
    return rc;
}

int hsdag_placeto_debug_loss(hsdag_placeto *P, hsdag_placeto_policy *pol, uint64_t seed, int32_t step,
                             int32_t *action, double entropy_w, int grad, double *loss, hsdag_err *e)
{
    int rc = check_policy(P, pol, e);
    if (rc < 0) return rc;
    if (step < 0 || step >= P->N)
        return hsdag_err_set(e, HSDAG_EINVAL, "placeto: step %d out of range", (int)step);
    hsdag_rng r;
    hsdag_rng_seed(&r, seed);
    for (int32_t i = 0; i < P->N; i++) P->cur[i] = (int32_t)hsdag_rng_below(&r, (uint32_t)P->K);
    state_forward(P, pol, P->cur, step);
    if (*action < 0) hsdag_nn_categorical_argmax(action, P->logp, NULL, P->K);
    float h;
    hsdag_nn_entropy_forward(&h, P->logp, 1, P->K);
    *loss = -(double)P->logp[*action] - entropy_w * h;
    if (grad) {
        hsdag_nn_params_zero_grad(pol->P);
        memset(P->dlogp, 0, sizeof(float) * (size_t)P->K);
        P->dlogp[*action] = -1.0f;
        float dh = (float)-entropy_w;
        hsdag_nn_entropy_backward(P->dlogp, &dh, P->logp, 1, P->K);
        state_backward(P, pol, P->dlogp, step);
    }
    return 0;
}

/* ---- the registry entry ---- */

int hsdag_placeto_place(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                        hsdag_place_report *r, hsdag_err *e)
{
    hsdag_placeto_config cfg = hsdag_placeto_config_default();
    cfg.seed = o->seed;
    if (o->budget > 0) cfg.budget = o->budget;
    hsdag_placeto_policy *pol = NULL;
    hsdag_placeto *P = NULL;
    hsdag_place_oracle orc; /* the measurements (with o->noise) every black-box and learned placer sees */
    hsdag_place_oracle_init(&orc, p, o->noise, o->seed);
    hsdag_nn_set_threads(1);
    int rc = hsdag_placeto_policy_create(&pol, p->k, &cfg, e);
    if (rc == 0) rc = hsdag_placeto_create(&P, p, &cfg, e);
    if (rc == 0) rc = hsdag_placeto_train(P, pol, hsdag_place_oracle_eval, &orc, cfg.budget, -1, e);
    if (rc == 0) {
        const int32_t *best;
        int64_t at;
        hsdag_placeto_best(P, &best, NULL, &at, NULL);
        r->evals = hsdag_placeto_evals(P);
        if (best) {
            memcpy(device, best, sizeof(int32_t) * (size_t)p->n);
            r->best_episode = (int32_t)((at - 1) / hsdag_placeto_units(P)); /* about: episodes of N steps */
            snprintf(r->note, sizeof r->note,
                     "%d units, %d episodes from %lld measurements, best at measurement %lld%s",
                     (int)hsdag_placeto_units(P), (int)hsdag_placeto_episodes(P), (long long)r->evals,
                     (long long)at, o->noise > 0 ? "; measured with noise" : "");
        } else {
            const hsdag_place_method *m = hsdag_place_method_find("heft");
            rc = m ? m->fn(p, o, device, r, e) : hsdag_err_set(e, HSDAG_EINVAL, "placeto: no heft");
            if (rc == 0)
                snprintf(r->note, sizeof r->note, "no feasible placement in %lld measured: returned HEFT's",
                         (long long)hsdag_placeto_evals(P));
        }
    }
    hsdag_placeto_free(P);
    hsdag_placeto_policy_free(pol);
    return rc;
}

int hsdag_placeto_register_methods(hsdag_err *e)
{
    static const hsdag_place_method m = {"placeto",
                                         hsdag_placeto_place,
                                         "Placeto (NeurIPS 2019): message-passing policy over the units in "
                                         "topological order, incremental-reward REINFORCE, --budget "
                                         "measurements (default 500) (src/learn/placeto.c)",
                                         HSDAG_PLACE_PARTIAL,
                                         HSDAG_PLACE_PARTIAL,
                                         1,
                                         HSDAG_PLACE_USES_BUDGET};
    return hsdag_place_register(&m, e);
}
