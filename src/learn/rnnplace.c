/* rnnplace.c - the RNN placer of Mirhoseini et al. (ICML 2017): group features (op-type embedding bag,
 * output shape and sizes, adjacency), LSTM encoder, LSTM decoder with additive attention emitting one device
 * per group, REINFORCE with a moving-average baseline; forward and back-propagation through time side by
 * side.
 * Not here: the units and the measurement bookkeeping (lnodes.c), the kernels (src/nn/rnn.c).
 * Entry points: hsdag_rnnplace_* (rnnplace.h). */
#include "hsdag/rnnplace.h"

#include "lnodes.h"

#include <math.h>
#include <string.h>

#define NF 17 /* numeric features per unit, see unit_features */
#define NPRED 4

hsdag_rnnplace_config hsdag_rnnplace_config_default(void)
{
    return (hsdag_rnnplace_config){
        .budget = 500,
        .seed = 1,
        .hidden = 64,
        .embed = 16,
        .attn = 32,
        .max_units = 256,
        .no_coarsen = 0,
        .lr = 3e-3f,
        .samples = 10,
        .baseline_decay = 0.9,
        .entropy = 0.0,
        .reward = HSDAG_RNNPLACE_REWARD_NEG_SQRT,
        .infeasible_penalty = 10.0,
    };
}

static const char *const reward_names[] = {"neg-sqrt", "inv", "sqrt-bug"};

int hsdag_rnnplace_reward_parse(hsdag_rnnplace_reward *out, const char *s, hsdag_err *e)
{
    for (int i = 0; i < 3; i++)
        if (s && strcmp(s, reward_names[i]) == 0) {
            *out = (hsdag_rnnplace_reward)i;
            return 0;
        }
    return hsdag_err_set(e, HSDAG_EINVAL, "rnn reward '%.40s': neg-sqrt, inv or sqrt-bug", s ? s : "");
}

const char *hsdag_rnnplace_reward_name(hsdag_rnnplace_reward r)
{
    return (r >= 0 && r < 3) ? reward_names[r] : "?";
}

struct hsdag_rnnplace {
    hsdag_rnnplace_config cfg;
    hsdag_place_problem *p;
    lnodes *u;
    int32_t N, K, H, E, A, V,
        DIN; /* units, devices, hidden, embed, attention, op vocabulary, decoder input */
    hsdag_nn_params *P;
    int32_t op_emb, dev_emb, v; /* tensors: (V, E), (K + 1, E), (1, A) */
    hsdag_nn_lstm enc, dec;
    hsdag_nn_linear wk, wq, out; /* keys H -> A, queries H -> A (no bias), output 2H -> K */
    int32_t *bag_off, *bag_idx;  /* [N + 1], [n_ops]: op-type slots of each unit's ops */
    float *num;                  /* [N * NF] */
    hsdag_rng rng;
    ltrack tr;
    double baseline;
    int baseline_set;
    int32_t updates;
    double *curve; /* [updates] */
    size_t curve_cap;
    /* encoder (one pass per update) */
    float *X, *enc_h, *enc_c, *enc_cache, *kp;
    float *d_enc_h, *d_enc_c, *d_kp, *dX;
    /* decoder (one sampled sequence) */
    float *din, *dh, *dc, *dcache, *qp, *alpha, *tcache, *ctx, *cat, *logp; /* tcache: NULL above 64 M */
    int32_t *acts, *op_dev;
    /* scratch */
    float *dz, *dlg, *dqp; /* (N, 4H), (N, K), (N, A): per-step gradients, weight grads taken at once */
    float *gh, *gc, *gh2, *gc2, *ddin, *dcat, *dlog, *att;
};

void hsdag_rnnplace_free(hsdag_rnnplace *R)
{
    if (!R) return;
    lnodes_free(R->u);
    ltrack_free(&R->tr);
    hsdag_nn_params_free(R->P);
    hsdag_free(R->curve);
    void *bufs[] = {R->bag_off, R->bag_idx, R->num,     R->X,     R->enc_h, R->enc_c, R->enc_cache,
                    R->kp,      R->d_enc_h, R->d_enc_c, R->d_kp,  R->dX,    R->din,   R->dh,
                    R->dc,      R->dcache,  R->qp,      R->alpha, R->ctx,   R->cat,   R->logp,
                    R->acts,    R->op_dev,  R->dz,      R->gh,    R->gc,    R->gh2,   R->gc2,
                    R->ddin,    R->dcat,    R->dqp,     R->dlog,  R->att,   R->dlg,   R->tcache};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) hsdag_free(bufs[i]);
    hsdag_free(R);
}

#define WV(id) hsdag_nn_params_value(R->P, (id))
#define GV(id) hsdag_nn_params_grad(R->P, (id))

/* numeric features of unit i: log sizes (output bytes, flops, weights), log dims of the last op's first
 * output, log in/out degree (these 9 divided by their maximum over units), then the distances (in units,
 * divided by the unit count) to the first NPRED predecessors and successors, 0-padded: Mirhoseini et al.'s
 * padded adjacency lists, made independent of the graph's size */
static void unit_features(hsdag_rnnplace *R)
{
    const hsdag_graph *g = R->p->g;
    const lnodes *u = R->u;
    int32_t N = R->N;
    float mx[9] = {0};
    for (int32_t i = 0; i < N; i++) {
        float *f = R->num + (size_t)i * NF;
        double ob = 0, fl = 0, pb = 0;
        for (int32_t k = u->off[i]; k < u->off[i + 1]; k++) {
            int32_t v = u->ops[k];
            ob += g->out_bytes[v] > 0 ? g->out_bytes[v] : 0;
            fl += g->flops[v] > 0 ? g->flops[v] : 0;
            pb += g->param_bytes[v] > 0 ? g->param_bytes[v] : 0;
        }
        f[0] = (float)log1p(ob);
        f[1] = (float)log1p(fl);
        f[2] = (float)log1p(pb);
        int32_t last = u->ops[u->off[i + 1] - 1];
        if (g->out_shape_off[last + 1] > g->out_shape_off[last]) {
            int32_t s = g->out_shape_off[last];
            for (int32_t d = 0; d < 4 && d < g->shape_rank[s]; d++) {
                int64_t dv = g->shape_dims[g->shape_dim_off[s] + d];
                f[3 + d] = dv > 0 ? (float)log1p((double)dv) : 0.0f;
            }
        }
        f[7] = (float)log1p((double)(u->in_off[i + 1] - u->in_off[i]));
        f[8] = (float)log1p((double)(u->out_off[i + 1] - u->out_off[i]));
        for (int32_t k = 0; k < NPRED && u->in_off[i] + k < u->in_off[i + 1]; k++)
            f[9 + k] = (float)(i - u->in_src[u->in_off[i] + k]) / (float)N;
        for (int32_t k = 0; k < NPRED && u->out_off[i] + k < u->out_off[i + 1]; k++)
            f[9 + NPRED + k] = (float)(u->out_dst[u->out_off[i] + k] - i) / (float)N;
        for (int j = 0; j < 9; j++) mx[j] = fmaxf(mx[j], f[j]);
    }
    for (int32_t i = 0; i < N; i++)
        for (int j = 0; j < 9; j++)
            if (mx[j] > 0) R->num[(size_t)i * NF + j] /= mx[j];
}

static int build_params(hsdag_rnnplace *R, hsdag_err *e)
{
    int rc = hsdag_nn_params_create(&R->P, NULL);
    if (rc < 0) return hsdag_err_set(e, rc, "rnn: out of memory");
    int32_t id;
    if ((id = hsdag_nn_params_add(R->P, "op_emb", R->V, R->E, HSDAG_NN_INIT_NORMAL, 1.0f, e)) < 0) return id;
    R->op_emb = id;
    if ((rc = hsdag_nn_lstm_add(R->P, &R->enc, "encoder", R->E + NF, R->H, e)) < 0) return rc;
    if ((id = hsdag_nn_params_add(R->P, "dev_emb", R->K + 1, R->E, HSDAG_NN_INIT_NORMAL, 1.0f, e)) < 0)
        return id;
    R->dev_emb = id;
    if ((rc = hsdag_nn_lstm_add(R->P, &R->dec, "decoder", R->DIN, R->H, e)) < 0 ||
        (rc = hsdag_nn_linear_add(R->P, &R->wk, "attn_keys", R->H, R->A, 0, e)) < 0 ||
        (rc = hsdag_nn_linear_add(R->P, &R->wq, "attn_query", R->H, R->A, 0, e)) < 0)
        return rc;
    if ((id = hsdag_nn_params_add(R->P, "attn_v", 1, R->A, HSDAG_NN_INIT_UNIFORM,
                                  (float)(1.0 / sqrt((double)R->A)), e)) < 0)
        return id;
    R->v = id;
    if ((rc = hsdag_nn_linear_add(R->P, &R->out, "out", 2 * R->H, R->K, 1, e)) < 0) return rc;
    hsdag_rng r;
    hsdag_rng_seed(&r, R->cfg.seed ^ 0x726e6e706c616365ULL); /* "rnnplace": a stream of its own */
    return hsdag_nn_params_alloc(R->P, &r, e);
}

int hsdag_rnnplace_create(hsdag_rnnplace **out, hsdag_place_problem *p, const hsdag_rnnplace_config *cfg,
                          hsdag_err *e)
{
    *out = NULL;
    const hsdag_rnnplace_config *c = cfg;
    if (p->k < 1 || p->k > 64)
        return hsdag_err_set(e, HSDAG_EINVAL, "rnn: %d devices (need 1..64)", (int)p->k);
    if (c->hidden < 1 || c->hidden > 1024 || c->embed < 1 || c->embed > 1024 || c->attn < 1 ||
        c->attn > 1024 || c->samples < 1 || c->samples > 100000 || !(c->lr > 0) ||
        !(c->baseline_decay >= 0 && c->baseline_decay < 1) || !(c->entropy >= 0) ||
        !(c->infeasible_penalty >= 1) || c->reward < 0 || c->reward > 2)
        return hsdag_err_set(e, HSDAG_EINVAL, "rnn: a configuration value is out of range");
    if (p->n < 1) return hsdag_err_set(e, HSDAG_EINVAL, "rnn: the graph has no nodes");
    hsdag_rnnplace *R = hsdag_calloc(1, sizeof *R);
    if (!R) return hsdag_err_set(e, HSDAG_ENOMEM, "rnn: out of memory");
    R->cfg = *cfg;
    R->p = p;
    int rc = lnodes_create(&R->u, p, cfg->max_units, cfg->no_coarsen, e);
    if (rc < 0) goto fail;
    if ((rc = ltrack_init(&R->tr, p->n, NULL, NULL, cfg->infeasible_penalty, e)) < 0) goto fail;
    int32_t N = R->u->n, K = p->k, H = cfg->hidden, E = cfg->embed, A = cfg->attn;
    if ((double)N * N > 64e6) {
        rc = hsdag_err_set(e, HSDAG_ELIMIT,
                           "rnn: %d units is too many for the attention cache (set max_units)", (int)N);
        goto fail;
    }
    R->N = N, R->K = K, R->H = H, R->E = E, R->A = A;
    R->V = hsdag_features_op_index(NULL) + 1; /* the fixed op vocabulary and its shared "other" slot */
    R->DIN = E + H;
    hsdag_rng_seed(&R->rng, cfg->seed);
    if ((rc = build_params(R, e)) < 0) goto fail;
    hsdag_err oom = {0}; /* any of the arrays failed */
    size_t nh = (size_t)N * H;
    R->bag_off = hsdag_malloc(sizeof(int32_t) * ((size_t)N + 1));
    R->bag_idx = hsdag_malloc(sizeof(int32_t) * (size_t)p->n);
    R->acts = hsdag_malloc(sizeof(int32_t) * (size_t)N);
    R->op_dev = hsdag_malloc(sizeof(int32_t) * (size_t)p->n);
    R->num = hsdag_alloc_n((size_t)N * NF, sizeof(float), "rnn", &oom);
    R->X = hsdag_alloc_n((size_t)N * (E + NF), sizeof(float), "rnn", &oom);
    R->dX = hsdag_alloc_n((size_t)N * (E + NF), sizeof(float), "rnn", &oom);
    R->enc_h = hsdag_alloc_n(nh, sizeof(float), "rnn", &oom);
    R->enc_c = hsdag_alloc_n(nh, sizeof(float), "rnn", &oom);
    R->enc_cache = hsdag_alloc_n(5 * nh, sizeof(float), "rnn", &oom);
    R->kp = hsdag_alloc_n((size_t)N * A, sizeof(float), "rnn", &oom);
    R->d_kp = hsdag_alloc_n((size_t)N * A, sizeof(float), "rnn", &oom);
    R->d_enc_h = hsdag_alloc_n(nh, sizeof(float), "rnn", &oom);
    R->d_enc_c = hsdag_alloc_n(nh, sizeof(float), "rnn", &oom);
    R->din = hsdag_alloc_n((size_t)N * R->DIN, sizeof(float), "rnn", &oom);
    R->dh = hsdag_alloc_n(nh, sizeof(float), "rnn", &oom);
    R->dc = hsdag_alloc_n(nh, sizeof(float), "rnn", &oom);
    R->dcache = hsdag_alloc_n(5 * nh, sizeof(float), "rnn", &oom);
    R->qp = hsdag_alloc_n((size_t)N * A, sizeof(float), "rnn", &oom);
    R->alpha = hsdag_alloc_n((size_t)N * N, sizeof(float), "rnn", &oom);
    R->ctx = hsdag_alloc_n(nh, sizeof(float), "rnn", &oom);
    R->cat = hsdag_alloc_n(2 * nh, sizeof(float), "rnn", &oom);
    R->logp = hsdag_alloc_n((size_t)N * K, sizeof(float), "rnn", &oom);
    R->dz = hsdag_alloc_n(4 * nh, sizeof(float), "rnn", &oom);
    R->dlg = hsdag_alloc_n((size_t)N * K, sizeof(float), "rnn", &oom);
    R->dqp = hsdag_alloc_n((size_t)N * A, sizeof(float), "rnn", &oom);
    R->gh = hsdag_alloc_n((size_t)H, sizeof(float), "rnn", &oom);
    R->gc = hsdag_alloc_n((size_t)H, sizeof(float), "rnn", &oom);
    R->gh2 = hsdag_alloc_n((size_t)H, sizeof(float), "rnn", &oom);
    R->gc2 = hsdag_alloc_n((size_t)H, sizeof(float), "rnn", &oom);
    R->ddin = hsdag_alloc_n((size_t)R->DIN + E + NF + K, sizeof(float), "rnn", &oom);
    R->dcat = hsdag_alloc_n((size_t)2 * H, sizeof(float), "rnn", &oom);
    R->dlog = hsdag_alloc_n((size_t)K, sizeof(float), "rnn", &oom);
    R->att = hsdag_alloc_n((size_t)N + A, sizeof(float), "rnn", &oom);
    /* the attention's tanh values of one sequence (N x N x A floats), when they fit in 256 MB */
    if ((double)N * N * A <= 64e6) R->tcache = hsdag_alloc_n((size_t)N * N * A, sizeof(float), "rnn", &oom);
    if (oom.status || !R->bag_off || !R->bag_idx || !R->acts || !R->op_dev) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "rnn: out of memory (%d units)", (int)N);
        goto fail;
    }
    for (int32_t i = 0; i <= N; i++) R->bag_off[i] = R->u->off[i];
    for (int32_t k = 0; k < p->n; k++) R->bag_idx[k] = hsdag_features_op_index(p->g->op[R->u->ops[k]]);
    unit_features(R);
    *out = R;
    return 0;
fail:
    hsdag_rnnplace_free(R);
    return rc;
}

void hsdag_rnnplace_best(const hsdag_rnnplace *R, const int32_t **device, double *latency_s, int64_t *at_eval,
                         double *at_s)
{
    if (device) *device = isfinite(R->tr.best_lat) ? R->tr.best : NULL;
    if (latency_s) *latency_s = R->tr.best_lat;
    if (at_eval) *at_eval = R->tr.best_at;
    if (at_s) *at_s = R->tr.best_s;
}
int64_t hsdag_rnnplace_evals(const hsdag_rnnplace *R)
{
    return R->tr.evals;
}
int32_t hsdag_rnnplace_units(const hsdag_rnnplace *R)
{
    return R->N;
}
int32_t hsdag_rnnplace_updates(const hsdag_rnnplace *R)
{
    return R->updates;
}
const double *hsdag_rnnplace_curve(const hsdag_rnnplace *R, int32_t *n_updates)
{
    *n_updates = R->updates;
    return R->curve;
}
const int32_t *hsdag_rnnplace_unit_of(const hsdag_rnnplace *R)
{
    return R->u->unit_of;
}
hsdag_nn_params *hsdag_rnnplace_params(hsdag_rnnplace *R)
{
    return R->P;
}

/* ---- encoder: features -> LSTM states; keys ---- */

static void encoder_forward(hsdag_rnnplace *R)
{
    int32_t N = R->N, H = R->H, E = R->E, W = E + NF;
    float *emb = R->dX; /* (N, E) embedding bag, copied into X next to the numeric features */
    hsdag_nn_embedding_bag_forward(emb, WV(R->op_emb), R->bag_off, R->bag_idx, N, E);
    hsdag_nn_concat_forward(R->X, emb, R->num, N, E, NF);
    for (int32_t i = 0; i < N; i++)
        hsdag_nn_lstm_cell_forward(
            R->enc_h + (size_t)i * H, R->enc_c + (size_t)i * H, R->enc_cache + (size_t)i * 5 * H,
            R->X + (size_t)i * W, i ? R->enc_h + (size_t)(i - 1) * H : NULL,
            i ? R->enc_c + (size_t)(i - 1) * H : NULL, WV(R->enc.wx), WV(R->enc.wh), WV(R->enc.b), 1, W, H);
    hsdag_nn_linear_forward(R->kp, R->enc_h, WV(R->wk.w), NULL, N, H, R->A);
    memset(R->d_enc_h, 0, sizeof(float) * (size_t)N * H);
    memset(R->d_enc_c, 0, sizeof(float) * (size_t)N * H);
    memset(R->d_kp, 0, sizeof(float) * (size_t)N * R->A);
}

/* from d_kp, d_enc_h, d_enc_c (accumulated by the decoder passes) into the parameter grads */
static void encoder_backward(hsdag_rnnplace *R)
{
    int32_t N = R->N, H = R->H, E = R->E, W = E + NF;
    hsdag_nn_linear_backward(R->d_enc_h, GV(R->wk.w), NULL, R->d_kp, R->enc_h, WV(R->wk.w), N, H, R->A);
    memset(R->dX, 0, sizeof(float) * (size_t)N * W);
    memset(R->gh, 0, sizeof(float) * (size_t)H);
    memset(R->gc, 0, sizeof(float) * (size_t)H);
    for (int32_t i = N - 1; i >= 0; i--) {
        /* gh, gc: gradient of h_i, c_i from step i + 1; add what the decoder sent to step i */
        hsdag_nn_add_forward(R->gh, R->gh, R->d_enc_h + (size_t)i * H, (size_t)H);
        hsdag_nn_add_forward(R->gc, R->gc, R->d_enc_c + (size_t)i * H, (size_t)H);
        memset(R->gh2, 0, sizeof(float) * (size_t)H);
        memset(R->gc2, 0, sizeof(float) * (size_t)H);
        hsdag_nn_lstm_cell_backward(
            R->dX + (size_t)i * W, i ? R->gh2 : NULL, i ? R->gc2 : NULL, NULL, NULL, NULL,
            R->dz + (size_t)i * 4 * H, R->gh, R->gc, R->enc_cache + (size_t)i * 5 * H, R->X + (size_t)i * W,
            i ? R->enc_h + (size_t)(i - 1) * H : NULL, i ? R->enc_c + (size_t)(i - 1) * H : NULL,
            WV(R->enc.wx), WV(R->enc.wh), 1, W, H);
        memcpy(R->gh, R->gh2, sizeof(float) * (size_t)H);
        memcpy(R->gc, R->gc2, sizeof(float) * (size_t)H);
    }
    /* the weight gradients of all steps at once */
    hsdag_nn_linear_backward(NULL, GV(R->enc.wx), GV(R->enc.b), R->dz, R->X, WV(R->enc.wx), N, W, 4 * H);
    if (N > 1)
        hsdag_nn_linear_backward(NULL, GV(R->enc.wh), NULL, R->dz + (size_t)4 * H, R->enc_h, WV(R->enc.wh),
                                 N - 1, H, 4 * H);
    /* the embedding part of dX (the numeric features are constants) */
    float *de = R->ddin; /* one row at a time is enough: bag rows are disjoint ranges */
    for (int32_t i = 0; i < N; i++) {
        memcpy(de, R->dX + (size_t)i * W, sizeof(float) * (size_t)E);
        hsdag_nn_embedding_bag_backward(GV(R->op_emb), de, R->bag_off + i, R->bag_idx, 1, E);
    }
}

/* ---- decoder: one sequence of devices ---- */

/* forced: the devices to feed back (teacher forcing), else sampled (greedy: argmax) into R->acts.
 * *sum_logp and *sum_ent get sum_t log pi(a_t) and sum_t H_t. */
static int decode(hsdag_rnnplace *R, const int32_t *forced, int greedy, double *sum_logp, double *sum_ent)
{
    int32_t N = R->N, H = R->H, K = R->K, E = R->E, A = R->A;
    double sl = 0, se = 0;
    for (int32_t t = 0; t < N; t++) {
        float *in = R->din + (size_t)t * R->DIN;
        int32_t prev = t ? R->acts[t - 1] : K; /* row K of dev_emb: the start token */
        memcpy(in, WV(R->dev_emb) + (size_t)prev * E, sizeof(float) * (size_t)E);
        memcpy(in + E, R->enc_h + (size_t)t * H, sizeof(float) * (size_t)H);
        const float *h0 = t ? R->dh + (size_t)(t - 1) * H : R->enc_h + (size_t)(N - 1) * H;
        const float *c0 = t ? R->dc + (size_t)(t - 1) * H : R->enc_c + (size_t)(N - 1) * H;
        float *h = R->dh + (size_t)t * H;
        hsdag_nn_lstm_cell_forward(h, R->dc + (size_t)t * H, R->dcache + (size_t)t * 5 * H, in, h0, c0,
                                   WV(R->dec.wx), WV(R->dec.wh), WV(R->dec.b), 1, R->DIN, H);
        hsdag_nn_linear_row_forward(R->qp + (size_t)t * A, h, WV(R->wq.w), NULL, H, A);
        float *tc = R->tcache ? R->tcache + (size_t)t * N * A : NULL;
        hsdag_nn_attention_forward(R->ctx + (size_t)t * H, R->alpha + (size_t)t * N, tc,
                                   R->qp + (size_t)t * A, R->kp, WV(R->v), R->enc_h, 1, N, A, H);
        float *cat = R->cat + (size_t)t * 2 * H, *lp = R->logp + (size_t)t * K;
        hsdag_nn_concat_forward(cat, h, R->ctx + (size_t)t * H, 1, H, H);
        hsdag_nn_linear_row_forward(lp, cat, WV(R->out.w), WV(R->out.b), 2 * H, K);
        hsdag_nn_log_softmax_forward(lp, lp, NULL, 1, K);
        int32_t a;
        int rc = forced   ? (a = forced[t], 0)
                 : greedy ? hsdag_nn_categorical_argmax(&a, lp, NULL, K)
                          : hsdag_nn_categorical_sample_logits(&a, NULL, lp, NULL, K, &R->rng);
        if (rc < 0) return rc;
        R->acts[t] = a;
        float ht;
        hsdag_nn_entropy_forward(&ht, lp, 1, K);
        sl += lp[a];
        se += ht;
    }
    *sum_logp = sl;
    *sum_ent = se;
    return 0;
}

/* Back-propagates loss = -coef sum_t log pi(a_t) - ent sum_t H_t through the last decode: parameter grads
 * and d_enc_h, d_enc_c, d_kp accumulate. */
static void decode_backward(hsdag_rnnplace *R, float coef, float ent)
{
    int32_t N = R->N, H = R->H, K = R->K, E = R->E, A = R->A;
    memset(R->gh, 0, sizeof(float) * (size_t)H);
    memset(R->gc, 0, sizeof(float) * (size_t)H);
    for (int32_t t = N - 1; t >= 0; t--) {
        const float *lp = R->logp + (size_t)t * K, *cat = R->cat + (size_t)t * 2 * H;
        float *h = R->dh + (size_t)t * H;
        /* d loss / d logp, then through log-softmax to the logits */
        float *dl = R->dlog, *dlg = R->dlg + (size_t)t * K, *dqp = R->dqp + (size_t)t * A;
        memset(dl, 0, sizeof(float) * (size_t)K);
        dl[R->acts[t]] = -coef;
        if (ent != 0.0f) {
            float dh = -ent;
            hsdag_nn_entropy_backward(dl, &dh, lp, 1, K);
        }
        memset(dlg, 0, sizeof(float) * (size_t)K);
        hsdag_nn_log_softmax_backward(dlg, dl, lp, 1, K);
        memset(R->dcat, 0, sizeof(float) * (size_t)2 * H);
        hsdag_nn_linear_row_backward(R->dcat, NULL, NULL, dlg, cat, WV(R->out.w), 2 * H, K);
        /* dcat = [dh_t | dctx_t]; gh holds the recurrent gradient of h_t from step t + 1 */
        hsdag_nn_add_forward(R->gh, R->gh, R->dcat, (size_t)H);
        memset(dqp, 0, sizeof(float) * (size_t)A);
        const float *tc = R->tcache ? R->tcache + (size_t)t * N * A : NULL;
        hsdag_nn_attention_backward(dqp, R->d_kp, GV(R->v), R->d_enc_h, R->att, R->dcat + H,
                                    R->alpha + (size_t)t * N, tc, R->qp + (size_t)t * A, R->kp, WV(R->v),
                                    R->enc_h, 1, N, A, H);
        hsdag_nn_linear_row_backward(R->gh, NULL, NULL, dqp, h, WV(R->wq.w), H, A);
        /* the LSTM step: into the input (device embedding | encoder state t) and the previous state */
        const float *h0 = t ? R->dh + (size_t)(t - 1) * H : R->enc_h + (size_t)(N - 1) * H;
        const float *c0 = t ? R->dc + (size_t)(t - 1) * H : R->enc_c + (size_t)(N - 1) * H;
        float *din_g = R->ddin;
        memset(din_g, 0, sizeof(float) * (size_t)R->DIN);
        memset(R->gh2, 0, sizeof(float) * (size_t)H);
        memset(R->gc2, 0, sizeof(float) * (size_t)H);
        hsdag_nn_lstm_cell_backward(din_g, R->gh2, R->gc2, NULL, NULL, NULL, R->dz + (size_t)t * 4 * H, R->gh,
                                    R->gc, R->dcache + (size_t)t * 5 * H, R->din + (size_t)t * R->DIN, h0, c0,
                                    WV(R->dec.wx), WV(R->dec.wh), 1, R->DIN, H);
        int32_t prev = t ? R->acts[t - 1] : K;
        hsdag_nn_add_forward(GV(R->dev_emb) + (size_t)prev * E, GV(R->dev_emb) + (size_t)prev * E, din_g,
                             (size_t)E);
        hsdag_nn_add_forward(R->d_enc_h + (size_t)t * H, R->d_enc_h + (size_t)t * H, din_g + E, (size_t)H);
        if (t) {
            memcpy(R->gh, R->gh2, sizeof(float) * (size_t)H);
            memcpy(R->gc, R->gc2, sizeof(float) * (size_t)H);
        } else { /* the decoder starts from the encoder's last state */
            hsdag_nn_add_forward(R->d_enc_h + (size_t)(N - 1) * H, R->d_enc_h + (size_t)(N - 1) * H, R->gh2,
                                 (size_t)H);
            hsdag_nn_add_forward(R->d_enc_c + (size_t)(N - 1) * H, R->d_enc_c + (size_t)(N - 1) * H, R->gc2,
                                 (size_t)H);
        }
    }
    /* the weight gradients of all steps at once: one GEMM each instead of N rank-1 updates */
    hsdag_nn_linear_backward(NULL, GV(R->out.w), GV(R->out.b), R->dlg, R->cat, WV(R->out.w), N, 2 * H, K);
    hsdag_nn_linear_backward(NULL, GV(R->wq.w), NULL, R->dqp, R->dh, WV(R->wq.w), N, H, A);
    hsdag_nn_linear_backward(NULL, GV(R->dec.wx), GV(R->dec.b), R->dz, R->din, WV(R->dec.wx), N, R->DIN,
                             4 * H);
    hsdag_nn_linear_backward(NULL, GV(R->dec.wh), NULL, R->dz, R->enc_h + (size_t)(N - 1) * H, WV(R->dec.wh),
                             1, H, 4 * H);
    if (N > 1)
        hsdag_nn_linear_backward(NULL, GV(R->dec.wh), NULL, R->dz + (size_t)4 * H, R->dh, WV(R->dec.wh),
                                 N - 1, H, 4 * H);
}

/* ---- training ---- */

static double reward_of(const hsdag_rnnplace *R, double cost_s)
{
    double ms = cost_s * 1e3;
    switch (R->cfg.reward) {
    case HSDAG_RNNPLACE_REWARD_INV:
        return 1.0 / ms;
    case HSDAG_RNNPLACE_REWARD_SQRT_BUG:
        return sqrt(ms);
    default:
        return -sqrt(ms);
    }
}

int hsdag_rnnplace_train(hsdag_rnnplace *R, hsdag_learn_eval_fn eval, void *ctx, int64_t max_evals,
                         hsdag_err *e)
{
    R->tr.eval = eval;
    R->tr.ctx = ctx;
    int64_t limit = R->tr.evals + (max_evals > 0 ? max_evals : 0);
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
    ac.lr = R->cfg.lr;
    while (R->tr.evals < limit) {
        hsdag_nn_params_zero_grad(R->P);
        encoder_forward(R);
        int32_t S = R->cfg.samples, done = 0;
        double sum_cost = 0;
        for (int32_t s = 0; s < S && R->tr.evals < limit; s++) {
            double sl, se, lat, cost;
            int feas;
            if (decode(R, NULL, 0, &sl, &se) < 0)
                return hsdag_err_set(e, HSDAG_ESOLVER,
                                     "rnn: the policy has no valid device (NaN parameters?)");
            lnodes_expand(R->u, R->op_dev, R->acts);
            int rc = ltrack_eval(&R->tr, R->op_dev, &lat, &feas, &cost, e);
            if (rc < 0) return rc;
            sum_cost += cost;
            double r = reward_of(R, cost);
            if (!R->baseline_set) {
                R->baseline = r;
                R->baseline_set = 1;
            }
            double adv = r - R->baseline;
            R->baseline = R->cfg.baseline_decay * R->baseline + (1 - R->cfg.baseline_decay) * r;
            decode_backward(R, (float)(adv / S), (float)(R->cfg.entropy / S));
            done++;
        }
        if (!done) break;
        if (hsdag_grow((void **)&R->curve, &R->curve_cap, (size_t)R->updates + 1, sizeof(double)) < 0)
            return hsdag_err_set(e, HSDAG_ENOMEM, "rnn: out of memory");
        R->curve[R->updates] = sum_cost / done;
        encoder_backward(R);
        hsdag_nn_adam_step(R->P, &ac, NULL);
        R->updates++;
    }
    return 0;
}

int hsdag_rnnplace_greedy(hsdag_rnnplace *R, int32_t *device, hsdag_err *e)
{
    double sl, se;
    encoder_forward(R);
    if (decode(R, NULL, 1, &sl, &se) < 0)
        return hsdag_err_set(e, HSDAG_ESOLVER, "rnn: the policy has no valid device (NaN parameters?)");
    lnodes_expand(R->u, device, R->acts);
    return 0;
}

int hsdag_rnnplace_debug_loss(hsdag_rnnplace *R, uint64_t seed, int32_t *actions, double entropy_w, int grad,
                              double *loss, hsdag_err *e)
{
    hsdag_rng keep = R->rng;
    hsdag_rng_seed(&R->rng, seed);
    double sl, se;
    encoder_forward(R);
    int rc = decode(R, actions[0] < 0 ? NULL : actions, 0, &sl, &se);
    R->rng = keep;
    if (rc < 0) return hsdag_err_set(e, HSDAG_ESOLVER, "rnn: the policy has no valid device");
    memcpy(actions, R->acts, sizeof(int32_t) * (size_t)R->N);
    *loss = -sl - entropy_w * se;
    if (grad) {
        hsdag_nn_params_zero_grad(R->P);
        decode_backward(R, 1.0f, (float)entropy_w);
        encoder_backward(R);
    }
    return 0;
}

/* ---- the registry entry ---- */

int hsdag_rnnplace_place(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                         hsdag_place_report *r, hsdag_err *e)
{
    hsdag_rnnplace_config cfg = hsdag_rnnplace_config_default();
    cfg.seed = o->seed;
    if (o->budget > 0) cfg.budget = o->budget;
    hsdag_rnnplace *R = NULL;
    hsdag_place_oracle orc; /* the measurements (with o->noise) every black-box and learned placer sees */
    hsdag_place_oracle_init(&orc, p, o->noise, o->seed);
    hsdag_nn_set_threads(1);
    int rc = hsdag_rnnplace_create(&R, p, &cfg, e);
    if (rc == 0) rc = hsdag_rnnplace_train(R, hsdag_place_oracle_eval, &orc, cfg.budget, e);
    if (rc == 0) {
        const int32_t *best;
        int64_t at;
        hsdag_rnnplace_best(R, &best, NULL, &at, NULL);
        r->evals = hsdag_rnnplace_evals(R);
        if (best) {
            memcpy(device, best, sizeof(int32_t) * (size_t)p->n);
            r->best_episode = (int32_t)((at - 1) / cfg.samples); /* the update that sampled it */
            snprintf(r->note, sizeof r->note,
                     "%d units, %d updates x %d samples, reward %s, best at measurement %lld%s",
                     (int)hsdag_rnnplace_units(R), (int)hsdag_rnnplace_updates(R), (int)cfg.samples,
                     hsdag_rnnplace_reward_name(cfg.reward), (long long)at,
                     o->noise > 0 ? "; measured with noise" : "");
        } else {
            const hsdag_place_method *m = hsdag_place_method_find("heft");
            rc = m ? m->fn(p, o, device, r, e) : hsdag_err_set(e, HSDAG_EINVAL, "rnn: no heft");
            if (rc == 0)
                snprintf(r->note, sizeof r->note, "no feasible placement in %lld measured: returned HEFT's",
                         (long long)hsdag_rnnplace_evals(R));
        }
    }
    hsdag_rnnplace_free(R);
    return rc;
}

int hsdag_rnnplace_register_methods(hsdag_err *e)
{
    static const hsdag_place_method m = {
        "rnn",
        hsdag_rnnplace_place,
        "RNN-based placer (Mirhoseini et al., ICML 2017): LSTM encoder over "
        "the groups, attention decoder, REINFORCE on -sqrt(latency), --budget "
        "measurements (default 500) (src/learn/rnnplace.c)",
        HSDAG_PLACE_PARTIAL,
        HSDAG_PLACE_PARTIAL,
        1,
        HSDAG_PLACE_USES_BUDGET};
    return hsdag_place_register(&m, e);
}
